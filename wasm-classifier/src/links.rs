//! Scoring the links of one page (accelerated-focused-crawling-2002 §2): the apprentice's
//! ⟨token, DOM offset⟩ features of each link and its Pr[high], or, before an apprentice is
//! trained, the classifier's relevance of the words around the link.
//!
//! One rule for the crawler (which scores a fetched page's outlinks with it) and for the
//! browser (which marks the promising links of the page being read), so the same page and
//! model give the same features and scores on both sides.

use crate::apprentice::{Apprentice, LeafTokens, Source};
use crate::classify::{Classification, Classifier, Scratch};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// A link of the page: its anchor's leaves `start..end` (empty for a leaf-less anchor) and
/// its anchor text.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkSpan {
    /// First leaf of the anchor.
    pub start: usize,
    /// One past its last leaf.
    pub end: usize,
    /// The anchor text, whitespace-collapsed.
    pub anchor: String,
    /// The link sits in navigation boilerplate (site menus, footers).
    #[serde(default)]
    pub boilerplate: bool,
}

/// The share of its score a link in navigation boilerplate keeps when links are ranked: the
/// crawler's soft focus passes this share of a page's relevance through template links, and
/// the browser marks content links before menus for the same reason.
pub const TEMPLATE_WEIGHT: f64 = 0.1;

/// How a link's score was reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkRule {
    /// The trained apprentice's Pr[high | features].
    Apprentice,
    /// No trained apprentice: R of the anchor and the leaves within `d_max` of it.
    Context,
}

/// One link's score.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkScore {
    /// Predicted relevance of the link's target, in [0, 1].
    pub score: f64,
    /// The topic the link points towards: the classifier's best leaf for the anchor (or its
    /// context), else the page's.
    pub topic: String,
    /// The rule that gave the score.
    pub rule: LinkRule,
    /// What links are ranked by: the score, times [`TEMPLATE_WEIGHT`] in boilerplate.
    pub priority: f64,
}

/// The apprentice's features of one link of a page the classifier judged `verdict`: its
/// ⟨token, offset⟩ pairs within `d_max`, the page's class path, R(page) and the anchor's class.
pub fn link_features(
    classifier: &Classifier,
    leaves: &LeafTokens,
    verdict: &Classification,
    link: (usize, usize, &str),
    d_max: usize,
    scratch: &mut Scratch,
) -> Vec<u32> {
    let (start, end, anchor) = link;
    let anchor_class = (!anchor.is_empty()).then(|| classifier.best_leaf(anchor, scratch));
    let src = Source {
        class: &verdict.best_leaf,
        relevance: verdict.relevance,
        anchor_class,
    };
    leaves.link_features(start, end, d_max, &src)
}

/// Scores every link of a page whose visible text is `text` and whose DOM leaves are
/// `leaves`: with the apprentice when it is trained, else by the context's relevance.
pub fn score_links(
    classifier: &Classifier,
    apprentice: Option<&Apprentice>,
    text: &str,
    leaves: &[String],
    links: &[LinkSpan],
    d_max: usize,
    scratch: &mut Scratch,
) -> Vec<LinkScore> {
    let verdict = classifier.classify(text, scratch);
    let apprentice = apprentice.filter(|a| a.is_trained());
    let tokens = apprentice.map(|_| LeafTokens::new(classifier.tokenizer(), leaves));
    // Anchors repeat (menus, "next", the same term linked twice): classify each once.
    let mut anchors: FxHashMap<&str, String> = FxHashMap::default();
    let mut out = Vec::with_capacity(links.len());
    for l in links {
        let (score, topic, rule) = match (apprentice, &tokens) {
            (Some(a), Some(tokens)) => {
                let anchor = (!l.anchor.is_empty()).then(|| {
                    (anchors.entry(l.anchor.as_str()))
                        .or_insert_with(|| classifier.classify(&l.anchor, scratch).best_leaf)
                        .clone()
                });
                let src = Source {
                    class: &verdict.best_leaf,
                    relevance: verdict.relevance,
                    anchor_class: anchor.as_deref(),
                };
                let f = tokens.link_features(l.start, l.end, d_max, &src);
                let topic = anchor.unwrap_or_else(|| verdict.best_leaf.clone());
                (a.p_high(&f), topic, LinkRule::Apprentice)
            }
            _ => {
                let (score, topic) = context_score(classifier, &verdict, leaves, l, d_max, scratch);
                (score, topic, LinkRule::Context)
            }
        };
        let weight = if l.boilerplate { TEMPLATE_WEIGHT } else { 1.0 };
        out.push(LinkScore {
            score,
            topic,
            rule,
            priority: score * weight,
        });
    }
    out
}

