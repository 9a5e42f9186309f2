//! The crawl database (focused-crawling-1999 §4.1): one SQLite file per crawl, in WAL mode,
//! with the paper's relational design so its SQL works as written.
//!
//! The frontier is the unvisited rows of `doc`, served by a partial multi-column index in the
//! order (num_tries asc, relevance desc, priority asc, rnd): selection never sorts.

mod aside;
mod checkpointer;
pub mod contract;
pub mod copy;
mod crawl_db;
mod features;
mod frontier;
mod judge;
mod lease;
mod locator;
mod mining;
mod news;
mod page_cache;
pub mod postgres;
mod query;
mod read;
mod record;
mod search;
mod seen;
mod shared;
mod url_key;

use seen::Caches;

pub use crawl_db::{CrawlDb, InLink, InLinkReader, PageId, PageText, ScoreChange, PAGE};
pub use judge::{fetched_text_of, TextSample, Verdict};
pub use lease::{WorkerRow, LEASE, LOCAL_WORKER, RENEW_EVERY};
pub use locator::{open, open_read, upgrade, Locator};
pub use mining::graph_of;
pub use news::{NewsItem, NewsKind, NEWS_MIN_RELEVANCE};
pub use query::{
    terms as query_terms, SearchHit, SearchRanking, Term, MARK_END, MARK_START, MAX_QUERY_CHARS,
    MAX_QUERY_TERMS,
};
pub use read::{Counts, FetchedRow, RankedPage, Ranking, ReadOnly, Reader, SiteRow, SqliteReader};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
pub use search::fts_query;
pub use shared::{JobRun, SharedDb, Versioned};
use std::path::Path;
use thiserror::Error;

/// Errors of the crawl database, whatever its back-end: a back-end's own error is carried
/// inside [`StoreError::Backend`], never named by the door.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The back-end (SQLite, a database server) failed.
    #[error("crawl database: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The locator names a back-end this build cannot open.
    #[error("crawl database {0}: {1}")]
    Unsupported(String, &'static str),
    /// The file is not a Forager crawl database of a version this build reads.
    #[error("crawl database: {0}")]
    Schema(String),
    /// Another crawl (this process or another) is writing the database: one writer only.
    #[error("crawl database {0} is in use by another crawl (it may still be stopping); try again when it has stopped")]
    Locked(String),
    /// A file of the crawl database could not be moved.
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    /// The database's lock file could not be opened.
    #[error("crawl database lock {0}: {1}")]
    Lock(String, std::io::Error),
    /// A search query that cannot be searched for (the message says why, in plain words).
    #[error("{0}")]
    BadQuery(String),
    /// What was asked would lose or mix up a crawl (the message says why and what to do).
    #[error("crawl database: {0}")]
    Refused(String),
}

/// Result type of this module.
pub type Result<T> = std::result::Result<T, StoreError>;

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Backend(Box::new(e))
    }
}

/// `doc.status`: where a URL is in its life. Stored as the paper's small integers (0 to 4),
/// so `forager sql` queries such as `status = 2` keep working.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DocStatus {
    /// In the frontier.
    #[default]
    Unvisited,
    /// Checked out to a fetch worker (reset to unvisited on resume).
    InFlight,
    /// Fetched and recorded.
    Fetched,
    /// Fetch failed (kind in `error`).
    Failed,
    /// Excluded without fetching (robots.txt, trap limits, host page cap).
    Excluded,
}

impl DocStatus {
    /// Every status, by its stored code.
    const ALL: [DocStatus; 5] = [
        DocStatus::Unvisited,
        DocStatus::InFlight,
        DocStatus::Fetched,
        DocStatus::Failed,
        DocStatus::Excluded,
    ];

    /// The stored code (the paper's schema).
    pub fn code(self) -> i64 {
        self as i64
    }

    /// The status stored as `code`, if it is one.
    pub fn from_code(code: i64) -> Option<DocStatus> {
        usize::try_from(code)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
    }
}

impl rusqlite::ToSql for DocStatus {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.code().into())
    }
}

impl rusqlite::types::FromSql for DocStatus {
    fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        let code = v.as_i64()?;
        DocStatus::from_code(code).ok_or(rusqlite::types::FromSqlError::OutOfRange(code))
    }
}

