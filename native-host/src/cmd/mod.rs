//! One module per `forager` subcommand: its arguments (`Args`) and what it does (`run`).

pub(crate) mod bench;
pub(crate) mod classify;
pub(crate) mod crawl;
pub(crate) mod db;
pub(crate) mod demo;
pub(crate) mod distill;
pub(crate) mod eval;
pub(crate) mod export;
pub(crate) mod feed;
pub(crate) mod gen_web;
pub(crate) mod highlight_eval;
pub(crate) mod install;
pub(crate) mod links;
pub(crate) mod not_relevant;
pub(crate) mod partial_web;
pub(crate) mod report;
pub(crate) mod search;
pub(crate) mod serve_web;
pub(crate) mod sql;
pub(crate) mod starter_model;
pub(crate) mod status;
pub(crate) mod train;
pub(crate) mod uninstall;
pub(crate) mod worker;

use forager::store::{Locator, Reader};
use std::path::Path;

/// The crawl database an argument names: a file, or a `postgres://` server.
pub(crate) fn locator(db: &Path) -> Locator {
    Locator::from_path(db)
}

/// Opens the crawl database `db` names for reading (a missing file is an error, never
/// created).
pub(crate) fn open_read(db: &Path) -> anyhow::Result<Box<dyn Reader + Send>> {
    let l = locator(db);
    if let Locator::Sqlite(p) = &l {
        if std::fs::symlink_metadata(p).is_err() {
            anyhow::bail!("{}: no such crawl database", p.display());
        }
    }
    Ok(forager::store::open_read(&l)?)
}
