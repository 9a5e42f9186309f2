//! The apprentice (accelerated-focused-crawling-2002 §2): an online naive Bayes that predicts,
//! from the neighbourhood of a link (u, v) in u's DOM, whether v will be relevant, trained
//! with the page classifier as critic.
//!
//! Features are ⟨t, d⟩ pairs, token t of u at DOM offset d from the link's anchor (anchor text
//! at d = 0, |d| ≤ d_max), plus u's best category path and all its prefixes (§3.8). They are
//! hashed to `u32` so that feature lists are small to store and the same in every build.

use crate::text::Tokenizer;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// Default DOM offset window (the paper found 4-6 best).
pub const DEFAULT_D_MAX: usize = 5;
/// The number of independent features a link's evidence is worth (see [`Apprentice::p_high`]).
const EVIDENCE_FEATURES: f64 = 4.0;

/// Cap on features per link, so that one bloated page cannot blow up storage.
pub const MAX_FEATURES: usize = 256;

/// FNV-1a over bytes, continuing from `h`.
fn fnv(mut h: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

const FNV_BASIS: u32 = 0x811c_9dc5;

/// The hashed feature for token `t` at DOM offset `d`.
pub fn token_feature(t: &str, d: i32) -> u32 {
    fnv(fnv(FNV_BASIS, &d.to_le_bytes()), t.as_bytes())
}

/// The hashed feature for a class path prefix of the source page.
pub fn class_feature(path: &str) -> u32 {
    fnv(fnv(FNV_BASIS, b"class:"), path.as_bytes())
}

/// A page's DOM leaves, tokenized once, so that features of all its links are cheap. The
/// tokens of all leaves sit in one string (a page has thousands: one allocation each was
/// ~2% of a crawl's CPU, #27).
#[derive(Clone, Debug, Default)]
pub struct LeafTokens {
    /// Every token of every leaf, in order, concatenated.
    text: String,
    /// Where each token ends in `text`.
    ends: Vec<usize>,
    /// One past each leaf's last token in `ends`.
    leaf_ends: Vec<usize>,
}

impl LeafTokens {
    /// Tokenizes each leaf's text with the model's text pipeline.
    pub fn new(tok: &Tokenizer, leaves: &[String]) -> Self {
        let mut lt = LeafTokens {
            leaf_ends: Vec::with_capacity(leaves.len()),
            ..LeafTokens::default()
        };
        for l in leaves {
            tok.for_each_token(l, |t| {
                lt.text.push_str(t);
                lt.ends.push(lt.text.len());
            });
            lt.leaf_ends.push(lt.ends.len());
        }
        lt
    }

    /// The tokens of leaf `i`.
    fn leaf(&self, i: usize) -> impl Iterator<Item = &str> {
        let first = if i == 0 { 0 } else { self.leaf_ends[i - 1] };
        (first..self.leaf_ends[i]).map(move |j| {
            let from = if j == 0 { 0 } else { self.ends[j - 1] };
            &self.text[from..self.ends[j]]
        })
    }

    /// Features of the link whose anchor spans leaves `start..end` (empty for a leaf-less
    /// anchor at position `start`), given what the classifier said of the source page.
    pub fn link_features(
        &self,
        start: usize,
        end: usize,
        d_max: usize,
        source: &Source<'_>,
    ) -> Vec<u32> {
        let n = self.leaf_ends.len();
        let (start, end) = (start.min(n), end.min(n).max(start.min(n)));
        let (lo, hi) = (start.saturating_sub(d_max), (end + d_max).min(n));
        let tokens = match hi.checked_sub(1) {
            Some(last) if hi > lo => {
                self.leaf_ends[last] - lo.checked_sub(1).map_or(0, |p| self.leaf_ends[p])
            }
            _ => 0,
        };
        let mut f = Vec::with_capacity(tokens.min(MAX_FEATURES) + 8);
        let push = |leaf: usize, d: i32, f: &mut Vec<u32>| {
            // `token_feature(t, d)`, the offset's part of the hash taken once.
            let at_d = fnv(FNV_BASIS, &d.to_le_bytes());
            f.extend(self.leaf(leaf).map(|t| fnv(at_d, t.as_bytes())));
        };
        for leaf in start..end {
            push(leaf, 0, &mut f);
        }
        for k in 1..=d_max {
            if let Some(leaf) = start.checked_sub(k) {
                push(leaf, -(k as i32), &mut f);
            }
            if end + k - 1 < n {
                push(end + k - 1, k as i32, &mut f);
            }
        }
        f.truncate(MAX_FEATURES);
        let mut prefix = String::new();
        for seg in source.class.split('/').filter(|s| !s.is_empty()) {
            prefix.push('/');
            prefix.push_str(seg);
            f.push(class_feature(&prefix));
        }
        f.push(relevance_feature(source.relevance));
        if let Some(class) = source.anchor_class {
            let mut prefix = String::new();
            for seg in class.split('/').filter(|s| !s.is_empty()) {
                prefix.push('/');
                prefix.push_str(seg);
                f.push(fnv(class_feature(&prefix), b"anchor"));
            }
        }
        f
    }
}

/// What the page classifier said of the source page u, abstracted for the apprentice (§2.2.3).
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    /// u's best leaf path.
    pub class: &'a str,
    /// R(u), the probability of the good topics.
    pub relevance: f64,
    /// The classifier's best leaf for the link's anchor text, when it has words: a topic
    /// feature of the link itself that generalizes to anchor words never seen in training.
    pub anchor_class: Option<&'a str>,
}

