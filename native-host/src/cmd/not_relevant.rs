//! `forager not-relevant`: negative feedback, pages about none of your topics. Marks go into a
//! model file, or (without `--model`) into the model of the crawl database at `--db`, where the
//! workers of a running shared crawl pick them up.

use crate::{read_model, runtime};
use anyhow::{bail, Result};
use forager::fetch::FetchConfig;
use forager::store::Reader;
use forager_classifier::Model;
use std::path::PathBuf;

/// `forager not-relevant`: negative feedback on pages.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The model file (updated in place). Without it, the model stored in the crawl database
    /// at --db is marked: every worker of a crawl shared on a database server reloads it.
    #[arg(long)]
    model: Option<PathBuf>,
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

/// Where the marked model comes from and goes back to.
enum Target {
    /// A model file.
    File(PathBuf),
    /// The model stored in a crawl database (saved through its door: a new version).
    Db(Box<dyn forager::store::CrawlDb>),
}

/// Where stored page texts are read.
type Texts = Option<Box<dyn Reader + Send>>;

/// The model to mark and where it goes back, and where stored page texts are read.
fn open(a: &Args) -> Result<(Model, Target, Texts)> {
    match (&a.model, &a.db) {
        (Some(m), db) => {
            let texts = db.as_deref().map(super::open_read).transpose()?;
            Ok((read_model(m)?, Target::File(m.clone()), texts))
        }
        (None, Some(db)) => {
            let door = forager::store::open(&super::locator(db))?;
            let Some(bytes) = door.reader().model_bytes()? else {
                bail!("this crawl database has no model yet");
            };
            let texts = super::open_read(db)?;
            Ok((Model::from_bytes(&bytes)?, Target::Db(door), Some(texts)))
        }
        (None, None) => {
            bail!("give --model FILE, or --db to mark the crawl database's own model")
        }
    }
}

pub(crate) fn run(a: Args) -> Result<()> {
    let (mut model, target, texts) = open(&a)?;
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
        let stored = match &texts {
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
        match target {
            Target::File(m) => crate::write_model(&model, &m, true)?,
            Target::Db(mut door) => {
                door.save_taxonomy(&model)?;
                eprintln!("saved the marks in the crawl database's model");
            }
        }
    }
    if a.list {
        for u in model.not_relevant_urls() {
            println!("{u}");
        }
    }
    Ok(())
}
