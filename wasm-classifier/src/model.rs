//! The model: taxonomy, training examples and options; the one thing the browser and the host
//! share. Edits are incremental: examples update additive statistics, and only the internal
//! nodes whose children changed are retrained, lazily, on the next classification.

use crate::classify::Classifier;
use crate::error::{Error, Result};
use crate::stats::TopicStats;
use crate::taxonomy::{Taxonomy, Topic, TopicId, BACKGROUND, BACKGROUND_PATH, ROOT};
use crate::text::{TextOptions, Tokenizer};
use crate::train::{train_node, NodeModel, TrainOptions};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Most bytes of a page's text an example learns from (the rest is left out).
pub const MAX_EXAMPLE_TEXT_BYTES: usize = 512 << 10;
/// Most distinct terms an example keeps: its most frequent.
pub const MAX_EXAMPLE_TERMS: usize = 10_000;

/// One training example: a page of a topic, kept as sorted (term id, count) pairs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Example {
    pub(crate) topic: TopicId,
    pub(crate) terms: Vec<(u32, u32)>,
    /// Added by self-training (or, for the background, sampled from a crawl) rather than by
    /// a person.
    pub(crate) self_trained: bool,
}

/// A summary of one example for listings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExampleInfo {
    /// The example page's URL (its identity in the model).
    pub url: String,
    /// Topic path it is an example of.
    pub topic: String,
    /// Number of tokens kept from its text.
    pub tokens: u64,
    /// Added by self-training ([`Model::self_train`]) rather than by a person.
    #[serde(default)]
    pub self_trained: bool,
}

/// A summary of one topic for user interfaces.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicInfo {
    /// Topic id.
    pub id: TopicId,
    /// Parent id (the root is its own parent).
    pub parent: TopicId,
    /// Full path.
    pub path: String,
    /// Path segment.
    pub name: String,
    /// Display title.
    pub title: String,
    /// Marked good.
    pub good: bool,
    /// Examples attached directly to this topic.
    pub examples: u64,
    /// Examples in the whole subtree.
    pub subtree_examples: u64,
    /// Of `examples`, those added by self-training (so a user can tell them from their own).
    #[serde(default)]
    pub self_trained: u64,
}

/// The whole trainable state of a Forager classifier.
#[derive(Debug, Clone)]
pub struct Model {
    pub(crate) text: TextOptions,
    pub(crate) train: TrainOptions,
    pub(crate) taxonomy: Taxonomy,
    pub(crate) vocab: Vec<String>,
    vocab_index: FxHashMap<String, u32>,
    pub(crate) examples: BTreeMap<String, Example>,
    pub(crate) tokenizer: Tokenizer,
    pub(crate) stats: FxHashMap<TopicId, TopicStats>,
    nodes: FxHashMap<TopicId, NodeModel>,
    dirty: BTreeSet<TopicId>,
    compiled: Option<Arc<Classifier>>,
}

impl Default for Model {
    fn default() -> Self {
        Model::new(
            Taxonomy::default(),
            TextOptions::default(),
            TrainOptions::default(),
        )
    }
}

impl Model {
    /// An untrained model over `taxonomy`.
    pub fn new(taxonomy: Taxonomy, text: TextOptions, train: TrainOptions) -> Self {
        let mut m = Model {
            text,
            train,
            taxonomy,
            vocab: Vec::new(),
            vocab_index: FxHashMap::default(),
            examples: BTreeMap::new(),
            tokenizer: Tokenizer::new(text),
            stats: FxHashMap::default(),
            nodes: FxHashMap::default(),
            dirty: BTreeSet::new(),
            compiled: None,
        };
        m.rebuild_stats();
        m
    }

    /// Rebuilds a model from decoded parts; used by the codec after validation.
    pub(crate) fn from_parts(
        text: TextOptions,
        train: TrainOptions,
        taxonomy: Taxonomy,
        vocab: Vec<String>,
        examples: BTreeMap<String, Example>,
    ) -> Self {
        let vocab_index = vocab
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        let mut m = Model::new(taxonomy, text, train);
        m.vocab = vocab;
        m.vocab_index = vocab_index;
        m.examples = examples;
        m.rebuild_stats();
        m
    }

    /// The taxonomy.
    pub fn taxonomy(&self) -> &Taxonomy {
        &self.taxonomy
    }