/// R of the words around a link (its anchor and the leaves within `d_max` on either side), and
/// their best leaf.
fn context_score(
    classifier: &Classifier,
    page: &Classification,
    leaves: &[String],
    l: &LinkSpan,
    d_max: usize,
    scratch: &mut Scratch,
) -> (f64, String) {
    let n = leaves.len();
    let (start, end) = (l.start.min(n), l.end.min(n).max(l.start.min(n)));
    let lo = start.saturating_sub(d_max);
    let hi = (end + d_max).min(n);
    let words = leaves[lo..hi].join(" ");
    if words.trim().is_empty() {
        return (page.relevance, page.best_leaf.clone());
    }
    let c = classifier.classify(&words, scratch);
    (c.relevance, c.best_leaf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apprentice::token_feature;
    use crate::Model;

    fn model() -> Model {
        let mut m = Model::default();
        let a = m.add_topic(crate::ROOT, "Astro", "").unwrap();
        let b = m.add_topic(crate::ROOT, "Cook", "").unwrap();
        m.add_example(a, "http://a/1", "telescope star galaxy orbit planet")
            .unwrap();
        m.add_example(a, "http://a/2", "star nebula telescope comet")
            .unwrap();
        m.add_example(b, "http://b/1", "recipe oven flour bake bread")
            .unwrap();
        m.add_example(b, "http://b/2", "bread butter recipe kitchen")
            .unwrap();
        m.set_good(a, true).unwrap();
        m
    }

    fn leaves(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn without_an_apprentice_the_words_around_a_link_decide() {
        let mut m = model();
        let c = m.classifier();
        let lv = leaves(&[
            "intro",
            "telescope star",
            "here",
            "x",
            "y",
            "z",
            "oven recipe",
            "there",
        ]);
        let links = vec![
            LinkSpan {
                start: 2,
                end: 3,
                anchor: "here".into(),
                boilerplate: false,
            },
            LinkSpan {
                start: 7,
                end: 8,
                anchor: "there".into(),
                boilerplate: true,
            },
        ];
        let s = score_links(
            &c,
            None,
            "telescope star oven",
            &lv,
            &links,
            1,
            &mut Scratch::new(),
        );
        assert_eq!(s.len(), 2);
        assert!(s.iter().all(|l| l.rule == LinkRule::Context));
        assert!(s[0].score > 0.5 && s[1].score < 0.5, "{s:?}");
        assert_eq!(s[0].topic, "/Astro");
        assert_eq!(s[1].topic, "/Cook");
        assert_eq!(s[0].priority, s[0].score);
        assert_eq!(
            s[1].priority,
            s[1].score * TEMPLATE_WEIGHT,
            "a menu link ranks lower"
        );
    }

    #[test]
    fn a_trained_apprentice_scores_with_the_crawl_s_features() {
        let mut m = model();
        let c = m.classifier();
        let lv = leaves(&["see", "more", "links", "elsewhere"]);
        let mut a = Apprentice::new();
        for _ in 0..20 {
            a.add(&[token_feature("see", -1)], true);
            a.add(&[token_feature("links", -1)], false);
        }
        let links = vec![
            LinkSpan {
                start: 1,
                end: 2,
                anchor: "more".into(),
                boilerplate: false,
            },
            LinkSpan {
                start: 3,
                end: 4,
                anchor: "elsewhere".into(),
                boilerplate: false,
            },
        ];
        let s = score_links(
            &c,
            Some(&a),
            "see more",
            &lv,
            &links,
            1,
            &mut Scratch::new(),
        );
        assert!(s.iter().all(|l| l.rule == LinkRule::Apprentice));
        // The first link has "see" at -1 (high); the second "links" at -1 (low).
        let mut scratch = Scratch::new();
        let verdict = c.classify("see more", &mut scratch);
        let lt = LeafTokens::new(c.tokenizer(), &lv);
        let f = link_features(&c, &lt, &verdict, (1, 2, "more"), 1, &mut scratch);
        assert_eq!(s[0].score, a.p_high(&f));
        assert!(s[0].score > s[1].score, "{s:?}");
    }
}
