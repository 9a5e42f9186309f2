//! The store door's contract: what the crawl relies on from any [`CrawlDb`] back-end, written
//! once as plain functions over `&mut dyn CrawlDb` and run against every back-end (the SQLite
//! store's run is at the end of this file). Each function panics on a broken promise.

use super::{CrawlDb, DocStatus, NewUrl, Outcome, PageId, Work, PAGE};
use std::time::Duration;

mod lease;
mod more;
mod search;

pub use lease::{
    a_crash_mid_checkout_loses_nothing, a_lapsed_lease_returns_hosts_and_in_flight_urls,
    given_back_hosts_are_free_and_their_in_flight_urls_return,
    held_hosts_follow_the_frontier_head_unless_busy,
    leased_work_is_pending_or_in_flight_on_held_hosts,
};
pub use more::{
    counts_and_the_fetch_log_follow_the_record, error_counts_break_ties_by_name,
    failed_urls_return_on_retry, host_slots_and_the_model_are_kept, revisits_refresh_fetched_pages,
    the_distillation_is_stored_and_boosts_hub_neighbours,
};
#[cfg(test)]
pub(crate) use search::PAGES as SEARCH_PAGES;
pub use search::{
    a_changed_revisit_replaces_the_index_entry_and_is_news, accents_do_not_matter_to_search,
    search_finds_recorded_pages_and_ranks_relevant_ones_higher,
};

/// The worker the single-worker functions check out as.
const W: &str = "w1";

/// A lease no test outlives.
const LONG: Duration = Duration::from_secs(600);

/// Checks out up to `n` URLs as the one worker [`W`].
fn co(db: &mut dyn CrawlDb, n: usize) -> Vec<Work> {
    db.checkout(W, n, LONG).expect("checkout")
}

/// A URL at `depth` with `score`, found on `via` (row id) when given.
pub(crate) fn url(u: &str, score: f64, via: Option<PageId>, features: Option<Vec<u32>>) -> NewUrl {
    let parsed = url::Url::parse(u).expect("test URL");
    NewUrl {
        host: parsed.host_str().unwrap_or("").to_owned(),
        url: parsed.to_string(),
        score,
        depth: i64::from(via.is_some()),
        via: via.map(|oid| (oid, "anchor".to_owned())),
        features,
        weight: 1.0,
    }
}

/// A fetched page's outcome with `relevance`, `text` and `links`.
pub(crate) fn fetched(oid: PageId, relevance: f64, text: &str, links: Vec<NewUrl>) -> Outcome {
    Outcome {
        oid,
        status: DocStatus::Fetched,
        relevance,
        text: Some(text.to_owned()),
        links,
        ..Outcome::default()
    }
}

/// Seeds `a.test` and `b.test` and fetches both: a (R 0.8) links to x and y, b (R 0.3) to y
/// and z. Returns the ids of (a, b).
pub(crate) fn two_fetched_parents(db: &mut dyn CrawlDb) -> (PageId, PageId) {
    let seeds = [
        url("http://a.test/", 1.0, None, None),
        url("http://b.test/", 1.0, None, None),
    ];
    db.add_seeds(&seeds).expect("seeds");
    let work = co(db, 10);
    let oid = |u: &str| work.iter().find(|w| w.url == u).expect("checked out").oid;
    let (a, b) = (oid("http://a.test/"), oid("http://b.test/"));
    let links_a = vec![
        url("http://x.test/", 0.8, Some(a), Some(vec![1])),
        url("http://y.test/", 0.8, Some(a), Some(vec![2])),
    ];
    let links_b = vec![
        url("http://y.test/", 0.3, Some(b), Some(vec![3])),
        url("http://z.test/", 0.3, Some(b), None),
    ];
    let batch = [
        fetched(a, 0.8, "page a", links_a),
        fetched(b, 0.3, "page b", links_b),
    ];
    let rec = db.record(&batch).expect("record");
    assert_eq!(rec.fetched.len(), 2);
    (a, b)
}

/// Every link into a frontier URL, a page at a time after the last row read.
pub(crate) fn all_in_links(db: &dyn CrawlDb, limit: usize) -> Vec<super::InLink> {
    let (mut out, mut after) = (Vec::new(), None);
    loop {
        let page = db.frontier_in_links(after, limit).expect("in-links");
        assert!(page.len() <= limit);
        let Some(last) = page.last() else { break };
        after = Some((last.dst, last.src));
        out.extend(page);
    }
    out
}

