//! Host leases (issue #26): a worker holds hosts, and checks out their URLs. A host's
//! `server.lease_owner` names the worker holding it; the lease itself is the worker's row in
//! `worker` (`lease_until`, renewed by its heartbeat), so a renewal is one row and a worker
//! that dies loses every host at once when its lease runs out: its hosts are free again and its
//! in-flight URLs return to the frontier. Nothing fetched is touched.
//!
//! Hosts are claimed in the order of their best pending URL: a checkout walks the frontier in
//! its order and claims the hosts it may have as it meets them, so one worker alone (the
//! SQLite default) checks out exactly the global best-first order it always did. A lease binds
//! a host to its holder only while URLs of it are in flight there: a held host with nothing
//! in flight follows the frontier's head (the next worker whose checkout reaches it takes it
//! over), and a dead worker's in-flight URLs wait out its lease.

use super::{now, DocStatus, Result, Store, Work};
use rusqlite::{params, Connection, OptionalExtension, Transaction};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// The worker name of a one-process crawl (the SQLite default).
pub const LOCAL_WORKER: &str = "local";

/// How long a worker's lease lasts without a heartbeat.
pub const LEASE: Duration = Duration::from_secs(120);

/// How often a crawl renews its lease (well inside [`LEASE`]).
pub const RENEW_EVERY: Duration = Duration::from_secs(15);

/// A worker of a crawl as `forager status` lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerRow {
    /// Its name.
    pub name: String,
    /// When it first checked out work (Unix seconds).
    pub started_at: f64,
    /// Its last heartbeat (Unix seconds).
    pub heartbeat: f64,
    /// When its lease runs out unless renewed (Unix seconds).
    pub lease_until: f64,
    /// Hosts it holds.
    pub hosts: i64,
    /// URLs it has checked out.
    pub checked_out: i64,
    /// Pages it has fetched and recorded (since it started).
    pub recorded: i64,
}

/// The lease columns and the workers table, added to a database made before them; in-flight
/// rows are indexed (few rows: the crawl's look-ahead) so expiry finds them without a scan.
pub(super) fn migrate(conn: &Connection) -> Result<()> {
    if conn
        .prepare("SELECT lease_owner FROM server LIMIT 0")
        .is_err()
    {
        conn.execute_batch("ALTER TABLE server ADD COLUMN lease_owner TEXT")?;
    }
    conn.execute_batch(
        "CREATE INDEX IF NOT EXISTS server_lease ON server(lease_owner)
           WHERE lease_owner IS NOT NULL;
         CREATE INDEX IF NOT EXISTS doc_in_flight ON doc(sid) WHERE status = 1;
         CREATE TABLE IF NOT EXISTS worker(
           name TEXT PRIMARY KEY, started_at REAL NOT NULL, heartbeat REAL NOT NULL,
           lease_until REAL NOT NULL, checked_out INTEGER NOT NULL DEFAULT 0);",
    )?;
    Ok(())
}

/// One writer only: whoever held leases in this file before is gone, so every lease has
/// expired ([`expire`] at the end of time). Their hosts are free and their in-flight URLs back
/// in the frontier, with any in flight under no lease (a database from before leases).
pub(super) fn expire_all(conn: &Connection) -> Result<()> {
    conn.execute(
        "UPDATE doc SET status = ?1 WHERE status = ?2",
        params![DocStatus::Unvisited, DocStatus::InFlight],
    )?;
    expire(conn, f64::MAX)?;
    Ok(())
}

