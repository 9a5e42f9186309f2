use super::*;

/// A pick judged by its own relevance alone.
fn v(high: bool) -> f64 {
    f64::from(u8::from(high))
}

fn id(raw: i64) -> u64 {
    raw as u64
}

/// `n` frontier URLs: soft focus ranks them by id (0 best), the apprentice in reverse.
fn crossed(n: i64) -> Vec<Ranked> {
    (0..n)
        .map(|i| Ranked {
            id: id(i),
            soft: 1.0 - i as f64 / n as f64,
            apprentice: (i + 1) as f64 / n as f64,
        })
        .collect()
}

#[test]
fn soft_guiding_raises_the_apprentices_best_picks_to_the_head_and_writes_nothing_else() {
    let frontier = crossed(1000);
    let p = plan(&frontier, Ranker::Soft, 160, SHARE);
    // ⌈160 / 16⌉ = 10 explored: the apprentice's ten best, at soft focus's best score.
    let raised: Vec<(u64, f64)> = (990..1000).rev().map(|i| (id(i), 1.0)).collect();
    assert_eq!(p.raise, raised);
    let soft: Vec<u64> = (p.picks.iter())
        .filter(|(_, r)| *r == Ranker::Soft)
        .map(|(id, _)| *id)
        .collect();
    assert_eq!(soft, (0..160).map(id).collect::<Vec<_>>(), "its own picks");
    let explored = p.picks.iter().filter(|(_, r)| *r == Ranker::Apprentice);
    assert_eq!(explored.count(), 10);
}

#[test]
fn the_apprentice_guiding_raises_soft_focus_picks_it_ranks_low_to_its_own_head() {
    let frontier = crossed(1000);
    let p = plan(&frontier, Ranker::Apprentice, 160, SHARE);
    let raised: Vec<(u64, f64)> = (0..10).map(|i| (id(i), 1.0)).collect();
    assert_eq!(
        p.raise, raised,
        "soft focus's best, at the apprentice's best score"
    );
    let own = p.picks.iter().filter(|(_, r)| *r == Ranker::Apprentice);
    assert!(own.map(|(i, _)| *i).eq((840..1000).rev().map(id)));
}

#[test]
fn urls_both_rankers_would_fetch_are_nobodys_picks() {
    // Both agree on the order: nothing to explore, no pick to score.
    let frontier: Vec<Ranked> = (0..100)
        .map(|i| Ranked {
            id: id(i),
            soft: 1.0 / (i + 1) as f64,
            apprentice: 0.5 / (i + 1) as f64,
        })
        .collect();
    let p = plan(&frontier, Ranker::Soft, 40, SHARE);
    assert!(p.raise.is_empty() && p.picks.is_empty(), "{p:?}");
    // A short frontier: the horizon is what there is.
    assert_eq!(plan(&crossed(4), Ranker::Soft, 100, SHARE), Plan::default());
    assert_eq!(plan(&[], Ranker::Apprentice, 100, SHARE), Plan::default());
}

#[test]
fn the_duel_decides_only_on_enough_picks_and_a_clear_difference() {
    let mut d = Duel::new();
    for i in 0..MIN_PICKS - 1 {
        d.observe(Ranker::Soft, v(true));
        d.observe(Ranker::Apprentice, v(i % 5 == 0));
    }
    assert_eq!(d.contest(), None, "too few picks");
    d.observe(Ranker::Soft, v(true));
    d.observe(Ranker::Apprentice, v(false));
    let c = d.contest().unwrap();
    assert_eq!(c.picks, [MIN_PICKS, MIN_PICKS]);
    assert!(c.soft > 0.9 && c.apprentice < 0.3, "{c:?}");
    assert!(d.apprentice_worse(1.645, MIN_PICKS));
    assert!(
        !d.apprentice_worse(1.645, MIN_PICKS + 1),
        "fewer picks than asked for"
    );
    // As many relevant on both sides: no verdict.
    let mut even = Duel::new();
    for i in 0..200 {
        even.observe(Ranker::Soft, v(i % 2 == 0));
        even.observe(Ranker::Apprentice, v(i % 2 == 1));
    }
    assert!(!even.apprentice_worse(1.645, MIN_PICKS));
    // The window forgets: the apprentice's old misses leave it.
    for _ in 0..WINDOW {
        d.observe(Ranker::Apprentice, v(true));
    }
    assert_eq!(d.contest().unwrap().picks, [WINDOW, MIN_PICKS]);
    assert!(!d.apprentice_worse(1.645, MIN_PICKS), "both near 1 now");
}
