//! `forager not-relevant`: negative feedback, pages about none of your topics.

use crate::{read_model, runtime};
use anyhow::{bail, Result};
use forager::fetch::FetchConfig;
use std::path::PathBuf;

/// `forager not-relevant`: negative feedback on pages.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The model file (updated in place).
    #[arg(long)]
    model: PathBuf,
    /// Take the pages' text from this crawl database (pages it fetched).
    #[arg(long)]
    db: Option<PathBuf>,
    /// HTTP proxy for URLs that are read from the web.
    #[arg(long)]
    proxy: Option<String>,
    /// Remove the marks instead.
    #[arg(long)]
    undo: bool,
    /// List the marked URLs (after any change).
    #[arg(long)]
    list: bool,
    /// URLs (or HTML files) of the pages.
    urls: Vec<String>,
}

pub(crate) fn run(a: Args) -> Result<()> {
    let mut model = read_model(&a.model)?;
    let conn = match &a.db {
        Some(db) => Some(super::open_read(db)?),
        None => None,
    };
    let fetcher = forager::fetch::Fetcher::new(FetchConfig {
        proxy: a.proxy.clone(),
        // URLs the user named: wherever they are.
        reach: forager::address::Reach {
            allow_private: true,
            ..Default::default()
        },
        ..FetchConfig::default()
    })?;
    let rt = runtime()?;
    for url in &a.urls {
        if a.undo {
            if !model.not_relevant_urls().contains(url) {
                bail!("{url} is not marked not relevant");
            }
            model.remove_example(url)?;
            continue;
        }
        let stored = match &conn {
            Some(c) => c.fetched_text(url)?,
            None => None,
        };
        let text = match stored {
            Some(t) => t,
            None if url.starts_with("http://") || url.starts_with("https://") => {
                let r = rt.block_on(fetcher.get(url))?;
                forager::parse::page_text(&r.text()).text
            }
            None => {
                // A page file, read as much as a page fetched from the web may be.
                let max = FetchConfig::default().max_body;
                let b = forager::input::read_regular(std::path::Path::new(url), max)
                    .map_err(|e| anyhow::anyhow!("reading {url}: {e}"))?;
                forager::parse::page_text(&forager::fetch::decode_html(&b, None)).text
            }
        };
        model.mark_not_relevant(url, &text)?;
    }
    if !a.urls.is_empty() {
        crate::write_model(&model, &a.model, true)?;
    }
    if a.list {
        for u in model.not_relevant_urls() {
            println!("{u}");
        }
    }
    Ok(())
}