    /// The text pipeline options.
    pub fn text_options(&self) -> TextOptions {
        self.text
    }

    /// The training options.
    pub fn train_options(&self) -> TrainOptions {
        self.train
    }

    /// Changes training options; every node retrains on next use.
    pub fn set_train_options(&mut self, train: TrainOptions) -> Result<()> {
        train.validate().map_err(Error::InvalidEdit)?;
        self.train = train;
        self.mark_all_dirty();
        Ok(())
    }

    /// The tokenizer matching this model's text options.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// Number of examples.
    pub fn example_count(&self) -> usize {
        self.examples.len()
    }

    /// The example with this URL, if there is one (to tell a user who adds it again).
    pub fn example(&self, url: &str) -> Option<ExampleInfo> {
        let e = self.examples.get(url)?;
        Some(ExampleInfo {
            url: url.to_owned(),
            topic: match e.topic {
                BACKGROUND => BACKGROUND_PATH.to_owned(),
                t => self.taxonomy.path(t).unwrap_or_default(),
            },
            tokens: e.terms.iter().map(|&(_, c)| u64::from(c)).sum(),
            self_trained: e.self_trained,
        })
    }

    /// All examples, by URL.
    pub fn examples(&self) -> Vec<ExampleInfo> {
        (self.examples.keys())
            .filter_map(|url| self.example(url))
            .collect()
    }

    /// Inverse document frequencies over all examples, ln((N + 1) / (df + 1)) + 1; a term
    /// no example has gets the largest value.
    pub fn idf(&self) -> FxHashMap<String, f64> {
        let topical = || self.examples.values().filter(|e| e.topic != BACKGROUND);
        let n = topical().count() as f64;
        let mut df: FxHashMap<u32, u32> = FxHashMap::default();
        for e in topical() {
            for &(t, _) in &e.terms {
                *df.entry(t).or_default() += 1;
            }
        }
        df.into_iter()
            .map(|(t, d)| {
                let w = ((n + 1.0) / (f64::from(d) + 1.0)).ln() + 1.0;
                (self.vocab[t as usize].clone(), w)
            })
            .collect()
    }

    /// The unit-length TF-IDF centroid of the examples under the effectively good topics: the
    /// "query" of the naive best-first and SharkSearch baselines.
    pub fn good_centroid(&self) -> FxHashMap<String, f64> {
        let idf = self.idf();
        let mut c: FxHashMap<String, f64> = FxHashMap::default();
        for e in self.examples.values() {
            if !self.taxonomy.is_effectively_good(e.topic) {
                continue;
            }
            let len: f64 = e
                .terms
                .iter()
                .map(|&(_, n)| f64::from(n))
                .sum::<f64>()
                .max(1.0);
            for &(t, n) in &e.terms {
                let term = &self.vocab[t as usize];
                let w = idf.get(term).copied().unwrap_or(1.0);
                *c.entry(term.clone()).or_default() += f64::from(n) / len * w;
            }
        }
        let norm = c.values().map(|x| x * x).sum::<f64>().sqrt();
        if norm > 0.0 {
            c.values_mut().for_each(|x| *x /= norm);
        }
        c
    }

    /// Every topic with its example counts, in id order.
    pub fn topics(&self) -> Vec<TopicInfo> {
        let mut direct: FxHashMap<TopicId, (u64, u64)> = FxHashMap::default();
        for e in self.examples.values() {
            let d = direct.entry(e.topic).or_default();
            d.0 += 1;
            d.1 += u64::from(e.self_trained);
        }
        self.taxonomy
            .topics()
            .map(|t: &Topic| TopicInfo {
                id: t.id,
                parent: t.parent,
                path: self.taxonomy.path(t.id).unwrap_or_default(),
                name: t.name.clone(),
                title: t.title.clone(),
                good: t.good,
                examples: direct.get(&t.id).map_or(0, |d| d.0),
                subtree_examples: self.stats.get(&t.id).map_or(0, |s| s.docs),
                self_trained: direct.get(&t.id).map_or(0, |d| d.1),
            })
            .collect()
    }

    fn mark_all_dirty(&mut self) {
        self.nodes.clear();
        self.dirty = self.taxonomy.topics().map(|t| t.id).collect();
        self.compiled = None;
    }