/// Live workers' leases: name → lease end.
fn live_workers(tx: &Transaction<'_>, at: f64) -> Result<HashMap<String, f64>> {
    let mut st =
        tx.prepare_cached("SELECT name, lease_until FROM worker WHERE lease_until >= ?1")?;
    let rows = st.query_map([at], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

/// Starts or extends `worker`'s lease to `lease` from `at` (its heartbeat).
fn heartbeat(tx: &Transaction<'_>, worker: &str, lease: Duration, at: f64) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO worker(name, started_at, heartbeat, lease_until) VALUES(?1, ?2, ?2, ?3)
         ON CONFLICT(name) DO UPDATE SET heartbeat = excluded.heartbeat,
           lease_until = max(lease_until, excluded.lease_until)",
    )?
    .execute(params![worker, at, at + lease.as_secs_f64()])?;
    Ok(())
}

/// A frontier row as the lease walk reads it.
struct Row {
    work: Work,
    sid: i64,
    /// Its host is held by a worker whose lease ran out.
    lapsed: bool,
}

/// Walks the frontier in its order, calling `take` with each row whose host `worker` may have
/// (held by it, by no live worker, or by another live worker with nothing of it in flight)
/// until `take` says stop.
fn walk(
    tx: &Transaction<'_>,
    worker: &str,
    live: &HashMap<String, f64>,
    mut take: impl FnMut(Row, bool) -> bool,
) -> Result<()> {
    let mut st = tx.prepare_cached(
        "SELECT d.oid, d.url, d.depth, d.relevance, d.num_tries, d.sid, s.lease_owner
         FROM doc d INDEXED BY frontier JOIN server s ON s.sid = d.sid WHERE d.status = 0
         ORDER BY d.num_tries ASC, d.relevance DESC, d.priority ASC, d.rnd",
    )?;
    let mut busy =
        tx.prepare_cached("SELECT EXISTS (SELECT 1 FROM doc WHERE sid = ?1 AND status = 1)")?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let owner: Option<String> = r.get(6)?;
        let sid: i64 = r.get(5)?;
        let held = owner.as_deref() == Some(worker);
        let live = owner.as_ref().is_some_and(|o| live.contains_key(o));
        if !held && live && busy.query_row([sid], |b| b.get::<_, bool>(0))? {
            continue; // another live worker's host, with URLs in flight there
        }
        let row = Row {
            work: super::frontier::work_row(r, false)?,
            sid,
            lapsed: owner.is_some() && !held && !live,
        };
        if !take(row, held) {
            break;
        }
    }
    Ok(())
}

/// Gives the hosts `sids` (each: taken over from a lapsed lease?) to `worker`; a host taken
/// over from a lapsed lease has its in-flight URLs returned to the frontier first (its holder
/// is gone).
fn claim(tx: &Transaction<'_>, worker: &str, sids: &[(i64, bool)]) -> Result<()> {
    let mut give = tx.prepare_cached("UPDATE server SET lease_owner = ?2 WHERE sid = ?1")?;
    let mut back =
        tx.prepare_cached("UPDATE doc SET status = ?2 WHERE sid = ?1 AND status = ?3")?;
    for &(sid, lapsed) in sids {
        if lapsed {
            back.execute(params![sid, DocStatus::Unvisited, DocStatus::InFlight])?;
        }
        give.execute(params![sid, worker])?;
    }
    Ok(())
}

impl Store {
    /// Checks out up to `n` frontier URLs in frontier order among the hosts `worker` holds or
    /// may take (claimed as they are met: free, lapsed, or another live worker's with nothing
    /// in flight), marking them in flight; the worker's
    /// lease starts or is extended to `lease` from now.
    pub fn checkout_leased(
        &mut self,
        worker: &str,
        n: usize,
        lease: Duration,
    ) -> Result<Vec<Work>> {
        let at = now();
        let tx = self.conn.transaction()?;
        heartbeat(&tx, worker, lease, at)?;
        let live = live_workers(&tx, at)?;
        let mut work = Vec::with_capacity(n);
        let mut claimed: Vec<(i64, bool)> = Vec::new();
        let mut seen: HashSet<i64> = HashSet::new();
        if n > 0 {
            walk(&tx, worker, &live, |row, held| {
                if !held && seen.insert(row.sid) {
                    claimed.push((row.sid, row.lapsed));
                }
                work.push(row.work);
                work.len() < n
            })?;
        }
        claim(&tx, worker, &claimed)?;
        {
            let mut up = tx.prepare_cached("UPDATE doc SET status = ?1 WHERE oid = ?2")?;
            for w in &work {
                up.execute(params![DocStatus::InFlight, w.oid])?;
            }
        }
        tx.prepare_cached("UPDATE worker SET checked_out = checked_out + ?2 WHERE name = ?1")?
            .execute(params![worker, work.len() as i64])?;
        tx.commit()?;
        Ok(work)
    }

    /// Claims up to `n` hosts with frontier URLs that `worker` may take (as a checkout
    /// would), in order of their best pending URL, for `worker` (its lease started or extended); returns their names.
    pub fn claim_hosts(&mut self, worker: &str, n: usize, lease: Duration) -> Result<Vec<String>> {
        let at = now();
        let tx = self.conn.transaction()?;
        heartbeat(&tx, worker, lease, at)?;
        let live = live_workers(&tx, at)?;
        let mut claimed: Vec<(i64, bool)> = Vec::new();
        let mut seen: HashSet<i64> = HashSet::new();
        if n > 0 {
            walk(&tx, worker, &live, |row, held| {
                if !held && seen.insert(row.sid) {
                    claimed.push((row.sid, row.lapsed));
                }
                claimed.len() < n
            })?;
        }
        claim(&tx, worker, &claimed)?;
        let mut names = Vec::with_capacity(claimed.len());
        {
            let mut st = tx.prepare_cached("SELECT host FROM server WHERE sid = ?1")?;
            for (sid, _) in &claimed {
                names.push(st.query_row([sid], |r| r.get(0))?);
            }
        }
        tx.commit()?;
        Ok(names)
    }

