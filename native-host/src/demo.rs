//! `forager demo`: the main job on the embedded default, with no files and no network.
//!
//! Generates the synthetic topical web, trains the demo taxonomy from its examples, and shows
//! what the classifier makes of pages it has not seen.

use crate::accuracy;
use crate::synthweb::{SynthConfig, SynthWeb};
use crate::training;
use forager_classifier::{Scratch, TextOptions, TrainOptions};
use std::io::Write;
use std::time::Instant;

/// Runs the demo, writing a human report to `out`.
pub fn run(out: &mut impl Write, cfg: &SynthConfig) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let synth = SynthWeb::generate(cfg);
    let web = &synth.web;
    writeln!(
        out,
        "Forager demo — a generated web of {} files on {} sites, {} labelled pages, {} topics ({:.0} ms)",
        synth.files.len(),
        cfg.sites + 4,
        web.labels.len(),
        web.topics.len(),
        t0.elapsed().as_secs_f64() * 1e3
    )?;
    let t1 = Instant::now();
    let (mut model, skipped) =
        training::from_miniweb(web, TextOptions::default(), TrainOptions::default())?;
    anyhow::ensure!(
        skipped.is_empty(),
        "demo examples missing: {}",
        skipped.len()
    );
    writeln!(
        out,
        "Trained the taxonomy on {} examples in {:.0} ms (model {} bytes)",
        model.example_count(),
        t1.elapsed().as_secs_f64() * 1e3,
        model.to_bytes().len()
    )?;
    let pages = accuracy::held_out(web);
    let acc = accuracy::score("hierarchical", &mut model, &pages, str::to_owned);
    writeln!(
        out,
        "Held-out pages: {}   leaf accuracy {:.3}   top-level accuracy {:.3}",
        acc.pages, acc.leaf_accuracy, acc.top_accuracy
    )?;
    let task = &web.tasks[0];
    model.set_good_paths(&task.good)?;
    let c = model.classifier();
    let mut scratch = Scratch::new();
    writeln!(
        out,
        "\nGood topic: {}   (relevance R = Pr[good | page])",
        task.good.join(", ")
    )?;
    writeln!(
        out,
        "{:<44} {:<24} {:>10}",
        "page", "best leaf", "relevance"
    )?;
    for url in task
        .seeds
        .iter()
        .chain(&task.targets)
        .take(4)
        .chain(pages.iter().map(|p| &p.0).step_by(97).take(4))
    {
        let html = web.read_page(url)?;
        let v = c.classify(&crate::parse::page_text(&html).text, &mut scratch);
        writeln!(out, "{:<44} {:<24} {:>10.4}", url, v.best_leaf, v.relevance)?;
    }
    writeln!(out, "\nDone in {:.2} s.", t0.elapsed().as_secs_f64())?;
    Ok(())
}
