//! The frontier policy (focused-crawling-1999 §3.2–3.3, accelerated-focused-crawling-2002 §3,
//! crawling-the-web-2004 §3): which outlinks of a fetched, classified page enter the frontier
//! and with what score, for every mode. Pure and synchronous — no I/O, no locks — so each rule
//! is tested on hand-made pages.
//!
//! - soft focus: a link inherits R(parent), or R(parent) × the template weight when it sits in
//!   navigation boilerplate; the frontier keeps the maximum over parents (`store::frontier`);
//! - hard focus: the same scores, but only pages whose best leaf is under a good topic are
//!   expanded;
//! - with a trained apprentice that guides (soft or hard), the apprentice's Pr[high | link
//!   features] blended with R(parent) by its measured trust, times the link's weight
//!   ([`guided`]: the template weight holds for its evidence too); whether it guides is the
//!   critic's decision ([`critic`]);
//! - breadth first: −(depth + 1); unfocused: 0; naive best-first: the parent's cosine to the
//!   good topics' examples; SharkSearch: anchor, context and a decaying inherited score.
//!
//! The rest of the focus policy lives here too, so no store back-end re-implements it in SQL
//! ([`rules`]): how parents' scores combine, the head-of-frontier boost, the retry cap, the
//! critic's threshold, and the re-scoring of the frontier after a re-judge or a retrain. A store
//! persists the numbers it is given, applying at most the combine rule named here ("keep the
//! maximum") in its upserts.

use super::{CrawlConfig, Mode};
use crate::canon;
use crate::parse::OutLink;
use crate::store::{NewUrl, PageId};
use forager_classifier::apprentice::{Apprentice, LeafTokens};
use forager_classifier::links::link_features;
use forager_classifier::{Classification, Classifier, Scratch};
use std::collections::HashSet;

pub mod claim;
pub mod critic;
pub mod explore;
pub mod leads;
pub mod rules;
pub mod value;
pub use rules::{
    combine, guided, high, instance, retry_or_give_up, trained_apprentice, Inherited, Instance,
    BOOST, HIGH_RELEVANCE, MAX_TRIES,
};

/// The page whose links are scored: where it sits in the crawl and what it says.
#[derive(Clone, Copy, Debug)]
pub struct Parent<'a> {
    /// Its id (the links' `via`).
    pub oid: PageId,
    /// Its depth from the seeds.
    pub depth: i64,
    /// Its own frontier score when checked out (SharkSearch's inherited potential).
    pub score: f64,
    /// Its visible text.
    pub text: &'a str,
    /// Its DOM leaves (anchor context and the apprentice's offsets).
    pub leaves: &'a [String],
    /// `<meta name="robots" content="nofollow">`.
    pub nofollow: bool,
}

/// The page's scored outlinks, and the links a trap guard refused (by kind).
#[derive(Debug, Default)]
pub struct Scored {
    /// Links for the frontier, in document order, without duplicates.
    pub links: Vec<NewUrl>,
    /// Refusals, by kind (reported, not stored).
    pub rejects: Vec<&'static str>,
}

/// Whether the crawl expands a page at all: never under a robots nofollow; in hard focus only
/// when its best leaf is under a good topic.
pub fn expands(mode: Mode, verdict: &Classification, nofollow: bool) -> bool {
    !nofollow && (mode != Mode::Hard || verdict.hard_focus)
}

/// The weight of a link's evidence: the template weight in navigation boilerplate, else 1.
pub fn link_weight(cfg: &CrawlConfig, l: &OutLink) -> f64 {
    if l.boilerplate {
        cfg.template_weight
    } else {
        1.0
    }
}