/// Version 2 added the search index (`page_fts`) and `doc.first_fetched_at`/`changed_at`;
/// version 3 finds URLs by their key (`doc.rnd`, indexed: [`url_key`]) instead of a UNIQUE
/// index on `doc.url`; version 4 stores link features through a dictionary ([`features`]).
/// An older database is upgraded when opened for writing.
const SCHEMA_VERSION: i64 = 4;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value);
CREATE TABLE IF NOT EXISTS server(
  sid INTEGER PRIMARY KEY, host TEXT UNIQUE NOT NULL, crawled INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS doc(
  oid INTEGER PRIMARY KEY, url TEXT NOT NULL, sid INTEGER NOT NULL REFERENCES server(sid),
  num_tries INTEGER NOT NULL DEFAULT 0, priority INTEGER NOT NULL DEFAULT 0,
  relevance REAL NOT NULL DEFAULT 0, cid INTEGER, status INTEGER NOT NULL DEFAULT 0,
  http_status INTEGER, depth INTEGER NOT NULL DEFAULT 0, fetched_at REAL, fetch_seq INTEGER,
  content_hash TEXT, title TEXT, text BLOB, error TEXT, log_relevance REAL,
  final_url TEXT, redirects TEXT, revisits INTEGER NOT NULL DEFAULT 0,
  changes INTEGER NOT NULL DEFAULT 0, rnd INTEGER NOT NULL,
  first_fetched_at REAL, changed_at REAL);
CREATE INDEX IF NOT EXISTS frontier ON doc(num_tries ASC, relevance DESC, priority ASC, rnd)
  WHERE status = 0;
CREATE INDEX IF NOT EXISTS doc_fetch_seq ON doc(fetch_seq) WHERE fetch_seq IS NOT NULL;
CREATE INDEX IF NOT EXISTS doc_given_up ON doc(status) WHERE status IN (3, 4);
CREATE TABLE IF NOT EXISTS link(
  oid_src INTEGER NOT NULL, oid_dst INTEGER NOT NULL, sid_src INTEGER NOT NULL,
  sid_dst INTEGER NOT NULL, anchor TEXT, features BLOB, weight REAL NOT NULL DEFAULT 1,
  PRIMARY KEY(oid_src, oid_dst)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS link_dst ON link(oid_dst);
CREATE TABLE IF NOT EXISTS feature(id INTEGER PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS taxonomy(
  kcid INTEGER PRIMARY KEY, pcid INTEGER NOT NULL, kcname TEXT NOT NULL, path TEXT NOT NULL,
  good INTEGER NOT NULL DEFAULT 0);
CREATE VIEW IF NOT EXISTS cidmap AS SELECT kcid, pcid, kcname, good FROM taxonomy;
CREATE TABLE IF NOT EXISTS example(url TEXT PRIMARY KEY, kcid INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS hub(oid INTEGER PRIMARY KEY, score REAL NOT NULL, run_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS auth(oid INTEGER PRIMARY KEY, score REAL NOT NULL, run_at REAL NOT NULL);
";

/// A URL to put in the frontier.
#[derive(Clone, Debug)]
pub struct NewUrl {
    /// Canonical URL.
    pub url: String,
    /// Its host.
    pub host: String,
    /// Frontier score (relevance, or a mode-specific order key); the max over parents wins.
    pub score: f64,
    /// Link distance from the seeds.
    pub depth: i64,
    /// Link that led here: (source page, anchor text).
    pub via: Option<(PageId, String)>,
    /// The apprentice's hashed features of the link (stored for training when both ends are
    /// fetched).
    pub features: Option<Vec<u32>>,
    /// Share of the parent's relevance this link passes on (soft focus: 1 in the text, the
    /// template weight in navigation boilerplate); kept to re-score the frontier when the
    /// classifier changes.
    pub weight: f64,
}

impl NewUrl {
    /// A seed: a canonical URL at depth 0 with the highest score.
    pub fn seed(u: &url::Url) -> Self {
        NewUrl {
            host: u.host_str().unwrap_or("").to_owned(),
            url: u.to_string(),
            score: 1.0,
            depth: 0,
            via: None,
            features: None,
            weight: 1.0,
        }
    }

    /// A URL the user queued from a web page ("best next links", "crawl more from here"): at
    /// the head of the frontier like a seed, but at depth 1, so never trusted as a seed (a
    /// seed's host may be private; a page's links may not lead the crawler there).
    pub fn queued(u: &url::Url) -> Self {
        NewUrl {
            depth: 1,
            ..NewUrl::seed(u)
        }
    }
}

/// One piece of the apprentice's evidence: a link's features and its fetched target's R(d)
/// (the critic's label is the policy's: `crawl::policy::instance`).
pub type ApprenticeEvidence = (Vec<u32>, f64);

/// A feature list in the four-byte form (PostgreSQL's `link.features`, the copy's rows).
fn features_to_blob(f: &[u32]) -> Vec<u8> {
    features::raw::encode(f)
}

/// Decodes a feature list in the four-byte form (trailing odd bytes are ignored).
pub fn features_from_blob(b: &[u8]) -> Vec<u32> {
    features::raw::decode(b)
}

/// What recording a batch produced.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Each newly fetched page, in fetch order.
    pub fetched: Vec<FetchedPage>,
    /// Apprentice evidence that became available: links whose both ends are now fetched.
    pub instances: Vec<ApprenticeEvidence>,
    /// Revisits recorded.
    pub revisited: usize,
    /// Of those, pages whose content had changed.
    pub changed: usize,
}

/// A page as a batch recorded it: what the browser lists as the crawl goes.
#[derive(Clone, Debug, PartialEq)]
pub struct FetchedPage {
    /// Fetch sequence number (consecutive over the database's newly fetched pages).
    pub seq: i64,
    /// URL.
    pub url: String,
    /// R(d).
    pub relevance: f64,
    /// Title, when it has one.
    pub title: Option<String>,
}

/// A checked-out frontier entry.
#[derive(Clone, Debug)]
pub struct Work {
    /// Its id.
    pub oid: PageId,
    /// URL.
    pub url: String,
    /// Depth from the seeds.
    pub depth: i64,
    /// Its frontier score when checked out (SharkSearch's inherited potential).
    pub score: f64,
    /// Attempts made at it before this checkout (the policy's retry cap counts them).
    pub tries: i64,
    /// A revisit of a page fetched before (maintenance mode).
    pub revisit: bool,
}

/// The outcome of one fetch, as recorded.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The checked-out page's id.
    pub oid: PageId,
    /// New status, as the policy settled it (`Unvisited`: back to the frontier for a retry).
    pub status: DocStatus,
    /// HTTP status, if a response came.
    pub http_status: Option<i64>,
    /// R(d) (fetched pages).
    pub relevance: f64,
    /// ln R(d).
    pub log_relevance: f64,
    /// Best leaf topic id.
    pub cid: Option<i64>,
    /// Title.
    pub title: Option<String>,
    /// Visible text, stored LZ4-compressed.
    pub text: Option<String>,
    /// Content hash (hex).
    pub content_hash: Option<String>,
    /// Error kind for failures and exclusions.
    pub error: Option<String>,
    /// A retryable failure: the policy (`crawl::policy::retry_or_give_up`) sends it back to
    /// the frontier until its retry cap; the store records `status` as given.
    pub retry: bool,
    /// The URLs redirected through, in order (the first is the row's own URL).
    pub redirects: Vec<String>,
    /// The URL finally answered, when redirected.
    pub final_url: Option<String>,
    /// Outlinks refused by a trap guard, by kind (reported, not stored).
    pub rejects: Vec<&'static str>,
    /// This was a revisit of a fetched page (maintenance mode).
    pub revisit: bool,
    /// Outlinks to enqueue.
    pub links: Vec<NewUrl>,
}

/// The crawl database.
pub struct Store {
    /// Checkpoints the write-ahead log beside the writer; first, so that it stops before the
    /// writer's connection closes (the last one to close folds the log in).
    _checkpointer: checkpointer::Checkpointer,
    conn: Connection,
    /// The writer's lock on `<db>.lock`, held while the store is open (released by the OS
    /// if the process dies).
    _lock: std::fs::File,
    caches: Caches,
    /// The dictionary of the links' features (`feature`).
    features: features::FeatureDict,
    /// Sizes the page cache again as the database grows.
    page_cache: page_cache::Resizer,
    /// The last fetch sequence number given.
    seq: i64,
    /// Keep the search index up to date (off only to measure what indexing costs:
    /// `FORAGER_SEARCH_INDEX=off`).
    index_text: bool,
}

/// Unix time in seconds.
pub fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// FNV-1a 64 of a string: a stable, cheap hash for tie-breaking and change detection (not a
/// security hash).
pub fn fnv64(s: &str) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

impl Store {
    /// Opens or creates the crawl database at `path` for writing; in-flight rows of a crashed
    /// run return to the frontier.
    pub fn open(path: &Path) -> Result<Store> {
        let lock = Self::lock(path)?;
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // The crawl's writer (#27 profile: 32 page reads and 43 page writes per fetched page
        // with the defaults): a page cache sized from the database (`page_cache`); its
        // checkpoints run on a thread of their own once it is open (`checkpointer`).
        page_cache::size(&conn)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        // Every statement of a record stays prepared (rusqlite keeps 16 by default, fewer
        // than a record, a checkout and a flush use in turn).
        conn.set_prepared_statement_cache_capacity(64);
        let mut conn = conn;
        conn.execute_batch(SCHEMA)?;
        let v: Option<i64> = conn
            .query_row("SELECT value FROM meta WHERE key='schema'", [], |r| {
                r.get(0)
            })
            .optional()?;
        if let Some(other) = v.filter(|v| !(1..=SCHEMA_VERSION).contains(v)) {
            return Err(StoreError::Schema(format!(
                "schema version {other}, this build reads {SCHEMA_VERSION}"
            )));
        }
        if conn.prepare("SELECT weight FROM link LIMIT 0").is_err() {
            // A database from before link weights: every link passed on the whole relevance.
            conn.execute_batch("ALTER TABLE link ADD COLUMN weight REAL NOT NULL DEFAULT 1")?;
        }
        news::migrate(&conn)?;
        url_key::migrate(&mut conn)?;
        features::migrate(&mut conn, v)?;
        if !search::has_index(&conn)? {
            search::build_index(&mut conn, |done, total| {
                if total > 0 {
                    eprintln!("forager: indexing the crawl's pages for search: {done}/{total}");
                }
            })?;
        }
        conn.execute(
            "INSERT INTO meta(key, value) VALUES('schema', ?1)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [SCHEMA_VERSION],
        )?;
        lease::migrate(&conn)?;
        // One writer: the leases of whoever wrote before have all expired.
        lease::expire_all(&conn)?;
        let seq = conn.query_row("SELECT coalesce(max(fetch_seq), 0) FROM doc", [], |r| {
            r.get(0)
        })?;
        let features = features::FeatureDict::load(&conn)?;
        let checkpointer = checkpointer::Checkpointer::start(&mut conn, path)?;
        Ok(Store {
            _checkpointer: checkpointer,
            conn,
            _lock: lock,
            caches: Caches::default(),
            features,
            page_cache: Default::default(),
            seq,
            index_text: std::env::var_os("FORAGER_SEARCH_INDEX").is_none_or(|v| v != "off"),
        })
    }

    /// Keeps the search index up to date as pages are recorded (the default), or not: only
    /// to measure what indexing costs.
    pub fn keep_search_index(&mut self, on: bool) {
        self.index_text = on;
    }

    /// Brings the database at `path` to this build's schema (the search index built, with a
    /// progress line) when it is older; true when it had to. A read-only reader of an old
    /// database calls this first; it fails only when another crawl writes the database (which
    /// has then upgraded it already) or the file cannot be written.
    pub fn upgrade(path: &Path) -> Result<bool> {
        let ro = Self::open_read_only(path)?;
        let current = search::has_index(&ro)?
            && ro
                .prepare("SELECT first_fetched_at FROM doc LIMIT 0")
                .is_ok()
            && url_key::is_current(&ro)?
            && features::is_current(&ro)?;
        drop(ro);
        if current {
            return Ok(false);
        }
        match Self::open(path) {
            Ok(_) => Ok(true),
            Err(StoreError::Locked(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Takes the one-writer lock of the database at `path`: an exclusive lock on a file
    /// beside it, which a second store, in this process or another, cannot take.
    fn lock(path: &Path) -> Result<std::fs::File> {
        let mut name = path.as_os_str().to_owned();
        name.push(".lock");
        let lock_path = std::path::PathBuf::from(name);
        let shown = || lock_path.display().to_string();
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| StoreError::Lock(shown(), e))?;
        match file.try_lock() {
            Ok(()) => Ok(file),
            Err(std::fs::TryLockError::WouldBlock) => {
                Err(StoreError::Locked(path.display().to_string()))
            }
            Err(std::fs::TryLockError::Error(e)) => Err(StoreError::Lock(shown(), e)),
        }
    }

    /// Opens a crawl database read-only (for `sql` and `status`), also attached as `arc` so the
    /// paper's queries (`arc.doc`, `arc.cidmap`) run as written.
    pub fn open_read_only(path: &Path) -> Result<Connection> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
        )?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        let uri = format!(
            "file:{}?mode=ro",
            path.to_string_lossy()
                .replace('%', "%25")
                .replace('?', "%3f")
                .replace('#', "%23")
        );
        conn.execute("ATTACH DATABASE ?1 AS arc", [uri])?;
        Ok(conn)
    }

    /// The connection, for the store's own tests.
    #[cfg(test)]
    fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Reads a `meta` value.
    pub fn meta(&self, key: &str) -> Result<Option<rusqlite::types::Value>> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?)
    }

    /// Writes a `meta` value.
    pub fn set_meta(&self, key: &str, value: impl rusqlite::ToSql) -> Result<()> {
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES(?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )?;
        Ok(())
    }

    /// Each host's next allowed request (Unix seconds) as the last crawl left it, so that
    /// politeness (the delay, Crawl-delay, Retry-After) holds across stop and start.
    pub fn host_slots(&self) -> Result<Vec<(String, f64)>> {
        let Some(rusqlite::types::Value::Text(t)) = self.meta("host_slots")? else {
            return Ok(Vec::new());
        };
        Ok(serde_json::from_str(&t).unwrap_or_default())
    }

    /// Remembers each host's next allowed request (Unix seconds), replacing the last.
    pub fn save_host_slots(&mut self, slots: &[(String, f64)]) -> Result<()> {
        let json = serde_json::to_string(slots).unwrap_or_else(|_| "[]".into());
        self.set_meta("host_slots", json)
    }

    /// Replaces the stored taxonomy and examples with the model's.
    pub fn save_taxonomy(&mut self, model: &forager_classifier::Model) -> Result<()> {
        let tx = self.conn.transaction()?;
        tx.execute("DELETE FROM taxonomy", [])?;
        tx.execute("DELETE FROM example", [])?;
        for t in model.topics() {
            tx.execute(
                "INSERT INTO taxonomy(kcid, pcid, kcname, path, good) VALUES(?1, ?2, ?3, ?4, ?5)",
                params![t.id, t.parent, t.title, t.path, t.good],
            )?;
        }
        for e in model.examples() {
            let kcid = model.taxonomy().find(&e.topic).unwrap_or(0);
            tx.execute(
                "INSERT OR REPLACE INTO example(url, kcid) VALUES(?1, ?2)",
                params![e.url, kcid],
            )?;
        }
        tx.execute(
            "INSERT INTO meta(key, value) VALUES('model', ?1) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [model.to_bytes()],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Fetched URLs in fetch order (the fetch log, rebuilt from the database).
    pub fn fetched_urls(&self) -> Result<Vec<String>> {
        let mut st = self
            .conn
            .prepare("SELECT url FROM doc WHERE fetch_seq IS NOT NULL ORDER BY fetch_seq")?;
        let rows = st.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// URLs given up on, failed or excluded, in all runs (the pages a user sees as errors).
    pub fn given_up(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("SELECT count(*) FROM doc WHERE status IN (3, 4)", [], |r| {
                r.get(0)
            })?)
    }

    /// Number of fetched pages.
    pub fn fetched(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("SELECT count(*) FROM doc WHERE status = 2", [], |r| {
                r.get(0)
            })?)
    }
}

/// Decompresses a stored `doc.text` value.
pub fn decompress_text(blob: &[u8]) -> Option<String> {
    lz4_flex::decompress_size_prepended(blob)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
}

/// A scratch database path for a unit test, `<tmp>/forager-<kind>-<pid>-<name>.db`, with any
/// database, log and lock files an earlier run left there removed (tests of one kind run in
/// one process, so `kind` and `name` keep them apart).
#[cfg(test)]
pub(crate) fn temp_db(kind: &str, name: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("forager-{kind}-{}-{name}.db", std::process::id()));
    remove_db(&p);
    p
}

/// Removes a scratch database and its log, shared-memory and lock files (tests).
#[cfg(test)]
pub(crate) fn remove_db(p: &std::path::Path) {
    for ext in ["", "-wal", "-shm", ".lock"] {
        let _ = std::fs::remove_file(format!("{}{ext}", p.display()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed(url: &str) -> NewUrl {
        NewUrl::seed(&url::Url::parse(url).unwrap())
    }

    #[test]
    fn statuses_keep_the_papers_codes_and_refuse_unknown_ones() {
        let codes: Vec<i64> = DocStatus::ALL.iter().map(|s| s.code()).collect();
        assert_eq!(codes, vec![0, 1, 2, 3, 4]);
        assert_eq!(DocStatus::from_code(2), Some(DocStatus::Fetched));
        assert_eq!(DocStatus::from_code(5), None);
        let conn = Connection::open_in_memory().unwrap();
        let read = |v: i64| conn.query_row("SELECT ?1", [v], |r| r.get::<_, DocStatus>(0));
        assert_eq!(read(4).unwrap(), DocStatus::Excluded);
        assert!(read(7).is_err());
    }

    #[test]
    fn text_is_stored_compressed_and_a_requeued_failure_spends_a_try() {
        let path = temp_db("store", "retry");
        let mut st = Store::open(&path).unwrap();
        st.add_seeds(&[seed("http://a.test/"), seed("http://b.test/")])
            .unwrap();
        let work = st.checkout(10).unwrap();
        assert_eq!(work.len(), 2);
        let page = Outcome {
            oid: work[0].oid,
            status: DocStatus::Fetched,
            relevance: 0.75,
            text: Some("hello hello hello world".repeat(20)),
            links: vec![NewUrl {
                via: Some((work[0].oid, "next".into())),
                features: Some(vec![1, 2, 3]),
                ..seed("http://a.test/next")
            }],
            ..Outcome::default()
        };
        // A failure the policy sent back to the frontier comes back with one more try spent.
        let flaky = |oid| Outcome {
            oid,
            status: DocStatus::Unvisited,
            error: Some("timeout".into()),
            retry: true,
            ..Outcome::default()
        };
        let rec = st.record(&[page, flaky(work[1].oid)]).unwrap();
        assert_eq!(rec.fetched.len(), 1);
        let blob: Vec<u8> = st
            .conn()
            .query_row("SELECT text FROM doc WHERE oid = ?1", [work[0].oid], |r| {
                r.get(0)
            })
            .unwrap();
        assert!(blob.len() < 200, "not compressed: {} bytes", blob.len());
        assert_eq!(
            decompress_text(&blob).unwrap(),
            "hello hello hello world".repeat(20)
        );
        let again = st.checkout(10).unwrap();
        let back = again
            .iter()
            .find(|w| w.oid == work[1].oid)
            .expect("retried");
        assert_eq!((work[1].tries, back.tries), (0, 1));
        let given_up = Outcome {
            status: DocStatus::Failed,
            ..flaky(back.oid)
        };
        st.record(&[given_up]).unwrap();
        assert!(st.checkout(10).unwrap().iter().all(|w| w.oid != back.oid));
        assert_eq!(st.given_up().unwrap(), 1);
        let link: i64 = st
            .conn()
            .query_row("SELECT count(*) FROM link WHERE anchor = 'next'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(link, 1);
        // Fetching the link's target turns the stored link features into a training instance.
        let next: i64 = st
            .conn()
            .query_row(
                "SELECT oid FROM doc WHERE url = 'http://a.test/next'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let rec = st
            .record(&[Outcome {
                oid: PageId::from_raw(next),
                status: DocStatus::Fetched,
                relevance: 0.9,
                ..Outcome::default()
            }])
            .unwrap();
        assert_eq!(rec.instances, vec![(vec![1, 2, 3], 0.9)]);
        assert_eq!(
            st.apprentice_evidence().unwrap(),
            vec![(vec![1, 2, 3], 0.9)]
        );
    }
}
