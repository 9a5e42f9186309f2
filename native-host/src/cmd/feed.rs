//! `forager feed`: what is new in a crawl as an Atom feed (new relevant pages, pages changed
//! on a revisit).

use anyhow::Result;
use std::path::PathBuf;

/// Arguments of `forager feed`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Crawl database.
    db: PathBuf,
    /// Only what is new after this time (RFC 3339, e.g. 2026-11-25T18:00:00Z, or Unix
    /// seconds); by default everything.
    #[arg(long)]
    since: Option<String>,
    /// The Atom file to write.
    #[arg(long)]
    out: PathBuf,
    /// Replace `--out` if it exists.
    #[arg(long)]
    force: bool,
}

/// Runs `forager feed`.
pub(crate) fn run(a: Args) -> Result<()> {
    let since = a
        .since
        .as_deref()
        .map(forager::feed::parse_time)
        .transpose()?
        .unwrap_or(0.0);
    // Refused before any work: an existing file only with --force, never a link, a FIFO, a
    // directory, a crawl database or a model (the one rule of every command's outputs).
    let policy = forager::output::Policy::data(a.force);
    forager::output::check(&a.out, policy)?;
    drop(super::open_read(&a.db)?);
    forager::store::upgrade(&super::locator(&a.db))?;
    let ro = super::open_read(&a.db)?;
    // The crawl's name: a file's absolute path and stem, or a server's URL (shown without
    // its password) and database.
    let (place, name) = match super::locator(&a.db) {
        forager::store::Locator::Postgres(url) => {
            let name = url::Url::parse(&url)
                .ok()
                .map(|u| u.path().trim_start_matches('/').to_owned())
                .filter(|n| !n.is_empty());
            let shown = forager::store::Locator::Postgres(url).to_string();
            (shown, name)
        }
        forager::store::Locator::Sqlite(p) => {
            let abs = std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone());
            let name = p.file_stem().map(|s| s.to_string_lossy().into_owned());
            (abs.to_string_lossy().into_owned(), name)
        }
    };
    let id = format!("urn:forager:crawl:{:016x}", forager::store::fnv64(&place));
    let title = format!("Forager: new in {}", name.as_deref().unwrap_or("the crawl"));
    let (xml, n) = forager::feed::atom(&*ro, since, &id, &title)?;
    forager::output::write(&a.out, xml.as_bytes(), policy)?;
    eprintln!("wrote {} ({n} entries)", a.out.display());
    Ok(())
}
