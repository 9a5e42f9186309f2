//! Host leases on PostgreSQL, as the SQLite store keeps them: `server.lease_owner` names the
//! worker holding a host, the lease is the worker's row in `worker` (`lease_until`, renewed by
//! its heartbeat). A worker that dies loses its hosts when its lease runs out; its in-flight
//! URLs return to the frontier, and nothing fetched is touched.
//!
//! A held host, once its politeness slot (`server.ready_at`) has come, follows the frontier's
//! head: the next worker whose checkout reaches its URLs takes it over, so the crawl's best
//! URLs go to whoever asks next rather than wait for the worker that first met their host.
//! With a politeness gap, a host with URLs in flight stays with its holder until they are
//! recorded (its holder keeps the gap from the fetches it actually made); with none there is
//! no gap to keep, and a busy host follows the head too (the focus bench, delay 0: held busy
//! hosts sent workers deeper down the frontier; docs/benchmarks.md). Each in-flight URL names
//! the worker that checked it out (`doc.held_by`): it is never fetched twice, and a dead
//! worker's in-flight URLs wait out its own lease, whoever holds their host.
//!
//! Claims are serialised by a transaction-scoped advisory lock (two workers never both take a
//! free host: each claim sees every claim committed before it), and frontier rows are locked
//! `FOR UPDATE SKIP LOCKED`, so a checkout never waits on rows another worker is recording.
//!
//! Lock order, the same in every transaction of the store: the claim lock before the record
//! lock (no transaction takes both today), then `doc` rows in URL order (as a record's batched
//! insert takes them), then `server` rows in id order, `FOR NO KEY UPDATE` (a `doc` insert
//! shares its server's key: a stronger lock would wait for every batch enqueueing a URL of
//! the host). In-flight rows going back to the
//! frontier are therefore locked `ORDER BY url` first ([`back_to_frontier`]); a deadlock that
//! slips through anyway is run again by the door.

use super::{limit, rows, Conn};
use crate::crawl::policy::claim;
use crate::store::{now, DocStatus, PageId, Result, Work};
use postgres::Transaction;
use r2d2_postgres::postgres;
use std::collections::HashSet;
use std::time::Duration;

/// The advisory lock key of host claims ("lease").
pub(super) const CLAIM_LOCK: i64 = 0x6c65_6173;

/// A host's holder is a live worker at `$2` (now).
const LIVE_HOLDER: &str = "EXISTS (
    SELECT 1 FROM worker w WHERE w.name = s.lease_owner AND w.lease_until >= $2)";

/// A host `$1` (the worker) may take at `$2` (now): no holder, `$1` itself, a holder whose
/// lease ran out, or a live holder whose politeness slot has come, with nothing of it in
/// flight unless `$4` (there is no politeness gap): a held host follows the frontier's head
/// (see [`checkout`]).
const MAY_HAVE: &str = "(s.lease_owner IS NULL OR s.lease_owner = $1 OR NOT EXISTS (
    SELECT 1 FROM worker w WHERE w.name = s.lease_owner AND w.lease_until >= $2)
  OR (coalesce(s.ready_at, 0) <= $2
      AND ($4 OR NOT EXISTS (SELECT 1 FROM doc f WHERE f.sid = s.sid AND f.status = 1))))";

/// An in-flight `doc d` whose holder (the worker that checked it out, else its host's) has no
/// live lease at `$1`.
const HOLDER_GONE: &str = "NOT EXISTS (SELECT 1 FROM worker w WHERE w.lease_until >= $1
    AND w.name = coalesce(d.held_by, (SELECT h.lease_owner FROM server h WHERE h.sid = d.sid)))";

