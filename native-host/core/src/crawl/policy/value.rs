//! A pick's value label (#25): what a ranker's pick leads to, not only what it is. Pure and
//! synchronous.
//!
//! The critic's duel ([`super::explore::Duel`]) compares the two rankers' picks. Judged by
//! its own relevance alone, a pick that is relevant but leads nowhere beats one that is not
//! relevant but opens a seam of relevant pages, and the later harvest says the opposite.
//! Measured on FOLDOC networking (#25, l25 of session 16): a reused apprentice's picks were
//! relevant far more often than soft focus's left-behind ones (.29-.33 against .04-.07), yet
//! guided by it the crawl's harvest at 1000 fell .04 below soft focus's, because soft focus
//! mined the seams its picks led into. So a pick is valued by its own relevance plus the
//! relevant pages among its children (the URLs it links to) fetched within a horizon of
//! fetches after it: the harvest it leads to, whichever ranker fetches the children.

use super::explore::Ranker;
use std::collections::{HashMap, VecDeque};

/// A fetched pick whose horizon has not passed yet.
#[derive(Clone, Debug)]
struct Open {
    ranker: Ranker,
    /// The crawl's fetched count at which its value is final.
    due: u64,
    value: f64,
    children: Vec<u64>,
}

/// The fetched picks being valued, by fetch order, and their children by URL hash.
#[derive(Clone, Debug)]
pub struct Values {
    horizon: u64,
    /// Open picks; the first has serial `first`.
    open: VecDeque<Open>,
    first: u64,
    /// A child's URL hash → the serials of the open picks that link to it.
    parents: HashMap<u64, Vec<u64>>,
}

impl Values {
    /// Picks valued over the `horizon` fetches that follow each.
    pub fn new(horizon: u64) -> Self {
        Values {
            horizon,
            open: VecDeque::new(),
            first: 0,
            parents: HashMap::new(),
        }
    }

    /// A pick of ranker `r` was fetched when the crawl had fetched `now` pages: relevant when
    /// `high`, linking to the URLs hashed `children`.
    pub fn picked(&mut self, r: Ranker, high: bool, children: Vec<u64>, now: u64) {
        let serial = self.first + self.open.len() as u64;
        for &c in &children {
            self.parents.entry(c).or_default().push(serial);
        }
        self.open.push_back(Open {
            ranker: r,
            due: now + self.horizon,
            value: f64::from(u8::from(high)),
            children,
        });
    }

    /// The page with URL hash `hash` was fetched, relevant when `high`: it counts for each
    /// open pick that links to it (once).
    pub fn fetched(&mut self, hash: u64, high: bool) {
        let Some(serials) = self.parents.remove(&hash) else {
            return;
        };
        for s in serials {
            if let Some(p) = (s.checked_sub(self.first)).and_then(|i| self.open.get_mut(i as usize))
            {
                p.value += f64::from(u8::from(high));
            }
        }
    }

    /// The picks whose horizon has passed when the crawl has fetched `now` pages, with their
    /// values (the pick's relevance, 1 or 0, plus its relevant fetched children).
    pub fn closed(&mut self, now: u64) -> Vec<(Ranker, f64)> {
        let mut out = Vec::new();
        while self.open.front().is_some_and(|p| p.due <= now) {
            let Some(p) = self.open.pop_front() else {
                break;
            };
            let serial = self.first;
            self.first += 1;
            for c in &p.children {
                if let Some(v) = self.parents.get_mut(c) {
                    v.retain(|&s| s != serial);
                    if v.is_empty() {
                        self.parents.remove(c);
                    }
                }
            }
            out.push((p.ranker, p.value));
        }
        out
    }

    /// Picks still being valued.
    pub fn open(&self) -> usize {
        self.open.len()
    }
}

#[cfg(test)]
#[path = "value_tests.rs"]
mod tests;
