//! The apprentice's link features as stored (#27): the one codec of `link.features`.
//!
//! A link's features are hashed `u32`s (accelerated-focused-crawling-2002's ⟨token, offset⟩
//! pairs and the source page's classes), about 75 per link: stored as four bytes each they
//! were 302 B per link, 3 GB of a million-page crawl. The values recur from link to link (a
//! web's words at a few offsets), so SQLite keeps a dictionary of them (`feature`: id →
//! value, ids given in order of first use) and each link stores its list, in its order and
//! with its repeats, as LEB128 ids: one byte for the 127 first values met, two for the next
//! 16k. A value met after the dictionary is full is stored as it is, behind a zero byte.
//! Decoding gives back the exact list, so the apprentice learns the same counts.
//!
//! Each blob says its form: the four-byte form ([`raw`]) is a multiple of four bytes long; the
//! dictionary form never is: a header byte (how many padding bytes end the blob, 0 or 1),
//! the ids, and the padding. A database written before the dictionary, a half-copied one or a
//! blob copied in from a server all read right.
//!
//! PostgreSQL (and the neutral rows of `forager db copy`) keep the four-byte form: workers
//! there would have to share the dictionary.

use super::Result;
use rusqlite::{Connection, OptionalExtension};
use rustc_hash::FxHashMap;

/// Values the dictionary holds at most (about 14 MB of map and list when full); values met
/// later are stored as they are.
pub(super) const CAPACITY: usize = 1 << 20;

/// The schema version from which `link.features` holds dictionary ids.
pub(super) const SINCE_SCHEMA: i64 = 4;

/// The four-byte form: little-endian `u32`s, one after the other.
pub mod raw {
    /// A feature list as four bytes per feature.
    pub fn encode(f: &[u32]) -> Vec<u8> {
        f.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// Decodes a four-byte list (trailing odd bytes are ignored).
    pub fn decode(b: &[u8]) -> Vec<u32> {
        b.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }
}

/// The dictionary of feature values a SQLite crawl file's links refer to, as this process
/// knows it (the table `feature` is the truth: see [`FeatureDict::sync`]).
#[derive(Debug, Default)]
pub struct FeatureDict {
    /// value → id.
    ids: FxHashMap<u32, u32>,
    /// id → value.
    values: Vec<u32>,
    /// Values the dictionary holds at most.
    capacity: usize,
}

impl FeatureDict {
    /// The dictionary of the database on `conn` (its `feature` table; empty when it has none).
    pub fn load(conn: &Connection) -> Result<FeatureDict> {
        let mut d = FeatureDict {
            capacity: CAPACITY,
            ..FeatureDict::default()
        };
        if has_table(conn)? {
            d.extend(conn)?;
        }
        Ok(d)
    }

    /// Reads the values stored after the ones this dictionary holds (another connection
    /// wrote them).
    fn extend(&mut self, conn: &Connection) -> Result<()> {
        let mut st =
            conn.prepare_cached("SELECT id, value FROM feature WHERE id >= ?1 ORDER BY id")?;
        let mut rows = st.query([self.values.len() as i64])?;
        while let Some(r) = rows.next()? {
            let (id, value): (i64, i64) = (r.get(0)?, r.get(1)?);
            if id != self.values.len() as i64 {
                break; // a gap cannot happen; ids after one are never used
            }
            self.push(value as u32);
        }
        Ok(())
    }

    /// Decodes a list read on `conn` by a reader whose dictionary may be older than the list
    /// (a second connection of a running crawl): values it does not hold yet are read first.
    pub fn decode_on(&mut self, conn: &Connection, b: &[u8]) -> Result<Option<Vec<u32>>> {
        if let Some(f) = self.decode(b) {
            return Ok(Some(f));
        }
        self.extend(conn)?;
        Ok(self.decode(b))
    }

    /// An empty dictionary of at most `capacity` values (tests of a full dictionary).
    #[cfg(test)]
    pub(super) fn with_capacity(capacity: usize) -> FeatureDict {
        FeatureDict {
            capacity,
            ..FeatureDict::default()
        }
    }

    fn push(&mut self, value: u32) {
        self.ids.insert(value, self.values.len() as u32);
        self.values.push(value);
    }

    /// Values in the dictionary.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.values.len()
    }

    /// Forgets the values a transaction added and then undid: keeps the first `stored`
    /// (the table's count), so that ids stay the table's.
    pub(super) fn sync(&mut self, conn: &Connection) -> Result<()> {
        let stored: i64 =
            conn.query_row("SELECT coalesce(max(id) + 1, 0) FROM feature", [], |r| {
                r.get(0)
            })?;
        let stored = usize::try_from(stored).unwrap_or(0);
        while self.values.len() > stored {
            if let Some(v) = self.values.pop() {
                self.ids.remove(&v);
            }
        }
        Ok(())
    }

