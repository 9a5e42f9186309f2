//! The watchdog's reports (focused-crawling-1999 §4.3): counters, rates and the monitor's
//! alarms about every `progress_every`, and the final ones when the crawl ends.

use super::super::{blocking, CrawlError, CrawlEvent, Mode, Progress, StopReason};
use super::Watchdog;
use crate::monitor;
use crate::store::CrawlDb;
use std::sync::Arc;
use std::time::Instant;

impl<S: CrawlDb> Watchdog<S> {
    /// Counters, rates and alarms for `on_progress`, about every `progress_every`.
    pub(in crate::crawl) async fn report(
        &mut self,
        on_progress: &mut impl FnMut(&Progress),
    ) -> Result<(), CrawlError> {
        if self.last_report.elapsed() < self.config.progress_every {
            return Ok(());
        }
        self.land().await?;
        self.snapshot(self.in_flight).await?;
        let p = &mut self.progress;
        p.hosts_waiting = self.workers.hosts_waiting();
        p.parked = self.workers.parked();
        p.elapsed = self.started.elapsed().as_secs_f64();
        // Waiting with only parked work is not crawling: the rate leaves it out.
        let crawling = p.elapsed - p.idle_secs;
        p.pages_per_sec = (p.fetched - self.fetched_at_start) as f64 / crawling.max(1e-3);
        p.recent_relevance = self.history.recent_mean(100);
        on_progress(&self.progress);
        self.last_report = Instant::now();
        Ok(())
    }

    /// The counters read from the store and the workers, and the monitor's alarms.
    async fn snapshot(&mut self, in_flight: usize) -> Result<(), CrawlError> {
        self.progress.frontier = blocking(&mut self.store, |s| s.frontier_len()).await?;
        self.progress.given_up = blocking(&mut self.store, |s| s.given_up()).await? as u64;
        self.progress.in_flight = in_flight;
        self.progress.paused = self.workers.alarm();
        self.progress.deferred = self.workers.deferred.clone();
        (self.progress.failing, self.progress.failing_hosts) = self.workers.failing();
        self.progress.waiting = self.workers.waiting();
        self.progress.idle_secs = self.idle.secs();
        self.progress.alarms = monitor::alarms_in(
            &self.history,
            self.progress.frontier,
            self.config.mode == Mode::Hard,
            &Default::default(),
        );
        Ok(())
    }

    /// Ends the crawl: the last distillation, the final counters, and the archive complete
    /// before the crawl says it has stopped.
    pub(in crate::crawl) async fn finish(
        mut self,
        reason: StopReason,
    ) -> Result<(StopReason, Progress), CrawlError> {
        self.land().await?;
        if let Some(h) = self.distilling.take() {
            let _ = h.await;
        }
        if self.config.distill_every.is_some() {
            blocking(&mut self.store, |s| {
                let (edges, rel) = s.graph()?;
                s.save_distillation(&crate::distiller::distill(
                    &edges,
                    &rel,
                    &Default::default(),
                ))
            })
            .await?;
            self.progress.distillations += 1;
            self.tell(|| CrawlEvent::Distilled);
        }
        let slots = super::super::worker::slots_to_wall(&self.sh);
        blocking(&mut self.store, move |s| s.save_host_slots(&slots)).await?;
        // Its hosts go back to the crawl for other workers.
        let w = self.config.worker.clone();
        blocking(&mut self.store, move |s| {
            s.release_hosts(&w, &s.held_hosts(&w)?)
        })
        .await?;
        self.snapshot(0).await?;
        if let Some(l) = self.learning.take() {
            // Its latest trust goes with the apprentice (measured now if it never was).
            let learned = Arc::new(l.into_learned());
            self.progress.learned = Some(crate::reuse::Learned(learned));
        }
        self.progress.elapsed = self.started.elapsed().as_secs_f64();
        self.progress.waiting = None;
        drop(
            self.sh
                .warc
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take(),
        );
        if let Some(t) = self.warc_task {
            t.await
                .map_err(|e| CrawlError::Archive(e.to_string()))?
                .map_err(|e| CrawlError::Archive(e.to_string()))?;
        }
        Ok((reason, self.progress))
    }
}
