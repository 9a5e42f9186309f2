//! `forager partial-web`: a mini-web with whole taxonomy branches dropped, an open-world testbed.

use anyhow::Result;
use std::path::PathBuf;

/// Arguments of `forager partial-web`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The mini-web.
    #[arg(long)]
    web: PathBuf,
    /// A branch to drop, e.g. /Business (repeat for more).
    #[arg(long, required = true)]
    drop: Vec<String>,
    /// Output directory (its `sites` links to the original's).
    #[arg(long)]
    out: PathBuf,
    /// Write into an existing directory that is not empty and not one Forager wrote (never
    /// a link or a file).
    #[arg(long)]
    force: bool,
}

/// Runs `forager partial-web`.
pub(crate) fn run(args: Args) -> Result<()> {
    let Args {
        web,
        drop,
        out,
        force,
    } = args;
    forager::output::dir(&out, force)?;
    let r = forager::partial::write_partial(&web, &drop, &out)?;
    eprintln!(
        "wrote {}: topics {} kept, {} dropped; examples {} kept, {} dropped; {} labelled \
         pages now off-taxonomy; tasks {} kept, {} dropped",
        out.display(),
        r.topics.0,
        r.topics.1,
        r.examples.0,
        r.examples.1,
        r.unlabelled,
        r.tasks.0,
        r.tasks.1
    );
    Ok(())
}
