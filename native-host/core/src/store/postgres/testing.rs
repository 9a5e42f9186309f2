//! A real PostgreSQL server for tests: the server `scripts/pg-cluster.sh` started (its URL in
//! `FORAGER_TEST_PG`), and a fresh database on it per test, dropped afterwards, so tests are
//! independent and run in parallel.

use super::off_runtime;
use r2d2_postgres::postgres;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The variable holding the test server's URL.
pub const SERVER_VAR: &str = "FORAGER_TEST_PG";

/// The test server's URL. Without one, a PostgreSQL test fails in CI (`CI` set) with a message
/// saying how to start one, and elsewhere returns `None` after saying it is skipped.
pub fn server() -> Option<String> {
    match std::env::var(SERVER_VAR) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false") => panic!(
            "{SERVER_VAR} is not set: the PostgreSQL tests need a server. scripts/test-all.sh \
             starts one (scripts/pg-cluster.sh start prints its URL)"
        ),
        _ => {
            eprintln!(
                "skipped: {SERVER_VAR} is not set (export {SERVER_VAR}=$(scripts/pg-cluster.sh start) to run the PostgreSQL tests)"
            );
            None
        }
    }
}

/// A database of its own on the test server, dropped when this is dropped.
pub struct TestDb {
    server: String,
    name: String,
    url: String,
}

