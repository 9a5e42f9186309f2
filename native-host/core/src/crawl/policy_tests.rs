//! The frontier policy on hand-made pages: no network, no database.

use super::*;
use crate::crawl::Query;
use forager_classifier::{Model, Taxonomy, TextOptions, TrainOptions, ROOT};
use std::sync::Arc;

/// A two-topic model (astronomy is good), its classifier and a verdict with relevance `r`.
fn setup(r: f64, hard_focus: bool) -> (Model, Arc<Classifier>, Classification) {
    let mut tax = Taxonomy::new("root");
    let sky = tax.add(ROOT, "Astronomy", "").unwrap();
    let garden = tax.add(ROOT, "Gardening", "").unwrap();
    let mut m = Model::new(tax, TextOptions::default(), TrainOptions::default());
    for i in 0..4 {
        let t = "telescope comet nebula orbit eyepiece";
        m.add_example(sky, &format!("http://sky.test/{i}"), t)
            .unwrap();
        let g = "compost mulch pruning seedling soil";
        m.add_example(garden, &format!("http://garden.test/{i}"), g)
            .unwrap();
    }
    m.set_good_paths(&["/Astronomy".to_owned()]).unwrap();
    let c = m.classifier();
    let verdict = Classification {
        best_leaf: "/Astronomy".into(),
        best_leaf_id: sky,
        path: Vec::new(),
        relevance: r,
        log_relevance: r.ln(),
        hard_focus,
        background: 0.0,
        none: false,
    };
    (m, c, verdict)
}

fn link(url: &str, anchor: &str, boilerplate: bool) -> OutLink {
    OutLink {
        url: url::Url::parse(url).unwrap(),
        anchor: anchor.into(),
        nofollow: false,
        leaf_range: (0, 1),
        boilerplate,
    }
}

fn parent<'a>(leaves: &'a [String], depth: i64, score: f64) -> Parent<'a> {
    Parent {
        oid: crate::store::PageId::from_raw(7),
        depth,
        score,
        text: "telescope comet",
        leaves,
        nofollow: false,
    }
}

fn config(mode: Mode) -> CrawlConfig {
    CrawlConfig {
        mode,
        template_weight: 0.25,
        ..CrawlConfig::default()
    }
}

fn scores(s: &Scored) -> Vec<(String, f64)> {
    (s.links.iter()).map(|l| (l.url.clone(), l.score)).collect()
}

#[test]
fn soft_focus_passes_relevance_on_and_discounts_boilerplate() {
    let (_, c, v) = setup(0.8, true);
    let leaves = vec!["see".to_owned()];
    let links = vec![
        link("http://a.test/x", "x", false),
        link("http://a.test/nav", "home", true),
        link("http://a.test/x", "again", false),
    ];
    let mut nf = link("http://a.test/nf", "nf", false);
    nf.nofollow = true;
    let mut all = links;
    all.push(nf);
    let s = score_links(
        &config(Mode::Soft),
        &parent(&leaves, 2, 0.0),
        all,
        &v,
        &c,
        None,
        &mut Scratch::new(),
    );
    assert_eq!(
        scores(&s),
        vec![
            ("http://a.test/x".to_owned(), 0.8),
            ("http://a.test/nav".to_owned(), 0.8 * 0.25)
        ]
    );
    assert_eq!(s.links[1].weight, 0.25);
    assert_eq!(s.links[0].depth, 3);
    assert_eq!(
        s.links[0].via,
        Some((crate::store::PageId::from_raw(7), "x".to_owned()))
    );
    assert!(s.links[0].features.is_none());
}

#[test]
fn hard_focus_expands_only_pages_under_a_good_topic() {
    let leaves = vec![String::new()];
    for (in_focus, expected) in [(true, 1), (false, 0)] {
        let (_, c, v) = setup(0.3, in_focus);
        let s = score_links(
            &config(Mode::Hard),
            &parent(&leaves, 0, 0.0),
            vec![link("http://a.test/y", "y", false)],
            &v,
            &c,
            None,
            &mut Scratch::new(),
        );
        assert_eq!(s.links.len(), expected, "hard_focus {in_focus}");
    }
    // A robots nofollow stops every mode.
    let (_, c, v) = setup(0.9, true);
    let mut p = parent(&leaves, 0, 0.0);
    p.nofollow = true;
    let s = score_links(
        &config(Mode::Soft),
        &p,
        vec![link("http://a.test/y", "y", false)],
        &v,
        &c,
        None,
        &mut Scratch::new(),
    );
    assert!(s.links.is_empty());
}

#[test]
fn baselines_ignore_relevance() {
    let (_, c, v) = setup(0.9, true);
    let leaves = vec![String::new()];
    let run = |mode| {
        let s = score_links(
            &config(mode),
            &parent(&leaves, 4, 0.0),
            vec![link("http://a.test/z", "z", false)],
            &v,
            &c,
            None,
            &mut Scratch::new(),
        );
        s.links[0].score
    };
    assert_eq!(run(Mode::Bfs), -5.0);
    assert_eq!(run(Mode::Unfocused), 0.0);
}

#[test]
fn traps_and_link_floods_are_refused_and_reported() {
    let (_, c, v) = setup(0.5, true);
    let leaves = vec![String::new()];
    let mut cfg = config(Mode::Soft);
    cfg.max_links_per_page = 2;
    let links = vec![
        link("http://a.test/a/b/a/b/a/b", "loop", false),
        link("http://a.test/ok", "ok", false),
        link("http://a.test/cut", "cut", false),
    ];
    let s = score_links(
        &cfg,
        &parent(&leaves, 0, 0.0),
        links,
        &v,
        &c,
        None,
        &mut Scratch::new(),
    );
    assert_eq!(scores(&s), vec![("http://a.test/ok".to_owned(), 0.5)]);
    assert_eq!(
        s.rejects,
        vec!["trap-too-many-links", "trap-path-repetition"]
    );
}

#[test]
fn sharksearch_prefers_the_anchor_that_names_the_topic() {
    let (m, c, v) = setup(0.0, false);
    let mut cfg = config(Mode::Shark);
    cfg.query = Arc::new(Query::from_model(&m));
    let leaves = vec![
        "telescope".to_owned(),
        "menu".to_owned(),
        "contact".to_owned(),
    ];
    let mut off = link("http://a.test/contact", "contact us", false);
    off.leaf_range = (2, 3);
    let s = score_links(
        &cfg,
        &parent(&leaves, 0, 0.0),
        vec![link("http://a.test/comets", "comet nebula", false), off],
        &v,
        &c,
        None,
        &mut Scratch::new(),
    );
    let (on, off) = (s.links[0].score, s.links[1].score);
    assert!(on > off && off >= 0.0, "{on} vs {off}");
}

#[test]
fn an_untrained_apprentice_records_features_and_leaves_the_score_to_relevance() {
    let (_, c, v) = setup(0.6, true);
    let mut cfg = config(Mode::Soft);
    cfg.apprentice = Some(crate::crawl::ApprenticeConfig::default());
    let leaves = vec!["comet".to_owned(), "orbit".to_owned()];
    let a = Apprentice::default();
    let s = score_links(
        &cfg,
        &parent(&leaves, 0, 0.0),
        vec![link("http://a.test/w", "orbit", false)],
        &v,
        &c,
        Some(&a),
        &mut Scratch::new(),
    );
    assert_eq!(s.links[0].score, 0.6);
    assert!(s.links[0].features.as_ref().is_some_and(|f| !f.is_empty()));
}
