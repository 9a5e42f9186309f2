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
    /// Fetches in flight.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Seconds between two requests to one host.
    #[arg(long, default_value_t = 1.0)]
    delay: f64,
    /// HTTP proxy for every fetch (a mini-web's `serve-web`, say).
    #[arg(long)]
    proxy: Option<String>,
    /// Most pages this worker fetches from one host (a trap guard; `forager crawl`'s own).
    #[arg(long, default_value_t = 5_000)]
    max_pages_per_host: u64,
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
    let store = forager::store::open(&super::locator(&a.db))?;
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
    let config = CrawlConfig {
        mode,
        max_pages: a.pages,
        max_time: seconds,
        concurrency: a.concurrency.clamp(1, 1024),
        delay: Duration::from_secs_f64(a.delay.min(3600.0)),
        worker: name.clone(),
        max_pages_per_host: a.max_pages_per_host,
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
    eprintln!("worker {name} joins {}", super::locator(&a.db));
    join(store, &model, config, seconds, &name, &a.db)
}

/// Crawls until stopped; a dry frontier that other workers' leases hold means wait and look
/// again (while URLs wait anywhere in the crawl), not leave the crawl short of a worker.
fn join(
    store: Box<dyn forager::store::CrawlDb>,
    model: &Model,
    config: CrawlConfig,
    seconds: Option<Duration>,
    name: &str,
    db: &std::path::Path,
) -> Result<()> {
    let started = std::time::Instant::now();
    runtime()?.block_on(async move {
        let (tx, mut stopped) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            let _ = tokio::signal::ctrl_c().await;
            let _ = tx.send(true);
        });
        let mut store = Some(store);
        loop {
            let mut config = config.clone();
            if let Some(limit) = seconds {
                config.max_time = Some(limit.saturating_sub(started.elapsed()));
            }
            let db = match store.take() {
                Some(s) => s,
                None => forager::store::open(&super::locator(db))?,
            };
            let mut stop = stopped.clone();
            let stop = async move {
                let _ = stop.wait_for(|s| *s).await;
            };
            let (reason, p) =
                forager::crawl::run(db, model.clone().classifier(), config, stop, |_| {}).await?;
            // A dry frontier here may be one other workers' leases hold: while URLs wait
            // anywhere in the crawl, wait and try again rather than leave the crawl short.
            let out_of_time = seconds.is_some_and(|l| started.elapsed() + RETRY >= l);
            if reason != forager::crawl::StopReason::FrontierEmpty
                || p.frontier == 0
                || out_of_time
                || *stopped.borrow()
            {
                eprintln!(
                    "stopped: {reason:?}; worker {name}; crawl fetched {} pages; frontier {}",
                    p.fetched, p.frontier
                );
                return anyhow::Ok(());
            }
            tokio::select! {
                _ = tokio::time::sleep(RETRY) => {}
                _ = stopped.wait_for(|s| *s) => {}
            }
        }
    })
}

/// How long a worker that found no free host waits before it looks again.
const RETRY: Duration = Duration::from_secs(1);
