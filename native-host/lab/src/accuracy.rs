//! Classifier accuracy on a mini-web: train on examples.tsv, test on every other labelled page.
//! The hierarchical classifier is compared with a flat naive Bayes over the leaves.

use crate::miniweb::MiniWeb;
use forager_classifier::{Model, Scratch, Taxonomy, TrainOptions};
use forager_core::parse::page_text;
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
pub fn held_out(web: &MiniWeb) -> Vec<HeldOut> {
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

/// Correct answers of a classifier over some pages.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    pages: usize,
    leaf_ok: usize,
    top_ok: usize,
    labels: usize,
}

impl Tally {
    fn add(&mut self, o: Tally) {
        self.pages += o.pages;
        self.leaf_ok += o.leaf_ok;
        self.top_ok += o.top_ok;
        self.labels += o.labels;
    }

    fn accuracy(&self, name: &str, features: usize) -> Accuracy {
        let n = self.pages.max(1) as f64;
        let precision = self.leaf_ok as f64 / n;
        let recall = self.leaf_ok as f64 / self.labels.max(1) as f64;
        Accuracy {
            name: name.into(),
            pages: self.pages,
            leaf_accuracy: precision,
            top_accuracy: self.top_ok as f64 / n,
            micro_f1: if precision + recall > 0.0 {
                2.0 * precision * recall / (precision + recall)
            } else {
                0.0
            },
            features,
        }
    }
}

fn tally(model: &mut Model, pages: &[&HeldOut], leaf_of: &impl Fn(&str) -> String) -> Tally {
    let c = model.classifier();
    let mut scratch = Scratch::new();
    let mut t = Tally::default();
    for (_, labels, text) in pages {
        let best = leaf_of(&c.classify(text, &mut scratch).best_leaf);
        t.pages += 1;
        t.labels += labels.len();
        t.leaf_ok += usize::from(labels.contains(&best));
        t.top_ok += usize::from(labels.iter().any(|l| top(l) == top(&best)));
    }
    t
}

/// A held-out page: URL, its labels, its main text.
pub type HeldOut = (String, Vec<String>, String);

/// Scores `model` on `pages`; `leaf_of` maps the model's best leaf back to a taxonomy path.
pub fn score(
    name: &str,
    model: &mut Model,
    pages: &[HeldOut],
    leaf_of: impl Fn(&str) -> String,
) -> Accuracy {
    let all: Vec<&HeldOut> = pages.iter().collect();
    let t = tally(model, &all, &leaf_of);
    t.accuracy(name, model.classifier().feature_count())
}

/// Scores `model` after one round of self-training ([`Model::self_train`]) on unlabelled
/// pages, by two-fold cross-fitting: each half of `pages` is classified by a copy of the model
/// self-trained on the other half's text (never its labels), so no page is classified by a
/// model that has seen it. The features reported are those of the first fold's model.
pub fn score_self_trained(
    name: &str,
    model: &Model,
    pages: &[HeldOut],
    leaf_of: impl Fn(&str) -> String,
    min_p: f64,
) -> forager_classifier::Result<Accuracy> {
    let mut total = Tally::default();
    let mut features = 0;
    for fold in 0..2 {
        let in_fold = |i: usize| i % 2 == fold;
        let test: Vec<&HeldOut> = (pages.iter().enumerate())
            .filter(|(i, _)| in_fold(*i))
            .map(|(_, p)| p)
            .collect();
        let unlabelled = (pages.iter().enumerate())
            .filter(|(i, _)| !in_fold(*i))
            .map(|(_, (url, _, text))| (url.clone(), text.clone()));
        let mut m = model.clone();
        m.self_train(unlabelled, min_p)?;
        total.add(tally(&mut m, &test, &leaf_of));
        if fold == 0 {
            features = m.classifier().feature_count();
        }
    }
    Ok(total.accuracy(name, features))
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
