//! The connections to a crawl's server: one bounded pool per server and process, shared by
//! every door opened on it (the crawl's, its follower's, the readers of `forager status` and
//! of the browser's host), so a read reuses an open connection instead of connecting and
//! migrating anew. The pool of the last server opened stays open between doors (the host
//! opens a reader for every request); a server that stops answering is told in words within
//! [`OPEN_WAIT`], and a connection that sat idle is checked before it is handed out, so a
//! restarted server costs no failed request.

use super::{migrate, ConnectError};
use crate::store::{Result, StoreError};
use r2d2_postgres::{postgres, r2d2};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// Connections one process keeps at most on one server (every door on it together: the crawl,
/// its follower and job, and readers).
pub const POOL_SIZE: u32 = 8;

/// Longest wait for a connection when the pool must open one: a server that is down or out of
/// reach is told this soon (the connection attempt goes on in the background).
pub const OPEN_WAIT: Duration = Duration::from_secs(5);

/// Longest wait for a connection while every one the pool may hold is busy (long queries).
const BUSY_WAIT: Duration = Duration::from_secs(120);

/// A connection idle this long is checked (one empty query) before it is handed out.
const IDLE_CHECK: Duration = Duration::from_secs(2);

/// Opens connections to one server and checks the ones that sat idle.
pub(super) struct Manager {
    config: postgres::Config,
    /// Why the last connection attempt failed (r2d2 keeps only the first caller's copy).
    last_error: Arc<Mutex<Option<String>>>,
}

/// A pooled client and when it was last given back.
pub struct Kept {
    client: postgres::Client,
    returned: Instant,
}

impl std::ops::Deref for Kept {
    type Target = postgres::Client;
    fn deref(&self) -> &postgres::Client {
        &self.client
    }
}

impl std::ops::DerefMut for Kept {
    fn deref_mut(&mut self) -> &mut postgres::Client {
        &mut self.client
    }
}

impl r2d2::ManageConnection for Manager {
    type Connection = Kept;
    type Error = postgres::Error;

    fn connect(&self) -> std::result::Result<Kept, postgres::Error> {
        let client = self.config.connect(postgres::NoTls).inspect_err(|e| {
            *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(cause(e));
        })?;
        Ok(Kept {
            client,
            returned: Instant::now(),
        })
    }

    fn is_valid(&self, conn: &mut Kept) -> std::result::Result<(), postgres::Error> {
        if conn.returned.elapsed() >= IDLE_CHECK {
            conn.client.simple_query("")?;
        }
        Ok(())
    }

    fn has_broken(&self, conn: &mut Kept) -> bool {
        conn.returned = Instant::now();
        conn.client.is_closed()
    }
}

/// A connection lent by the pool.
pub(super) type Conn = r2d2::PooledConnection<Manager>;

/// One server's pool, and the server as it may be shown (without its password).
pub(super) struct Pool {
    pool: r2d2::Pool<Manager>,
    shown: String,
    /// The manager's last connection error.
    last_error: Arc<Mutex<Option<String>>>,
}

/// The pools open in this process, by connection string.
static POOLS: Mutex<Option<HashMap<String, Weak<Pool>>>> = Mutex::new(None);

/// The pool of the server opened last, kept open between doors.
static LAST: Mutex<Option<Arc<Pool>>> = Mutex::new(None);

/// The pool of the server at `url`: the one open in this process, else a new one (after
/// connecting once and bringing the schema to this build's version).
pub(super) fn pool_of(url: &str) -> Result<Arc<Pool>> {
    let open = |pools: &mut Option<HashMap<String, Weak<Pool>>>| {
        (pools.get_or_insert_with(HashMap::new).get(url)).and_then(Weak::upgrade)
    };
    if let Some(p) = open(&mut POOLS.lock().unwrap_or_else(|p| p.into_inner())) {
        return Ok(keep(p));
    }
    let made = Arc::new(new_pool(url)?);
    let mut pools = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    // Another door may have opened it meanwhile: one pool per server.
    let pool = open(&mut pools).unwrap_or(made);
    let map = pools.get_or_insert_with(HashMap::new);
    map.retain(|_, w| w.strong_count() > 0);
    map.insert(url.to_owned(), Arc::downgrade(&pool));
    Ok(keep(pool))
}

