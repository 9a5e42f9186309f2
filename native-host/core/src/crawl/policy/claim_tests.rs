use super::*;

const NOW: f64 = 1000.0;

/// Candidates on hosts `sids`, none planned yet.
fn fresh(sids: &[i64]) -> Vec<Candidate> {
    (sids.iter())
        .map(|&sid| Candidate {
            sid,
            ready_at: None,
        })
        .collect()
}

#[test]
fn with_no_gap_a_checkout_takes_the_frontier_order() {
    let c = fresh(&[1, 1, 1, 2, 3]);
    let t = ready_first(&c, 4, NOW, 0.0);
    assert_eq!(t.picks, vec![0, 1, 2, 3]);
    assert!(t.ready_at.is_empty());
}

#[test]
fn urls_bunched_on_one_host_give_way_to_other_ready_hosts() {
    // The best four are one host's: one of them goes now, the others wait for ready hosts.
    let c = fresh(&[7, 7, 7, 7, 2, 3, 4, 5]);
    let t = ready_first(&c, 4, NOW, 1.0);
    assert_eq!(t.picks, vec![0, 4, 5, 6]);
    assert_eq!(
        t.ready_at,
        vec![
            (2, NOW + 1.0),
            (3, NOW + 1.0),
            (4, NOW + 1.0),
            (7, NOW + 1.0)
        ]
    );
}

#[test]
fn a_host_whose_slot_is_ahead_comes_after_ready_ones_soonest_first() {
    let mut c = fresh(&[1, 2, 3, 4]);
    c[0].ready_at = Some(NOW + 5.0);
    c[1].ready_at = Some(NOW + 0.5);
    c[3].ready_at = Some(NOW - 3.0);
    let t = ready_first(&c, 4, NOW, 1.0);
    assert_eq!(t.picks, vec![2, 3, 1, 0]);
    assert_eq!(
        t.ready_at,
        vec![
            (1, NOW + 6.0),
            (2, NOW + 1.5),
            (3, NOW + 1.0),
            (4, NOW + 1.0)
        ]
    );
}

#[test]
fn one_host_alone_gives_its_urls_one_gap_apart() {
    let c = fresh(&[9, 9, 9]);
    let t = ready_first(&c, 5, NOW, 2.0);
    assert_eq!(t.picks, vec![0, 1, 2]);
    assert_eq!(t.ready_at, vec![(9, NOW + 6.0)]);
}

#[test]
fn the_candidates_read_grow_with_a_gap_only() {
    assert_eq!(candidates(8, 0.0), 8);
    assert!(candidates(8, 1.0) >= 32);
}

#[test]
fn a_checkout_reaches_as_deep_as_one_process_with_every_workers_look_ahead() {
    assert_eq!(reach(8, 0.0, 4), 8, "no gap: the frontier order");
    assert_eq!(reach(8, 1.0, 1), candidates(8, 1.0));
    assert_eq!(reach(8, 1.0, 4), 4 * candidates(8, 1.0));
    assert_eq!(
        reach(8, 1.0, 0),
        candidates(8, 1.0),
        "the asking worker is live"
    );
}
