//! `forager train`: train a model from a mini-web's examples or a bookmarks export.

use crate::{runtime, write_model};
use anyhow::{bail, Context, Result};
use forager::fetch::{FetchConfig, Fetcher};
use forager::miniweb::MiniWeb;
use forager::training;
use forager_classifier::{Model, TextOptions, TrainOptions};
use std::path::PathBuf;

/// Training options shared by `forager train` and `forager eval`.
#[derive(clap::Args, Clone)]
pub(crate) struct TrainArgs {
    /// Features kept per internal node of the taxonomy.
    #[arg(long, default_value_t = TrainOptions::default().features_per_node)]
    features: u32,
    /// Lidstone smoothing constant.
    #[arg(long, default_value_t = TrainOptions::default().lidstone)]
    lidstone: f64,
    /// Minimum number of examples a term must occur in to become a feature.
    #[arg(long, default_value_t = TrainOptions::default().min_docs)]
    min_docs: u32,
    /// Stem words (Snowball English); off by default, it lowered accuracy on FOLDOC.
    #[arg(long)]
    stem: bool,
    /// Self-training: the least probability of its best leaf for an unlabelled page to become
    /// an example of it.
    #[arg(long, default_value_t = Model::SELF_TRAIN_MIN_P)]
    pub(crate) self_train_min_p: f64,
}

impl TrainArgs {
    pub(crate) fn options(&self) -> (TextOptions, TrainOptions) {
        (
            TextOptions {
                stem: self.stem,
                ..TextOptions::default()
            },
            TrainOptions {
                features_per_node: self.features,
                lidstone: self.lidstone,
                min_docs: self.min_docs,
            },
        )
    }
}

/// Arguments of `forager train`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Mini-web directory (topics.tsv, examples.tsv, sites/).
    #[arg(long, required_unless_present = "bookmarks")]
    web: Option<PathBuf>,
    /// Bookmarks export (Netscape bookmark HTML): folders become topics.
    #[arg(long)]
    bookmarks: Option<PathBuf>,
    /// HTTP proxy for fetching bookmarked pages.
    #[arg(long)]
    proxy: Option<String>,
    /// Where to write the model.
    #[arg(long)]
    out: PathBuf,
    /// Replace an existing model at the output path (never a crawl database, a link, a FIFO
    /// or a directory).
    #[arg(long)]
    force: bool,
    /// Then self-train once on the fetched pages of these crawl databases (semi-supervised:
    /// confident pages become examples of their best leaf).
    #[arg(long, value_name = "DB")]
    self_train_from: Vec<PathBuf>,
    #[command(flatten)]
    opts: TrainArgs,
}

/// Runs `forager train`.
pub(crate) fn run(args: Args) -> Result<()> {
    let Args {
        web,
        bookmarks,
        proxy,
        out,
        force,
        self_train_from,
        opts,
    } = args;
    forager::output::check(&out, forager::output::Policy::model(force))?;
    let (text, train) = opts.options();
    let (mut model, skipped) = if let Some(file) = bookmarks {
        let html = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
        let html = String::from_utf8_lossy(&html);
        let web = web.as_deref().map(MiniWeb::open).transpose()?;
        let fetcher = Fetcher::new(FetchConfig {
            proxy,
            // URLs the user named: wherever they are.
            reach: forager::address::Reach {
                allow_private: true,
                ..Default::default()
            },
            ..FetchConfig::default()
        })?;
        let source = match &web {
            Some(w) => training::PageSource::MiniWeb(w),
            None => training::PageSource::Fetch(&fetcher),
        };
        runtime()?.block_on(training::from_bookmarks(&html, source, text, train))
    } else {
        let dir = web.context("--web or --bookmarks is required")?;
        training::from_miniweb(&MiniWeb::open(&dir)?, text, train)?
    };
    for s in &skipped {
        eprintln!("skipped {}: {}", s.url, s.reason);
    }
    if model.example_count() == 0 {
        bail!("no examples could be read; nothing to train");
    }
    if !self_train_from.is_empty() {
        // One round over all the crawls' pages together.
        let mut t = model.self_trainer(opts.self_train_min_p)?;
        let mut pages = 0usize;
        for db in &self_train_from {
            let db_ro =
                super::open_read(db).with_context(|| format!("opening {}", db.display()))?;
            db_ro
                .each_fetched_text(|url, text| -> Result<()> {
                    pages += 1;
                    t.offer(url, text)?;
                    Ok(())
                })
                .with_context(|| format!("self-training on {}", db.display()))?;
        }
        eprintln!(
            "self-training: {} of {pages} fetched pages became examples",
            t.added()
        );
    }
    write_model(&model, &out, force)?;
    Ok(())
}