/// The feature for R(u), bucketed at 0.1, 0.5 and 0.9.
pub fn relevance_feature(r: f64) -> u32 {
    let bucket: &[u8] = match r {
        r if r >= 0.9 => b"rel:3",
        r if r >= 0.5 => b"rel:2",
        r if r >= 0.1 => b"rel:1",
        _ => b"rel:0",
    };
    fnv(FNV_BASIS, bucket)
}

/// ln(c + 1) for the small counts most features have, computed once (the same `ln` calls,
/// so the same values as computing them each time).
static LN_COUNT: std::sync::LazyLock<Vec<f64>> =
    std::sync::LazyLock::new(|| (0..4096u32).map(|c| (f64::from(c) + 1.0).ln()).collect());

/// ln(c + 1) of a feature count (Laplace smoothing).
fn ln_count(c: u32) -> f64 {
    match LN_COUNT.get(c as usize) {
        Some(&l) => l,
        None => (f64::from(c) + 1.0).ln(),
    }
}

/// The two-bucket naive Bayes; Pr(high | features) is a link's priority.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Apprentice {
    /// Per feature, occurrences in [low, high] instances.
    counts: FxHashMap<u32, [u32; 2]>,
    /// Total feature occurrences per bucket.
    totals: [u64; 2],
    /// Instances per bucket.
    instances: [u64; 2],
    /// How far the crawl trusts the apprentice over the parent's relevance (the critic's
    /// weight, 0..=1; see [`Apprentice::blend`]); None until measured.
    #[serde(skip)]
    trust: Option<f64>,
}

/// Area under the ROC curve of predictions against outcomes (Mann-Whitney, ties count one
/// half); None when either outcome is missing. The one AUC of the crawler and its bench.
pub fn auc(mut pairs: Vec<(f64, bool)>) -> Option<f64> {
    let pos = pairs.iter().filter(|p| p.1).count();
    let neg = pairs.len() - pos;
    if pos == 0 || neg == 0 {
        return None;
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut rank_sum, mut i) = (0.0, 0);
    while i < pairs.len() {
        let j = i + pairs[i..].iter().take_while(|p| p.0 == pairs[i].0).count();
        let high = pairs[i..j].iter().filter(|p| p.1).count() as f64;
        rank_sum += high * (i + 1 + j) as f64 / 2.0;
        i = j;
    }
    let (pos, neg) = (pos as f64, neg as f64);
    Some((rank_sum - pos * (pos + 1.0) / 2.0) / (pos * neg))
}

