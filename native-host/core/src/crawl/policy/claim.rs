//! The claim policy of a crawl shared by many workers (issue #26): which of the frontier URLs
//! a worker may take does its checkout take, in what order. Pure and synchronous; the store
//! selects candidates and persists what it is told.
//!
//! **Ready hosts first.** A worker sends a host one request per politeness gap, and its fetch
//! slots are few (4 by default): a look-ahead of URLs bunched on a few hosts (the links of one
//! page mostly stay on its site, and share its score) leaves the slots idle while those URLs
//! wait out their hosts' gaps. Traced on the scaling bench at a 1 s gap, 4 workers: see
//! `benches/scaling.rs` (`SCALING_TRACE`). So a checkout takes, among its candidates (the
//! worker's best pending URLs, in frontier order), first those whose host is ready now, in
//! frontier order; then the rest by when their host will be ready, soonest first. Each URL
//! taken moves its host's next slot on by the gap, as the worker's own politeness will; the
//! store keeps that time per host, so a worker taking a host over keeps to it too. Hosts not
//! ready make a worker take free ones, so it claims as many hosts as its slots need.
//! With no gap every host is always ready: the frontier order, unchanged.

/// A checkout's candidate URL (in frontier order), as the claim policy sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// Its host's id in the store.
    pub sid: i64,
    /// When its host may next be sent a request (Unix seconds; `None`: never planned).
    pub ready_at: Option<f64>,
}

/// What a checkout takes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Taken {
    /// The candidates taken (their indexes), ready ones first.
    pub picks: Vec<usize>,
    /// Each host taken from, with its next slot after the URLs taken (host id order).
    pub ready_at: Vec<(i64, f64)>,
}

/// Takes up to `n` of `candidates` (in frontier order) at `now` (Unix seconds), with `gap`
/// seconds between two requests to a host: ready hosts' URLs first in frontier order, then the
/// others by their host's next slot (ties: frontier order).
pub fn ready_first(candidates: &[Candidate], n: usize, now: f64, gap: f64) -> Taken {
    use std::collections::BTreeMap;
    let n = n.min(candidates.len());
    if gap <= 0.0 || !gap.is_finite() {
        return Taken {
            picks: (0..n).collect(),
            ready_at: Vec::new(),
        };
    }
    // Each host's next slot and its candidates still to take, in frontier order.
    let mut hosts: BTreeMap<i64, (f64, std::collections::VecDeque<usize>)> = BTreeMap::new();
    for (i, c) in candidates.iter().enumerate() {
        let at = c.ready_at.filter(|t| t.is_finite()).unwrap_or(now).max(now);
        hosts
            .entry(c.sid)
            .or_insert((at, Default::default()))
            .1
            .push_back(i);
    }
    let mut picks = Vec::with_capacity(n);
    while picks.len() < n {
        // Ready now (by frontier order), else soonest ready (then frontier order).
        let key = |(next, queue): &(f64, std::collections::VecDeque<usize>)| {
            let first = *queue.front()?;
            let wait = (*next - now).max(0.0);
            Some((wait > 0.0, wait, first))
        };
        let best = (hosts.iter())
            .filter_map(|(sid, h)| Some((key(h)?, *sid)))
            .min_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
        let Some((_, sid)) = best else { break };
        let h = hosts.get_mut(&sid).expect("a host with candidates");
        picks.extend(h.1.pop_front());
        h.0 += gap;
    }
    let taken: std::collections::BTreeSet<i64> = picks.iter().map(|i| candidates[*i].sid).collect();
    let ready_at = (hosts.into_iter())
        .filter(|(sid, _)| taken.contains(sid))
        .map(|(sid, (next, _))| (sid, next))
        .collect();
    Taken { picks, ready_at }
}

/// How many candidates a checkout of `n` reads in frontier order: enough beyond `n` to find
/// ready hosts when the best URLs bunch on a few (with no gap, `n`: the frontier order).
pub fn candidates(n: usize, gap: f64) -> usize {
    if gap > 0.0 {
        n.saturating_mul(4).saturating_add(16)
    } else {
        n
    }
}

/// How deep into the crawl's frontier (every worker's URLs, in frontier order) a checkout of
/// `n` with a politeness `gap` may reach when `workers` workers are live: as deep as one
/// process with all their look-aheads would read ([`candidates`] of `n`, times `workers`).
/// Past it a worker takes nothing, even when the head's hosts are busy with other workers: it
/// waits for the head, as one process's fetch slots wait for their hosts. (Candidates taken
/// among only the hosts a worker may have sent 3 of 4 workers ever deeper, to far poorer hosts:
/// FOLDOC networking at a 1 s gap, harvest .203 at 1000 pages against one process's .474.)
/// With no gap, the frontier order: `n`.
pub fn reach(n: usize, gap: f64, workers: usize) -> usize {
    if gap > 0.0 {
        candidates(n, gap).saturating_mul(workers.max(1))
    } else {
        n
    }
}

#[cfg(test)]
#[path = "claim_tests.rs"]
mod tests;
