//! The crawl loop as the paper's watchdog (focused-crawling-1999 §4): it checks work out of
//! the frontier, hands it to fetch workers and records what comes back, in named steps —
//! `checkpoint` (stop conditions), `checkout`, `collect`, `flush` (record, then `retrain`,
//! `rejudge`, `learn_background`, `distill`: see `catch_up`), `report` and `finish` (see
//! `report`); what it opens at the start and closes at the end is in `setup`.

mod catch_up;
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
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tracing::{debug_span, Instrument};

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
    /// R(d) of the pages fetched in this run, in order, as the monitor's alarms and the
    /// recent relevance read it (bounded: see `monitor::History`).
    history: History,
    pending: Vec<Outcome>,
    /// The batch being recorded beside the loop (concurrent crawls; the store is away meanwhile).
    recorder: Recorder<S>,
    /// What the last retrain point asks of the store, while the record after it runs
    /// (concurrent crawls: done when that record lands).
    deferred: Option<catch_up::Retrain>,
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
            history: History::new(MonitorParams::default().window, monitor::MAX_CHUNKS),
            pending: Vec::new(),
            recorder: Recorder::default(),
            deferred: None,
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
            && !self.recorder.busy()
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
            let oids = self.workers.abort().await;
            self.land().await?;
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
        // While a batch is being recorded the store is away: the workers have the work
        // checked out before it (see `top_up`), and the lease is renewed after it lands.
        if !self.recorder.busy() && self.last_renew.elapsed() >= store::RENEW_EVERY {
            self.last_renew = Instant::now();
            let w = self.config.worker.clone();
            blocking(&mut self.store, move |s| s.renew(&w, store::LEASE)).await?;
        }
        if self.reason.is_some() || self.recorder.busy() {
            return Ok(());
        }
        let (config, in_flight) = (&self.config, self.in_flight);
        let budget = self.budget();
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
        let n = budget.min(room).min(64);
        let hold = self.workers.crawler_waiting() || self.workers.parked() >= MAX_PARKED;
        if n == 0 || hold || (in_flight >= config.concurrency && self.frontier_dry) {
            return Ok(());
        }
        // Sized to free capacity: while every worker has work, the look-ahead is topped up
        // by half the workers' number at a time, not URL by URL (one transaction each).
        let chunk = (config.concurrency / 2).max(1);
        if !config.deterministic && in_flight >= config.concurrency && n < chunk && n < budget {
            return Ok(());
        }
        // A crawl shared with other workers: the page budget is the whole crawl's, read now
        // (its pages fetched and in flight, every worker's). Once they are as many, this
        // worker takes no more (unless some in flight fail), and stops once they are fetched.
        let n = match (config.max_pages, config.shared.is_some()) {
            (Some(m), true) => {
                let (done, flying) = blocking(&mut self.store, |s| match s.shared() {
                    Some(d) => d.pages_taken(),
                    None => Ok((0, 0)),
                })
                .await?;
                let done = u64::try_from(done).unwrap_or(0);
                self.crawl_fetched = self.crawl_fetched.max(done);
                let left = m.saturating_sub(done + u64::try_from(flying).unwrap_or(0));
                let idle = in_flight == 0 && self.pending.is_empty() && !self.recorder.busy();
                if left == 0 && idle {
                    // Nothing of its own out: other workers' pages in flight, waited for.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                n.min(usize::try_from(left).unwrap_or(usize::MAX))
            }
            _ => n,
        };
        if n == 0 {
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

    /// Pages that may still be checked out within the page budget: outcomes received but not
    /// yet recorded, and work in flight, may be fetched pages too.
    fn budget(&self) -> usize {
        self.config.max_pages.map_or(usize::MAX, |m| {
            (m.saturating_sub(self.counted()) as usize)
                .saturating_sub(self.in_flight + self.pending.len() + self.recorder.len())
        })
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
            && !self.recorder.busy()
            && self.workers.parked() == 0;
        idle.then(|| (self.reason).or(self.frontier_dry.then_some(StopReason::FrontierEmpty)))?
    }

    /// Waits briefly for outcomes (or for `stop`, which asks the crawl to end).
    pub(super) async fn collect(&mut self, stop: std::pin::Pin<&mut impl std::future::Future>) {
        let recording = self.recorder.busy() && !self.recorder.done();
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
            // A record landing wakes the loop: the store is back for the next checkout.
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

    /// Records the pending outcomes when enough have gathered, then lets the apprentice,
    /// the judge, the background and the distiller catch up with them. A concurrent crawl
    /// records beside the loop (one batch at a time): when a record lands, what needs the
    /// store is done, the next record starts, and the apprentice learns the landed one while
    /// the writer records ([`Self::caught_up`]). A deterministic one records in line, so
    /// that every run sees the same frontier.
    pub(super) async fn flush(&mut self) -> Result<(), CrawlError> {
        if self.recorder.done() {
            if let Some((store, rec)) = self.recorder.land().await {
                self.store = store;
                return self.caught_up(rec?).await;
            }
        }
        if self.recorder.busy() {
            return Ok(());
        }
        if self.config.deterministic {
            return self.record_in_line().await;
        }
        if let Some(batch) = self.start_record().await? {
            if let Some(l) = self.learning.as_mut() {
                l.scored(&batch, self.config.mode);
            }
        }
        Ok(())
    }

    /// Deterministic crawls: a whole wave, recorded in line in checkout order (the same record
    /// whatever order fetches end in), and caught up with before the next checkout.
    async fn record_in_line(&mut self) -> Result<(), CrawlError> {
        if self.pending.is_empty() || self.in_flight > 0 {
            return Ok(());
        }
        let mut batch = std::mem::take(&mut self.pending);
        let wave = std::mem::take(&mut self.wave);
        batch.sort_by_key(|o| wave.get(&o.oid).copied().unwrap_or(usize::MAX));
        self.count(&batch);
        self.archive_barrier().await;
        if let Some(l) = self.learning.as_mut() {
            l.scored(&batch, self.config.mode);
        }
        let rec = blocking(&mut self.store, move |s| s.record(&batch))
            .instrument(debug_span!("loop.record"))
            .await?;
        self.recorded(rec).await
    }

    /// Concurrent crawls: when enough outcomes have gathered (or no fetch is out, or 200 ms
    /// passed), the workers are topped up and the batch starts recording beside the loop;
    /// returns it (the loop may read it meanwhile).
    async fn start_record(&mut self) -> Result<Option<Arc<Vec<Outcome>>>, CrawlError> {
        let due = self.pending.len() >= super::recorder::BATCH
            || self.in_flight == 0
            || self.last_flush.elapsed() > Duration::from_millis(200);
        if self.pending.is_empty() || !due {
            return Ok(None);
        }
        let batch = std::mem::take(&mut self.pending);
        self.count(&batch);
        self.archive_barrier().await;
        self.top_up(batch.len()).await?;
        let store = (self.store.take()).ok_or_else(|| {
            CrawlError::Task("the crawl database was lost by an earlier one".into())
        })?;
        // The critic's board reads the batch while the writer records it (#27: it was ~3% of
        // the crawler's CPU on the loop, in line before every record).
        let batch = Arc::new(batch);
        self.recorder.start(store, batch.clone());
        Ok(Some(batch))
    }

    /// Waits until the WARC archive has written what was fetched so far.
    async fn archive_barrier(&mut self) {
        let archive = (self.sh.warc.lock())
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        setup::archive_barrier(archive).await;
    }

    /// Takes back the store from the record in progress, if any, and catches up with it in
    /// line.
    pub(super) async fn land(&mut self) -> Result<(), CrawlError> {
        let Some((store, rec)) = self.recorder.land().await else {
            return Ok(());
        };
        self.store = store;
        self.recorded(rec?).await
    }

    /// Before a batch is recorded beside the loop: as many URLs again as it holds are
    /// checked out (at most the checkout's look-ahead, twice the workers' number), so the
    /// workers keep fetching meanwhile. (#27: with at most the workers' number, they ran dry
    /// before the record landed: the FOLDOC crawl bench's soft crawl went 17-20% faster with
    /// twice, at the same CPU per page; `benches/floor.rs`.)
    async fn top_up(&mut self, recording: usize) -> Result<(), CrawlError> {
        let c = &self.config;
        let hold = self.workers.crawler_waiting() || self.workers.parked() >= MAX_PARKED;
        if self.reason.is_some() || hold || self.frontier_dry || c.revisit_share > 0.0 {
            return Ok(());
        }
        let n = (self.budget().saturating_sub(recording))
            .min(recording)
            .min(c.concurrency * 2);
        if n == 0 {
            return Ok(());
        }
        let w = c.worker.clone();
        let work = blocking(&mut self.store, move |s| s.checkout(&w, n, store::LEASE))
            .instrument(debug_span!("loop.top_up"))
            .await?;
        for w in work {
            self.workers.dispatch(w);
        }
        self.in_flight = self.workers.in_flight();
        Ok(())
    }

    /// What follows a record, in line: the counters, the events and the fetch log, and the
    /// apprentice, the judge, the background and the distiller catching up.
    async fn recorded(&mut self, rec: store::Recorded) -> Result<(), CrawlError> {
        let fetched = self.tally(&rec);
        if let Some(r) = self.deferred.take() {
            self.act(r).instrument(debug_span!("loop.act")).await?;
        }
        (self.retrain(&rec, fetched))
            .instrument(debug_span!("loop.retrain"))
            .await?;
        self.after_retrain(&rec, fetched).await
    }

    /// What follows a record that landed in [`Self::flush`] (#27: the chain record -> retrain
    /// -> top-up -> next record was serial, and the writer idle between two records): what
    /// needs the store first (the last retrain point's re-score and exploration, the re-score
    /// beside the loop, the judge, the background, the distiller's graph), then the next record
    /// starts, and the apprentice learns this one while the writer records; what its retrain
    /// point asks of the store waits for that record to land.
    async fn caught_up(&mut self, rec: store::Recorded) -> Result<(), CrawlError> {
        let fetched = self.tally(&rec);
        if let Some(r) = self.deferred.take() {
            self.act(r).instrument(debug_span!("loop.act")).await?;
        }
        (self.rescore_beside())
            .instrument(debug_span!("loop.rescore"))
            .await?;
        self.after_retrain(&rec, fetched).await?;
        let next = self.start_record().await?;
        let step = self.learn(&rec, fetched);
        match (step, &next) {
            (Some(r), Some(_)) => self.deferred = Some(r),
            (Some(r), None) => {
                self.act(r).instrument(debug_span!("loop.act")).await?;
                self.rescore_beside().await?;
            }
            (None, _) => {}
        }
        if let (Some(l), Some(batch)) = (self.learning.as_mut(), next) {
            l.scored(&batch, self.config.mode);
        }
        Ok(())
    }

    /// The counters and the events of a record; returns its pages fetched.
    fn tally(&mut self, rec: &store::Recorded) -> u64 {
        let fetched = rec.fetched.len() as u64;
        self.progress.fetched += fetched;
        if self.config.shared.is_some() {
            // The fetch sequence is the crawl's: a page's number counts every page numbered
            // before it, by any worker (the page budget, before the next read: see `checkout`).
            let last = rec.fetched.iter().map(|p| p.seq).max().unwrap_or(0);
            self.crawl_fetched = self.crawl_fetched.max(u64::try_from(last).unwrap_or(0));
        }
        self.progress.revisits += rec.revisited as u64;
        self.progress.changed += rec.changed as u64;
        if !rec.fetched.is_empty() {
            self.tell(|| CrawlEvent::Pages(rec.fetched.clone()));
        }
        fetched
    }

    /// After the apprentice's catch-up: the judge, the background, the distiller and the
    /// fetch log.
    async fn after_retrain(
        &mut self,
        rec: &store::Recorded,
        fetched: u64,
    ) -> Result<(), CrawlError> {
        self.rejudge()
            .instrument(debug_span!("loop.rejudge"))
            .await?;
        (self.learn_background())
            .instrument(debug_span!("loop.background"))
            .await?;
        self.distill(fetched).await?;
        if let Some(l) = self.log.as_mut() {
            for p in &rec.fetched {
                let _ = writeln!(l, "{}", p.url);
            }
            let _ = l.flush();
        }
        self.frontier_dry = false;
        self.last_flush = Instant::now();
        Ok(())
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