/// How well predictions separate outcomes: 2 × AUC − 1 (the Gini coefficient), floored at 0;
/// None when either outcome is missing. Ties count one half.
pub fn skill(pairs: Vec<(f64, bool)>) -> Option<f64> {
    auc(pairs).map(|auc| (2.0 * auc - 1.0).max(0.0))
}

impl Apprentice {
    /// An untrained apprentice.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one training instance: the link's features and whether its target was relevant.
    pub fn add(&mut self, features: &[u32], high: bool) {
        let b = usize::from(high);
        self.instances[b] += 1;
        for &f in features {
            self.counts.entry(f).or_default()[b] += 1;
            self.totals[b] += 1;
        }
    }

    /// Instances seen per bucket, [low, high].
    pub fn instances(&self) -> [u64; 2] {
        self.instances
    }

    /// Sets the critic's weight of this apprentice (clamped to 0..=1).
    pub fn set_trust(&mut self, trust: f64) {
        self.trust = Some(trust.clamp(0.0, 1.0));
    }

    /// The critic's weight as measured, None before it was.
    pub fn measured_trust(&self) -> Option<f64> {
        self.trust
    }

    /// The critic's weight (1 when never measured: an apprentice used on its own).
    pub fn trust(&self) -> f64 {
        self.trust.unwrap_or(1.0)
    }

    /// A link's priority: Pr(high | features) blended with the `baseline` (soft focus's
    /// inherited relevance) by the apprentice's trust, so an apprentice that does not yet
    /// separate good links from bad leaves the crawl as soft focus would run it.
    pub fn blend(&self, features: &[u32], baseline: f64) -> f64 {
        let t = self.trust();
        t * self.p_high(features) + (1.0 - t) * baseline
    }

    /// True once both buckets have instances, so predictions mean something.
    pub fn is_trained(&self) -> bool {
        self.instances[0] > 0 && self.instances[1] > 0
    }

    /// Pr(high | features), with Laplace smoothing; 0.5 when untrained.
    pub fn p_high(&self, features: &[u32]) -> f64 {
        if !self.is_trained() {
            return 0.5;
        }
        let v = self.counts.len() as f64 + 1.0;
        let n = self.instances[0] + self.instances[1];
        let mut score = [0.0f64; 2];
        let mut seen = 0usize;
        let mut evidence = [0.0f64; 2];
        let denom = [
            (self.totals[0] as f64 + v).ln(),
            (self.totals[1] as f64 + v).ln(),
        ];
        // One lookup per feature for both buckets; each bucket's sum is taken in the same
        // order and with the same operations as bucket by bucket, so the result is the same.
        for f in features {
            // Features never seen in training carry no evidence; counting them would
            // favour whichever bucket has fewer total occurrences.
            if let Some(c) = self.counts.get(f) {
                evidence[0] += ln_count(c[0]) - denom[0];
                evidence[1] += ln_count(c[1]) - denom[1];
                seen += 1;
            }
        }
        // The features of one link are far from independent (the same tokens recur at several
        // offsets), so their summed evidence is scaled to that of a few features: NB's
        // overconfidence on long feature lists otherwise lets generic tokens swamp the rest.
        let scale = EVIDENCE_FEATURES / seen.max(1) as f64;
        for (b, s) in score.iter_mut().enumerate() {
            *s = ((self.instances[b] as f64 + 1.0) / (n as f64 + 2.0)).ln() + scale * evidence[b];
        }
        // Pr(high) = 1 / (1 + exp(low - high)), stable for large differences.
        1.0 / (1.0 + (score[0] - score[1]).exp())
    }
}

/// First bytes of an apprentice file.
pub const APPRENTICE_MAGIC: &[u8; 8] = b"FORAGERA";
/// Current apprentice format version.
const APPRENTICE_VERSION: u16 = 1;

/// The apprentice's bytes: counts sorted by feature, features delta-coded (postcard varints),
/// so a FOLDOC crawl's apprentice is a few hundred kilobytes.
#[derive(Serialize, Deserialize)]
struct ApprenticeFile {
    instances: [u64; 2],
    /// (feature delta from the previous feature, low count, high count).
    counts: Vec<(u32, u32, u32)>,
}

