//! The critic that decides whether the apprentice guides the crawl (accelerated-focused-crawling-2002
//! §3.2; #25: learn always, guide only when it helps). The apprentice learns on every crawl; its
//! priorities order the frontier only while, on the same recently fetched pages, they ranked the
//! relevant ones above the others better than soft focus's did, by more than the noise of that
//! comparison. Pure and synchronous.
//!
//! Each page the crawl fetches is one paired observation: the best score soft focus gave a link
//! into it (R(parent) × the link's weight), the best the apprentice gave one (its blend, what it
//! would order the frontier by), both made before the page was fetched, and whether the page
//! turned out relevant (the critic's label, [`super::high`]). Over a sliding window of such pages
//! the two areas under the ROC curve are compared with DeLong's test for paired AUCs (DeLong,
//! DeLong and Clarke-Pearson, 1988): the apprentice starts guiding when its AUC is above soft
//! focus's by [`Z_ON`] standard errors of the difference, and stops when it is no longer above
//! at all (hysteresis: between the two, the crawl keeps what it does). No threshold is fitted to
//! a web: the margin is the comparison's own noise.
//!
//! Once stopped, the apprentice does not guide again in that crawl (it keeps learning, and the
//! next crawl of these topics starts from it). The comparison is on the pages the guiding
//! policy picked, and among those its own scores are squeezed into the top of their range, so
//! the policy not guiding looks better than it is: after a stop, soft focus's picks flatter the
//! apprentice. Measured: a reused apprentice on FOLDOC networking guided from 200 pages, was
//! stopped at 405 (AUCs .834 and .834), and switched back on at 663 (.921 against .530) while
//! the pages it then picked lowered harvest at 1000 from .456 to .415.
//!
//! That comparison sees only what the guiding ranker chose to fetch. The exploration sample
//! ([`super::explore`]) sees what it leaves behind: a few of each period's fetches are the
//! other ranker's picks, and the two rankers' harvests on the pages where they disagree are
//! compared ([`Duel`]). Once each ranker has [`VETO_PICKS`] valued picks and the apprentice's
//! rank below soft focus's by [`Z_VETO`] standard errors (one-sided 99%, by ranks: the values
//! have a long tail), the apprentice stops (or does not start), whatever the paired comparison
//! says. Session 17's veto (means, 1.645 standard errors, 20 picks) stopped an apprentice as
//! good as soft focus in a quarter of simulated crawls. It only ever vetoes: measured on FOLDOC networking, a reused apprentice whose picks
//! were far more often relevant than soft focus's (.29 against .05) still lowered harvest at
//! 1000 when kept guiding (.409 against soft's .456), because what a pick leads to, not the
//! pick, decides the later harvest, and neither comparison sees that.

use super::explore::{Contest, Duel, Ranker};
use std::collections::{HashMap, VecDeque};

/// Standard errors of the AUC difference by which the apprentice must beat soft focus before it
/// guides (one-sided 95%).
pub const Z_ON: f64 = 1.645;

/// Standard errors by which the apprentice's valued picks must rank below soft focus's before
/// the duel stops it (one-sided 99%): the duel is looked at every retrain point, so the
/// one-sided 95% of [`Z_ON`] would stop an apprentice as good as soft focus in about one crawl
/// in eight (simulated: five looks).
pub const Z_VETO: f64 = 2.326;

/// Fewest valued picks of each ranker before the duel may stop the apprentice: about three
/// retrain periods of the other ranker's explored picks (⌈200 / 16⌉ a period at the default
/// settings), so a handful of lucky seams cannot decide.
pub const VETO_PICKS: usize = 40;

/// Recently fetched pages the critic compares the two on: the last this many with both scores.
pub const WINDOW: usize = 500;

/// Fewest relevant and fewest irrelevant pages in the window before the critic decides (the
/// normal approximation of DeLong's test needs some of each).
pub const MIN_EACH: usize = 20;

/// How the apprentice takes part in a crawl; it learns from every crawl's links in each case.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Guide {
    /// It only learns (for the browser's link scores and the next crawl of these topics).
    Never,
    /// It guides while the critic finds it better than soft focus on recent pages (the default).
    #[default]
    WhenBetter,
    /// It guides from the end of its warm-up on, its priorities blended by its trust.
    Always,
}

