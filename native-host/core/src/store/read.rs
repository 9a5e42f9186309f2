//! The read side of the crawl database: the typed questions that reports, the browser
//! endpoint, the bench and the command line ask of a crawl. Every query of theirs lives here,
//! so the schema has one door (`forager sql` aside, which runs the user's own SQL).

use super::{DocStatus, FetchedPage, Result, Store};
use rusqlite::{params, Connection, OptionalExtension};
use std::path::Path;

/// A crawl database opened read-only, beside a running crawl if need be.
pub struct ReadOnly {
    conn: Connection,
}

impl ReadOnly {
    /// Opens the crawl database at `path` read-only.
    pub fn open(path: &Path) -> Result<ReadOnly> {
        Ok(ReadOnly {
            conn: Store::open_read_only(path)?,
        })
    }

    /// Its questions.
    pub fn read(&self) -> Reader<'_> {
        Reader { conn: &self.conn }
    }
}

impl Store {
    /// Questions about this (writable) crawl database.
    pub fn read(&self) -> Reader<'_> {
        Reader { conn: &self.conn }
    }
}

/// The typed read API over one connection.
#[derive(Clone, Copy)]
pub struct Reader<'a> {
    pub(super) conn: &'a Connection,
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

impl<'a> Reader<'a> {
    /// The read API over an open connection to a crawl database.
    pub fn over(conn: &'a Connection) -> Reader<'a> {
        Reader { conn }
    }

    fn count(&self, sql: &str) -> Result<i64> {
        Ok(self.conn.query_row(sql, [], |r| r.get(0))?)
    }

    /// How many URLs are fetched, waiting, given up on, and relevant.
    pub fn counts(&self) -> Result<Counts> {
        Ok(Counts {
            fetched: self.count("SELECT count(*) FROM doc WHERE status = 2")?,
            frontier: self.count("SELECT count(*) FROM doc WHERE status = 0")?,
            given_up: self.count("SELECT count(*) FROM doc WHERE status IN (3, 4)")?,
            relevant: self
                .count("SELECT count(*) FROM doc WHERE status = 2 AND relevance >= 0.5")?,
        })
    }

    /// R(d) of the fetched pages in fetch order.
    pub fn relevance_in_fetch_order(&self) -> Result<Vec<f64>> {
        let mut st = self
            .conn
            .prepare("SELECT relevance FROM doc WHERE fetch_seq IS NOT NULL ORDER BY fetch_seq")?;
        let rows = st.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// The monitor's alarms over `relevance` (R in fetch order) and the frontier's size; the
    /// crawl's mode decides which threat is watched.
    pub fn alarms(&self, relevance: &[f64], frontier: i64) -> Vec<crate::monitor::Alarm> {
        crate::monitor::alarms(relevance, frontier, self.hard_focus(), &Default::default())
    }

    /// The crawl ran in hard focus (the monitor then watches diffusion, not stagnation).
    pub fn hard_focus(&self) -> bool {
        self.meta_text("mode").is_some_and(|m| m == "Hard")
    }

    /// When the distiller last saved its scores (Unix time).
    pub fn distilled_at(&self) -> Option<f64> {
        (self.conn)
            .query_row(
                "SELECT value FROM meta WHERE key = 'distilled_at'",
                [],
                |r| r.get(0),
            )
            .ok()
    }

    fn meta_text(&self, key: &str) -> Option<String> {
        (self.conn)
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .ok()
    }

    /// The last fetch sequence number given (0 before the first fetch).
    pub fn last_fetch_seq(&self) -> Result<i64> {
        self.count("SELECT coalesce(max(fetch_seq), 0) FROM doc")
    }

    /// Up to `limit` pages fetched after `seq`, in fetch order.
    pub fn pages_since(&self, seq: i64, limit: i64) -> Result<Vec<FetchedPage>> {
        self.pages(
            "SELECT fetch_seq, url, relevance, title FROM doc WHERE fetch_seq > ?1
             ORDER BY fetch_seq LIMIT ?2",
            seq,
            limit,
        )
    }

    /// The `limit` pages fetched last, newest first.
    pub fn latest_pages(&self, limit: i64) -> Result<Vec<FetchedPage>> {
        self.pages(
            "SELECT fetch_seq, url, relevance, title FROM doc WHERE fetch_seq > ?1
             ORDER BY fetch_seq DESC LIMIT ?2",
            0,
            limit,
        )
    }

    fn pages(&self, sql: &str, seq: i64, limit: i64) -> Result<Vec<FetchedPage>> {
        let mut st = self.conn.prepare(sql)?;
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

    /// The last distillation's `ranking`, best first, zero scores left out; all of it when
    /// `limit` is `None`.
    pub fn ranked(&self, ranking: Ranking, limit: Option<usize>) -> Result<Vec<RankedPage>> {
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
        let mut st = self.conn.prepare(&sql)?;
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
    pub fn fetched_pages(&self) -> Result<Vec<FetchedRow>> {
        let mut st = self.conn.prepare(
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
    pub fn fetch_log(&self) -> Result<Vec<(String, f64)>> {
        let mut st = self.conn.prepare(
            "SELECT url, relevance FROM doc WHERE fetch_seq IS NOT NULL ORDER BY fetch_seq",
        )?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// The URL of row `oid`.
    pub fn url_of(&self, oid: i64) -> Result<Option<String>> {
        Ok((self.conn)
            .query_row("SELECT url FROM doc WHERE oid = ?1", [oid], |r| r.get(0))
            .optional()?)
    }

    /// What the crawl did with `url` so far: its status and last error, `None` when unknown.
    pub fn fate_of(&self, url: &str) -> Result<Option<(DocStatus, Option<String>)>> {
        let row: Option<(i64, Option<String>)> = (self.conn)
            .query_row("SELECT status, error FROM doc WHERE url = ?1", [url], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        Ok(row.and_then(|(s, e)| Some((DocStatus::from_code(s)?, e))))
    }

    /// (out-links to fetched pages, of those to pages with R >= 0.5) of row `oid`, itself left
    /// out: why a hub ranks.
    pub fn link_evidence(&self, oid: i64) -> Result<(i64, i64)> {
        Ok(self.conn.query_row(
            "SELECT count(*), coalesce(sum(o.relevance >= 0.5), 0) FROM link l
             JOIN doc o ON o.oid = l.oid_dst
             WHERE l.oid_src = ?1 AND l.oid_dst <> ?1 AND o.status = 2",
            [oid],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    }

    /// The depth of row `oid` from the seeds.
    pub fn depth_of(&self, oid: i64) -> Result<Option<i64>> {
        Ok((self.conn)
            .query_row("SELECT depth FROM doc WHERE oid = ?1", [oid], |r| r.get(0))
            .optional()?)
    }

    /// The URLs row `oid` links to.
    pub fn out_links(&self, oid: i64) -> Result<Vec<String>> {
        let mut st = self.conn.prepare(
            "SELECT d.url FROM link l JOIN doc d ON d.oid = l.oid_dst WHERE l.oid_src = ?1",
        )?;
        let rows = st.query_map([oid], |r| r.get(0))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Servers with at least three fetched pages, by density of relevant pages (the paper's
    /// site rating), at most `limit`.
    pub fn site_ratings(&self, limit: usize) -> Result<Vec<SiteRow>> {
        let mut st = self.conn.prepare(
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
    pub fn census(&self) -> Result<Vec<(String, i64)>> {
        self.labelled_counts(
            "SELECT coalesce(t.path, '(unclassified)'), count(*) FROM doc d
             LEFT JOIN taxonomy t ON t.kcid = d.cid
             WHERE d.status = 2 GROUP BY d.cid ORDER BY 2 DESC",
        )
    }

    /// The census of the pages fetched through links from pages with R >= `min_r`: (best leaf
    /// id, pages), each page counted once (where to widen the focus, [`crate::widen`]).
    pub fn linked_census(&self, min_r: f64) -> Result<Vec<(i64, u64)>> {
        let mut st = self.conn.prepare(
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
    pub fn linked_examples(
        &self,
        min_r: f64,
        cid: i64,
        limit: usize,
    ) -> Result<Vec<(String, String)>> {
        let mut st = self.conn.prepare(
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
    pub fn apprentice_evidence(&self) -> Result<Vec<super::ApprenticeEvidence>> {
        let mut st = self.conn.prepare(
            "SELECT l.features, d.relevance FROM link l JOIN doc d ON d.oid = l.oid_dst
             WHERE d.status = 2 AND l.features IS NOT NULL",
        )?;
        let rows = st.query_map([], |r| {
            let b: Vec<u8> = r.get(0)?;
            Ok((super::features_from_blob(&b), r.get(1)?))
        })?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// An apprentice trained on all of the crawl's link evidence by the focus policy's critic
    /// (offline training, and the one the browser scores links with).
    pub fn trained_apprentice(&self) -> Result<forager_classifier::apprentice::Apprentice> {
        Ok(crate::crawl::policy::trained_apprentice(
            self.apprentice_evidence()?,
        ))
    }

    /// (error kind, URLs given up on), most first.
    pub fn errors(&self) -> Result<Vec<(String, i64)>> {
        self.labelled_counts(
            "SELECT error, count(*) FROM doc WHERE status IN (3, 4) GROUP BY error ORDER BY 2 DESC",
        )
    }

    fn labelled_counts(&self, sql: &str) -> Result<Vec<(String, i64)>> {
        let mut st = self.conn.prepare(sql)?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                r.get(1)?,
            ))
        })?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// (num_tries, rows) over all URLs.
    pub fn num_tries(&self) -> Result<Vec<(i64, i64)>> {
        let mut st = self
            .conn
            .prepare("SELECT num_tries, count(*) FROM doc GROUP BY num_tries ORDER BY 1")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// The crawl graph and relevance, for the distiller.
    pub fn graph(
        &self,
    ) -> Result<(
        Vec<crate::distiller::Edge>,
        std::collections::HashMap<i64, f64>,
    )> {
        super::graph_of(self.conn)
    }

    /// The stored text of the fetched page `url`, if any.
    pub fn fetched_text(&self, url: &str) -> Result<Option<String>> {
        super::fetched_text_of(self.conn, url)
    }

    /// The model the crawl was started with (taxonomy, examples, good marks), as saved.
    pub fn model_bytes(&self) -> Result<Option<Vec<u8>>> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'model'", [], |r| {
                r.get(0)
            })
            .optional()?)
    }

    /// Calls `f(url, text)` for every fetched page with stored text, in row order.
    pub fn each_fetched_text<E: From<super::StoreError>>(
        &self,
        f: impl FnMut(&str, &str) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        super::each_fetched_text(self.conn, f)
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
