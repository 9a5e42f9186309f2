//! The lease contract: workers hold hosts; with a politeness gap a host with URLs in flight
//! stays with its holder while an idle one follows the frontier's head; renewals keep a lease, a lapsed or
//! given-back lease returns hosts and in-flight URLs, and a crash loses nothing fetched.

use super::{fetched, url, CrawlDb, NewUrl, LONG};
use std::time::{Duration, Instant};

/// How long past a lease's latest end the tests look (clocks of a store and of the test).
const LATE: Duration = Duration::from_millis(100);

/// Seeds `(url, score)` pairs.
fn seed(db: &mut dyn CrawlDb, seeds: &[(&str, f64)]) {
    let seeds: Vec<NewUrl> = seeds.iter().map(|(u, s)| url(u, *s, None, None)).collect();
    db.add_seeds(&seeds).expect("seeds");
}

/// URLs `worker` checks out, up to `n`, in order.
fn urls(db: &mut dyn CrawlDb, worker: &str, n: usize, lease: Duration) -> Vec<String> {
    let work = db.checkout(worker, n, lease).expect("checkout");
    work.into_iter().map(|w| w.url).collect()
}

/// Hosts go to workers in order of their best pending URL. With a politeness gap, a lease
/// binds a host to its holder while URLs of it are in flight there: no other worker takes its
/// URLs meanwhile, even once its slot has come. A held host with nothing in flight follows the
/// frontier's head: whoever checks out next takes it over. (With no gap a back-end shared by
/// workers lets a busy host follow the head too: `store::postgres::lease`'s tests.)
pub fn held_hosts_follow_the_frontier_head_unless_busy(db: &mut dyn CrawlDb) {
    let gap = Duration::from_millis(50);
    db.set_politeness(gap);
    seed(
        db,
        &[
            ("http://a.test/1", 0.2),
            ("http://b.test/", 0.9),
            ("http://c.test/", 0.5),
            ("http://a.test/2", 0.95),
        ],
    );
    let first = db.checkout("w1", 1, LONG).unwrap();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].url, "http://a.test/2");
    // a.test is w1's and busy: w2's claim goes to the best host it may have.
    assert_eq!(db.claim_hosts("w2", 1, LONG).unwrap(), ["b.test"]);
    assert_eq!(db.held_hosts("w1").unwrap(), ["a.test"]);
    assert_eq!(db.held_hosts("w2").unwrap(), ["b.test"]);
    // w3 takes over w2's idle host and the free one, never w1's busy one.
    assert_eq!(
        urls(db, "w3", 10, LONG),
        ["http://b.test/", "http://c.test/"]
    );
    assert!(db.held_hosts("w2").unwrap().is_empty());
    assert_eq!(db.held_hosts("w3").unwrap(), ["b.test", "c.test"]);
    std::thread::sleep(gap * 2); // a.test's politeness slot has come: it is busy still
    assert!(urls(db, "w3", 10, LONG).is_empty(), "a.test is busy");
    // Once w1's URL there is recorded, a.test is idle: the next to ask takes it.
    db.record(&[fetched(first[0].oid, 0.9, "a two", vec![])])
        .unwrap();
    assert_eq!(urls(db, "w3", 10, LONG), ["http://a.test/1"]);
    assert!(db.held_hosts("w1").unwrap().is_empty());
    assert_eq!(db.frontier_len().unwrap(), 0);
}

/// A renewed lease holds past its first end; a lapsed one frees its hosts and returns their
/// in-flight URLs to the frontier, while what the worker fetched stays fetched.
pub fn a_lapsed_lease_returns_hosts_and_in_flight_urls(db: &mut dyn CrawlDb) {
    seed(
        db,
        &[
            ("http://x.test/1", 0.9),
            ("http://x.test/2", 0.8),
            ("http://y.test/", 0.7),
        ],
    );
    // Each deadline is taken from the instants around the call that set it, so a slow
    // machine (or store) makes the test wait longer, never read the wrong side of a lease.
    let short = Duration::from_millis(300);
    let work = db.checkout("w1", 2, short).unwrap();
    let first_end = Instant::now() + short; // the first lease ends by then
    assert_eq!(work.len(), 2);
    db.record(&[fetched(work[0].oid, 0.9, "x one", vec![])])
        .unwrap();
    std::thread::sleep(Duration::from_millis(150));
    let renewal = Duration::from_millis(700);
    let asked = Instant::now(); // the renewed lease ends no sooner than asked + renewal
    assert_eq!(db.renew("w1", renewal).unwrap(), 1);
    let renewed_end = Instant::now() + renewal; // and no later than this
    std::thread::sleep(first_end.saturating_duration_since(Instant::now()) + LATE);
    // Past the first lease's end, inside the renewed one: x is still w1's.
    assert_eq!(urls(db, "w2", 10, LONG), ["http://y.test/"]);
    assert_eq!(db.expire_leases().unwrap(), 0);
    assert!(
        asked.elapsed() < renewal,
        "the machine stalled; the renewal cannot be told from expiry"
    );
    std::thread::sleep(renewed_end.saturating_duration_since(Instant::now()) + LATE);
    assert_eq!(db.expire_leases().unwrap(), 1, "x.test/2 was in flight");
    assert!(db.held_hosts("w1").unwrap().is_empty());
    assert_eq!(urls(db, "w2", 10, LONG), ["http://x.test/2"]);
    assert_eq!(db.fetched().unwrap(), 1);
    assert_eq!(db.fetched_urls().unwrap(), ["http://x.test/1"]);
}

