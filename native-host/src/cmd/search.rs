//! `forager search`: find pages of a crawl by their words, best first (BM25 with the page's
//! relevance R to the good topics).

use anyhow::Result;
use forager::store::{SearchHit, SearchRanking};
use std::io::IsTerminal;
use std::path::PathBuf;

/// Arguments of `forager search`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Crawl database.
    db: PathBuf,
    /// What to look for: words (all must occur, the last also as a prefix) and "quoted
    /// phrases".
    query: String,
    /// How many pages at most.
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// JSON output (one array; each snippet a list whose odd items are the matched words).
    #[arg(long)]
    json: bool,
    /// Rank by the text alone (BM25), not combined with R.
    #[arg(long)]
    text_only: bool,
}

/// Runs `forager search`.
pub(crate) fn run(a: Args) -> Result<()> {
    // A database made before search is indexed once (with a progress line), unless a crawl
    // is writing it.
    drop(super::open_read(&a.db)?);
    forager::store::upgrade(&super::locator(&a.db))?;
    let ro = super::open_read(&a.db)?;
    let ranking = if a.text_only {
        SearchRanking::TextOnly
    } else {
        SearchRanking::Combined
    };
    let hits = ro.search(&a.query, a.limit, ranking)?;
    if a.json {
        let v: Vec<serde_json::Value> = hits.iter().map(hit_json).collect();
        println!("{}", serde_json::Value::Array(v));
        return Ok(());
    }
    if hits.is_empty() {
        eprintln!("no fetched page matches {:?}", a.query);
    }
    let (on, off) = if std::io::stdout().is_terminal() {
        ("\x1b[1m", "\x1b[0m")
    } else {
        ("**", "**")
    };
    for (i, h) in hits.iter().enumerate() {
        let fetched = h.fetched_at.map(when).unwrap_or_default();
        let leaf = if h.best_leaf.is_empty() {
            "-"
        } else {
            &h.best_leaf
        };
        println!(
            "{:>3}. {}\n     {}\n     R {:.2}  {leaf}  fetched {fetched}",
            i + 1,
            if h.title.is_empty() {
                "(no title)"
            } else {
                &h.title
            },
            h.url,
            h.relevance
        );
        let snippet: String = (h.snippet_parts().iter().enumerate())
            .map(|(i, p)| {
                if i % 2 == 1 {
                    format!("{on}{p}{off}")
                } else {
                    p.clone()
                }
            })
            .collect();
        println!(
            "     {}",
            snippet.split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }
    Ok(())
}

/// A hit as JSON: its snippet as parts, odd ones the matched words.
pub(crate) fn hit_json(h: &SearchHit) -> serde_json::Value {
    serde_json::json!({
        "url": h.url, "title": h.title, "snippet": h.snippet_parts(), "relevance": h.relevance,
        "best_leaf": h.best_leaf, "fetched_at": h.fetched_at, "text_score": h.text_score,
    })
}

/// A Unix time as UTC, to the minute.
fn when(t: f64) -> String {
    chrono::DateTime::from_timestamp(t as i64, 0)
        .map(|d| d.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default()
}