    /// Recomputes every subtree aggregate from the examples (after structural edits).
    fn rebuild_stats(&mut self) {
        self.stats = self
            .taxonomy
            .topics()
            .map(|t| (t.id, TopicStats::default()))
            .collect();
        self.stats.insert(BACKGROUND, TopicStats::default());
        let examples = std::mem::take(&mut self.examples);
        for e in examples.values() {
            self.apply_example(e, true);
        }
        self.examples = examples;
        self.mark_all_dirty();
    }

    /// Adds or removes an example's terms along its topic's ancestry and marks those nodes dirty.
    fn apply_example(&mut self, e: &Example, add: bool) {
        if e.topic == BACKGROUND {
            // The background hangs under the root: only the root's classifier changes.
            self.stats
                .entry(BACKGROUND)
                .or_default()
                .apply(&e.terms, add);
            self.dirty.insert(ROOT);
            self.compiled = None;
            return;
        }
        let Ok(anc) = self.taxonomy.ancestry(e.topic) else {
            return;
        };
        for (i, t) in anc.iter().enumerate() {
            if let Some(s) = self.stats.get_mut(t) {
                s.apply(&e.terms, add);
            }
            // The nodes whose children's statistics changed: every proper ancestor.
            if i + 1 < anc.len() {
                self.dirty.insert(*t);
            }
        }
        self.compiled = None;
    }

    fn intern(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.vocab_index.get(term) {
            return id;
        }
        let id = self.vocab.len() as u32;
        self.vocab.push(term.to_owned());
        self.vocab_index.insert(term.to_owned(), id);
        id
    }