    /// Encodes `f`; values met for the first time get the next ids, returned as (id, value)
    /// for the caller to store in the same transaction as the link.
    pub fn encode(&mut self, f: &[u32], added: &mut Vec<(u32, u32)>) -> Vec<u8> {
        if f.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(f.len() * 2 + 2);
        out.push(0);
        for &v in f {
            let id = match self.ids.get(&v) {
                Some(&id) => Some(id),
                None if self.values.len() < self.capacity => {
                    let id = self.values.len() as u32;
                    self.push(v);
                    added.push((id, v));
                    Some(id)
                }
                None => None,
            };
            match id {
                Some(id) => put(&mut out, u64::from(id) + 1),
                None => {
                    out.push(0);
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        // Never a multiple of four bytes long: that is the four-byte form.
        if out.len().is_multiple_of(4) {
            out[0] = 1;
            out.push(0);
        }
        out
    }

    /// Decodes a stored list (either form); `None` when it is damaged or refers to ids this
    /// dictionary does not hold, never a wrong list.
    pub fn decode(&self, b: &[u8]) -> Option<Vec<u32>> {
        if b.len().is_multiple_of(4) {
            return Some(raw::decode(b));
        }
        let (&pad, rest) = b.split_first()?;
        let mut b = match pad {
            0 => rest,
            1 => rest.split_last()?.1,
            _ => return None,
        };
        let mut f = Vec::with_capacity(b.len());
        while !b.is_empty() {
            let code = leb128::read::unsigned(&mut b).ok()?;
            if code == 0 {
                let (v, rest) = b.split_first_chunk::<4>()?;
                f.push(u32::from_le_bytes(*v));
                b = rest;
            } else {
                let id = usize::try_from(code - 1).ok()?;
                f.push(*self.values.get(id)?);
            }
        }
        Some(f)
    }
}

/// Appends `v` as LEB128.
fn put(out: &mut Vec<u8>, v: u64) {
    // Writing into a Vec cannot fail.
    let _ = leb128::write::unsigned(out, v);
}

/// The database's schema version, when it has one.
fn schema(conn: &Connection) -> Result<Option<i64>> {
    let has_meta = conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
            [],
            |_| Ok(()),
        )
        .optional()?
        .is_some();
    if !has_meta {
        return Ok(None);
    }
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key = 'schema'", [], |r| {
            r.get(0)
        })
        .optional()?)
}

fn has_table(conn: &Connection) -> Result<bool> {
    Ok(conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'feature'",
            [],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

/// Whether the links' features are in this build's form (nothing to migrate).
pub(super) fn is_current(conn: &Connection) -> Result<bool> {
    Ok(schema(conn)?.is_none_or(|v| v >= SINCE_SCHEMA) || !any_features(conn)?)
}

fn any_features(conn: &Connection) -> Result<bool> {
    Ok(conn
        .query_row(
            "SELECT 1 FROM link WHERE features IS NOT NULL LIMIT 1",
            [],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

/// Links re-encoded per statement batch of the migration.
const BATCH: usize = 20_000;

/// Brings the links' features of a database older than [`SINCE_SCHEMA`] (`was`: its schema
/// version) to the dictionary form, once, in one transaction (nothing is lost if it stops),
/// with a progress line; the schema version is set in the same transaction.
pub(super) fn migrate(conn: &mut Connection, was: Option<i64>) -> Result<()> {
    if was.is_none_or(|v| v >= SINCE_SCHEMA) || !any_features(conn)? {
        return Ok(());
    }
    let total: i64 = conn.query_row(
        "SELECT count(*) FROM link WHERE features IS NOT NULL",
        [],
        |r| r.get(0),
    )?;
    eprintln!("forager: compacting the apprentice's features of {total} links (once)");
    let tx = conn.transaction()?;
    let mut dict = FeatureDict::load(&tx)?;
    let (mut after, mut done, mut shown) = ((i64::MIN, i64::MIN), 0i64, 0i64);
    loop {
        let rows: Vec<(i64, i64, Vec<u8>)> = {
            let mut st = tx.prepare_cached(
                "SELECT oid_src, oid_dst, features FROM link
                 WHERE (oid_src, oid_dst) > (?1, ?2) AND features IS NOT NULL
                 ORDER BY oid_src, oid_dst LIMIT ?3",
            )?;
            let rows = st.query_map(rusqlite::params![after.0, after.1, BATCH as i64], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let Some(last) = rows.last() else { break };
        after = (last.0, last.1);
        let mut added = Vec::new();
        {
            let mut up = tx.prepare_cached(
                "UPDATE link SET features = ?3 WHERE oid_src = ?1 AND oid_dst = ?2",
            )?;
            // Only four-byte lists: a blob already in the dictionary form stays.
            for (src, dst, b) in rows.iter().filter(|r| r.2.len().is_multiple_of(4)) {
                let blob = dict.encode(&raw::decode(b), &mut added);
                up.execute(rusqlite::params![src, dst, blob])?;
            }
        }
        store_added(&tx, &added)?;
        done += rows.len() as i64;
        if done - shown >= 1_000_000 || done == total {
            eprintln!("forager: compacting link features: {done}/{total}");
            shown = done;
        }
    }
    tx.execute(
        "INSERT INTO meta(key, value) VALUES('schema', ?1)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [SINCE_SCHEMA],
    )?;
    tx.commit()?;
    Ok(())
}

/// Stores dictionary values given out in this transaction.
pub(super) fn store_added(conn: &Connection, added: &[(u32, u32)]) -> Result<()> {
    if added.is_empty() {
        return Ok(());
    }
    let mut st = conn.prepare_cached("INSERT INTO feature(id, value) VALUES(?1, ?2)")?;
    for (id, v) in added {
        st.execute([i64::from(*id), i64::from(*v)])?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "features_tests.rs"]
mod tests;
