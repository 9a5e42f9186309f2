//! What the store remembers of the URLs and hosts it has seen, so that a repeated link skips
//! the URL index and a known host skips the `server` table. Both are bounded caches in front
//! of the database, which stays the truth: a URL is remembered by a 64-bit fingerprint of its
//! canonical form (not the string), and a remembered row is confirmed by its oid before use,
//! so neither a fingerprint collision nor an evicted entry can drop or duplicate a URL.

use super::{fnv64, DocStatus, Result};
use rusqlite::{params, OptionalExtension};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A URL's row as the store last confirmed it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Known {
    pub(super) oid: i64,
    /// Fetched (its relevance is then its own R(d)).
    pub(super) fetched: bool,
    /// Its relevance as stored.
    pub(super) relevance: f64,
}

/// URL fingerprints remembered at most: 16 bytes of key and value each (a few MB in all),
/// enough for the links that recur (site menus, hubs); the rest ask the URL index.
pub(super) const URL_CAPACITY: usize = 1 << 18;

/// Hosts remembered at most (a host's row is re-read from `server` after eviction).
pub(super) const HOST_CAPACITY: usize = 1 << 14;

/// A URL's fingerprint: a stable 64-bit hash of its canonical form.
pub(super) type Fingerprint = fn(&str) -> u64;

/// The statement [`Caches::row`] confirms a remembered row with.
pub(super) const CONFIRM: &str = "SELECT url = ?2, status, relevance FROM doc WHERE oid = ?1";

/// Bounded caches of the `server` table and of the oids of recently seen URLs. Every write
/// through the store keeps the host counts true; URL entries are only oids, which no write
/// changes, and are confirmed against the row before use.
pub(super) struct Caches {
    /// host → (sid, pages crawled).
    hosts: quick_cache::unsync::Cache<String, (i64, i64)>,
    /// fingerprint of a canonical URL → oid of its row.
    urls: quick_cache::unsync::Cache<u64, i64>,
    fingerprint: Fingerprint,
    /// The last count of the frontier.
    pub(super) frontier: FrontierCount,
}

impl Default for Caches {
    fn default() -> Self {
        Caches::new(URL_CAPACITY, HOST_CAPACITY, fnv64)
    }
}

impl Caches {
    /// Caches holding at most `urls` URLs and `hosts` hosts, URLs fingerprinted by `fingerprint`.
    pub(super) fn new(urls: usize, hosts: usize, fingerprint: Fingerprint) -> Self {
        Caches {
            hosts: quick_cache::unsync::Cache::new(hosts),
            urls: quick_cache::unsync::Cache::new(urls),
            fingerprint,
            frontier: FrontierCount::default(),
        }
    }

    /// The server id and crawled count of `host`, inserting the server on first sight.
    pub(super) fn server(
        &mut self,
        tx: &rusqlite::Transaction<'_>,
        host: &str,
    ) -> Result<(i64, i64)> {
        if let Some(&v) = self.hosts.get(host) {
            return Ok(v);
        }
        tx.prepare_cached("INSERT OR IGNORE INTO server(host) VALUES(?1)")?
            .execute([host])?;
        let v = tx
            .prepare_cached("SELECT sid, crawled FROM server WHERE host = ?1")?
            .query_row([host], |r| Ok((r.get(0)?, r.get(1)?)))?;
        self.hosts.insert(host.to_owned(), v);
        Ok(v)
    }

    /// One more page of `host` was crawled (the `server` row was updated by the caller).
    pub(super) fn crawled_one(&mut self, host: &str) {
        if let Some(mut h) = self.hosts.get_mut(host) {
            h.1 += 1;
        }
    }

