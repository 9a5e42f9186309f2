//! `forager links`: the links of a page scored as the browser's "highlight promising links"
//! scores them (the apprentice of a crawl, else the words around each link), one JSON object
//! per page. The browser suite compares the extension's scores with these.

use crate::read_model;
use anyhow::{Context, Result};
use forager::parse::{parse_page, OutLink};
use forager_classifier::apprentice::{Apprentice, DEFAULT_D_MAX};
use forager_classifier::links::{score_links, LinkSpan};
use forager_classifier::Scratch;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `forager links`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The model file.
    #[arg(long)]
    model: PathBuf,
    /// A crawl database whose apprentice scores the links (without it: the words around them).
    #[arg(long)]
    db: Option<PathBuf>,
    /// Write the apprentice's bytes (what the browser downloads) here.
    #[arg(long)]
    save_apprentice: Option<PathBuf>,
    /// Replace an existing file at the output path (never a crawl database, a model, a
    /// link, a FIFO or a directory).
    #[arg(long)]
    force: bool,
    /// The page's URL (links resolve against it).
    #[arg(long)]
    url: String,
    /// The page's HTML file.
    file: PathBuf,
}

/// Runs `forager links`.
pub(crate) fn run(args: Args) -> Result<()> {
    let policy = forager::output::Policy::data(args.force);
    if let Some(path) = &args.save_apprentice {
        forager::output::check(path, policy)?;
    }
    let mut model = read_model(&args.model)?;
    let classifier = model.classifier();
    let apprentice = match &args.db {
        Some(db) => Some(
            super::open_read(db)
                .with_context(|| format!("opening {}", db.display()))?
                .trained_apprentice()?,
        ),
        None => None,
    };
    if let (Some(path), Some(a)) = (&args.save_apprentice, &apprentice) {
        forager::output::write(path, &a.to_bytes(), policy)?;
    }
    let bytes =
        std::fs::read(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let html = forager::fetch::decode_html(&bytes, None);
    let base = url::Url::parse(&args.url).context("--url")?;
    let page = parse_page(&html, &base);
    let spans: Vec<LinkSpan> = page.links.iter().map(OutLink::span).collect();
    let mut scratch = Scratch::new();
    let scores = score_links(
        &classifier,
        apprentice.as_ref().filter(|a: &&Apprentice| a.is_trained()),
        &page.text.text,
        &page.leaves,
        &spans,
        DEFAULT_D_MAX,
        &mut scratch,
    );
    let links: Vec<serde_json::Value> = (page.links.iter().zip(&spans).zip(&scores))
        .map(|((l, s), sc)| {
            serde_json::json!({"url": l.url.as_str(), "anchor": s.anchor, "start": s.start,
                "end": s.end, "boilerplate": s.boilerplate, "score": sc.score, "priority": sc.priority,
                "topic": sc.topic, "rule": sc.rule})
        })
        .collect();
    let verdict = classifier.classify(&page.text.text, &mut scratch);
    let out = serde_json::json!({"url": args.url, "leaves": page.leaves.len(),
        "relevance": verdict.relevance, "best_leaf": verdict.best_leaf, "links": links});
    writeln!(std::io::stdout().lock(), "{out}")?;
    Ok(())
}
