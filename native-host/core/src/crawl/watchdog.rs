//! The crawl loop as the paper's watchdog (focused-crawling-1999 §4): it checks work out of
//! the frontier, hands it to fetch workers and records what comes back, in named steps —
//! `checkpoint` (stop conditions), `checkout`, `collect`, `flush` (records beside the loop:
//! see `record`; then `retrain`, `rejudge`, `learn_background`, `distill`: see `catch_up`),
//! `report` and `finish` (see `report`); what it opens at the start and closes at the end is
//! in `setup`.

mod catch_up;
mod record;
mod report;
mod setup;

use super::apprentice::Learning;
use super::dispatch::Dispatcher;
use super::recorder::Recorder;
use super::words::IdleClock;
use super::worker::Shared;
use super::{
    blocking, open_world, CrawlConfig, CrawlError, CrawlEvent, Progress, StopReason, MAX_PARKED,
    STOP_GRACE,
};
use crate::distiller::Scores;
use crate::monitor::{self, History, MonitorParams};
use crate::store::{self, CrawlDb, Outcome};
use forager_classifier::Classifier;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tracing::debug_span;

/// Most work out at once, in workers' numbers (work waiting for robots.txt included).
const MAX_OUT: usize = 8;

/// The crawl loop's state between steps.
pub(super) struct Watchdog<S: CrawlDb> {
    config: CrawlConfig,
    store: Option<S>,
    sh: Arc<Shared>,
    workers: Dispatcher,
    warc_task: Option<JoinHandle<std::io::Result<Vec<PathBuf>>>>,
    open_world: open_world::Learner,
    /// The apprentice, learning, and guiding when it should; the workers read the snapshots
    /// it publishes.
    learning: Option<Learning>,
    /// The apprentice's re-score of the frontier beside the loop.
    rescoring: super::rescore::Beside,
    since_distill: u64,
    distilling: Option<JoinHandle<Scores>>,
    log: Option<std::io::BufWriter<std::fs::File>>,
    started: Instant,
    progress: Progress,
    fetched_at_start: u64,
    /// A crawl shared with other workers: the pages the whole crawl has fetched (every
    /// worker's), as last read before a checkout or seen in a record's fetch sequence.
    crawl_fetched: u64,
    /// A crawl shared with other workers: its pages fetched and in flight, every worker's,
    /// as last read before a checkout (the page budget of its top-ups too).
    crawl_taken: u64,
    /// R(d) of the pages fetched in this run, in order, as the monitor's alarms and the
    /// recent relevance read it (bounded: see `monitor::History`).
    history: History,
    pending: Vec<Outcome>,
    /// The batch being recorded beside the loop (concurrent crawls; the store is away meanwhile).
    recorder: Recorder<S>,
    /// What the retrain points since the store was last at home ask of it (concurrent
    /// crawls: done when the loop takes it back from the writer).
    deferred: Vec<catch_up::Retrain>,
    /// Deterministic crawls: the row ids of the wave in flight, in checkout order (the order
    /// its outcomes are recorded in, whenever they arrive).
    wave: std::collections::HashMap<store::PageId, usize>,
    last_flush: Instant,
    last_report: Instant,
    /// When the crawl last renewed its host lease.
    last_renew: Instant,
    reason: Option<StopReason>,
    frontier_dry: bool,
    stop_by: Option<Instant>,
    in_flight: usize,
    /// The time of this run spent with only parked work left.
    idle: IdleClock,
}

