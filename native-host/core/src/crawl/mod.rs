//! The crawl loop (focused-crawling-1999 §4, crawling-the-web-2004 §2.6): a watchdog checks
//! out batches of frontier URLs, one task per fetch (bounded by `concurrency`), parsing and
//! classification on the blocking pool, results written back in batched transactions.

use crate::store::{CrawlDb, StoreError};
use forager_classifier::Classifier;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tracing::{debug_span, Instrument};

mod apprentice;
pub mod blame;
mod config;
mod dispatch;
mod host_cap;
mod open_world;
pub mod policy;
mod polite;
mod prepare;
mod recorder;
mod rescore;
pub mod shared;
mod sketch;
mod watchdog;
pub mod words;
mod worker;

/// How long a requested stop waits for fetches in progress before cancelling them.
const STOP_GRACE: Duration = Duration::from_secs(1);
/// Most URLs parked for a backoff before the crawl stops checking out more.
const MAX_PARKED: usize = 10_000;

pub use config::{
    ApprenticeConfig, CrawlConfig, CrawlEvent, Guide, Judge, Mode, OpenWorldConfig, Query,
    SharkParams, DEFAULT_APPRENTICE_WARMUP, DEFAULT_OPEN_WORLD_FIRST, DEFAULT_TEMPLATE_WEIGHT,
};
pub use prepare::{prepare, Prepared, Start};
pub use rescore::rejudge;

/// A snapshot of a running or finished crawl.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Progress {
    /// Pages fetched and recorded (all runs).
    pub fetched: u64,
    /// URLs in the frontier.
    pub frontier: i64,
    /// Fetches in flight.
    pub in_flight: usize,
    /// Fetched pages per second in this run.
    pub pages_per_sec: f64,
    /// Mean relevance of the last 100 fetched pages.
    pub recent_relevance: f64,
    /// Failures and exclusions by kind, attempts in this run.
    pub errors: HashMap<String, u64>,
    /// URLs given up on (failed or excluded), in all runs.
    pub given_up: u64,
    /// Seconds since this run started.
    pub elapsed: f64,
    /// Apprentice training instances so far, [low, high].
    pub apprentice_instances: [u64; 2],
    /// Apprentice retrains so far in this run.
    pub apprentice_retrains: u64,
    /// Whether the apprentice guides the crawl now (its critic finds it better than soft
    /// focus, or it is set to guide always).
    pub apprentice_guides: bool,
    /// The critic's last comparison on recently fetched pages: the areas under the ROC curve
    /// of the apprentice's priorities and of soft focus's scores.
    pub critic_auc: Option<(f64, f64)>,
    /// Distillations so far in this run.
    pub distillations: u64,
    /// Times the crawl re-judged its pages with a classifier changed by the user.
    pub rejudged: u64,
    /// Background learnings (open world) so far in this run.
    pub background_rounds: u64,
    /// Pages in the crawl classifier's background after the last learning.
    pub background_pages: usize,
    /// Revisits made in this run (maintenance mode).
    pub revisits: u64,
    /// Revisited pages whose content had changed.
    pub changed: u64,
    /// Stagnation and diffusion alarms holding now (over this run's pages).
    pub alarms: Vec<crate::monitor::Alarm>,
    /// Why the crawl is paused, while its own path to the web fails (a dead proxy, say).
    pub paused: Option<String>,
    /// Hosts backing off now (robots.txt unavailable, connections failing).
    pub hosts_waiting: usize,
    /// URLs waiting for a backoff, their tries unspent.
    pub parked: usize,
    /// Fetches put off because the host or the crawler was at fault, by failure kind (these
    /// did not count against the URLs).
    pub deferred: HashMap<String, u64>,
    /// Failing hosts with their cause in words and a URL, waiting ones first (at most
    /// `words::LISTED`); a host leaves the list when a page of it is fetched.
    pub failing: Vec<words::HostTrouble>,
    /// Hosts failing, all of them.
    pub failing_hosts: usize,
    /// While only work parked for a backoff is left: how long until it is tried, for how
    /// many hosts.
    pub waiting: Option<words::Waiting>,
    /// Seconds of this run spent with only parked work left (not counted as crawling: the
    /// rate is over the rest).
    pub idle_secs: f64,
    /// At the end of a crawl with the apprentice: what it learned, with its trust (saved for
    /// the next crawl of the same topics, [`crate::reuse`]).
    #[serde(skip)]
    pub learned: Option<crate::reuse::Learned>,
}

