//! The crawl database's side for the mining programs: the graph the distiller reads and the
//! scores it writes back, the apprentice's training instances and its frontier re-scoring.

use super::features::FeatureDict;
use super::{now, DocStatus, InLink, InLinkReader, PageId, Result};
use super::{ScoreChange, Store};
use rusqlite::{params, Connection, OpenFlags};
use std::cell::RefCell;
use std::collections::HashMap;

impl Store {
    /// A page of links into frontier URLs, in (target, source) order after `after`: what
    /// re-scoring the frontier reads (the policy decides the scores).
    pub fn frontier_in_links(
        &self,
        after: Option<(PageId, PageId)>,
        limit: usize,
    ) -> Result<Vec<InLink>> {
        // This door's dictionary holds every value its own writes stored.
        frontier_in_links_of(&self.conn, after, limit, &mut |b| {
            Ok(self.features.decode(b))
        })
    }

    /// A reader of the links into frontier URLs on a read-only connection of its own (the
    /// re-score beside the crawl; WAL lets it read while this door writes); `None` for a
    /// database with no file.
    pub fn in_link_reader(&self) -> Result<Option<Box<dyn InLinkReader>>> {
        let Some(path) = self.conn.path().filter(|p| !p.is_empty()) else {
            return Ok(None);
        };
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        let features = RefCell::new(FeatureDict::load(&conn)?);
        Ok(Some(Box::new(LinkReader(conn, features))))
    }

    /// Sets each change's new score where its unvisited URL still holds the score it was read
    /// with, in one transaction; returns rows updated.
    pub fn swap_frontier_scores(&mut self, changes: &[ScoreChange]) -> Result<usize> {
        let tx = self.conn.transaction()?;
        let mut n = 0;
        {
            let mut up = tx.prepare_cached(
                "UPDATE doc SET relevance = ?3 WHERE oid = ?1 AND status = ?4 AND relevance = ?2",
            )?;
            for (oid, old, new) in changes {
                n += up.execute(params![oid, old, new, DocStatus::Unvisited])?;
            }
        }
        tx.commit()?;
        self.caches.rows_changed();
        Ok(n)
    }

    /// Sets the frontier scores of unvisited URLs, in one transaction; returns rows updated.
    pub fn set_frontier_scores(&mut self, scores: &[(PageId, f64)]) -> Result<usize> {
        let tx = self.conn.transaction()?;
        let mut n = 0;
        {
            let mut up =
                tx.prepare_cached("UPDATE doc SET relevance = ?2 WHERE oid = ?1 AND status = ?3")?;
            for (oid, s) in scores {
                n += up.execute(params![oid, s, DocStatus::Unvisited])?;
            }
        }
        tx.commit()?;
        self.caches.rows_changed();
        Ok(n)
    }

    /// The row ids of those of `urls` that are unvisited, by position.
    pub fn frontier_ids(&self, urls: &[String]) -> Result<Vec<Option<PageId>>> {
        let mut st = self
            .conn
            .prepare_cached("SELECT oid FROM doc WHERE rnd = ?1 AND url = ?2 AND status = ?3")?;
        let mut out = Vec::with_capacity(urls.len());
        for u in urls {
            let key = super::url_key::url_key(u);
            let id = st.query_row(params![key, u, DocStatus::Unvisited], |r| r.get(0));
            out.push(rusqlite::OptionalExtension::optional(id)?);
        }
        Ok(out)
    }

    /// The apprentice's evidence in this crawl (see [`super::Reader::apprentice_evidence`]).
    pub fn apprentice_evidence(&self) -> Result<Vec<super::ApprenticeEvidence>> {
        super::Reader::apprentice_evidence(&self.read())
    }

    /// An apprentice trained on every instance of this crawl (offline training).
    pub fn trained_apprentice(&self) -> Result<forager_classifier::apprentice::Apprentice> {
        Ok(crate::crawl::policy::trained_apprentice(
            self.apprentice_evidence()?,
        ))
    }

    /// The crawl graph for the distiller: links between fetched pages (same-site links too:
    /// the distiller weighs them), and R of every fetched page.
    pub fn graph(&self) -> Result<(Vec<crate::distiller::Edge>, HashMap<i64, f64>)> {
        graph_of(&self.conn)
    }

