//! The crawl database on a PostgreSQL server, shared by crawls on many machines: the same door
//! ([`CrawlDb`]) and the same tables as the SQLite store (`doc`, `link`, `server`, `taxonomy`,
//! `hub`, `auth`, ...), so the census and the paper's SQL read the same columns.
//!
//! The client is the blocking `postgres` crate (tokio-postgres under a private runtime per
//! connection) with an `r2d2` pool, one per server and process ([`pool`]): the door is synchronous and the crawl calls it on tokio's
//! blocking pool, where a blocking client needs no runtime handed in. A call made on a runtime
//! thread itself is moved off it ([`off_runtime`]). The schema is versioned by `refinery`
//! (numbered SQL files in `migrations/`, checksummed), run under an advisory lock so that
//! workers starting together migrate once. No focus policy lives here: the store persists the
//! numbers `crawl::policy` gives it; "keep the best parent's score" is `GREATEST`, as SQLite's
//! `max`.

mod copy;
mod error;
mod frontier;
mod lease;
mod mining;
mod pool;
mod read;
mod record;
mod search;
mod shared;
pub mod testing;

pub use pool::{OPEN_WAIT, POOL_SIZE};
pub use search::MAX_INDEXED_BYTES;

use super::{
    judge::Verdict, ApprenticeEvidence, CrawlDb, InLink, NewUrl, Outcome, PageId, PageText, Reader,
    Recorded, Result, StoreError, Work,
};
use crate::distiller::{Edge, Scores};
use crate::store::LOCAL_WORKER;
use pool::Conn;
use r2d2_postgres::postgres;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// The schema's versions, embedded from `migrations/` (`V<n>__<name>.sql`).
mod embedded {
    #![allow(missing_docs)]
    refinery::embed_migrations!("src/store/postgres/migrations");
}

/// The advisory lock key under which a worker migrates the schema (any fixed number: "fora").
const MIGRATION_LOCK: i64 = 0x666f_7261;

/// Runs blocking database work where blocking is allowed: as is on a plain thread or tokio's
/// blocking pool, through `block_in_place` on a multi-threaded runtime's worker, and on a
/// scoped thread inside a current-thread runtime (the blocking client runs a runtime of its
/// own, which cannot start inside another).
pub(crate) fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Err(_) => f(),
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        Ok(_) => std::thread::scope(|s| {
            s.spawn(f)
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p))
        }),
    }
}

/// The server could not be reached: which one (shown without its password), and why.
#[derive(Debug, thiserror::Error)]
#[error("{server}: {why}")]
struct ConnectError {
    server: String,
    why: error::PgError,
}

/// The connection to the server was lost during a call.
#[derive(Debug, thiserror::Error)]
#[error("lost the connection to the server {server} ({why}); is it running and reachable?")]
struct Lost {
    server: String,
    why: String,
}

/// A crawl database on a PostgreSQL server.
pub struct PgStore {
    /// The server's pool, shared by every door on it in this process (taken only when the
    /// store is dropped).
    pool: Option<Arc<pool::Pool>>,
    /// This door's worker name: the crawl's one-process name ([`LOCAL_WORKER`]) means this
    /// door, so that crawls in many processes hold their own leases.
    name: String,
    /// The connection holding the periodic job's lock while this door runs the job.
    job: std::sync::Mutex<Option<Conn>>,
    /// The worker this door last checked out for (its recorded pages count as that worker's).
    leased_as: Option<String>,
    /// The crawl's least time between two requests to one host (a checkout takes ready hosts
    /// first).
    politeness: Duration,
}

/// A worker name unique to this door: host, process and a random part.
fn worker_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("{}-{}-{}", host.trim(), std::process::id(), &id[..8])
}

impl Drop for PgStore {
    /// Closing a connection blocks on its runtime: done off the async runtime too.
    fn drop(&mut self) {
        let job = self.job.get_mut().unwrap_or_else(|p| p.into_inner());
        if let Some(mut c) = job.take() {
            // A job left running: its lock goes with this door.
            off_runtime(move || {
                let _ = c.execute("SELECT pg_advisory_unlock($1)", &[&shared::JOB_LOCK]);
            });
        }
        if let Some(pool) = self.pool.take() {
            off_runtime(move || drop(pool));
        }
    }
}

impl PgStore {
    /// Opens a door on the server at `url` (`postgres://user:password@host:port/database`):
    /// through the server's pool when this process has it open, else after connecting and
    /// bringing its schema to this build's version.
    pub fn open(url: &str) -> Result<PgStore> {
        Ok(PgStore {
            pool: Some(pool::pool_of(url)?),
            name: worker_name(),
            job: std::sync::Mutex::default(),
            leased_as: None,
            politeness: Duration::ZERO,
        })
    }