/// Keeps `pool` open as the last one used (the one kept before may close).
fn keep(pool: Arc<Pool>) -> Arc<Pool> {
    let before = LAST
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .replace(pool.clone());
    if let Some(b) = before.filter(|b| !Arc::ptr_eq(b, &pool)) {
        // Closing connections blocks on their runtimes: off the async runtime.
        super::off_runtime(move || drop(b));
    }
    pool
}

/// Connects to `url`, migrates its schema and makes its pool.
fn new_pool(url: &str) -> Result<Pool> {
    use std::str::FromStr;
    let mut config = postgres::Config::from_str(url)?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    config.application_name("forager");
    let shown = crate::store::Locator::Postgres(url.to_owned()).to_string();
    super::off_runtime(|| {
        let mut client = (config.connect(postgres::NoTls)).map_err(|source| {
            StoreError::Backend(Box::new(ConnectError {
                server: shown.clone(),
                why: source.into(),
            }))
        })?;
        migrate(&mut client)?;
        drop(client);
        let last_error = Arc::new(Mutex::new(None));
        let manager = Manager {
            config,
            last_error: last_error.clone(),
        };
        let pool = r2d2::Pool::builder()
            .max_size(POOL_SIZE)
            .min_idle(Some(0))
            .test_on_check_out(true)
            .connection_timeout(BUSY_WAIT)
            .error_handler(Box::new(r2d2::NopErrorHandler))
            .build(manager)?;
        Ok(Pool {
            pool,
            shown,
            last_error,
        })
    })
}

impl Pool {
    /// A connection (call off the async runtime): an idle one, else a new one within
    /// [`OPEN_WAIT`], else one given back within [`BUSY_WAIT`] when all are busy.
    pub(super) fn get(&self) -> Result<Conn> {
        let st = self.pool.state();
        let opening = st.idle_connections == 0 && st.connections < self.pool.max_size();
        let wait = if opening { OPEN_WAIT } else { BUSY_WAIT };
        let started = Instant::now();
        self.pool.get_timeout(wait).map_err(|e| {
            let last = (self.last_error.lock())
                .unwrap_or_else(|p| p.into_inner())
                .take();
            let why = match (last, e.to_string()) {
                (Some(l), _) => l,
                (None, r2d2) => r2d2,
            };
            StoreError::Backend(Box::new(Unreachable {
                server: self.shown.clone(),
                waited: started.elapsed(),
                why,
            }))
        })
    }

    /// The server as it may be shown (without its password).
    pub(super) fn shown(&self) -> &str {
        &self.shown
    }

    /// Connections open now, and how many of them are idle.
    pub fn state(&self) -> (u32, u32) {
        let st = self.pool.state();
        (st.connections, st.idle_connections)
    }
}

/// No connection to the server came within the wait.
#[derive(Debug, thiserror::Error)]
#[error("the server {server} did not answer within {:.0} s ({why}); is it running and reachable?", waited.as_secs_f64())]
struct Unreachable {
    server: String,
    waited: Duration,
    why: String,
}