/// Scores `links` of `parent` for the frontier under `cfg`'s mode. `apprentice` is the
/// apprentice as of its last retrain when the crawl has one.
pub fn score_links(
    cfg: &CrawlConfig,
    parent: &Parent,
    mut links: Vec<OutLink>,
    verdict: &Classification,
    classifier: &Classifier,
    apprentice: Option<&Apprentice>,
    scratch: &mut Scratch,
) -> Scored {
    let mut out = Scored::default();
    if links.len() > cfg.max_links_per_page {
        links.truncate(cfg.max_links_per_page);
        out.rejects.push("trap-too-many-links");
    }
    if !expands(cfg.mode, verdict, parent.nofollow) {
        return out;
    }
    let tok = classifier.tokenizer();
    let page_sim = match cfg.mode {
        Mode::BestFirst | Mode::Shark => cfg.query.cosine(tok, parent.text),
        _ => 0.0,
    };
    let apprentice = apprentice.zip(cfg.apprentice.as_ref()).map(|(a, c)| {
        let leaves = LeafTokens::new(tok, parent.leaves);
        (c.d_max, a, leaves)
    });
    let mut seen = HashSet::new();
    for l in links.into_iter().filter(|l| !l.nofollow) {
        if let Err(r) = canon::check_traps(&l.url, &cfg.traps) {
            out.rejects.push(r.kind());
            continue;
        }
        if !seen.insert(l.url.to_string()) {
            continue;
        }
        let features = apprentice.as_ref().map(|(d_max, _, leaves)| {
            let (start, end) = l.leaf_range;
            link_features(
                classifier,
                leaves,
                verdict,
                (start, end, &l.anchor),
                *d_max,
                scratch,
            )
        });
        let critic = apprentice.as_ref().map(|(_, a, _)| *a);
        let base = link_score(cfg, parent, &l, verdict, classifier, page_sim);
        let inherited = Inherited {
            relevance: verdict.relevance,
            weight: link_weight(cfg, &l),
        };
        let score = match (critic, &features) {
            (Some(a), Some(f)) if focused(cfg.mode) && a.is_trained() => guided(a, f, inherited),
            _ => base,
        };
        out.links.push(NewUrl {
            weight: link_weight(cfg, &l),
            host: l.url.host_str().unwrap_or("").to_owned(),
            url: l.url.to_string(),
            score,
            depth: parent.depth + 1,
            via: Some((parent.oid, l.anchor)),
            features,
        });
    }
    out
}

/// Soft and hard focus: the modes that order the frontier by relevance.
fn focused(mode: Mode) -> bool {
    matches!(mode, Mode::Soft | Mode::Hard)
}

/// A link's score without the apprentice.
fn link_score(
    cfg: &CrawlConfig,
    parent: &Parent,
    l: &OutLink,
    verdict: &Classification,
    classifier: &Classifier,
    page_sim: f64,
) -> f64 {
    match cfg.mode {
        Mode::Soft | Mode::Hard => verdict.relevance * link_weight(cfg, l),
        Mode::Bfs => -((parent.depth + 1) as f64),
        Mode::Unfocused => 0.0,
        Mode::BestFirst => page_sim,
        Mode::Shark => shark_score(cfg, parent, l, classifier, page_sim),
    }
}

/// SharkSearch (Hersovici et al. 1998, as in crawling-the-web-2004 §3.2): the inherited score
/// (this page's similarity, or what it inherited, decayed) mixed with the link's neighbourhood
/// (its anchor's similarity, or 1 when the anchor matches, else its context's).
fn shark_score(
    cfg: &CrawlConfig,
    parent: &Parent,
    l: &OutLink,
    classifier: &Classifier,
    page_sim: f64,
) -> f64 {
    let (shark, query, tok) = (cfg.shark, &cfg.query, classifier.tokenizer());
    let inherited = if page_sim > 0.0 {
        shark.delta * page_sim
    } else {
        shark.delta * parent.score.max(0.0)
    };
    let anchor = query.cosine(tok, &l.anchor);
    let context = if anchor > 0.0 {
        1.0
    } else {
        let (a, b) = l.leaf_range;
        let lo = a.saturating_sub(shark.context_leaves);
        let hi = (b + shark.context_leaves).min(parent.leaves.len());
        query.cosine(tok, &parent.leaves[lo.min(hi)..hi].join(" "))
    };
    let neighbourhood = shark.beta * anchor + (1.0 - shark.beta) * context;
    shark.gamma * inherited + (1.0 - shark.gamma) * neighbourhood
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