impl<S: CrawlDb> Watchdog<S> {
    /// Prepares a crawl of `store`: the fetcher, the WARC writer, the shared state of the
    /// workers, the fetch log and the apprentice.
    pub(super) async fn start(
        mut store: S,
        classifier: Arc<Classifier>,
        mut config: CrawlConfig,
    ) -> Result<Watchdog<S>, CrawlError> {
        // The crawl's own seeds may be on local or private addresses; links from them may not.
        for u in store.seed_urls()? {
            if let Ok(u) = url::Url::parse(&u) {
                config.fetch.reach.allow_seed(&u);
            }
        }
        let initial = (config.apprentice.as_ref()).and_then(|a| a.initial.clone());
        let (sh, warc_task) = setup::shared(&config, &store, classifier, initial.clone())?;
        super::shared::follow(&config, &sh);
        let log = setup::fetch_log(&config, &store)?;
        store.set_mode(&format!("{:?}", config.mode))?;
        store.set_politeness(config.delay);
        let mut store = Some(store);
        let learner =
            setup::first_learner(&mut store, config.apprentice.is_some(), initial).await?;
        let learning = (config.apprentice.as_ref()).map(|c| Learning::new(c, learner));
        let fetched = blocking(&mut store, |s| s.fetched()).await? as u64;
        // A resumed crawl: the model may have changed since its pages were judged (a page
        // marked not relevant between crawls), so they are judged again at the first flush.
        if let Some(rx) = config.judge_updates.as_mut().filter(|_| fetched > 0) {
            rx.mark_changed();
        }
        Ok(Watchdog {
            workers: Dispatcher::new(sh.clone(), config.concurrency, config.blame),
            open_world: open_world::Learner::new(config.open_world.clone(), config.mode),
            config,
            store,
            sh,
            warc_task,
            learning,
            rescoring: Default::default(),
            since_distill: 0,
            distilling: None,
            log,
            started: Instant::now(),
            progress: Progress {
                fetched,
                ..Progress::default()
            },
            fetched_at_start: fetched,
            crawl_fetched: fetched,
            crawl_taken: 0,
            history: History::new(MonitorParams::default().window, monitor::MAX_CHUNKS),
            pending: Vec::new(),
            recorder: Recorder::default(),
            deferred: Vec::new(),
            wave: std::collections::HashMap::new(),
            last_flush: Instant::now(),
            last_report: Instant::now(),
            last_renew: Instant::now(),
            reason: None,
            frontier_dry: false,
            stop_by: None,
            in_flight: 0,
            idle: IdleClock::default(),
        })
    }

    /// Stop conditions: the crawler gave up, a stop is overdue (what was fetched is recorded,
    /// the rest goes back to the frontier), or a page or time budget is spent.
    pub(super) async fn checkpoint(&mut self) -> Result<(), CrawlError> {
        if self.reason.is_none() {
            self.workers.unpark();
        }
        self.workers.reap();
        self.in_flight = self.workers.in_flight();
        let idle = self.in_flight == 0
            && self.pending.is_empty()
            && self.recorder.idle()
            && self.workers.parked() > 0;
        self.idle.tick(idle);
        if self.reason.is_none() && self.workers.gave_up() {
            self.reason = Some(StopReason::Offline);
            self.stop_by = Some(Instant::now());
        }
        if self.reason.is_none() && idle && self.frontier_dry && self.workers.every_host_failed() {
            // Every host tried has failed and no other work is left: say so now, not after
            // their backoffs (the URLs go back to the frontier, tries intact).
            self.reason = Some(StopReason::FrontierEmpty);
        }
        let overdue = self.stop_by.is_some_and(|t| Instant::now() >= t) && self.in_flight > 0;
        let stranded = self.reason.is_some() && self.in_flight == 0 && self.workers.parked() > 0;
        if overdue || stranded {
            while let Some(d) = self.workers.try_next() {
                self.pending.extend(self.workers.settle(d));
            }
            // The store first: work the writer checked out meanwhile is dispatched, then
            // cancelled with the rest.
            self.land().await?;
            let oids = self.workers.abort().await;
            blocking(&mut self.store, move |s| s.release(&oids)).await?;
            self.in_flight = 0;
        }
        if self.reason.is_none() {
            if (self.config.max_pages).is_some_and(|m| self.counted() >= m) {
                self.reason = Some(StopReason::PageBudget);
            } else if (self.config.max_time).is_some_and(|t| self.started.elapsed() >= t) {
                // Out of time: fetches still waiting for a politeness slot are cancelled too.
                self.reason = Some(StopReason::TimeBudget);
                self.stop_by = Some(Instant::now() + STOP_GRACE);
            }
        }
        Ok(())
    }