    /// Connections open to the server in this process, and how many of them are idle.
    pub fn connections(&self) -> (u32, u32) {
        self.pool.as_ref().map_or((0, 0), |p| p.state())
    }

    /// Another handle on the same pool (a reader beside the door).
    pub fn handle(&self) -> PgStore {
        PgStore {
            pool: self.pool.clone(),
            name: self.name.clone(),
            job: std::sync::Mutex::default(),
            leased_as: self.leased_as.clone(),
            politeness: self.politeness,
        }
    }

    /// The worker a lease call names: this door for [`LOCAL_WORKER`], else as given.
    fn who<'a>(&'a self, worker: &'a str) -> &'a str {
        if worker == LOCAL_WORKER {
            &self.name
        } else {
            worker
        }
    }

    /// This door's worker name (as `forager status` lists it).
    pub fn worker(&self) -> &str {
        &self.name
    }

    /// A connection from the pool (call inside [`off_runtime`]).
    fn conn(&self) -> Result<Conn> {
        let pool = self.pool.as_ref().ok_or(StoreError::Unsupported(
            String::from("postgres"),
            "the store was closed",
        ))?;
        pool.get()
    }

    /// Runs `f` on a pooled connection, off the async runtime. A transaction the server
    /// aborted to break a deadlock or a serialisation conflict between workers is run again
    /// after a short random pause, a few times ([`error::retry`]).
    /// A lost connection is said so, naming the server.
    fn with<T: Send>(&self, mut f: impl FnMut(&mut Conn) -> Result<T> + Send) -> Result<T> {
        off_runtime(|| error::retry(|| f(&mut self.conn()?))).map_err(|e| self.lost(e))
    }

    /// `e`, said as the connection to the server lost when it was.
    fn lost(&self, e: StoreError) -> StoreError {
        match &self.pool {
            Some(p) if error::lost_connection(&e) => StoreError::Backend(Box::new(Lost {
                server: p.shown().to_owned(),
                why: match &e {
                    StoreError::Backend(b) => b.to_string(),
                    other => other.to_string(),
                },
            })),
            _ => e,
        }
    }

    /// Writes a `meta` text value.
    pub fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        self.with(|c| {
            c.execute(
                "INSERT INTO meta(key, value) VALUES($1, $2)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                &[&key, &value],
            )?;
            Ok(())
        })
    }

    /// Reads a `meta` text value.
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        self.with(|c| {
            let row = c.query_opt("SELECT value FROM meta WHERE key = $1", &[&key])?;
            Ok(row.and_then(|r| r.get(0)))
        })
    }

    /// The stored model's bytes (`meta.blob` of key `model`), if a crawl stored one.
    pub fn model_bytes(&self) -> Result<Option<Vec<u8>>> {
        self.with(|c| {
            let row = c.query_opt("SELECT blob FROM meta WHERE key = 'model'", &[])?;
            Ok(row.and_then(|r| r.get(0)))
        })
    }

    /// A count of `doc` rows matching `condition` (a fixed SQL condition).
    fn count(&self, condition: &'static str) -> Result<i64> {
        self.with(|c| {
            let sql = format!("SELECT count(*) FROM doc WHERE {condition}");
            Ok(c.query_one(sql.as_str(), &[])?.get(0))
        })
    }
}

/// Applies the migrations this build has and the database lacks, one worker at a time.
fn migrate(client: &mut postgres::Client) -> Result<()> {
    client.execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])?;
    let ran = (embedded::migrations::runner().run(client))
        .map(|_| ())
        .map_err(|e| StoreError::Schema(format!("migrating the PostgreSQL schema: {e}")))
        // Pages recorded before the search index existed are indexed once.
        .and_then(|()| search::build_index(client).map(|_| ()));
    client.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])?;
    ran
}