impl TestDb {
    /// Creates an empty database named after `label`, this process and a counter.
    pub fn create(server: &str, label: &str) -> TestDb {
        static N: AtomicUsize = AtomicUsize::new(0);
        let clean: String = label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .take(30)
            .collect();
        let name = format!(
            "t{}_{}_{clean}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        admin(server, &format!("CREATE DATABASE {name}"));
        let mut url = url::Url::parse(server).expect("FORAGER_TEST_PG is a URL");
        url.set_path(&name);
        TestDb {
            server: server.to_owned(),
            name,
            url: url.to_string(),
        }
    }

    /// Its connection string.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        admin(
            &self.server,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

/// Runs one statement on the test server's own database; panics with the server's error.
fn admin(server: &str, sql: &str) {
    off_runtime(|| {
        let mut c = postgres::Client::connect(server, postgres::NoTls)
            .unwrap_or_else(|e| panic!("connecting to the test server {server}: {e}"));
        c.batch_execute(sql)
            .unwrap_or_else(|e| panic!("{sql} on the test server: {e}"));
    });
}

/// Runs one query on the crawl database at `url` and returns its one number.
pub fn number(url: &str, sql: &str) -> i64 {
    off_runtime(|| {
        let mut c = postgres::Client::connect(url, postgres::NoTls)
            .unwrap_or_else(|e| panic!("connecting to {url}: {e}"));
        c.query_one(sql, &[])
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .get(0)
    })
}

/// Makes every worker's lease in the crawl database at `url` lapse now, as the clock would
/// once they all stopped renewing (tests need not wait the lease out).
pub fn lapse_leases(url: &str) {
    number(
        url,
        "WITH l AS (UPDATE worker SET lease_until = 0 RETURNING 1) SELECT count(*) FROM l",
    );
}

/// Makes `worker`'s lease lapse now, as the clock would once it stopped renewing (a killed
/// worker's; the others keep theirs).
pub fn lapse_lease(url: &str, worker: &str) {
    let name = worker.replace('\'', "''");
    number(
        url,
        &format!(
            "WITH l AS (UPDATE worker SET lease_until = 0 WHERE name = '{name}' RETURNING 1)
             SELECT count(*) FROM l"
        ),
    );
}

/// Fetches recorded beyond one per fetched page (a page recorded twice counts twice on its
/// host's `crawled`): 0 when no page was fetched and recorded by two workers.
pub fn recorded_twice(url: &str) -> i64 {
    number(
        url,
        "SELECT (SELECT coalesce(sum(crawled), 0)::int8 FROM server)
              - (SELECT count(*) FROM doc WHERE status = 2)",
    )
}

/// How many hosts are leased to some worker.
pub fn leased_hosts(url: &str) -> i64 {
    number(
        url,
        "SELECT count(*) FROM server WHERE lease_owner IS NOT NULL",
    )
}

/// How many URLs are in flight.
pub fn in_flight(url: &str) -> i64 {
    number(url, "SELECT count(*) FROM doc WHERE status = 1")
}

/// The worker name of the process `pid` in the crawl database at `url`, and how many URLs it
/// checked out, once it has checked out any.
pub fn worker_of(url: &str, pid: u32) -> Option<(String, i64)> {
    off_runtime(|| {
        let mut c = postgres::Client::connect(url, postgres::NoTls).ok()?;
        let row = c
            .query_opt(
                "SELECT name, checked_out FROM worker WHERE name LIKE $1",
                &[&format!("%-{pid}-%")],
            )
            .ok()??;
        Some((row.get(0), row.get(1)))
    })
}

/// The worker names of the process `pid` in the crawl database at `url` (one per process,
/// however many rounds it crawled).
pub fn workers_of(url: &str, pid: u32) -> Vec<String> {
    off_runtime(|| {
        let Ok(mut c) = postgres::Client::connect(url, postgres::NoTls) else {
            return Vec::new();
        };
        let rows = c
            .query(
                "SELECT name FROM worker WHERE name LIKE $1 ORDER BY name",
                &[&format!("%-{pid}-%")],
            )
            .unwrap_or_default();
        rows.iter().map(|r| r.get(0)).collect()
    })
}

/// Hosts leased to `worker`, the frontier URLs of those hosts, and the URLs it has in flight
/// (checked out by it, on whatever host).
pub fn held_by(url: &str, worker: &str) -> (i64, i64, i64) {
    let q = |sql: &str| number(url, &sql.replace("$W", &worker.replace('\'', "''")));
    (
        q("SELECT count(*) FROM server WHERE lease_owner = '$W'"),
        q("SELECT count(*) FROM doc d JOIN server s USING (sid) WHERE s.lease_owner = '$W' AND d.status = 0"),
        q("SELECT count(*) FROM doc d JOIN server s USING (sid)
           WHERE coalesce(d.held_by, s.lease_owner) = '$W' AND d.status = 1"),
    )
}

/// A connection that samples what the server's sessions on one crawl database are doing.
pub struct Sessions(postgres::Client);

impl Sessions {
    /// Connects to the crawl database at `url`.
    pub fn connect(url: &str) -> Sessions {
        Sessions(
            postgres::Client::connect(url, postgres::NoTls)
                .unwrap_or_else(|e| panic!("connecting to {url}: {e}")),
        )
    }

    /// The other sessions on the database by what they do, with counts: their state, and
    /// what they wait for when they wait ("active", "active Lock:advisory claim", "idle in
    /// transaction Client:ClientRead", "idle Client:ClientRead", ...; an advisory lock is
    /// named: claim, record, job, or its key).
    pub fn sample(&mut self) -> Vec<(String, i64)> {
        let rows = self
            .0
            .query(
                "SELECT concat_ws(' ', a.state, a.wait_event_type || ':' || a.wait_event,
                   (SELECT CASE l.objid WHEN $1 THEN 'claim' WHEN $2 THEN 'record'
                             WHEN $3 THEN 'job' ELSE l.objid::text END
                    FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory'
                      AND NOT l.granted LIMIT 1)), count(*)
                 FROM pg_stat_activity a
                 WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
                 GROUP BY 1 ORDER BY 1",
                &[
                    &key(super::lease::CLAIM_LOCK),
                    &key(super::record::RECORD_LOCK),
                    &key(super::shared::JOB_LOCK),
                ],
            )
            .unwrap_or_default();
        rows.iter().map(|r| (r.get(0), r.get(1))).collect()
    }

    /// Deadlocks the server has broken in this database so far.
    pub fn deadlocks(&mut self) -> i64 {
        (self.0)
            .query_one(
                "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()",
                &[],
            )
            .map_or(0, |r| r.get(0))
    }
}

/// An advisory lock key as `pg_locks.objid` shows it (its low 32 bits).
fn key(k: i64) -> postgres::types::Oid {
    (k & 0xffff_ffff) as postgres::types::Oid
}