/// One fetched page as the critic sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pair {
    /// Soft focus's best score of a link into it.
    pub soft: f64,
    /// The apprentice's best priority of a link into it.
    pub apprentice: f64,
    /// Whether it was relevant (the critic's label).
    pub high: bool,
}

/// The two areas under the ROC curve on one window, and the standard error of their difference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Comparison {
    /// The apprentice's AUC.
    pub apprentice: f64,
    /// Soft focus's AUC.
    pub soft: f64,
    /// DeLong's standard error of `apprentice - soft`.
    pub se: f64,
}

/// Midranks (1-based; tied values share the mean of their ranks).
fn midranks(xs: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut ranks = vec![0.0; xs.len()];
    let mut i = 0;
    while i < order.len() {
        let tied = order[i..]
            .iter()
            .take_while(|&&k| xs[k] == xs[order[i]])
            .count();
        let mid = i as f64 + (tied as f64 + 1.0) / 2.0;
        for &k in &order[i..i + tied] {
            ranks[k] = mid;
        }
        i += tied;
    }
    ranks
}

/// DeLong's structural components of one scorer: per positive, the share of negatives it
/// outranks (ties one half), and per negative, the share of positives that outrank it. Their
/// means are both the AUC.
pub(super) fn components(pos: &[f64], neg: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let (m, n) = (pos.len(), neg.len());
    let all: Vec<f64> = pos.iter().chain(neg).copied().collect();
    let (tz, tx, ty) = (midranks(&all), midranks(pos), midranks(neg));
    let v10 = (0..m).map(|i| (tz[i] - tx[i]) / n as f64).collect();
    let v01 = (0..n)
        .map(|j| 1.0 - (tz[m + j] - ty[j]) / m as f64)
        .collect();
    (v10, v01)
}

/// Mean and sample variance.
pub(super) fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, var)
}

/// The paired comparison of the apprentice's and soft focus's AUCs on `pairs`; `None` with
/// fewer than [`MIN_EACH`] relevant or irrelevant pages.
pub fn compare<'a>(pairs: impl IntoIterator<Item = &'a Pair>) -> Option<Comparison> {
    let (mut pos, mut neg) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
    for p in pairs {
        let side = if p.high { &mut pos } else { &mut neg };
        side[0].push(p.apprentice);
        side[1].push(p.soft);
    }
    if pos[0].len() < MIN_EACH || neg[0].len() < MIN_EACH {
        return None;
    }
    let (a10, a01) = components(&pos[0], &neg[0]);
    let (s10, s01) = components(&pos[1], &neg[1]);
    let d10: Vec<f64> = a10.iter().zip(&s10).map(|(a, s)| a - s).collect();
    let d01: Vec<f64> = a01.iter().zip(&s01).map(|(a, s)| a - s).collect();
    let var = mean_var(&d10).1 / d10.len() as f64 + mean_var(&d01).1 / d01.len() as f64;
    Some(Comparison {
        apprentice: mean_var(&a10).0,
        soft: mean_var(&s10).0,
        se: var.max(0.0).sqrt(),
    })
}

/// The critic's state: the recent pages and whether the apprentice guides now.
#[derive(Clone, Debug, Default)]
pub struct Critic {
    window: VecDeque<Pair>,
    guiding: bool,
    /// It guided and was stopped: it does not guide again.
    stopped: bool,
    last: Option<Comparison>,
    /// The rankers' harvests on the pages where they disagree (the exploration sample).
    duel: Duel,
}

impl Critic {
    /// A critic that has seen nothing; the apprentice does not guide yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A critic of an apprentice trained before the crawl (reused from an earlier crawl of
    /// these topics), which guides from the first page. Its paired comparison is made on links
    /// it may have learned already (measured: a paired AUC of .999 on FOLDOC networking), so
    /// it can only stop it, as can the duel of the two rankers' picks, valued by what they led
    /// to in this crawl; once stopped, it does not guide again.
    pub fn wary() -> Self {
        Critic {
            guiding: true,
            ..Self::default()
        }
    }

