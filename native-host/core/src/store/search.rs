//! Searching the harvest: an SQLite FTS5 index over the fetched pages' titles and main text,
//! written in the same transaction that records a fetch (so search works during a crawl and
//! after a crash), and queries ranked by BM25 combined with the page's relevance R.
//!
//! All of the index's SQL lives here (PostgreSQL's `tsvector` twin is `postgres/search.rs`;
//! what both share, parsing and ranking, is [`super::query`]). User text is never spliced into
//! SQL: it is turned into an FTS5 query of quoted terms ([`fts_query`]) and bound as a
//! parameter.

use super::query::{self, SearchHit, SearchRanking, MARK_END, MARK_START, RANK_POOL};
use super::{decompress_text, DocStatus, Result, SqliteReader, StoreError};
use rusqlite::{params, Connection, OptionalExtension, Transaction};
use std::borrow::Borrow;
use std::cell::RefCell;

/// The index: one row per fetched page, its rowid the page's `doc.oid`. Porter stemming over
/// Unicode words, so "tuners" finds "tuner". Contentless: it keeps no copy of the text (the
/// page's compressed text in `doc` is the only one); a page's entry is deleted by its rowid
/// (`contentless_delete`, SQLite 3.43 and later) and snippets are made from `doc`'s text.
pub(super) const SCHEMA: &str = "CREATE VIRTUAL TABLE IF NOT EXISTS page_fts USING fts5(
  title, body, content = '', contentless_delete = 1,
  tokenize = 'porter unicode61 remove_diacritics 2')";

/// What tells this build's index from an older one that kept its own copy of the text.
const CURRENT_MARK: &str = "contentless_delete";

/// The table snippets are made in: the few pages shown, with their text, in memory.
const SNIPPET_SCHEMA: &str = "CREATE VIRTUAL TABLE shown USING fts5(
  title, body, tokenize = 'porter unicode61 remove_diacritics 2')";

/// Weight of a title match against a body match in BM25.
const TITLE_WEIGHT: f64 = 4.0;

/// How the index was made: `None` without one, else its `CREATE` statement.
fn index_sql(conn: &Connection) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'page_fts'",
            [],
            |r| r.get(0),
        )
        .optional()?)
}

/// True when the database has this build's search index (an older database has none, or one
/// that keeps its own copy of the text: both are rebuilt on the first writable open).
pub(super) fn has_index(conn: &Connection) -> Result<bool> {
    Ok(index_sql(conn)?.is_some_and(|s| s.contains(CURRENT_MARK)))
}

/// Puts a fetched page in the index, replacing what it had (first fetches and revisits).
pub(super) fn index_page(
    tx: &Transaction,
    oid: i64,
    title: Option<&str>,
    text: Option<&str>,
) -> Result<()> {
    // Only a page already in the index is deleted: first fetches, nearly all of a crawl's,
    // skip the delete.
    let indexed = tx
        .prepare_cached("SELECT 1 FROM page_fts_docsize WHERE id = ?1")?
        .exists([oid])?;
    if indexed {
        tx.prepare_cached("DELETE FROM page_fts WHERE rowid = ?1")?
            .execute([oid])?;
    }
    tx.prepare_cached("INSERT INTO page_fts(rowid, title, body) VALUES(?1, ?2, ?3)")?
        .execute(params![oid, title.unwrap_or(""), text.unwrap_or("")])?;
    Ok(())
}

/// Creates the index and fills it from every fetched page, in one transaction (a database
/// made before search): nothing is lost if it stops half way. `progress(done, total)` is told
/// every 1000 pages. Returns the pages indexed.
pub(super) fn build_index(
    conn: &mut Connection,
    mut progress: impl FnMut(usize, usize),
) -> Result<usize> {
    let tx = conn.transaction()?;
    // An index of an older build (with its own copy of the text) is replaced.
    tx.execute_batch("DROP TABLE IF EXISTS page_fts")?;
    tx.execute_batch(SCHEMA)?;
    let total: i64 = tx.query_row(
        "SELECT count(*) FROM doc WHERE status = ?1",
        [DocStatus::Fetched],
        |r| r.get(0),
    )?;
    let total = usize::try_from(total).unwrap_or(0);
    let mut done = 0;
    {
        let mut st = tx.prepare("SELECT oid, title, text FROM doc WHERE status = ?1")?;
        let mut rows = st.query([DocStatus::Fetched])?;
        let mut ins = tx.prepare("INSERT INTO page_fts(rowid, title, body) VALUES(?1, ?2, ?3)")?;
        while let Some(r) = rows.next()? {
            let oid: i64 = r.get(0)?;
            let title: Option<String> = r.get(1)?;
            let blob: Option<Vec<u8>> = r.get(2)?;
            let text = blob.as_deref().and_then(decompress_text);
            ins.execute(params![
                oid,
                title.unwrap_or_default(),
                text.unwrap_or_default()
            ])?;
            done += 1;
            if done % 1000 == 0 {
                progress(done, total);
            }
        }
    }
    tx.commit()?;
    progress(done, total);
    Ok(done)
}

