//! The apprentice during a crawl (accelerated-focused-crawling-2002 §3): it learns from every
//! link whose both ends are fetched, and at its retrain points decides, by its setting
//! ([`Guide`]) and the critic ([`Critic`]), whether the frontier is ordered by its priorities.
//! Synchronous: the crawl loop hands it what was recorded and carries out what it decides
//! (publishing a snapshot to the fetch workers and re-scoring the frontier).

use super::policy::critic::{Critic, Guide, Scoreboard};
use super::policy::explore::{self, Ranker};
use super::policy::leads::Leads;
use super::policy::value::Values;
use super::{policy, ApprenticeConfig, Mode};
use crate::store::{fnv64, ApprenticeEvidence, DocStatus, FetchedPage, Outcome, PageId};
use forager_classifier::apprentice::{skill, Apprentice};
use std::collections::HashMap;
use std::sync::Arc;

/// Most held-out predictions the apprentice's trust is measured on between retrains (bounds
/// its memory).
const TRUST_WINDOW: usize = 20_000;

/// What the crawl loop does after a retrain point.
#[derive(Debug)]
pub(super) enum Step {
    /// Give the workers this apprentice and re-score the frontier with it: it guides.
    Guide(Arc<Apprentice>),
    /// The apprentice stops guiding: the workers get none and the frontier goes back to soft
    /// focus's scores (the apprentice, retrained, still ranks it for the critic's sample).
    Unguide(Arc<Apprentice>),
    /// Soft focus keeps guiding; the retrained apprentice ranks the frontier for the critic's
    /// exploration sample.
    Explore(Arc<Apprentice>),
}

/// The apprentice's state in a crawl.
pub(super) struct Learning {
    guide: Guide,
    retrain_every: u64,
    warmup: u64,
    /// The learning apprentice; the workers read the snapshots published while it guides.
    learner: Apprentice,
    /// Whether the published apprentice guides the crawl.
    guiding: bool,
    /// Retrain points passed (the first comes at the end of the warm-up).
    checks: u64,
    /// (the learner's prediction, outcome) of instances before it learned them, since the
    /// last retrain: its trust.
    heldout: Vec<(f64, bool)>,
    since_retrain: u64,
    critic: Critic,
    board: Scoreboard,
    /// The frontier's candidates for the critic's exploration sample.
    leads: Leads,
    /// The frontier URLs only one ranker would fetch in this period ([`explore::plan`]).
    picks: HashMap<PageId, Ranker>,
    /// Explored picks to raise again once the re-score beside the loop lands.
    raise_later: Vec<(PageId, f64)>,
    /// The fetched picks being valued by what they lead to.
    values: Values,
    /// Pages the crawl had fetched at the last record.
    total: u64,
}

/// The critic's exploration for the next period, by URL: the store gives their rows' ids.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Exploration {
    /// The URLs only one ranker would fetch.
    pub(super) picks: Vec<Pick>,
}

/// A URL only one ranker would fetch in the next period.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Pick {
    hash: u64,
    /// The URL.
    pub(super) url: String,
    /// The ranker that picks it.
    pub(super) ranker: Ranker,
    /// The score that raises it to the head of the frontier, when it is explored.
    pub(super) raise: Option<f64>,
}

impl Learning {
    /// The apprentice of a crawl under `cfg`, starting from `learner` (offline-trained, reused
    /// or resumed). Unless it only learns, a trained one guides from the first page.
    pub(super) fn new(cfg: &ApprenticeConfig, learner: Apprentice) -> Self {
        let critic = if learner.is_trained() {
            Critic::wary()
        } else {
            Critic::new()
        };
        Learning {
            guide: cfg.guide,
            retrain_every: cfg.retrain_every.max(1),
            warmup: cfg.warmup,
            // A trained apprentice is the workers' from the first page ([`Critic::wary`]).
            guiding: cfg.guide != Guide::Never && learner.is_trained(),
            learner,
            checks: 0,
            heldout: Vec::new(),
            since_retrain: 0,
            critic,
            board: Scoreboard::new(),
            leads: Leads::new(),
            picks: HashMap::new(),
            raise_later: Vec::new(),
            values: Values::new(cfg.retrain_every.max(1)),
            total: 0,
        }
    }

