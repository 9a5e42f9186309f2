//! Moving a whole crawl from one back-end to another (`forager db copy`): a SQLite file to a
//! PostgreSQL server when the crawl outgrows one machine, and back. Both back-ends hold the
//! paper's tables with the same columns, so the copy is the same for every pair: each table a
//! page of rows at a time, in key order, through [`Tables`], the door's neutral batch reads
//! and writes of whole rows. What lives only while a crawl runs is not copied: leases and
//! workers (a URL in flight returns to the frontier) and the search index, which the target
//! builds from the copied pages.

mod sqlite;

use super::{Locator, Result, StoreError, PAGE};

/// A stored value, whatever the back-end.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

/// The type of a column, as both back-ends store it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An integer (SQLite INTEGER, PostgreSQL BIGINT).
    Int,
    /// A number (REAL, DOUBLE PRECISION).
    Real,
    /// Text (TEXT).
    Text,
    /// Bytes (BLOB, BYTEA).
    Blob,
}

/// A table as the copy reads and writes it: its columns, the first `key` of which order and
/// page its rows.
#[derive(Debug)]
pub struct Table {
    /// Its name (both back-ends).
    pub name: &'static str,
    /// Its columns and their types.
    pub columns: &'static [(&'static str, Kind)],
    /// How many leading columns make its key.
    pub key: usize,
}

impl Table {
    /// The column names, comma-separated.
    pub fn column_list(&self) -> String {
        let names: Vec<&str> = self.columns.iter().map(|c| c.0).collect();
        names.join(", ")
    }

    /// The key's column names, comma-separated.
    pub fn key_list(&self) -> String {
        let names: Vec<&str> = self.columns[..self.key].iter().map(|c| c.0).collect();
        names.join(", ")
    }
}

use Kind::{Blob, Int, Real, Text};

/// `server`: hosts (their leases are not copied).
pub const SERVER: Table = Table {
    name: "server",
    columns: &[("sid", Int), ("host", Text), ("crawled", Int)],
    key: 1,
};

/// `doc`: every URL the crawl knows, fetched or not.
pub const DOC: Table = Table {
    name: "doc",
    columns: &[
        ("oid", Int),
        ("url", Text),
        ("sid", Int),
        ("num_tries", Int),
        ("priority", Int),
        ("relevance", Real),
        ("cid", Int),
        ("status", Int),
        ("http_status", Int),
        ("depth", Int),
        ("fetched_at", Real),
        ("fetch_seq", Int),
        ("content_hash", Text),
        ("title", Text),
        ("text", Blob),
        ("error", Text),
        ("log_relevance", Real),
        ("final_url", Text),
        ("redirects", Text),
        ("revisits", Int),
        ("changes", Int),
        ("rnd", Int),
        ("first_fetched_at", Real),
        ("changed_at", Real),
    ],
    key: 1,
};

/// `doc.status`'s place in [`DOC`]'s columns.
const DOC_STATUS: usize = 7;

/// `link`: the crawl graph with the apprentice's features.
pub const LINK: Table = Table {
    name: "link",
    columns: &[
        ("oid_src", Int),
        ("oid_dst", Int),
        ("sid_src", Int),
        ("sid_dst", Int),
        ("anchor", Text),
        ("features", Blob),
        ("weight", Real),
    ],
    key: 2,
};

/// `taxonomy`: the topics and their good marks.
pub const TAXONOMY: Table = Table {
    name: "taxonomy",
    columns: &[
        ("kcid", Int),
        ("pcid", Int),
        ("kcname", Text),
        ("path", Text),
        ("good", Int),
    ],
    key: 1,
};

/// `example`: the training examples' URLs.
pub const EXAMPLE: Table = Table {
    name: "example",
    columns: &[("url", Text), ("kcid", Int)],
    key: 1,
};

/// `hub`: the last distillation's hub scores.
pub const HUB: Table = Table {
    name: "hub",
    columns: &[("oid", Int), ("score", Real), ("run_at", Real)],
    key: 1,
};

/// `auth`: the last distillation's authority scores.
pub const AUTH: Table = Table {
    name: "auth",
    columns: &[("oid", Int), ("score", Real), ("run_at", Real)],
    key: 1,
};

/// Every table copied, in an order that satisfies foreign keys (hosts before their pages).
pub const TABLES: [&Table; 7] = [&TAXONOMY, &EXAMPLE, &SERVER, &DOC, &LINK, &HUB, &AUTH];

/// The `meta` keys each back-end keeps for itself (its schema version, whether its search
/// index is built), as an SQL list: never copied.
pub(crate) const OWN_META: &str = "('schema', 'search_index')";

/// Whether `key` is one of a back-end's own `meta` keys.
pub(crate) fn own_meta(key: &str) -> bool {
    OWN_META.contains(&format!("'{key}'"))
}

