//! The watchdog's `flush` (crawling-the-web-2004 §2.6): outcomes to the crawl database, and
//! the apprentice, the judge, the background and the distiller catching up with what was
//! recorded. A concurrent crawl records beside the loop in a chain ([`Recorder`]): the loop
//! hands its outcomes over as they come and catches up with each record as it lands; it takes
//! the store back only for what needs it (a retrain point's re-score and exploration, the
//! lease, the re-score beside the loop, the judge, the background, the distiller's graph).
//! A deterministic crawl records each wave in line, so that every run sees the same frontier.
//!
//! [`Recorder`]: super::super::recorder::Recorder

use super::super::recorder::BATCH;
use super::super::{blocking, CrawlError, CrawlEvent, MAX_PARKED};
use super::Watchdog;
use crate::store::{self, CrawlDb};
use std::io::Write;
use std::time::{Duration, Instant};
use tracing::{debug_span, Instrument};

impl<S: CrawlDb> Watchdog<S> {
    /// Records the pending outcomes when enough have gathered, and catches up with what was
    /// recorded: beside the loop, one record a job (concurrent crawls), or a whole wave
    /// in line (deterministic ones).
    pub(in crate::crawl) async fn flush(&mut self) -> Result<(), CrawlError> {
        if self.config.deterministic {
            return self.record_in_line().await;
        }
        self.absorb()?;
        if self.recorder.away() && !self.recorder.done() {
            if !self.needs_store() {
                self.hand_over().await;
            }
            return Ok(());
        }
        (self.land()).instrument(debug_span!("loop.land")).await?;
        self.start_chain().await
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
        let fetched = self.tally(&rec);
        self.since_distill += fetched;
        (self.retrain(&rec, fetched))
            .instrument(debug_span!("loop.retrain"))
            .await?;
        self.with_store().await?;
        self.log_pages(&rec);
        Ok(())
    }

    /// Whether the loop needs the store back from the chain: a retrain point waits for it,
    /// or the chain has run for [`super::super::recorder::CHAIN_SPAN`].
    fn needs_store(&self) -> bool {
        !self.deferred.is_empty() || self.recorder.overdue()
    }

    /// Hands the pending outcomes to the chain under way, asking for as many URLs again for
    /// the workers before its next record.
    async fn hand_over(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let batch = self.ready_batch().await;
        let want = self.top_up(batch.len());
        let cap = self.config.concurrency * 2;
        self.recorder.hand(batch, want, cap);
    }

    /// The pending outcomes, counted, archived and put on the critic's board: a batch to
    /// hand to the writer.
    async fn ready_batch(&mut self) -> Vec<store::Outcome> {
        let batch = std::mem::take(&mut self.pending);
        self.count(&batch);
        self.archive_barrier().await;
        // The critic's board reads the batch before the writer has it (#27: it was ~3% of
        // the crawler's CPU on the loop, in line before every record).
        if let Some(l) = self.learning.as_mut() {
            l.scored(&batch, self.config.mode);
        }
        batch
    }

    /// With the store at home: when enough outcomes have gathered (or no fetch is out, or
    /// 200 ms passed), a chain of records starts with them beside the loop.
    async fn start_chain(&mut self) -> Result<(), CrawlError> {
        let waiting = self.pending.len() + self.recorder.queued();
        let due = waiting >= BATCH
            || self.in_flight == 0
            || self.last_flush.elapsed() > Duration::from_millis(200);
        if waiting == 0 || !due {
            return Ok(());
        }
        let batch = self.ready_batch().await;
        let want = self.top_up(waiting);
        let store = (self.store.take()).ok_or_else(|| {
            CrawlError::Task("the crawl database was lost by an earlier one".into())
        })?;
        self.recorder.start(store, batch, want);
        Ok(())
    }

    /// Waits until the WARC archive has written what was fetched so far.
    async fn archive_barrier(&mut self) {
        let archive = (self.sh.warc.lock())
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        super::setup::archive_barrier(archive).await;
    }

    /// Takes back the store from the chain of records, if any, and catches up with it.
    pub(in crate::crawl) async fn land(&mut self) -> Result<(), CrawlError> {
        let Some(store) = self.recorder.land().await else {
            return Ok(());
        };
        self.store = Some(store?);
        self.absorb()?;
        self.with_store().await
    }

    /// As many URLs again as are being recorded are checked out for the workers before the
    /// record (at most the checkout's look-ahead, twice the workers' number), so they keep
    /// fetching meanwhile. (#27: with at most the workers' number, they ran dry before the
    /// record landed: the FOLDOC crawl bench's soft crawl went 17-20% faster with twice, at
    /// the same CPU per page; `benches/floor.rs`.) `None` when no more is to be checked out.
    fn top_up(&self, recording: usize) -> Option<(String, usize)> {
        let c = &self.config;
        let hold = self.workers.crawler_waiting() || self.workers.parked() >= MAX_PARKED;
        if self.reason.is_some() || hold || self.frontier_dry || c.revisit_share > 0.0 {
            return None;
        }
        let n = (self.budget().saturating_sub(recording))
            .min(recording)
            .min(c.concurrency * 2);
        (n > 0).then(|| (c.worker.clone(), n))
    }

    /// What came back from the writer: the work it checked out goes to the workers; each
    /// record landed is counted and logged, and the apprentice learns it (what its retrain
    /// point asks of the store waits until the loop has the store: [`Self::with_store`]).
    fn absorb(&mut self) -> Result<(), CrawlError> {
        for work in self.recorder.take_ahead() {
            let _dispatch = debug_span!("loop.dispatch").entered();
            for w in work? {
                self.workers.dispatch(w);
            }
        }
        self.in_flight = self.workers.in_flight();
        for rec in self.recorder.take_landed() {
            let rec = rec?;
            let fetched = self.tally(&rec);
            self.since_distill += fetched;
            if let Some(r) = self.learn(&rec, fetched) {
                self.deferred.push(r);
            }
            self.log_pages(&rec);
        }
        Ok(())
    }

    /// What needs the store after records: the lease, what the retrain points since asked
    /// of it, the re-score beside the loop, the judge, the background and the distiller.
    async fn with_store(&mut self) -> Result<(), CrawlError> {
        if !self.config.deterministic {
            self.renew_lease().await?;
        }
        for r in std::mem::take(&mut self.deferred) {
            self.act(r).instrument(debug_span!("loop.act")).await?;
        }
        (self.rescore_beside())
            .instrument(debug_span!("loop.rescore"))
            .await?;
        self.rejudge()
            .instrument(debug_span!("loop.rejudge"))
            .await?;
        (self.learn_background())
            .instrument(debug_span!("loop.background"))
            .await?;
        self.distill().await
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
        self.frontier_dry = false;
        self.last_flush = Instant::now();
        fetched
    }

    /// The record's fetched pages to the fetch log.
    fn log_pages(&mut self, rec: &store::Recorded) {
        if let Some(l) = self.log.as_mut() {
            for p in &rec.fetched {
                let _ = writeln!(l, "{}", p.url);
            }
            let _ = l.flush();
        }
    }
}
