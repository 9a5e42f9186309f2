//! The read side of the crawl database: the typed questions that reports, the browser
//! endpoint, the bench and the command line ask of a crawl, as a back-end-neutral trait
//! ([`Reader`]: its own rows, [`super::StoreError`]). [`SqliteReader`] answers them from a
//! SQLite file; a server back-end implements the same trait. Every query of the SQLite reader
//! lives here (`forager sql` aside, which runs the user's own SQL on SQLite only).

use super::{DocStatus, FetchedPage, NewsItem, PageId, PageText, Result, SearchHit, SearchRanking};
use super::{Store, StoreError};
use rusqlite::{params, Connection, OptionalExtension};
use std::borrow::Borrow;
use std::collections::HashMap;
use std::path::Path;

/// The questions a report, an export, `forager status` or the browser's event pump ask of a
/// crawl, whatever holds it. Object-safe: commands hold a `Box<dyn Reader>` from
/// [`super::open_read`].
pub trait Reader {
    /// How many URLs are fetched, waiting, given up on, and relevant.
    fn counts(&self) -> Result<Counts>;
    /// R(d) of the fetched pages in fetch order.
    fn relevance_in_fetch_order(&self) -> Result<Vec<f64>>;
    /// The crawl ran in hard focus (the monitor then watches diffusion, not stagnation).
    fn hard_focus(&self) -> bool;
    /// When the distiller last saved its scores (Unix time).
    fn distilled_at(&self) -> Option<f64>;
    /// The last fetch sequence number given (0 before the first fetch).
    fn last_fetch_seq(&self) -> Result<i64>;
    /// Up to `limit` pages fetched after `seq`, in fetch order.
    fn pages_since(&self, seq: i64, limit: i64) -> Result<Vec<FetchedPage>>;
    /// The `limit` pages fetched last, newest first.
    fn latest_pages(&self, limit: i64) -> Result<Vec<FetchedPage>>;
    /// The last distillation's `ranking`, best first, zero scores left out; all of it when
    /// `limit` is `None`.
    fn ranked(&self, ranking: Ranking, limit: Option<usize>) -> Result<Vec<RankedPage>>;
    /// Every fetched page in fetch order, as taken away.
    fn fetched_pages(&self) -> Result<Vec<FetchedRow>>;
    /// (URL, R(d)) of the fetched pages in fetch order.
    fn fetch_log(&self) -> Result<Vec<(String, f64)>>;
    /// The URL of row `oid`.
    fn url_of(&self, oid: i64) -> Result<Option<String>>;
    /// What the crawl did with `url` so far: its status and last error, `None` when unknown.
    fn fate_of(&self, url: &str) -> Result<Option<(DocStatus, Option<String>)>>;
    /// (out-links to fetched pages, of those to pages with R >= 0.5) of row `oid`, itself left
    /// out: why a hub ranks.
    fn link_evidence(&self, oid: i64) -> Result<(i64, i64)>;
    /// The depth of row `oid` from the seeds.
    fn depth_of(&self, oid: i64) -> Result<Option<i64>>;
    /// The URLs row `oid` links to.
    fn out_links(&self, oid: i64) -> Result<Vec<String>>;
    /// Servers with at least three fetched pages, by density of relevant pages (the paper's
    /// site rating), at most `limit`.
    fn site_ratings(&self, limit: usize) -> Result<Vec<SiteRow>>;
    /// (best leaf path, fetched pages), most first: the crawl's census.
    fn census(&self) -> Result<Vec<(String, i64)>>;
    /// The census of the pages fetched through links from pages with R >= `min_r`: (best leaf
    /// id, pages), each page counted once (where to widen the focus, [`crate::widen`]).
    fn linked_census(&self, min_r: f64) -> Result<Vec<(i64, u64)>>;
    /// Up to `limit` (url, title) of pages with best leaf `cid` fetched through links from
    /// pages with R >= `min_r`, first fetched first: the evidence of a suggestion.
    fn linked_examples(&self, min_r: f64, cid: i64, limit: usize) -> Result<Vec<(String, String)>>;
    /// The apprentice's evidence in the crawl: (features, target's R(d)) of every link with
    /// features whose target was fetched.
    fn apprentice_evidence(&self) -> Result<Vec<super::ApprenticeEvidence>>;
    /// (error kind, URLs given up on), most first.
    fn errors(&self) -> Result<Vec<(String, i64)>>;
    /// (num_tries, rows) over all URLs.
    fn num_tries(&self) -> Result<Vec<(i64, i64)>>;
    /// The crawl graph and relevance, for the distiller.
    fn graph(&self) -> Result<(Vec<crate::distiller::Edge>, HashMap<i64, f64>)>;
    /// The stored text of the fetched page `url`, if any.
    fn fetched_text(&self, url: &str) -> Result<Option<String>>;
    /// A page of fetched pages' texts, in id order after `after` (from the first when `None`).
    fn fetched_texts(&self, after: Option<PageId>, limit: usize) -> Result<Vec<PageText>>;
    /// The model the crawl was started with (taxonomy, examples, good marks), as saved.
    fn model_bytes(&self) -> Result<Option<Vec<u8>>>;
    /// The workers of the crawl and their leases, by name (none in a crawl that is not
    /// running).
    fn workers(&self) -> Result<Vec<super::WorkerRow>> {
        Ok(Vec::new())
    }
    /// The fetched pages matching `query` (as a user typed it), best first, at most `limit`.
    fn search(
        &self,
        _query: &str,
        _limit: usize,
        _ranking: SearchRanking,
    ) -> Result<Vec<SearchHit>> {
        Err(StoreError::Unsupported(
            "search".into(),
            "this back-end has no search index yet",
        ))
    }
    /// Relevant pages first fetched after `since` and pages changed after `since` (Unix
    /// times), newest first, at most `limit`; and how many there are in all.
    fn news_since(&self, _since: f64, _limit: usize) -> Result<(Vec<NewsItem>, i64)> {
        Err(StoreError::Unsupported(
            "news".into(),
            "this back-end does not list news yet",
        ))
    }

