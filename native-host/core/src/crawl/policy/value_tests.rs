use super::*;
use crate::crawl::policy::critic::{Critic, Pair, WINDOW};

#[test]
fn a_pick_counts_its_relevant_children_fetched_within_the_horizon_once() {
    let mut v = Values::new(100);
    v.picked(Ranker::Soft, false, vec![1, 2, 3], 10);
    v.picked(Ranker::Apprentice, true, vec![3, 4], 20);
    v.fetched(1, true);
    v.fetched(1, true);
    v.fetched(2, false);
    v.fetched(3, true);
    assert_eq!(v.closed(109), vec![], "not due yet");
    assert_eq!(v.closed(110), vec![(Ranker::Soft, 2.0)], "1 and 3, 1 once");
    // After the soft pick closed, its child 4 still counts for the apprentice's pick.
    v.fetched(4, true);
    assert_eq!(v.closed(1000), vec![(Ranker::Apprentice, 3.0)]);
    assert_eq!(v.open(), 0);
    // A child fetched after its pick closed counts for nobody.
    v.picked(Ranker::Soft, false, vec![9], 0);
    assert_eq!(v.closed(100), vec![(Ranker::Soft, 0.0)]);
    v.fetched(9, true);
    assert!(v.parents.is_empty());
}

/// One retrain period's picks: the apprentice's are relevant 3 times in 4 and lead nowhere
/// (their 2 fetched children irrelevant), soft focus's relevant once in 4 and leading into
/// a seam (3 of their 4 fetched children relevant).
fn period(own: &mut Critic, valued: &mut Critic, v: &mut Values, now: &mut u64) {
    for i in 0..20u64 {
        let base = *now * 100 + i * 10;
        let (a_high, s_high) = (i % 4 != 0, i % 4 == 0);
        own.observe_pick(Ranker::Apprentice, f64::from(u8::from(a_high)));
        own.observe_pick(Ranker::Soft, f64::from(u8::from(s_high)));
        v.picked(Ranker::Apprentice, a_high, vec![base, base + 1], *now);
        v.picked(Ranker::Soft, s_high, (base + 2..base + 6).collect(), *now);
        for c in base..base + 6 {
            v.fetched(c, c >= base + 3);
        }
    }
    *now += 200;
    for (r, value) in v.closed(*now) {
        valued.observe_pick(r, value);
    }
}

#[test]
fn own_relevance_keeps_an_apprentice_that_leads_nowhere_and_the_value_label_stops_it() {
    // On the pages it fetched, the apprentice ranked the relevant ones first and soft focus
    // did no better than chance: the paired comparison lets it guide.
    let window: Vec<Pair> = (0..WINDOW)
        .map(|i| Pair {
            soft: (i % 7) as f64,
            apprentice: f64::from(u8::from(i % 3 == 0)),
            high: i % 3 == 0,
        })
        .collect();
    let (mut own, mut valued) = (Critic::new(), Critic::new());
    for p in &window {
        own.observe(*p);
        valued.observe(*p);
    }
    assert!(own.decide() && valued.decide(), "both let it guide");
    let (mut v, mut now) = (Values::new(200), 0);
    for _ in 0..3 {
        period(&mut own, &mut valued, &mut v, &mut now);
    }
    let (o, val) = (own.contest().unwrap(), valued.contest().unwrap());
    assert!(
        o.apprentice > o.soft,
        "by own relevance its picks look better: {o:?}"
    );
    assert!(own.decide(), "{o:?}");
    assert!(val.apprentice < val.soft, "{val:?}");
    assert!(!valued.decide(), "the value label stops it: {val:?}");
}
