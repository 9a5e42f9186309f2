//! Many worker processes share one crawl on a real PostgreSQL server (scripts/pg-cluster.sh;
//! `FORAGER_TEST_PG`).
//! - Three `forager crawl --db postgres://...` processes crawl the generated web and one is
//!   killed with SIGKILL mid-crawl. Its URLs in flight stay leased to it until its lease lapses
//!   (made to lapse here rather than waited for): the survivors do not fetch them meanwhile,
//!   and wait for them, then take them over: nothing fetched is lost, nothing is recorded
//!   twice, and the pages fetched are the one-process crawl's.
//! - A `forager crawl` takes over the hosts another live worker holds with nothing in flight
//!   (a held host follows the frontier's head), leaves the URLs that worker has in flight and
//!   waits for them (it does not end with "no links left"), and crawls them once that lease
//!   lapses.

use forager::store::postgres::{testing, PgStore};
use forager::store::CrawlDb;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{forager, run, tmp};

/// The calendar spider trap's host: the per-host cap stops it, at pages that depend on fetch
/// order, so it is left out of the comparison.
const TRAP: &str = "http://events-calendar.test/";

/// `forager crawl` of the astronomy task of `web` into `db`, to the end of the web.
fn crawl(web: &Path, db: &str) -> Command {
    let mut c = forager();
    c.args([
        "crawl",
        "--task",
        "astronomy",
        "--max-pages-per-host",
        "100",
    ])
    .args(["--concurrency", "8", "--web"])
    .arg(web)
    .args(["--db", db]);
    c
}

/// The fetched URLs, the trap's left out.
fn without_trap(urls: Vec<String>) -> BTreeSet<String> {
    urls.into_iter().filter(|u| !u.starts_with(TRAP)).collect()
}

