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

/// A pending URL's place in the frontier order as far as its score goes: fewer tries first,
/// then the higher score (the order's later keys, priority and a random tie-break, left out).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rank {
    /// Times it was tried and failed.
    pub tries: i64,
    /// Its score (`doc.relevance`).
    pub score: f64,
}

/// How deep into the crawl's frontier (every worker's pending URLs, in frontier order) a
/// checkout of `n` with a politeness `gap` reads the floor of the band it may take from: one
/// look-ahead ([`candidates`] of `n`), as one process would read. `None` with no gap: no band,
/// the frontier order.
pub fn band_depth(n: usize, gap: f64) -> Option<usize> {
    (gap > 0.0).then(|| candidates(n, gap).max(1))
}

/// Whether a URL ranked `rank` is within the band whose floor is `floor`, the frontier's rank
/// at [`band_depth`] (`None`: the frontier is shorter, every URL is within): fewer tries than
/// the floor's, or as many and a score at least the floor's, **ties included**. A worker with
/// a politeness gap takes only URLs within the band, so it waits for a head bunched on a few
/// busy hosts (FOLDOC: the best URLs share a few sites) as one process's fetch slots wait for
/// their hosts, yet where the pending scores are flat (many URLs tied at the floor's score,
/// the generated web of the scaling bench) the band is wide and workers take freely. (A
/// reach of a fixed count, session 20, had to choose: as deep as one look-ahead held focus
/// but not the scaling bar, as deep as every live worker's look-ahead the reverse.)
pub fn within(rank: Rank, floor: Option<Rank>) -> bool {
    floor.is_none_or(|f| rank.tries < f.tries || (rank.tries == f.tries && rank.score >= f.score))
}

#[cfg(test)]
#[path = "claim_tests.rs"]
mod tests;
