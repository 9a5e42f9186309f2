use super::*;
use crate::store::NewUrl;

/// A crawl's apprentice under `guide`: warm after 100 pages, retrained every 100.
fn learning(guide: Guide) -> Learning {
    let cfg = ApprenticeConfig {
        retrain_every: 100,
        warmup: 100,
        guide,
        ..Default::default()
    };
    Learning::new(&cfg, Apprentice::new())
}

/// One link target: its URL, the link's features and soft focus's score (the parent's R),
/// and whether it is relevant.
struct Target {
    url: String,
    features: Vec<u32>,
    parent: f64,
    relevant: bool,
}

/// `n` targets numbered from `from`: half behind feature 1 and half behind feature 2; the
/// relevant ones are those behind feature 1 when `apprentice_sees`, and those whose parent
/// has R 0.9 (the others' 0.1) when `soft_sees`; what neither sees alternates.
fn targets(from: usize, n: usize, apprentice_sees: bool, soft_sees: bool) -> Vec<Target> {
    (from..from + n)
        .map(|i| {
            let (f1, hi_parent) = (i % 2 == 0, (i / 2) % 2 == 0);
            let relevant = match (apprentice_sees, soft_sees) {
                (true, _) => f1,
                (false, true) => hi_parent,
                (false, false) => i % 3 == 0,
            };
            Target {
                url: format!("http://t{i}.test/"),
                features: vec![if f1 { 1 } else { 2 }, 3],
                parent: if hi_parent { 0.9 } else { 0.1 },
                relevant,
            }
        })
        .collect()
}

/// The crawl as `l` sees it: each target found on a fetched page (its parent), then fetched;
/// `total` pages fetched before. Returns the steps taken.
fn crawl(l: &mut Learning, ts: &[Target], total: &mut u64) -> Vec<&'static str> {
    let mut steps = Vec::new();
    for chunk in ts.chunks(50) {
        let batch: Vec<Outcome> = chunk
            .iter()
            .map(|t| Outcome {
                status: DocStatus::Fetched,
                relevance: t.parent,
                links: vec![NewUrl {
                    features: Some(t.features.clone()),
                    weight: 1.0,
                    ..NewUrl::seed(&url::Url::parse(&t.url).unwrap())
                }],
                ..Outcome::default()
            })
            .collect();
        l.scored(&batch, Mode::Soft);
        let r = |t: &Target| if t.relevant { 0.9 } else { 0.0 };
        let instances: Vec<ApprenticeEvidence> =
            chunk.iter().map(|t| (t.features.clone(), r(t))).collect();
        let pages: Vec<FetchedPage> = (chunk.iter())
            .enumerate()
            .map(|(i, t)| FetchedPage {
                seq: i as i64,
                url: t.url.clone(),
                relevance: r(t),
                title: None,
            })
            .collect();
        *total += chunk.len() as u64;
        match l.learn(&instances, &pages, chunk.len() as u64, *total) {
            Some(Step::Guide(a)) => {
                assert!(a.is_trained());
                steps.push("guide");
            }
            Some(Step::Unguide(_)) => steps.push("unguide"),
            Some(Step::Explore(_)) | None => steps.push("-"),
        }
    }
    steps
}

#[test]
fn learning_only_never_guides_but_learns_every_link() {
    let mut l = learning(Guide::Never);
    let mut total = 0;
    let steps = crawl(&mut l, &targets(0, 400, true, false), &mut total);
    assert!(steps.iter().all(|s| *s == "-"), "{steps:?}");
    assert!(!l.guiding());
    assert_eq!(l.instances(), [200, 200]);
    assert!(l.into_learned().measured_trust().is_some_and(|t| t > 0.9));
}

#[test]
fn guiding_always_starts_at_the_warm_up_and_retrains_on_schedule() {
    let mut l = learning(Guide::Always);
    let mut total = 0;
    let steps = crawl(&mut l, &targets(0, 400, false, true), &mut total);
    assert_eq!(
        steps,
        ["-", "guide", "-", "guide", "-", "guide", "-", "guide"]
    );
    assert!(l.guiding());
}

#[test]
fn the_critic_lets_a_better_apprentice_guide_and_stops_it_once_soft_focus_is_better() {
    let mut l = learning(Guide::WhenBetter);
    let mut total = 0;
    // The apprentice sees what soft focus does not: it guides from the first decision on.
    let steps = crawl(&mut l, &targets(0, 300, true, false), &mut total);
    assert_eq!(
        steps,
        ["-", "guide", "-", "guide", "-", "guide"],
        "{:?}",
        l.critic()
    );
    let (a, s) = l.critic().unwrap();
    assert!(a > 0.9 && s < 0.7, "{a} vs {s}");
    // Then the web changes: the parents' relevance tells, the apprentice's old lesson misleads.
    let steps = crawl(&mut l, &targets(300, 600, false, true), &mut total);
    assert!(steps.contains(&"unguide"), "{steps:?} {:?}", l.critic());
    let off = steps.iter().position(|s| *s == "unguide").unwrap();
    assert!(steps[off..].iter().all(|s| *s != "guide"), "{steps:?}");
    assert!(!l.guiding());
}

#[test]
fn the_critic_keeps_soft_focus_when_the_apprentice_is_no_better() {
    let mut l = learning(Guide::WhenBetter);
    let mut total = 0;
    let steps = crawl(&mut l, &targets(0, 600, false, true), &mut total);
    assert!(
        steps.iter().all(|s| *s == "-"),
        "{steps:?} {:?}",
        l.critic()
    );
    // Soft focus separates these pages; the apprentice, no better, is trusted for nothing and
    // its priorities fall back to soft focus's scores.
    let (a, s) = l.critic().expect("decided on evidence");
    assert!(s > 0.99 && a <= s, "{a} vs {s}");
    assert!(!l.guiding());
    assert!(l.instances()[1] > 0, "it learned meanwhile");
}

