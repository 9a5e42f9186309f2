//! `forager eval`: accuracy of the hierarchical classifier and a flat baseline on a mini-web.

use super::train::TrainArgs;
use anyhow::Result;
use forager::miniweb::MiniWeb;
use forager::{accuracy, training};
use std::path::PathBuf;

/// Arguments of `forager eval`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Mini-web directory.
    #[arg(long)]
    web: PathBuf,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Also score both classifiers after self-training on the other held-out pages' text
    /// (two-fold cross-fitting: no page is classified by a model that has read it).
    #[arg(long)]
    self_train: bool,
    #[command(flatten)]
    opts: TrainArgs,
}

/// Runs `forager eval`.
pub(crate) fn run(args: Args) -> Result<()> {
    let Args {
        web,
        json,
        self_train,
        opts,
    } = args;
    let web = MiniWeb::open(&web)?;
    let (text, train) = opts.options();
    let t0 = std::time::Instant::now();
    let (mut hier, _) = training::from_miniweb(&web, text, train)?;
    let train_ms = t0.elapsed().as_secs_f64() * 1e3;
    let pages = accuracy::held_out(&web);
    let mut flat = accuracy::flat_from_miniweb(&web, &hier);
    let mut rows = vec![
        accuracy::score("hierarchical", &mut hier, &pages, str::to_owned),
        accuracy::score("flat", &mut flat, &pages, accuracy::unflatten),
    ];
    if self_train {
        let p = opts.self_train_min_p;
        rows.push(accuracy::score_self_trained(
            "hier+self",
            &hier,
            &pages,
            str::to_owned,
            p,
        )?);
        rows.push(accuracy::score_self_trained(
            "flat+self",
            &flat,
            &pages,
            accuracy::unflatten,
            p,
        )?);
    }
    let size = hier.to_bytes().len();
    if json {
        println!(
            "{}",
            serde_json::json!({"rows": rows, "model_bytes": size, "train_ms": train_ms})
        );
    } else {
        println!(
            "{:<14} {:>6} {:>9} {:>9} {:>9} {:>9}",
            "classifier", "pages", "leaf acc", "top acc", "micro-F1", "features"
        );
        for r in &rows {
            println!(
                "{:<14} {:>6} {:>9.3} {:>9.3} {:>9.3} {:>9}",
                r.name, r.pages, r.leaf_accuracy, r.top_accuracy, r.micro_f1, r.features
            );
        }
        println!("model: {size} bytes; trained in {train_ms:.0} ms");
    }
    Ok(())
}
