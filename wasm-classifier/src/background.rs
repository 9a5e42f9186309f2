//! The open world: a background pseudo-topic, "the rest of the web", beside the user's topics.
//!
//! A taxonomy built from a few bookmark folders covers almost none of the web, yet the chain
//! rule makes Pr[c|d] sum to one over its topics: a page about none of them is pushed into the
//! nearest one, often with great confidence. The model therefore carries a background class
//! under the root, trained like any topic, so that Pr[good|d] is low for pages that fit no
//! topic and [`Classification::none`](crate::Classification) can say so.
//!
//! Its examples come from two places:
//! - pages the user marks "not relevant" ([`Model::mark_not_relevant`]), kept until undone;
//! - unlabelled pages, such as those a crawl fetched around the seeds
//!   ([`Model::learn_background`]). They are a mix of pages on and off the topics, so only
//!   the *reliable negatives* are kept, chosen by the spy technique of positive-unlabelled
//!   learning (Liu, Lee, Yu, Li 2002, "Partially supervised classification of text documents";
//!   Liu et al. 2003): some labelled examples are hidden among the unlabelled pages, a model of
//!   "labelled vs unlabelled" is trained, and the unlabelled pages that look less like the
//!   topics than almost all of the hidden spies become the background.
//!
//!   Or, with [`BackgroundMethod::Em`], hard EM with a background component (after Nigam et
//!   al. 2000): the background starts as *all* the unlabelled pages, and each round keeps those
//!   that the model with that background still calls "none of the topics". On-topic pages in
//!   the sample leave it because the user's examples pull them back to their topics.

use crate::classify::Scratch;
use crate::error::{Error, Result};
use crate::model::Model;
use crate::taxonomy::{TopicId, BACKGROUND, ROOT};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How [`Model::learn_background`] picks the background among unlabelled pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum BackgroundMethod {
    /// The reliable negatives found with spies (positive-unlabelled learning).
    #[default]
    Spies,
    /// Hard EM from "all unlabelled pages are background", this many rounds at most.
    Em {
        /// Rounds of re-assignment at most (it stops early when nothing changes).
        rounds: u32,
    },
}

/// Parameters of [`Model::learn_background`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackgroundOptions {
    /// How the background is chosen among the unlabelled pages.
    #[serde(default)]
    pub method: BackgroundMethod,
    /// Unlabelled pages used at most (a deterministic sample by URL hash beyond that).
    pub max_docs: usize,
    /// Share of the labelled examples hidden among the unlabelled pages as spies.
    pub spy_share: f64,
    /// Share of spies allowed below the threshold (the noise level of Liu et al.: 15%).
    pub spy_noise: f64,
    /// Fewer unlabelled pages than this and nothing is learned (too little to tell apart).
    pub min_docs: usize,
}

impl Default for BackgroundOptions {
    fn default() -> Self {
        BackgroundOptions {
            method: BackgroundMethod::Spies,
            max_docs: 2000,
            spy_share: 0.15,
            spy_noise: 0.15,
            min_docs: 30,
        }
    }
}

/// What one [`Model::learn_background`] round did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BackgroundReport {
    /// Unlabelled pages considered.
    pub unlabelled: usize,
    /// Spies hidden among them.
    pub spies: usize,
    /// Pr[topics | d] below which an unlabelled page counts as a reliable negative.
    pub threshold: f64,
    /// Reliable negatives now in the background.
    pub background: usize,
    /// Share of the held-out spies the final background would take for "none of the topics".
    pub spies_lost: f64,
}

/// An unlabelled page: (sampling key, URL, term counts).
type Unlabelled = (u64, String, Vec<(String, u32)>);
/// A spy: an example taken out of its topic, (URL, topic, term counts).
type Spy = (String, TopicId, Vec<(String, u32)>);