impl CrawlDb for PgStore {
    fn save_taxonomy(&mut self, model: &forager_classifier::Model) -> Result<()> {
        self.with(|c| mining::save_taxonomy(c, model))
    }
    fn add_seeds(&mut self, seeds: &[NewUrl]) -> Result<()> {
        self.with(|c| {
            let mut tx = c.transaction()?;
            // Beside record batches (the same lock order), never beside a job's rewrite.
            tx.execute(
                "SELECT pg_advisory_xact_lock_shared($1)",
                &[&record::RECORD_LOCK],
            )?;
            let links: Vec<_> = seeds.iter().map(|s| (None, s)).collect();
            frontier::enqueue(&mut tx, &links, &mut Vec::new())?;
            Ok(tx.commit()?)
        })
    }
    fn boost_out_links(&mut self, url: &str, score: f64) -> Result<usize> {
        self.with(|c| mining::boost_out_links(c, url, score))
    }
    fn retry_failed(&mut self) -> Result<usize> {
        self.with(frontier::retry_failed)
    }
    fn set_mode(&mut self, mode: &str) -> Result<()> {
        self.set_meta("mode", mode)
    }
    fn seed_urls(&self) -> Result<Vec<String>> {
        self.with(|c| {
            let rows = c.query("SELECT url FROM doc WHERE depth = 0 ORDER BY oid", &[])?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }
    fn fetched_urls(&self) -> Result<Vec<String>> {
        self.with(|c| {
            let rows = c.query(
                "SELECT url FROM doc WHERE fetch_seq IS NOT NULL ORDER BY fetch_seq",
                &[],
            )?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }
    fn fetched(&self) -> Result<i64> {
        self.count("status = 2")
    }
    fn given_up(&self) -> Result<i64> {
        self.count("status IN (3, 4)")
    }
    fn frontier_len(&self) -> Result<i64> {
        self.count("status = 0")
    }
    fn checkout(&mut self, worker: &str, n: usize, lease: Duration) -> Result<Vec<Work>> {
        let who = self.who(worker).to_owned();
        let gap = self.politeness;
        let work = self.with(|c| lease::checkout(c, &who, n, (lease, gap)))?;
        self.leased_as = Some(who);
        Ok(work)
    }
    fn claim_hosts(&mut self, worker: &str, n: usize, lease: Duration) -> Result<Vec<String>> {
        let gap = self.politeness;
        self.with(|c| lease::claim_hosts(c, self.who(worker), n, (lease, gap)))
    }
    fn renew(&mut self, worker: &str, lease: Duration) -> Result<usize> {
        self.with(|c| lease::renew(c, self.who(worker), lease))
    }
    fn release_hosts(&mut self, worker: &str, hosts: &[String]) -> Result<()> {
        self.with(|c| lease::release_hosts(c, self.who(worker), hosts))
    }
    fn expire_leases(&mut self) -> Result<usize> {
        self.with(lease::expire_leases)
    }
    fn held_hosts(&self, worker: &str) -> Result<Vec<String>> {
        self.with(|c| lease::held_hosts(c, self.who(worker)))
    }
    fn leased_work_left(&self) -> Result<bool> {
        self.with(lease::leased_work_left)
    }
    fn checkout_revisits(&mut self, n: usize, min_age: f64) -> Result<Vec<Work>> {
        self.with(|c| frontier::checkout_revisits(c, n, min_age))
    }
    fn release(&mut self, oids: &[PageId]) -> Result<()> {
        self.with(|c| frontier::release(c, oids))
    }
    fn record(&mut self, batch: &[Outcome]) -> Result<Recorded> {
        let rec = self.with(|c| record::record(c, batch))?;
        if let Some(who) = self
            .leased_as
            .as_deref()
            .filter(|_| !rec.fetched.is_empty())
        {
            // The worker's own count of pages recorded (what `forager status` rates it by).
            let n = rec.fetched.len() as i64;
            self.with(|c| {
                let sql = "UPDATE worker SET recorded = recorded + $2 WHERE name = $1";
                Ok(c.execute(sql, &[&who, &n])?)
            })?;
        }
        Ok(rec)
    }
    fn frontier_in_links(
        &self,
        after: Option<(PageId, PageId)>,
        limit: usize,
    ) -> Result<Vec<InLink>> {
        self.with(|c| mining::frontier_in_links(c, after, limit))
    }
    fn set_frontier_scores(&mut self, scores: &[(PageId, f64)]) -> Result<usize> {
        self.with(|c| mining::set_frontier_scores(c, scores))
    }
    fn swap_frontier_scores(&mut self, changes: &[crate::store::ScoreChange]) -> Result<usize> {
        self.with(|c| mining::swap_frontier_scores(c, changes))
    }
    fn in_link_reader(&self) -> Result<Option<Box<dyn crate::store::InLinkReader>>> {
        Ok(Some(Box::new(mining::LinkReader(self.handle()))))
    }
    fn frontier_ids(&self, urls: &[String]) -> Result<Vec<Option<PageId>>> {
        self.with(|c| mining::frontier_ids(c, urls))
    }
    fn fetched_texts(&self, after: Option<PageId>, limit: usize) -> Result<Vec<PageText>> {
        self.with(|c| mining::fetched_texts(c, after, limit))
    }
    fn save_verdicts(&mut self, verdicts: &[(PageId, Verdict)]) -> Result<()> {
        self.with(|c| mining::save_verdicts(c, verdicts))
    }
    fn apprentice_evidence(&self) -> Result<Vec<ApprenticeEvidence>> {
        self.with(mining::apprentice_evidence)
    }
    fn graph(&self) -> Result<(Vec<Edge>, HashMap<i64, f64>)> {
        self.with(mining::graph)
    }
    fn save_distillation(&mut self, scores: &Scores) -> Result<()> {
        self.with(|c| mining::save_distillation(c, scores))
    }
    fn boost_hub_neighbours(&mut self, top: usize, score: f64) -> Result<usize> {
        self.with(|c| mining::boost_hub_neighbours(c, top, score))
    }
    fn host_slots(&self) -> Result<Vec<(String, f64)>> {
        Ok(self
            .meta("host_slots")?
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default())
    }
    fn save_host_slots(&mut self, slots: &[(String, f64)]) -> Result<()> {
        let json = serde_json::to_string(slots).unwrap_or_else(|_| "[]".into());
        self.set_meta("host_slots", &json)
    }
    fn reader(&self) -> Box<dyn Reader + '_> {
        Box::new(self.handle())
    }
    fn shared(&mut self) -> Option<&mut dyn crate::store::SharedDb> {
        Some(self)
    }
    fn set_politeness(&mut self, gap: Duration) {
        self.politeness = gap;
    }
}

/// A row count as the door reports it.
fn rows(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// A limit as SQL takes it.
fn limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::testing::TestDb;
    use super::*;

    #[test]
    fn the_postgres_store_keeps_the_door_contract() {
        let Some(server) = testing::server() else {
            return;
        };
        // One database per case; a case that opens its door again (a crash) gets the same.
        let mut dbs: HashMap<String, TestDb> = HashMap::new();
        crate::store::contract::run_all(&mut |name| {
            let db = (dbs.entry(name.to_owned())).or_insert_with(|| TestDb::create(&server, name));
            let store = PgStore::open(db.url()).expect("open the test database");
            Box::new(store) as Box<dyn CrawlDb>
        });
    }

    #[test]
    fn opening_twice_migrates_once_and_keeps_the_rows() {
        let Some(server) = testing::server() else {
            return;
        };
        let db = TestDb::create(&server, "reopen");
        let mut a = PgStore::open(db.url()).unwrap();
        a.add_seeds(&[NewUrl::seed(&url::Url::parse("http://a.test/").unwrap())])
            .unwrap();
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let url = db.url().to_owned();
                std::thread::spawn(move || PgStore::open(&url).map(|_| ()))
            })
            .collect();
        for t in threads {
            t.join()
                .unwrap()
                .expect("a concurrent open migrates or waits");
        }
        let b = PgStore::open(db.url()).unwrap();
        assert_eq!(b.frontier_len().unwrap(), 1);
        assert_eq!(b.seed_urls().unwrap(), vec!["http://a.test/".to_owned()]);
    }

    #[test]
    fn a_server_that_is_not_there_is_a_clear_error_without_the_password() {
        // Port 1 on loopback: nothing listens there.
        let e = PgStore::open("postgres://crawler:s3cret@127.0.0.1:1/forager")
            .err()
            .expect("no server");
        let shown = e.to_string();
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("crawl database"), "{shown}");
        assert!(shown.contains("crawler:***@127.0.0.1:1"), "{shown}");
        let bad = PgStore::open("postgres://a b").err().expect("bad URL");
        assert!(matches!(bad, StoreError::Backend(_)), "{bad}");
    }