    /// The token counts the model learns from a page's text: at most the first
    /// [`MAX_EXAMPLE_TEXT_BYTES`] of it (natively and in WASM alike), so a huge page cannot
    /// grow the model or the memory spent on it without bound.
    pub fn example_counts(&self, text: &str) -> Vec<(String, u32)> {
        let mut end = text.len().min(MAX_EXAMPLE_TEXT_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.tokenizer.counts(&text[..end])
    }

    /// Adds `url` as an example of `topic` from its visible text; replaces an earlier example
    /// with the same URL. Returns true when it replaced one.
    pub fn add_example(&mut self, topic: TopicId, url: &str, text: &str) -> Result<bool> {
        let counts = self.example_counts(text);
        self.add_example_counts(topic, url, &counts)
    }

    /// Adds an example from already tokenized (term, count) pairs.
    pub fn add_example_counts(
        &mut self,
        topic: TopicId,
        url: &str,
        counts: &[(String, u32)],
    ) -> Result<bool> {
        self.add_counts(topic, url, counts, false)
    }

    pub(crate) fn add_counts(
        &mut self,
        topic: TopicId,
        url: &str,
        counts: &[(String, u32)],
        self_trained: bool,
    ) -> Result<bool> {
        if topic != BACKGROUND {
            self.taxonomy.get(topic)?;
        }
        if url.is_empty() {
            return Err(Error::InvalidEdit("an example needs a URL".into()));
        }
        let replaced = self.remove_example(url).is_ok();
        // The example's most frequent terms, at most MAX_EXAMPLE_TERMS (ties by term).
        let mut kept: Vec<&(String, u32)> = counts.iter().filter(|(_, c)| *c > 0).collect();
        if kept.len() > MAX_EXAMPLE_TERMS {
            kept.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            kept.truncate(MAX_EXAMPLE_TERMS);
        }
        let mut terms: Vec<(u32, u32)> = kept
            .into_iter()
            .map(|(t, c)| (self.intern(t), *c))
            .collect();
        terms.sort_unstable();
        terms.dedup_by(|b, a| {
            if a.0 == b.0 {
                a.1 = a.1.saturating_add(b.1);
                true
            } else {
                false
            }
        });
        let e = Example {
            topic,
            terms,
            self_trained,
        };
        self.apply_example(&e, true);
        self.examples.insert(url.to_owned(), e);
        Ok(replaced)
    }

    /// Removes the example with this URL.
    pub fn remove_example(&mut self, url: &str) -> Result<()> {
        let e = self
            .examples
            .remove(url)
            .ok_or_else(|| Error::NoSuchExample(url.to_owned()))?;
        self.apply_example(&e, false);
        Ok(())
    }

    /// Moves the example with this URL to another topic.
    pub fn move_example(&mut self, url: &str, topic: TopicId) -> Result<()> {
        if topic != BACKGROUND {
            self.taxonomy.get(topic)?;
        }
        let mut e = self
            .examples
            .remove(url)
            .ok_or_else(|| Error::NoSuchExample(url.to_owned()))?;
        self.apply_example(&e, false);
        e.topic = topic;
        self.apply_example(&e, true);
        self.examples.insert(url.to_owned(), e);
        Ok(())
    }

    /// Adds a topic under `parent`.
    pub fn add_topic(&mut self, parent: TopicId, name: &str, title: &str) -> Result<TopicId> {
        let id = self.taxonomy.add(parent, name, title)?;
        self.stats.insert(id, TopicStats::default());
        self.dirty.insert(parent);
        self.compiled = None;
        Ok(id)
    }

    /// Adds the topic at `path` and any missing ancestors.
    pub fn ensure_topic(&mut self, path: &str, title: &str) -> Result<TopicId> {
        let before = self.taxonomy.len();
        let id = self.taxonomy.ensure_path(path, title)?;
        if self.taxonomy.len() != before {
            self.rebuild_stats();
        }
        self.compiled = None;
        Ok(id)
    }

    /// Renames a topic.
    pub fn rename_topic(&mut self, id: TopicId, name: &str, title: &str) -> Result<()> {
        self.taxonomy.rename(id, name, title)?;
        self.compiled = None;
        Ok(())
    }

    /// Moves a topic and its subtree under `new_parent`.
    pub fn move_topic(&mut self, id: TopicId, new_parent: TopicId) -> Result<()> {
        self.taxonomy.move_to(id, new_parent)?;
        self.rebuild_stats();
        Ok(())
    }

    /// Deletes a topic, its subtree and their examples; returns how many examples went.
    pub fn delete_topic(&mut self, id: TopicId) -> Result<usize> {
        let gone: FxHashSet<TopicId> = self.taxonomy.delete(id)?.into_iter().collect();
        let before = self.examples.len();
        self.examples.retain(|_, e| !gone.contains(&e.topic));
        let removed = before - self.examples.len();
        self.rebuild_stats();
        Ok(removed)
    }

    /// Marks or unmarks a topic good.
    pub fn set_good(&mut self, id: TopicId, good: bool) -> Result<()> {
        self.taxonomy.set_good(id, good)?;
        self.compiled = None;
        Ok(())
    }

    /// Marks exactly the topics at `paths` good and unmarks all others.
    pub fn set_good_paths<S: AsRef<str>>(&mut self, paths: &[S]) -> Result<()> {
        let ids = paths
            .iter()
            .map(|p| self.taxonomy.find(p.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        self.taxonomy.clear_good();
        for id in ids {
            self.taxonomy.set_good(id, true)?;
        }
        self.compiled = None;
        Ok(())
    }

    /// The compiled classifier without the evidence cap: the model's own procedures
    /// (self-training, learning the background) rank documents by their full evidence.
    pub fn uncapped_classifier(&mut self) -> Arc<Classifier> {
        Arc::new((*self.classifier()).clone().with_evidence_cap(None))
    }

    /// Retrains the dirty nodes and returns the compiled classifier.
    pub fn classifier(&mut self) -> Arc<Classifier> {
        if let Some(c) = &self.compiled {
            return c.clone();
        }
        let children = self.children_with_background();
        for id in std::mem::take(&mut self.dirty) {
            self.nodes.remove(&id);
            let Some(kids) = children.get(&id) else {
                continue;
            };
            if kids.is_empty() {
                continue;
            }
            let empty = TopicStats::default();
            let child_stats: Vec<&TopicStats> = kids
                .iter()
                .map(|k| self.stats.get(k).unwrap_or(&empty))
                .collect();
            let vocab = &self.vocab;
            let nm = train_node(id, kids, &child_stats, &self.train, |t| {
                vocab[t as usize].clone()
            });
            self.nodes.insert(id, nm);
        }
        let vocab = &self.vocab;
        let c = Arc::new(Classifier::assemble(
            self.tokenizer.clone(),
            &self.taxonomy,
            &children,
            &self.nodes,
            |t| vocab[t as usize].clone(),
        ));
        self.compiled = Some(c.clone());
        c
    }

    /// The root's id, for symmetry with paths.
    pub fn root(&self) -> TopicId {
        ROOT
    }
}
