//! The politeness slots in bounded memory (#27): when each host may next be asked
//! (crawling-the-web-2004 §2.3: one request every max(delay, Crawl-delay) per host). A crawl
//! of millions of hosts must not keep a string per host, as the per-host page cap does not
//! ([`super::host_cap`]). The slots of the last [`EXACT_SLOTS`] hosts are kept exactly, by
//! name (the slots still ahead at the end are saved for the next run); slots already past are
//! no wait and are forgotten when that many are held; when that many are still ahead, they
//! are folded into a sketch of fixed size where each cell keeps the latest slot of the hosts
//! it holds. A host's slot read from the sketch is the earliest of its cells, each at least
//! its own slot: a host is never asked before its slot (politeness kept); one may wait for
//! another host's slot (a collision), which can only slow it. Pure and synchronous.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Hosts whose slots are kept exactly before those past are forgotten or, when still ahead,
/// folded into the sketch.
pub(super) const EXACT_SLOTS: usize = 4096;

/// Cells per row of the sketch.
const WIDTH: usize = 1 << 14;

use super::sketch::{Fingerprint, Sketch};

/// The next politeness slot of each host, in memory bounded whatever the number of hosts.
pub(super) struct Slots {
    /// host → its next slot, in milliseconds after `base`.
    exact: HashMap<Box<str>, u64>,
    /// Slots folded in (ms after `base`, 0 for none; each cell the latest folded into it).
    sketch: Sketch<u64>,
    base: Instant,
    fingerprint: Fingerprint,
    bound: usize,
}

impl Default for Slots {
    fn default() -> Self {
        Slots::new(EXACT_SLOTS, crate::store::fnv64, Instant::now())
    }
}

impl Slots {
    /// Slots of at most `bound` hosts kept exactly, hosts known by `fingerprint` in the
    /// sketch, times counted from `base` (no slot is before it).
    pub(super) fn new(bound: usize, fingerprint: Fingerprint, base: Instant) -> Self {
        Slots {
            exact: HashMap::new(),
            sketch: Sketch::new(WIDTH),
            base,
            fingerprint,
            bound: bound.max(1),
        }
    }

