//! Training of one internal node: TAPER-style Fisher feature selection, then a multinomial
//! naive Bayes over the node's children with Lidstone smoothing (focused-crawling-1999 §3.1).
//!
//! Each child's term distribution is shrunk towards the node's own (McCallum et al. 1998,
//! "Improving text classification by shrinkage in a hierarchy of classes"): with ~30 examples
//! per topic the children's estimates are noisy, and the parent's pooled estimate steadies them.
//!
//! Every example weighs the same: term counts enter θ as the example's relative frequencies,
//! scaled to the node's average example length, so one long page cannot outvote the short
//! ones of its topic (length normalisation; on FOLDOC it raised leaf accuracy by 3 points).

use crate::stats::{TopicStats, FIXED_ONE};
use crate::taxonomy::TopicId;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// Training parameters, stored in the model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainOptions {
    /// Features kept per internal node (the top-k terms by Fisher index).
    pub features_per_node: u32,
    /// Lidstone smoothing constant added to every (length-normalised) term count (1.0 is Laplace).
    pub lidstone: f64,
    /// A term must occur in at least this many example documents under a node to be a feature.
    pub min_docs: u32,
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            features_per_node: 10_000,
            // Chosen on half of FOLDOC's held-out pages (0.5: .473, 1: .482, 1.5: .485, 2: .484).
            lidstone: 1.5,
            min_docs: 1,
        }
    }
}

impl TrainOptions {
    /// Checks the options are usable (they may come from untrusted bytes).
    pub fn validate(&self) -> Result<(), String> {
        if !(self.lidstone.is_finite() && self.lidstone > 0.0 && self.lidstone <= 1e6) {
            return Err(format!("lidstone {} out of range", self.lidstone));
        }
        if self.features_per_node == 0 || self.features_per_node > 1_000_000 {
            return Err(format!(
                "features_per_node {} out of range",
                self.features_per_node
            ));
        }
        Ok(())
    }
}

/// Weight of a child's own estimate against its parent's pooled one (FOLDOC leaf accuracy:
/// 1.0 → .489, 0.9 → .494, 0.8 → .493).
pub const SHRINKAGE: f64 = 0.9;

/// The trained naive Bayes of one internal node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeModel {
    /// The internal node.
    pub topic: TopicId,
    /// Its children, the classes of this node's Bayes classifier.
    pub children: Vec<TopicId>,
    /// log Pr[child | node].
    pub log_prior: Vec<f64>,
    /// Selected feature term ids, best first.
    pub features: Vec<u32>,
    /// log θ(child, feature), row-major by feature: `log_theta[f * children.len() + c]`.
    pub log_theta: Vec<f64>,
}

/// Fisher's discriminant index of every candidate term over the children (TAPER):
/// between-class scatter of the mean relative frequencies over the within-class scatter.
fn fisher_scores(child_stats: &[&TopicStats], min_docs: u32) -> FxHashMap<u32, f64> {
    struct Acc {
        sum_mu: f64,
        sum_mu2: f64,
        within: f64,
        docs: u64,
    }
    let active = child_stats.iter().filter(|s| s.docs > 0).count() as f64;
    let mut acc: FxHashMap<u32, Acc> = FxHashMap::default();
    for s in child_stats.iter().filter(|s| s.docs > 0) {
        let m = s.docs as f64;
        for (&t, st) in &s.terms {
            let mu = st.sum_x as f64 / FIXED_ONE / m;
            let mean_sq = st.sum_xx as f64 / FIXED_ONE / m;
            let a = acc.entry(t).or_insert(Acc {
                sum_mu: 0.0,
                sum_mu2: 0.0,
                within: 0.0,
                docs: 0,
            });
            a.sum_mu += mu;
            a.sum_mu2 += mu * mu;
            a.within += (mean_sq - mu * mu).max(0.0);
            a.docs += st.docs;
        }
    }
    acc.into_iter()
        .filter(|(_, a)| a.docs >= u64::from(min_docs))
        .map(|(t, a)| {
            // Sum over unordered pairs of (mu_i - mu_j)^2 = k * sum(mu^2) - (sum mu)^2.
            let between = (active * a.sum_mu2 - a.sum_mu * a.sum_mu).max(0.0);
            (t, between / (a.within + 1e-12))
        })
        .collect()
}

/// Trains the node `topic` from its children's subtree statistics.
///
/// `term_name` orders ties by term text so that the result does not depend on term ids.
pub fn train_node(
    topic: TopicId,
    children: &[TopicId],
    child_stats: &[&TopicStats],
    opts: &TrainOptions,
    term_name: impl Fn(u32) -> String,
) -> NodeModel {
    let k = children.len();
    let total_docs: u64 = child_stats.iter().map(|s| s.docs).sum();
    let log_prior = child_stats
        .iter()
        .map(|s| ((s.docs as f64 + 1.0) / (total_docs as f64 + k as f64)).ln())
        .collect();
    let active = child_stats.iter().filter(|s| s.docs > 0).count();
    let mut features: Vec<u32> = Vec::new();
    if active >= 2 {
        let mut scored: Vec<(f64, String, u32)> = fisher_scores(child_stats, opts.min_docs)
            .into_iter()
            .map(|(t, s)| (s, term_name(t), t))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        scored.truncate(opts.features_per_node as usize);
        features = scored.into_iter().map(|(_, _, t)| t).collect();
    }
    let nf = features.len() as f64;

    // Average example length under this node, the unit of the normalised counts.
    let all_tokens: u64 = child_stats
        .iter()
        .flat_map(|s| s.terms.values())
        .map(|st| st.count)
        .sum();
    let avg_len = all_tokens as f64 / total_docs.max(1) as f64;
    // Normalised counts, per child, of each feature (looked up once).
    let counts: Vec<Vec<f64>> = (child_stats.iter())
        .map(|s| {
            (features.iter())
                .map(|t| (s.terms.get(t)).map_or(0.0, |st| st.sum_x as f64 / FIXED_ONE * avg_len))
                .collect()
        })
        .collect();
    // The node's pooled distribution over the features, the shrinkage target.
    let pooled: Vec<f64> = (0..features.len())
        .map(|f| counts.iter().map(|c| c[f]).sum::<f64>() + opts.lidstone)
        .collect();
    let pooled_total: f64 = pooled.iter().sum();
    let mut log_theta = vec![0.0; features.len() * k];
    for (c, own_counts) in counts.iter().enumerate() {
        let total: f64 = own_counts.iter().sum::<f64>() + opts.lidstone * nf;
        for (f, n) in own_counts.iter().enumerate() {
            let own = (n + opts.lidstone) / total;
            let p = SHRINKAGE * own + (1.0 - SHRINKAGE) * pooled[f] / pooled_total;
            log_theta[f * k + c] = p.ln();
        }
    }
    NodeModel {
        topic,
        children: children.to_vec(),
        log_prior,
        features,
        log_theta,
    }
}