impl Apprentice {
    /// Deterministic bytes of the apprentice (what the host sends the browser).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut sorted: Vec<(u32, [u32; 2])> = self.counts.iter().map(|(&f, &c)| (f, c)).collect();
        sorted.sort_unstable_by_key(|&(f, _)| f);
        let mut prev = 0;
        let counts = sorted
            .into_iter()
            .map(|(f, [lo, hi])| {
                let d = f - prev;
                prev = f;
                (d, lo, hi)
            })
            .collect();
        let file = ApprenticeFile {
            instances: self.instances,
            counts,
        };
        let mut out = APPRENTICE_MAGIC.to_vec();
        out.extend_from_slice(&APPRENTICE_VERSION.to_le_bytes());
        // Serializing plain structs into a Vec cannot fail.
        out.extend(postcard::to_stdvec(&file).unwrap_or_default());
        out
    }

    /// Reads an apprentice from its bytes; corrupt or foreign bytes give an error, never a panic.
    pub fn from_bytes(bytes: &[u8]) -> crate::Result<Apprentice> {
        let bad = |why: &str| crate::Error::BadModel(format!("apprentice: {why}"));
        let body = bytes
            .strip_prefix(APPRENTICE_MAGIC.as_slice())
            .ok_or_else(|| bad("not a Forager apprentice"))?;
        let (version, body) = body.split_at_checked(2).ok_or_else(|| bad("truncated"))?;
        if version != APPRENTICE_VERSION.to_le_bytes() {
            return Err(bad("unsupported version"));
        }
        let file: ApprenticeFile = postcard::from_bytes(body).map_err(|e| bad(&e.to_string()))?;
        let mut a = Apprentice {
            instances: file.instances,
            ..Apprentice::default()
        };
        let mut f: u32 = 0;
        for (i, (d, lo, hi)) in file.counts.into_iter().enumerate() {
            f = f
                .checked_add(d)
                .ok_or_else(|| bad("feature out of range"))?;
            if i > 0 && d == 0 {
                return Err(bad("features not increasing"));
            }
            a.totals[0] += u64::from(lo);
            a.totals[1] += u64::from(hi);
            a.counts.insert(f, [lo, hi]);
        }
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::TextOptions;

    #[test]
    fn skill_is_gini_floored_at_zero_and_trust_blends_with_the_baseline() {
        assert_eq!(skill(vec![(0.9, true), (0.1, false)]), Some(1.0));
        assert_eq!(skill(vec![(0.1, true), (0.9, false)]), Some(0.0));
        assert_eq!(skill(vec![(0.5, true), (0.5, false)]), Some(0.0));
        assert_eq!(skill(vec![(0.5, true)]), None);
        // 3 of 4 pairs ordered right: AUC .75, skill .5.
        let pairs = vec![(0.9, true), (0.4, true), (0.6, false), (0.1, false)];
        assert!((skill(pairs).unwrap() - 0.5).abs() < 1e-12);
        let mut a = Apprentice::new();
        a.add(&[1], true);
        a.add(&[2], false);
        let p = a.p_high(&[1]);
        assert!(p > 0.5);
        // Unmeasured: the apprentice alone; no skill: the baseline alone; between: the mix.
        assert!((a.blend(&[1], 0.2) - p).abs() < 1e-12);
        a.set_trust(0.0);
        assert!((a.blend(&[1], 0.2) - 0.2).abs() < 1e-12);
        a.set_trust(0.25);
        assert!((a.blend(&[1], 0.2) - (0.25 * p + 0.75 * 0.2)).abs() < 1e-12);
        a.set_trust(7.0);
        assert!((a.trust() - 1.0).abs() < 1e-12);
    }

    /// Pr(high) as the paper's formula reads, bucket by bucket and `ln` each time: the
    /// one-lookup, tabled `p_high` must give the very same bits (fetch orders depend on them).
    fn p_high_by_the_book(a: &Apprentice, features: &[u32]) -> f64 {
        let v = a.counts.len() as f64 + 1.0;
        let n = a.instances[0] + a.instances[1];
        let (mut evidence, mut seen) = ([0.0f64; 2], 0usize);
        for (b, e) in evidence.iter_mut().enumerate() {
            let denom = (a.totals[b] as f64 + v).ln();
            for f in features {
                if let Some(c) = a.counts.get(f) {
                    *e += (f64::from(c[b]) + 1.0).ln() - denom;
                    seen += usize::from(b == 0);
                }
            }
        }
        let scale = EVIDENCE_FEATURES / seen.max(1) as f64;
        let s = |b: usize| {
            ((a.instances[b] as f64 + 1.0) / (n as f64 + 2.0)).ln() + scale * evidence[b]
        };
        1.0 / (1.0 + (s(0) - s(1)).exp())
    }

    #[test]
    fn p_high_gives_the_bits_of_the_formula() {
        let mut a = Apprentice::new();
        // Counts below and above the table of logarithms, features seen and unseen.
        for i in 0..6000u32 {
            a.add(&[i % 7, i % 13 + 100, i % 3000 + 1000, 99_999], i % 5 == 0);
        }
        for i in 0..3000u32 {
            let f = [i % 7, 5000 + i, i + 1000, 99_999, i % 13 + 100, 77_777];
            let (got, want) = (a.p_high(&f), p_high_by_the_book(&a, &f));
            assert_eq!(got.to_bits(), want.to_bits(), "{f:?}");
        }
    }

    #[test]
    fn offsets_follow_the_leaf_numbering() {
        let tok = Tokenizer::new(TextOptions::default());
        let leaves: Vec<String> = ["alpha", "beta", "anchor words", "gamma", "delta"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let lt = LeafTokens::new(&tok, &leaves);
        let src = Source {
            class: "/A/B",
            relevance: 0.95,
            anchor_class: None,
        };
        let f = lt.link_features(2, 3, 1, &src);
        let expect = vec![
            token_feature("anchor", 0),
            token_feature("words", 0),
            token_feature("beta", -1),
            token_feature("gamma", 1),
            class_feature("/A"),
            class_feature("/A/B"),
            relevance_feature(0.95),
        ];
        assert_eq!(f, expect);
        // An empty anchor at position 2: leaf 1 is at -1, leaf 2 at +1.
        let none = Source {
            class: "",
            relevance: 0.0,
            anchor_class: None,
        };
        let g = lt.link_features(2, 2, 1, &none);
        assert_eq!(
            g,
            vec![
                token_feature("beta", -1),
                token_feature("anchor", 1),
                token_feature("words", 1),
                relevance_feature(0.0)
            ]
        );
    }

    #[test]
    fn learns_which_features_predict_relevance() {
        let mut a = Apprentice::new();
        assert_eq!(a.p_high(&[1, 2]), 0.5);
        for _ in 0..50 {
            a.add(&[token_feature("resources", -1), 7], true);
            a.add(&[token_feature("random", -1), 7], false);
        }
        assert!(a.p_high(&[token_feature("resources", -1)]) > 0.9);
        assert!(a.p_high(&[token_feature("random", -1)]) < 0.1);
        assert!((a.p_high(&[7]) - 0.5).abs() < 0.05);
    }

    #[test]
    fn bytes_round_trip_and_refuse_corruption() {
        let mut a = Apprentice::new();
        for i in 0..200u32 {
            a.add(&[i * 7919, token_feature("x", (i % 5) as i32)], i % 3 == 0);
        }
        let bytes = a.to_bytes();
        let b = Apprentice::from_bytes(&bytes).unwrap();
        assert_eq!(b.to_bytes(), bytes);
        assert_eq!(b.instances(), a.instances());
        let f = [7919 * 3, token_feature("x", 3)];
        assert_eq!(b.p_high(&f), a.p_high(&f));
        assert!(Apprentice::from_bytes(b"FORAGERM\x01\x00").is_err());
        for cut in 0..bytes.len() {
            let _ = Apprentice::from_bytes(&bytes[..cut]);
        }
        let mut flipped = bytes.clone();
        flipped[12] ^= 0xff;
        let _ = Apprentice::from_bytes(&flipped);
    }
}
