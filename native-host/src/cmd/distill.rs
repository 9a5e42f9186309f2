//! `forager distill`: run the distiller (relevance-weighted HITS) on a crawl database; prints the top hubs.

use anyhow::Result;
use std::path::{Path, PathBuf};

/// Arguments of `forager distill`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Crawl database.
    db: PathBuf,
    /// How many hubs and authorities to print.
    #[arg(long, default_value_t = 20)]
    top: usize,
    /// JSON output.
    #[arg(long)]
    json: bool,
    /// How scores are computed: topical (hubs by their own relevance times their
    /// relevance-weighted out-degree), out-degree (without their own relevance), randomized
    /// (randomised HITS with that out-degree as prior) or hits (plain HITS over cross-site
    /// links, for comparison).
    #[arg(long, default_value = "topical", value_parser = clap::builder::PossibleValuesParser::new(forager::distiller::Method::NAMES))]
    method: String,
}

/// Runs `forager distill`.
pub(crate) fn run(a: Args) -> Result<()> {
    let method = forager::distiller::Method::from_name(&a.method).unwrap_or_default();
    cmd_distill(&a.db, a.top, a.json, method)
}

pub(crate) fn cmd_distill(
    db: &Path,
    top: usize,
    json: bool,
    method: forager::distiller::Method,
) -> Result<()> {
    let mut store = forager::store::open(&super::locator(db))?;
    let (edges, rel) = store.graph()?;
    let t = std::time::Instant::now();
    let params = forager::distiller::Params {
        method,
        ..Default::default()
    };
    let scores = forager::distiller::distill(&edges, &rel, &params);
    let ms = t.elapsed().as_secs_f64() * 1e3;
    store.save_distillation(&scores)?;
    let url_of =
        |oid: i64| -> Result<String> { Ok(store.reader().url_of(oid)?.unwrap_or_default()) };
    let list = |v: &[(i64, f64)]| -> Result<Vec<serde_json::Value>> {
        v.iter()
            .take(top)
            .map(|&(oid, score)| {
                let (fetched, relevant) = store.reader().link_evidence(oid)?;
                Ok(serde_json::json!({"url": url_of(oid)?, "score": score,
                    "relevant_links": relevant, "fetched_links": fetched}))
            })
            .collect()
    };
    let (hubs, auths) = (list(&scores.hubs)?, list(&scores.authorities)?);
    if json {
        println!(
            "{}",
            serde_json::json!({"hubs": hubs, "authorities": auths, "edges": edges.len(),
                "iterations": scores.iterations, "ms": ms})
        );
    } else {
        println!(
            "distilled {} links in {ms:.1} ms ({} iterations)",
            edges.len(),
            scores.iterations
        );
        for (name, l) in [("hubs", &hubs), ("authorities", &auths)] {
            println!("top {name} (score, relevant/fetched out-links):");
            for v in l {
                println!(
                    "  {:.4}  {:>9}  {}",
                    v["score"].as_f64().unwrap_or(0.0),
                    format!("{}/{}", v["relevant_links"], v["fetched_links"]),
                    v["url"].as_str().unwrap_or("")
                );
            }
        }
    }
    Ok(())
}