/// A whole crawl's rows, as the copy moves them: every back-end's batch reads and writes.
pub trait Tables {
    /// Up to `limit` rows of `table` whose key is after `after` (from the first when `None`),
    /// in key order, each with `table.columns`' values in order.
    fn rows(&self, table: &Table, after: Option<&[Value]>, limit: usize)
        -> Result<Vec<Vec<Value>>>;
    /// Inserts `rows` into `table`, in one transaction.
    fn insert(&mut self, table: &Table, rows: &[Vec<Value>]) -> Result<()>;
    /// Every `meta` value (the model, the mode, host slots, ...) but the back-end's own
    /// schema version.
    fn meta_values(&self) -> Result<Vec<(String, Value)>>;
    /// Writes `meta` values.
    fn set_meta_values(&mut self, values: &[(String, Value)]) -> Result<()>;
    /// Whether the database holds no crawl (no URL, no topic, no stored value).
    fn is_empty(&self) -> Result<bool>;
    /// Deletes every crawl row (a copy told to replace the target).
    fn clear(&mut self) -> Result<()>;
    /// The workers whose lease is live now: a crawl being copied must be stopped.
    fn live_workers(&self) -> Result<Vec<String>>;
    /// After the rows are in: ids and fetch numbers given next follow the copied ones, and
    /// the search index holds the copied pages (or is marked to be built when the crawl next
    /// opens, on a server).
    fn finish(&mut self) -> Result<()>;
}

/// Opens the crawl database at `locator` for a copy, as a writer (a SQLite file is created
/// when missing; the caller checks a source exists first).
pub fn open(locator: &Locator) -> Result<Box<dyn Tables>> {
    match locator {
        Locator::Sqlite(p) => Ok(Box::new(super::Store::open(p)?)),
        Locator::Postgres(u) => Ok(Box::new(super::postgres::PgStore::open(u)?)),
    }
}

/// What a copy moved: rows per table, in copy order (`meta` first).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Copied {
    /// (table, rows).
    pub rows: Vec<(&'static str, u64)>,
}

impl Copied {
    /// The rows copied of `table`.
    pub fn of(&self, table: &str) -> u64 {
        (self.rows.iter().find(|(t, _)| *t == table)).map_or(0, |r| r.1)
    }
}

/// Copies every row of the crawl in `from` into `to` (named `to_name` in messages). `to` must
/// hold no crawl unless `replace`, which deletes what it holds first; `from` must have no
/// worker crawling it. `progress(table, rows)` is told after each page of rows.
pub fn copy(
    from: &dyn Tables,
    to: &mut dyn Tables,
    to_name: &str,
    replace: bool,
    progress: &mut dyn FnMut(&str, u64),
) -> Result<Copied> {
    let live = from.live_workers()?;
    if !live.is_empty() {
        return Err(StoreError::Refused(format!(
            "the crawl to copy is running ({} worker(s): {}); stop it first, or wait for the \
             leases of workers that died to run out",
            live.len(),
            live.join(", ")
        )));
    }
    if !to.is_empty()? {
        if !replace {
            return Err(StoreError::Refused(format!(
                "{to_name} already holds a crawl; copying would replace it (give --force to \
                 delete it and copy)"
            )));
        }
        to.clear()?;
    }
    let mut copied = Copied::default();
    let meta = from.meta_values()?;
    to.set_meta_values(&meta)?;
    copied.rows.push(("meta", meta.len() as u64));
    for table in TABLES {
        let n = copy_table(from, to, table, progress)?;
        copied.rows.push((table.name, n));
    }
    to.finish()?;
    Ok(copied)
}

/// Copies one table a page at a time; returns its rows.
fn copy_table(
    from: &dyn Tables,
    to: &mut dyn Tables,
    table: &Table,
    progress: &mut dyn FnMut(&str, u64),
) -> Result<u64> {
    let mut after: Option<Vec<Value>> = None;
    let mut n = 0;
    loop {
        let mut rows = from.rows(table, after.as_deref(), PAGE)?;
        let Some(last) = rows.last() else {
            return Ok(n);
        };
        after = Some(last[..table.key].to_vec());
        if table.name == DOC.name {
            for r in &mut rows {
                settle_in_flight(r);
            }
        }
        to.insert(table, &rows)?;
        n += rows.len() as u64;
        progress(table.name, n);
    }
}

/// A URL in flight when the crawl stopped returns to the frontier: leases are not copied.
fn settle_in_flight(doc: &mut [Value]) {
    if doc[DOC_STATUS] == Value::Int(super::DocStatus::InFlight.code()) {
        doc[DOC_STATUS] = Value::Int(super::DocStatus::Unvisited.code());
    }
}