/// A transaction holding the claim lock, with `worker`'s lease started or extended to
/// `lease` from `at` (its heartbeat), and whether a lease may have lapsed (a worker's, or a
/// host's holder with none): lock, heartbeat and look in one round trip.
fn claiming<'c>(
    c: &'c mut Conn,
    worker: &str,
    lease: Duration,
    at: f64,
) -> Result<(Transaction<'c>, bool)> {
    let mut tx = c.transaction()?;
    // The look reads the statement's snapshot, taken before the lock: a lease ended by the
    // last holder of the lock may still show (expiring again is harmless), and one that
    // lapsed an instant ago is seen next time.
    let lapsed = tx
        .query_one(
            "INSERT INTO worker(name, started_at, heartbeat, lease_until)
             SELECT $1::text, $2::float8, $2::float8, $3::float8
             FROM (SELECT pg_advisory_xact_lock($4)) AS locked
             ON CONFLICT(name) DO UPDATE SET heartbeat = excluded.heartbeat,
               lease_until = GREATEST(worker.lease_until, excluded.lease_until)
             RETURNING EXISTS (SELECT 1 FROM worker w WHERE w.lease_until < $2)
               OR EXISTS (SELECT 1 FROM server s WHERE s.lease_owner IS NOT NULL
                            AND NOT EXISTS (SELECT 1 FROM worker w
                              WHERE w.name = s.lease_owner AND w.lease_until >= $2))",
            &[&worker, &at, &(at + lease.as_secs_f64()), &CLAIM_LOCK],
        )?
        .get(0);
    Ok((tx, lapsed))
}

/// Gives the hosts `sids` (each: taken over from a lapsed lease?) to `worker`, moves the
/// next politeness slot of the hosts in `ready_at` (host, Unix seconds; see
/// [`claim::ready_first`]) and marks `oids` in flight, held by `worker`, counted as its
/// checkouts; a host taken over from a lapsed lease at `at` has the in-flight URLs whose
/// holder is gone returned to the frontier first. One round trip unless a lease lapsed.
fn claim(
    tx: &mut Transaction<'_>,
    (worker, at): (&str, f64),
    sids: &[(i64, bool)],
    (oids, ready_at): (&[i64], &[(i64, f64)]),
) -> Result<()> {
    let lapsed: Vec<i64> = sids.iter().filter(|s| s.1).map(|s| s.0).collect();
    let mut all: Vec<i64> = (sids.iter().map(|s| s.0))
        .chain(ready_at.iter().map(|r| r.0))
        .collect();
    all.sort_unstable();
    all.dedup();
    let claimed: Vec<i64> = sids.iter().map(|s| s.0).collect();
    let (slot_sid, slot_at): (Vec<i64>, Vec<f64>) = ready_at.iter().copied().unzip();
    if !lapsed.is_empty() {
        let gone = format!("{HOLDER_GONE} AND d.sid = ANY($2)");
        back_to_frontier(tx, &gone, &[&at, &lapsed])?;
    }
    // The checked-out rows are locked already (the pick); then `server` rows in id order.
    tx.execute(
        "WITH held AS (
           UPDATE server s SET
             lease_owner = CASE WHEN s.sid = ANY($5) THEN $1 ELSE s.lease_owner END,
             ready_at = coalesce(r.at, s.ready_at)
           FROM (SELECT sid FROM server WHERE sid = ANY($2) ORDER BY sid FOR NO KEY UPDATE) l
           LEFT JOIN unnest($6::int8[], $7::float8[]) AS r(sid, at) ON r.sid = l.sid
           WHERE s.sid = l.sid),
         counted AS (
           UPDATE worker SET checked_out = checked_out + cardinality($3::int8[])
           WHERE name = $1)
         UPDATE doc SET status = $4, held_by = $1 WHERE oid = ANY($3)",
        &[
            &worker,
            &all,
            &oids,
            &DocStatus::InFlight.code(),
            &claimed,
            &slot_sid,
            &slot_at,
        ],
    )?;
    Ok(())
}

/// Returns the in-flight URLs matching `condition` on `doc d` (its parameters from `$1`) to
/// the frontier, locking them in URL order (the lock order); returns how many.
fn back_to_frontier(
    tx: &mut Transaction<'_>,
    condition: &str,
    params: &[&(dyn postgres::types::ToSql + Sync)],
) -> Result<usize> {
    let n = params.len();
    let sql = format!(
        "UPDATE doc SET status = ${} WHERE oid IN (
           SELECT d.oid FROM doc d WHERE d.status = ${} AND {condition}
           ORDER BY d.url FOR UPDATE OF d)",
        n + 1,
        n + 2
    );
    let (back, flying) = (DocStatus::Unvisited.code(), DocStatus::InFlight.code());
    let mut all: Vec<&(dyn postgres::types::ToSql + Sync)> = params.to_vec();
    all.push(&back);
    all.push(&flying);
    Ok(rows(tx.execute(sql.as_str(), &all)?))
}

