//! The critic's exploration sample (#25): a few of each retrain period's fetches are drawn
//! from the ranker that does not guide, so the critic sees what guiding leaves behind.
//! Pure and synchronous.
//!
//! The paired comparison of [`super::critic`] sees only the pages the guiding ranker chose to
//! fetch: links it ranks low are never fetched, so their outcome is never known, and an
//! apprentice that orders its own picks well can keep guiding while the pages soft focus would
//! have fetched instead were better. At each retrain point the frontier's candidates (the best
//! few thousand URLs by either ranker, kept in memory as links are found: [`super::leads`]) are
//! ranked by both soft focus and the apprentice; the URLs only one of them would fetch within
//! the next period are that ranker's *picks*. The guiding ranker's picks are fetched as usual;
//! [`SHARE`] of the period's fetches are the other ranker's best picks, raised to the head of
//! the frontier (the exploration). Once fetched, each pick scores for its ranker
//! ([`Duel`]): the two rankers' harvests on the pages where they disagree, which is what
//! swapping one for the other changes. Both samples are drawn the same way whichever ranker
//! guides, so the comparison is not biased by who guides (team-draft interleaving: Radlinski,
//! Kurup and Joachims, 2008, "How does clickthrough data reflect retrieval quality?").

use super::critic::{components, mean_var};
use std::collections::VecDeque;

/// Share of a retrain period's fetches taken from the ranker that does not guide: the cost of
/// exploring is at most this share of the difference between the two rankers' picks.
pub const SHARE: f64 = 1.0 / 16.0;

/// Most recent fetched picks per ranker the duel compares.
pub const WINDOW: usize = 250;

/// Fewest fetched picks per ranker before the duel decides (the normal approximation of the
/// two proportions' difference needs some of each).
pub const MIN_PICKS: usize = 20;

/// One of the two rankers of the frontier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ranker {
    /// Soft focus: R(parent) × the link's weight.
    Soft,
    /// The apprentice's priority (blended with soft focus's by its trust).
    Apprentice,
}

/// A frontier URL with both rankers' scores of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ranked {
    /// Its URL's 64-bit hash.
    pub id: u64,
    /// Soft focus's score.
    pub soft: f64,
    /// The apprentice's.
    pub apprentice: f64,
}

impl Ranked {
    fn by(&self, r: Ranker) -> f64 {
        match r {
            Ranker::Soft => self.soft,
            Ranker::Apprentice => self.apprentice,
        }
    }
}

impl Ranker {
    /// The other ranker.
    pub fn other(self) -> Ranker {
        match self {
            Ranker::Soft => Ranker::Apprentice,
            Ranker::Apprentice => Ranker::Soft,
        }
    }
}

/// What the crawl does with its frontier until the next retrain point.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// The explored picks, raised to the guiding ranker's best score so they are fetched next.
    pub raise: Vec<(u64, f64)>,
    /// The URLs only one ranker would fetch in the next period, with that ranker.
    pub picks: Vec<(u64, Ranker)>,
}

/// The URLs' order under ranker `r`, best first (ties by hash).
fn order(frontier: &[Ranked], r: Ranker) -> Vec<usize> {
    let mut o: Vec<usize> = (0..frontier.len()).collect();
    o.sort_by(|&a, &b| {
        (frontier[b].by(r).total_cmp(&frontier[a].by(r))).then(frontier[a].id.cmp(&frontier[b].id))
    });
    o
}

/// The plan for the next `horizon` fetches of `frontier` (the candidates: the frontier's best
/// by either ranker, [`super::leads`]), guided by `guide`: each ranker's picks (its top
/// `horizon` minus the other's), and the other ranker's best ⌈`share` × horizon⌉ picks
/// ([`SHARE`] by default) raised to the guiding ranker's best score, so they are fetched next.
pub fn plan(frontier: &[Ranked], guide: Ranker, horizon: usize, share: f64) -> Plan {
    let other = guide.other();
    let h = horizon.min(frontier.len());
    let (g, o) = (order(frontier, guide), order(frontier, other));
    let mut in_top = vec![[false; 2]; frontier.len()];
    for &i in &g[..h] {
        in_top[i][0] = true;
    }
    for &i in &o[..h] {
        in_top[i][1] = true;
    }
    let explore = ((h as f64) * share).ceil() as usize;
    let explored: Vec<usize> = (o[..h].iter())
        .copied()
        .filter(|&i| !in_top[i][0])
        .take(explore)
        .collect();
    let head = g.first().map_or(0.0, |&i| frontier[i].by(guide));
    let raise = explored.iter().map(|&i| (frontier[i].id, head)).collect();
    let mut picks: Vec<(u64, Ranker)> = (g[..h].iter())
        .filter(|&&i| !in_top[i][1])
        .map(|&i| (frontier[i].id, guide))
        .collect();
    picks.extend(explored.iter().map(|&i| (frontier[i].id, other)));
    Plan { raise, picks }
}

