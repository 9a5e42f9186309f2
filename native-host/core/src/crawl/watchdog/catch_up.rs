//! What follows a record (focused-crawling-1999 §4, accelerated-focused-crawling-2002 §3):
//! the apprentice learns and, with the critic's trust, is published and the frontier
//! re-scored; the judge takes the user's marks; the background is learned again; and the
//! distiller runs on the crawl graph.

use super::super::apprentice::{Exploration, Learning, Step};
use super::super::policy::guided;
use super::super::{apply_distillation, blocking, rescore, CrawlError, CrawlEvent, Mode};
use super::Watchdog;
use crate::store::{self, CrawlDb};
use forager_classifier::apprentice::Apprentice;
use std::sync::Arc;
use tracing::{debug, debug_span, Instrument};

/// Most times the critic's exploration is planned at one retrain point, dropping the
/// candidates the store no longer has in its frontier each time.
const PLAN_ROUNDS: usize = 3;

/// What a retrain point asks of the crawl beyond publishing the apprentice: the frontier
/// re-scored, the critic's exploration planned ([`Watchdog::act`]; it needs the store).
pub(super) struct Retrain {
    /// The retrained apprentice (it ranks the frontier).
    ranker: Arc<Apprentice>,
    /// Whether a new apprentice was published to the workers (guiding, or withdrawn).
    published: bool,
    /// Whether it guides now.
    guides: bool,
    /// The critic's exploration sample planned (its first round), when the critic explores.
    plan: Option<Exploration>,
}

impl<S: CrawlDb> Watchdog<S> {
    /// The apprentice learns what was recorded; at its retrain points it is published and the
    /// frontier re-scored with it while it guides (beside the loop, or in line when the crawl
    /// is deterministic or the apprentice starts guiding: [`rescore::Beside`]), and withdrawn
    /// (the frontier back to soft focus's scores) when the critic stops it; under the critic,
    /// its exploration sample is then raised ([`Self::explore`]).
    pub(super) async fn retrain(
        &mut self,
        rec: &store::Recorded,
        fetched: u64,
    ) -> Result<(), CrawlError> {
        if let Some(r) = self.learn(rec, fetched) {
            self.act(r).await?;
        }
        self.rescore_beside().await
    }

    /// The part of [`Self::retrain`] without the store (the loop runs it while the writer
    /// records the next batch, #27): the apprentice learns the record and, at a retrain
    /// point, is published to the workers; what the store must do follows in the answer.
    pub(super) fn learn(&mut self, rec: &store::Recorded, fetched: u64) -> Option<Retrain> {
        let _learn = debug_span!("loop.learn").entered();
        let l = self.learning.as_mut()?;
        let step = l.learn(&rec.instances, &rec.fetched, fetched, self.progress.fetched);
        self.progress.apprentice_instances = l.instances();
        self.progress.apprentice_guides = l.guiding();
        self.progress.critic_auc = l.critic();
        let explores = l.explores() && matches!(self.config.mode, Mode::Soft | Mode::Hard);
        let (ranker, published, guides) = match step? {
            Step::Guide(a) => (a.clone(), Some(a), true),
            Step::Unguide(a) => (a, Some(Arc::new(Apprentice::default())), false),
            Step::Explore(a) => (a, None, false),
        };
        if let Some(p) = published.clone() {
            *(self.sh.apprentice.write()).unwrap_or_else(|p| p.into_inner()) = p;
        }
        // The critic's candidates ranked by the retrained apprentice, and its exploration
        // planned from them (found in the frontier when the store is at hand:
        // [`Self::explore`]).
        let plan = explores.then(|| {
            let l = self.learning.as_mut()?;
            l.rank(|f, base| guided(&ranker, f, base));
            Some(l.plan())
        });
        Some(Retrain {
            ranker,
            published: published.is_some(),
            guides,
            plan: plan.flatten(),
        })
    }

