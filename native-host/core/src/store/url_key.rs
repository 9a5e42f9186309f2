//! A URL's key in the crawl database (#27): `doc.rnd`, the 63-bit FNV-1a hash of the canonical
//! URL, indexed (`doc_url_key`), instead of a UNIQUE index on the URL's text. The index holds
//! 8 bytes of hash and the row id per URL (about a quarter of the text index, which was 434 MB
//! at a million fetched pages): the index every new link looks up stays cache-sized for
//! longer. The hash only narrows the search: a URL's row is the one whose stored text equals
//! it, so two URLs with one hash stay two rows. The one writer (`Store`'s lock) looks before
//! it inserts, which keeps URLs unique without a UNIQUE constraint.

use super::{fnv64, news, Result, SCHEMA};
use rusqlite::{Connection, OptionalExtension};

/// The key of `url`: also the frontier's stable pseudo-random tie-breaker, as it has been
/// since the first schema (SQLite and PostgreSQL compute it alike), so every stored row
/// already carries its key.
pub(super) fn url_key(url: &str) -> i64 {
    (fnv64(url) >> 1) as i64
}

/// The index of URL keys.
const INDEX: &str = "CREATE INDEX IF NOT EXISTS doc_url_key ON doc(rnd)";

/// The UNIQUE index on `doc.url` of a database made before the URL key (SQLite names it).
const OLD_UNIQUE: &str = "sqlite_autoindex_doc_1";