/// Checks out for `worker` up to `n` frontier URLs among the hosts it holds or may take
/// (claimed as met: free, lapsed, or another live worker's whose slot has come, with nothing
/// in flight when there is a `gap`), marking them in flight: with a politeness `gap`, URLs of
/// hosts ready now first ([`claim::ready_first`]) among the crawl's head ([`head`]), else in
/// frontier order.
pub(super) fn checkout(
    c: &mut Conn,
    worker: &str,
    n: usize,
    (lease, gap): (Duration, Duration),
) -> Result<Vec<Work>> {
    let at = now();
    let (mut tx, lapsed) = claiming(c, worker, lease, at)?;
    // Lapsed leases end first: a dead worker's in-flight URLs are back before the frontier is
    // read (else a crawl whose only URLs were in flight there would look finished).
    if lapsed {
        expire(&mut tx, at)?;
    }
    let gap = gap.as_secs_f64();
    let picked = if gap > 0.0 {
        head(&mut tx, worker, at, (n, gap))?
    } else {
        tx.query(
            &format!(
                "SELECT d.oid, d.url, d.depth, d.relevance, d.num_tries, d.sid, s.lease_owner,
                   s.ready_at, {LIVE_HOLDER}
                 FROM doc d JOIN server s ON s.sid = d.sid WHERE d.status = 0 AND {MAY_HAVE}
                 ORDER BY d.num_tries ASC, d.relevance DESC, d.priority ASC, d.rnd LIMIT $3
                 FOR UPDATE OF d SKIP LOCKED"
            ),
            &[&worker, &at, &limit(n), &true],
        )?
    };
    let candidates: Vec<claim::Candidate> = (picked.iter())
        .map(|r| claim::Candidate {
            sid: r.get(5),
            ready_at: r.get(7),
        })
        .collect();
    let mut taken = claim::ready_first(&candidates, n, at, gap);
    if gap > 0.0 {
        taken.picks = lock_picks(&mut tx, &picked, &taken.picks)?;
    }
    let mut claimed = Vec::new();
    let mut seen = HashSet::new();
    let mut work = Vec::with_capacity(taken.picks.len());
    for r in taken.picks.iter().map(|i| &picked[*i]) {
        let (sid, owner, live): (i64, Option<String>, bool) = (r.get(5), r.get(6), r.get(8));
        if owner.as_deref() != Some(worker) && seen.insert(sid) {
            claimed.push((sid, owner.is_some() && !live));
        }
        work.push(Work {
            oid: PageId::from_raw(r.get(0)),
            url: r.get(1),
            depth: r.get(2),
            score: r.get(3),
            tries: r.get(4),
            revisit: false,
        });
    }
    let oids: Vec<i64> = work.iter().map(|w| w.oid.raw()).collect();
    claim(&mut tx, (worker, at), &claimed, (&oids, &taken.ready_at))?;
    tx.commit()?;
    Ok(work)
}

/// With a politeness gap: the URLs `worker` may take among the crawl's head at `at` — the
/// first pending URLs of every host in frontier order, as deep as [`claim::reach`] for the
/// live workers — read without locks (the claim lock keeps other checkouts out; the picks are
/// locked after, [`lock_picks`]).
fn head(
    tx: &mut Transaction<'_>,
    worker: &str,
    at: f64,
    (n, gap): (usize, f64),
) -> Result<Vec<postgres::Row>> {
    let live: i64 = tx
        .query_one(
            "SELECT count(*) FROM worker WHERE lease_until >= $1",
            &[&at],
        )?
        .get(0);
    let reach = claim::reach(n, gap, usize::try_from(live).unwrap_or(1));
    let rows = tx.query(
        &format!(
            "SELECT d.oid, d.url, d.depth, d.relevance, d.num_tries, d.sid, s.lease_owner,
               s.ready_at, {LIVE_HOLDER}, {MAY_HAVE}
             FROM doc d JOIN server s ON s.sid = d.sid WHERE d.status = 0
             ORDER BY d.num_tries ASC, d.relevance DESC, d.priority ASC, d.rnd LIMIT $3"
        ),
        &[&worker, &at, &limit(reach), &false],
    )?;
    Ok(rows.into_iter().filter(|r| r.get::<_, bool>(9)).collect())
}