    /// The monitor's alarms over `relevance` (R in fetch order) and the frontier's size; the
    /// crawl's mode decides which threat is watched.
    fn alarms(&self, relevance: &[f64], frontier: i64) -> Vec<crate::monitor::Alarm> {
        crate::monitor::alarms(relevance, frontier, self.hard_focus(), &Default::default())
    }

    /// An apprentice trained on all of the crawl's link evidence by the focus policy's critic
    /// (offline training, and the one the browser scores links with).
    fn trained_apprentice(&self) -> Result<forager_classifier::apprentice::Apprentice> {
        Ok(crate::crawl::policy::trained_apprentice(
            self.apprentice_evidence()?,
        ))
    }
}

/// The read side's helpers over paged reads, for every reader (`dyn Reader`, sendable or not).
macro_rules! paged_helpers {
    ($($t:ty),*) => {$(
        impl $t {
            /// Calls `f(url, text)` for every fetched page with stored text, in row order, a
            /// page of rows at a time.
            pub fn each_fetched_text<E: From<StoreError>>(
                &self,
                mut f: impl FnMut(&str, &str) -> std::result::Result<(), E>,
            ) -> std::result::Result<(), E> {
                let mut after = None;
                loop {
                    let page = self.fetched_texts(after, super::PAGE)?;
                    let Some(last) = page.last() else {
                        return Ok(());
                    };
                    after = Some(last.oid);
                    for p in &page {
                        if let Some(text) = &p.text {
                            f(&p.url, text)?;
                        }
                    }
                }
            }
        }
    )*};
}

paged_helpers!(dyn Reader + '_, dyn Reader + Send + '_);

/// A crawl database opened read-only, beside a running crawl if need be.
pub type ReadOnly = SqliteReader<Connection>;

