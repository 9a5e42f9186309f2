//! What the workers of one crawl share through its database (focused-crawling-1999 §4: one
//! classifier and one distiller beside many fetchers; issue #26): the model and the apprentice,
//! each with a version that changes when what is stored changes, so every worker reloads them;
//! the periodic job's runs, one worker at a time; and the job's own values (its settings, how
//! far it got). A back-end one process owns (SQLite) has no other worker and offers none of it.

use super::{ApprenticeEvidence, Result};
use forager_classifier::apprentice::Apprentice;

/// Something stored with its version (a number that changes whenever it does).
#[derive(Clone, Debug, PartialEq)]
pub struct Versioned<T> {
    /// The version read.
    pub version: i64,
    /// What is stored.
    pub value: T,
}

/// A run of the crawl's periodic job, as logged.
#[derive(Clone, Debug, PartialEq)]
pub struct JobRun {
    /// The worker that ran it.
    pub worker: String,
    /// When it began (Unix seconds).
    pub started_at: f64,
    /// When it ended; `None` while it runs (or when its worker died running it).
    pub ended_at: Option<f64>,
    /// What it did, in words.
    pub did: Option<String>,
}

/// The shared side of a crawl database ([`super::CrawlDb::shared`]).
pub trait SharedDb: Send {
    /// The stored model's bytes when its version is not `known` (a model saved by
    /// `save_taxonomy` that differs from the one before gets a new version).
    fn model_since(&self, known: i64) -> Result<Option<Versioned<Vec<u8>>>>;
    /// The apprentice the job last published, with its trust, when its version is not `known`.
    fn apprentice_since(&self, known: i64) -> Result<Option<Versioned<Apprentice>>>;
    /// Publishes an apprentice (with its measured trust) for every worker; returns its version.
    fn publish_apprentice(&mut self, apprentice: &Apprentice) -> Result<i64>;
    /// A value the job keeps (its settings, how far it got), by key.
    fn job_value(&self, key: &str) -> Result<Option<String>>;
    /// Stores a value the job keeps.
    fn set_job_value(&mut self, key: &str, value: &str) -> Result<()>;
    /// Begins a run of the periodic job for `worker` when no other worker is running it and
    /// the last run ended at least `gap` seconds ago; returns the run's id, or `None` (another
    /// worker has it, or it ran lately). A worker that dies running it lets it go.
    fn begin_job(&mut self, worker: &str, gap: f64) -> Result<Option<i64>>;
    /// Ends the run `run`, logging what it did, and lets the next run begin.
    fn end_job(&mut self, run: i64, did: &str) -> Result<()>;
    /// The job's runs, oldest first.
    fn job_runs(&self) -> Result<Vec<JobRun>>;
    /// The apprentice's evidence (as [`super::Reader::apprentice_evidence`]) that appeared
    /// since the read that returned the mark `since` — links recorded since into fetched
    /// pages, and links into pages fetched since — or all of it for `None`; and this read's
    /// mark. Workers committing in any order, nothing is read twice or missed.
    fn evidence_since(&self, since: Option<&str>) -> Result<(Vec<ApprenticeEvidence>, String)>;
    /// The job's own state under `key` on this database (what it learned so far); never
    /// copied with the crawl, whose marks name this database's transactions.
    fn job_state(&self, key: &str) -> Result<Option<Vec<u8>>>;
    /// Stores the job's own state under `key`.
    fn set_job_state(&mut self, key: &str, value: &[u8]) -> Result<()>;
    /// A worker name unique to this door (host, process, a random part).
    fn door_name(&self) -> String;
    /// Gives back the hosts `worker` holds that have run dry (no URL in the frontier or in
    /// flight), so that work found there later goes to whichever worker claims it; returns how
    /// many.
    fn give_back_dry_hosts(&mut self, worker: &str) -> Result<usize>;
    /// The crawl's pages, every worker's: fetched, as its fetch sequence counts them (the
    /// numbers given so far: a record rolled back burns a few), and URLs in flight (checked
    /// out, not yet recorded). Cheap, whatever the crawl's size.
    fn pages_taken(&self) -> Result<(i64, i64)>;
}