/// A URL found on several pages keeps the best score (the policy's "keep the maximum"), and
/// paging the links into the frontier by one row or by [`PAGE`] reads the same rows, in
/// target order, with each parent's relevance and the link's features.
pub fn frontier_keeps_the_best_parent_and_pages_its_in_links(db: &mut dyn CrawlDb) {
    let (a, b) = two_fetched_parents(db);
    let rows = all_in_links(db, PAGE);
    assert_eq!(all_in_links(db, 1), rows);
    assert_eq!(rows.len(), 4, "{rows:?}");
    assert!(rows
        .windows(2)
        .all(|w| (w[0].dst, w[0].src) < (w[1].dst, w[1].src)));
    let into_y: Vec<_> = rows
        .iter()
        .filter(|l| l.features != Some(vec![1]))
        .collect();
    let y = into_y
        .iter()
        .find(|l| l.src == b && l.features == Some(vec![3]))
        .expect("b→y");
    assert_eq!(y.dst_score, 0.8, "y keeps a's score over b's");
    assert_eq!(y.src_relevance, Some(0.3));
    assert!(rows.iter().any(|l| l.src == a && l.dst == y.dst));
    assert!(
        rows.iter().any(|l| l.features.is_none()),
        "z's link has no features"
    );
}

/// Scores set by the policy reach unvisited URLs only, and order the next checkout; the
/// frontier's rows are found by URL.
pub fn frontier_scores_are_persisted_for_unvisited_urls_only(db: &mut dyn CrawlDb) {
    let (a, _) = two_fetched_parents(db);
    let rows = all_in_links(db, PAGE);
    let z = rows.iter().find(|l| l.features.is_none()).expect("z").dst;
    let urls = ["http://z.test/", "http://a.test/", "http://none.test/"].map(String::from);
    let ids = db.frontier_ids(&urls).expect("ids");
    assert_eq!(ids, [Some(z), None, None], "only unvisited URLs are found");
    assert_eq!(db.set_frontier_scores(&[(z, 0.95), (a, 0.01)]).unwrap(), 1);
    let next = co(db, 1);
    assert_eq!(next[0].oid, z);
    assert_eq!(next[0].score, 0.95);
}

/// A score swap sets the new score only where the unvisited URL still holds the score it was
/// read with, and a reader of the door's own (the re-score beside the crawl) reads the links
/// into the frontier as the door does, the swap included.
pub fn frontier_scores_swap_only_where_unchanged(db: &mut dyn CrawlDb) {
    let (a, _) = two_fetched_parents(db);
    let rows = all_in_links(db, PAGE);
    let into = |f: Option<Vec<u32>>| rows.iter().find(|l| l.features == f).expect("link").dst;
    let (x, y, z) = (into(Some(vec![1])), into(Some(vec![2])), into(None));
    // x holds 0.8: swapped; z holds 0.3, not 0.9: kept; a is fetched: kept.
    let changes = [(x, 0.8, 0.1), (z, 0.9, 0.95), (a, 0.8, 0.2)];
    assert_eq!(db.swap_frontier_scores(&changes).unwrap(), 1);
    let order: Vec<(PageId, f64)> = co(db, 3).iter().map(|w| (w.oid, w.score)).collect();
    assert_eq!(order, vec![(y, 0.8), (z, 0.3), (x, 0.1)]);
    db.release(&[x, y, z]).unwrap();
    if let Some(r) = db.in_link_reader().unwrap() {
        let (mut seen, mut after) = (Vec::new(), None);
        while let Some(last) = r.frontier_in_links(after, 1).unwrap().pop() {
            after = Some((last.dst, last.src));
            seen.push(last);
        }
        assert_eq!(seen, all_in_links(db, PAGE));
        assert!(seen.iter().any(|l| l.dst == x && l.dst_score == 0.1));
    }
}