    /// What a retrain point asks of the store: the frontier re-scored by the apprentice now
    /// guiding (or back to soft focus's scores when it stopped), and the critic's exploration.
    pub(super) async fn act(&mut self, r: Retrain) -> Result<(), CrawlError> {
        let Retrain {
            ranker,
            published,
            guides,
            plan,
        } = r;
        let beside = guides && !self.config.deterministic && self.rescoring.guided();
        if matches!(self.config.mode, Mode::Soft | Mode::Hard) {
            let mode = self.config.mode;
            if beside {
                self.rescoring.ask(ranker.clone());
            } else if published {
                self.rescoring.cancel(guides);
                let a = ranker.clone();
                blocking(&mut self.store, move |s| {
                    if guides {
                        rescore::by_apprentice(s, |f, base| guided(&a, f, base))
                    } else {
                        rescore::by_soft_focus(s, mode)
                    }
                })
                .await?;
            }
            if let Some(plan) = plan {
                self.explore(plan, beside).await?;
            }
        }
        self.progress.apprentice_retrains += u64::from(guides);
        Ok(())
    }

    /// The critic's exploration sample for the next period ([`Learning::plan`]), ranked by
    /// soft focus and by the retrained apprentice (`first` planned in [`Self::learn`]): its
    /// picks are found in the frontier (candidates no longer there are dropped and the plan
    /// made again, up to [`PLAN_ROUNDS`] times) and the explored ones raised to its head, now
    /// and again when a re-score `beside` the loop lands (it would write over them).
    async fn explore(&mut self, first: Exploration, beside: bool) -> Result<(), CrawlError> {
        let mut next = Some(first);
        for round in 1..=PLAN_ROUNDS {
            let Some(plan) = next
                .take()
                .or_else(|| self.learning.as_ref().map(Learning::plan))
            else {
                return Ok(());
            };
            let urls: Vec<String> = plan.picks.iter().map(|p| p.url.clone()).collect();
            let ids = blocking(&mut self.store, move |s| s.frontier_ids(&urls)).await?;
            let Some(l) = self.learning.as_mut() else {
                return Ok(());
            };
            if let Some(raise) = l.found(&plan, &ids, round == PLAN_ROUNDS) {
                if beside {
                    l.raise_later(raise.clone());
                }
                blocking(&mut self.store, move |s| s.set_frontier_scores(&raise)).await?;
                break;
            }
        }
        Ok(())
    }

    /// The re-score beside the loop: writes what it has sent, and starts the one asked for.
    pub(super) async fn rescore_beside(&mut self) -> Result<(), CrawlError> {
        if let Some(done) = self.rescoring.step(&mut self.store).await? {
            let raise = (self.learning.as_mut()).map_or(Vec::new(), Learning::raised_later);
            if !raise.is_empty() {
                blocking(&mut self.store, move |s| s.set_frontier_scores(&raise)).await?;
            }
            debug!(
                scored = done.scored,
                changed = done.changed,
                written = done.written,
                "frontier re-scored beside the loop"
            );
        }
        Ok(())
    }

    /// Whether the apprentice orders the frontier now (re-judges then leave it alone).
    fn apprentice_guides(&self) -> bool {
        self.learning.as_ref().is_some_and(Learning::guiding)
    }

    /// The user changed the model (a "not relevant" mark): judge everything again with it.
    pub(super) async fn rejudge(&mut self) -> Result<(), CrawlError> {
        let updated = (self.config.judge_updates.as_mut())
            .filter(|rx| rx.has_changed().unwrap_or(false))
            .map(|rx| rx.borrow_and_update().clone());
        if let Some(j) = updated {
            *self.sh.judge.write().unwrap_or_else(|p| p.into_inner()) = j.clone();
            let (mode, frontier) = (self.config.mode, !self.apprentice_guides());
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
        let frontier = !self.apprentice_guides();
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
    pub(super) async fn distill(&mut self) -> Result<(), CrawlError> {
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