#[test]
fn the_critic_needs_no_more_than_scored_links_of_focused_modes() {
    let mut l = learning(Guide::WhenBetter);
    let mut total = 0;
    crawl(&mut l, &targets(0, 100, true, false), &mut total);
    let ts = targets(100, 50, true, false);
    let batch: Vec<Outcome> = (ts.iter())
        .map(|t| Outcome {
            status: DocStatus::Fetched,
            links: vec![NewUrl {
                features: Some(t.features.clone()),
                ..NewUrl::seed(&url::Url::parse(&t.url).unwrap())
            }],
            ..Outcome::default()
        })
        .collect();
    l.scored(&batch, Mode::Bfs);
    assert!(l.board.is_empty(), "breadth first has nothing to compare");
    l.scored(&batch, Mode::Hard);
    assert_eq!(l.board.len(), 50);
}

#[test]
fn the_critics_plan_scores_each_pick_when_it_is_fetched() {
    let mut l = learning(Guide::WhenBetter);
    let mut total = 0;
    // Soft focus sees what the apprentice does not: it does not guide.
    crawl(&mut l, &targets(0, 100, false, true), &mut total);
    assert!(l.explores() && !l.guiding());
    // A page links to 400 URLs: soft focus prefers low numbers (its R × the link's weight),
    // the retrained apprentice high ones (feature i).
    let url = |i: i64| format!("http://u{i}.test/");
    let hub = Outcome {
        status: DocStatus::Fetched,
        relevance: 1.0,
        links: (0..400)
            .map(|i| NewUrl {
                features: Some(vec![i as u32]),
                weight: 1.0 - i as f64 / 400.0,
                ..NewUrl::seed(&url::Url::parse(&url(i)).unwrap())
            })
            .collect(),
        ..Outcome::default()
    };
    l.scored(&[hub], Mode::Soft);
    let fetched = |raw: i64, relevance: f64| Outcome {
        oid: PageId::from_raw(raw),
        status: DocStatus::Fetched,
        relevance,
        ..Outcome::default()
    };
    let number = |u: &str| u[8..u.len() - 6].parse::<i64>().unwrap();
    l.rank(|f, _| f64::from(f[0]) / 400.0);
    // The apprentice's best, 399, is no longer in the frontier (given up, say): the store
    // does not find it, and the plan is made again without it.
    let plan = l.plan();
    let ids: Vec<Option<PageId>> = (plan.picks.iter())
        .map(|p| (number(&p.url) != 399).then(|| PageId::from_raw(number(&p.url))))
        .collect();
    assert_eq!(l.found(&plan, &ids, false), None);
    for _ in 0..3 {
        let plan = l.plan();
        let raised: Vec<i64> = (plan.picks.iter())
            .filter(|p| p.raise == Some(1.0))
            .map(|p| number(&p.url))
            .collect();
        assert_eq!(
            raised,
            (392..399).rev().collect::<Vec<_>>(),
            "⌈100 / 16⌉ explored"
        );
        // The store finds every pick (its row id is its number).
        let ids: Vec<Option<PageId>> = (plan.picks.iter())
            .map(|p| Some(PageId::from_raw(number(&p.url))))
            .collect();
        let raise = l.found(&plan, &ids, false).expect("all found");
        assert_eq!(raise.len(), 7, "soft focus's head: {raise:?}");
        // Soft focus's 100 picks, half relevant, and the apprentice's 7, all relevant, are
        // fetched, with a page nobody picked.
        let batch: Vec<Outcome> = (0..100)
            .map(|id| fetched(id, if id % 2 == 0 { 0.9 } else { 0.0 }))
            .chain((392..399).map(|id| fetched(id, 0.9)))
            .chain([fetched(200, 0.0)])
            .collect();
        l.scored(&batch, Mode::Soft);
        assert!(l.picks.is_empty(), "every pick scored once");
        // A period later, their values are final (they link nowhere: their own relevance).
        total += 100;
        assert!(l.learn(&[], &[], 0, total).is_none());
    }
    let c = l.critic.contest().expect("enough picks");
    assert_eq!(c.picks, [21, 250]);
    assert!(c.apprentice > 0.9 && (c.soft - 0.5).abs() < 0.01, "{c:?}");
}

#[test]
fn a_reused_apprentice_is_republished_only_once_the_critic_has_evidence() {
    let cfg = ApprenticeConfig {
        retrain_every: 50,
        warmup: 50,
        guide: Guide::WhenBetter,
        ..Default::default()
    };
    let mut reused = Apprentice::new();
    reused.add(&[1, 3], true);
    reused.add(&[2, 3], false);
    let mut l = Learning::new(&cfg, reused);
    assert!(
        l.guiding(),
        "a trained apprentice guides from the first page"
    );
    let mut total = 0;
    // 50 pages, 17 relevant: too few for the critic; the apprentice the workers have stays.
    let steps = crawl(&mut l, &targets(0, 50, false, false), &mut total);
    assert_eq!(steps, ["-"], "{:?}", l.critic());
    assert!(l.guiding() && l.critic().is_none());
    // Then the apprentice sees what soft focus does not: retrained and republished.
    let steps = crawl(&mut l, &targets(50, 100, true, false), &mut total);
    assert_eq!(steps, ["guide", "guide"], "{:?}", l.critic());
}