/// A boost raises the out-links of a fetched page to at least the given score and never
/// lowers one.
pub fn boosts_raise_out_links_to_at_least_the_given_score(db: &mut dyn CrawlDb) {
    two_fetched_parents(db);
    assert_eq!(db.boost_out_links("http://b.test/", 1.5).unwrap(), 2);
    assert_eq!(db.boost_out_links("http://b.test/", 0.5).unwrap(), 2);
    assert_eq!(db.boost_out_links("http://nowhere.test/", 1.5).unwrap(), 0);
    let mut work: Vec<(String, f64)> = (co(db, 3).into_iter()).map(|w| (w.url, w.score)).collect();
    work[..2].sort_by(|p, q| p.0.cmp(&q.0));
    let expected = [
        ("http://y.test/", 1.5),
        ("http://z.test/", 1.5),
        ("http://x.test/", 0.8),
    ];
    let expected: Vec<(String, f64)> = expected.iter().map(|(u, s)| (u.to_string(), *s)).collect();
    assert_eq!(work, expected);
}

/// Fetched pages' texts page out completely, and new verdicts change fetched pages only.
pub fn fetched_texts_page_out_and_verdicts_are_stored(db: &mut dyn CrawlDb) {
    let (a, b) = two_fetched_parents(db);
    let (mut texts, mut after) = (Vec::new(), None);
    loop {
        let page = db.fetched_texts(after, 1).unwrap();
        let Some(last) = page.last() else { break };
        after = Some(last.oid);
        texts.extend(page);
    }
    let got: Vec<(PageId, Option<&str>)> =
        texts.iter().map(|t| (t.oid, t.text.as_deref())).collect();
    assert_eq!(got, vec![(a, Some("page a")), (b, Some("page b"))]);
    let x = all_in_links(db, PAGE)[0].dst;
    db.save_verdicts(&[(a, (0.05, 0.05f64.ln(), 7)), (x, (0.9, 0.9f64.ln(), 7))])
        .unwrap();
    let a_in: Vec<_> = all_in_links(db, PAGE)
        .into_iter()
        .filter(|l| l.src == a)
        .collect();
    assert!(
        a_in.iter().all(|l| l.src_relevance == Some(0.05)),
        "{a_in:?}"
    );
    assert!(
        a_in.iter().all(|l| l.dst_score == 0.8),
        "a frontier URL is not a fetched page"
    );
}

/// A failure the policy sent back to the frontier returns with one more try spent; a final one
/// leaves the frontier and counts as given up.
pub fn a_requeued_failure_spends_a_try_and_a_final_one_is_given_up(db: &mut dyn CrawlDb) {
    db.add_seeds(&[url("http://flaky.test/", 1.0, None, None)])
        .unwrap();
    let w = co(db, 1).remove(0);
    assert_eq!(w.tries, 0);
    let failure = |status| Outcome {
        oid: w.oid,
        status,
        retry: true,
        error: Some("timeout".into()),
        ..Outcome::default()
    };
    db.record(&[failure(DocStatus::Unvisited)]).unwrap();
    assert_eq!(db.frontier_len().unwrap(), 1);
    let again = co(db, 1).remove(0);
    assert_eq!((again.oid, again.tries), (w.oid, 1));
    db.record(&[failure(DocStatus::Failed)]).unwrap();
    assert_eq!(db.frontier_len().unwrap(), 0);
    assert_eq!(db.given_up().unwrap(), 1);
    assert!(co(db, 1).is_empty());
}

/// Checked-out URLs released unfetched return to the frontier with their tries unspent.
pub fn released_work_returns_unspent(db: &mut dyn CrawlDb) {
    db.add_seeds(&[url("http://a.test/", 1.0, None, None)])
        .unwrap();
    let w = co(db, 1).remove(0);
    assert!(co(db, 1).is_empty(), "checked out twice");
    db.release(&[w.oid]).unwrap();
    let again = co(db, 1).remove(0);
    assert_eq!((again.oid, again.tries), (w.oid, 0));
}

/// Link evidence pairs a link's features with its fetched target's R(d), once both are known.
pub fn apprentice_evidence_appears_when_the_target_is_fetched(db: &mut dyn CrawlDb) {
    two_fetched_parents(db);
    assert!(db.apprentice_evidence().unwrap().is_empty());
    let next = co(db, 1).remove(0);
    let rec = db
        .record(&[fetched(next.oid, 0.6, "x or y", vec![])])
        .unwrap();
    let mut evidence = db.apprentice_evidence().unwrap();
    evidence.sort_by(|p, q| p.0.cmp(&q.0));
    let mut recorded = rec.instances;
    recorded.sort_by(|p, q| p.0.cmp(&q.0));
    assert_eq!(evidence, recorded);
    assert!(!evidence.is_empty() && evidence.iter().all(|(_, r)| *r == 0.6));
}

