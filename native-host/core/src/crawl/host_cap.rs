//! The per-host page cap's counts in bounded memory (#27): requests robots.txt allowed, per
//! host, in this run. A crawl of millions of hosts must not keep a string per host. Hosts
//! are known by a 64-bit fingerprint; the counts of the last [`EXACT_HOSTS`] hosts are exact,
//! and when that many are held, their counts are folded into a count-min sketch of fixed size
//! (focused crawling needs only "has this host had `cap` requests?"). A sketch never counts a
//! host below its true count, so no host ever gets more than its cap; it may count one above
//! (by about the requests folded in over its width, a few at a million pages against a cap of
//! thousands), which can only stop a host early. A crawl of fewer hosts than the bound counts
//! every host exactly, as before. Pure and synchronous.

use rustc_hash::FxHashMap;

/// Hosts whose counts are kept exactly (about 20 bytes each) before they are folded into
/// the sketch.
pub(super) const EXACT_HOSTS: usize = 1 << 16;

/// Counters per row of the sketch.
const WIDTH: usize = 1 << 16;

use super::sketch::{Fingerprint, Sketch};

/// Requests counted per host, in memory bounded whatever the number of hosts.
pub(super) struct HostCaps {
    /// fingerprint → requests counted since the host was last folded into the sketch.
    exact: FxHashMap<u64, u32>,
    /// Counts folded in (summed; a host's count is the least of its counters).
    sketch: Sketch<u32>,
    fingerprint: Fingerprint,
    bound: usize,
}

impl Default for HostCaps {
    fn default() -> Self {
        HostCaps::new(EXACT_HOSTS, crate::store::fnv64)
    }
}

impl HostCaps {
    /// Counts holding at most `bound` hosts exactly, hosts known by `fingerprint`.
    pub(super) fn new(bound: usize, fingerprint: Fingerprint) -> Self {
        HostCaps {
            exact: FxHashMap::default(),
            sketch: Sketch::new(WIDTH),
            fingerprint,
            bound: bound.max(1),
        }
    }

    /// Counts one request to `host` if it has had fewer than `cap`; false when it has not
    /// (nothing counted).
    pub(super) fn admit(&mut self, host: &str, cap: u64) -> bool {
        let fp = (self.fingerprint)(host);
        let folded = u64::from(self.sketch.get(fp));
        let n = self.exact.get(&fp).copied().unwrap_or(0);
        if folded + u64::from(n) >= cap {
            return false;
        }
        if n == 0 && self.exact.len() >= self.bound {
            self.fold();
        }
        *self.exact.entry(fp).or_default() += 1;
        true
    }

    /// A request counted for `host` never reached it: it no longer counts.
    pub(super) fn give_back(&mut self, host: &str) {
        let fp = (self.fingerprint)(host);
        match self.exact.get_mut(&fp) {
            Some(n) if *n > 0 => *n -= 1,
            // Folded in: every counter of the host holds its request, so each can lose one
            // without going below any host's true count.
            _ => self.sketch.update(fp, |c| c.saturating_sub(1)),
        }
    }

    /// Hosts counted exactly now.
    #[cfg(test)]
    fn exact_len(&self) -> usize {
        self.exact.len()
    }

    /// Folds every exact count into the sketch, and forgets them.
    fn fold(&mut self) {
        for (fp, n) in self.exact.drain() {
            self.sketch.fold(fp, n, u32::saturating_add);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Admits requests to `host` until the cap stops it; the number admitted.
    fn fill(c: &mut HostCaps, host: &str, cap: u64) -> u64 {
        let mut n = 0;
        while c.admit(host, cap) {
            n += 1;
            assert!(n <= cap, "{host} past its cap");
        }
        n
    }

    #[test]
    fn under_the_bound_every_host_gets_exactly_its_cap_and_gets_a_request_back() {
        let mut c = HostCaps::default();
        for h in 0..1000 {
            assert_eq!(fill(&mut c, &format!("h{h}.test"), 3), 3);
        }
        c.give_back("h7.test");
        assert!(c.admit("h7.test", 3));
        assert!(!c.admit("h7.test", 3));
        assert!(!c.admit("h8.test", 3));
    }

    /// 3,000 hosts through a bound of 64: memory stays bounded, no host gets past its cap,
    /// and every host still gets all or nearly all of it.
    #[test]
    fn more_hosts_than_the_bound_still_keeps_every_hosts_cap() {
        let mut c = HostCaps::new(64, crate::store::fnv64);
        let cap = 50;
        let hosts: Vec<String> = (0..3_000).map(|h| format!("site{h}.test")).collect();
        // Two requests to each host in turn, then each host to its cap: the counts of the
        // first pass have all been folded by the time a host comes back.
        for h in &hosts {
            assert!(c.admit(h, cap) && c.admit(h, cap));
        }
        let mut short = 0;
        for h in &hosts {
            let more = fill(&mut c, h, cap);
            assert!(more <= cap - 2, "{h}: {more} more after 2");
            short += cap - 2 - more;
            assert!(c.exact_len() <= 64);
        }
        // Stopped early by the sketch, which holds 150,000 requests over 65,536 counters a row.
        assert!(short < 3_000 * cap / 100, "{short} requests short");
        // A request given back after folding is counted again.
        let last = &hosts[0];
        c.give_back(last);
        assert!(c.admit(last, cap));
    }

    /// Every host has the same fingerprint: they share one count, which can only stop them
    /// early, never let one past the cap.
    #[test]
    fn a_fingerprint_collision_stops_hosts_early_never_late() {
        let mut c = HostCaps::new(8, |_| 42);
        assert_eq!(fill(&mut c, "a.test", 5), 5);
        assert_eq!(fill(&mut c, "b.test", 5), 0);
    }
}
