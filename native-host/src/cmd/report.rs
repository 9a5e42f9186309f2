//! `forager report`: hubs, authorities, site rating, census, acquisition rate, errors and alarms of a crawl.

use anyhow::{Context, Result};
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
}

/// Runs `forager report`.
pub(crate) fn run(args: Args) -> Result<()> {
    let Args {
        db,
        top,
        json,
        html,
    } = args;
    let r = forager::report::build(&forager::store::ReadOnly::open(&db)?.read(), top)?;
    if json {
        println!("{}", serde_json::to_string(&r)?);
    } else {
        print!("{}", forager::report::text(&r));
    }
    if let Some(path) = html {
        let title = format!("Forager crawl report: {}", db.display());
        std::fs::write(&path, forager::report::html(&r, &title))
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