    /// Hosts kept exactly now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.exact.len()
    }

    fn ms(&self, t: Instant) -> u64 {
        // Rounded up: a slot is never moved earlier.
        let d = t.saturating_duration_since(self.base);
        d.as_millis() as u64 + u64::from(!d.subsec_nanos().is_multiple_of(1_000_000))
    }

    fn at(&self, ms: u64) -> Instant {
        self.base + Duration::from_millis(ms)
    }

    /// `host`'s next slot as ms after `base` (0: none known).
    fn slot_ms(&self, host: &str) -> u64 {
        let exact = self.exact.get(host).copied().unwrap_or(0);
        if self.sketch.is_empty() {
            return exact;
        }
        exact.max(self.sketch.get((self.fingerprint)(host)))
    }

    /// `host`'s next slot, if one is known.
    pub(super) fn get(&self, host: &str) -> Option<Instant> {
        Some(self.slot_ms(host))
            .filter(|&ms| ms > 0)
            .map(|ms| self.at(ms))
    }

    /// Takes `host`'s next slot at `now`, the one after it `gap` later; returns the wait.
    pub(super) fn take(&mut self, host: &str, gap: Duration, now: Instant) -> Duration {
        let slot = self.get(host).unwrap_or(now).max(now);
        self.set(host, slot + gap, now);
        slot - now
    }

    /// `host` is not asked before `until` (a Retry-After), nor before the slot it has.
    pub(super) fn hold_until(&mut self, host: &str, until: Instant, now: Instant) {
        let at = self.get(host).map_or(until, |s| s.max(until));
        self.set(host, at, now);
    }

    /// Sets `host`'s next slot to `at` (never earlier than it is), making room first.
    fn set(&mut self, host: &str, at: Instant, now: Instant) {
        let ms = self.ms(at);
        if let Some(s) = self.exact.get_mut(host) {
            *s = (*s).max(ms);
            return;
        }
        if self.exact.len() >= self.bound {
            self.make_room(now);
        }
        self.exact.insert(host.into(), ms);
    }

    /// Forgets the slots already past; when more than half the bound are still ahead, folds
    /// them all into the sketch (so making room costs O(1) per host, amortised).
    fn make_room(&mut self, now: Instant) {
        let now_ms = self.ms(now);
        self.exact.retain(|_, s| *s > now_ms);
        if self.exact.len() < self.bound / 2 {
            return;
        }
        for (host, s) in self.exact.drain() {
            self.sketch.fold((self.fingerprint)(&host), s, u64::max);
        }
    }

    /// The hosts kept exactly whose slot is after `now`, with it (a host folded into the
    /// sketch is not listed: it is at most a delay or a Retry-After ahead).
    pub(super) fn ahead(&self, now: Instant) -> Vec<(String, Instant)> {
        let now_ms = self.ms(now);
        (self.exact.iter())
            .filter(|(_, s)| **s > now_ms)
            .map(|(h, s)| (h.to_string(), self.at(*s)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAP: Duration = Duration::from_secs(10);

    #[test]
    fn a_host_asked_again_within_its_gap_waits_for_the_rest_of_it() {
        let t0 = Instant::now();
        let mut s = Slots::new(8, crate::store::fnv64, t0);
        assert_eq!(s.take("a", GAP, t0), Duration::ZERO);
        let wait = s.take("a", GAP, t0 + Duration::from_secs(3));
        assert_eq!(wait, Duration::from_secs(7));
        // Queued behind the slot just taken.
        assert_eq!(
            s.take("a", GAP, t0 + Duration::from_secs(3)),
            Duration::from_secs(17)
        );
        assert_eq!(
            s.take("b", GAP, t0 + Duration::from_secs(3)),
            Duration::ZERO
        );
    }

    #[test]
    fn more_hosts_than_the_bound_keep_every_hosts_politeness() {
        // 3,000 hosts, each asked once a millisecond apart, all within one gap of 10 s: every
        // slot is still ahead, so none may be forgotten, and only 64 are kept exactly.
        let (t0, n, bound) = (Instant::now(), 3000u64, 64);
        let mut s = Slots::new(bound, crate::store::fnv64, t0);
        let (mut most, mut delayed) = (0, 0);
        for i in 0..n {
            let now = t0 + Duration::from_millis(i);
            // A new host waits only when each of its cells holds other hosts' slots.
            delayed += usize::from(s.take(&format!("h{i}"), GAP, now) > Duration::ZERO);
            most = most.max(s.len());
        }
        assert!(most <= bound, "{most} hosts kept exactly");
        assert!(
            delayed <= 30,
            "{delayed} of {n} new hosts delayed by collisions"
        );
        // Asked again: each waits at least until its own slot (first ask + gap), never less.
        let again = t0 + Duration::from_millis(n);
        for i in 0..n {
            let due = t0 + Duration::from_millis(i) + GAP;
            let wait = s.take(&format!("h{i}"), GAP, again);
            assert!(
                again + wait >= due,
                "h{i} asked {:?} early",
                due - (again + wait)
            );
        }
    }

    #[test]
    fn a_fingerprint_collision_delays_a_host_never_hastens_it() {
        // Every host has the same fingerprint: once folded, each waits for the latest slot.
        let t0 = Instant::now();
        let mut s = Slots::new(4, |_| 7, t0);
        for i in 0..5u64 {
            s.take(&format!("h{i}"), GAP, t0 + Duration::from_secs(i));
        }
        let now = t0 + Duration::from_secs(5);
        // h0's own slot is at 10 s; folded with h3 (13 s), it waits until 13 s.
        assert_eq!(s.take("h0", GAP, now), Duration::from_secs(8));
        assert!(s.len() <= 4);
    }

    #[test]
    fn slots_past_are_forgotten_before_any_is_folded() {
        let t0 = Instant::now();
        let mut s = Slots::new(16, crate::store::fnv64, t0);
        for i in 0..100_000u64 {
            s.take(
                &format!("h{i}"),
                Duration::from_millis(5),
                t0 + Duration::from_millis(i),
            );
        }
        assert!(s.sketch.is_empty(), "folded although the slots were past");
        assert!(s.len() <= 16);
    }

    #[test]
    fn a_retry_after_holds_a_host_and_never_shortens_its_slot() {
        let t0 = Instant::now();
        let mut s = Slots::new(8, crate::store::fnv64, t0);
        s.hold_until("a", t0 + Duration::from_secs(60), t0);
        assert_eq!(s.take("a", GAP, t0), Duration::from_secs(60));
        s.hold_until("a", t0 + Duration::from_secs(5), t0);
        assert_eq!(s.get("a"), Some(t0 + Duration::from_secs(70)));
        let ahead = s.ahead(t0);
        assert_eq!(ahead, vec![("a".to_owned(), t0 + Duration::from_secs(70))]);
    }
}
