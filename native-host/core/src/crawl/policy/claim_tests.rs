use super::*;

fn held(sid: i64, in_flight: bool) -> Held {
    Held { sid, in_flight }
}

#[test]
fn the_head_is_what_one_process_would_take_now() {
    assert_eq!(head(32), 32);
    assert_eq!(head(1), 1);
    assert_eq!(head(0), 0);
}

#[test]
fn a_host_is_offered_only_with_nothing_in_flight() {
    let hosts = [held(7, false), held(3, true), held(2, false)];
    assert_eq!(
        offers(&hosts),
        [2, 7],
        "idle ones, in id order (the lock order)"
    );
    assert!(offers(&[held(1, true)]).is_empty());
    assert!(offers(&[]).is_empty());
}

#[test]
fn an_offer_waits_out_the_politeness_gap() {
    assert_eq!(offered_from(100.0, Duration::from_millis(1500)), 101.5);
    assert_eq!(offered_from(100.0, Duration::ZERO), 100.0);
}