/// The two rankers' mean pick values ([`super::value`]: a pick's own relevance and the
/// relevant pages it led to), the standard error of their difference, and the chance that an
/// apprentice's pick is worth more than soft focus's (the rank comparison the veto uses).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contest {
    /// Mean value of the apprentice's fetched picks.
    pub apprentice: f64,
    /// Soft focus's.
    pub soft: f64,
    /// Standard error of `apprentice - soft`.
    pub se: f64,
    /// The chance that an apprentice's pick is worth more than a soft focus's one, ties
    /// counting one half (the area under the ROC curve, Mann-Whitney's U / (m n)).
    pub better: f64,
    /// Its standard error (DeLong's, for two independent samples).
    pub better_se: f64,
    /// Fetched picks compared, [apprentice, soft].
    pub picks: [usize; 2],
}

/// The values of each ranker's fetched picks, most recent [`WINDOW`].
#[derive(Clone, Debug, Default)]
pub struct Duel {
    outcomes: [VecDeque<f64>; 2],
}

impl Duel {
    /// A duel that has seen no pick.
    pub fn new() -> Self {
        Self::default()
    }

    /// A pick of ranker `r` was fetched and valued `value` (1 or 0 for a pick judged by its
    /// own relevance alone).
    pub fn observe(&mut self, r: Ranker, value: f64) {
        let side = &mut self.outcomes[usize::from(r == Ranker::Soft)];
        side.push_back(value);
        if side.len() > WINDOW {
            side.pop_front();
        }
    }

    /// The comparison of the two mean values (Welch), once each ranker has [`MIN_PICKS`]
    /// fetched picks. Each side gets two more values, a 0 and a 1 (for relevant-or-not values
    /// this is Agresti and Caffo's (2000) estimate), so a side where every pick scored the
    /// same still has a variance.
    pub fn contest(&self) -> Option<Contest> {
        let n = self.outcomes.each_ref().map(VecDeque::len);
        if n.iter().any(|&k| k < MIN_PICKS) {
            return None;
        }
        let stats = [0, 1].map(|s| {
            let xs = self.outcomes[s].iter().copied().chain([0.0, 1.0]);
            let m = (n[s] + 2) as f64;
            let mean = xs.clone().sum::<f64>() / m;
            let var = xs.map(|x| (x - mean).powi(2)).sum::<f64>() / m;
            (mean, var / m)
        });
        let sides = self
            .outcomes
            .each_ref()
            .map(|o| o.iter().copied().collect::<Vec<_>>());
        let (v10, v01) = components(&sides[0], &sides[1]);
        let ((better, var10), var01) = (mean_var(&v10), mean_var(&v01).1);
        Some(Contest {
            apprentice: stats[0].0,
            soft: stats[1].0,
            se: (stats[0].1 + stats[1].1).sqrt(),
            better,
            better_se: (var10 / v10.len() as f64 + var01 / v01.len() as f64).sqrt(),
            picks: n,
        })
    }

    /// Whether the apprentice's picks are worth less than soft focus's, by ranks: the chance
    /// that one of its picks is worth more than one of soft focus's ([`Contest::better`]) is
    /// below one half by more than `z` standard errors (one-sided), once each ranker has at
    /// least `min_picks` valued picks (and [`MIN_PICKS`]). Ranks, not the mean values: the
    /// values have a long tail (a pick that opens a seam), and on a few dozen picks the mean
    /// of the smaller side is most often below its true mean, so comparing means stopped an
    /// apprentice as good as soft focus in a quarter of simulated crawls.
    pub fn apprentice_worse(&self, z: f64, min_picks: usize) -> bool {
        self.contest().is_some_and(|c| {
            c.picks.iter().all(|&k| k >= min_picks) && 0.5 - c.better > z * c.better_se
        })
    }
}

#[cfg(test)]
#[path = "explore_tests.rs"]
mod tests;
