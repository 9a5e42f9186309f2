//! The read side ([`Reader`]) of a crawl on PostgreSQL: the questions reports, exports,
//! `forager status` and the browser ask, in PostgreSQL's SQL over the same columns as SQLite's.

use super::search;
use super::{limit, mining, PgStore};
use crate::store::{
    ApprenticeEvidence, Counts, DocStatus, FetchedPage, FetchedRow, NewsItem, PageId, PageText,
    RankedPage, Ranking, Reader, Result, SearchHit, SearchRanking, SiteRow, WorkerRow,
};
use r2d2_postgres::postgres::types::ToSql;
use std::collections::HashMap;

impl PgStore {
    /// Rows of `sql` with `params`, each turned into a `T` by `f`.
    fn rows<T: Send>(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
        f: impl Fn(&postgres::Row) -> T + Send + Sync,
    ) -> Result<Vec<T>> {
        self.with(|c| Ok(c.query(sql, params)?.iter().map(&f).collect()))
    }

    /// The one value of `sql`, if it returned a row.
    fn one<T: Send + for<'a> postgres::types::FromSql<'a>>(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<T>> {
        self.with(|c| Ok(c.query_opt(sql, params)?.map(|r| r.get(0))))
    }

    /// Pages of the fetch order from `sql` (fetch_seq, url, relevance, title).
    fn pages(&self, sql: &str, seq: i64, n: i64) -> Result<Vec<FetchedPage>> {
        self.rows(sql, &[&seq, &n], |r| FetchedPage {
            seq: r.get(0),
            url: r.get(1),
            relevance: r.get(2),
            title: r.get(3),
        })
    }

    /// (label, count) rows; a missing label reads "".
    fn labelled(&self, sql: &str) -> Result<Vec<(String, i64)>> {
        self.rows(sql, &[], |r| {
            (r.get::<_, Option<String>>(0).unwrap_or_default(), r.get(1))
        })
    }
}

use r2d2_postgres::postgres;

impl Reader for PgStore {
    fn counts(&self) -> Result<Counts> {
        self.with(|c| {
            let r = c.query_one(
                "SELECT count(*) FILTER (WHERE status = 2), count(*) FILTER (WHERE status = 0),
                   count(*) FILTER (WHERE status IN (3, 4)),
                   count(*) FILTER (WHERE status = 2 AND relevance >= 0.5) FROM doc",
                &[],
            )?;
            Ok(Counts {
                fetched: r.get(0),
                frontier: r.get(1),
                given_up: r.get(2),
                relevant: r.get(3),
            })
        })
    }
    fn relevance_in_fetch_order(&self) -> Result<Vec<f64>> {
        self.rows(
            "SELECT relevance FROM doc WHERE fetch_seq IS NOT NULL ORDER BY fetch_seq",
            &[],
            |r| r.get(0),
        )
    }
    fn hard_focus(&self) -> bool {
        self.meta("mode")
            .ok()
            .flatten()
            .is_some_and(|m| m == "Hard")
    }
    fn distilled_at(&self) -> Option<f64> {
        self.meta("distilled_at").ok()??.parse().ok()
    }
    fn last_fetch_seq(&self) -> Result<i64> {
        Ok(self
            .one("SELECT coalesce(max(fetch_seq), 0)::int8 FROM doc", &[])?
            .unwrap_or(0))
    }
    fn pages_since(&self, seq: i64, n: i64) -> Result<Vec<FetchedPage>> {
        self.pages(
            "SELECT fetch_seq, url, relevance, title FROM doc WHERE fetch_seq > $1
             ORDER BY fetch_seq LIMIT $2",
            seq,
            n,
        )
    }
    fn latest_pages(&self, n: i64) -> Result<Vec<FetchedPage>> {
        self.pages(
            "SELECT fetch_seq, url, relevance, title FROM doc WHERE fetch_seq > $1
             ORDER BY fetch_seq DESC LIMIT $2",
            0,
            n,
        )
    }
    fn ranked(&self, ranking: Ranking, n: Option<usize>) -> Result<Vec<RankedPage>> {
        let table = match ranking {
            Ranking::Hubs => "hub",
            Ranking::Authorities => "auth",
        };
        let sql = format!(
            "SELECT d.url, s.score, coalesce(d.title, ''), d.relevance, coalesce(t.path, ''),
               d.fetched_at,
               (SELECT count(*) FROM link l JOIN doc o ON o.oid = l.oid_dst
                WHERE l.oid_src = d.oid AND l.oid_dst <> d.oid AND o.status = 2),
               (SELECT count(*) FROM link l JOIN doc o ON o.oid = l.oid_dst
                WHERE l.oid_src = d.oid AND l.oid_dst <> d.oid AND o.status = 2
                  AND o.relevance >= 0.5)
             FROM (SELECT * FROM {table} WHERE score > 0 ORDER BY score DESC, oid LIMIT $1) s
             JOIN doc d ON d.oid = s.oid LEFT JOIN taxonomy t ON t.kcid = d.cid
             ORDER BY s.score DESC, s.oid"
        );
        self.rows(&sql, &[&n.map(limit)], |r| RankedPage {
            url: r.get(0),
            score: r.get(1),
            title: r.get(2),
            relevance: r.get(3),
            best_leaf: r.get(4),
            fetched_at: r.get(5),
            fetched_links: r.get(6),
            relevant_links: r.get(7),
        })
    }
    fn fetched_pages(&self) -> Result<Vec<FetchedRow>> {
        self.rows(
            "SELECT d.url, coalesce(d.title, ''), d.relevance, coalesce(t.path, ''), d.fetched_at
             FROM doc d LEFT JOIN taxonomy t ON t.kcid = d.cid
             WHERE d.status = $1 ORDER BY d.fetch_seq",
            &[&DocStatus::Fetched.code()],
            |r| FetchedRow {
                url: r.get(0),
                title: r.get(1),
                relevance: r.get(2),
                best_leaf: r.get(3),
                fetched_at: r.get(4),
            },
        )
    }
    fn fetch_log(&self) -> Result<Vec<(String, f64)>> {
        self.rows(
            "SELECT url, relevance FROM doc WHERE fetch_seq IS NOT NULL ORDER BY fetch_seq",
            &[],
            |r| (r.get(0), r.get(1)),
        )
    }
    fn url_of(&self, oid: i64) -> Result<Option<String>> {
        self.one("SELECT url FROM doc WHERE oid = $1", &[&oid])
    }
    fn fate_of(&self, url: &str) -> Result<Option<(DocStatus, Option<String>)>> {
        let rows = self.rows(
            "SELECT status, error FROM doc WHERE url = $1",
            &[&url],
            |r| (r.get::<_, i64>(0), r.get::<_, Option<String>>(1)),
        )?;
        Ok((rows.into_iter().next()).and_then(|(s, e)| Some((DocStatus::from_code(s)?, e))))
    }
    fn link_evidence(&self, oid: i64) -> Result<(i64, i64)> {
        self.with(|c| {
            let r = c.query_one(
                "SELECT count(*), count(*) FILTER (WHERE o.relevance >= 0.5) FROM link l
                 JOIN doc o ON o.oid = l.oid_dst
                 WHERE l.oid_src = $1 AND l.oid_dst <> $1 AND o.status = 2",
                &[&oid],
            )?;
            Ok((r.get(0), r.get(1)))
        })
    }
    fn depth_of(&self, oid: i64) -> Result<Option<i64>> {
        self.one("SELECT depth FROM doc WHERE oid = $1", &[&oid])
    }
    fn out_links(&self, oid: i64) -> Result<Vec<String>> {
        self.rows(
            "SELECT d.url FROM link l JOIN doc d ON d.oid = l.oid_dst WHERE l.oid_src = $1",
            &[&oid],
            |r| r.get(0),
        )
    }
    fn site_ratings(&self, n: usize) -> Result<Vec<SiteRow>> {
        self.rows(
            "SELECT s.host, count(*), count(*) FILTER (WHERE d.relevance >= 0.5)
             FROM doc d JOIN server s USING (sid)
             WHERE d.status = 2 GROUP BY s.sid, s.host HAVING count(*) >= 3
             ORDER BY 1.0 * count(*) FILTER (WHERE d.relevance >= 0.5) / count(*) DESC,
               count(*) DESC LIMIT $1",
            &[&limit(n)],
            |r| SiteRow {
                host: r.get(0),
                fetched: r.get(1),
                relevant: r.get(2),
            },
        )
    }
    fn census(&self) -> Result<Vec<(String, i64)>> {
        self.labelled(
            "SELECT coalesce(min(t.path), '(unclassified)'), count(*) FROM doc d
             LEFT JOIN taxonomy t ON t.kcid = d.cid
             WHERE d.status = 2 GROUP BY d.cid
             ORDER BY 2 DESC, coalesce(min(t.path), '(unclassified)') COLLATE \"C\"",
        )
    }
    fn linked_census(&self, min_r: f64) -> Result<Vec<(i64, u64)>> {
        self.rows(
            "SELECT d.cid, count(DISTINCT d.oid) FROM link l JOIN doc s ON s.oid = l.oid_src
             JOIN doc d ON d.oid = l.oid_dst
             WHERE s.status = 2 AND s.relevance >= $1 AND d.status = 2 AND d.cid IS NOT NULL
             GROUP BY d.cid",
            &[&min_r],
            |r| (r.get(0), u64::try_from(r.get::<_, i64>(1)).unwrap_or(0)),
        )
    }
    fn linked_examples(&self, min_r: f64, cid: i64, n: usize) -> Result<Vec<(String, String)>> {
        self.rows(
            "SELECT url, title FROM (SELECT DISTINCT d.url, coalesce(d.title, '') AS title,
               d.fetch_seq FROM link l
               JOIN doc s ON s.oid = l.oid_src JOIN doc d ON d.oid = l.oid_dst
               WHERE s.status = 2 AND s.relevance >= $1 AND d.status = 2 AND d.cid = $2) e
             ORDER BY fetch_seq LIMIT $3",
            &[&min_r, &cid, &limit(n)],
            |r| (r.get(0), r.get(1)),
        )
    }
    fn apprentice_evidence(&self) -> Result<Vec<ApprenticeEvidence>> {
        self.with(mining::apprentice_evidence)
    }
    fn errors(&self) -> Result<Vec<(String, i64)>> {
        self.labelled(
            "SELECT error, count(*) FROM doc WHERE status IN (3, 4) GROUP BY error
             ORDER BY 2 DESC, error COLLATE \"C\"",
        )
    }
    fn num_tries(&self) -> Result<Vec<(i64, i64)>> {
        self.rows(
            "SELECT num_tries, count(*) FROM doc GROUP BY num_tries ORDER BY 1",
            &[],
            |r| (r.get(0), r.get(1)),
        )
    }
    fn graph(&self) -> Result<(Vec<crate::distiller::Edge>, HashMap<i64, f64>)> {
        self.with(mining::graph)
    }
    fn fetched_text(&self, url: &str) -> Result<Option<String>> {
        let blob: Option<Option<Vec<u8>>> = self.one(
            "SELECT text FROM doc WHERE url = $1 AND status = 2",
            &[&url],
        )?;
        Ok(blob
            .flatten()
            .and_then(|b| crate::store::decompress_text(&b)))
    }
    fn fetched_texts(&self, after: Option<PageId>, n: usize) -> Result<Vec<PageText>> {
        self.with(|c| mining::fetched_texts(c, after, n))
    }
    fn model_bytes(&self) -> Result<Option<Vec<u8>>> {
        PgStore::model_bytes(self)
    }
    fn workers(&self) -> Result<Vec<WorkerRow>> {
        self.rows(
            "SELECT w.name, w.started_at, w.heartbeat, w.lease_until, w.checked_out,
               (SELECT count(*) FROM server s WHERE s.lease_owner = w.name), w.recorded
             FROM worker w ORDER BY w.name",
            &[],
            |r| WorkerRow {
                name: r.get(0),
                started_at: r.get(1),
                heartbeat: r.get(2),
                lease_until: r.get(3),
                checked_out: r.get(4),
                hosts: r.get(5),
                recorded: r.get(6),
            },
        )
    }
    fn search(&self, query: &str, n: usize, ranking: SearchRanking) -> Result<Vec<SearchHit>> {
        self.with(|c| search::search(c, query, n, ranking))
    }
    fn news_since(&self, since: f64, n: usize) -> Result<(Vec<NewsItem>, i64)> {
        self.with(|c| search::news_since(c, since, n))
    }
}

impl PgStore {
    /// Bytes the search index takes (its table and GIN index), and the whole database's bytes.
    pub fn search_index_bytes(&self) -> Result<(i64, i64)> {
        self.with(|c| search::index_bytes(c))
    }
}