/// Why a connection attempt failed, in one line: the server's message, or the client's error
/// and its cause (refused, timed out, no such host).
fn cause(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return db.message().to_owned();
    }
    match std::error::Error::source(e) {
        Some(c) => format!("{e}: {c}"),
        None => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{self, TestDb};
    use super::super::PgStore;
    use crate::store::{CrawlDb, Locator};
    use std::net::{Shutdown, TcpListener, TcpStream};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    /// Sessions ever opened on the test database at `url` (the count includes this look's).
    fn sessions(url: &str) -> i64 {
        testing::number(
            url,
            "SELECT sessions FROM pg_stat_database WHERE datname = current_database()",
        )
    }

    #[test]
    fn doors_on_one_server_share_its_pool_and_reads_reuse_its_connections() {
        let Some(server) = testing::server() else {
            return;
        };
        let db = TestDb::create(&server, "pool-reuse");
        let door = PgStore::open(db.url()).unwrap();
        let before = sessions(db.url());
        let at = Locator::Postgres(db.url().to_owned());
        for _ in 0..30 {
            // As the browser's host and `forager status` read: a door opened, read, dropped.
            let r = crate::store::open_read(&at).unwrap();
            assert_eq!(r.counts().unwrap().fetched, 0);
        }
        let w = crate::store::open(&at).unwrap();
        assert_eq!(w.frontier_len().unwrap(), 0);
        let opened = sessions(db.url()) - before - 1;
        assert!(opened <= 1, "30 reads opened {opened} sessions");
        let (open, _) = door.connections();
        assert!((1..=super::POOL_SIZE).contains(&open), "{open} open");
    }

    /// A TCP relay to the test server that can be cut (every connection through it closed,
    /// new ones refused) and started again on the same port: a server going away and back.
    struct Relay {
        port: u16,
        upstream: String,
        live: Arc<AtomicBool>,
        streams: Arc<Mutex<Vec<TcpStream>>>,
    }

    impl Relay {
        fn start(upstream: &str, port: u16) -> Relay {
            let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
            listener.set_nonblocking(true).unwrap();
            let r = Relay {
                port: listener.local_addr().unwrap().port(),
                upstream: upstream.to_owned(),
                live: Arc::new(AtomicBool::new(true)),
                streams: Arc::default(),
            };
            let (live, streams, up) = (r.live.clone(), r.streams.clone(), r.upstream.clone());
            std::thread::spawn(move || {
                while live.load(Ordering::SeqCst) {
                    let Ok((a, _)) = listener.accept() else {
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    };
                    a.set_nonblocking(false).unwrap();
                    let b = TcpStream::connect(&up).unwrap();
                    let mut held = streams.lock().unwrap();
                    for (mut from, mut to) in [(&a, &b), (&b, &a)]
                        .map(|(x, y)| (x.try_clone().unwrap(), y.try_clone().unwrap()))
                    {
                        std::thread::spawn(move || {
                            let _ = std::io::copy(&mut from, &mut to);
                            let _ = to.shutdown(Shutdown::Both);
                        });
                    }
                    held.extend([a, b]);
                }
            });
            r
        }

        /// Closes every connection and the port.
        fn cut(self) -> (String, u16) {
            self.live.store(false, Ordering::SeqCst);
            for s in self.streams.lock().unwrap().drain(..) {
                let _ = s.shutdown(Shutdown::Both);
            }
            std::thread::sleep(Duration::from_millis(50)); // the listener thread ends
            (self.upstream, self.port)
        }
    }

    #[test]
    fn a_server_gone_away_is_told_in_words_soon_and_its_return_is_picked_up() {
        let Some(server) = testing::server() else {
            return;
        };
        let db = TestDb::create(&server, "pool-gone");
        let mut u = url::Url::parse(db.url()).unwrap();
        let upstream = format!("{}:{}", u.host_str().unwrap(), u.port().unwrap());
        let relay = Relay::start(&upstream, 0);
        u.set_port(Some(relay.port)).unwrap();
        let _ = u.set_password(Some("s3cret"));
        let door = PgStore::open(u.as_str()).unwrap();
        assert_eq!(door.fetched().unwrap(), 0);
        let (upstream, port) = relay.cut();
        // The connection in the pool is gone, and so is the server: each call says so in
        // words, within the wait for a new connection, never hanging.
        for _ in 0..2 {
            let t = Instant::now();
            let e = door.fetched().expect_err("the server is gone");
            let shown = e.to_string();
            assert!(
                t.elapsed() < super::OPEN_WAIT + Duration::from_secs(3),
                "{shown}"
            );
            assert!(shown.contains(&format!("127.0.0.1:{port}")), "{shown}");
            assert!(!shown.contains("s3cret"), "{shown}");
            assert!(shown.contains("is it running"), "{shown}");
        }
        // Back on the same port: the next call connects again.
        let _relay = Relay::start(&upstream, port);
        let t = Instant::now();
        while door.fetched().is_err() {
            assert!(t.elapsed() < Duration::from_secs(20), "never reconnected");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
