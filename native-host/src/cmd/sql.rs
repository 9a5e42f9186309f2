//! `forager sql`: read-only SQL on a crawl database (the paper's tables, also attached as `arc`).

use anyhow::{bail, Result};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `forager sql`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Crawl database.
    db: PathBuf,
    /// The query.
    query: String,
    /// Rows as JSON objects.
    #[arg(long)]
    json: bool,
    /// Seconds the query may run before it is stopped.
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
}

/// Runs `forager sql`.
pub(crate) fn run(a: Args) -> Result<()> {
    if !(a.timeout.is_finite() && a.timeout > 0.0) {
        bail!("--timeout must be a positive number of seconds");
    }
    let limit = std::time::Duration::from_secs_f64(a.timeout.min(1e6));
    let forager::store::Locator::Sqlite(path) = super::locator(&a.db) else {
        bail!(
            "forager sql runs on SQLite crawl databases; on a database server, use its own \
             client (psql) with the same tables"
        );
    };
    let conn = forager::store::Store::open_read_only(&path)?;
    // A watchdog interrupts the query at the time limit (an infinite recursive CTE, say).
    let interrupt = conn.get_interrupt_handle();
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let timed_out = matches!(
            wait.recv_timeout(limit),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout)
        );
        if timed_out {
            interrupt.interrupt();
        }
        timed_out
    });
    let result = cmd_sql(&conn, &a.query, a.json);
    drop(done);
    let timed_out = watchdog.join().unwrap_or(false);
    if timed_out && result.is_err() {
        bail!(
            "the query ran past {} s and was stopped (--timeout sets the limit)",
            a.timeout
        );
    }
    result
}

fn cmd_sql(conn: &rusqlite::Connection, query: &str, json: bool) -> Result<()> {
    let mut st = conn.prepare(query)?;
    if !st.readonly() {
        // The database is opened read-only, but some statements write elsewhere
        // (`VACUUM INTO` makes a file): only statements SQLite calls read-only run.
        bail!("forager sql runs read-only queries only");
    }
    let names: Vec<String> = st.column_names().map(|s| s.to_string()).collect();
    let mut rows = st.query([])?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if !json {
        writeln!(out, "{}", names.join("\t"))?;
    }
    while let Some(row) = rows.next()? {
        let mut vals = Vec::new();
        for i in 0..names.len() {
            use rusqlite::types::ValueRef;
            vals.push(match row.get_ref(i)? {
                ValueRef::Null => serde_json::Value::Null,
                ValueRef::Integer(v) => v.into(),
                ValueRef::Real(v) => v.into(),
                ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned().into(),
                ValueRef::Blob(b) => format!("<{} bytes>", b.len()).into(),
            });
        }
        if json {
            let obj: serde_json::Map<String, serde_json::Value> =
                names.iter().cloned().zip(vals).collect();
            writeln!(out, "{}", serde_json::Value::Object(obj))?;
        } else {
            let cells: Vec<String> = vals
                .iter()
                .map(|v| match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            writeln!(out, "{}", cells.join("\t"))?;
        }
    }
    Ok(())
}
