//! Where a crawl's database lives, and the one way to open its door: a path opens a SQLite
//! file (the default: a laptop needs no server); a `postgres://` or `postgresql://` URL names a
//! PostgreSQL server shared by many workers.

use super::{CrawlDb, ReadOnly, Reader, Result, Store};
use std::fmt;
use std::path::PathBuf;

/// A crawl database's location, as a user writes it (`--db`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Locator {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL connection string.
    Postgres(String),
}

impl Locator {
    /// Reads a locator: a `postgres://` or `postgresql://` URL names a server, anything else is
    /// a file path.
    pub fn parse(s: &str) -> Locator {
        let lower = s.get(..13).unwrap_or(s).to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            Locator::Postgres(s.to_owned())
        } else {
            Locator::Sqlite(PathBuf::from(s))
        }
    }
}

impl Locator {
    /// The locator a command-line path argument names: a `postgres://` URL given where a path
    /// goes names a server; any other path (not UTF-8 too) a SQLite file.
    pub fn from_path(p: &std::path::Path) -> Locator {
        match p.to_str() {
            Some(s) => Locator::parse(s),
            None => Locator::Sqlite(p.to_path_buf()),
        }
    }
}

impl From<PathBuf> for Locator {
    fn from(p: PathBuf) -> Self {
        Locator::Sqlite(p)
    }
}

impl fmt::Display for Locator {
    /// The location as it may be shown: a server URL without its password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Locator::Sqlite(p) => write!(f, "{}", p.display()),
            Locator::Postgres(s) => match url::Url::parse(s) {
                Ok(mut u) => {
                    if u.password().is_some() {
                        let _ = u.set_password(Some("***"));
                    }
                    write!(f, "{u}")
                }
                Err(_) => write!(f, "postgres://(unreadable URL)"),
            },
        }
    }
}

/// Opens the crawl database at `locator` for writing, as the crawl's door.
pub fn open(locator: &Locator) -> Result<Box<dyn CrawlDb>> {
    match locator {
        Locator::Sqlite(path) => Ok(Box::new(Store::open(path)?)),
        Locator::Postgres(url) => Ok(Box::new(super::postgres::PgStore::open(url)?)),
    }
}

/// Opens the crawl database at `locator` read-only, beside a running crawl if need be: the
/// door of reports, exports, `forager status` and the browser's event pump.
pub fn open_read(locator: &Locator) -> Result<Box<dyn Reader + Send>> {
    match locator {
        Locator::Sqlite(path) => Ok(Box::new(ReadOnly::open(path)?)),
        Locator::Postgres(url) => Ok(Box::new(super::postgres::PgStore::open(url)?)),
    }
}

/// Brings the crawl database at `locator` to this build's schema when it is older (a SQLite
/// file made by an earlier version); true when it had to. A server's schema is migrated by
/// its back-end when opened.
pub fn upgrade(locator: &Locator) -> Result<bool> {
    match locator {
        Locator::Sqlite(path) => Store::upgrade(path),
        Locator::Postgres(_) => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreError;

    #[test]
    fn paths_open_sqlite_and_server_urls_name_postgres() {
        assert_eq!(
            Locator::parse("crawl.db"),
            Locator::Sqlite(PathBuf::from("crawl.db"))
        );
        assert_eq!(
            Locator::parse("./postgres://x"),
            Locator::Sqlite(PathBuf::from("./postgres://x"))
        );
        for url in ["postgres://h/db", "PostgreSQL://u@h:5433/db"] {
            assert_eq!(Locator::parse(url), Locator::Postgres(url.to_owned()));
        }
    }

    #[test]
    fn a_server_url_is_shown_without_its_password() {
        let l = Locator::parse("postgres://crawler:s3cret@db.example:5432/forager");
        let shown = l.to_string();
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(
            shown.contains("crawler:***@db.example:5432/forager"),
            "{shown}"
        );
        // Nothing listens on port 1 of loopback: the error names no password.
        let there = Locator::parse("postgres://crawler:s3cret@127.0.0.1:1/forager");
        let e = open(&there).err().expect("no server there");
        assert!(!e.to_string().contains("s3cret"), "{e}");
        let e = open_read(&there).err().expect("no server there");
        assert!(!e.to_string().contains("s3cret"), "{e}");
        assert!(matches!(e, StoreError::Backend(..)), "{e}");
    }

    #[test]
    fn a_path_opens_a_sqlite_door() {
        let p = std::env::temp_dir().join(format!("forager-locator-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&p);
        let mut db = open(&Locator::parse(p.to_str().unwrap())).unwrap();
        assert_eq!(db.frontier_len().unwrap(), 0);
        db.add_seeds(&[super::super::NewUrl::seed(
            &url::Url::parse("http://a.test/").unwrap(),
        )])
        .unwrap();
        assert_eq!(db.frontier_len().unwrap(), 1);
        drop(db);
        assert!(
            Store::open(&p).is_ok(),
            "the door's lock is released when dropped"
        );
        for ext in ["", "-wal", "-shm", ".lock"] {
            let _ = std::fs::remove_file(format!("{}{ext}", p.display()));
        }
    }
}