    /// One more fetched page (the oldest leaves the window beyond [`WINDOW`]).
    pub fn observe(&mut self, p: Pair) {
        self.window.push_back(p);
        if self.window.len() > WINDOW {
            self.window.pop_front();
        }
    }

    /// A pick of ranker `r` (a URL only it would have fetched next) was fetched and valued
    /// `value` ([`super::value`]).
    pub fn observe_pick(&mut self, r: Ranker, value: f64) {
        self.duel.observe(r, value);
    }

    /// Decides on the window: guide once the apprentice is better by [`Z_ON`] standard
    /// errors, stop once it is no longer better, and for good; without enough evidence, keep
    /// what the crawl does. The duel of the two rankers' picks vetoes: once each has
    /// [`VETO_PICKS`] valued picks and the apprentice's rank below soft focus's by [`Z_VETO`]
    /// standard errors ([`Duel::apprentice_worse`]), it does not guide.
    pub fn decide(&mut self) -> bool {
        let paired = compare(&self.window);
        if let Some(c) = paired {
            let d = c.apprentice - c.soft;
            let was = self.guiding;
            self.guiding = if was {
                d > 0.0
            } else {
                !self.stopped && d > 0.0 && d > Z_ON * c.se
            };
            self.stopped |= was && !self.guiding;
            self.last = paired;
        }
        if self.guiding && self.duel.apprentice_worse(Z_VETO, VETO_PICKS) {
            self.guiding = false;
            self.stopped = true;
        }
        self.guiding
    }

    /// Whether the apprentice guides, as last decided.
    pub fn guiding(&self) -> bool {
        self.guiding
    }

    /// The last comparison made, if any.
    pub fn last(&self) -> Option<Comparison> {
        self.last
    }

    /// The duel of the two rankers' picks so far, once each has enough fetched picks.
    pub fn contest(&self) -> Option<Contest> {
        self.duel.contest()
    }
}

/// Most frontier URLs whose two best scores the [`Scoreboard`] keeps (about 16 bytes each).
pub const BOARD_CAP: usize = 1 << 18;

/// The best soft-focus score and apprentice priority given so far to links into each URL not
/// yet fetched, by a 64-bit hash of the URL. Bounded: when full, it keeps only the URLs whose
/// hash has one more low bit clear (a uniform sample, halved), so the critic sees a sample of
/// the pages fetched instead of none.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    best: HashMap<u64, (f32, f32)>,
    /// URLs are kept when their hash's `level` low bits are zero.
    level: u32,
}

impl Scoreboard {
    /// An empty board keeping every URL.
    pub fn new() -> Self {
        Self::default()
    }

    fn kept(&self, hash: u64) -> bool {
        hash & ((1u64 << self.level) - 1) == 0
    }

    /// A link into the URL hashed `hash`, scored `soft` by soft focus and `apprentice` by the
    /// apprentice: each best is kept.
    pub fn offer(&mut self, hash: u64, soft: f64, apprentice: f64) {
        if !self.kept(hash) {
            return;
        }
        let e = self.best.entry(hash).or_insert((f32::MIN, f32::MIN));
        e.0 = e.0.max(soft as f32);
        e.1 = e.1.max(apprentice as f32);
        while self.best.len() > BOARD_CAP && self.level < 63 {
            self.level += 1;
            let level = self.level;
            self.best.retain(|h, _| h & ((1u64 << level) - 1) == 0);
        }
    }

    /// The URL hashed `hash` was fetched with relevance label `high`: its pair, if it was on
    /// the board (it leaves the board).
    pub fn fetched(&mut self, hash: u64, high: bool) -> Option<Pair> {
        let (soft, apprentice) = self.best.remove(&hash)?;
        Some(Pair {
            soft: f64::from(soft),
            apprentice: f64::from(apprentice),
            high,
        })
    }

    /// URLs on the board.
    pub fn len(&self) -> usize {
        self.best.len()
    }

    /// True when no URL is on the board.
    pub fn is_empty(&self) -> bool {
        self.best.is_empty()
    }
}

#[cfg(test)]
#[path = "critic_tests.rs"]
mod tests;
