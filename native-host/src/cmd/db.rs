//! `forager db`: moving a crawl between back-ends. `forager db copy FROM TO` copies a whole
//! crawl (pages, frontier, links, model and marks, distillation, fetch log) from a SQLite file
//! to a PostgreSQL server or back; the target's search index is built from the copied pages.

use anyhow::{bail, Result};
use forager::store::Locator;
use std::path::PathBuf;

/// Arguments of `forager db`.
#[derive(clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    action: Action,
}

/// What `forager db` does.
#[derive(clap::Subcommand)]
enum Action {
    /// Copy a stopped crawl, whole, from FROM to TO: a SQLite file to a `postgres://` server
    /// (to share it between machines) or back. TO must hold no crawl unless --force.
    Copy {
        /// The crawl to copy: a SQLite file or a `postgres://` URL. It must be stopped.
        from: PathBuf,
        /// Where to copy it: a SQLite file (created) or a `postgres://` URL (the database must
        /// exist).
        to: PathBuf,
        /// Replace a crawl already at TO (it is deleted first).
        #[arg(long)]
        force: bool,
    },
}

/// Runs `forager db`.
pub(crate) fn run(a: Args) -> Result<()> {
    match a.action {
        Action::Copy { from, to, force } => copy(&from, &to, force),
    }
}

/// `forager db copy`.
fn copy(from: &std::path::Path, to: &std::path::Path, force: bool) -> Result<()> {
    let (src, dst) = (super::locator(from), super::locator(to));
    if src == dst {
        bail!("{src} is both FROM and TO: give another place to copy to");
    }
    if let Locator::Sqlite(p) = &src {
        if std::fs::symlink_metadata(p).is_err() {
            bail!("{}: no such crawl database", p.display());
        }
    }
    if let Locator::Sqlite(p) = &dst {
        if std::fs::symlink_metadata(p).is_ok() && !is_crawl_db(p) {
            bail!(
                "{} exists and is not a crawl database: it is left alone (give another file)",
                p.display()
            );
        }
    }
    let source = forager::store::copy::open(&src)?;
    let mut target = forager::store::copy::open(&dst)?;
    let t = std::time::Instant::now();
    let shown = dst.to_string();
    let mut last = std::time::Instant::now();
    let copied = forager::store::copy::copy(&*source, &mut *target, &shown, force, &mut |t, n| {
        if last.elapsed().as_secs_f64() >= 2.0 {
            eprintln!("copying {t}: {n} rows");
            last = std::time::Instant::now();
        }
    })?;
    let rows: Vec<String> = (copied.rows.iter())
        .map(|(t, n)| format!("{t} {n}"))
        .collect();
    eprintln!(
        "copied {src} to {dst} in {:.1} s: {}; search index rebuilt",
        t.elapsed().as_secs_f64(),
        rows.join(", ")
    );
    Ok(())
}

/// Whether the existing file `p` is a Forager crawl database (a SQLite file with `doc`).
fn is_crawl_db(p: &std::path::Path) -> bool {
    forager::store::Store::open_read_only(p)
        .is_ok_and(|c| c.prepare("SELECT oid, url FROM doc LIMIT 0").is_ok())
}