/// Turns what a user typed into a safe FTS5 query: its terms ([`query::terms`]), each quoted
/// so no FTS5 operator or syntax error can come from the text, the last one a prefix when it
/// is still being typed.
pub fn fts_query(user: &str) -> Result<String> {
    let parts: Vec<String> = (query::terms(user)?.iter())
        // Words hold letters and digits only: nothing to escape.
        .map(|t| {
            format!(
                "\"{}\"{}",
                t.words.join(" "),
                if t.prefix { "*" } else { "" }
            )
        })
        .collect();
    Ok(parts.join(" "))
}

thread_local! {
    /// Each thread's in-memory table for snippets (made once, emptied after each use).
    static SHOWN: RefCell<Option<Connection>> = const { RefCell::new(None) };
}

/// A snippet of each page's text around the words `fts` matches in it, the matched words
/// between [`MARK_START`] and [`MARK_END`]: FTS5's own `snippet()`, over a table in memory
/// holding only the pages shown, with the index's tokenizer (so the words marked are the
/// words that matched, stems and prefixes included). `pages` are (title, text); the snippets
/// come in their order.
fn snippets(fts: &str, pages: &[(String, String)]) -> Result<Vec<String>> {
    if pages.is_empty() {
        return Ok(Vec::new());
    }
    SHOWN.with(|cell| {
        let mut cell = cell.borrow_mut();
        if cell.is_none() {
            let conn = Connection::open_in_memory()?;
            conn.execute_batch(SNIPPET_SCHEMA)?;
            *cell = Some(conn);
        }
        let conn = cell.as_mut().expect("just made");
        let tx = conn.transaction()?;
        let mut out = vec![String::new(); pages.len()];
        {
            let mut ins =
                tx.prepare_cached("INSERT INTO shown(rowid, title, body) VALUES(?1, ?2, ?3)")?;
            for (i, (title, text)) in pages.iter().enumerate() {
                ins.execute(params![i as i64, title, text])?;
            }
            let mut st = tx.prepare_cached(
                "SELECT rowid, snippet(shown, 1, ?2, ?3, '…', 16) FROM shown WHERE shown MATCH ?1",
            )?;
            let rows = st.query_map(params![fts, MARK_START, MARK_END], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?))
            })?;
            for row in rows {
                let (i, snippet) = row?;
                if let Some(slot) = usize::try_from(i).ok().and_then(|i| out.get_mut(i)) {
                    *slot = snippet.unwrap_or_default();
                }
            }
        }
        // Rolled back: the table is empty again for the next query.
        drop(tx);
        Ok(out)
    })
}