    #[test]
    fn tls_required_is_refused_not_downgraded() {
        let Some(server) = testing::server() else {
            return;
        };
        let db = TestDb::create(&server, "tls");
        let plain = PgStore::open(db.url());
        assert!(plain.is_ok(), "{:?}", plain.err());
        let e = PgStore::open(&format!("{}?sslmode=require", db.url()))
            .err()
            .expect("this build has no TLS: a required TLS connection fails");
        assert!(e.to_string().contains("TLS"), "{e}");
    }

    #[tokio::test]
    async fn the_door_works_from_a_current_thread_runtime() {
        let Some(server) = testing::server() else {
            return;
        };
        let db = TestDb::create(&server, "current-thread");
        let mut s = PgStore::open(db.url()).unwrap();
        s.set_mode("Soft").unwrap();
        assert_eq!(s.meta("mode").unwrap().as_deref(), Some("Soft"));
        assert_eq!(s.fetched().unwrap(), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_door_works_on_a_runtime_worker_and_the_blocking_pool() {
        let Some(server) = testing::server() else {
            return;
        };
        let db = TestDb::create(&server, "multi-thread");
        let mut s = PgStore::open(db.url()).unwrap();
        s.set_mode("Hard").unwrap();
        let s = tokio::task::spawn_blocking(move || {
            s.add_seeds(&[NewUrl::seed(&url::Url::parse("http://b.test/").unwrap())])
                .map(|_| s)
        })
        .await
        .unwrap()
        .unwrap();
        assert_eq!(s.frontier_len().unwrap(), 1);
        assert_eq!(s.meta("mode").unwrap().as_deref(), Some("Hard"));
    }
}