/// A meta value read back from text (PostgreSQL keeps them as text): numbers become numbers
/// again, as SQLite stores them.
pub fn meta_from_text(text: String) -> Value {
    if let Ok(i) = text.parse::<i64>() {
        Value::Int(i)
    } else if let Some(x) = text.parse::<f64>().ok().filter(|x| x.is_finite()) {
        Value::Real(x)
    } else {
        Value::Text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{CrawlDb, NewUrl, Outcome, Store, LOCAL_WORKER};

    fn temp(name: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("forager-copy-{}-{name}.db", std::process::id()));
        remove(&p);
        p
    }

    fn remove(p: &std::path::Path) {
        for ext in ["", "-wal", "-shm", ".lock"] {
            let _ = std::fs::remove_file(format!("{}{ext}", p.display()));
        }
    }

    fn seed(u: &str) -> NewUrl {
        NewUrl::seed(&url::Url::parse(u).unwrap())
    }

    /// A small crawl: two fetched pages (one with a link and features), a URL left in flight.
    fn small_crawl(p: &std::path::Path) {
        let mut s = Store::open(p).unwrap();
        s.set_meta("mode", "Soft").unwrap();
        s.add_seeds(&[
            seed("http://a.test/"),
            seed("http://b.test/"),
            seed("http://c.test/"),
        ])
        .unwrap();
        let w = CrawlDb::checkout(&mut s, LOCAL_WORKER, 3, crate::store::LEASE).unwrap();
        let page = |i: usize, links| Outcome {
            oid: w[i].oid,
            status: crate::store::DocStatus::Fetched,
            relevance: 0.5 + i as f64 / 10.0,
            title: Some(format!("page {i}")),
            text: Some(format!("tuners and radios, page {i}")),
            links,
            ..Outcome::default()
        };
        let link = NewUrl {
            via: Some((w[0].oid, "next".into())),
            features: Some(vec![7, 8]),
            ..seed("http://a.test/next")
        };
        s.record(&[page(0, vec![link]), page(1, vec![])]).unwrap();
    }

    #[test]
    fn a_sqlite_crawl_copies_whole_and_its_in_flight_url_returns_to_the_frontier() {
        let (a, b) = (temp("a"), temp("b"));
        small_crawl(&a);
        let from = open(&Locator::Sqlite(a.clone())).unwrap();
        let mut to = open(&Locator::Sqlite(b.clone())).unwrap();
        let mut told = Vec::new();
        let copied = copy(&*from, &mut *to, "b", false, &mut |t, n| {
            told.push((t.to_owned(), n))
        })
        .unwrap();
        assert_eq!((copied.of("doc"), copied.of("link")), (4, 1));
        assert!(told.contains(&("doc".to_owned(), 4)), "{told:?}");
        // Again, into a database that now holds a crawl: refused, unless told.
        let e = copy(&*from, &mut *to, "b", false, &mut |_, _| {}).unwrap_err();
        assert!(matches!(e, StoreError::Refused(_)), "{e}");
        assert!(e.to_string().contains("--force"), "{e}");
        let again = copy(&*from, &mut *to, "b", true, &mut |_, _| {}).unwrap();
        assert_eq!(again, copied);
        drop((from, to));
        {
            let (sa, sb) = (Store::open(&a).unwrap(), Store::open(&b).unwrap());
            let (ra, rb) = (sa.read(), sb.read());
            use crate::store::Reader;
            assert_eq!(ra.fetch_log().unwrap(), rb.fetch_log().unwrap());
            assert_eq!(ra.counts().unwrap(), rb.counts().unwrap());
            assert!(rb.hard_focus() == ra.hard_focus());
            assert_eq!(rb.apprentice_evidence().unwrap(), vec![]);
            let hits = rb.search("tuners", 10, Default::default()).unwrap();
            assert_eq!(hits.len(), 2, "the search index was rebuilt");
            // The in-flight URL is in the frontier of both (the source's reopened, the copy's
            // copied as unvisited), and the next page gets the next fetch number.
            assert_eq!(rb.counts().unwrap().frontier, 2);
        }
        let mut sb = Store::open(&b).unwrap();
        let w = CrawlDb::checkout(&mut sb, LOCAL_WORKER, 10, crate::store::LEASE).unwrap();
        assert_eq!(w.len(), 2);
        let rec = sb
            .record(&[Outcome {
                oid: w[0].oid,
                status: crate::store::DocStatus::Fetched,
                ..Outcome::default()
            }])
            .unwrap();
        assert_eq!(rec.fetched[0].seq, 3);
        remove(&a);
        remove(&b);
    }

    #[test]
    fn numbers_kept_as_text_read_back_as_numbers() {
        assert_eq!(meta_from_text("12".into()), Value::Int(12));
        assert_eq!(meta_from_text("1.5".into()), Value::Real(1.5));
        assert_eq!(meta_from_text("Soft".into()), Value::Text("Soft".into()));
        assert_eq!(meta_from_text("NaN".into()), Value::Text("NaN".into()));
        assert_eq!(meta_from_text("[]".into()), Value::Text("[]".into()));
    }
}