/// Hosts given back are free at once, their in-flight URLs back in the frontier unspent.
pub fn given_back_hosts_are_free_and_their_in_flight_urls_return(db: &mut dyn CrawlDb) {
    seed(db, &[("http://x.test/1", 0.9), ("http://y.test/", 0.7)]);
    assert_eq!(urls(db, "w1", 10, LONG).len(), 2);
    db.release_hosts("w1", &["x.test".to_owned(), "elsewhere.test".to_owned()])
        .unwrap();
    assert_eq!(db.held_hosts("w1").unwrap(), ["y.test"]);
    let back = db.checkout("w2", 10, LONG).unwrap();
    assert_eq!(back.len(), 1);
    assert_eq!(
        (back[0].url.as_str(), back[0].tries),
        ("http://x.test/1", 0)
    );
    assert_eq!(db.held_hosts("w2").unwrap(), ["x.test"]);
}

/// Work left under leases is a held host's URLs pending or in flight: none before a claim,
/// some while a worker holds a host with URLs pending or in flight, none once its hosts ran
/// dry, and URLs pending on a free host are not leased work (whoever looks next takes them).
pub fn leased_work_is_pending_or_in_flight_on_held_hosts(db: &mut dyn CrawlDb) {
    seed(db, &[("http://x.test/1", 0.9), ("http://x.test/2", 0.8)]);
    assert!(!db.leased_work_left().unwrap(), "nothing is leased yet");
    let first = db.checkout("w1", 1, LONG).unwrap();
    assert!(db.leased_work_left().unwrap(), "x.test/1 in flight");
    db.record(&[fetched(first[0].oid, 0.9, "x one", vec![])])
        .unwrap();
    assert!(
        db.leased_work_left().unwrap(),
        "x.test/2 pending on w1's host"
    );
    let second = db.checkout("w1", 5, LONG).unwrap();
    db.record(&[fetched(second[0].oid, 0.8, "x two", vec![])])
        .unwrap();
    assert_eq!(db.held_hosts("w1").unwrap(), ["x.test"]);
    assert!(!db.leased_work_left().unwrap(), "w1's host ran dry");
    seed(db, &[("http://y.test/", 0.5)]);
    assert!(!db.leased_work_left().unwrap(), "y.test is free");
    assert_eq!(urls(db, "w2", 5, LONG), ["http://y.test/"]);
    assert!(db.leased_work_left().unwrap(), "y.test's URL in flight");
}

/// A worker dies mid-checkout (its door dropped without a release): its hosts with URLs in
/// flight stay its own until its lease runs out (those URLs are not fetched twice), while its
/// idle hosts and the links it found go on being crawled; once the lease has run out every
/// URL it had in flight is back in the frontier, and what it fetched is kept.
pub fn a_crash_mid_checkout_loses_nothing(
    open: &mut dyn FnMut(&str) -> Box<dyn CrawlDb>,
    name: &str,
) {
    let lease = Duration::from_millis(600);
    // The lease runs from inside the checkout: it has surely not lapsed before `t0 + lease`,
    // and surely has by `t1 + lease` (a loaded machine may take long over the checkout).
    let t0 = Instant::now();
    let t1;
    {
        let mut db = open(name);
        seed(
            db.as_mut(),
            &[
                ("http://a.test/", 0.9),
                ("http://b.test/", 0.8),
                ("http://c.test/", 0.7),
            ],
        );
        let work = db.checkout("doomed", 2, lease).unwrap();
        t1 = Instant::now();
        let links = vec![
            url("http://d.test/", 0.6, Some(work[0].oid), None),
            url("http://a.test/more", 0.5, Some(work[0].oid), None),
        ];
        db.record(&[fetched(work[0].oid, 0.9, "a", links)]).unwrap();
    } // the crash: no release, no give-back
    let mut db = open(name);
    // A back-end of one process (SQLite) ends every lease when it opens: nothing to wait out.
    let kept = !db.held_hosts("doomed").unwrap().is_empty();
    let mut before = urls(db.as_mut(), "heir", 10, LONG);
    if kept && t0.elapsed() < lease {
        // a.test is idle (its page recorded), b.test busy with the dead worker's URL.
        before.sort();
        let want = ["http://a.test/more", "http://c.test/", "http://d.test/"];
        assert_eq!(before, want, "b.test's URL in flight was taken");
    }
    std::thread::sleep((lease + Duration::from_millis(100)).saturating_sub(t1.elapsed()));
    db.expire_leases().unwrap();
    let mut left = urls(db.as_mut(), "heir", 10, LONG);
    left.extend(before);
    left.sort();
    let want = [
        "http://a.test/more",
        "http://b.test/",
        "http://c.test/",
        "http://d.test/",
    ];
    assert_eq!(left, want);
    assert_eq!(db.fetched_urls().unwrap(), ["http://a.test/"]);
    assert!(db.held_hosts("doomed").unwrap().is_empty());
}
