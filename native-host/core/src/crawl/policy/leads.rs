//! The exploration's candidates (#25): the frontier URLs either ranker could pick next, kept in
//! memory as the crawl finds their links, so that the critic's exploration sample
//! ([`super::explore`]) ranks a few thousand URLs at each retrain instead of reading and
//! scoring the whole frontier. Pure and synchronous.
//!
//! Each URL keeps soft focus's best score of a link into it (R(parent) × weight: exactly its
//! frontier score under soft focus) and the features of the link the apprentice scored best,
//! with that link's soft score, so the retrained apprentice can score it again. The pool
//! holds the [`CAP`] best URLs by each ranker (up to four times that between trims); a URL
//! outside both is in neither ranker's next picks while the retrain period is shorter than
//! [`CAP`]. Measured before (#25, l25 at 9e85b5f): ranking the whole frontier both ways at every
//! retrain cost the default crawl about 20% of its wall time.

use super::explore::Ranked;
use super::rules::Inherited;
use std::collections::HashMap;

/// URLs kept per ranker: the best this many by soft focus and by the apprentice (the retrain
/// period, 200 pages by default, must be shorter).
pub const CAP: usize = 1024;

/// One candidate URL.
#[derive(Clone, Debug, PartialEq)]
struct Lead {
    url: String,
    /// Soft focus's best score of a link into it.
    soft: f64,
    /// The apprentice's best score of a link into it, as last scored.
    apprentice: f64,
    /// That link's features and what soft focus knows of it.
    features: Vec<u32>,
    base: Inherited,
}

/// The candidate URLs by their 64-bit URL hash, bounded.
#[derive(Clone, Debug)]
pub struct Leads {
    pool: HashMap<u64, Lead>,
    /// The [`CAP`]-th best score by each ranker at the last trim, [soft, apprentice]: a link
    /// scoring below both is not admitted.
    floor: [f64; 2],
}

impl Default for Leads {
    fn default() -> Self {
        Leads {
            pool: HashMap::new(),
            floor: [f64::NEG_INFINITY; 2],
        }
    }
}

impl Leads {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// A link into the URL `url` (hashed `hash`) with `features`, scored `base.soft()` by soft
    /// focus and `apprentice` by the apprentice now.
    pub fn offer(
        &mut self,
        hash: u64,
        url: &str,
        features: &[u32],
        base: Inherited,
        apprentice: f64,
    ) {
        let soft = base.soft();
        if let Some(l) = self.pool.get_mut(&hash) {
            l.soft = l.soft.max(soft);
            if apprentice > l.apprentice {
                (l.apprentice, l.base) = (apprentice, base);
                l.features.clear();
                l.features.extend_from_slice(features);
            }
            return;
        }
        if soft < self.floor[0] && apprentice < self.floor[1] {
            return;
        }
        let lead = Lead {
            url: url.to_owned(),
            soft,
            apprentice,
            features: features.to_vec(),
            base,
        };
        self.pool.insert(hash, lead);
        if self.pool.len() > 4 * CAP {
            self.trim();
        }
    }

    /// The URL hashed `hash` was fetched (or is no longer in the frontier): it leaves the pool.
    pub fn fetched(&mut self, hash: u64) {
        self.pool.remove(&hash);
    }

    /// Keeps the [`CAP`] best by each ranker (ties by hash) and sets the admission floors.
    fn trim(&mut self) {
        let mut keep: HashMap<u64, Lead> = HashMap::with_capacity(2 * CAP);
        for side in 0..2 {
            let score = |l: &Lead| if side == 0 { l.soft } else { l.apprentice };
            let mut order: Vec<(f64, u64)> =
                (self.pool.iter()).map(|(h, l)| (score(l), *h)).collect();
            order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            order.truncate(CAP);
            self.floor[side] = order.last().map_or(f64::NEG_INFINITY, |o| o.0);
            for (_, h) in order {
                if let Some(l) = self.pool.get(&h) {
                    keep.entry(h).or_insert_with(|| l.clone());
                }
            }
        }
        self.pool = keep;
    }

    /// The apprentice's scores made again by `score(features, soft score of the link)` (the
    /// retrained apprentice's blend); the pool is then trimmed on the new scores.
    pub fn rescore(&mut self, score: impl Fn(&[u32], Inherited) -> f64) {
        for l in self.pool.values_mut() {
            l.apprentice = score(&l.features, l.base);
        }
        self.floor = [f64::NEG_INFINITY; 2];
        if self.pool.len() > 2 * CAP {
            self.trim();
        }
    }

    /// Every candidate ranked both ways.
    pub fn ranked(&self) -> Vec<Ranked> {
        (self.pool.iter())
            .map(|(h, l)| Ranked {
                id: *h,
                soft: l.soft,
                apprentice: l.apprentice,
            })
            .collect()
    }

    /// The URL of the candidate hashed `hash`.
    pub fn url(&self, hash: u64) -> Option<&str> {
        self.pool.get(&hash).map(|l| l.url.as_str())
    }

    /// Candidates held.
    pub fn len(&self) -> usize {
        self.pool.len()
    }

    /// True when no candidate is held.
    pub fn is_empty(&self) -> bool {
        self.pool.is_empty()
    }
}

#[cfg(test)]
#[path = "leads_tests.rs"]
mod tests;
