//! What follows a record (focused-crawling-1999 §4, accelerated-focused-crawling-2002 §3):
//! the apprentice learns and, with the critic's trust, is published and the frontier
//! re-scored; the judge takes the user's marks; the background is learned again; and the
//! distiller runs on the crawl graph.

use super::super::{apply_distillation, blocking, policy, rescore, CrawlError, CrawlEvent, Mode};
use super::Watchdog;
use crate::store::{self, CrawlDb};
use std::sync::Arc;
use tracing::{debug_span, Instrument};

/// Most held-out predictions the critic keeps between retrains (bounds its memory).
const TRUST_WINDOW: usize = 20_000;

impl<S: CrawlDb> Watchdog<S> {
    /// The apprentice learns the new instances; at the end of its warm-up, then every
    /// `retrain_every` pages, it is published and the frontier re-scored with it.
    pub(super) async fn retrain(
        &mut self,
        instances: &[store::ApprenticeEvidence],
        fetched: u64,
    ) -> Result<(), CrawlError> {
        let Some(cfg) = &self.config.apprentice else {
            return Ok(());
        };
        // The critic: the learner predicts each new instance before learning it, and its
        // skill on those since the last retrain is the trust the next snapshot gets.
        if self.learner.is_trained() {
            let room = TRUST_WINDOW.saturating_sub(self.heldout.len());
            (self.heldout).extend(
                instances
                    .iter()
                    .take(room)
                    .map(|(f, r)| (self.learner.p_high(f), policy::high(*r))),
            );
        }
        for (f, r) in instances {
            self.learner.add(f, policy::high(*r));
        }
        self.since_retrain += fetched;
        let warm = self.guiding || self.progress.fetched >= cfg.warmup;
        let due = !self.guiding || self.since_retrain >= cfg.retrain_every;
        if warm && due && self.learner.is_trained() {
            self.since_retrain = 0;
            self.guiding = true;
            if let Some(skill) =
                forager_classifier::apprentice::skill(std::mem::take(&mut self.heldout))
            {
                self.learner.set_trust(skill);
            }
            let snapshot = Arc::new(self.learner.clone());
            *self
                .sh
                .apprentice
                .write()
                .unwrap_or_else(|p| p.into_inner()) = snapshot.clone();
            if matches!(self.config.mode, Mode::Soft | Mode::Hard) {
                blocking(&mut self.store, move |s| {
                    rescore::by_apprentice(s, |f, base| snapshot.blend(f, base))
                })
                .await?;
            }
            self.progress.apprentice_retrains += 1;
        }
        self.progress.apprentice_instances = self.learner.instances();
        Ok(())
    }

    /// The user changed the model (a "not relevant" mark): judge everything again with it.
    pub(super) async fn rejudge(&mut self) -> Result<(), CrawlError> {
        let updated = (self.config.judge_updates.as_mut())
            .filter(|rx| rx.has_changed().unwrap_or(false))
            .map(|rx| rx.borrow_and_update().clone());
        if let Some(j) = updated {
            *self.sh.judge.write().unwrap_or_else(|p| p.into_inner()) = j.clone();
            let (mode, frontier) = (self.config.mode, !self.guiding);
            blocking(&mut self.store, move |s| {
                rescore::rejudge(s, &j, mode, frontier)
            })
            .await?;
            self.progress.rejudged += 1;
        }
        Ok(())
    }

    /// Open-world crawls learn their background again at each doubling of the fetched pages.
    pub(super) async fn learn_background(&mut self) -> Result<(), CrawlError> {
        if !self.open_world.due(self.progress.fetched) {
            return Ok(());
        }
        let frontier = !self.guiding;
        let marked = (self.sh.judge.read().unwrap_or_else(|p| p.into_inner()))
            .not_relevant
            .clone();
        let (judge, report) = (self.open_world)
            .learn(&mut self.store, marked, frontier)
            .await?;
        *self.sh.judge.write().unwrap_or_else(|p| p.into_inner()) = judge;
        self.progress.background_rounds += 1;
        self.progress.background_pages = report.background;
        Ok(())
    }

    /// Every `distill_every` pages the distiller runs on the crawl graph: beside the crawl,
    /// or inline when the order must be reproducible.
    pub(super) async fn distill(&mut self, fetched: u64) -> Result<(), CrawlError> {
        self.since_distill += fetched;
        let due = (self.config.distill_every).is_some_and(|n| self.since_distill >= n);
        if !due || self.distilling.is_some() {
            return Ok(());
        }
        // The graph is read under the store, HITS runs beside the crawl.
        self.since_distill = 0;
        let (edges, rel) = blocking(&mut self.store, |s| s.graph())
            .instrument(debug_span!("loop.graph"))
            .await?;
        let job = tokio::task::spawn_blocking(move || {
            crate::distiller::distill(&edges, &rel, &Default::default())
        });
        if self.config.deterministic {
            // Inline, so that the feedback lands at the same point of every run.
            if let Ok(scores) = job.await {
                apply_distillation(&mut self.store, scores, self.config.hub_feedback).await?;
                self.progress.distillations += 1;
                self.tell(|| CrawlEvent::Distilled);
            }
        } else {
            self.distilling = Some(job);
        }
        Ok(())
    }

    /// Applies a distillation that finished beside the crawl.
    pub(in crate::crawl) async fn reap_distillation(&mut self) -> Result<(), CrawlError> {
        if !self.distilling.as_ref().is_some_and(|h| h.is_finished()) {
            return Ok(());
        }
        self.land().await?;
        if let Some(Ok(scores)) = match self.distilling.take() {
            Some(h) => Some(h.await),
            None => None,
        } {
            apply_distillation(&mut self.store, scores, self.config.hub_feedback).await?;
            self.progress.distillations += 1;
            self.tell(|| CrawlEvent::Distilled);
        }
        Ok(())
    }
}