#[test]
#[allow(clippy::too_many_lines)] // one scenario, read top to bottom
fn a_worker_killed_mid_crawl_loses_nothing_and_its_hosts_are_crawled_after_expiry() {
    let Some(server) = testing::server() else {
        return;
    };
    let dir = tmp("postgres-workers");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    let reference = dir.join("one.db");
    run(&mut crawl(&web, reference.to_str().unwrap()));
    let want = without_trap(
        forager::store::Store::open(&reference)
            .unwrap()
            .fetched_urls()
            .unwrap(),
    );
    assert!(want.len() > 1000, "the generated web: {}", want.len());

    let db = testing::TestDb::create(&server, "workers");
    let err = |i: usize| dir.join(format!("worker{i}.err"));
    let mut workers: Vec<_> = (0..3)
        .map(|i| {
            crawl(&web, db.url())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(err(i)).unwrap())
                .spawn()
                .unwrap()
        })
        .collect();
    let store = PgStore::open(db.url()).unwrap();
    // Killed mid-crawl (past 100 pages) with URLs in flight.
    let (doomed, name) = first_holding_work(&workers, db.url(), &store);
    let mut dead = workers.remove(doomed);
    dead.kill().unwrap(); // SIGKILL: no release, no give-back
    dead.wait().unwrap();
    let at_kill = store.fetched().unwrap();
    let (hosts, _, in_flight) = testing::held_by(db.url(), &name);
    // The survivors do not take URLs in flight under a lease that has not lapsed: they wait
    // for them (its idle hosts they may take over).
    std::thread::sleep(Duration::from_secs(2));
    let (still, left, stuck) = testing::held_by(db.url(), &name);
    let waiting = (workers.iter_mut())
        .map(|w| w.try_wait().unwrap().is_none())
        .filter(|&running| running)
        .count();
    let before = store.fetched().unwrap();
    testing::lapse_lease(db.url(), &name);
    for (i, w) in workers.iter_mut().enumerate() {
        let ok = w.wait().unwrap().success();
        let i = if i >= doomed { i + 1 } else { i }; // its stderr file's number
        assert!(
            ok,
            "worker {i}: {}",
            std::fs::read_to_string(err(i)).unwrap()
        );
    }
    let log = store.fetched_urls().unwrap();
    let got = without_trap(log.clone());
    eprintln!(
        "killed with {at_kill} pages fetched in all, holding {hosts} hosts and {in_flight} URLs \
         in flight; 2 s later {waiting} survivors ran, {before} pages fetched, the dead \
         worker's {still} hosts still leased with {left} frontier and {stuck} in-flight URLs; \
         after its lease lapsed the survivors ended at {} pages",
        log.len()
    );
    assert!(in_flight > 0, "the killed worker had nothing in flight");
    assert_eq!(
        stuck, in_flight,
        "a URL in flight under a live lease was taken"
    );
    // With no politeness gap (`--web`), its hosts follow the frontier's head, busy or not:
    // its URLs in flight stay its own (above), not their hosts.
    assert!(
        still <= hosts,
        "the dead worker gained hosts: {still} of {hosts}"
    );
    assert_eq!(
        waiting,
        workers.len(),
        "a survivor ended with URLs still in flight under a lease"
    );
    let missing: Vec<_> = want.difference(&got).take(5).collect();
    let extra: Vec<_> = got.difference(&want).take(5).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{} vs {} pages; not fetched {missing:?}; fetched only here {extra:?}",
        got.len(),
        want.len()
    );
    assert_eq!(store.frontier_len().unwrap(), 0);
    assert_eq!(testing::in_flight(db.url()), 0, "a URL left in flight");
    assert_eq!(testing::leased_hosts(db.url()), 0, "a host left leased");
    assert_eq!(
        testing::recorded_twice(db.url()),
        0,
        "a page recorded twice"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[allow(clippy::too_many_lines)] // one scenario, read top to bottom
fn a_crawl_takes_over_idle_held_hosts_and_waits_for_urls_in_flight_until_their_lease_lapses() {
    let Some(server) = testing::server() else {
        return;
    };
    let dir = tmp("postgres-wait");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    let db = testing::TestDb::create(&server, "wait");
    // A first run lays the crawl out: its model, its seeds and a few pages.
    run(crawl(&web, db.url()).args(["--pages", "5"]));
    let mut store = PgStore::open(db.url()).unwrap();
    // Another worker (never renewing) has the frontier's best URLs in flight, and holds
    // every other host with pending URLs, idle.
    let flying = store
        .checkout("ghost", 10, Duration::from_secs(3600))
        .unwrap();
    assert!(!flying.is_empty(), "no URL to check out");
    let idle = store
        .claim_hosts("ghost", 100_000, Duration::from_secs(3600))
        .unwrap();
    assert!(!idle.is_empty(), "no host with pending URLs to hold idle");
    let before = store.fetched().unwrap();
    let log = dir.join("crawl.err");
    let mut c = crawl(&web, db.url())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let said = || std::fs::read_to_string(&log).unwrap_or_default();
    // The crawl takes the held hosts over and crawls until only the ghost's URLs in flight
    // are left.
    let t0 = Instant::now();
    let (mut last, mut steady) = (before, Instant::now());
    while steady.elapsed() < Duration::from_secs(3) {
        assert!(c.try_wait().unwrap().is_none(), "{}", said());
        assert!(
            t0.elapsed() < Duration::from_secs(180),
            "the crawl never settled: {}",
            said()
        );
        std::thread::sleep(Duration::from_millis(200));
        let now = store.fetched().unwrap();
        if now != last || testing::worker_of(db.url(), c.id()).is_none() {
            (last, steady) = (now, Instant::now());
        }
    }
    assert!(
        last > before + 100,
        "idle held hosts were not taken over: {before} pages, then {last}"
    );
    // Its rounds (one a second while it waits) all work as one worker: `forager status`
    // lists it once, not once per round.
    assert_eq!(
        testing::workers_of(db.url(), c.id()).len(),
        1,
        "worker rows of the waiting crawl"
    );
    // With no politeness gap (`--web`) its busy hosts may be taken over too: what stays the
    // ghost's is its URLs in flight.
    assert_eq!(
        testing::held_by(db.url(), "ghost").2,
        flying.len() as i64,
        "a URL in flight under a live lease was taken"
    );
    let fetched: BTreeSet<String> = store.fetched_urls().unwrap().into_iter().collect();
    assert!(
        flying.iter().all(|w| !fetched.contains(&w.url)),
        "a URL in flight elsewhere was fetched"
    );
    // The other worker never renews: once its lease lapses, the crawl takes its URLs on.
    testing::lapse_lease(db.url(), "ghost");
    assert!(c.wait().unwrap().success(), "{}", said());
    let fetched: BTreeSet<String> = store.fetched_urls().unwrap().into_iter().collect();
    assert!(
        flying.iter().any(|w| fetched.contains(&w.url)),
        "URLs back from the lapsed lease were not crawled: {}",
        said()
    );
    assert_eq!(store.frontier_len().unwrap(), 0);
    assert_eq!(testing::leased_hosts(db.url()), 0, "a host left leased");
    assert_eq!(testing::in_flight(db.url()), 0, "a URL left in flight");
    assert_eq!(
        testing::recorded_twice(db.url()),
        0,
        "a page recorded twice"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn workers_given_pages_stop_when_the_crawl_has_that_many_not_each_its_own() {
    let Some(server) = testing::server() else {
        return;
    };
    let dir = tmp("postgres-pages");
    let (mut web, proxy, _) = common::host::serve_generated_web(&dir);
    let db = testing::TestDb::create(&server, "pages");
    // The crawl's model and seeds, then three workers started together, each told 150 pages
    // (a 0.2 s gap per host, so that the crawl lasts until all three have joined: with none the
    // first could fetch them all alone).
    run(crawl(&dir.join("web"), db.url()).args(["--pages", "0"]));
    let (pages, workers, concurrency) = (150, 3, 4);
    let err = |i: usize| dir.join(format!("worker{i}.err"));
    let children: Vec<_> = (0..workers)
        .map(|i| {
            forager()
                .args(["worker", "--db", db.url(), "--name", &format!("w{i}")])
                .args(["--pages", &pages.to_string(), "--proxy", &proxy])
                .args(["--delay", "0.2", "--concurrency", &concurrency.to_string()])
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(err(i)).unwrap())
                .spawn()
                .unwrap()
        })
        .collect();
    for (i, mut c) in children.into_iter().enumerate() {
        let ok = c.wait().unwrap().success();
        assert!(
            ok,
            "worker {i}: {}",
            std::fs::read_to_string(err(i)).unwrap()
        );
    }
    let _ = web.kill();
    let _ = web.wait();
    let fetched = PgStore::open(db.url()).unwrap().fetched().unwrap();
    // Each worker may finish what it had checked out when the crawl reached its count (its
    // look-ahead: twice its fetches in flight, topped up once while it records). Counted as
    // each worker's own pages since it joined, they fetched 260-312 here.
    let slack = workers * concurrency * 4;
    assert!(
        (pages..=pages + slack).contains(&(fetched as usize)),
        "{workers} workers told --pages {pages} fetched {fetched} pages in all"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Once the crawl has fetched 100 pages, the first of `workers` found with URLs in flight,
/// and its worker name.
fn first_holding_work(
    workers: &[std::process::Child],
    url: &str,
    store: &PgStore,
) -> (usize, String) {
    let t0 = Instant::now();
    loop {
        assert!(t0.elapsed() < Duration::from_secs(120), "no worker crawls");
        let under_way = store.fetched().unwrap() >= 100;
        let holding = (workers.iter().enumerate())
            .filter(|_| under_way)
            .find_map(|(i, w)| {
                let (name, _) = testing::worker_of(url, w.id())?;
                (testing::held_by(url, &name).2 > 0).then_some((i, name))
            });
        match holding {
            Some(found) => return found,
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}
