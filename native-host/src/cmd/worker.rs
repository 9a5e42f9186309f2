//! `forager worker`: joins a crawl that `forager crawl` started (issue #26): leases hosts in
//! order of their best pending URL, fetches and records their pages, renews its lease while it
//! works and gives its hosts back when it stops. The model and the focus mode are the crawl's
//! own, read from its database.

use crate::runtime;
use anyhow::{bail, Result};
use forager::crawl::{CrawlConfig, Mode};
use forager::fetch::FetchConfig;
use forager_classifier::Model;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `forager worker`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The crawl's database: a `postgres://` URL shared by many workers (a SQLite file takes
    /// one process at a time).
    #[arg(long)]
    db: PathBuf,
    /// This worker's name in the crawl (default: this machine's name and process id).
    #[arg(long)]
    name: Option<String>,
    /// Stop when the crawl (all workers together) has fetched this many pages.
    #[arg(long)]
    pages: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long)]
    seconds: Option<f64>,
    /// Fetches in flight, this worker's own (as many as one process: a worker adds to the
    /// crawl's pace; 16 divided among 4 workers made them only 1.16x one process at 1 s delay).
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Seconds between two requests to one host.
    #[arg(long, default_value_t = 1.0)]
    delay: f64,
    /// HTTP proxy for every fetch (a mini-web's `serve-web`, say).
    #[arg(long)]
    proxy: Option<String>,
    /// Most pages fetched from one host (a trap guard): the crawl's own, as `forager crawl`
    /// started it; a different number is refused.
    #[arg(long)]
    max_pages_per_host: Option<u64>,
    /// Count every word of a page as evidence: the crawl's own, as `forager crawl --uncapped`
    /// started it (every worker follows the crawl; given to a capped crawl, refused).
    #[arg(long)]
    uncapped: bool,
    /// Fetch hosts on private and loopback addresses too.
    #[arg(long)]
    allow_private: bool,
}

/// This machine's name and this process's id: a worker name unique while it runs.
fn default_name() -> String {
    let host = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
    let host = host.trim();
    let host = if host.is_empty() { "worker" } else { host };
    format!("{host}-{}", std::process::id())
}

/// Runs `forager worker`.
pub(crate) fn run(a: Args) -> Result<()> {
    if !(a.delay.is_finite() && a.delay >= 0.0) {
        bail!("--delay must be a number of seconds, 0 or more");
    }
    let seconds = match a.seconds {
        Some(s) if !(s.is_finite() && s > 0.0) => bail!("--seconds must be a positive number"),
        s => s.map(|s| Duration::from_secs_f64(s.min(1e9))),
    };
    let name = a.name.clone().unwrap_or_else(default_name);
    if name.is_empty() || name.len() > 200 {
        bail!("--name must be 1 to 200 characters");
    }
    let mut store = forager::store::open(&super::locator(&a.db))?;
    let reader = store.reader();
    let Some(bytes) = reader.model_bytes()? else {
        bail!("this crawl has no model yet: start it with forager crawl first");
    };
    let model = Model::from_bytes(&bytes)?;
    let mode = if reader.hard_focus() {
        Mode::Hard
    } else {
        Mode::Soft
    };
    drop(reader);
    let mut config = CrawlConfig {
        mode,
        max_pages: a.pages,
        max_time: seconds,
        concurrency: a.concurrency.clamp(1, 1024),
        delay: Duration::from_secs_f64(a.delay.min(3600.0)),
        worker: name.clone(),
        max_pages_per_host: a.max_pages_per_host.unwrap_or(5_000),
        fetch: FetchConfig {
            proxy: a.proxy.clone(),
            reach: forager::address::Reach {
                allow_private: a.allow_private,
                ..Default::default()
            },
            ..FetchConfig::default()
        },
        query: std::sync::Arc::new(forager::crawl::Query::from_model(&model)),
        ..Default::default()
    };
    // The crawl's model, apprentice and distiller are followed in its database.
    // The crawl's model, apprentice and distiller are followed in its database, and it is
    // crawled as it was started (its mode, page cap per host, classifier).
    let asked = forager::crawl::shared::Asked {
        uncapped: a.uncapped,
        max_pages_per_host: a.max_pages_per_host,
    };
    let settings =
        forager::crawl::shared::join(super::locator(&a.db), &mut store, &mut config, None, &asked)?;
    let uncapped = settings.crawl.as_ref().is_some_and(|w| w.uncapped);
    eprintln!(
        "worker {name} joins {} ({} focus{})",
        super::locator(&a.db),
        config.mode.name(),
        if uncapped { ", every word counted" } else { "" }
    );
    join(store, &model, config, &name, &a.db, uncapped)
}

