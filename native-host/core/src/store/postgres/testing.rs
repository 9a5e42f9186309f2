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
