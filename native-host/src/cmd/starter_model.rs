//! `forager starter-model`: write the embedded starter model (the demo taxonomy) for the extension.

use crate::write_model;
use anyhow::Result;
use forager::training;
use forager_classifier::{TextOptions, TrainOptions};
use std::path::PathBuf;

/// Arguments of `forager starter-model`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Output file.
    #[arg(long)]
    out: PathBuf,
    /// Replace an existing model at the output path (never a crawl database, a link, a FIFO
    /// or a directory).
    #[arg(long)]
    force: bool,
    /// Train it afresh from the generated web's examples instead (how the shipped
    /// `native-host/starter.fgm` was made).
    #[arg(long)]
    from_generated_web: bool,
}

/// Runs `forager starter-model`.
pub(crate) fn run(args: Args) -> Result<()> {
    let Args {
        out,
        from_generated_web,
        force,
    } = args;
    forager::output::check(&out, forager::output::Policy::model(force))?;
    let model = if from_generated_web {
        let web = forager::synthweb::SynthWeb::generate(&Default::default()).web;
        training::from_miniweb(&web, TextOptions::default(), TrainOptions::default())?.0
    } else {
        forager::native::starter_model()
    };
    write_model(&model, &out, force)?;
    Ok(())
}
