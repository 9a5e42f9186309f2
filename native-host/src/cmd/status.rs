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
    let conn = forager::store::Store::open_read_only(db)?;
    let count = |sql: &str| -> Result<i64> { Ok(conn.query_row(sql, [], |r| r.get(0))?) };
    let fetched = count("SELECT count(*) FROM doc WHERE status = 2")?;
    let frontier = count("SELECT count(*) FROM doc WHERE status = 0")?;
    let failed = count("SELECT count(*) FROM doc WHERE status IN (3, 4)")?;
    let relevant = count("SELECT count(*) FROM doc WHERE status = 2 AND relevance >= 0.5")?;
    let mean_recent: f64 = conn.query_row(
        "SELECT coalesce(avg(relevance), 0) FROM (SELECT relevance FROM doc WHERE fetch_seq IS NOT NULL ORDER BY fetch_seq DESC LIMIT 100)",
        [],
        |r| r.get(0),
    )?;
    let mut errors = serde_json::Map::new();
    {
        let mut st = conn.prepare(
            "SELECT error, count(*) FROM doc WHERE status IN (3, 4) GROUP BY error ORDER BY 2 DESC",
        )?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let k: Option<String> = r.get(0)?;
            let n: i64 = r.get(1)?;
            errors.insert(k.unwrap_or_default(), n.into());
        }
    }
    let relevance = forager::report::relevance_in_fetch_order(&conn)?;
    let alarms = forager::report::alarms_of(&conn, &relevance, frontier)?;
    let v = serde_json::json!({
        "alarms": alarms,
        "fetched": fetched, "frontier": frontier, "failed_or_excluded": failed,
        "relevant_fetched": relevant, "recent_relevance": mean_recent, "errors": errors,
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
    }
    Ok(())
}
