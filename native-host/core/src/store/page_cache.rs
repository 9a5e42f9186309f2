//! The crawl writer's SQLite page cache, sized from the database (#27). A crawl's records
//! touch pages all over the URL key, frontier and link indexes; once those outgrow the cache,
//! each record reads its pages back from the file (the million-page crawl's last windows).
//! The cache grows with the database, a sixteenth of its size, from 32 MB to at most 96 MB,
//! so the crawler's memory stays bounded.

use super::Result;
use rusqlite::Connection;

/// The smallest cache, in KiB (the writer's cache before it was sized).
const MIN_KIB: i64 = 32 * 1024;
/// The largest cache, in KiB (the million-page crawl peaks at about 160 MB without it).
const MAX_KIB: i64 = 96 * 1024;
/// Records between two sizings.
const EVERY: u32 = 256;

/// The cache in KiB for a database of `bytes`.
pub(super) fn kib_for(bytes: i64) -> i64 {
    (bytes / 16 / 1024).clamp(MIN_KIB, MAX_KIB)
}

/// Sizes the cache of `conn` for its database now.
pub(super) fn size(conn: &Connection) -> Result<()> {
    let bytes: i64 = conn.query_row(
        "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
        [],
        |r| r.get(0),
    )?;
    conn.pragma_update(None, "cache_size", -kib_for(bytes))?;
    Ok(())
}

/// Counts records and sizes the cache again every [`EVERY`] of them.
#[derive(Debug, Default)]
pub(super) struct Resizer {
    records: u32,
}

impl Resizer {
    /// One more record on `conn`.
    pub(super) fn tick(&mut self, conn: &Connection) -> Result<()> {
        self.records = self.records.wrapping_add(1);
        if self.records.is_multiple_of(EVERY) {
            size(conn)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_is_a_sixteenth_of_the_database_within_its_bounds() {
        assert_eq!(kib_for(0), MIN_KIB);
        assert_eq!(kib_for(1 << 30), 64 * 1024);
        assert_eq!(kib_for(10 << 30), MAX_KIB);
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES(1);")
            .unwrap();
        size(&conn).unwrap();
        let kib: i64 = conn
            .query_row("PRAGMA cache_size", [], |r| r.get(0))
            .unwrap();
        assert_eq!(kib, -MIN_KIB);
    }
}