impl SqliteReader<Connection> {
    /// Opens the SQLite crawl database at `path` read-only.
    pub fn open(path: &Path) -> Result<ReadOnly> {
        Ok(SqliteReader {
            conn: Store::open_read_only(path)?,
        })
    }

    /// Its questions, over its connection.
    pub fn read(&self) -> SqliteReader<&Connection> {
        SqliteReader { conn: &self.conn }
    }
}

impl Store {
    /// Questions about this (writable) crawl database.
    pub fn read(&self) -> SqliteReader<&Connection> {
        SqliteReader { conn: &self.conn }
    }
}

/// The read side of a SQLite crawl database, over a connection it owns ([`ReadOnly`]) or
/// borrows (a [`Store`]'s).
pub struct SqliteReader<C: Borrow<Connection>> {
    pub(super) conn: C,
}

/// How many URLs stand where.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Pages fetched.
    pub fetched: i64,
    /// URLs in the frontier.
    pub frontier: i64,
    /// URLs failed or excluded, in all runs (what a user sees as errors).
    pub given_up: i64,
    /// Fetched pages with R(d) >= 0.5.
    pub relevant: i64,
}

/// Which of the distiller's lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ranking {
    /// Pages that link to many good authorities.
    Hubs,
    /// Pages many good hubs link to.
    Authorities,
}

impl Ranking {
    fn table(self) -> &'static str {
        match self {
            Ranking::Hubs => "hub",
            Ranking::Authorities => "auth",
        }
    }
}

/// A page of the last distillation with its score.
#[derive(Clone, Debug, PartialEq)]
pub struct RankedPage {
    /// URL.
    pub url: String,
    /// Hub or authority score.
    pub score: f64,
    /// Title ("" when none).
    pub title: String,
    /// R(d).
    pub relevance: f64,
    /// Path of its best leaf ("" when unclassified).
    pub best_leaf: String,
    /// Unix time it was fetched.
    pub fetched_at: Option<f64>,
    /// Its out-links to fetched pages (itself left out): the evidence a hub list shows.
    pub fetched_links: i64,
    /// Of those, links to pages with R(d) >= 0.5 ("22/28 relevant").
    pub relevant_links: i64,
}

/// A server with its fetched and relevant pages.
#[derive(Clone, Debug, PartialEq)]
pub struct SiteRow {
    /// Host name.
    pub host: String,
    /// Pages fetched from it.
    pub fetched: i64,
    /// Of those, with R(d) >= 0.5.
    pub relevant: i64,
}

/// A fetched page as taken away (`forager export`).
#[derive(Clone, Debug, PartialEq)]
pub struct FetchedRow {
    /// URL.
    pub url: String,
    /// Title ("" when none).
    pub title: String,
    /// R(d).
    pub relevance: f64,
    /// Path of its best leaf ("" when unclassified).
    pub best_leaf: String,
    /// Unix time it was fetched.
    pub fetched_at: Option<f64>,
}

impl<C: Borrow<Connection>> SqliteReader<C> {
    /// The read API over an open connection to a crawl database.
    pub fn over(conn: C) -> SqliteReader<C> {
        SqliteReader { conn }
    }

    /// The connection it reads.
    pub(super) fn conn(&self) -> &Connection {
        self.conn.borrow()
    }

    fn count(&self, sql: &str) -> Result<i64> {
        Ok(self.conn().query_row(sql, [], |r| r.get(0))?)
    }

    fn meta_text(&self, key: &str) -> Option<String> {
        self.conn()
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .ok()
    }