    /// The row of `url` if its fingerprint is remembered and the row at that oid is this URL's
    /// (None: ask the URL index). One read by primary key, cheaper than the URL index.
    /// `confirm` is [`CONFIRM`], prepared.
    pub(super) fn row(
        &mut self,
        confirm: &mut rusqlite::Statement<'_>,
        url: &str,
    ) -> Result<Option<Known>> {
        let Some(&oid) = self.urls.get(&(self.fingerprint)(url)) else {
            return Ok(None);
        };
        let row: Option<(bool, DocStatus, f64)> = confirm
            .query_row(params![oid, url], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?;
        Ok(match row {
            Some((true, status, relevance)) => Some(Known {
                oid,
                fetched: status == DocStatus::Fetched,
                relevance,
            }),
            // Another URL with the same fingerprint, or a row a failed transaction undid.
            _ => None,
        })
    }

    /// Remembers the row of `url`.
    pub(super) fn remember(&mut self, url: &str, k: Known) {
        self.urls.insert((self.fingerprint)(url), k.oid);
    }

    /// Many rows changed at once (re-scoring, feedback). Nothing to forget: the URL cache holds
    /// only oids, and rows are read when used.
    pub(super) fn rows_changed(&mut self) {}

    /// URLs remembered now.
    #[cfg(test)]
    fn urls_len(&self) -> usize {
        self.urls.len()
    }
}

/// A count that took less than this is made afresh every time (exact at the sizes tests and
/// most crawls have: some 100,000 frontier URLs).
const CHEAP_COUNT: Duration = Duration::from_millis(10);

/// A costlier count is made again once this many times its cost has passed since, so that
/// counting takes at most 1/20 of the crawl's time (at 4 million frontier URLs a count takes
/// about 0.4 s, and the crawl asks every second).
const RECOUNT_AFTER_COSTS: u32 = 20;

/// The frontier's size as last counted: `count(*)` over the frontier index grows with it.
#[derive(Default)]
pub(super) struct FrontierCount(Mutex<Option<(i64, Instant, Duration)>>);

impl FrontierCount {
    /// The frontier's size: counted by `count` afresh when due, else as last counted.
    pub(super) fn get(&self, count: impl FnOnce() -> Result<i64>) -> Result<i64> {
        let mut last = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((n, at, cost)) = *last {
            if !recount_due(at, cost, Instant::now()) {
                return Ok(n);
            }
        }
        let t = Instant::now();
        let n = count()?;
        *last = Some((n, Instant::now(), t.elapsed()));
        Ok(n)
    }
}

/// Whether a count made at `at` that took `cost` must be made again at `now`.
fn recount_due(at: Instant, cost: Duration, now: Instant) -> bool {
    cost < CHEAP_COUNT || now.saturating_duration_since(at) >= cost * RECOUNT_AFTER_COSTS
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{temp_db, DocStatus, NewUrl, Outcome, PageId, Store};

    fn url(u: &str, score: f64, via: Option<PageId>) -> NewUrl {
        NewUrl {
            score,
            depth: 1,
            via: via.map(|p| (p, "a".to_owned())),
            ..NewUrl::seed(&url::Url::parse(u).unwrap())
        }
    }

    fn count(st: &Store, sql: &str) -> i64 {
        st.conn().query_row(sql, [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn cheap_counts_are_always_fresh_costly_ones_at_most_a_twentieth_of_the_time() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        assert!(recount_due(t0, Duration::from_millis(2), t0));
        let cost = Duration::from_millis(400);
        assert!(!recount_due(t0, cost, at(7_999)));
        assert!(recount_due(t0, cost, at(8_000)));
        // A cheap count is asked of the database every time.
        let memo = FrontierCount::default();
        let mut asked = 0;
        for _ in 0..3 {
            memo.get(|| {
                asked += 1;
                Ok(5)
            })
            .unwrap();
        }
        assert_eq!(asked, 3);
    }

    /// Every URL has the same fingerprint: only the row check keeps the URLs apart.
    #[test]
    fn a_fingerprint_collision_neither_drops_nor_merges_urls() {
        let path = temp_db("seen", "collide");
        let mut st = Store::open(&path).unwrap();
        st.caches = Caches::new(URL_CAPACITY, HOST_CAPACITY, |_| 7);
        st.add_seeds(&[url("http://a.test/", 1.0, None)]).unwrap();
        let seed = st.checkout(1).unwrap().remove(0);
        let links: Vec<NewUrl> = (0..5)
            .map(|i| {
                url(
                    &format!("http://a.test/p{i}"),
                    0.1 * f64::from(i),
                    Some(seed.oid),
                )
            })
            .collect();
        let page = Outcome {
            oid: seed.oid,
            status: DocStatus::Fetched,
            relevance: 0.9,
            links,
            ..Outcome::default()
        };
        st.record(&[page]).unwrap();
        assert_eq!(count(&st, "SELECT count(*) FROM doc"), 6);
        assert_eq!(count(&st, "SELECT count(*) FROM link"), 5);
        // A link from the fetched page to p3 raises p3 (and only p3) to 0.8.
        let again = st.checkout(1).unwrap().remove(0);
        let raise = Outcome {
            oid: again.oid,
            status: DocStatus::Fetched,
            relevance: 0.8,
            links: vec![url("http://a.test/p3", 0.8, Some(again.oid))],
            ..Outcome::default()
        };
        st.record(&[raise]).unwrap();
        let raised: Vec<(String, f64)> = {
            let mut q = st
                .conn()
                .prepare("SELECT url, relevance FROM doc WHERE status = 0 ORDER BY url")
                .unwrap();
            let rows = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
            rows.map(|r| r.unwrap()).collect()
        };
        let p3 = raised
            .iter()
            .find(|(u, _)| u == "http://a.test/p3")
            .unwrap();
        assert_eq!(p3.1, 0.8, "{raised:?}");
        assert!(
            raised.iter().filter(|(_, r)| *r == 0.8).count() == 1,
            "{raised:?}"
        );
        drop(st);
        let _ = std::fs::remove_file(&path);
    }

    /// A cache far smaller than the crawl: evicted URLs are found by the URL index, never
    /// inserted twice, and the cache stays within its bound.
    #[test]
    fn a_small_cache_stays_bounded_and_never_duplicates_a_url() {
        let path = temp_db("seen", "small");
        let mut st = Store::open(&path).unwrap();
        st.caches = Caches::new(64, 4, fnv64);
        let batch: Vec<NewUrl> = (0..2000)
            .map(|i| url(&format!("http://h{}.test/p{i}", i % 50), 0.5, None))
            .collect();
        st.add_seeds(&batch).unwrap();
        st.add_seeds(&batch).unwrap();
        assert_eq!(count(&st, "SELECT count(*) FROM doc"), 2000);
        assert_eq!(count(&st, "SELECT count(*) FROM server"), 50);
        assert!(
            st.caches.urls_len() <= 64 + 64 / 8,
            "{}",
            st.caches.urls_len()
        );
        drop(st);
        let _ = std::fs::remove_file(&path);
    }
}
