//! What the store remembers of the URLs and hosts it has seen, so that a repeated link skips
//! the URL index and a known host skips the `server` table. The database stays the truth:
//! these are caches in front of it.

use super::Result;
use std::collections::HashMap;

/// What the store remembers of a URL it has seen, so repeated links skip the URL index.
#[derive(Clone, Copy, Debug)]
pub(super) struct Known {
    pub(super) oid: i64,
    /// Fetched (its relevance is then its own R(d)).
    pub(super) fetched: bool,
    /// Its relevance as last written by this store.
    pub(super) relevance: f64,
}

/// URLs remembered at most; past that the memory starts afresh.
const KNOWN_LIMIT: usize = 400_000;

/// In-memory mirrors of the `server` table and of recently seen URLs. Every write through the
/// store keeps them true; writes that change many rows at once (re-scoring, feedback) call
/// [`Caches::rows_changed`].
#[derive(Default)]
pub(super) struct Caches {
    /// host → (sid, pages crawled).
    hosts: HashMap<String, (i64, i64)>,
    known: rustc_hash::FxHashMap<String, Known>,
}

impl Caches {
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
        if let Some(h) = self.hosts.get_mut(host) {
            h.1 += 1;
        }
    }

    /// The row of `url` if this store has seen it (None: ask the URL index).
    pub(super) fn row(
        &mut self,
        _tx: &rusqlite::Transaction<'_>,
        url: &str,
    ) -> Result<Option<Known>> {
        Ok(self.known.get(url).copied())
    }

    /// Remembers the row of `url` as just written.
    pub(super) fn remember(&mut self, url: &str, k: Known) {
        if self.known.len() >= KNOWN_LIMIT {
            self.known.clear();
        }
        self.known.insert(url.to_owned(), k);
    }

    /// Many rows changed at once (re-scoring, feedback): what is remembered of them may be stale.
    pub(super) fn rows_changed(&mut self) {
        self.known.clear();
    }
}
