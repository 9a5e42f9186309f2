//! The frontier (focused-crawling-1999 §4.1): unvisited rows of `doc`, enqueued with the best
//! score over their parents and checked out in index order (num_tries asc, relevance desc,
//! priority asc, rnd), never sorted at selection time.

use super::features::FeatureDict;
use super::seen::{Caches, Known};
use super::url_key::url_key;
use super::{now, ApprenticeEvidence, DocStatus, NewUrl, PageId, Result, Store, Work};
use rusqlite::{params, CachedStatement, Connection, OptionalExtension};

/// The statements enqueuing runs for each link, prepared once per transaction (looking a
/// cached statement up by its SQL for every link was 1-2% of the crawler's CPU).
pub(super) struct Enqueue<'t> {
    raise: CachedStatement<'t>,
    find: CachedStatement<'t>,
    insert: CachedStatement<'t>,
    link: CachedStatement<'t>,
    /// A remembered row confirmed (`seen::CONFIRM`).
    confirm: CachedStatement<'t>,
    /// The links' feature dictionary (values new to it are stored with the link).
    pub(super) features: &'t mut FeatureDict,
    /// Dictionary values given out for the link being stored.
    added: Vec<(u32, u32)>,
}

impl<'t> Enqueue<'t> {
    /// The statements, prepared on `conn` (a transaction's), and the feature dictionary as
    /// the database holds it (values of an undone transaction forgotten).
    pub(super) fn new(conn: &'t Connection, features: &'t mut FeatureDict) -> Result<Self> {
        features.sync(conn)?;
        Ok(Enqueue {
            raise: conn.prepare_cached(
                "UPDATE doc SET relevance = max(relevance, ?2) WHERE oid = ?1 AND status = 0",
            )?,
            // A URL's row: its key narrows, its text decides (`url_key`).
            find: conn.prepare_cached(
                "SELECT oid, status, relevance FROM doc WHERE rnd = ?1 AND url = ?2",
            )?,
            insert: conn.prepare_cached(
                "INSERT INTO doc(url, sid, priority, relevance, depth, rnd)
                 VALUES(?1, ?2, ?3, ?4, ?5, ?6) RETURNING oid",
            )?,
            link: conn.prepare_cached(
                "INSERT OR IGNORE INTO link(oid_src, oid_dst, sid_src, sid_dst, anchor, features, weight)
                 VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?,
            confirm: conn.prepare_cached(super::seen::CONFIRM)?,
            features,
            added: Vec::new(),
        })
    }

    /// The row of `u`, its frontier score raised to `u`'s while unvisited, inserted if new.
    fn upsert(&mut self, u: &NewUrl, sid: i64, crawled: i64) -> Result<Known> {
        let key = url_key(&u.url);
        let found: Option<(i64, DocStatus, f64)> = self
            .find
            .query_row(params![key, u.url], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .optional()?;
        Ok(match found {
            Some((oid, status, relevance)) => {
                let unvisited = status == DocStatus::Unvisited;
                if unvisited && u.score > relevance {
                    self.raise.execute(params![oid, u.score])?;
                }
                Known {
                    oid,
                    fetched: status == DocStatus::Fetched,
                    relevance: if unvisited {
                        relevance.max(u.score)
                    } else {
                        relevance
                    },
                }
            }
            None => {
                let oid = self
                    .insert
                    .query_row(params![u.url, sid, crawled, u.score, u.depth, key], |r| {
                        r.get(0)
                    })?;
                Known {
                    oid,
                    fetched: false,
                    relevance: u.score,
                }
            }
        })
    }
}

/// Puts a URL in the frontier (relevance: the max over its parents while unvisited) and records
/// the link that led to it.
pub(super) fn enqueue(
    tx: &rusqlite::Transaction<'_>,
    st: &mut Enqueue<'_>,
    caches: &mut Caches,
    u: &NewUrl,
    src: Option<(i64, i64)>,
    instances: &mut Vec<ApprenticeEvidence>,
) -> Result<()> {
    let (sid, crawled) = caches.server(tx, &u.host)?;
    let known = match caches.row(&mut st.confirm, &u.url)? {
        Some(k) => {
            // A URL seen before: skip the URL index unless its frontier score must rise.
            if !k.fetched && u.score > k.relevance {
                st.raise.execute(params![k.oid, u.score])?;
                let k = Known {
                    relevance: u.score,
                    ..k
                };
                caches.remember(&u.url, k);
                k
            } else {
                k
            }
        }
        None => {
            let k = st.upsert(u, sid, crawled)?;
            caches.remember(&u.url, k);
            k
        }
    };
    if let (Some((oid_src, sid_src)), Some((_, anchor))) = (src, &u.via) {
        st.added.clear();
        let blob = (u.features.as_deref()).map(|f| st.features.encode(f, &mut st.added));
        let fresh = st.link.execute(params![
            oid_src, known.oid, sid_src, sid, anchor, blob, u.weight
        ])?;
        // A link already recorded keeps its blob, whose values are all stored: values first
        // met in this one must be stored too (the dictionary never has gaps).
        super::features::store_added(tx, &st.added)?;
        // The target is already fetched: the critic's verdict is known, train on it now.
        if let (1, true, Some(f)) = (fresh, known.fetched, &u.features) {
            instances.push((f.clone(), known.relevance));
        }
    }
    Ok(())
}

/// A checked-out URL from a row of (oid, url, depth, relevance, num_tries).
pub(super) fn work_row(r: &rusqlite::Row<'_>, revisit: bool) -> rusqlite::Result<Work> {
    Ok(Work {
        oid: r.get(0)?,
        url: r.get(1)?,
        depth: r.get(2)?,
        score: r.get(3)?,
        tries: r.get(4)?,
        revisit,
    })
}

impl Store {
    /// Adds seed URLs to the frontier.
    pub fn add_seeds(&mut self, seeds: &[NewUrl]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut st = Enqueue::new(&tx, &mut self.features)?;
            for s in seeds {
                enqueue(&tx, &mut st, &mut self.caches, s, None, &mut Vec::new())?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// The seed URLs (depth 0) ever given to this crawl: their hosts may be private.
    pub fn seed_urls(&self) -> Result<Vec<String>> {
        let mut st = self.conn.prepare("SELECT url FROM doc WHERE depth = 0")?;
        let urls: rusqlite::Result<Vec<String>> = st.query_map([], |r| r.get(0))?.collect();
        urls.map_err(Into::into)
    }

    /// Maintenance mode (focused-crawling-1999 §3): checks out up to `n` fetched pages not
    /// fetched for `min_age` seconds, best hubs first, then by relevance, then oldest first;
    /// their `fetched_at` moves to now so they are not handed out again meanwhile.
    pub fn checkout_revisits(&mut self, n: usize, min_age: f64) -> Result<Vec<Work>> {
        let tx = self.conn.transaction()?;
        let work: Vec<Work> = {
            let mut st = tx.prepare_cached(
                "SELECT d.oid, d.url, d.depth, d.relevance, d.num_tries FROM doc d LEFT JOIN hub h ON h.oid = d.oid
                 WHERE d.status = 2 AND d.fetched_at < ?2
                 ORDER BY coalesce(h.score, 0) DESC, d.relevance DESC, d.fetched_at LIMIT ?1",
            )?;
            let rows = st.query_map(params![n as i64, now() - min_age], |r| work_row(r, true))?;
            rows.collect::<std::result::Result<_, _>>()?
        };
        {
            let mut up = tx.prepare_cached("UPDATE doc SET fetched_at = ?2 WHERE oid = ?1")?;
            for w in &work {
                up.execute(params![w.oid, now()])?;
            }
        }
        tx.commit()?;
        Ok(work)
    }

    /// Checks out up to `n` frontier URLs in frontier order, marking them in flight: the
    /// one-process crawl's worker, leasing every host it meets ([`super::lease`]).
    pub fn checkout(&mut self, n: usize) -> Result<Vec<Work>> {
        self.checkout_leased(super::LOCAL_WORKER, n, super::LEASE)
    }

    /// Returns checked-out rows that were not recorded (a stop, a deferral) to the frontier,
    /// their tries unspent.
    pub fn release(&mut self, oids: &[PageId]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut up =
                tx.prepare_cached("UPDATE doc SET status = ?1 WHERE oid = ?2 AND status = ?3")?;
            for oid in oids {
                up.execute(params![DocStatus::Unvisited, oid, DocStatus::InFlight])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Puts every failed URL back in the frontier with its tries reset (after the cause, say a
    /// wrong proxy, was fixed); returns how many.
    pub fn retry_failed(&mut self) -> Result<usize> {
        Ok(self.conn.execute(
            "UPDATE doc SET status = ?1, num_tries = 0, error = NULL WHERE status = ?2",
            params![DocStatus::Unvisited, DocStatus::Failed],
        )?)
    }

    /// Number of frontier rows (a few seconds old when counting them is costly: see
    /// `seen::FrontierCount`).
    pub fn frontier_len(&self) -> Result<i64> {
        self.caches.frontier.get(|| {
            Ok(self
                .conn
                .query_row("SELECT count(*) FROM doc WHERE status = 0", [], |r| {
                    r.get(0)
                })?)
        })
    }
}
