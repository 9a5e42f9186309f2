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

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len().max(1) as f64;
    let m = xs.iter().sum::<f64>() / n;
    let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, v)
}

/// Diffusion: the mean relevance of the last window is significantly below the first window's
/// (Welch's z over the two windows), and the later half of all windows is on average lower
/// than the earlier half by at least `min_drop` (a systematic fall, not a dip that recovered).
/// `relevance` is R(d) of the fetched pages in fetch order.
pub fn diffusion(relevance: &[f64], p: &MonitorParams) -> Option<Alarm> {
    let w = p.window;
    if relevance.len() < 3 * w {
        return None;
    }
    let first = &relevance[..w];
    let last = &relevance[relevance.len() - w..];
    let (m1, v1) = mean_var(first);
    let (m2, v2) = mean_var(last);
    let se = (v1 / w as f64 + v2 / w as f64).sqrt().max(1e-9);
    let z = (m1 - m2) / se;
    let means: Vec<f64> = relevance
        .chunks(w)
        .filter(|c| c.len() == w)
        .map(|c| mean_var(c).0)
        .collect();
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
    let w = p.window.min(relevance.len());
    if w == 0 {
        return None;
    }
    let last = &relevance[relevance.len() - w..];
    let share = last.iter().filter(|&&r| r >= p.relevant).count() as f64 / w as f64;
    if relevance.len() >= p.window && share < p.stagnant_share {
        return Some(Alarm {
            kind: "stagnation",
            detail: format!(
                "only {:.0}% of the last {w} pages were relevant",
                share * 100.0
            ),
        });
    }
    (frontier < p.dry_frontier && relevance.len() >= w).then(|| Alarm {
        kind: "stagnation",
        detail: format!("the frontier is drying up ({frontier} URLs left)"),
    })
}

/// The alarms that hold for a crawl: stagnation is the threat of hard focus, diffusion of
/// the soft kinds (focused-crawling-1999 §4.3).
pub fn alarms(relevance: &[f64], frontier: i64, hard: bool, p: &MonitorParams) -> Vec<Alarm> {
    if hard {
        stagnation(relevance, frontier, p).into_iter().collect()
    } else {
        diffusion(relevance, p).into_iter().collect()
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
