//! `forager bench`: compare crawl strategies on a mini-web task (harvest, loss, recall, robustness, hub distance).

use crate::runtime;
use anyhow::{Context, Result};
use forager::miniweb::MiniWeb;
use forager::training;
use forager_classifier::{TextOptions, TrainOptions};
use std::path::PathBuf;

/// Arguments of `forager bench`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Mini-web directory.
    #[arg(long)]
    web: PathBuf,
    /// Task name.
    #[arg(long)]
    task: String,
    /// Comma-separated strategies (bfs, unfocused, best-first, shark, hard, soft,
    /// soft+distiller, soft+apprentice, soft+apprentice-offline, soft+open-world, soft+open-world-em).
    #[arg(long, default_value = "bfs,soft,soft+apprentice")]
    strategies: String,
    /// Pages per crawl.
    #[arg(long, default_value_t = 3000)]
    pages: u64,
    /// Output directory.
    #[arg(long, default_value = "bench-out")]
    out: PathBuf,
    /// Seed of the random split of the seeds into halves.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Skip the seed-half robustness crawls.
    #[arg(long)]
    no_robustness: bool,
    /// Pages between apprentice retrains.
    #[arg(long, default_value_t = 200)]
    retrain_every: u64,
    /// Fetched pages before the learning apprentice starts guiding the crawl.
    #[arg(long, default_value_t = forager::crawl::DEFAULT_APPRENTICE_WARMUP)]
    apprentice_warmup: u64,
    /// Skip the reference crawls simulated with the ground truth (sim:bfs, sim:oracle,
    /// sim:soft-perfect, sim:soft-clairvoyant).
    #[arg(long)]
    no_references: bool,
    /// Fetches in flight per crawl (the default is `forager crawl`'s: the bench measures the
    /// crawl as users run it).
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// The same crawl in lockstep: waves of what the concurrent crawl acts on before it sees
    /// their outcomes (4 × concurrency), each recorded in checkout order before the next. A reproducible order (a
    /// debugging aid, and the way to compare fetch orders before and after a change).
    #[arg(long)]
    deterministic: bool,
    /// Write into an existing directory that is not empty and not one Forager wrote (never
    /// a link or a file).
    #[arg(long)]
    force: bool,
}

/// Runs `forager bench`.
pub(crate) fn run(args: Args) -> Result<()> {
    let Args {
        web,
        task,
        strategies,
        pages,
        out,
        seed,
        no_robustness,
        retrain_every,
        apprentice_warmup,
        no_references,
        concurrency,
        deterministic,
        force,
    } = args;
    forager::output::dir(&out, force)?;
    let concurrency = concurrency.max(1);
    eprintln!(
        "crawls: {}",
        if deterministic {
            format!(
                "deterministic (waves of {} fetches, recorded in checkout order)",
                4 * concurrency
            )
        } else {
            format!("concurrent ({concurrency} fetches in flight), as users run them")
        }
    );
    let web = MiniWeb::open(&web)?;
    let task = web.task(&task)?.clone();
    let list = strategies
        .split(',')
        .map(|s| {
            forager::evaluation::strategy(s.trim()).with_context(|| {
                format!(
                    "unknown strategy {s:?} (know: {})",
                    forager::evaluation::STRATEGIES.join(", ")
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let (mut model, _) =
        training::from_miniweb(&web, TextOptions::default(), TrainOptions::default())?;
    runtime()?.block_on(async {
        let server = forager::serve::start(web.clone(), ([127, 0, 0, 1], 0).into()).await?;
        let cfg = forager::evaluation::BenchConfig {
            pages,
            seed,
            robustness: !no_robustness,
            out: out.clone(),
            proxy: server.proxy_url(),
            retrain_every,
            warmup: apprentice_warmup,
            references: !no_references,
            concurrency,
            deterministic,
        };
        let results = forager::evaluation::run(&web, &task, &list, &mut model, &cfg).await?;
        server.shutdown().await;
        print_bench(&results);
        eprintln!("wrote {}", out.join("summary.html").display());
        anyhow::Ok(())
    })?;
    Ok(())
}

/// Prints `forager bench`'s table, then each crawl's harvest as a share of the simulated
/// oracle's at 500 and 1000 fetches (the issues' yardstick).
fn print_bench(results: &[forager::evaluation::StrategyResult]) {
    println!(
        "{:<22} {:>6} {:>8} {:>8} {:>6} {:>8} {:>6} {:>7} {:>8} {:>8}",
        "strategy",
        "pages",
        "harvest",
        "by clf",
        "loss",
        "recall",
        "sites",
        "seconds",
        "prec@R.5",
        "no-topic"
    );
    for r in results {
        if let Some(c) = r.checkpoints.last() {
            println!(
                "{:<22} {:>6} {:>8.3} {:>8.3} {:>6} {:>8.3} {:>6} {:>7.1} {:>8.3} {:>8.3}",
                r.strategy,
                c.n,
                c.harvest,
                c.harvest_classifier,
                c.loss,
                c.target_recall,
                c.sites,
                r.seconds,
                c.precision,
                c.no_topic
            );
        }
    }
    println!("\nGood hubs in the top 10 (listed, distinct scores) by distiller method; AUC of R:");
    for r in results.iter().filter(|r| !r.hubs.is_empty()) {
        let cells: Vec<String> = (r.hubs.iter())
            .map(|h| {
                format!(
                    "{} {}({},{})",
                    h.method, h.good_in_top10, h.listed, h.distinct
                )
            })
            .collect();
        let auc = r.checkpoints.last().and_then(|c| c.auc);
        println!(
            "{:<22} {}  auc {}",
            r.strategy,
            cells.join("  "),
            auc.map_or("-".into(), |a| format!("{a:.3}"))
        );
    }
    let harvest_at = |r: &forager::evaluation::StrategyResult, n: usize| {
        r.checkpoints.iter().find(|c| c.n == n).map(|c| c.harvest)
    };
    let Some(oracle) = results.iter().find(|r| r.strategy == "sim:oracle") else {
        return;
    };
    println!("\nHarvest as a share of the oracle's:");
    println!("{:<22} {:>18} {:>18}", "strategy", "at 500", "at 1000");
    for r in results.iter().filter(|r| r.strategy != "sim:oracle") {
        let cell = |n| match (harvest_at(r, n), harvest_at(oracle, n)) {
            (Some(h), Some(o)) if o > 0.0 => format!("{h:.3}/{o:.3}={:.2}", h / o),
            _ => "-".to_owned(),
        };
        println!("{:<22} {:>18} {:>18}", r.strategy, cell(500), cell(1000));
    }
}
