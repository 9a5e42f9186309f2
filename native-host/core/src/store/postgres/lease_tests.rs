//! The claim policy on a real server: a worker takes only from the crawl's head, and a host
//! its holder leaves idle goes to another worker only once offered and its politeness gap past.

use super::super::testing::{self, TestDb};
use super::super::PgStore;
use crate::store::contract::{fetched, url};
use crate::store::CrawlDb;
use std::time::Duration;

const LEASE: Duration = Duration::from_secs(60);

/// A door on `db` whose crawl waits `gap` between two requests to one host.
fn door(db: &TestDb, gap: Duration) -> PgStore {
    let mut s = PgStore::open(db.url()).unwrap();
    s.set_politeness(gap);
    s
}

/// Seeds `(url, score)` pairs.
fn seed(s: &mut PgStore, seeds: &[(&str, f64)]) {
    let seeds: Vec<_> = seeds.iter().map(|(u, r)| url(u, *r, None, None)).collect();
    s.add_seeds(&seeds).unwrap();
}

/// The URLs `worker` checks out, up to `n`, sorted.
fn urls(s: &mut PgStore, worker: &str, n: usize) -> Vec<String> {
    let mut v: Vec<String> = (s.checkout(worker, n, LEASE).unwrap().into_iter())
        .map(|w| w.url)
        .collect();
    v.sort();
    v
}

/// Records the page `u` (in flight) as fetched, with no links.
fn fetch(s: &mut PgStore, u: &str) {
    let sql = "SELECT oid FROM doc WHERE url = $1";
    let oid = s.with(|c| Ok(c.query_one(sql, &[&u])?.get::<_, i64>(0)));
    let oid = crate::store::PageId::from_raw(oid.unwrap());
    s.record(&[fetched(oid, 0.5, "a page", vec![])]).unwrap();
}

#[test]
fn a_worker_takes_only_urls_in_the_crawls_head() {
    let Some(server) = testing::server() else {
        return;
    };
    let db = TestDb::create(&server, "head");
    let (mut s1, mut s2) = (door(&db, Duration::ZERO), door(&db, Duration::ZERO));
    let rich: Vec<String> = (1..=6).map(|i| format!("http://rich.test/{i}")).collect();
    let mut seeds: Vec<(&str, f64)> = rich.iter().map(|u| (u.as_str(), 0.9)).collect();
    seeds.extend([("http://poor.test/", 0.1), ("http://other.test/", 0.1)]);
    seed(&mut s1, &seeds);
    assert_eq!(urls(&mut s1, "w1", 2).len(), 2, "w1 takes two of rich.test");
    // The best 2 pending are on w1's host: w2 waits rather than take weaker ones.
    assert!(
        urls(&mut s2, "w2", 2).is_empty(),
        "nothing of the head is free"
    );
    // Asking for 6, its head reaches the weak hosts.
    let got = urls(&mut s2, "w2", 6);
    assert_eq!(got, ["http://other.test/", "http://poor.test/"]);
    assert_eq!(s2.held_hosts("w2").unwrap(), ["other.test", "poor.test"]);
}

#[test]
fn a_host_left_idle_is_offered_and_taken_over_after_the_politeness_gap() {
    for (gap, taken) in [(Duration::ZERO, true), (Duration::from_secs(600), false)] {
        let Some(server) = testing::server() else {
            return;
        };
        let db = TestDb::create(&server, "offers");
        let (mut s1, mut s2) = (door(&db, gap), door(&db, gap));
        seed(
            &mut s1,
            &[
                ("http://a.test/1", 0.9),
                ("http://a.test/2", 0.5),
                ("http://b.test/1", 0.8),
                ("http://b.test/2", 0.7),
            ],
        );
        assert_eq!(urls(&mut s1, "w1", 1), ["http://a.test/1"]);
        fetch(&mut s1, "http://a.test/1");
        // w1 goes on with b.test; a.test, idle in its hands, is offered.
        assert_eq!(urls(&mut s1, "w1", 1), ["http://b.test/1"]);
        // w2 never gets b.test (in flight at w1); a.test once the gap is past.
        let got = urls(&mut s2, "w2", 2);
        if taken {
            assert_eq!(got, ["http://a.test/2"], "gap {gap:?}");
            assert_eq!(s2.held_hosts("w2").unwrap(), ["a.test"]);
            assert_eq!(s1.held_hosts("w1").unwrap(), ["b.test"]);
        } else {
            assert!(got.is_empty(), "gap {gap:?}: {got:?}");
            // Its holder takes it up again and withdraws the offer.
            assert_eq!(
                urls(&mut s1, "w1", 2),
                ["http://a.test/2", "http://b.test/2"]
            );
            let offered = testing::number(
                db.url(),
                "SELECT count(*) FROM server WHERE offered_at IS NOT NULL",
            );
            assert_eq!(offered, 0);
            assert_eq!(s1.held_hosts("w1").unwrap(), ["a.test", "b.test"]);
        }
    }
}