    fn pages(&self, sql: &str, seq: i64, limit: i64) -> Result<Vec<FetchedPage>> {
        let mut st = self.conn().prepare(sql)?;
        let rows = st.query_map(params![seq, limit], |r| {
            Ok(FetchedPage {
                seq: r.get(0)?,
                url: r.get(1)?,
                relevance: r.get(2)?,
                title: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    fn labelled_counts(&self, sql: &str) -> Result<Vec<(String, i64)>> {
        let mut st = self.conn().prepare(sql)?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                r.get(1)?,
            ))
        })?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }
}

impl<C: Borrow<Connection>> Reader for SqliteReader<C> {
    /// How many URLs are fetched, waiting, given up on, and relevant.
    fn counts(&self) -> Result<Counts> {
        Ok(Counts {
            fetched: self.count("SELECT count(*) FROM doc WHERE status = 2")?,
            frontier: self.count("SELECT count(*) FROM doc WHERE status = 0")?,
            given_up: self.count("SELECT count(*) FROM doc WHERE status IN (3, 4)")?,
            relevant: self
                .count("SELECT count(*) FROM doc WHERE status = 2 AND relevance >= 0.5")?,
        })
    }

    /// R(d) of the fetched pages in fetch order.
    fn relevance_in_fetch_order(&self) -> Result<Vec<f64>> {
        let mut st = self
            .conn()
            .prepare("SELECT relevance FROM doc WHERE fetch_seq IS NOT NULL ORDER BY fetch_seq")?;
        let rows = st.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// The crawl ran in hard focus (the monitor then watches diffusion, not stagnation).
    fn hard_focus(&self) -> bool {
        self.meta_text("mode").is_some_and(|m| m == "Hard")
    }

    /// When the distiller last saved its scores (Unix time).
    fn distilled_at(&self) -> Option<f64> {
        self.conn()
            .query_row(
                "SELECT value FROM meta WHERE key = 'distilled_at'",
                [],
                |r| r.get(0),
            )
            .ok()
    }

    /// The last fetch sequence number given (0 before the first fetch).
    fn last_fetch_seq(&self) -> Result<i64> {
        self.count("SELECT coalesce(max(fetch_seq), 0) FROM doc")
    }

    /// Up to `limit` pages fetched after `seq`, in fetch order.
    fn pages_since(&self, seq: i64, limit: i64) -> Result<Vec<FetchedPage>> {
        self.pages(
            "SELECT fetch_seq, url, relevance, title FROM doc WHERE fetch_seq > ?1
             ORDER BY fetch_seq LIMIT ?2",
            seq,
            limit,
        )
    }

    /// The `limit` pages fetched last, newest first.
    fn latest_pages(&self, limit: i64) -> Result<Vec<FetchedPage>> {
        self.pages(
            "SELECT fetch_seq, url, relevance, title FROM doc WHERE fetch_seq > ?1
             ORDER BY fetch_seq DESC LIMIT ?2",
            0,
            limit,
        )
    }

    /// The last distillation's `ranking`, best first, zero scores left out; all of it when
    /// `limit` is `None`.
    fn ranked(&self, ranking: Ranking, limit: Option<usize>) -> Result<Vec<RankedPage>> {
        let sql = format!(
            "SELECT d.url, s.score, coalesce(d.title, ''), d.relevance, coalesce(t.path, ''),
               d.fetched_at,
               (SELECT count(*) FROM link l JOIN doc o ON o.oid = l.oid_dst
                WHERE l.oid_src = d.oid AND l.oid_dst <> d.oid AND o.status = 2),
               (SELECT count(*) FROM link l JOIN doc o ON o.oid = l.oid_dst
                WHERE l.oid_src = d.oid AND l.oid_dst <> d.oid AND o.status = 2
                  AND o.relevance >= 0.5)
             FROM (SELECT * FROM {} WHERE score > 0 ORDER BY score DESC, oid LIMIT ?1) s
             JOIN doc d ON d.oid = s.oid LEFT JOIN taxonomy t ON t.kcid = d.cid
             ORDER BY s.score DESC, s.oid",
            ranking.table()
        );
        let limit = limit.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
        let mut st = self.conn().prepare(&sql)?;
        let rows = st.query_map([limit], |r| {
            Ok(RankedPage {
                url: r.get(0)?,
                score: r.get(1)?,
                title: r.get(2)?,
                relevance: r.get(3)?,
                best_leaf: r.get(4)?,
                fetched_at: r.get(5)?,
                fetched_links: r.get(6)?,
                relevant_links: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Every fetched page in fetch order, as taken away.
    fn fetched_pages(&self) -> Result<Vec<FetchedRow>> {
        let mut st = self.conn().prepare(
            "SELECT d.url, coalesce(d.title, ''), d.relevance, coalesce(t.path, ''), d.fetched_at
             FROM doc d LEFT JOIN taxonomy t ON t.kcid = d.cid
             WHERE d.status = ?1 ORDER BY d.fetch_seq",
        )?;
        let rows = st.query_map([DocStatus::Fetched], |r| {
            Ok(FetchedRow {
                url: r.get(0)?,
                title: r.get(1)?,
                relevance: r.get(2)?,
                best_leaf: r.get(3)?,
                fetched_at: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// (URL, R(d)) of the fetched pages in fetch order.
    fn fetch_log(&self) -> Result<Vec<(String, f64)>> {
        let mut st = self.conn().prepare(
            "SELECT url, relevance FROM doc WHERE fetch_seq IS NOT NULL ORDER BY fetch_seq",
        )?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// The URL of row `oid`.
    fn url_of(&self, oid: i64) -> Result<Option<String>> {
        Ok(self
            .conn()
            .query_row("SELECT url FROM doc WHERE oid = ?1", [oid], |r| r.get(0))
            .optional()?)
    }

    /// What the crawl did with `url` so far: its status and last error, `None` when unknown.
    fn fate_of(&self, url: &str) -> Result<Option<(DocStatus, Option<String>)>> {
        let row: Option<(i64, Option<String>)> = self
            .conn()
            .query_row(
                "SELECT status, error FROM doc WHERE rnd = ?2 AND url = ?1",
                rusqlite::params![url, super::url_key::url_key(url)],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        Ok(row.and_then(|(s, e)| Some((DocStatus::from_code(s)?, e))))
    }

    /// (out-links to fetched pages, of those to pages with R >= 0.5) of row `oid`, itself left
    /// out: why a hub ranks.
    fn link_evidence(&self, oid: i64) -> Result<(i64, i64)> {
        Ok(self.conn().query_row(
            "SELECT count(*), coalesce(sum(o.relevance >= 0.5), 0) FROM link l
             JOIN doc o ON o.oid = l.oid_dst
             WHERE l.oid_src = ?1 AND l.oid_dst <> ?1 AND o.status = 2",
            [oid],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    }

    /// The depth of row `oid` from the seeds.
    fn depth_of(&self, oid: i64) -> Result<Option<i64>> {
        Ok(self
            .conn()
            .query_row("SELECT depth FROM doc WHERE oid = ?1", [oid], |r| r.get(0))
            .optional()?)
    }

    /// The URLs row `oid` links to.
    fn out_links(&self, oid: i64) -> Result<Vec<String>> {
        let mut st = self.conn().prepare(
            "SELECT d.url FROM link l JOIN doc d ON d.oid = l.oid_dst WHERE l.oid_src = ?1",
        )?;
        let rows = st.query_map([oid], |r| r.get(0))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Servers with at least three fetched pages, by density of relevant pages (the paper's
    /// site rating), at most `limit`.
    fn site_ratings(&self, limit: usize) -> Result<Vec<SiteRow>> {
        let mut st = self.conn().prepare(
            "SELECT s.host, count(*), sum(d.relevance >= 0.5) FROM doc d JOIN server s USING (sid)
             WHERE d.status = 2 GROUP BY d.sid HAVING count(*) >= 3
             ORDER BY 1.0 * sum(d.relevance >= 0.5) / count(*) DESC, count(*) DESC LIMIT ?1",
        )?;
        let rows = st.query_map([i64::try_from(limit).unwrap_or(i64::MAX)], |r| {
            Ok(SiteRow {
                host: r.get(0)?,
                fetched: r.get(1)?,
                relevant: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// (best leaf path, fetched pages), most first: the crawl's census.
    fn census(&self) -> Result<Vec<(String, i64)>> {
        self.labelled_counts(
            "SELECT coalesce(t.path, '(unclassified)'), count(*) FROM doc d
             LEFT JOIN taxonomy t ON t.kcid = d.cid
             WHERE d.status = 2 GROUP BY d.cid ORDER BY 2 DESC, 1",
        )
    }

    /// The census of the pages fetched through links from pages with R >= `min_r`: (best leaf
    /// id, pages), each page counted once (where to widen the focus, [`crate::widen`]).
    fn linked_census(&self, min_r: f64) -> Result<Vec<(i64, u64)>> {
        let mut st = self.conn().prepare(
            "SELECT d.cid, count(DISTINCT d.oid) FROM link l JOIN doc s ON s.oid = l.oid_src
             JOIN doc d ON d.oid = l.oid_dst
             WHERE s.status = 2 AND s.relevance >= ?1 AND d.status = 2 AND d.cid IS NOT NULL
             GROUP BY d.cid",
        )?;
        let rows = st.query_map([min_r], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Up to `limit` (url, title) of pages with best leaf `cid` fetched through links from pages
    /// with R >= `min_r`, first fetched first: the evidence of a suggestion.
    fn linked_examples(&self, min_r: f64, cid: i64, limit: usize) -> Result<Vec<(String, String)>> {
        let mut st = self.conn().prepare(
            "SELECT DISTINCT d.url, coalesce(d.title, ''), d.fetch_seq FROM link l
             JOIN doc s ON s.oid = l.oid_src JOIN doc d ON d.oid = l.oid_dst
             WHERE s.status = 2 AND s.relevance >= ?1 AND d.status = 2 AND d.cid = ?2
             ORDER BY d.fetch_seq LIMIT ?3",
        )?;
        let rows = st.query_map(params![min_r, cid, limit as i64], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// The apprentice's evidence in the crawl: (features, target's R(d)) of every link with
    /// features whose target was fetched.
    fn apprentice_evidence(&self) -> Result<Vec<super::ApprenticeEvidence>> {
        let mut st = self.conn().prepare(
            "SELECT l.features, d.relevance FROM link l JOIN doc d ON d.oid = l.oid_dst
             WHERE d.status = 2 AND l.features IS NOT NULL",
        )?;
        let mut dict = super::features::FeatureDict::load(self.conn())?;
        let rows = st.query_map([], |r| Ok((r.get::<_, Vec<u8>>(0)?, r.get(1)?)))?;
        let mut evidence = Vec::new();
        for row in rows {
            let (b, relevance) = row?;
            // A damaged list teaches nothing rather than something wrong.
            if let Some(f) = dict.decode_on(self.conn(), &b)? {
                evidence.push((f, relevance));
            }
        }
        Ok(evidence)
    }

    /// (error kind, URLs given up on), most first.
    fn errors(&self) -> Result<Vec<(String, i64)>> {
        self.labelled_counts(
            "SELECT error, count(*) FROM doc WHERE status IN (3, 4) GROUP BY error ORDER BY 2 DESC, 1",
        )
    }

    /// (num_tries, rows) over all URLs.
    fn num_tries(&self) -> Result<Vec<(i64, i64)>> {
        let mut st = self
            .conn()
            .prepare("SELECT num_tries, count(*) FROM doc GROUP BY num_tries ORDER BY 1")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// The crawl graph and relevance, for the distiller.
    fn graph(&self) -> Result<(Vec<crate::distiller::Edge>, HashMap<i64, f64>)> {
        super::graph_of(self.conn())
    }

    /// The stored text of the fetched page `url`, if any.
    fn fetched_text(&self, url: &str) -> Result<Option<String>> {
        super::fetched_text_of(self.conn(), url)
    }

    /// The model the crawl was started with (taxonomy, examples, good marks), as saved.
    fn model_bytes(&self) -> Result<Option<Vec<u8>>> {
        Ok(self
            .conn()
            .query_row("SELECT value FROM meta WHERE key = 'model'", [], |r| {
                r.get(0)
            })
            .optional()?)
    }

    fn fetched_texts(&self, after: Option<PageId>, limit: usize) -> Result<Vec<PageText>> {
        super::judge::fetched_texts_of(self.conn(), after, limit)
    }

    fn workers(&self) -> Result<Vec<super::WorkerRow>> {
        super::lease::workers_of(self.conn())
    }

    fn search(&self, query: &str, limit: usize, ranking: SearchRanking) -> Result<Vec<SearchHit>> {
        SqliteReader::search(self, query, limit, ranking)
    }

    fn news_since(&self, since: f64, limit: usize) -> Result<(Vec<NewsItem>, i64)> {
        SqliteReader::news_since(self, since, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{NewUrl, Outcome};

    fn seed(url: &str) -> NewUrl {
        NewUrl::seed(&url::Url::parse(url).unwrap())
    }

    #[test]
    fn the_reader_answers_from_what_the_crawl_recorded() {
        let path = std::env::temp_dir().join(format!("forager-read-{}.db", std::process::id()));
        for ext in ["", "-wal", "-shm", ".lock"] {
            let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
        }
        let mut st = Store::open(&path).unwrap();
        let urls = [
            "http://a.test/",
            "http://b.test/",
            "http://c.test/",
            "http://d.test/",
        ];
        st.add_seeds(&urls.map(seed)).unwrap();
        let work = st.checkout(10).unwrap();
        let oid = |u: &str| work.iter().find(|w| w.url == u).unwrap().oid;
        let page = |u: &str, r: f64, title: Option<&str>| Outcome {
            oid: oid(u),
            status: DocStatus::Fetched,
            relevance: r,
            title: title.map(str::to_owned),
            ..Outcome::default()
        };
        let excluded = Outcome {
            oid: oid("http://c.test/"),
            status: DocStatus::Excluded,
            error: Some("robots".into()),
            ..Outcome::default()
        };
        st.record(&[page("http://b.test/", 0.9, Some("B")), excluded])
            .unwrap();
        st.record(&[page("http://a.test/", 0.2, None)]).unwrap();
        // d is checked out (in flight), e waits in the frontier.
        st.add_seeds(&[seed("http://e.test/")]).unwrap();
        let ro = ReadOnly::open(&path).unwrap();
        let db = ro.read();
        let expected = Counts {
            fetched: 2,
            frontier: 1,
            given_up: 1,
            relevant: 1,
        };
        assert_eq!(db.counts().unwrap(), expected);
        assert_eq!(db.relevance_in_fetch_order().unwrap(), vec![0.9, 0.2]);
        let since: Vec<(i64, String)> = (db.pages_since(0, 10).unwrap().into_iter())
            .map(|p| (p.seq, p.url))
            .collect();
        assert_eq!(
            since,
            vec![(1, "http://b.test/".into()), (2, "http://a.test/".into())]
        );
        assert_eq!(db.pages_since(1, 10).unwrap().len(), 1);
        let latest = db.latest_pages(1).unwrap();
        assert_eq!(latest[0].url, "http://a.test/");
        assert_eq!(db.last_fetch_seq().unwrap(), 2);
        assert_eq!(db.errors().unwrap(), vec![("robots".to_owned(), 1)]);
        assert_eq!(
            db.url_of(oid("http://d.test/").raw()).unwrap().as_deref(),
            Some("http://d.test/")
        );
        assert_eq!(db.url_of(-1).unwrap(), None);
        assert!(db.ranked(Ranking::Hubs, Some(5)).unwrap().is_empty());
        assert_eq!(st.read().fetched_pages().unwrap()[0].title, "B");
        drop(st);
        let _ = std::fs::remove_file(&path);
    }
}
