//! `forager highlight-eval`: how well "highlight promising links" picks links on mini-web
//! tasks: a crawl as users run it (soft focus with the apprentice, concurrent), the
//! apprentice trained on its first half, the links of its second half scored as the browser
//! scores them; precision at 5 and AUC against ground truth, beside the words-around-the-link
//! fallback and the parent's relevance.

use crate::runtime;
use anyhow::{Context, Result};
use forager::highlight::{Measured, Quality};
use forager::miniweb::MiniWeb;
use forager::training;
use forager_classifier::{TextOptions, TrainOptions};
use std::path::PathBuf;

/// Arguments of `forager highlight-eval`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The mini-web directory.
    #[arg(long)]
    web: PathBuf,
    /// Tasks, comma-separated.
    #[arg(long)]
    tasks: String,
    /// Pages per crawl.
    #[arg(long, default_value_t = 1000)]
    pages: u64,
    /// Fetches in flight.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Where the crawl databases go.
    #[arg(long, default_value = "highlight-out")]
    out: PathBuf,
    /// Write into an existing directory that is not empty and not one Forager wrote (never
    /// a link or a file).
    #[arg(long)]
    force: bool,
}

/// Runs `forager highlight-eval`.
pub(crate) fn run(args: Args) -> Result<()> {
    forager::output::dir(&args.out, args.force)?;
    let web = MiniWeb::open(&args.web)?;
    let (mut model, _) =
        training::from_miniweb(&web, TextOptions::default(), TrainOptions::default())?;
    let strategy = forager::evaluation::strategy("soft+apprentice").context("strategy")?;
    let mut all = Vec::new();
    runtime()?.block_on(async {
        let server = forager::serve::start(web.clone(), ([127, 0, 0, 1], 0).into()).await?;
        for name in args.tasks.split(',').map(str::trim) {
            let task = web.task(name)?.clone();
            let mut m = model.clone();
            m.set_good_paths(&task.good)?;
            let cfg = forager::evaluation::BenchConfig {
                pages: args.pages,
                seed: 1,
                robustness: false,
                out: args.out.clone(),
                proxy: server.proxy_url(),
                retrain_every: 200,
                warmup: forager::crawl::DEFAULT_APPRENTICE_WARMUP,
                references: false,
                concurrency: args.concurrency,
                deterministic: false,
            };
            let db = args.out.join(format!("{name}.db"));
            let (fetched, _) = forager::evaluation::crawl_strategy(
                strategy,
                &mut m,
                &task.seeds,
                &db,
                &cfg,
                args.concurrency,
                |_| {},
            )
            .await?;
            let measured = forager::highlight::measure(&web, &task, &mut m, &fetched);
            print(name, &measured);
            all.push((name.to_owned(), measured));
        }
        server.shutdown().await;
        anyhow::Ok(())
    })?;
    let json = serde_json::to_string_pretty(&all)?;
    forager::output::write_owned(&args.out.join("highlight.json"), json.as_bytes())?;
    let _ = &mut model;
    Ok(())
}

fn print(task: &str, m: &Measured) {
    println!(
        "{task}: apprentice from {} pages ({} low / {} high instances); {} pages scored, {} links, {:.1}% relevant",
        m.train_pages, m.instances[0], m.instances[1], m.eval_pages, m.links, 100.0 * m.base_rate
    );
    let row = |name: &str, q: &Quality| {
        println!(
            "  {name:<11} P@5 {:.3}  AUC {:.3} (within a page {:.3})  marked {:.1}% relevant, unmarked {:.1}%",
            q.p_at_5,
            q.auc,
            q.page_auc,
            100.0 * q.marked_rate,
            100.0 * q.unmarked_rate
        );
    };
    row("apprentice", &m.apprentice);
    row("context", &m.context);
    row("parent R", &m.parent);
}