/// Why the crawl stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum StopReason {
    /// The page budget was reached.
    PageBudget,
    /// The time budget ran out.
    TimeBudget,
    /// The frontier is empty and every worker idle.
    FrontierEmpty,
    /// Asked to stop (Ctrl-C or the browser).
    Requested,
    /// Every fetch failed for longer than the give-up time because of the crawler's own path
    /// to the web (proxy, network); the frontier is kept for the next start.
    Offline,
}

/// Why a crawl could not go on.
#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    /// The crawl database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The HTTP client could not be built from the fetch settings (a bad proxy URL, say).
    #[error("fetcher: {0}")]
    Fetcher(String),
    /// The fetch log file could not be written.
    #[error("fetch log {0}: {1}")]
    FetchLog(String, std::io::Error),
    /// The crawl's WARC archive could not be written (a full disk, say).
    #[error("WARC archive: {0}")]
    Archive(String),
    /// The background of an open-world crawl could not be learned.
    #[error("learning the background: {0}")]
    Background(String),
    /// A task of the crawl on the blocking pool panicked; the store it held is lost.
    #[error("crawl database task failed: {0}")]
    Task(String),
}

/// Runs a store operation on the blocking pool so the database never stalls the runtime's
/// threads; the store moves there and back.
async fn blocking<S: CrawlDb, T: Send + 'static, E: Into<CrawlError> + Send + 'static>(
    slot: &mut Option<S>,
    f: impl FnOnce(&mut S) -> Result<T, E> + Send + 'static,
) -> Result<T, CrawlError> {
    let mut st = slot
        .take()
        .ok_or_else(|| CrawlError::Task("the crawl database was lost by an earlier one".into()))?;
    let (st, r) = tokio::task::spawn_blocking(move || {
        let r = f(&mut st);
        (st, r)
    })
    .await
    .map_err(|e| CrawlError::Task(e.to_string()))?;
    *slot = Some(st);
    r.map_err(Into::into)
}

/// Runs a crawl on `store` until a stop condition; `on_progress` is called about once a
/// second; `stop` ends the crawl gracefully when it resolves.
pub async fn run<S: CrawlDb>(
    store: S,
    classifier: Arc<Classifier>,
    config: CrawlConfig,
    stop: impl std::future::Future<Output = ()>,
    mut on_progress: impl FnMut(&Progress),
) -> Result<(StopReason, Progress), CrawlError> {
    let mut dog = watchdog::Watchdog::start(store, classifier, config).await?;
    tokio::pin!(stop);
    loop {
        // Each step in a span (`forager crawl --trace`, `RUST_LOG`); free when tracing is off.
        dog.checkpoint()
            .instrument(debug_span!("loop.checkpoint"))
            .await?;
        dog.take_queued().await?;
        dog.checkout()
            .instrument(debug_span!("loop.checkout"))
            .await?;
        if let Some(reason) = dog.finished() {
            return dog.finish(reason).await;
        }
        dog.collect(stop.as_mut())
            .instrument(debug_span!("loop.collect"))
            .await;
        dog.flush().await?;
        dog.reap_distillation().await?;
        dog.report(&mut on_progress)
            .instrument(debug_span!("loop.report"))
            .await?;
    }
}

/// CPU time (user + system) used by this process so far, in seconds (Linux; `None`
/// elsewhere). Assumes the kernel's usual 100 clock ticks per second.
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name may hold spaces: fields are counted after its closing parenthesis.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Peak resident memory of this process in bytes (Linux; `None` elsewhere).
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Stores a distillation and, when asked, feeds its top hubs' neighbours back to the frontier.
async fn apply_distillation<S: CrawlDb>(
    store: &mut Option<S>,
    scores: crate::distiller::Scores,
    feedback: Option<usize>,
) -> Result<(), CrawlError> {
    blocking(store, move |s| {
        s.save_distillation(&scores)?;
        if let Some(top) = feedback {
            s.boost_hub_neighbours(top, policy::BOOST)?;
        }
        Ok::<_, StoreError>(())
    })
    .await
}