    /// Puts the URLs the user queued since the last turn at the head of the frontier.
    pub(super) async fn take_queued(&mut self) -> Result<(), CrawlError> {
        let gone = self.workers.take_given_up(self.config.give_up.as_ref());
        self.pending.extend(gone);
        let Some(rx) = self.config.queued.as_ref() else {
            return Ok(());
        };
        let mut seeds = Vec::new();
        {
            let mut rx = rx.lock().unwrap_or_else(|p| p.into_inner());
            while let Ok(batch) = rx.try_recv() {
                seeds.extend(batch);
            }
        }
        if !seeds.is_empty() {
            self.land().await?;
            blocking(&mut self.store, move |s| s.add_seeds(&seeds)).await?;
            self.frontier_dry = false;
        }
        Ok(())
    }

    /// Checks work out of the frontier for idle workers, within the page budget.
    pub(super) async fn checkout(&mut self) -> Result<(), CrawlError> {
        // While the writer records the store is away: it checks out the workers' top-up
        // before each record (`record::top_up`), and the lease is renewed when the loop
        // takes the store back.
        if !self.recorder.away() {
            self.renew_lease().await?;
        }
        if self.reason.is_some() || self.recorder.away() {
            return Ok(());
        }
        let (config, in_flight) = (&self.config, self.in_flight);
        // Checked out ahead of the workers: twice their number. A deterministic crawl checks out
        // one wave, and the next only when this one is recorded. A wave is what the concurrent
        // crawl acts on before it sees their outcomes: its look-ahead (2 × concurrency) plus
        // what it gathers between two flushes (about as many again at its usual pace).
        // (Work parked for a failing host's backoff does not hold the wave: it is fetched
        // whenever the host may be tried again, as in the concurrent crawl.)
        let wave_open = in_flight > 0 || !self.pending.is_empty();
        if config.deterministic && wave_open {
            return Ok(());
        }
        let ahead = if config.deterministic { 4 } else { 2 };
        // Work waiting for its host's robots.txt (a first visit, or a host that may not
        // exist being confirmed) holds no worker: the look-ahead is of the rest, within a
        // bound on all work out.
        let held = in_flight.saturating_sub(self.workers.at_robots());
        let room = (config.concurrency * ahead)
            .saturating_sub(held)
            .min((config.concurrency * MAX_OUT).saturating_sub(in_flight));
        let hold = self.workers.crawler_waiting() || self.workers.parked() >= MAX_PARKED;
        if room == 0 || hold || (in_flight >= config.concurrency && self.frontier_dry) {
            return Ok(());
        }
        // Only now, with room for a checkout, is a shared crawl's page count read (a round
        // trip to the shared store).
        self.count_crawl().await?;
        let (config, budget) = (&self.config, self.budget());
        let n = budget.min(room).min(64);
        if n == 0 {
            return Ok(());
        }
        // Sized to free capacity: while every worker has work, the look-ahead is topped up
        // by half the workers' number at a time, not URL by URL (one transaction each).
        let chunk = (config.concurrency / 2).max(1);
        if !config.deterministic && in_flight >= config.concurrency && n < chunk && n < budget {
            return Ok(());
        }
        // In maintenance mode a share of the batch revisits pages fetched before.
        let k = ((n as f64) * config.revisit_share.clamp(0.0, 0.9)).round() as usize;
        let age = config.revisit_after.as_secs_f64();
        let mut work = if k > 0 {
            blocking(&mut self.store, move |s| s.checkout_revisits(k, age)).await?
        } else {
            Vec::new()
        };
        let m = n - work.len();
        let w = config.worker.clone();
        let fresh = blocking(&mut self.store, move |s| s.checkout(&w, m, store::LEASE)).await?;
        self.frontier_dry = fresh.is_empty() && work.is_empty();
        work.extend(fresh);
        if config.deterministic {
            self.wave = work.iter().enumerate().map(|(i, w)| (w.oid, i)).collect();
        }
        let _dispatch = debug_span!("loop.dispatch", n = work.len()).entered();
        for w in work {
            self.workers.dispatch(w);
        }
        self.in_flight = self.workers.in_flight();
        Ok(())
    }

    /// Renews the crawl's lease on its hosts when it is due.
    async fn renew_lease(&mut self) -> Result<(), CrawlError> {
        if self.last_renew.elapsed() >= store::RENEW_EVERY {
            self.last_renew = Instant::now();
            let w = self.config.worker.clone();
            blocking(&mut self.store, move |s| s.renew(&w, store::LEASE)).await?;
        }
        Ok(())
    }