    /// Whether the apprentice guides the crawl now.
    pub(super) fn guiding(&self) -> bool {
        self.guiding
    }

    /// Instances learned, [low, high].
    pub(super) fn instances(&self) -> [u64; 2] {
        self.learner.instances()
    }

    /// Before a batch is recorded: the links its fetched pages found, scored by soft focus and
    /// by the apprentice as it is now, go on the critic's board (soft and hard focus, when the
    /// critic decides).
    pub(super) fn scored(&mut self, batch: &[Outcome], mode: Mode) {
        let critic_on = self.guide == Guide::WhenBetter && matches!(mode, Mode::Soft | Mode::Hard);
        if !critic_on {
            return;
        }
        let trained = self.learner.is_trained();
        for o in batch {
            if o.status != DocStatus::Fetched || o.revisit {
                continue;
            }
            if let Some(r) = self.picks.remove(&o.oid) {
                let children = o.links.iter().map(|l| fnv64(&l.url)).collect();
                (self.values).picked(r, policy::high(o.relevance), children, self.total);
            }
            for l in &o.links {
                let Some(f) = &l.features else { continue };
                let base = policy::Inherited {
                    relevance: o.relevance,
                    weight: l.weight,
                };
                let hash = fnv64(&l.url);
                if !trained {
                    // Kept until the first retrain scores it.
                    self.leads.offer(hash, &l.url, f, base, f64::INFINITY);
                    continue;
                }
                let apprentice = policy::guided(&self.learner, f, base);
                self.board.offer(hash, base.soft(), apprentice);
                self.leads.offer(hash, &l.url, f, base, apprentice);
            }
        }
    }

    /// After a batch was recorded (`fetched` pages new, `total` fetched in the crawl): the
    /// critic sees the pages fetched, the apprentice learns the new instances, and at a retrain
    /// point it says what the loop must do.
    pub(super) fn learn(
        &mut self,
        instances: &[ApprenticeEvidence],
        pages: &[FetchedPage],
        fetched: u64,
        total: u64,
    ) -> Option<Step> {
        for p in pages {
            let hash = fnv64(&p.url);
            self.leads.fetched(hash);
            self.values.fetched(hash, policy::high(p.relevance));
            if let Some(pair) = self.board.fetched(hash, policy::high(p.relevance)) {
                self.critic.observe(pair);
            }
        }
        self.total = total;
        for (r, value) in self.values.closed(total) {
            self.critic.observe_pick(r, value);
        }
        // The learner predicts each new instance before learning it: its trust.
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
        match self.guide {
            Guide::Never => None,
            Guide::Always => self.always(total),
            Guide::WhenBetter => self.when_better(total),
        }
    }

    /// Guiding always: at the end of the warm-up, then every `retrain_every` pages, the
    /// apprentice is published with its trust.
    fn always(&mut self, total: u64) -> Option<Step> {
        let warm = self.guiding || total >= self.warmup;
        let due = !self.guiding || self.since_retrain >= self.retrain_every;
        if !(warm && due && self.learner.is_trained()) {
            return None;
        }
        self.guiding = true;
        Some(Step::Guide(self.retrained()))
    }

    /// Guiding when it helps: at the end of the warm-up, then every `retrain_every` pages, the
    /// critic decides; the apprentice is published while it guides, withdrawn when it stops.
    fn when_better(&mut self, total: u64) -> Option<Step> {
        let due =
            total >= self.warmup && (self.checks == 0 || self.since_retrain >= self.retrain_every);
        if !due {
            return None;
        }
        self.checks += 1;
        let snapshot = self.retrained();
        let was = self.guiding;
        self.guiding = self.learner.is_trained() && self.critic.decide();
        tracing::debug!(
            pages = total,
            guiding = self.guiding,
            critic = ?self.critic.last(),
            duel = ?self.critic.contest(),
            "the apprentice's critic decided"
        );
        match (was, self.guiding) {
            // A reused apprentice the critic has no evidence on yet (too few relevant or
            // irrelevant pages): the workers keep the one they have, the frontier its scores.
            (true, true) if self.critic.last().is_none() => None,
            (_, true) => Some(Step::Guide(snapshot)),
            (true, false) => Some(Step::Unguide(snapshot)),
            (false, false) => snapshot.is_trained().then_some(Step::Explore(snapshot)),
        }
    }

