//! Re-judging a crawl when its classifier changes (the background learned from the crawl, or
//! a user's "not relevant" mark): fetched pages get their new R(d), and the frontier is
//! re-scored as the best relevance × link weight over the fetched pages that link to it.

use super::{decompress_text, DocStatus, Result, Store};
use rusqlite::params;

/// A fetched page's new verdict: (R(d), ln R(d), best leaf id).
pub type Verdict = (f64, f64, i64);

/// Frontier scores at or above this were set by the distiller's hub feedback and keep their
/// place when the frontier is re-scored.
const BOOSTED: f64 = 2.0;

impl Store {
    /// Calls `f` with the URL and stored main text of every fetched page.
    pub fn for_each_fetched_text(&self, mut f: impl FnMut(&str, &str)) -> Result<()> {
        super::each_fetched_text::<super::StoreError>(&self.conn, |u, t| {
            f(u, t);
            Ok(())
        })
    }

    /// Re-judges every fetched page with stored text by `judge(url, text)`, then, when `frontier` is
    /// true, re-scores every frontier URL that fetched pages link to (seeds and URLs boosted
    /// by the distiller keep their scores). Returns (pages re-judged, frontier rows updated).
    pub fn rejudge(
        &mut self,
        mut judge: impl FnMut(&str, &str) -> Verdict,
        frontier: bool,
    ) -> Result<(usize, usize)> {
        let tx = self.conn.transaction()?;
        let mut verdicts = Vec::new();
        {
            let mut st = tx
                .prepare("SELECT oid, url, text FROM doc WHERE status = ?1 AND text IS NOT NULL")?;
            let mut rows = st.query([DocStatus::Fetched])?;
            while let Some(r) = rows.next()? {
                let oid: i64 = r.get(0)?;
                let url: String = r.get(1)?;
                let blob: Vec<u8> = r.get(2)?;
                if let Some(text) = decompress_text(&blob) {
                    verdicts.push((oid, judge(&url, &text)));
                }
            }
        }
        {
            let mut up = tx.prepare_cached(
                "UPDATE doc SET relevance = ?2, log_relevance = ?3, cid = ?4 WHERE oid = ?1",
            )?;
            for (oid, (r, log_r, cid)) in &verdicts {
                up.execute(params![oid, r, log_r, cid])?;
            }
        }
        let rescored = if frontier {
            tx.execute(
                "UPDATE doc SET relevance = coalesce((
                   SELECT max(s.relevance * l.weight) FROM link l JOIN doc s ON s.oid = l.oid_src
                   WHERE l.oid_dst = doc.oid AND s.status = ?1), relevance)
                 WHERE status = ?2 AND relevance < ?3
                   AND oid IN (SELECT oid_dst FROM link)",
                params![DocStatus::Fetched, DocStatus::Unvisited, BOOSTED],
            )?
        } else {
            0
        };
        tx.commit()?;
        self.caches.known.clear();
        Ok((verdicts.len(), rescored))
    }
}

/// The stored main text of the fetched page at `url` (read-only connections too), if any: what
/// a "not relevant" mark learns from when the browser does not send the page.
pub fn fetched_text_of(conn: &rusqlite::Connection, url: &str) -> Result<Option<String>> {
    use rusqlite::OptionalExtension;
    let blob: Option<Vec<u8>> = conn
        .query_row(
            "SELECT text FROM doc WHERE url = ?1 AND status = ?2 AND text IS NOT NULL",
            params![url, DocStatus::Fetched],
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
