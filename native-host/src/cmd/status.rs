//! `forager status`: summary of a running or finished crawl.

use anyhow::Result;
use std::path::{Path, PathBuf};

/// Arguments of `forager status`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Crawl database.
    db: PathBuf,
    /// JSON output.
    #[arg(long)]
    json: bool,
}

/// Runs `forager status`.
pub(crate) fn run(a: Args) -> Result<()> {
    cmd_status(&a.db, a.json)
}

pub(crate) fn cmd_status(db_path: &Path, json: bool) -> Result<()> {
    let ro = super::open_read(db_path)?;
    let db = &*ro;
    let forager::store::Counts {
        fetched,
        frontier,
        given_up: failed,
        relevant,
    } = db.counts()?;
    let relevance = db.relevance_in_fetch_order()?;
    let recent = &relevance[relevance.len().saturating_sub(100)..];
    let mean_recent = recent.iter().sum::<f64>() / recent.len().max(1) as f64;
    let mut errors = serde_json::Map::new();
    for (k, n) in db.errors()? {
        errors.insert(k, n.into());
    }
    let alarms = db.alarms(&relevance, frontier);
    let now = forager::store::now();
    let workers: Vec<serde_json::Value> = (db.workers()?.iter())
        .map(|w| {
            // The rate of pages recorded (not checked out: work given back is not crawled),
            // up to the worker's last heartbeat.
            let secs = (w.heartbeat - w.started_at).max(1e-3);
            serde_json::json!({"name": w.name, "hosts": w.hosts, "checked_out": w.checked_out,
                "recorded": w.recorded, "per_second": w.recorded as f64 / secs,
                "heartbeat_ago": (now - w.heartbeat).max(0.0),
                "lease_left": (w.lease_until - now).max(0.0)})
        })
        .collect();
    let job = last_job(db_path)?;
    let v = serde_json::json!({
        "alarms": alarms,
        "fetched": fetched, "frontier": frontier, "failed_or_excluded": failed,
        "relevant_fetched": relevant, "recent_relevance": mean_recent, "errors": errors,
        "workers": workers, "job": job,
    });
    if json {
        println!("{v}");
    } else {
        println!("fetched {fetched}  frontier {frontier}  failed/excluded {failed}");
        println!("relevant (R >= 0.5) {relevant}   mean relevance of last 100: {mean_recent:.3}");
        for a in &alarms {
            println!("ALARM {}: {}", a.kind, a.detail);
        }
        for (k, n) in &errors {
            println!("  {k}: {n}");
        }
        for w in &workers {
            println!(
                "worker {}: {} hosts, {} pages recorded, {:.1} pages/s, last heartbeat {:.0} s ago",
                w["name"].as_str().unwrap_or(""),
                w["hosts"],
                w["recorded"],
                w["per_second"].as_f64().unwrap_or(0.0),
                w["heartbeat_ago"].as_f64().unwrap_or(0.0)
            );
        }
        if !job.is_null() {
            println!(
                "job: {} runs; last by {} {:.0} s ago: {}",
                job["runs"],
                job["worker"].as_str().unwrap_or(""),
                job["ago"].as_f64().unwrap_or(0.0),
                job["did"].as_str().unwrap_or("running")
            );
        }
    }
    Ok(())
}

/// A shared crawl's periodic job: how many runs, and the last one (null for a crawl one
/// process owns).
fn last_job(db: &Path) -> Result<serde_json::Value> {
    let locator = super::locator(db);
    if !matches!(locator, forager::store::Locator::Postgres(_)) {
        return Ok(serde_json::Value::Null);
    }
    let mut door = forager::store::open(&locator)?;
    let Some(shared) = door.shared() else {
        return Ok(serde_json::Value::Null);
    };
    let runs = shared.job_runs()?;
    let Some(last) = runs.last() else {
        return Ok(serde_json::Value::Null);
    };
    Ok(
        serde_json::json!({"runs": runs.len(), "worker": last.worker,
        "ago": (forager::store::now() - last.started_at).max(0.0), "did": last.did}),
    )
}