/// Crawls until stopped or out of work ([`rounds`]), then says why; its classifier counts
/// every word when the crawl's does (`uncapped`).
fn join(
    store: Box<dyn forager::store::CrawlDb>,
    model: &Model,
    config: CrawlConfig,
    name: &str,
    db: &std::path::Path,
    uncapped: bool,
) -> Result<()> {
    let locator = super::locator(db);
    let classifier = forager::crawl::shared::judge_of(&mut model.clone(), uncapped).classifier;
    runtime()?.block_on(async move {
        let (reason, p) = rounds(store, &locator, classifier, config, |_| {}).await?;
        eprintln!(
            "stopped: {reason:?}; worker {name} fetched {} pages of the crawl; frontier {}",
            p.fetched, p.frontier
        );
        anyhow::Ok(())
    })
}

/// Runs a crawl to its end. On a shared database that is round after round: a round that
/// ends with its frontier dry while hosts other workers hold still have work waits and runs
/// again ([`more_rounds`]), so a process does not leave the crawl short while its work is in
/// other hands. Every round works under the one worker name of `config` (one row in
/// `forager status`). `config.max_time` is the budget of all rounds; Ctrl-C stops the crawl.
pub(crate) async fn rounds(
    store: Box<dyn forager::store::CrawlDb>,
    locator: &forager::store::Locator,
    classifier: std::sync::Arc<forager_classifier::Classifier>,
    config: CrawlConfig,
    mut on_progress: impl FnMut(&forager::crawl::Progress),
) -> Result<(forager::crawl::StopReason, forager::crawl::Progress)> {
    let started = std::time::Instant::now();
    let limit = config.max_time;
    let stopped = stop_signal();
    let mut store = store;
    loop {
        let mut config = config.clone();
        config.max_time = time_left(limit, started);
        let stop = stopped_future(&stopped);
        let (reason, p) =
            forager::crawl::run(store, classifier.clone(), config, stop, &mut on_progress).await?;
        match more_rounds(locator, reason, &stopped, time_left(limit, started)).await? {
            Some(next) => store = next,
            None => return Ok((reason, p)),
        }
    }
}

/// How long a process of a shared crawl whose frontier ran dry waits before it looks again.
const RETRY: Duration = Duration::from_secs(1);

/// A flag that turns true on Ctrl-C (a stop asked for, which every round of a crawl obeys).
fn stop_signal() -> tokio::sync::watch::Receiver<bool> {
    let (tx, rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        let _ = tx.send(true);
    });
    rx
}

/// A future that resolves once `stopped` turns true.
fn stopped_future(
    stopped: &tokio::sync::watch::Receiver<bool>,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let mut s = stopped.clone();
    async move {
        let _ = s.wait_for(|v| *v).await;
    }
}

/// What is left of a time budget of `limit` from `started` (`None`: no budget).
fn time_left(limit: Option<Duration>, started: std::time::Instant) -> Option<Duration> {
    limit.map(|l| l.saturating_sub(started.elapsed()))
}

/// After a round of a crawl on a shared database ended with `reason`: the door for another
/// round, or `None` to end. There is another (after a short wait) when the frontier ran dry
/// for this process while hosts held under a lease still have URLs pending or in flight
/// (the store answers after every claim in progress has committed): live workers' pages in
/// flight may bring new links, and a dead worker's URLs come back to the crawl when its lease
/// lapses. None on a budget, a stop, a SQLite file (one process), or a crawl with no leased
/// work left.
async fn more_rounds(
    locator: &forager::store::Locator,
    reason: forager::crawl::StopReason,
    stopped: &tokio::sync::watch::Receiver<bool>,
    left: Option<Duration>,
) -> Result<Option<Box<dyn forager::store::CrawlDb>>> {
    let shared = matches!(locator, forager::store::Locator::Postgres(_));
    let out_of_time = left.is_some_and(|l| l <= RETRY);
    if !shared
        || reason != forager::crawl::StopReason::FrontierEmpty
        || out_of_time
        || *stopped.borrow()
    {
        return Ok(None);
    }
    let l = locator.clone();
    let (db, work_left) = tokio::task::spawn_blocking(move || {
        let db = forager::store::open(&l)?;
        let left = db.leased_work_left()?;
        anyhow::Ok((db, left))
    })
    .await??;
    if !work_left {
        return Ok(None);
    }
    let mut stop = stopped.clone();
    tokio::select! {
        _ = tokio::time::sleep(RETRY) => {}
        _ = stop.wait_for(|s| *s) => {}
    }
    Ok((!*stopped.borrow()).then_some(db))
}
