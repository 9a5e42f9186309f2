//! PostgreSQL errors as the user reads them, and which of them are worth running again.
//!
//! The client's own `Display` of a server error is only "db error": the server's words are in
//! its source. [`PgError`] says them all in one line (severity, SQLSTATE, message, detail,
//! hint, where it happened), so whoever prints a [`StoreError`] shows the real cause. A
//! transaction the server aborted to break a deadlock (`40P01`) or a serialisation conflict
//! (`40001`) is run again a few times after a short random pause ([`retry`]).

use crate::store::{Result, StoreError};
use r2d2_postgres::{postgres, r2d2};
use std::fmt;
use std::time::Duration;

/// A PostgreSQL client or server error, shown with the server's own words.
#[derive(Debug)]
pub struct PgError(postgres::Error);

impl PgError {
    /// The SQLSTATE code of a server error.
    pub fn code(&self) -> Option<&str> {
        self.0.code().map(|c| c.code())
    }
}

impl fmt::Display for PgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(db) = self.0.as_db_error() else {
            // A client-side error: its kind, then its cause (the I/O error, the bad option).
            write!(f, "PostgreSQL: {}", self.0)?;
            if let Some(cause) = std::error::Error::source(&self.0) {
                write!(f, ": {cause}")?;
            }
            return Ok(());
        };
        let code = db.code().code();
        write!(f, "PostgreSQL {} {code}: {}", db.severity(), db.message())?;
        if let Some(detail) = db.detail() {
            write!(f, "; detail: {detail}")?;
        }
        if let Some(hint) = db.hint() {
            write!(f, "; hint: {hint}")?;
        }
        if let Some(place) = db.where_() {
            write!(f, "; where: {}", place.replace('\n', " / "))?;
        }
        Ok(())
    }
}

/// The whole text is in `Display`: no source, so a cause chain does not say it twice.
impl std::error::Error for PgError {}

impl From<postgres::Error> for PgError {
    fn from(e: postgres::Error) -> Self {
        PgError(e)
    }
}

impl From<postgres::Error> for StoreError {
    fn from(e: postgres::Error) -> Self {
        StoreError::Backend(Box::new(PgError(e)))
    }
}

impl From<r2d2::Error> for StoreError {
    fn from(e: r2d2::Error) -> Self {
        StoreError::Backend(Box::new(e))
    }
}

/// Whether the server aborted the transaction to break a deadlock or a serialisation conflict
/// (it commits nothing: running it again is safe).
pub(super) fn retryable(e: &StoreError) -> bool {
    let StoreError::Backend(b) = e else {
        return false;
    };
    let code = b.downcast_ref::<PgError>().and_then(PgError::code);
    matches!(code, Some("40P01" | "40001"))
}

/// Whether the connection to the server was lost (closed by the server or the network, or
/// an I/O error on it), rather than the server refusing a statement.
pub(super) fn lost_connection(e: &StoreError) -> bool {
    let StoreError::Backend(b) = e else {
        return false;
    };
    let Some(PgError(pg)) = b.downcast_ref::<PgError>() else {
        return false;
    };
    let io = std::error::Error::source(pg).is_some_and(|c| c.is::<std::io::Error>());
    pg.as_db_error().is_none() && (pg.is_closed() || io)
}

/// Times a transaction the server aborted as [`retryable`] is run again.
pub(super) const RETRIES: u32 = 8;

/// Runs `f` until it succeeds, fails for good, or was aborted [`RETRIES`] times in a row; each
/// retry waits a random pause that doubles with each try (5-10 ms, then 10-20 ms, ...), so
/// the transactions that collided do not collide again in step.
pub(super) fn retry<T>(mut f: impl FnMut() -> Result<T>) -> Result<T> {
    let mut tries = 0;
    loop {
        match f() {
            Err(e) if tries < RETRIES && retryable(&e) => {
                tries += 1;
                std::thread::sleep(pause(tries));
            }
            other => return other,
        }
    }
}

