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

pub(crate) fn cmd_status(db: &Path, json: bool) -> Result<()> {
    let ro = super::open_read(db)?;
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
            let secs = (w.heartbeat - w.started_at).max(1e-3);
            serde_json::json!({"name": w.name, "hosts": w.hosts, "checked_out": w.checked_out,
                "per_second": w.checked_out as f64 / secs,
                "heartbeat_ago": (now - w.heartbeat).max(0.0),
                "lease_left": (w.lease_until - now).max(0.0)})
        })
        .collect();
    let v = serde_json::json!({
        "alarms": alarms,
        "fetched": fetched, "frontier": frontier, "failed_or_excluded": failed,
        "relevant_fetched": relevant, "recent_relevance": mean_recent, "errors": errors,
        "workers": workers,
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
                "worker {}: {} hosts, {:.1} URLs/s checked out, last heartbeat {:.0} s ago",
                w["name"].as_str().unwrap_or(""),
                w["hosts"],
                w["per_second"].as_f64().unwrap_or(0.0),
                w["heartbeat_ago"].as_f64().unwrap_or(0.0)
            );
        }
    }
    Ok(())
}