    /// Extends `worker`'s lease to `lease` from now and sweeps lapsed leases of others;
    /// returns the hosts it holds.
    pub fn renew(&mut self, worker: &str, lease: Duration) -> Result<usize> {
        let at = now();
        let tx = self.conn.transaction()?;
        heartbeat(&tx, worker, lease, at)?;
        expire(&tx, at)?;
        let held = tx
            .prepare_cached("SELECT count(*) FROM server WHERE lease_owner = ?1")?
            .query_row([worker], |r| r.get::<_, i64>(0))?;
        tx.commit()?;
        Ok(held as usize)
    }

    /// Gives `hosts` back (dry, or the worker stops): they are free, and `worker`'s in-flight
    /// URLs of them return to the frontier.
    pub fn release_hosts(&mut self, worker: &str, hosts: &[String]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut sid_of =
                tx.prepare_cached("SELECT sid FROM server WHERE host = ?1 AND lease_owner = ?2")?;
            let mut back =
                tx.prepare_cached("UPDATE doc SET status = ?2 WHERE sid = ?1 AND status = ?3")?;
            let mut free =
                tx.prepare_cached("UPDATE server SET lease_owner = NULL WHERE sid = ?1")?;
            for h in hosts {
                let Some(sid) = sid_of
                    .query_row(params![h, worker], |r| r.get::<_, i64>(0))
                    .optional()?
                else {
                    continue;
                };
                back.execute(params![sid, DocStatus::Unvisited, DocStatus::InFlight])?;
                free.execute([sid])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Leases past their end: their hosts are free and their in-flight URLs back in the
    /// frontier; returns how many URLs came back.
    pub fn expire_leases(&mut self) -> Result<usize> {
        let tx = self.conn.transaction()?;
        let n = expire(&tx, now())?;
        tx.commit()?;
        Ok(n)
    }

    /// The hosts `worker` holds, by name.
    pub fn held_hosts(&self, worker: &str) -> Result<Vec<String>> {
        let mut st = self
            .conn
            .prepare_cached("SELECT host FROM server WHERE lease_owner = ?1 ORDER BY host")?;
        let rows = st.query_map([worker], |r| r.get(0))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Whether a leased host has URLs in the frontier or in flight (one process holds the
    /// file: every claim it made has committed).
    pub fn leased_work_left(&self) -> Result<bool> {
        let mut st = self.conn.prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM server s JOIN doc d ON d.sid = s.sid
               WHERE s.lease_owner IS NOT NULL AND d.status IN (0, 1))",
        )?;
        Ok(st.query_row([], |r| r.get(0))?)
    }
}

/// Ends the leases of workers whose lease ran out before `at`: returns the in-flight URLs that
/// came back to the frontier.
fn expire(tx: &Connection, at: f64) -> Result<usize> {
    const LAPSED: &str = "lease_owner IS NOT NULL
        AND lease_owner NOT IN (SELECT name FROM worker WHERE lease_until >= ?1)";
    let back = tx
        .prepare_cached(&format!(
            "UPDATE doc SET status = ?2 WHERE status = ?3
             AND sid IN (SELECT sid FROM server WHERE {LAPSED})"
        ))?
        .execute(params![at, DocStatus::Unvisited, DocStatus::InFlight])?;
    tx.prepare_cached(&format!(
        "UPDATE server SET lease_owner = NULL WHERE {LAPSED}"
    ))?
    .execute([at])?;
    tx.prepare_cached("DELETE FROM worker WHERE lease_until < ?1")?
        .execute([at])?;
    Ok(back)
}

/// The workers of the crawl on `conn`, with the hosts each holds, by name.
pub(super) fn workers_of(conn: &Connection) -> Result<Vec<WorkerRow>> {
    let made: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'worker'",
        [],
        |r| r.get(0),
    )?;
    if made == 0 {
        return Ok(Vec::new()); // a database from before leases
    }
    let mut st = conn.prepare(
        "SELECT w.name, w.started_at, w.heartbeat, w.lease_until, w.checked_out,
           (SELECT count(*) FROM server s WHERE s.lease_owner = w.name),
           (SELECT count(*) FROM doc d WHERE d.status = 2 AND d.fetched_at >= w.started_at)
         FROM worker w ORDER BY w.name",
    )?;
    let rows = st.query_map([], |r| {
        Ok(WorkerRow {
            name: r.get(0)?,
            started_at: r.get(1)?,
            heartbeat: r.get(2)?,
            lease_until: r.get(3)?,
            checked_out: r.get(4)?,
            hosts: r.get(5)?,
            // One process writes a SQLite crawl: its pages since it started are its own.
            recorded: r.get(6)?,
        })
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}