/// One worker alone (the one-process crawl) checks out in the frontier's own order across
/// hosts, a batch at a time, exactly as if there were no leases.
pub fn one_worker_checks_out_in_global_frontier_order(db: &mut dyn CrawlDb) {
    let seeds: Vec<NewUrl> = [
        ("http://a.test/1", 0.3),
        ("http://b.test/1", 0.9),
        ("http://a.test/2", 0.8),
        ("http://c.test/1", 0.5),
        ("http://b.test/2", 0.1),
    ]
    .iter()
    .map(|(u, s)| url(u, *s, None, None))
    .collect();
    db.add_seeds(&seeds).unwrap();
    let mut order: Vec<String> = co(db, 2).into_iter().map(|w| w.url).collect();
    order.extend(co(db, 10).into_iter().map(|w| w.url));
    let expected = [
        "http://b.test/1",
        "http://a.test/2",
        "http://c.test/1",
        "http://a.test/1",
        "http://b.test/2",
    ];
    assert_eq!(order, expected);
    let mut held = db.held_hosts(W).unwrap();
    held.sort();
    assert_eq!(held, ["a.test", "b.test", "c.test"]);
}

/// Runs every contract function on a fresh back-end from `open`: `open(name)` opens the
/// back-end's crawl `name`, empty on first use; opened again with the same name after the
/// first was dropped (a crash), it is the same crawl.
pub fn run_all(open: &mut dyn FnMut(&str) -> Box<dyn CrawlDb>) {
    type Case = (&'static str, fn(&mut dyn CrawlDb));
    let cases: [Case; 19] = [
        (
            "in-links",
            frontier_keeps_the_best_parent_and_pages_its_in_links,
        ),
        (
            "scores",
            frontier_scores_are_persisted_for_unvisited_urls_only,
        ),
        ("swap", frontier_scores_swap_only_where_unchanged),
        ("boosts", boosts_raise_out_links_to_at_least_the_given_score),
        ("texts", fetched_texts_page_out_and_verdicts_are_stored),
        (
            "retries",
            a_requeued_failure_spends_a_try_and_a_final_one_is_given_up,
        ),
        ("release", released_work_returns_unspent),
        (
            "evidence",
            apprentice_evidence_appears_when_the_target_is_fetched,
        ),
        (
            "claim-order",
            held_hosts_follow_the_frontier_head_unless_busy,
        ),
        ("lapse", a_lapsed_lease_returns_hosts_and_in_flight_urls),
        (
            "give-back",
            given_back_hosts_are_free_and_their_in_flight_urls_return,
        ),
        ("counts", counts_and_the_fetch_log_follow_the_record),
        ("retry-failed", failed_urls_return_on_retry),
        ("error-ties", error_counts_break_ties_by_name),
        ("kept", host_slots_and_the_model_are_kept),
        ("revisits", revisits_refresh_fetched_pages),
        (
            "distillation",
            the_distillation_is_stored_and_boosts_hub_neighbours,
        ),
        ("one-worker", one_worker_checks_out_in_global_frontier_order),
        (
            "leased-work",
            leased_work_is_pending_or_in_flight_on_held_hosts,
        ),
    ];
    let search: [Case; 3] = [
        (
            "search",
            search_finds_recorded_pages_and_ranks_relevant_ones_higher,
        ),
        (
            "news",
            a_changed_revisit_replaces_the_index_entry_and_is_news,
        ),
        ("accents", accents_do_not_matter_to_search),
    ];
    for (name, case) in cases.into_iter().chain(search) {
        let mut db = open(name);
        case(db.as_mut());
    }
    a_crash_mid_checkout_loses_nothing(open, "crash");
}

#[cfg(test)]
mod sqlite {
    use crate::store::{CrawlDb, Store};

    #[test]
    fn the_sqlite_store_keeps_the_door_contract() {
        let dir = std::env::temp_dir().join(format!("forager-contract-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        super::run_all(&mut |name| {
            let db = Store::open(&dir.join(format!("{name}.db"))).unwrap();
            Box::new(db) as Box<dyn CrawlDb>
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
}
