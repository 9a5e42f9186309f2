//! `forager export`: a crawl's hubs, authorities or fetched pages as CSV or JSON Lines, to take away.

use crate::choice;
use anyhow::Result;
use std::path::PathBuf;

/// Arguments of `forager export`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Crawl database.
    db: PathBuf,
    /// Which list.
    #[arg(long, default_value = "hubs", value_parser = choice::<forager::export::What>(&forager::export::What::NAMES))]
    what: forager::export::What,
    /// File format.
    #[arg(long, default_value = "csv", value_parser = choice::<forager::export::Format>(&forager::export::Format::NAMES))]
    format: forager::export::Format,
    /// Write here instead of standard output.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Replace an existing file at the output path (never a crawl database, a link, a FIFO
    /// or a directory).
    #[arg(long)]
    force: bool,
}

/// Runs `forager export`.
pub(crate) fn run(args: Args) -> Result<()> {
    let Args {
        db,
        what,
        format,
        out,
        force,
    } = args;
    let policy = forager::output::Policy::data(force);
    if let Some(path) = &out {
        forager::output::check(path, policy)?;
    }
    let db = super::open_read(&db)?;
    let text = forager::export::export(&*db, what, format)?;
    match out {
        Some(path) => {
            forager::output::write(&path, text.as_bytes(), policy)?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}
