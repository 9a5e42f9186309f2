//! What is new in a crawl since a time: relevant pages first fetched since, and fetched pages
//! whose content changed on a revisit since (the 1999 paper's maintenance mode, seen by a
//! user). Each page's first fetch and last change are kept in `doc.first_fetched_at` and
//! `doc.changed_at`.

use super::{Result, SqliteReader};
use rusqlite::{params, Connection};
use std::borrow::Borrow;

/// R at or above which a newly fetched page is news (the side panel's "relevant").
pub const NEWS_MIN_RELEVANCE: f64 = 0.5;

/// Adds the columns to a database made before them (nothing is lost: old pages count as
/// first fetched when last fetched, and as never changed).
pub(super) fn migrate(conn: &Connection) -> Result<()> {
    if conn
        .prepare("SELECT first_fetched_at FROM doc LIMIT 0")
        .is_err()
    {
        conn.execute_batch(
            "BEGIN;
             ALTER TABLE doc ADD COLUMN first_fetched_at REAL;
             ALTER TABLE doc ADD COLUMN changed_at REAL;
             UPDATE doc SET first_fetched_at = fetched_at WHERE fetch_seq IS NOT NULL;
             COMMIT;",
        )?;
    }
    // The times are stored after the page's text: without these, a look would read every row.
    conn.execute_batch(
        "CREATE INDEX IF NOT EXISTS doc_first_fetched ON doc(first_fetched_at)
           WHERE first_fetched_at IS NOT NULL;
         CREATE INDEX IF NOT EXISTS doc_changed ON doc(changed_at) WHERE changed_at IS NOT NULL;",
    )?;
    Ok(())
}

/// Why a page is news.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NewsKind {
    /// A relevant page fetched for the first time.
    New,
    /// A fetched page whose content changed on a revisit.
    Changed,
}

/// A page that is new or changed.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct NewsItem {
    /// URL.
    pub url: String,
    /// Title ("" when none).
    pub title: String,
    /// R(d).
    pub relevance: f64,
    /// Path of its best leaf ("" when unclassified).
    pub best_leaf: String,
    /// New or changed.
    pub kind: NewsKind,
    /// Unix time it was first fetched (new) or last changed (changed).
    pub at: f64,
}

impl<C: Borrow<Connection>> SqliteReader<C> {
    /// Relevant pages first fetched after `since` and pages changed after `since` (Unix
    /// times), newest first, at most `limit`; and how many there are in all.
    pub fn news_since(&self, since: f64, limit: usize) -> Result<(Vec<NewsItem>, i64)> {
        const WHERE: &str = "d.status = 2 AND (
              (d.relevance >= ?2 AND d.first_fetched_at > ?1) OR d.changed_at > ?1)";
        let count: i64 = self.conn().query_row(
            &format!("SELECT count(*) FROM doc d WHERE {WHERE}"),
            params![since, NEWS_MIN_RELEVANCE],
            |r| r.get(0),
        )?;
        let mut st = self.conn().prepare(&format!(
            "SELECT d.url, coalesce(d.title, ''), d.relevance, coalesce(t.path, ''),
               coalesce(d.changed_at > ?1, 0), max(coalesce(d.changed_at, 0), coalesce(d.first_fetched_at, 0)) AS at
             FROM doc d LEFT JOIN taxonomy t ON t.kcid = d.cid
             WHERE {WHERE} ORDER BY at DESC LIMIT ?3"
        ))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = st.query_map(params![since, NEWS_MIN_RELEVANCE, limit], |r| {
            Ok(NewsItem {
                url: r.get(0)?,
                title: r.get(1)?,
                relevance: r.get(2)?,
                best_leaf: r.get(3)?,
                kind: if r.get::<_, bool>(4)? {
                    NewsKind::Changed
                } else {
                    NewsKind::New
                },
                at: r.get(5)?,
            })
        })?;
        Ok((rows.collect::<std::result::Result<_, _>>()?, count))
    }
}
