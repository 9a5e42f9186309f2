//! Classifier accuracy on a mini-web: train on examples.tsv, test on every other labelled page.
//! The hierarchical classifier is compared with a flat naive Bayes over the leaves.

use crate::miniweb::MiniWeb;
use crate::parse::page_text;
use forager_classifier::{Model, Scratch, Taxonomy, TrainOptions};
use serde::Serialize;
use std::collections::HashSet;

/// Accuracy figures of one classifier on the held-out pages.
#[derive(Clone, Debug, Serialize)]
pub struct Accuracy {
    /// Classifier name.
    pub name: String,
    /// Pages tested.
    pub pages: usize,
    /// Share of pages whose best leaf is one of their labels.
    pub leaf_accuracy: f64,
    /// Share of pages whose best leaf's top-level topic is a top-level topic of their labels.
    pub top_accuracy: f64,
    /// Micro-averaged F1 of the best leaf against the label sets.
    pub micro_f1: f64,
    /// Features (distinct terms) the classifier uses.
    pub features: usize,
}

fn top(path: &str) -> &str {
    let p = path.trim_start_matches('/');
    p.split('/').next().unwrap_or("")
}

/// The held-out pages: labelled, not examples, sorted by URL; with their visible text.
pub fn held_out(web: &MiniWeb) -> Vec<(String, Vec<String>, String)> {
    let examples: HashSet<&str> = web.examples.iter().map(|(_, u)| u.as_str()).collect();
    let mut urls: Vec<&String> = web
        .labels
        .keys()
        .filter(|u| !examples.contains(u.as_str()))
        .collect();
    urls.sort();
    urls.into_iter()
        .filter_map(|u| {
            let html = web.read_page(u).ok()?;
            Some((u.clone(), web.labels[u].clone(), page_text(&html).text))
        })
        .collect()
}

/// Scores `model` on `pages`; `leaf_of` maps the model's best leaf back to a taxonomy path.
pub fn score(
    name: &str,
    model: &mut Model,
    pages: &[(String, Vec<String>, String)],
    leaf_of: impl Fn(&str) -> String,
) -> Accuracy {
    let c = model.classifier();
    let mut scratch = Scratch::new();
    let (mut leaf_ok, mut top_ok, mut labels_total) = (0usize, 0usize, 0usize);
    for (_, labels, text) in pages {
        let best = leaf_of(&c.classify(text, &mut scratch).best_leaf);
        labels_total += labels.len();
        if labels.contains(&best) {
            leaf_ok += 1;
        }
        if labels.iter().any(|l| top(l) == top(&best)) {
            top_ok += 1;
        }
    }
    let n = pages.len().max(1) as f64;
    let precision = leaf_ok as f64 / n;
    let recall = leaf_ok as f64 / labels_total.max(1) as f64;
    Accuracy {
        name: name.into(),
        pages: pages.len(),
        leaf_accuracy: precision,
        top_accuracy: top_ok as f64 / n,
        micro_f1: if precision + recall > 0.0 {
            2.0 * precision * recall / (precision + recall)
        } else {
            0.0
        },
        features: c.feature_count(),
    }
}

/// The flat baseline: the same naive Bayes with every leaf a child of the root and no feature
/// selection to speak of (all terms seen in two or more examples), trained on the same examples.
pub fn flat_from_miniweb(web: &MiniWeb, hier: &Model) -> Model {
    let opts = TrainOptions {
        features_per_node: 1_000_000,
        ..hier.train_options()
    };
    let mut flat = Model::new(Taxonomy::new("flat"), hier.text_options(), opts);
    for (path, url) in &web.examples {
        let Ok(html) = web.read_page(url) else {
            continue;
        };
        let name = flat_name(path);
        let topic = match flat.taxonomy().find(&format!("/{name}")) {
            Ok(t) => t,
            Err(_) => match flat.add_topic(forager_classifier::ROOT, &name, path) {
                Ok(t) => t,
                Err(_) => continue,
            },
        };
        let _ = flat.add_example(topic, url, &page_text(&html).text);
    }
    flat
}

/// Maps a flat model's leaf (`/A|B`) back to the taxonomy path (`/A/B`).
pub fn unflatten(leaf: &str) -> String {
    leaf.replace('|', "/")
}

/// Leaf path encoded as one flat segment (`/A/B` → `A|B`) and back.
pub fn flat_name(path: &str) -> String {
    path.trim_start_matches('/').replace('/', "|")
}
