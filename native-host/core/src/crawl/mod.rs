//! The crawl loop (focused-crawling-1999 §4, crawling-the-web-2004 §2.6): a watchdog checks
//! out batches of frontier URLs, one task per fetch (bounded by `concurrency`), parsing and
//! classification on the blocking pool, results written back in batched transactions.

use crate::fetch::Fetcher;
use crate::robots::RobotsCache;
use crate::store::{self, Outcome, Store, StoreError};
use forager_classifier::apprentice::Apprentice;
use forager_classifier::Classifier;
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

pub mod blame;
mod config;
mod dispatch;
mod open_world;
pub mod policy;
mod worker;

use dispatch::Dispatcher;
use worker::Shared;

/// How long a requested stop waits for fetches in progress before cancelling them.
const STOP_GRACE: Duration = Duration::from_secs(1);
/// Most URLs parked for a backoff before the crawl stops checking out more.
const MAX_PARKED: usize = 10_000;

pub use config::{
    ApprenticeConfig, CrawlConfig, Judge, Mode, OpenWorldConfig, Query, SharkParams,
    DEFAULT_APPRENTICE_WARMUP, DEFAULT_OPEN_WORLD_FIRST, DEFAULT_TEMPLATE_WEIGHT,
};

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

/// Runs a store operation on the blocking pool so SQLite never stalls the runtime's threads;
/// the store moves there and back.
async fn blocking<T: Send + 'static>(
    slot: &mut Option<Store>,
    f: impl FnOnce(&mut Store) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    let mut st = slot
        .take()
        .ok_or_else(|| StoreError::Schema("crawl database lost after a failed write".into()))?;
    let (st, r) = tokio::task::spawn_blocking(move || {
        let r = f(&mut st);
        (st, r)
    })
    .await
    .map_err(|e| StoreError::Schema(format!("database task failed: {e}")))?;
    *slot = Some(st);
    r
}

