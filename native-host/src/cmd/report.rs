//! `forager report`: hubs, authorities, site rating, census, acquisition rate, errors and alarms of a crawl.

use anyhow::Result;
use std::path::PathBuf;

/// Arguments of `forager report`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Crawl database.
    db: PathBuf,
    /// Rows per list.
    #[arg(long, default_value_t = 20)]
    top: usize,
    /// JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Also write a self-contained HTML report with charts here.
    #[arg(long)]
    html: Option<PathBuf>,
    /// Replace an existing file at the output path (never a crawl database, a link, a FIFO
    /// or a directory).
    #[arg(long)]
    force: bool,
}

/// Runs `forager report`.
pub(crate) fn run(args: Args) -> Result<()> {
    let Args {
        db,
        top,
        json,
        html,
        force,
    } = args;
    let policy = forager::output::Policy::data(force);
    if let Some(path) = &html {
        forager::output::check(path, policy)?;
    }
    let r = forager::report::build(&*super::open_read(&db)?, top)?;
    if json {
        println!("{}", serde_json::to_string(&r)?);
    } else {
        print!("{}", forager::report::text(&r));
    }
    if let Some(path) = html {
        let title = format!("Forager crawl report: {}", db.display());
        forager::output::write(&path, forager::report::html(&r, &title).as_bytes(), policy)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