/// FNV-1a of a string: a stable, platform-independent sampling key.
fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl Model {
    /// The taxonomy's children lists, with the background under the root when it has
    /// examples.
    pub(crate) fn children_with_background(&self) -> BTreeMap<TopicId, Vec<TopicId>> {
        let mut children = self.taxonomy.children_map();
        if self.stats.get(&BACKGROUND).is_some_and(|s| s.docs > 0) {
            children.entry(ROOT).or_default().push(BACKGROUND);
            children.insert(BACKGROUND, Vec::new());
        }
        children
    }

    /// Marks `url` as about none of the user's topics: its text becomes a background example
    /// kept until [`Model::remove_example`] undoes it. An example of a topic with the same URL
    /// is replaced (returns true then).
    pub fn mark_not_relevant(&mut self, url: &str, text: &str) -> Result<bool> {
        let counts = self.example_counts(text);
        if counts.is_empty() {
            return Err(Error::InvalidEdit(format!(
                "{url} has no words to learn from"
            )));
        }
        self.add_example_counts(BACKGROUND, url, &counts)
    }

    /// Background examples: (marked by the user, sampled from unlabelled pages).
    pub fn background_counts(&self) -> (usize, usize) {
        let bg = self.examples.values().filter(|e| e.topic == BACKGROUND);
        let sampled = bg.clone().filter(|e| e.self_trained).count();
        (bg.count() - sampled, sampled)
    }

    /// Whether the user marked the page at `url` not relevant.
    pub fn is_marked_not_relevant(&self, url: &str) -> bool {
        (self.examples.get(url)).is_some_and(|e| e.topic == BACKGROUND && !e.self_trained)
    }

    /// URLs the user marked not relevant, sorted.
    pub fn not_relevant_urls(&self) -> Vec<String> {
        (self.examples.iter())
            .filter(|(_, e)| e.topic == BACKGROUND && !e.self_trained)
            .map(|(u, _)| u.clone())
            .collect()
    }

    /// Removes the background sampled by [`Model::learn_background`] (the user's marks stay);
    /// returns how many went.
    pub fn forget_background_sample(&mut self) -> usize {
        let old: Vec<String> = (self.examples.iter())
            .filter(|(_, e)| e.topic == BACKGROUND && e.self_trained)
            .map(|(u, _)| u.clone())
            .collect();
        for url in &old {
            let _ = self.remove_example(url);
        }
        old.len()
    }

    /// Learns the background from unlabelled `(url, text)` pages (one round; the previous
    /// sample is replaced, the user's marks stay): the reliable negatives among them, chosen
    /// with spies (see the module's documentation). Pages that are examples are skipped.
    pub fn learn_background(
        &mut self,
        docs: impl IntoIterator<Item = (String, String)>,
        opts: &BackgroundOptions,
    ) -> Result<BackgroundReport> {
        if !(0.0..1.0).contains(&opts.spy_share) || !(0.0..1.0).contains(&opts.spy_noise) {
            return Err(Error::InvalidArgument(
                "spy_share and spy_noise must be in [0, 1)".into(),
            ));
        }
        self.forget_background_sample();
        let unlabelled = self.unlabelled(docs, opts.max_docs);
        let report = BackgroundReport {
            unlabelled: unlabelled.len(),
            ..BackgroundReport::default()
        };
        if unlabelled.len() < opts.min_docs {
            return Ok(report);
        }
        if let BackgroundMethod::Em { rounds } = opts.method {
            return self.background_by_em(&unlabelled, rounds, report);
        }
        let spies = self.take_spies(opts.spy_share)?;
        if spies.is_empty() {
            return Ok(report);
        }
        let report = self.background_by_spies(&unlabelled, &spies, opts, report)?;
        // Put the spies back.
        for (url, topic, counts) in &spies {
            self.add_counts(*topic, url, counts, false)?;
        }
        Ok(report)
    }

    /// The pages of `docs` that are not examples, tokenized: at most `max` of them, those with
    /// the smallest URL hashes (a sample that does not depend on the order given).
    fn unlabelled(
        &self,
        docs: impl IntoIterator<Item = (String, String)>,
        max: usize,
    ) -> Vec<Unlabelled> {
        let mut unlabelled: Vec<Unlabelled> = Vec::new();
        for (url, text) in docs {
            if url.is_empty() || self.examples.contains_key(&url) {
                continue;
            }
            let counts = self.example_counts(&text);
            if !counts.is_empty() {
                unlabelled.push((fnv(&url), url, counts));
            }
        }
        unlabelled.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        unlabelled.dedup_by(|a, b| a.1 == b.1);
        unlabelled.truncate(max);
        unlabelled
    }

    /// Takes the spies out of their topics: a deterministic `share` of the person-given
    /// examples (at least one), none when too few examples would be left.
    fn take_spies(&mut self, share: f64) -> Result<Vec<Spy>> {
        let labelled: Vec<String> = (self.examples.iter())
            .filter(|(_, e)| e.topic != BACKGROUND && !e.self_trained)
            .map(|(u, _)| u.clone())
            .collect();
        let cut = (share * u64::MAX as f64) as u64;
        let mut spy_urls: Vec<&String> = labelled.iter().filter(|u| fnv(u) < cut).collect();
        if spy_urls.is_empty() {
            spy_urls = labelled.iter().take(1).collect();
        }
        if spy_urls.is_empty() || labelled.len() <= spy_urls.len() {
            return Ok(Vec::new());
        }
        let mut spies = Vec::new();
        for url in spy_urls {
            if let Some(e) = self.examples.get(url).cloned() {
                let counts: Vec<(String, u32)> = (e.terms.iter())
                    .map(|&(t, c)| (self.vocab[t as usize].clone(), c))
                    .collect();
                self.remove_example(url)?;
                spies.push((url.clone(), e.topic, counts));
            }
        }
        Ok(spies)
    }

    /// The spy technique: the labelled examples (less the spies) against the unlabelled pages
    /// and the spies; the pages less topical than nearly all spies are the reliable negatives.
    fn background_by_spies(
        &mut self,
        unlabelled: &[Unlabelled],
        spies: &[Spy],
        opts: &BackgroundOptions,
        mut report: BackgroundReport,
    ) -> Result<BackgroundReport> {
        report.spies = spies.len();
        let spy_key = |u: &str| format!("\u{1}spy:{u}");
        for (url, _, counts) in spies {
            self.add_counts(BACKGROUND, &spy_key(url), counts, true)?;
        }
        for (_, url, counts) in unlabelled {
            self.add_counts(BACKGROUND, url, counts, true)?;
        }
        let classifier = self.uncapped_classifier();
        let mut topical_scratch = Scratch::new();
        let mut topical = |counts: &[(String, u32)]| {
            let c: Vec<(&str, u32)> = counts.iter().map(|(t, n)| (t.as_str(), *n)).collect();
            let v = classifier.verdict(&classifier.log_probs_counts(&c, &mut topical_scratch));
            1.0 - v.background
        };
        let mut spy_scores: Vec<f64> = spies.iter().map(|(_, _, c)| topical(c)).collect();
        spy_scores.sort_by(f64::total_cmp);
        let k = ((opts.spy_noise * spy_scores.len() as f64) as usize).min(spy_scores.len() - 1);
        report.threshold = spy_scores[k];
        let scores: Vec<f64> = unlabelled.iter().map(|(_, _, c)| topical(c)).collect();
        // The reliable negatives, most background-like first.
        let mut order: Vec<usize> = (0..unlabelled.len())
            .filter(|&i| scores[i] < report.threshold)
            .collect();
        order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]).then(a.cmp(&b)));
        self.validate_on_spies(unlabelled, order, spies, opts.spy_noise, report)
    }

    /// A background that swallows held-out examples would cost recall: it is validated on
    /// the spies (still held out), keeping only the more certain half of `order` until at most
    /// `spy_noise` of the spies fall to it, overall and within each topic. (A focused crawl's
    /// pages are mostly of its own topic, so "labelled against unlabelled" can find that
    /// whole topic unlabelled-like: in an 800-page crawl of a generated web the background
    /// took all 186 Astronomy pages while losing 2 of 16 spies, both Astronomy's.)
    fn validate_on_spies(
        &mut self,
        unlabelled: &[Unlabelled],
        mut order: Vec<usize>,
        spies: &[Spy],
        spy_noise: f64,
        mut report: BackgroundReport,
    ) -> Result<BackgroundReport> {
        let mut scratch = Scratch::new();
        loop {
            self.forget_background_sample();
            for &i in &order {
                let (_, url, counts) = &unlabelled[i];
                self.add_counts(BACKGROUND, url, counts, true)?;
            }
            if order.is_empty() {
                break;
            }
            let c = self.uncapped_classifier();
            // Per topic: (spies lost, spies).
            let mut by_topic: BTreeMap<TopicId, (usize, usize)> = BTreeMap::new();
            for (_, topic, counts) in spies {
                let p: Vec<(&str, u32)> = counts.iter().map(|(t, n)| (t.as_str(), *n)).collect();
                let gone = c.verdict(&c.log_probs_counts(&p, &mut scratch)).background >= 0.5;
                let e = by_topic.entry(*topic).or_default();
                e.0 += usize::from(gone);
                e.1 += 1;
            }
            let lost: usize = by_topic.values().map(|v| v.0).sum();
            report.spies_lost = lost as f64 / spies.len() as f64;
            let worst = (by_topic.values())
                .map(|&(l, n)| l as f64 / n as f64)
                .fold(0.0, f64::max);
            if report.spies_lost <= spy_noise && worst <= spy_noise {
                break;
            }
            order.truncate(order.len() / 2);
        }
        report.background = order.len();
        Ok(report)
    }

    /// Hard EM with a background component: all of `unlabelled` first, then, for at most
    /// `rounds` rounds, the pages the model with the current background calls "none".
    fn background_by_em(
        &mut self,
        unlabelled: &[Unlabelled],
        rounds: u32,
        mut report: BackgroundReport,
    ) -> Result<BackgroundReport> {
        let mut keep: Vec<usize> = (0..unlabelled.len()).collect();
        let mut scratch = Scratch::new();
        for _ in 0..rounds.max(1) {
            self.forget_background_sample();
            for &i in &keep {
                let (_, url, counts) = &unlabelled[i];
                self.add_counts(BACKGROUND, url, counts, true)?;
            }
            let c = self.uncapped_classifier();
            let next: Vec<usize> = (0..unlabelled.len())
                .filter(|&i| {
                    let p: Vec<(&str, u32)> = (unlabelled[i].2.iter())
                        .map(|(t, n)| (t.as_str(), *n))
                        .collect();
                    c.verdict(&c.log_probs_counts(&p, &mut scratch)).none
                })
                .collect();
            if next == keep {
                break;
            }
            keep = next;
        }
        self.forget_background_sample();
        for &i in &keep {
            let (_, url, counts) = &unlabelled[i];
            self.add_counts(BACKGROUND, url, counts, true)?;
        }
        report.background = keep.len();
        report.threshold = 0.0;
        Ok(report)
    }
}