impl<C: Borrow<Connection>> SqliteReader<C> {
    /// The fetched pages matching `query` (as a user typed it), best first, at most `limit`.
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        ranking: SearchRanking,
    ) -> Result<Vec<SearchHit>> {
        let fts = fts_query(query)?;
        if index_sql(self.conn())?.is_none() {
            return Err(StoreError::Schema(
                "this crawl database has no search index yet; open it with this version of forager \
                 (forager search builds it) and try again"
                    .into(),
            ));
        }
        let limit = limit.min(1000);
        // BM25 is computed for at most RANK_POOL matches, streamed newest first by FTS5 itself,
        // so an unselective query costs no more than a selective one. The combination is
        // computed here: ln R in SQL would need `log_relevance`, stored after the page's text,
        // which SQLite reaches only by walking the text's overflow pages.
        let mut st = self.conn().prepare_cached(
            "SELECT c.oid, c.b, d.relevance FROM (
               SELECT rowid AS oid, -bm25(page_fts, ?2, 1.0) AS b FROM page_fts
               WHERE page_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?3) c
             JOIN doc d ON d.oid = c.oid WHERE d.status = 2",
        )?;
        let scored: Vec<(i64, f64, f64)> = st
            .query_map(params![fts, TITLE_WEIGHT, RANK_POOL], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?
            .collect::<std::result::Result<_, _>>()?;
        let top = query::best(scored, ranking, limit);
        let mut page = self.conn().prepare_cached(
            "SELECT d.url, coalesce(d.title, ''), d.relevance, coalesce(t.path, ''), d.fetched_at,
               d.text
             FROM doc d LEFT JOIN taxonomy t ON t.kcid = d.cid WHERE d.oid = ?1",
        )?;
        let mut hits = Vec::with_capacity(top.len());
        let mut texts = Vec::with_capacity(top.len());
        for (oid, text_score) in top {
            let row = page
                .query_row([oid], |r| {
                    let text: Option<Vec<u8>> = r.get(5)?;
                    let hit = SearchHit {
                        url: r.get(0)?,
                        title: r.get(1)?,
                        relevance: r.get(2)?,
                        best_leaf: r.get(3)?,
                        fetched_at: r.get(4)?,
                        snippet: String::new(),
                        text_score,
                    };
                    Ok((hit, text))
                })
                .optional()?;
            if let Some((hit, text)) = row {
                let text = text
                    .as_deref()
                    .and_then(decompress_text)
                    .unwrap_or_default();
                texts.push((hit.title.clone(), text));
                hits.push(hit);
            }
        }
        let snippets = snippets(&fts, &texts)?;
        for (hit, snippet) in hits.iter_mut().zip(snippets) {
            hit.snippet = snippet;
        }
        Ok(hits)
    }

    /// Bytes the search index takes in the database file (its shadow tables), and the whole
    /// file's bytes.
    pub fn search_index_bytes(&self) -> Result<(i64, i64)> {
        let index = self.conn().query_row(
            "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE 'page_fts%'",
            [],
            |r| r.get(0),
        )?;
        let all =
            self.conn()
                .query_row("SELECT coalesce(sum(pgsize), 0) FROM dbstat", [], |r| {
                    r.get(0)
                })?;
        Ok((index, all))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_becomes_quoted_terms() {
        assert_eq!(
            fts_query("antenna tuner ").unwrap(),
            "\"antenna\" \"tuner\""
        );
        assert_eq!(fts_query("antenna tune").unwrap(), "\"antenna\" \"tune\"*");
        assert_eq!(fts_query("antenna tun").unwrap(), "\"antenna\" \"tun\"");
        assert_eq!(
            fts_query("\"ip address\" NOT AND").unwrap(),
            "\"ip address\" \"NOT\" \"AND\""
        );
        // Unbalanced quote: the phrase closes at the end.
        assert_eq!(fts_query("\"tcp ip").unwrap(), "\"tcp ip\"");
        // Operators and punctuation are only separators.
        assert_eq!(
            fts_query("a* (b) NEAR/3 c:d ^e").unwrap(),
            "\"a\" \"b\" \"NEAR 3\" \"c d\" \"e\""
        );
        assert_eq!(fts_query("x\u{0}y\u{7}").unwrap(), "\"x\" \"y\"");
        assert!(matches!(
            fts_query("  \"\" * ()"),
            Err(StoreError::BadQuery(_))
        ));
        let long = "a".repeat(10_000);
        let e = fts_query(&long).unwrap_err().to_string();
        assert!(e.contains("longer than"), "{e}");
        let many = "w ".repeat(40);
        assert!(fts_query(&many)
            .unwrap_err()
            .to_string()
            .contains("at most"));
    }

    use crate::store::{temp_db, NewUrl, Outcome, Reader as _, Store};

    fn seed(url: &str) -> NewUrl {
        NewUrl::seed(&url::Url::parse(url).unwrap())
    }

    /// Fetches `pages` (url, R, title, text) into a new store.
    fn crawl(path: &std::path::Path, pages: &[(&str, f64, &str, &str)]) -> Store {
        let mut st = Store::open(path).unwrap();
        let seeds: Vec<NewUrl> = pages.iter().map(|p| seed(p.0)).collect();
        st.add_seeds(&seeds).unwrap();
        let work = st.checkout(pages.len()).unwrap();
        let batch: Vec<Outcome> = (pages.iter())
            .map(|(u, r, t, x)| Outcome {
                oid: work.iter().find(|w| w.url == *u).unwrap().oid,
                status: DocStatus::Fetched,
                relevance: *r,
                log_relevance: r.ln(),
                title: Some((*t).into()),
                text: Some((*x).into()),
                content_hash: Some(format!("{:x}", super::super::fnv64(x))),
                ..Outcome::default()
            })
            .collect();
        st.record(&batch).unwrap();
        st
    }

    // What the index finds and how it ranks is the door's contract, run on every back-end
    // (`contract/search.rs`); here, what only SQLite has: its upgrade and its size.
    use crate::store::contract::SEARCH_PAGES as PAGES;

    #[test]
    fn a_database_made_before_search_is_indexed_on_first_open_losing_nothing() {
        let path = temp_db("search", "migrate");
        let st = crawl(&path, &PAGES);
        st.conn()
            .execute_batch(
                "DROP TABLE page_fts; DROP INDEX doc_first_fetched; DROP INDEX doc_changed;
                 ALTER TABLE doc DROP COLUMN first_fetched_at;
                 ALTER TABLE doc DROP COLUMN changed_at; UPDATE meta SET value = 1 WHERE key = 'schema';",
            )
            .unwrap();
        let before = st.read().fetched_pages().unwrap();
        drop(st);
        // A reader of the old file is told what to do, not given an SQL error.
        let ro = crate::store::ReadOnly::open(&path).unwrap();
        let e = ro
            .read()
            .search("coils", 10, SearchRanking::Combined)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no search index"), "{e}");
        drop(ro);
        assert!(Store::upgrade(&path).unwrap());
        assert!(!Store::upgrade(&path).unwrap(), "upgraded once");
        let ro = crate::store::ReadOnly::open(&path).unwrap();
        let db = ro.read();
        assert_eq!(db.fetched_pages().unwrap(), before);
        assert_eq!(
            db.search("coils", 10, SearchRanking::Combined)
                .unwrap()
                .len(),
            2
        );
        let (news, _) = db.news_since(0.0, 10).unwrap();
        assert_eq!(
            news.len(),
            2,
            "R >= 0.5 pages count as new from their last fetch"
        );
        let (index, all) = db.search_index_bytes().unwrap();
        assert!(index > 0 && index < all, "{index} of {all}");
    }
}
