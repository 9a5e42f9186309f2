//! Re-judging a crawl when its classifier changes (the background learned from the crawl, or
//! a user's "not relevant" mark): the store pages out fetched texts and stores the verdicts
//! the crawl gives back; re-scoring the frontier from them is the policy's
//! (`crawl::policy::rules::rescored`).

use super::{decompress_text, DocStatus, PageId, PageText, Result, Store};
use rusqlite::params;

/// A fetched page's new verdict: (R(d), ln R(d), best leaf id).
pub type Verdict = (f64, f64, i64);

impl Store {
    /// A page of fetched pages with stored text, in row order after `after`: (row id, URL,
    /// main text). What re-judging and background learning read, a page at a time.
    pub fn fetched_texts(&self, after: Option<PageId>, limit: usize) -> Result<Vec<PageText>> {
        fetched_texts_of(&self.conn, after, limit)
    }

    /// Stores new verdicts of fetched pages (after a re-judge), in one transaction.
    pub fn save_verdicts(&mut self, verdicts: &[(PageId, Verdict)]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut up = tx.prepare_cached(
                "UPDATE doc SET relevance = ?2, log_relevance = ?3, cid = ?4
                 WHERE oid = ?1 AND status = ?5",
            )?;
            for (oid, (r, log_r, cid)) in verdicts {
                up.execute(params![oid, r, log_r, cid, DocStatus::Fetched])?;
            }
        }
        tx.commit()?;
        self.caches.rows_changed();
        Ok(())
    }
}

/// A page of fetched pages with stored text of the database on `conn`, in row order after
/// `after` (read-only connections too).
pub(super) fn fetched_texts_of(
    conn: &rusqlite::Connection,
    after: Option<PageId>,
    limit: usize,
) -> Result<Vec<PageText>> {
    let mut st = conn.prepare_cached(
        "SELECT oid, url, text FROM doc WHERE oid > ?1 AND status = ?2 AND text IS NOT NULL
             ORDER BY oid LIMIT ?3",
    )?;
    let after = after.map_or(i64::MIN, PageId::raw);
    let mut rows = st.query(params![after, DocStatus::Fetched, limit as i64])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let blob: Vec<u8> = r.get(2)?;
        out.push(PageText {
            oid: r.get(0)?,
            url: r.get(1)?,
            text: decompress_text(&blob),
        });
    }
    Ok(out)
}

/// The stored main text of the fetched page at `url` (read-only connections too), if any: what
/// a "not relevant" mark learns from when the browser does not send the page.
pub fn fetched_text_of(conn: &rusqlite::Connection, url: &str) -> Result<Option<String>> {
    use rusqlite::OptionalExtension;
    let blob: Option<Vec<u8>> = conn
        .query_row(
            "SELECT text FROM doc WHERE rnd = ?3 AND url = ?1 AND status = ?2 AND text IS NOT NULL",
            params![url, DocStatus::Fetched, super::url_key::url_key(url)],
            |r| r.get(0),
        )
        .optional()?;
    Ok(blob.and_then(|b| decompress_text(&b)))
}

/// A sample of fetched pages' (URL, text) that does not depend on fetch order: the `max`
/// pages with the smallest URL hashes, holding only `max` texts in memory. The background of
/// an open-world crawl, and the report's confidence, are learned from it.
pub struct TextSample {
    max: usize,
    heap: std::collections::BinaryHeap<(u64, String, String)>,
}

impl TextSample {
    /// An empty sample of at most `max` pages.
    pub fn new(max: usize) -> Self {
        TextSample {
            max,
            heap: Default::default(),
        }
    }

    /// Offers one page; it stays if its URL hash is among the `max` smallest so far.
    pub fn offer(&mut self, url: &str, text: &str) {
        let h = super::fnv64(url);
        if self.heap.len() < self.max {
            self.heap.push((h, url.to_owned(), text.to_owned()));
        } else if self.heap.peek().is_some_and(|top| h < top.0) {
            self.heap.pop();
            self.heap.push((h, url.to_owned(), text.to_owned()));
        }
    }

    /// The sampled (URL, text) pairs.
    pub fn into_pages(self) -> Vec<(String, String)> {
        self.heap.into_iter().map(|(_, u, t)| (u, t)).collect()
    }
}
