//! Crawl monitoring (focused-crawling-1999 §4.3): the alarms the paper described but left to
//! the operator's SQL — *stagnation* (hard focus stops finding relevant pages, the frontier
//! dries up) and *diffusion* (soft focus drifts to less and less relevant pages) — as
//! statistical tests over windows of the fetch sequence. Pure functions; the crawl loop, the
//! report and the extension all call them.

use serde::Serialize;

/// An alarm raised on a crawl.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Alarm {
    /// `"stagnation"` or `"diffusion"`.
    pub kind: &'static str,
    /// What was seen, for a person.
    pub detail: String,
}

/// Thresholds of the tests.
#[derive(Clone, Debug)]
pub struct MonitorParams {
    /// Pages per window.
    pub window: usize,
    /// Relevance at or above which a page counts as relevant.
    pub relevant: f64,
    /// Stagnation: relevant share of the last window below this...
    pub stagnant_share: f64,
    /// ...or a frontier smaller than this many URLs.
    pub dry_frontier: i64,
    /// Diffusion: one-sided significance level of the fall in mean relevance.
    pub alpha_z: f64,
    /// Diffusion: the fall must also be at least this large (absolute, in mean relevance).
    pub min_drop: f64,
}

impl Default for MonitorParams {
    fn default() -> Self {
        MonitorParams {
            window: 200,
            relevant: 0.5,
            stagnant_share: 0.05,
            dry_frontier: 10,
            // z for a one-sided p of 0.001: diffusion must be clear, not noise.
            alpha_z: 3.09,
            min_drop: 0.1,
        }
    }
}

fn mean_var<'a>(xs: impl Iterator<Item = &'a f64> + Clone) -> (f64, f64) {
    let n = xs.clone().count().max(1) as f64;
    let m = xs.clone().sum::<f64>() / n;
    let v = xs.map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, v)
}

/// Chunk means a crawl's [`History`] keeps at most: 32 KB, whatever the crawl's length.
pub const MAX_CHUNKS: usize = 4096;

/// R(d) of a crawl's fetched pages in fetch order, in bounded memory: what the alarms read.
/// It keeps the first window, the latest window, and the mean of every chunk of pages; when
/// `max_chunks` means are kept, neighbours are merged and chunks are twice as long from then
/// on. Until the first merge the alarms are exactly those over the whole sequence.
#[derive(Clone, Debug)]
pub struct History {
    window: usize,
    first: Vec<f64>,
    last: std::collections::VecDeque<f64>,
    /// Means of the complete chunks of `chunk` pages, in order.
    means: Vec<f64>,
    chunk: usize,
    /// Sum and count of the chunk being filled.
    partial: (f64, usize),
    len: u64,
    max_chunks: usize,
}

impl History {
    /// An empty history of windows of `window` pages keeping at most `max_chunks` means
    /// (at least 2).
    pub fn new(window: usize, max_chunks: usize) -> Self {
        let window = window.max(1);
        History {
            window,
            first: Vec::with_capacity(window),
            last: std::collections::VecDeque::with_capacity(window),
            means: Vec::new(),
            chunk: window,
            partial: (0.0, 0),
            len: 0,
            max_chunks: max_chunks.max(2) & !1,
        }
    }

    /// The whole of `relevance`, with no bound on its means (exact alarms).
    pub fn of(relevance: &[f64], window: usize) -> Self {
        let mut h = History::new(window, usize::MAX);
        relevance.iter().for_each(|&r| h.push(r));
        h
    }

    /// One more fetched page's R(d).
    pub fn push(&mut self, r: f64) {
        self.len += 1;
        if self.first.len() < self.window {
            self.first.push(r);
        }
        if self.last.len() == self.window {
            self.last.pop_front();
        }
        self.last.push_back(r);
        self.partial.0 += r;
        self.partial.1 += 1;
        if self.partial.1 == self.chunk {
            self.means.push(self.partial.0 / self.chunk as f64);
            self.partial = (0.0, 0);
            if self.means.len() >= self.max_chunks {
                self.merge();
            }
        }
    }

