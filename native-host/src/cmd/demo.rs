//! `forager demo`: the main job on the embedded default: generate a web, learn its topics, show the results.

use crate::runtime;
use anyhow::Result;
use std::path::PathBuf;

/// Arguments of `forager demo`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Seed of the generated web.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Run on this mini-web instead of the generated one.
    #[arg(long)]
    web: Option<PathBuf>,
    /// Task of the mini-web (default: its first).
    #[arg(long)]
    task: Option<String>,
    /// Pages per crawl.
    #[arg(long, default_value_t = 1000)]
    pages: u64,
    /// Where to write the HTML report.
    #[arg(long, default_value = "forager-demo.html")]
    report: PathBuf,
    /// Replace an existing file at the output path (never a crawl database, a model, a
    /// link, a FIFO or a directory).
    #[arg(long)]
    force: bool,
}

/// Runs `forager demo`.
pub(crate) fn run(args: Args) -> Result<()> {
    let Args {
        seed,
        web,
        task,
        pages,
        report,
        force,
    } = args;
    forager::output::check(&report, forager::output::Policy::data(force))?;
    let opts = forager::demo::DemoOptions {
        web,
        task,
        pages,
        seed,
        report,
    };
    runtime()?.block_on(forager::demo::run(&mut std::io::stdout(), &opts))?;
    Ok(())
}