    /// Replaces the stored hub and authority scores with a new distillation.
    pub fn save_distillation(&mut self, s: &crate::distiller::Scores) -> Result<()> {
        let tx = self.conn.transaction()?;
        let at = now();
        tx.execute("DELETE FROM hub", [])?;
        tx.execute("DELETE FROM auth", [])?;
        {
            let mut h = tx.prepare("INSERT INTO hub(oid, score, run_at) VALUES(?1, ?2, ?3)")?;
            for (oid, score) in &s.hubs {
                h.execute(params![oid, score, at])?;
            }
            let mut a = tx.prepare("INSERT INTO auth(oid, score, run_at) VALUES(?1, ?2, ?3)")?;
            for (oid, score) in &s.authorities {
                a.execute(params![oid, score, at])?;
            }
        }
        tx.execute(
            "INSERT INTO meta(key, value) VALUES('distilled_at', ?1)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [at],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The distiller's feedback (focused-crawling-1999 §5.7): unvisited out-neighbours on
    /// other servers of the `top` best hubs get at least `score` (the policy's boost); returns
    /// how many.
    pub fn boost_hub_neighbours(&mut self, top: usize, score: f64) -> Result<usize> {
        self.caches.rows_changed();
        Ok(self.conn.execute(
            "UPDATE doc SET relevance = max(relevance, ?2) WHERE status = 0 AND oid IN (
               SELECT l.oid_dst FROM link l
               WHERE l.sid_src <> l.sid_dst
                 AND l.oid_src IN (SELECT oid FROM hub ORDER BY score DESC LIMIT ?1))",
            params![top as i64, score],
        )?)
    }

    /// "Crawl more from here": the unvisited out-links of the fetched page `url` (on any
    /// server) get at least `score`, like the distiller's feedback; returns how many.
    pub fn boost_out_links(&mut self, url: &str, score: f64) -> Result<usize> {
        self.caches.rows_changed();
        Ok(self.conn.execute(
            "UPDATE doc SET relevance = max(relevance, ?2) WHERE status = 0 AND oid IN (
               SELECT l.oid_dst FROM link l
               WHERE l.oid_src = (SELECT oid FROM doc WHERE rnd = ?3 AND url = ?1 AND status = 2))",
            params![url, score, super::url_key::url_key(url)],
        )?)
    }
}

/// The links into frontier URLs read on a connection of their own, with the features'
/// dictionary as that connection last read it (it catches up when a list needs newer values).
struct LinkReader(Connection, RefCell<FeatureDict>);

impl InLinkReader for LinkReader {
    fn frontier_in_links(
        &self,
        after: Option<(PageId, PageId)>,
        limit: usize,
    ) -> Result<Vec<InLink>> {
        let mut dict = self.1.borrow_mut();
        frontier_in_links_of(&self.0, after, limit, &mut |b| dict.decode_on(&self.0, b))
    }
}

/// Decodes a stored feature list: `None` for a damaged one.
type Decode<'a> = dyn FnMut(&[u8]) -> Result<Option<Vec<u32>>> + 'a;

/// A page of links into frontier URLs of the crawl database on `conn`, in (target, source)
/// order after `after`.
fn frontier_in_links_of(
    conn: &Connection,
    after: Option<(PageId, PageId)>,
    limit: usize,
    decode: &mut Decode<'_>,
) -> Result<Vec<InLink>> {
    let after = after.map_or((i64::MIN, i64::MIN), |(d, s)| (d.raw(), s.raw()));
    // CROSS JOIN keeps `doc` (by row id) the outer loop and `link` (by its target index,
    // in source order) the inner one: pages never sort, and only the links into unvisited
    // URLs are read (#27: walking every link and dropping those into fetched pages was 35%
    // of a guided soft crawl's CPU on FOLDOC).
    let mut st = conn.prepare_cached(
        "SELECT d.oid, d.relevance, l.oid_src, s.status, s.relevance, l.weight, l.features
         FROM doc d CROSS JOIN link l INDEXED BY link_dst ON l.oid_dst = d.oid
         CROSS JOIN doc s ON s.oid = l.oid_src
         WHERE d.oid >= ?1 AND d.status = ?3 AND (d.oid > ?1 OR l.oid_src > ?2)
         ORDER BY d.oid, l.oid_src LIMIT ?4",
    )?;
    let rows = st.query_map(
        params![after.0, after.1, DocStatus::Unvisited, limit as i64],
        |r| {
            let fetched = r.get::<_, DocStatus>(3)? == DocStatus::Fetched;
            let features: Option<Vec<u8>> = r.get(6)?;
            let link = InLink {
                dst: r.get(0)?,
                dst_score: r.get(1)?,
                src: r.get(2)?,
                src_relevance: if fetched { Some(r.get(4)?) } else { None },
                weight: r.get(5)?,
                features: None,
            };
            Ok((link, features))
        },
    )?;
    let rows: Vec<(InLink, Option<Vec<u8>>)> = rows.collect::<std::result::Result<_, _>>()?;
    rows.into_iter()
        .map(|(mut link, b)| {
            if let Some(b) = b {
                link.features = decode(&b)?;
            }
            Ok(link)
        })
        .collect()
}

/// The crawl graph of a crawl database (also read-only connections, for reports).
pub fn graph_of(conn: &Connection) -> Result<(Vec<crate::distiller::Edge>, HashMap<i64, f64>)> {
    let mut rel = HashMap::new();
    {
        let mut st = conn.prepare("SELECT oid, relevance FROM doc WHERE status = 2")?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            rel.insert(r.get(0)?, r.get(1)?);
        }
    }
    let mut st = conn.prepare(
        "SELECT l.oid_src, l.oid_dst, l.sid_src, l.sid_dst FROM link l
         JOIN doc d ON d.oid = l.oid_dst WHERE d.status = 2",
    )?;
    let rows = st.query_map([], |r| {
        Ok(crate::distiller::Edge {
            src: r.get(0)?,
            dst: r.get(1)?,
            src_site: r.get(2)?,
            dst_site: r.get(3)?,
        })
    })?;
    Ok((rows.collect::<std::result::Result<_, _>>()?, rel))
}
