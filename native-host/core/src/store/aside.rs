//! A new crawl without losing the old one: the database is kept aside under a dated name.

use super::{Result, Store, StoreError};
use std::path::{Path, PathBuf};

impl Store {
    /// Keeps the crawl database at `path` aside as `<stem>-<UTC time>.db`, its write-ahead
    /// log folded in, so that the next crawl there starts afresh; nothing is deleted. Refused
    /// while a crawl holds the database. Returns the new name, or `None` when there was none.
    pub fn set_aside(path: &Path) -> Result<Option<PathBuf>> {
        if !path.exists() {
            return Ok(None);
        }
        let _lock = Store::lock(path)?;
        {
            let conn = rusqlite::Connection::open(path)?;
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        }
        let aside = aside_name(path);
        let io = |p: &Path, e: std::io::Error| StoreError::Io(p.display().to_string(), e);
        std::fs::rename(path, &aside).map_err(|e| io(path, e))?;
        for ext in ["-wal", "-shm"] {
            let (mut from, mut to) = (path.as_os_str().to_owned(), aside.as_os_str().to_owned());
            from.push(ext);
            to.push(ext);
            let from = PathBuf::from(from);
            if from.exists() {
                std::fs::rename(&from, PathBuf::from(to)).map_err(|e| io(&from, e))?;
            }
        }
        Ok(Some(aside))
    }
}

/// `dir/crawl.db` → `dir/crawl-20261124T225500Z.db` (with `-2`, `-3`, ... if taken).
fn aside_name(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map_or_else(|| "crawl".into(), |s| s.to_string_lossy().into_owned());
    let ext = path
        .extension()
        .map_or_else(|| "db".into(), |s| s.to_string_lossy().into_owned());
    let when = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    let dir = path.parent().unwrap_or(Path::new(""));
    (1..)
        .map(|i| {
            let n = if i == 1 {
                String::new()
            } else {
                format!("-{i}")
            };
            dir.join(format!("{stem}-{when}{n}.{ext}"))
        })
        .find(|p| !p.exists())
        .unwrap_or_else(|| dir.join(format!("{stem}-{when}.{ext}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_is_kept_aside_whole_and_never_under_a_crawl() {
        let dir = std::env::temp_dir().join(format!("forager-aside-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("crawl.db");
        assert_eq!(Store::set_aside(&db).unwrap(), None, "nothing to keep");
        let store = Store::open(&db).unwrap();
        store.set_meta("mode", "Soft").unwrap();
        let e = Store::set_aside(&db).unwrap_err();
        assert!(matches!(e, StoreError::Locked(_)), "{e}");
        drop(store);
        let aside = Store::set_aside(&db).unwrap().unwrap();
        assert!(!db.exists());
        let conn = Store::open_read_only(&aside).unwrap();
        let mode: String = conn
            .query_row("SELECT value FROM meta WHERE key = 'mode'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(mode, "Soft", "the kept database has what was written");
        drop(conn);
        Store::open(&db).unwrap();
        let again = Store::set_aside(&db).unwrap().unwrap();
        assert_ne!(again, aside, "a second one gets its own name");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
