//! Additive per-topic term statistics, the training state that makes updates incremental.
//!
//! Every topic holds the aggregate of its whole subtree's examples. Relative frequencies are
//! kept in 32.32 fixed point so that adding and then removing an example restores the exact
//! previous state, in any order, natively and in WebAssembly alike.

use rustc_hash::FxHashMap;

/// Scale of the fixed-point sums (2^32).
pub const FIXED_ONE: f64 = 4_294_967_296.0;

/// Statistics of one term within one topic's subtree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TermStat {
    /// Total occurrences of the term.
    pub count: u64,
    /// Documents containing the term.
    pub docs: u64,
    /// Sum over documents of the term's relative frequency, fixed point.
    pub sum_x: i64,
    /// Sum over documents of the squared relative frequency, fixed point.
    pub sum_xx: i64,
}

/// Aggregated statistics of one topic's subtree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopicStats {
    /// Number of example documents.
    pub docs: u64,
    /// Per term id.
    pub terms: FxHashMap<u32, TermStat>,
}

/// The per-document contributions of one example, computed once and applied with a sign.
pub(crate) fn contributions(terms: &[(u32, u32)]) -> impl Iterator<Item = (u32, TermStat)> + '_ {
    let len: u64 = terms.iter().map(|&(_, c)| u64::from(c)).sum();
    let len = len.max(1) as f64;
    terms.iter().map(move |&(t, c)| {
        let x = f64::from(c) / len;
        (
            t,
            TermStat {
                count: u64::from(c),
                docs: 1,
                sum_x: (x * FIXED_ONE).round() as i64,
                sum_xx: (x * x * FIXED_ONE).round() as i64,
            },
        )
    })
}

impl TopicStats {
    /// Adds (`sign > 0`) or removes (`sign < 0`) one example's terms.
    pub(crate) fn apply(&mut self, terms: &[(u32, u32)], add: bool) {
        if add {
            self.docs += 1;
        } else {
            self.docs = self.docs.saturating_sub(1);
        }
        for (t, d) in contributions(terms) {
            let e = self.terms.entry(t).or_default();
            if add {
                e.count += d.count;
                e.docs += 1;
                e.sum_x += d.sum_x;
                e.sum_xx += d.sum_xx;
            } else {
                e.count = e.count.saturating_sub(d.count);
                e.docs = e.docs.saturating_sub(1);
                e.sum_x -= d.sum_x;
                e.sum_xx -= d.sum_xx;
                if e.docs == 0 {
                    self.terms.remove(&t);
                }
            }
        }
    }
}