    /// Halves the means kept: each pair of neighbours becomes one chunk twice as long.
    fn merge(&mut self) {
        self.means = (self.means.chunks_exact(2))
            .map(|p| (p[0] + p[1]) / 2.0)
            .collect();
        self.chunk *= 2;
    }

    /// Pages pushed so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// No page pushed yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Values held, whatever the crawl's length: at most 2 windows and `max_chunks` means.
    pub fn held(&self) -> usize {
        self.first.len() + self.last.len() + self.means.len()
    }

    /// Mean R(d) of the latest `n` pages (at most a window's).
    pub fn recent_mean(&self, n: usize) -> f64 {
        let k = n.min(self.last.len());
        self.last.iter().rev().take(k).sum::<f64>() / k.max(1) as f64
    }
}

/// Diffusion: the mean relevance of the last window is significantly below the first window's
/// (Welch's z over the two windows), and the later half of all windows is on average lower
/// than the earlier half by at least `min_drop` (a systematic fall, not a dip that recovered).
/// `relevance` is R(d) of the fetched pages in fetch order.
pub fn diffusion(relevance: &[f64], p: &MonitorParams) -> Option<Alarm> {
    diffusion_in(&History::of(relevance, p.window), p)
}

/// [`diffusion`] over a crawl's bounded history (its window is `p.window`).
pub fn diffusion_in(h: &History, p: &MonitorParams) -> Option<Alarm> {
    let w = h.window;
    if h.len < 3 * w as u64 {
        return None;
    }
    let (m1, v1) = mean_var(h.first.iter());
    let (m2, v2) = mean_var(h.last.iter());
    let se = (v1 / w as f64 + v2 / w as f64).sqrt().max(1e-9);
    let z = (m1 - m2) / se;
    let means = &h.means;
    let half = means.len() / 2;
    let early = means[..half].iter().sum::<f64>() / half.max(1) as f64;
    let late = means[half..].iter().sum::<f64>() / (means.len() - half).max(1) as f64;
    (z > p.alpha_z && m1 - m2 >= p.min_drop && early - late >= p.min_drop).then(|| Alarm {
        kind: "diffusion",
        detail: format!(
            "mean relevance fell from {m1:.2} (first {w} pages) to {m2:.2} (last {w}); z = {z:.1}"
        ),
    })
}

/// Stagnation: the last window brought almost no relevant pages, or the frontier is drying up
/// while relevant pages are rare.
pub fn stagnation(relevance: &[f64], frontier: i64, p: &MonitorParams) -> Option<Alarm> {
    stagnation_in(&History::of(relevance, p.window), frontier, p)
}

/// [`stagnation`] over a crawl's bounded history (its window is `p.window`).
pub fn stagnation_in(h: &History, frontier: i64, p: &MonitorParams) -> Option<Alarm> {
    let w = h.last.len();
    if w == 0 {
        return None;
    }
    let share = h.last.iter().filter(|&&r| r >= p.relevant).count() as f64 / w as f64;
    if h.len >= p.window as u64 && share < p.stagnant_share {
        return Some(Alarm {
            kind: "stagnation",
            detail: format!(
                "only {:.0}% of the last {w} pages were relevant",
                share * 100.0
            ),
        });
    }
    (frontier < p.dry_frontier).then(|| Alarm {
        kind: "stagnation",
        detail: format!("the frontier is drying up ({frontier} URLs left)"),
    })
}

/// The alarms that hold for a crawl: stagnation is the threat of hard focus, diffusion of
/// the soft kinds (focused-crawling-1999 §4.3).
pub fn alarms(relevance: &[f64], frontier: i64, hard: bool, p: &MonitorParams) -> Vec<Alarm> {
    alarms_in(&History::of(relevance, p.window), frontier, hard, p)
}

