//! Invariants of the classifier over random taxonomies, examples and documents.

use forager_classifier::{Model, Scratch, Taxonomy, TextOptions, TopicId, TrainOptions, ROOT};
use proptest::prelude::*;

const WORDS: &[&str] = &[
    "orbit",
    "telescope",
    "nebula",
    "comet",
    "galaxy",
    "lens",
    "router",
    "packet",
    "ethernet",
    "protocol",
    "socket",
    "kernel",
    "thread",
    "scheduler",
    "bread",
    "flour",
    "oven",
    "yeast",
    "theorem",
    "lemma",
    "proof",
    "matrix",
    "vector",
    "the",
    "and",
    "of",
];

/// A random tree: node i > 0 hangs under a random earlier node.
fn taxonomy(parents: &[usize]) -> (Taxonomy, Vec<TopicId>) {
    let mut t = Taxonomy::new("root");
    let mut ids = vec![ROOT];
    for (i, &p) in parents.iter().enumerate() {
        let parent = ids[p % ids.len()];
        ids.push(t.add(parent, &format!("t{i}"), "").unwrap());
    }
    (t, ids)
}

fn text(words: &[usize]) -> String {
    words
        .iter()
        .map(|&w| WORDS[w % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

fn model_from(parents: &[usize], examples: &[(usize, Vec<usize>)]) -> Model {
    let (tax, ids) = taxonomy(parents);
    let mut m = Model::new(tax, TextOptions::default(), TrainOptions::default());
    for (i, (topic, words)) in examples.iter().enumerate() {
        let id = ids[topic % ids.len()];
        m.add_example(id, &format!("http://e.test/{i}"), &text(words))
            .unwrap();
    }
    m
}

fn tree() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..8, 1..10)
}

fn examples() -> impl Strategy<Value = Vec<(usize, Vec<usize>)>> {
    prop::collection::vec(
        (0usize..12, prop::collection::vec(0usize..40, 0..30)),
        0..25,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn children_sum_to_parent_and_relevance_is_a_probability(
        parents in tree(), ex in examples(), doc in prop::collection::vec(0usize..40, 0..200),
        good in prop::collection::vec(0usize..12, 0..3),
    ) {
        let mut m = model_from(&parents, &ex);
        let ids: Vec<TopicId> = m.taxonomy().topics().map(|t| t.id).collect();
        for g in good {
            m.set_good(ids[g % ids.len()], true).unwrap();
        }
        let c = m.classifier();
        let mut s = Scratch::new();
        let lp = c.log_probs(&text(&doc), &mut s);
        let order = c.topic_order();
        let p = |id: TopicId| lp[order.iter().position(|&x| x == id).unwrap()].exp();
        prop_assert!((p(ROOT) - 1.0).abs() < 1e-12);
        for t in m.taxonomy().topics() {
            let kids = m.taxonomy().children(t.id);
            if !kids.is_empty() {
                let sum: f64 = kids.iter().map(|&k| p(k)).sum();
                prop_assert!((sum - p(t.id)).abs() < 1e-9, "node {} sum {} vs {}", t.id, sum, p(t.id));
            }
        }
        let v = c.classify(&text(&doc), &mut s);
        // The best leaf alone (the apprentice's anchor feature) is the verdict's.
        prop_assert_eq!(c.best_leaf(&text(&doc), &mut s), v.best_leaf.as_str());
        prop_assert!((0.0..=1.0).contains(&v.relevance));
        prop_assert!(m.taxonomy().is_leaf(v.best_leaf_id));
        // Hard focus holds exactly when some topic on c*'s path is good.
        prop_assert_eq!(v.hard_focus, m.taxonomy().is_effectively_good(v.best_leaf_id));
        // Relevance equals the summed probability of the maximal good topics.
        let expect: f64 = m.taxonomy().maximal_good().iter().map(|&g| p(g)).sum();
        prop_assert!((v.relevance - expect.min(1.0)).abs() < 1e-9);
    }

    #[test]
    fn bytes_are_deterministic_and_round_trip(parents in tree(), ex in examples()) {
        let m = model_from(&parents, &ex);
        let mut reversed: Vec<_> = ex.clone();
        reversed.reverse();
        // Same examples added in another order, with the same URLs.
        let (tax, ids) = taxonomy(&parents);
        let mut r = Model::new(tax, TextOptions::default(), TrainOptions::default());
        for (j, (topic, words)) in reversed.iter().enumerate() {
            let i = ex.len() - 1 - j;
            r.add_example(ids[topic % ids.len()], &format!("http://e.test/{i}"), &text(words)).unwrap();
        }
        prop_assert_eq!(m.to_bytes(), r.to_bytes());
        let back = Model::from_bytes(&m.to_bytes()).unwrap();
        prop_assert_eq!(back.to_bytes(), m.to_bytes());
    }

    #[test]
    fn add_then_remove_restores_model(
        parents in tree(), ex in examples(), topic in 0usize..12,
        words in prop::collection::vec(0usize..40, 1..50),
        doc in prop::collection::vec(0usize..40, 1..50),
    ) {
        let mut m = model_from(&parents, &ex);
        let before = m.to_bytes();
        let c0 = m.classifier().classify(&text(&doc), &mut Scratch::new());
        let ids: Vec<TopicId> = m.taxonomy().topics().map(|t| t.id).collect();
        m.add_example(ids[topic % ids.len()], "http://new.test/", &text(&words)).unwrap();
        m.remove_example("http://new.test/").unwrap();
        prop_assert_eq!(m.to_bytes(), before);
        let c1 = m.classifier().classify(&text(&doc), &mut Scratch::new());
        prop_assert_eq!(c0, c1);
    }

    #[test]
    fn damaged_bytes_error_and_never_panic(
        parents in tree(), ex in examples(), cut in any::<prop::sample::Index>(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let bytes = model_from(&parents, &ex).to_bytes();
        let n = cut.index(bytes.len());
        prop_assert!(Model::from_bytes(&bytes[..n]).is_err());
        let mut bad = bytes.clone();
        for (i, b) in flips {
            let i = i.index(bad.len());
            bad[i] ^= b | 1;
        }
        // Either an error or a model that classifies without panicking.
        if let Ok(mut m) = Model::from_bytes(&bad) {
            let _ = m.classifier().classify("telescope router proof", &mut Scratch::new());
        }
    }
}

#[test]
fn random_bytes_are_rejected() {
    assert!(Model::from_bytes(b"").is_err());
    assert!(Model::from_bytes(b"FORAGERM").is_err());
    assert!(Model::from_bytes(b"FORAGERM\x09\x00rest").is_err());
    assert!(Model::from_bytes(&[0xff; 100]).is_err());
}

/// A two-topic world with disjoint vocabularies: the classifier must tell them apart, and very
/// long documents must not underflow.
#[test]
fn learns_planted_topics_without_underflow() {
    let mut tax = Taxonomy::new("root");
    let sky = tax.ensure_path("/Science/Astronomy", "").unwrap();
    let net = tax.ensure_path("/Computing/Networking", "").unwrap();
    let cook = tax.ensure_path("/Home/Cooking", "").unwrap();
    let mut m = Model::new(tax, TextOptions::default(), TrainOptions::default());
    let docs = [
        (sky, "telescope orbit comet nebula galaxy lens"),
        (sky, "galaxy telescope lens orbit"),
        (net, "router packet ethernet protocol socket"),
        (net, "packet socket protocol router"),
        (cook, "bread flour oven yeast"),
        (cook, "oven yeast bread"),
    ];
    for (i, (t, d)) in docs.iter().enumerate() {
        m.add_example(*t, &format!("http://x.test/{i}"), d).unwrap();
    }
    m.set_good(m.taxonomy().find("/Science").unwrap(), true)
        .unwrap();
    let c = m.classifier();
    let mut s = Scratch::new();
    let v = c.classify("a comet seen through the telescope", &mut s);
    assert_eq!(v.best_leaf, "/Science/Astronomy");
    assert!(v.hard_focus);
    assert!(v.relevance > 0.5);
    let long = "router packet ".repeat(50_000);
    // With the default evidence cap a long page is as sure as a ten-word one.
    let capped = c.classify(&long, &mut s);
    assert_eq!(capped.best_leaf, "/Computing/Networking");
    assert!(capped.log_relevance.is_finite() && capped.log_relevance < -2.0);
    // Counting every occurrence, the evidence is vast and must not underflow.
    let c = (*c).clone().with_evidence_cap(None);
    let v = c.classify(&long, &mut s);
    assert_eq!(v.best_leaf, "/Computing/Networking");
    assert!(
        v.log_relevance.is_finite() && v.log_relevance < -1000.0,
        "{}",
        v.log_relevance
    );
    let total: f64 = v.path.iter().map(|p| p.p).take(1).sum();
    assert!((total - 1.0).abs() < 1e-9);
}

/// Length normalisation: every example weighs the same, so one very long page cannot drown the
/// short examples of its topic. With raw counts, Astronomy's θ(router) would be 1/2002 and
/// "router kernel" would go to Systems.
#[test]
fn a_long_example_does_not_outweigh_short_ones() {
    let mut tax = Taxonomy::new("root");
    let sky = tax.ensure_path("/Astronomy", "").unwrap();
    let sys = tax.ensure_path("/Systems", "").unwrap();
    let mut m = Model::new(tax, TextOptions::default(), TrainOptions::default());
    let docs = [
        (sky, "telescope ".repeat(2000)),
        (sky, "router router kernel kernel".to_string()),
        (sys, "kernel scheduler thread".to_string()),
        (sys, "scheduler thread socket".to_string()),
    ];
    for (i, (t, d)) in docs.iter().enumerate() {
        m.add_example(*t, &format!("http://x.test/{i}"), d).unwrap();
    }
    let v = m
        .classifier()
        .classify("router kernel", &mut Scratch::new());
    assert_eq!(v.best_leaf, "/Astronomy");
}

/// Self-training learns words that only the unlabelled pages use, from the words they share
/// with the examples; it adds only confident pages, never touches a labelled example, is one
/// round however often it is called, and survives the model bytes.
#[test]
fn self_training_learns_from_confident_unlabelled_pages() {
    let mut tax = Taxonomy::new("root");
    let sky = tax.ensure_path("/Astronomy", "").unwrap();
    let net = tax.ensure_path("/Networking", "").unwrap();
    let mut m = Model::new(tax, TextOptions::default(), TrainOptions::default());
    m.add_example(sky, "http://x.test/1", "telescope orbit comet")
        .unwrap();
    m.add_example(sky, "http://x.test/2", "telescope galaxy orbit")
        .unwrap();
    m.add_example(net, "http://x.test/3", "router packet socket")
        .unwrap();
    m.add_example(net, "http://x.test/4", "packet ethernet router")
        .unwrap();
    let docs: Vec<(String, String)> = [
        ("http://u.test/a", "telescope orbit nebula lens"),
        ("http://u.test/b", "comet telescope nebula"),
        ("http://u.test/c", "router packet kernel"),
        ("http://u.test/d", "nebula router flour"),
        ("http://u.test/e", "the and of"),
        ("http://x.test/3", "telescope telescope telescope"),
    ]
    .iter()
    .map(|(u, t)| (u.to_string(), t.to_string()))
    .collect();
    // Two leaves: every page would be at least 50% sure of one.
    assert!(m.self_train(docs.clone(), 0.5).is_err());
    let cook = m
        .add_topic(forager_classifier::ROOT, "Cooking", "")
        .unwrap();
    m.add_example(cook, "http://x.test/5", "bread flour oven")
        .unwrap();
    m.add_example(cook, "http://x.test/6", "yeast oven bread")
        .unwrap();
    let plain = m.to_bytes();
    let mut s = Scratch::new();
    let before = m.classifier().classify("nebula lens", &mut s);
    assert!(before.path[0].p < 0.4, "unseen words: {before:?}");
    assert!(m.self_train(docs.clone(), 1.5).is_err());
    let added = m.self_train(docs.clone(), 0.6).unwrap();
    // a, b and c are confident; d is torn between three topics; e has no words; x.test/3 is
    // labelled already.
    let infos = m.examples();
    let auto: Vec<(&str, &str)> = (infos.iter())
        .filter(|e| e.self_trained)
        .map(|e| (e.url.as_str(), e.topic.as_str()))
        .collect();
    assert_eq!(
        auto,
        [
            ("http://u.test/a", "/Astronomy"),
            ("http://u.test/b", "/Astronomy"),
            ("http://u.test/c", "/Networking")
        ]
    );
    assert_eq!(added, 3);
    assert!(infos
        .iter()
        .any(|e| e.url == "http://x.test/3" && e.topic == "/Networking" && !e.self_trained));
    let after = m.classifier().classify("nebula lens", &mut s);
    assert_eq!(after.best_leaf, "/Astronomy");
    assert!(after.path[0].p > 0.6, "{after:?}");
    // Another call is another single round from the labelled examples, not a second round.
    let bytes = m.to_bytes();
    assert_eq!(m.self_train(docs, 0.6).unwrap(), 3);
    assert_eq!(m.to_bytes(), bytes);
    // The flags survive the bytes; with none, the bytes are version 1 as before.
    let back = Model::from_bytes(&bytes).unwrap();
    assert_eq!(back.examples(), m.examples());
    assert_eq!(&bytes[8..10], &2u16.to_le_bytes());
    assert_eq!(&plain[8..10], &1u16.to_le_bytes());
    assert_eq!(m.self_trained_count(), 3);
    let learned: Vec<(String, u64)> = (m.topics().into_iter())
        .filter(|t| t.self_trained > 0)
        .map(|t| (t.path, t.self_trained))
        .collect();
    assert_eq!(
        learned,
        [
            ("/Astronomy".to_string(), 2),
            ("/Networking".to_string(), 1)
        ]
    );
    assert_eq!(m.forget_self_trained(), 3);
    assert_eq!(m.to_bytes(), plain);
}

#[test]
fn taxonomy_edits_update_the_model() {
    let mut tax = Taxonomy::new("root");
    let a = tax.ensure_path("/A", "").unwrap();
    let b = tax.ensure_path("/B", "").unwrap();
    let mut m = Model::new(tax, TextOptions::default(), TrainOptions::default());
    m.add_example(a, "http://a.test/1", "telescope orbit")
        .unwrap();
    m.add_example(b, "http://b.test/1", "router packet")
        .unwrap();
    let mut s = Scratch::new();
    assert_eq!(m.classifier().classify("telescope", &mut s).best_leaf, "/A");
    // Move the example: the same text now belongs to B.
    m.move_example("http://a.test/1", b).unwrap();
    let c = m.add_topic(ROOT, "C", "").unwrap();
    m.add_example(c, "http://c.test/1", "bread oven").unwrap();
    assert_eq!(m.classifier().classify("telescope", &mut s).best_leaf, "/B");
    m.rename_topic(b, "Bee", "Bees").unwrap();
    assert_eq!(
        m.classifier().classify("telescope", &mut s).best_leaf,
        "/Bee"
    );
    m.move_topic(c, a).unwrap();
    assert_eq!(m.classifier().classify("bread", &mut s).best_leaf, "/A/C");
    assert_eq!(m.delete_topic(a).unwrap(), 1);
    assert_eq!(m.example_count(), 2);
    assert_eq!(m.classifier().classify("bread", &mut s).best_leaf, "/Bee");
}