/// Locks the rows of `picks` (indexes into `rows`) still in the frontier, skipping any a
/// record holds; returns the picks locked, in their order.
fn lock_picks(
    tx: &mut Transaction<'_>,
    rows: &[postgres::Row],
    picks: &[usize],
) -> Result<Vec<usize>> {
    let oids: Vec<i64> = picks.iter().map(|i| rows[*i].get(0)).collect();
    let locked: HashSet<i64> = (tx.query(
        "SELECT oid FROM doc WHERE oid = ANY($1) AND status = 0 ORDER BY url
         FOR UPDATE SKIP LOCKED",
        &[&oids],
    )?)
    .iter()
    .map(|r| r.get(0))
    .collect();
    Ok((picks.iter().copied())
        .filter(|i| locked.contains(&rows[*i].get::<_, i64>(0)))
        .collect())
}

/// Claims up to `n` hosts with frontier URLs that `worker` may take (with politeness `gap`, as
/// a checkout), in order of their best pending URL; returns their names.
pub(super) fn claim_hosts(
    c: &mut Conn,
    worker: &str,
    n: usize,
    (lease, gap): (Duration, Duration),
) -> Result<Vec<String>> {
    let at = now();
    let (mut tx, _) = claiming(c, worker, lease, at)?;
    let best = tx.query(
        &format!(
            "SELECT sid, host, lease_owner, live FROM (
               SELECT DISTINCT ON (d.sid) d.sid, s.host, s.lease_owner, {LIVE_HOLDER} AS live,
                 d.num_tries, d.relevance, d.priority, d.rnd
               FROM doc d JOIN server s ON s.sid = d.sid
               WHERE d.status = 0 AND {MAY_HAVE} AND s.lease_owner IS DISTINCT FROM $1
               ORDER BY d.sid, d.num_tries ASC, d.relevance DESC, d.priority ASC, d.rnd) b
             ORDER BY num_tries ASC, relevance DESC, priority ASC, rnd LIMIT $3"
        ),
        &[&worker, &at, &limit(n), &gap.is_zero()],
    )?;
    let claimed: Vec<(i64, bool)> = (best.iter())
        .map(|r| {
            (
                r.get(0),
                r.get::<_, Option<String>>(2).is_some() && !r.get::<_, bool>(3),
            )
        })
        .collect();
    claim(&mut tx, (worker, at), &claimed, (&[], &[]))?;
    tx.commit()?;
    Ok(best.iter().map(|r| r.get(1)).collect())
}

/// Extends `worker`'s lease and ends others' lapsed leases; returns the hosts it holds.
pub(super) fn renew(c: &mut Conn, worker: &str, lease: Duration) -> Result<usize> {
    let at = now();
    let (mut tx, lapsed) = claiming(c, worker, lease, at)?;
    if lapsed {
        expire(&mut tx, at)?;
    }
    let held: i64 = tx
        .query_one(
            "SELECT count(*) FROM server WHERE lease_owner = $1",
            &[&worker],
        )?
        .get(0);
    tx.commit()?;
    Ok(usize::try_from(held).unwrap_or(0))
}

/// Gives `hosts` back: they are free, and `worker`'s in-flight URLs of them return (not
/// another worker's that it checked out before `worker` took the host over).
pub(super) fn release_hosts(c: &mut Conn, worker: &str, hosts: &[String]) -> Result<()> {
    let mut tx = c.transaction()?;
    back_to_frontier(
        &mut tx,
        "d.sid IN (SELECT sid FROM server WHERE host = ANY($2) AND lease_owner = $1)
         AND coalesce(d.held_by, $1) = $1",
        &[&worker, &hosts],
    )?;
    tx.execute(
        "UPDATE server SET lease_owner = NULL WHERE sid IN (
           SELECT sid FROM server WHERE host = ANY($2) AND lease_owner = $1
           ORDER BY sid FOR NO KEY UPDATE)",
        &[&worker, &hosts],
    )?;
    Ok(tx.commit()?)
}

/// Ends lapsed leases; returns how many in-flight URLs came back to the frontier.
pub(super) fn expire_leases(c: &mut Conn) -> Result<usize> {
    let mut tx = c.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&CLAIM_LOCK])?;
    let n = expire(&mut tx, now())?;
    tx.commit()?;
    Ok(n)
}

/// Ends the leases of workers whose lease ran out before `at`: their hosts are free, and the
/// URLs they had in flight (whoever holds their hosts now) return to the frontier.
fn expire(tx: &mut Transaction<'_>, at: f64) -> Result<usize> {
    const LAPSED: &str = "lease_owner IS NOT NULL
        AND lease_owner NOT IN (SELECT name FROM worker WHERE lease_until >= $1)";
    let back = back_to_frontier(tx, HOLDER_GONE, &[&at])?;
    tx.execute(
        &format!(
            "UPDATE server SET lease_owner = NULL WHERE sid IN (
               SELECT sid FROM server WHERE {LAPSED} ORDER BY sid FOR NO KEY UPDATE)"
        ),
        &[&at],
    )?;
    tx.execute("DELETE FROM worker WHERE lease_until < $1", &[&at])?;
    Ok(back)
}