    /// Whether the critic ranks the frontier both ways at each retrain (its exploration
    /// sample): while it decides whether the apprentice guides.
    pub(super) fn explores(&self) -> bool {
        self.guide == Guide::WhenBetter
    }

    /// The frontier's candidates scored again by `score` (the retrained apprentice's priority),
    /// before the critic's exploration is planned.
    pub(super) fn rank(&mut self, score: impl Fn(&[u32], policy::Inherited) -> f64) {
        self.leads.rescore(score);
    }

    /// The critic's exploration for the next period ([`explore::plan`] over the frontier's
    /// candidates as last ranked).
    pub(super) fn plan(&self) -> Exploration {
        let guide = if self.guiding {
            Ranker::Apprentice
        } else {
            Ranker::Soft
        };
        let horizon = usize::try_from(self.retrain_every).unwrap_or(usize::MAX);
        let plan = explore::plan(&self.leads.ranked(), guide, horizon, explore::SHARE);
        let picks = (plan.picks.iter())
            .map(|&(hash, ranker)| Pick {
                hash,
                url: self.leads.url(hash).unwrap_or_default().to_owned(),
                ranker,
                raise: (plan.raise.iter()).find(|r| r.0 == hash).map(|r| r.1),
            })
            .collect();
        Exploration { picks }
    }

    /// What the store found of `plan`'s picks (their row ids, by position): when each is in
    /// the frontier (or `last`), the picks of this period are set, each to score for its
    /// ranker when it is fetched, and the scores that raise the explored ones are returned.
    /// Otherwise the candidates no longer in the frontier (fetched, given up, in flight) are
    /// dropped and `None` says to plan again.
    pub(super) fn found(
        &mut self,
        plan: &Exploration,
        ids: &[Option<PageId>],
        last: bool,
    ) -> Option<Vec<(PageId, f64)>> {
        let both = || plan.picks.iter().zip(ids);
        let gone: Vec<u64> = (both().filter(|(_, id)| id.is_none()))
            .map(|(p, _)| p.hash)
            .collect();
        if !gone.is_empty() && !last {
            for h in gone {
                self.leads.fetched(h);
            }
            return None;
        }
        self.picks = (both().filter_map(|(p, id)| Some(((*id)?, p.ranker)))).collect();
        Some(
            both()
                .filter_map(|(p, id)| Some(((*id)?, p.raise?)))
                .collect(),
        )
    }

    /// Explored picks to raise again when the re-score beside the loop lands (it would
    /// write the apprentice's scores over them).
    pub(super) fn raise_later(&mut self, raise: Vec<(PageId, f64)>) {
        self.raise_later = raise;
    }

    /// The explored picks to raise again now that a re-score beside the loop landed.
    pub(super) fn raised_later(&mut self) -> Vec<(PageId, f64)> {
        std::mem::take(&mut self.raise_later)
    }

    /// A retrain: the trust measured on the held-out predictions since the last one, and a
    /// snapshot of the apprentice.
    fn retrained(&mut self) -> Arc<Apprentice> {
        self.since_retrain = 0;
        if let Some(s) = skill(std::mem::take(&mut self.heldout)) {
            self.learner.set_trust(s);
        }
        Arc::new(self.learner.clone())
    }

    /// The critic's last comparison: (the apprentice's AUC, soft focus's) on recent pages.
    pub(super) fn critic(&self) -> Option<(f64, f64)> {
        self.critic.last().map(|c| (c.apprentice, c.soft))
    }

    /// What the crawl's apprentice learned, with its latest trust (measured now if it never
    /// was).
    pub(super) fn into_learned(mut self) -> Apprentice {
        if self.learner.measured_trust().is_none() {
            if let Some(s) = skill(std::mem::take(&mut self.heldout)) {
                self.learner.set_trust(s);
            }
        }
        self.learner
    }
}

#[cfg(test)]
#[path = "apprentice_tests.rs"]
mod tests;