/// The pause before retry `tries` (1, 2, ...): random in [b, 2b) for b = 5 ms × 2^(tries-1),
/// the base capped at 640 ms.
fn pause(tries: u32) -> Duration {
    let base = 5u64 << (tries.clamp(1, 8) - 1);
    let jitter = (uuid::Uuid::new_v4().as_u128() % u128::from(base)) as u64;
    Duration::from_millis(base + jitter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_grow_and_stay_random_within_their_band() {
        for t in 1..=RETRIES {
            let base = 5u64 << (t - 1);
            let p = pause(t).as_millis() as u64;
            assert!((base..2 * base).contains(&p), "try {t}: {p} ms");
        }
        let spread: std::collections::HashSet<_> = (0..50).map(|_| pause(6)).collect();
        assert!(spread.len() > 1, "the pause is not random");
    }

    #[test]
    fn only_deadlocks_and_serialisation_failures_are_run_again() {
        let io = StoreError::Io("x".into(), std::io::Error::other("disk"));
        assert!(!retryable(&io));
        let mut n = 0;
        let r: Result<()> = retry(|| {
            n += 1;
            Err(StoreError::BadQuery("no".into()))
        });
        assert!(r.is_err());
        assert_eq!(n, 1, "a plain error is not run again");
    }

    /// A violated constraint shows the server's message, SQLSTATE and detail, not "db error".
    #[test]
    fn a_server_error_says_what_the_server_said() {
        let Some(server) = super::super::testing::server() else {
            return;
        };
        let db = super::super::testing::TestDb::create(&server, "errtext");
        let store = super::super::PgStore::open(db.url()).unwrap();
        let e = store
            .with(|c| {
                c.execute("INSERT INTO server(host) VALUES('a.test'), ('a.test')", &[])?;
                Ok(())
            })
            .unwrap_err();
        let shown = e.to_string();
        assert!(shown.contains("23505"), "{shown}");
        assert!(shown.contains("duplicate key value"), "{shown}");
        assert!(
            shown.contains("detail: Key (host)=(a.test) already exists"),
            "{shown}"
        );
        assert!(!retryable(&e));
    }

    /// A locator naming a database the server lacks: the server's words, and no password.
    #[test]
    fn a_bad_locator_says_which_server_and_why() {
        let Some(server) = super::super::testing::server() else {
            return;
        };
        let mut url = url::Url::parse(&server).unwrap();
        url.set_path("no_such_crawl_db");
        let _ = url.set_password(Some("secret"));
        let e = super::super::PgStore::open(url.as_str()).err().unwrap();
        let shown = e.to_string();
        assert!(shown.contains("3D000"), "{shown}");
        assert!(
            shown.contains("\"no_such_crawl_db\" does not exist"),
            "{shown}"
        );
        assert!(!shown.contains("secret"), "{shown}");
    }

    /// Two transactions locking two rows in opposite orders: the server aborts one (40P01),
    /// which is run again and succeeds; both commit.
    #[test]
    fn a_real_deadlock_is_run_again_and_both_transactions_commit() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Barrier;
        let Some(server) = super::super::testing::server() else {
            return;
        };
        let db = super::super::testing::TestDb::create(&server, "deadlock");
        let store = super::super::PgStore::open(db.url()).unwrap();
        store.set_meta("a", "0").unwrap();
        store.set_meta("b", "0").unwrap();
        let both = Barrier::new(2);
        let runs = AtomicUsize::new(0);
        let go = |first: &str, second: &str| {
            let mut once = true;
            store.with(|c| {
                runs.fetch_add(1, Ordering::Relaxed);
                let mut tx = c.transaction()?;
                let bump = "UPDATE meta SET value = (value::int + 1)::text WHERE key = $1";
                tx.execute(bump, &[&first])?;
                if std::mem::take(&mut once) {
                    both.wait(); // each holds its first row before taking the other's
                }
                tx.execute(bump, &[&second])?;
                Ok(tx.commit()?)
            })
        };
        let (r1, r2) = std::thread::scope(|s| {
            let a = s.spawn(|| go("a", "b"));
            let b = s.spawn(|| go("b", "a"));
            (a.join().unwrap(), b.join().unwrap())
        });
        r1.unwrap();
        r2.unwrap();
        assert_eq!(
            runs.load(Ordering::Relaxed),
            3,
            "one of the two was run again"
        );
        assert_eq!(store.meta("a").unwrap().as_deref(), Some("2"));
        assert_eq!(store.meta("b").unwrap().as_deref(), Some("2"));
    }
}