/// [`alarms`] over a crawl's bounded history (its window is `p.window`).
pub fn alarms_in(h: &History, frontier: i64, hard: bool, p: &MonitorParams) -> Vec<Alarm> {
    if hard {
        stagnation_in(h, frontier, p).into_iter().collect()
    } else {
        diffusion_in(h, p).into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic noise in [0, 1).
    fn noise(i: usize) -> f64 {
        ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 / (1u64 << 53) as f64
    }

    #[test]
    fn a_steady_noisy_crawl_raises_nothing() {
        let r: Vec<f64> = (0..2000)
            .map(|i| if noise(i) < 0.4 { 1.0 } else { 0.0 })
            .collect();
        assert!(alarms(&r, 5000, false, &MonitorParams::default()).is_empty());
        assert!(alarms(&r, 5000, true, &MonitorParams::default()).is_empty());
    }

    #[test]
    fn a_systematic_fall_is_diffusion_a_dip_is_not() {
        let falling: Vec<f64> = (0..2000)
            .map(|i| {
                if noise(i) < 0.8 - 0.7 * i as f64 / 2000.0 {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        let a = diffusion(&falling, &MonitorParams::default()).expect("diffusion");
        assert!(a.detail.contains("fell"));
        // A dip in the middle that recovers is noise, not diffusion.
        let dip: Vec<f64> = (0..2000)
            .map(|i| {
                let p = if (800..1200).contains(&i) { 0.1 } else { 0.6 };
                if noise(i) < p {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        assert!(diffusion(&dip, &MonitorParams::default()).is_none());
    }

    /// A crawl of `n` pages whose share of relevant pages goes from `from` to `to`, with a
    /// dip to 0.1 over its middle fifth when `dip`.
    fn crawl(n: usize, from: f64, to: f64, dip: bool) -> Vec<f64> {
        (0..n)
            .map(|i| {
                let mut p = from + (to - from) * i as f64 / n as f64;
                if dip && (2 * n / 5..3 * n / 5).contains(&i) {
                    p = 0.1;
                }
                if noise(i) < p {
                    1.0
                } else {
                    0.0
                }
            })
            .collect()
    }

    #[test]
    fn the_bounded_history_raises_the_same_alarms_until_it_merges() {
        let p = MonitorParams::default();
        for r in [
            crawl(2000, 0.8, 0.1, false),
            crawl(2000, 0.6, 0.6, true),
            crawl(5000, 0.5, 0.5, false),
            crawl(900, 0.3, 0.0, false),
            crawl(150, 0.9, 0.9, false),
        ] {
            let mut h = History::new(p.window, MAX_CHUNKS);
            r.iter().for_each(|&x| h.push(x));
            for hard in [false, true] {
                for frontier in [3, 5000] {
                    assert_eq!(
                        alarms_in(&h, frontier, hard, &p),
                        alarms(&r, frontier, hard, &p)
                    );
                }
            }
            assert_eq!(h.recent_mean(100), {
                let t = &r[r.len().saturating_sub(100)..];
                t.iter().sum::<f64>() / t.len() as f64
            });
        }
    }

    #[test]
    fn a_million_pages_are_watched_in_bounded_memory() {
        let p = MonitorParams::default();
        let watch = |r: &[f64]| {
            let mut h = History::new(p.window, MAX_CHUNKS);
            let mut most = 0;
            for &x in r {
                h.push(x);
                most = most.max(h.held());
            }
            assert_eq!(h.len(), r.len() as u64);
            assert!(most <= 2 * p.window + MAX_CHUNKS, "{most} values held");
            diffusion_in(&h, &p)
        };
        // 1.6 M pages: 8,000 chunks of 200 merged to 4,000 of 400, and some held beside.
        let falling = crawl(1_600_000, 0.8, 0.1, false);
        assert!(watch(&falling).is_some(), "the fall is diffusion");
        assert!(diffusion(&falling, &p).is_some());
        let dip = crawl(1_600_000, 0.6, 0.6, true);
        assert!(watch(&dip).is_none(), "a dip that recovered is not");
    }

    #[test]
    fn no_relevant_pages_or_a_dry_frontier_is_stagnation() {
        let mut r = vec![1.0; 300];
        r.extend(vec![0.0; 300]);
        assert_eq!(
            stagnation(&r, 1000, &MonitorParams::default())
                .unwrap()
                .kind,
            "stagnation"
        );
        let healthy: Vec<f64> = (0..400)
            .map(|i| if i % 3 == 0 { 1.0 } else { 0.0 })
            .collect();
        assert!(stagnation(&healthy, 1000, &MonitorParams::default()).is_none());
        assert!(stagnation(&healthy, 2, &MonitorParams::default()).is_some());
    }
}
