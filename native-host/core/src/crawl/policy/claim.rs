//! The claim policy of a crawl shared by many workers (issue #26, "focus holds"): which
//! frontier URLs a worker may take, and which of its hosts it offers to the others. Pure and
//! synchronous; the store selects and persists by the numbers it gives.
//!
//! One host, one worker at a time (politeness) splits the frontier between workers. Left to
//! themselves, the first worker to check out takes every seed host and every good host it
//! meets after, while the others fetch what is left: on FOLDOC networking the holder kept
//! 81–92% of the crawl's best 32 pending URLs while the other three fetched pages of harvest
//! 0–0.18. Two rules keep the crawl as a whole best-first:
//!
//! - **The head**: a worker asking for `n` URLs takes only those among the crawl's best `n`
//!   pending ones (the global frontier order, hosts of every worker counted): the URLs one
//!   process would take now. Those on hosts other workers are busy with it leaves to them and
//!   waits, instead of fetching pages the crawl does not want yet. (A head of `workers × n`
//!   still lost up to 0.07 of harvest at 1000 pages on networking.) One worker alone gets
//!   its `n` best, the one-process order.
//! - **Offers**: a worker that has nothing of a host in flight and takes none of its URLs in a
//!   checkout offers the host, from its politeness gap on (the host's last request ended
//!   before the offer). Another worker whose head reaches the host may take it over; its
//!   holder keeps it otherwise, and its own next checkout of the host withdraws the offer. So
//!   hosts follow the head of the frontier instead of staying where they were first met.

use std::time::Duration;

/// How many of the crawl's best pending URLs a worker asking for `n` may choose from: `n`,
/// whatever the number of workers.
pub fn head(n: usize) -> usize {
    n
}

/// A host a worker holds, as its checkout sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Held {
    /// The host's id in the store.
    pub sid: i64,
    /// Whether any of its URLs is in flight for the worker (this checkout's included).
    pub in_flight: bool,
}

/// The hosts among `held` (not offered yet) to offer now: those with nothing in flight, in
/// id order.
pub fn offers(held: &[Held]) -> Vec<i64> {
    let mut v: Vec<i64> = (held.iter())
        .filter(|h| !h.in_flight)
        .map(|h| h.sid)
        .collect();
    v.sort_unstable();
    v
}

/// When a host offered at `now` (Unix seconds) may be taken over by another worker: after
/// the holder's politeness gap, so that no two requests to the host come closer than it.
pub fn offered_from(now: f64, gap: Duration) -> f64 {
    now + gap.as_secs_f64()
}

#[cfg(test)]
#[path = "claim_tests.rs"]
mod tests;