/// Whether the database has the URL key and not the text index it replaces.
pub(super) fn is_current(conn: &Connection) -> Result<bool> {
    let name = |n: &str| -> Result<bool> {
        Ok(conn
            .query_row(
                "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?1",
                [n],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    };
    Ok(name("doc_url_key")? && !name(OLD_UNIQUE)?)
}

/// Brings `doc` to the URL key: a database made before it has its `doc` table rebuilt once
/// without the UNIQUE constraint on `url` (SQLite cannot drop it otherwise), rows and ids
/// kept, with a progress line; then the key's index is made.
pub(super) fn migrate(conn: &mut Connection) -> Result<()> {
    let old = conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?1",
            [OLD_UNIQUE],
            |_| Ok(()),
        )
        .optional()?
        .is_some();
    if old {
        let urls: i64 = conn.query_row("SELECT count(*) FROM doc", [], |r| r.get(0))?;
        eprintln!("forager: moving the crawl's {urls} URLs to a compact key (once)");
        rebuild_doc(conn)?;
        // The indexes of `doc` went with the old table: made again by the schema.
        conn.execute_batch(SCHEMA)?;
        news::migrate(conn)?;
    }
    conn.execute_batch(INDEX)?;
    Ok(())
}

/// Copies `doc` into a table of this build's definition, in row id order, and puts it in the
/// old one's place (SQLite's way to change a column's constraints), in one transaction.
fn rebuild_doc(conn: &mut Connection) -> Result<()> {
    let tx = conn.transaction()?;
    let create = SCHEMA
        .split(';')
        .find(|s| s.contains("CREATE TABLE IF NOT EXISTS doc("))
        .expect("the schema defines doc")
        .replace("IF NOT EXISTS doc(", "doc_rebuilt(");
    tx.execute_batch(&create)?;
    let columns: Vec<String> = {
        let mut st = tx.prepare("SELECT name FROM pragma_table_info('doc_rebuilt')")?;
        let names = st.query_map([], |r| r.get(0))?;
        names.collect::<rusqlite::Result<_>>()?
    };
    let list = columns.join(", ");
    tx.execute_batch(&format!(
        "INSERT INTO doc_rebuilt({list}) SELECT {list} FROM doc ORDER BY oid;
         DROP TABLE doc;
         ALTER TABLE doc_rebuilt RENAME TO doc;"
    ))?;
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{temp_db, NewUrl, Store};

    /// `doc` and its indexes as main made them before the URL key (2026-11-26, dc78cf9).
    const MAIN_DOC: &str = "
CREATE TABLE doc(
  oid INTEGER PRIMARY KEY, url TEXT UNIQUE NOT NULL, sid INTEGER NOT NULL REFERENCES server(sid),
  num_tries INTEGER NOT NULL DEFAULT 0, priority INTEGER NOT NULL DEFAULT 0,
  relevance REAL NOT NULL DEFAULT 0, cid INTEGER, status INTEGER NOT NULL DEFAULT 0,
  http_status INTEGER, depth INTEGER NOT NULL DEFAULT 0, fetched_at REAL, fetch_seq INTEGER,
  content_hash TEXT, title TEXT, text BLOB, error TEXT, log_relevance REAL,
  final_url TEXT, redirects TEXT, revisits INTEGER NOT NULL DEFAULT 0,
  changes INTEGER NOT NULL DEFAULT 0, rnd INTEGER NOT NULL,
  first_fetched_at REAL, changed_at REAL);
CREATE INDEX frontier ON doc(num_tries ASC, relevance DESC, priority ASC, rnd)
  WHERE status = 0;
CREATE INDEX doc_fetch_seq ON doc(fetch_seq) WHERE fetch_seq IS NOT NULL;
CREATE INDEX doc_given_up ON doc(status) WHERE status IN (3, 4);
CREATE TABLE server(
  sid INTEGER PRIMARY KEY, host TEXT UNIQUE NOT NULL, crawled INTEGER NOT NULL DEFAULT 0);
INSERT INTO server(sid, host, crawled) VALUES(1, 'a.test', 1);
CREATE TABLE meta(key TEXT PRIMARY KEY, value);
INSERT INTO meta(key, value) VALUES('schema', 2);";

    fn seed(u: &str, score: f64) -> NewUrl {
        NewUrl {
            score,
            ..NewUrl::seed(&url::Url::parse(u).unwrap())
        }
    }

    /// A database of main's schema opens, loses no row or id, drops the text index, and its
    /// URLs stay unique: an old URL enqueued again raises its row, a new one is added.
    #[test]
    fn a_database_of_the_text_index_moves_to_the_url_key_losing_nothing() {
        let path = temp_db("key", "old");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(MAIN_DOC).unwrap();
            let mut ins = conn
                .prepare(
                    "INSERT INTO doc(oid, url, sid, relevance, status, rnd, fetch_seq, text)
                     VALUES(?1, ?2, 1, ?3, ?4, ?5, ?6, ?7)",
                )
                .unwrap();
            for i in 0..50i64 {
                let u = format!("http://a.test/p{i}");
                let fetched = i % 5 == 0;
                ins.execute(rusqlite::params![
                    i * 3 + 1,
                    u,
                    0.01 * i as f64,
                    if fetched { 2 } else { 0 },
                    url_key(&u),
                    fetched.then_some(i),
                    fetched.then(|| vec![1u8, 2, 3]),
                ])
                .unwrap();
            }
        }
        let mut st = Store::open(&path).unwrap();
        assert!(is_current(st.conn()).unwrap());
        let rows = |st: &Store| -> Vec<(i64, String, i64, Option<Vec<u8>>)> {
            let mut q = st
                .conn()
                .prepare("SELECT oid, url, status, text FROM doc ORDER BY oid")
                .unwrap();
            let r = q
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .unwrap();
            r.map(|r| r.unwrap()).collect()
        };
        let after = rows(&st);
        assert_eq!(after.len(), 50);
        assert_eq!(after[7].0, 22);
        assert_eq!(after[7].1, "http://a.test/p7");
        assert_eq!(after[10].3, Some(vec![1, 2, 3]));
        // p7 (unvisited, 0.07) rises; p10 (fetched) keeps its relevance; p99 is new.
        st.add_seeds(&[
            seed("http://a.test/p7", 0.9),
            seed("http://a.test/p10", 0.9),
            seed("http://a.test/p99", 0.5),
        ])
        .unwrap();
        let rel = |u: &str| -> f64 {
            st.conn()
                .query_row("SELECT relevance FROM doc WHERE url = ?1", [u], |r| {
                    r.get(0)
                })
                .unwrap()
        };
        assert_eq!(rel("http://a.test/p7"), 0.9);
        assert_eq!(rel("http://a.test/p10"), 0.1);
        assert_eq!(rel("http://a.test/p99"), 0.5);
        assert_eq!(rows(&st).len(), 51);
        // The frontier's index came back with the table: checkout is served in its order.
        let first = st.checkout(1).unwrap().remove(0);
        assert_eq!(first.url, "http://a.test/p7");
        drop(st);
        // Opened again, nothing more to do.
        let st = Store::open(&path).unwrap();
        assert_eq!(rows(&st).len(), 51);
        drop(st);
        for ext in ["", "-wal", "-shm", ".lock"] {
            let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
        }
    }

    /// Two URLs of one key are two rows, each found by its text: the hash is never trusted.
    #[test]
    fn urls_sharing_a_key_stay_apart() {
        let path = temp_db("key", "shared-key");
        let mut st = Store::open(&path).unwrap();
        st.add_seeds(&[seed("http://a.test/x", 0.3), seed("http://a.test/y", 0.4)])
            .unwrap();
        // x (the lower row id, found first) gets the key of y, as a collision would.
        st.conn()
            .execute(
                "UPDATE doc SET rnd = ?1 WHERE url = 'http://a.test/x'",
                [url_key("http://a.test/y")],
            )
            .unwrap();
        st.caches = crate::store::seen::Caches::new(4, 4, fnv64);
        st.add_seeds(&[seed("http://a.test/y", 0.9)]).unwrap();
        let got: Vec<(String, f64)> = {
            let mut q = st
                .conn()
                .prepare("SELECT url, relevance FROM doc ORDER BY url")
                .unwrap();
            let r = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
            r.map(|r| r.unwrap()).collect()
        };
        assert_eq!(
            got,
            vec![
                ("http://a.test/x".to_owned(), 0.3),
                ("http://a.test/y".to_owned(), 0.9)
            ]
        );
        drop(st);
        for ext in ["", "-wal", "-shm", ".lock"] {
            let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
        }
    }
}
