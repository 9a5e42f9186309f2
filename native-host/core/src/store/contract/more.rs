//! More of what the crawl relies on: counts and the fetch log, retrying failures, politeness
//! slots kept across runs, maintenance revisits and the distiller's results.

use super::{co, fetched, two_fetched_parents, url, CrawlDb, DocStatus, Outcome};
use crate::distiller::Scores;

/// Counts, the seeds and the fetch log follow what was recorded; fetch numbers are
/// consecutive.
pub fn counts_and_the_fetch_log_follow_the_record(db: &mut dyn CrawlDb) {
    assert_eq!(db.reader().last_fetch_seq().unwrap(), 0);
    two_fetched_parents(db);
    assert_eq!(db.fetched().unwrap(), 2);
    assert_eq!(db.frontier_len().unwrap(), 3);
    assert_eq!(db.given_up().unwrap(), 0);
    assert_eq!(
        db.fetched_urls().unwrap(),
        ["http://a.test/", "http://b.test/"]
    );
    let mut seeds = db.seed_urls().unwrap();
    seeds.sort();
    assert_eq!(seeds, ["http://a.test/", "http://b.test/"]);
    let r = db.reader();
    let pages = r.pages_since(0, 10).unwrap();
    let seqs: Vec<i64> = pages.iter().map(|p| p.seq).collect();
    assert_eq!(seqs, [1, 2]);
    let c = r.counts().unwrap();
    assert_eq!((c.fetched, c.frontier, c.relevant), (2, 3, 1));
    drop(r);
    let next = co(db, 1).remove(0);
    let rec = db.record(&[fetched(next.oid, 0.1, "x", vec![])]).unwrap();
    assert_eq!(rec.fetched[0].seq, 3);
}

/// Failed URLs return to the frontier with their tries reset when the user asks.
pub fn failed_urls_return_on_retry(db: &mut dyn CrawlDb) {
    db.add_seeds(&[url("http://down.test/", 1.0, None, None)])
        .unwrap();
    let w = co(db, 1).remove(0);
    let failed = Outcome {
        oid: w.oid,
        status: DocStatus::Failed,
        error: Some("connect".into()),
        ..Outcome::default()
    };
    db.record(&[failed]).unwrap();
    assert_eq!((db.given_up().unwrap(), db.frontier_len().unwrap()), (1, 0));
    assert_eq!(db.retry_failed().unwrap(), 1);
    let again = co(db, 1).remove(0);
    assert_eq!((again.oid, again.tries), (w.oid, 0));
}

/// Error counts list the most frequent first and break ties by name, the same on every
/// back-end (a report copied between back-ends reads the same).
pub fn error_counts_break_ties_by_name(db: &mut dyn CrawlDb) {
    let hosts = [
        "http://c.test/",
        "http://b.test/",
        "http://a.test/",
        "http://d.test/",
    ];
    let errors = ["zeta", "alpha", "zeta", "mid"];
    for (h, e) in hosts.iter().zip(errors) {
        db.add_seeds(&[url(h, 1.0, None, None)]).unwrap();
        let w = co(db, 1).remove(0);
        let failed = Outcome {
            oid: w.oid,
            status: DocStatus::Failed,
            error: Some(e.into()),
            ..Outcome::default()
        };
        db.record(&[failed]).unwrap();
    }
    let counts = db.reader().errors().unwrap();
    let want = [("zeta", 2), ("alpha", 1), ("mid", 1)].map(|(e, n)| (e.to_string(), n));
    assert_eq!(counts, want);
}

/// Each host's next allowed request is kept for the next start, replaced as a whole.
pub fn host_slots_and_the_model_are_kept(db: &mut dyn CrawlDb) {
    assert!(db.host_slots().unwrap().is_empty());
    assert_eq!(db.reader().model_bytes().unwrap(), None);
    let slots = vec![("a.test".to_owned(), 1.5e9), ("b.test".to_owned(), 2.5e9)];
    db.save_host_slots(&slots).unwrap();
    assert_eq!(db.host_slots().unwrap(), slots);
    db.save_host_slots(&slots[1..]).unwrap();
    assert_eq!(db.host_slots().unwrap(), &slots[1..]);
}

/// A fetched page is handed out again for a revisit once old enough; a changed revisit
/// counts as changed and keeps the page fetched.
pub fn revisits_refresh_fetched_pages(db: &mut dyn CrawlDb) {
    two_fetched_parents(db);
    assert!(db.checkout_revisits(10, 3600.0).unwrap().is_empty());
    std::thread::sleep(std::time::Duration::from_millis(80));
    let old = db.checkout_revisits(10, 0.05).unwrap();
    assert_eq!(old.len(), 2);
    assert!(old.iter().all(|w| w.revisit));
    assert!(
        db.checkout_revisits(10, 0.05).unwrap().is_empty(),
        "handed out twice"
    );
    let changed = Outcome {
        revisit: true,
        content_hash: Some("new".into()),
        ..fetched(old[0].oid, 0.5, "changed", vec![])
    };
    let rec = db.record(&[changed]).unwrap();
    assert_eq!((rec.revisited, rec.changed), (1, 1));
    assert!(rec.fetched.is_empty(), "a revisit is not a new fetch");
    assert_eq!(db.fetched().unwrap(), 2);
}

/// The distiller's scores are stored for the reports, and the best hubs' unvisited
/// neighbours on other servers are raised to the boost.
pub fn the_distillation_is_stored_and_boosts_hub_neighbours(db: &mut dyn CrawlDb) {
    let (a, b) = two_fetched_parents(db);
    let scores = Scores {
        hubs: vec![(a.raw(), 0.9), (b.raw(), 0.1)],
        authorities: vec![(b.raw(), 0.5)],
        iterations: 3,
    };
    db.save_distillation(&scores).unwrap();
    let r = db.reader();
    let hubs = r.ranked(crate::store::Ranking::Hubs, None).unwrap();
    let hub_urls: Vec<&str> = hubs.iter().map(|h| h.url.as_str()).collect();
    assert_eq!(hub_urls, ["http://a.test/", "http://b.test/"]);
    assert!(r.distilled_at().is_some());
    drop(r);
    assert_eq!(db.boost_hub_neighbours(1, 2.0).unwrap(), 2, "a's x and y");
    let first: Vec<f64> = co(db, 2).iter().map(|w| w.score).collect();
    assert_eq!(first, [2.0, 2.0]);
}