    /// Pages that may still be checked out within the page budget: outcomes received but not
    /// yet recorded, and work in flight, may be fetched pages too.
    fn budget(&self) -> usize {
        self.config.max_pages.map_or(usize::MAX, |m| {
            (m.saturating_sub(self.counted()) as usize)
                .saturating_sub(self.in_flight + self.pending.len() + self.recorder.len())
                .min(m.saturating_sub(self.crawl_taken) as usize)
        })
    }

    /// A crawl shared with other workers, given a page budget: reads the crawl's pages fetched
    /// and in flight, every worker's (two cheap counts), for [`Self::budget`]. Once they are
    /// as many as the budget, this worker takes no more (unless some in flight fail), and
    /// stops once they are fetched; meanwhile, with nothing of its own out, it looks again
    /// every 50 ms.
    async fn count_crawl(&mut self) -> Result<(), CrawlError> {
        let Some(m) = self
            .config
            .max_pages
            .filter(|_| self.config.shared.is_some())
        else {
            return Ok(());
        };
        let (done, flying) = blocking(&mut self.store, |s| match s.shared() {
            Some(d) => d.pages_taken(),
            None => Ok((0, 0)),
        })
        .await?;
        let done = u64::try_from(done).unwrap_or(0);
        self.crawl_fetched = self.crawl_fetched.max(done);
        self.crawl_taken = done + u64::try_from(flying).unwrap_or(0);
        let idle = self.in_flight == 0 && self.pending.is_empty() && self.recorder.idle();
        if self.crawl_taken >= m && self.crawl_fetched < m && idle {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    /// Pages fetched as the page budget counts them: this process's crawl, or, when the crawl
    /// is shared, every worker's (`--pages N` stops when the crawl has N, not when this worker
    /// has fetched N since it joined).
    fn counted(&self) -> u64 {
        self.progress.fetched.max(self.crawl_fetched)
    }

    /// Why the crawl is complete, once every worker is idle and nothing is left to record.
    pub(super) fn finished(&self) -> Option<StopReason> {
        let idle = self.in_flight == 0
            && self.pending.is_empty()
            && self.recorder.idle()
            && self.workers.parked() == 0;
        idle.then(|| (self.reason).or(self.frontier_dry.then_some(StopReason::FrontierEmpty)))?
    }

    /// Waits briefly for outcomes (or for `stop`, which asks the crawl to end).
    pub(super) async fn collect(&mut self, stop: std::pin::Pin<&mut impl std::future::Future>) {
        let recording = self.recorder.away() && !self.recorder.done();
        if self.in_flight == 0 && self.workers.parked() == 0 && !recording {
            return;
        }
        let accepting = self.reason.is_none();
        tokio::select! {
            got = self.workers.next(Duration::from_millis(50)) => {
                if let Some(d) = got {
                    self.pending.extend(self.workers.settle(d));
                }
            }
            // A record landing (or the writer's top-up, or its chain's end) wakes the loop.
            () = self.recorder.wait(), if recording => {}
            _ = stop, if accepting => {
                self.reason = Some(StopReason::Requested);
                self.stop_by = Some(Instant::now() + STOP_GRACE);
            }
        }
        while let Some(d) = self.workers.try_next() {
            self.pending.extend(self.workers.settle(d));
        }
        self.in_flight = self.workers.in_flight();
    }

    /// Tells `config.events` what happened, never waiting: when the receiver is behind, the
    /// event is dropped (pages can be read again from the database by sequence number).
    fn tell(&self, event: impl FnOnce() -> CrawlEvent) {
        if let Some(tx) = &self.config.events {
            let _ = tx.try_send(event());
        }
    }

    /// Error counts by kind, and the relevance history the monitor watches.
    fn count(&mut self, batch: &[Outcome]) {
        for o in batch {
            for r in &o.rejects {
                *self.progress.errors.entry((*r).to_owned()).or_default() += 1;
            }
            if let Some(e) = &o.error {
                if o.status != store::DocStatus::Fetched {
                    *self.progress.errors.entry(e.clone()).or_default() += 1;
                }
            }
            if o.status == store::DocStatus::Fetched {
                self.history.push(o.relevance);
            }
        }
    }
}