/// Whether a host held under a lease (live or lapsed) has URLs in the frontier, or any URL is
/// in flight (a worker's, on a host another worker took over and gave back, say).
/// Read under the claim lock, after it is taken: every claim begun before has committed and
/// shows (a claim made as another process's frontier ran dry cannot be missed).
pub(super) fn leased_work_left(c: &mut Conn) -> Result<bool> {
    let mut tx = c.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&CLAIM_LOCK])?;
    let left = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM server s JOIN doc d ON d.sid = s.sid
               WHERE s.lease_owner IS NOT NULL AND d.status = 0)
             OR EXISTS (SELECT 1 FROM doc WHERE status = 1)",
            &[],
        )?
        .get(0);
    tx.commit()?;
    Ok(left)
}

/// The hosts `worker` holds, by name.
pub(super) fn held_hosts(c: &mut Conn, worker: &str) -> Result<Vec<String>> {
    let rows = c.query(
        "SELECT host FROM server WHERE lease_owner = $1 ORDER BY host",
        &[&worker],
    )?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{self, TestDb};
    use super::super::PgStore;
    use super::CLAIM_LOCK;
    use crate::store::{now, CrawlDb, NewUrl};
    use r2d2_postgres::postgres;
    use std::time::Duration;

    /// The URLs `store` checks out for `worker`, up to `n`.
    fn urls(store: &mut PgStore, worker: &str, n: usize) -> Vec<String> {
        let work = store.checkout(worker, n, Duration::from_secs(600)).unwrap();
        work.into_iter().map(|w| w.url).collect()
    }

    /// Three URLs of a.test ahead of b.test's and c.test's.
    fn bunched(server: &str, label: &str) -> (TestDb, PgStore) {
        let db = TestDb::create(server, label);
        let mut store = PgStore::open(db.url()).unwrap();
        let seeds: Vec<_> = [
            ("http://a.test/1", 0.9),
            ("http://a.test/2", 0.8),
            ("http://a.test/3", 0.7),
            ("http://b.test/", 0.5),
            ("http://c.test/", 0.4),
        ]
        .iter()
        .map(|(u, s)| crate::store::contract::url(u, *s, None, None))
        .collect();
        store.add_seeds(&seeds).unwrap();
        (db, store)
    }

    #[test]
    fn with_a_politeness_gap_a_checkout_takes_ready_hosts_first_and_keeps_their_slots() {
        let Some(server) = testing::server() else {
            return;
        };
        // With no gap: the frontier order, bunched on a.test.
        let (_plain, mut store) = bunched(&server, "ready-none");
        assert_eq!(
            urls(&mut store, "w1", 3),
            ["http://a.test/1", "http://a.test/2", "http://a.test/3"]
        );
        let (db, mut store) = bunched(&server, "ready-gap");
        store.set_politeness(Duration::from_secs(30));
        let first = urls(&mut store, "w1", 3);
        assert_eq!(
            first,
            ["http://a.test/1", "http://b.test/", "http://c.test/"]
        );
        // Only a.test is left: its URLs, though not ready (never none while work is held).
        assert_eq!(
            urls(&mut store, "w1", 5),
            ["http://a.test/2", "http://a.test/3"]
        );
        // Each host's next slot is kept: a.test's three URLs 30 s apart from now.
        let ahead = |host: &str| {
            testing::number(
                db.url(),
                &format!(
                    "SELECT round(ready_at - extract(epoch from clock_timestamp()))::int8
                     FROM server WHERE host = '{host}'"
                ),
            )
        };
        assert!((88..=90).contains(&ahead("a.test")), "{}", ahead("a.test"));
        assert!((28..=30).contains(&ahead("b.test")), "{}", ahead("b.test"));
    }

    /// `ahead` URLs of a.test, then b.test's, with a 30 s politeness gap; w1 has a.test/0 in
    /// flight. What w2 checks out.
    fn behind_a_busy_head(server: &str, ahead: usize) -> Vec<String> {
        let db = TestDb::create(server, &format!("reach-{ahead}"));
        let mut store = PgStore::open(db.url()).unwrap();
        let mut seeds: Vec<_> = (0..ahead)
            .map(|i| {
                let u = format!("http://a.test/{i}");
                crate::store::contract::url(&u, 0.9 - i as f64 * 1e-3, None, None)
            })
            .collect();
        seeds.push(crate::store::contract::url(
            "http://b.test/",
            0.1,
            None,
            None,
        ));
        store.add_seeds(&seeds).unwrap();
        store.set_politeness(Duration::from_secs(30));
        assert_eq!(urls(&mut store, "w1", 1), ["http://a.test/0"]);
        urls(&mut store, "w2", 1)
    }

    #[test]
    fn with_a_gap_a_worker_waits_for_a_busy_head_rather_than_reach_far_past_it() {
        let Some(server) = testing::server() else {
            return;
        };
        // Two workers checking out 1 reach (4 + 16) x 2 = 40 URLs into the frontier: with 60
        // of a.test (busy with w1) ahead, b.test is too far down for w2; with 10, it is not.
        assert_eq!(behind_a_busy_head(&server, 60), Vec::<String>::new());
        assert_eq!(behind_a_busy_head(&server, 10), ["http://b.test/"]);
    }

    #[test]
    fn with_no_gap_a_busy_host_follows_the_head_and_its_urls_in_flight_stay_their_holders() {
        let Some(server) = testing::server() else {
            return;
        };
        let (db, mut store) = bunched(&server, "busy-follows");
        let in_flight = || testing::in_flight(db.url());
        // w1's lease is short: it will die with a.test/1 in flight.
        let first = store.checkout("w1", 1, Duration::from_secs(1)).unwrap();
        assert_eq!(first[0].url, "http://a.test/1");
        // No politeness gap: a.test, busy with w1's URL, goes to the next worker that asks.
        assert_eq!(urls(&mut store, "w2", 1), ["http://a.test/2"]);
        assert_eq!(store.held_hosts("w2").unwrap(), ["a.test"]);
        // Giving a.test back returns w2's URL of it, not w1's.
        store.release_hosts("w2", &["a.test".into()]).unwrap();
        assert_eq!(in_flight(), 1, "a.test/1 is w1's, in flight still");
        assert_eq!(
            urls(&mut store, "w2", 2),
            ["http://a.test/2", "http://a.test/3"]
        );
        // w1 dies: its URL returns once its own lease lapses, though its host is w2's.
        std::thread::sleep(Duration::from_millis(1200));
        assert_eq!(store.held_hosts("w2").unwrap(), ["a.test"]);
        assert_eq!(store.expire_leases().unwrap(), 1);
        assert_eq!(in_flight(), 2);
        assert_eq!(urls(&mut store, "w2", 1), ["http://a.test/1"]);
    }

    #[test]
    fn the_look_for_leased_work_sees_a_claim_that_was_being_made() {
        let Some(server) = testing::server() else {
            return;
        };
        let db = TestDb::create(&server, "leased-work-race");
        let mut store = PgStore::open(db.url()).unwrap();
        let seed = url::Url::parse("http://a.test/").unwrap();
        store.add_seeds(&[NewUrl::seed(&seed)]).unwrap();
        assert!(!store.leased_work_left().unwrap());
        // Another worker's checkout, as it makes its claim, not yet committed: the claim
        // lock, its lease, the host held, the URL in flight.
        let mut other = postgres::Client::connect(db.url(), postgres::NoTls).unwrap();
        let mut claim = other.transaction().unwrap();
        claim
            .execute("SELECT pg_advisory_xact_lock($1)", &[&CLAIM_LOCK])
            .unwrap();
        claim
            .execute(
                "INSERT INTO worker(name, started_at, heartbeat, lease_until)
                 VALUES('other', $1, $1, $2)",
                &[&now(), &(now() + 600.0)],
            )
            .unwrap();
        claim
            .execute("UPDATE server SET lease_owner = 'other'", &[])
            .unwrap();
        claim.execute("UPDATE doc SET status = 1", &[]).unwrap();
        let look = std::thread::spawn(move || store.leased_work_left());
        std::thread::sleep(Duration::from_millis(400));
        assert!(
            !look.is_finished(),
            "the look answered before the claim in progress committed"
        );
        claim.commit().unwrap();
        assert!(
            look.join().unwrap().unwrap(),
            "the claim's URL in flight is leased work"
        );
    }
}