/// Runs a crawl on `store` until a stop condition; `on_progress` is called about once a
/// second; `stop` ends the crawl gracefully when it resolves.
pub async fn run(
    store: Store,
    classifier: Arc<Classifier>,
    mut config: CrawlConfig,
    stop: impl std::future::Future<Output = ()>,
    mut on_progress: impl FnMut(&Progress),
) -> Result<(StopReason, Progress), crate::store::StoreError> {
    if config.deterministic {
        // A reproducible order needs one fetch at a time, whatever concurrency was asked for.
        config.concurrency = 1;
    }
    // The crawl's own seeds may be on local or private addresses; links from them may not.
    for u in store.seed_urls()? {
        if let Ok(u) = url::Url::parse(&u) {
            config.fetch.reach.allow_seed(&u);
        }
    }
    let fetcher = Fetcher::new(config.fetch.clone())
        .map_err(|e| crate::store::StoreError::Schema(e.to_string()))?;
    let (warc_tx, warc_task) = match config.warc.clone() {
        Some(c) => {
            let (tx, rx) = tokio::sync::mpsc::channel(64);
            let task = tokio::task::spawn_blocking(move || crate::warc::archive(c, rx));
            (Some(tx), Some(task))
        }
        None => (None, None),
    };
    let sh = Arc::new(Shared {
        warc: Mutex::new(warc_tx),
        fetcher,
        robots: RobotsCache::new(crate::robots::AGENT)
            .retry_unavailable_after(config.blame.backoff),
        judge: RwLock::new(Judge {
            classifier,
            not_relevant: config
                .judge_updates
                .as_ref()
                .map(|rx| rx.borrow().not_relevant.clone())
                .unwrap_or_default(),
        }),
        config: config.clone(),
        next_slot: Mutex::default(),
        per_host: Mutex::default(),
        apprentice: RwLock::new(Arc::new(
            config
                .apprentice
                .as_ref()
                .and_then(|a| a.initial.clone())
                .unwrap_or_default(),
        )),
    });
    let mut open_world = open_world::Learner::new(config.open_world.clone(), config.mode);
    let mut since_retrain = 0u64;
    let mut since_distill = 0u64;
    let mut distilling: Option<tokio::task::JoinHandle<crate::distiller::Scores>> = None;
    // The log is rewritten from the database first, so it is exact even after a crash that
    // came between a commit and the log write.
    let mut log = match &config.fetch_log {
        Some(p) => {
            let io = |e: std::io::Error| StoreError::Schema(format!("{}: {e}", p.display()));
            let mut w = std::io::BufWriter::new(std::fs::File::create(p).map_err(io)?);
            for u in store.fetched_urls()? {
                writeln!(w, "{u}").map_err(io)?;
            }
            w.flush().map_err(io)?;
            Some(w)
        }
        None => None,
    };
    store.set_meta("mode", format!("{:?}", config.mode))?;
    let mut store = Some(store);
    // The learning apprentice; the workers read snapshots of it published at each retrain. It
    // starts from the offline-trained one, or on resume from the instances already recorded.
    let mut learner: Apprentice = match config.apprentice.as_ref().map(|a| &a.initial) {
        Some(Some(initial)) => initial.clone(),
        Some(None) => blocking(&mut store, |s| s.trained_apprentice()).await?,
        None => Apprentice::default(),
    };
    // Whether the published apprentice guides the crawl (an offline-trained one does at once).
    let mut guiding = config
        .apprentice
        .as_ref()
        .and_then(|a| a.initial.as_ref())
        .is_some_and(Apprentice::is_trained);
    let mut workers = Dispatcher::new(sh.clone(), config.concurrency, config.blame);
    let started = Instant::now();
    let mut progress = Progress {
        fetched: blocking(&mut store, |s| s.fetched()).await? as u64,
        ..Progress::default()
    };
    let fetched_at_start = progress.fetched;
    let mut recent: std::collections::VecDeque<f64> = std::collections::VecDeque::new();
    // R(d) of every page fetched in this run, in order, for the monitor's alarms.
    let mut history: Vec<f64> = Vec::new();
    let monitor = crate::monitor::MonitorParams::default();
    let mut pending: Vec<Outcome> = Vec::new();
    let mut last_flush = Instant::now();
    let mut last_report = Instant::now();
    let mut reason = None;
    let mut frontier_dry = false;
    let mut stop_by: Option<Instant> = None;
    tokio::pin!(stop);
    loop {
        if reason.is_none() {
            workers.unpark();
        }
        workers.reap();
        let mut in_flight = workers.in_flight();
        if reason.is_none() && workers.gave_up() {
            reason = Some(StopReason::Offline);
            stop_by = Some(Instant::now());
        }
        let overdue = stop_by.is_some_and(|t| Instant::now() >= t) && in_flight > 0;
        if overdue || (reason.is_some() && in_flight == 0 && workers.parked() > 0) {
            // Stop promptly: what was fetched is recorded, the rest goes back to the frontier.
            while let Some(d) = workers.try_next() {
                pending.extend(workers.settle(d));
            }
            let oids = workers.abort().await;
            blocking(&mut store, move |s| s.release(&oids)).await?;
            in_flight = 0;
        }
        if reason.is_none() {
            if config.max_pages.is_some_and(|m| progress.fetched >= m) {
                reason = Some(StopReason::PageBudget);
            } else if config.max_time.is_some_and(|t| started.elapsed() >= t) {
                // Out of time: fetches still waiting for a politeness slot are cancelled too.
                reason = Some(StopReason::TimeBudget);
                stop_by = Some(Instant::now() + STOP_GRACE);
            }
        }
        if reason.is_none() {
            let budget = config.max_pages.map_or(usize::MAX, |m| {
                // Outcomes received but not yet recorded may be fetched pages too.
                (m.saturating_sub(progress.fetched) as usize)
                    .saturating_sub(in_flight + pending.len())
            });
            // Checked out ahead of the workers: twice their number, or exactly one at a time
            // when the order must be reproducible.
            let ahead = if config.deterministic { 1 } else { 2 };
            let room = (config.concurrency * ahead).saturating_sub(in_flight);
            let n = budget.min(room).min(64);
            let hold = workers.crawler_waiting() || workers.parked() >= MAX_PARKED;
            if n > 0 && !hold && (in_flight < config.concurrency || !frontier_dry) {
                // In maintenance mode a share of the batch revisits pages fetched before.
                let k = ((n as f64) * config.revisit_share.clamp(0.0, 0.9)).round() as usize;
                let age = config.revisit_after.as_secs_f64();
                let mut work = if k > 0 {
                    blocking(&mut store, move |s| s.checkout_revisits(k, age)).await?
                } else {
                    Vec::new()
                };
                let m = n - work.len();
                let fresh = blocking(&mut store, move |s| s.checkout(m)).await?;
                frontier_dry = fresh.is_empty() && work.is_empty();
                work.extend(fresh);
                for w in work {
                    workers.dispatch(w);
                }
                in_flight = workers.in_flight();
            }
        }
        if in_flight == 0 && pending.is_empty() && workers.parked() == 0 {
            // All workers idle and nothing to check out: the crawl is complete.
            let done = reason.or(frontier_dry.then_some(StopReason::FrontierEmpty));
            if let Some(r) = done {
                if let Some(h) = distilling.take() {
                    let _ = h.await;
                }
                if config.distill_every.is_some() {
                    blocking(&mut store, |s| {
                        let (edges, rel) = s.graph()?;
                        s.save_distillation(&crate::distiller::distill(
                            &edges,
                            &rel,
                            &Default::default(),
                        ))
                    })
                    .await?;
                    progress.distillations += 1;
                }
                progress.frontier = blocking(&mut store, |s| s.frontier_len()).await?;
                progress.given_up = blocking(&mut store, |s| s.given_up()).await? as u64;
                progress.in_flight = 0;
                progress.paused = workers.alarm();
                progress.deferred = workers.deferred.clone();
                progress.alarms = crate::monitor::alarms(
                    &history,
                    progress.frontier,
                    config.mode == Mode::Hard,
                    &monitor,
                );
                // The archive is complete before the crawl says it has stopped.
                drop(sh.warc.lock().unwrap_or_else(|p| p.into_inner()).take());
                if let Some(t) = warc_task {
                    t.await
                        .map_err(|e| StoreError::Archive(e.to_string()))?
                        .map_err(|e| StoreError::Archive(e.to_string()))?;
                }
                return Ok((r, progress));
            }
        }
        if in_flight > 0 || workers.parked() > 0 {
            tokio::select! {
                got = workers.next(Duration::from_millis(50)) => {
                    if let Some(d) = got {
                        pending.extend(workers.settle(d));
                    }
                }
                _ = &mut stop, if reason.is_none() => {
                    reason = Some(StopReason::Requested);
                    stop_by = Some(Instant::now() + STOP_GRACE);
                }
            }
            while let Some(d) = workers.try_next() {
                pending.extend(workers.settle(d));
            }
            in_flight = workers.in_flight();
        }
        let flush = !pending.is_empty()
            && (pending.len() >= 64
                || in_flight == 0
                || last_flush.elapsed() > Duration::from_millis(200));
        if flush {
            let batch = std::mem::take(&mut pending);
            for o in &batch {
                for r in &o.rejects {
                    *progress.errors.entry((*r).to_owned()).or_default() += 1;
                }
                if let Some(e) = &o.error {
                    if o.status != store::DocStatus::Fetched {
                        *progress.errors.entry(e.clone()).or_default() += 1;
                    }
                }
                if o.status == store::DocStatus::Fetched {
                    history.push(o.relevance);
                    recent.push_back(o.relevance);
                    if recent.len() > 100 {
                        recent.pop_front();
                    }
                }
            }
            let rec = blocking(&mut store, move |s| s.record(&batch)).await?;
            progress.fetched += rec.fetched.len() as u64;
            progress.revisits += rec.revisited as u64;
            progress.changed += rec.changed as u64;
            if let Some(cfg) = &config.apprentice {
                for (f, high) in &rec.instances {
                    learner.add(f, *high);
                }
                since_retrain += rec.fetched.len() as u64;
                // Publish at the end of the warm-up, then every `retrain_every` pages.
                let warm = guiding || progress.fetched >= cfg.warmup;
                let due = !guiding || since_retrain >= cfg.retrain_every;
                if warm && due && learner.is_trained() {
                    // Retrain: publish the counts, then re-evaluate the whole frontier.
                    since_retrain = 0;
                    guiding = true;
                    let snapshot = Arc::new(learner.clone());
                    *sh.apprentice.write().unwrap_or_else(|p| p.into_inner()) = snapshot.clone();
                    if matches!(config.mode, Mode::Soft | Mode::Hard) {
                        blocking(&mut store, move |s| {
                            s.rescore_frontier(|f| snapshot.p_high(f))
                        })
                        .await?;
                    }
                    progress.apprentice_retrains += 1;
                }
                progress.apprentice_instances = learner.instances();
            }
            let updated = (config.judge_updates.as_mut())
                .filter(|rx| rx.has_changed().unwrap_or(false))
                .map(|rx| rx.borrow_and_update().clone());
            if let Some(j) = updated {
                // The user changed the model: judge everything again with it.
                *sh.judge.write().unwrap_or_else(|p| p.into_inner()) = j.clone();
                let frontier = !guiding;
                blocking(&mut store, move |s| open_world::rejudge(s, &j, frontier)).await?;
                progress.rejudged += 1;
            }
            if open_world.due(progress.fetched) {
                let frontier = !guiding;
                let marked = sh
                    .judge
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .not_relevant
                    .clone();
                let (judge, report) = open_world.learn(&mut store, marked, frontier).await?;
                *sh.judge.write().unwrap_or_else(|p| p.into_inner()) = judge;
                progress.background_rounds += 1;
                progress.background_pages = report.background;
            }
            since_distill += rec.fetched.len() as u64;
            if config.distill_every.is_some_and(|n| since_distill >= n) && distilling.is_none() {
                // The graph is read under the store, HITS runs beside the crawl.
                since_distill = 0;
                let (edges, rel) = blocking(&mut store, |s| s.graph()).await?;
                let job = tokio::task::spawn_blocking(move || {
                    crate::distiller::distill(&edges, &rel, &Default::default())
                });
                if config.deterministic {
                    // Inline, so that the feedback lands at the same point of every run.
                    if let Ok(scores) = job.await {
                        apply_distillation(&mut store, scores, config.hub_feedback).await?;
                        progress.distillations += 1;
                    }
                } else {
                    distilling = Some(job);
                }
            }
            if let Some(l) = log.as_mut() {
                for (_, u) in &rec.fetched {
                    let _ = writeln!(l, "{u}");
                }
                let _ = l.flush();
            }
            frontier_dry = false;
            last_flush = Instant::now();
        }
        if distilling.as_ref().is_some_and(|h| h.is_finished()) {
            if let Some(Ok(scores)) = match distilling.take() {
                Some(h) => Some(h.await),
                None => None,
            } {
                apply_distillation(&mut store, scores, config.hub_feedback).await?;
                progress.distillations += 1;
            }
        }
        if last_report.elapsed() >= config.progress_every {
            progress.frontier = blocking(&mut store, |s| s.frontier_len()).await?;
            progress.given_up = blocking(&mut store, |s| s.given_up()).await? as u64;
            progress.in_flight = in_flight;
            progress.paused = workers.alarm();
            progress.hosts_waiting = workers.hosts_waiting();
            progress.parked = workers.parked();
            progress.deferred = workers.deferred.clone();
            progress.elapsed = started.elapsed().as_secs_f64();
            progress.pages_per_sec =
                (progress.fetched - fetched_at_start) as f64 / progress.elapsed.max(1e-9);
            progress.recent_relevance = recent.iter().sum::<f64>() / recent.len().max(1) as f64;
            progress.alarms = crate::monitor::alarms(
                &history,
                progress.frontier,
                config.mode == Mode::Hard,
                &monitor,
            );
            on_progress(&progress);
            last_report = Instant::now();
        }
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
async fn apply_distillation(
    store: &mut Option<Store>,
    scores: crate::distiller::Scores,
    feedback: Option<usize>,
) -> Result<(), StoreError> {
    blocking(store, move |s| {
        s.save_distillation(&scores)?;
        if let Some(top) = feedback {
            s.boost_hub_neighbours(top)?;
        }
        Ok(())
    })
    .await
}
