//! How well "highlight promising links" picks links, judged on a crawl of a mini-web: the
//! apprentice learns from the first half of the crawl (as the host's would by then), and the
//! links of the pages fetched in the second half are scored as the browser scores them
//! ([`forager_classifier::links::score_links`]). Ground truth is the web's labels of the
//! targets. Compared: the apprentice, the words around each link (the fallback before an
//! apprentice is trained) and the parent's relevance (what soft focus gives every link of
//! a page).

use crate::miniweb::{MiniWeb, Task};
use forager_classifier::apprentice::{Apprentice, LeafTokens, DEFAULT_D_MAX};
use forager_classifier::links::{link_features, score_links, LinkSpan, TEMPLATE_WEIGHT};
use forager_classifier::{Model, Scratch};
use forager_core::parse::{parse_page, OutLink};
use serde::Serialize;
use std::collections::HashMap;

/// How many links of a page are marked.
pub const MARKED: usize = 5;

/// One scorer's quality over the evaluation pages.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Quality {
    /// Mean precision of the top 5 links of a page (pages with at least 5 labelled targets).
    pub p_at_5: f64,
    /// Area under the ROC curve over every (page, target) pair.
    pub auc: f64,
    /// Mean AUC within a page (pages with relevant and other targets): how well the scorer
    /// orders the links of the page being read, which is what highlighting does.
    pub page_auc: f64,
    /// Share of relevant targets among the links marked (top 5 of each page).
    pub marked_rate: f64,
    /// Share of relevant targets among the other links.
    pub unmarked_rate: f64,
}

/// The measures of one crawl.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Measured {
    /// Pages the apprentice learned from.
    pub train_pages: usize,
    /// Its training instances [low, high].
    pub instances: [u64; 2],
    /// Pages whose links were scored.
    pub eval_pages: usize,
    /// (page, labelled target) pairs scored.
    pub links: usize,
    /// Share of them whose target is relevant.
    pub base_rate: f64,
    /// The apprentice (trained on the first half).
    pub apprentice: Quality,
    /// The words around each link (no apprentice).
    pub context: Quality,
    /// The parent's relevance R(page).
    pub parent: Quality,
}

/// Scores of one page's labelled targets (max over the links to each) and their truth.
struct PageScores {
    apprentice: Vec<f64>,
    context: Vec<f64>,
    parent: Vec<f64>,
    truth: Vec<bool>,
}

/// Measures highlighting on `fetched` (a crawl's (url, R) in fetch order) of `task`.
pub fn measure(
    web: &MiniWeb,
    task: &Task,
    model: &mut Model,
    fetched: &[(String, f64)],
) -> Measured {
    let classifier = model.classifier();
    let mut scratch = Scratch::new();
    let half = fetched.len() / 2;
    let apprentice = train(web, &classifier, &fetched[..half], &mut scratch);
    let mut pages = Vec::new();
    for (url, _) in &fetched[half..] {
        let Some((page, spans, verdict)) = read(web, url, &classifier, &mut scratch) else {
            continue;
        };
        pages.push(score_page(
            web,
            task,
            url,
            &page,
            &spans,
            &verdict,
            &classifier,
            &apprentice,
            &mut scratch,
        ));
    }
    let links: usize = pages.iter().map(|p| p.truth.len()).sum();
    let relevant: usize = pages
        .iter()
        .map(|p| p.truth.iter().filter(|&&t| t).count())
        .sum();
    Measured {
        train_pages: half,
        instances: apprentice.instances(),
        eval_pages: pages.len(),
        links,
        base_rate: relevant as f64 / links.max(1) as f64,
        apprentice: quality(&pages, |p| &p.apprentice),
        context: quality(&pages, |p| &p.context),
        parent: quality(&pages, |p| &p.parent),
    }
}

/// Scores one page's links with the apprentice, by context and by the parent's relevance,
/// ranked as the browser ranks them: by priority (boilerplate links weighed down), the
/// parent's relevance by the same weight (soft focus's link score); max over links per target.
#[allow(clippy::too_many_arguments)]
fn score_page(
    web: &MiniWeb,
    task: &Task,
    url: &str,
    page: &forager_core::parse::ParsedPage,
    spans: &[LinkSpan],
    verdict: &forager_classifier::Classification,
    classifier: &forager_classifier::Classifier,
    apprentice: &Apprentice,
    scratch: &mut Scratch,
) -> PageScores {
    let (text, leaves) = (&page.text.text, &page.leaves);
    let ap = score_links(
        classifier,
        Some(apprentice),
        text,
        leaves,
        spans,
        DEFAULT_D_MAX,
        scratch,
    );
    let cx = score_links(
        classifier,
        None,
        text,
        leaves,
        spans,
        DEFAULT_D_MAX,
        scratch,
    );
    let mut by_target: HashMap<&str, [f64; 3]> = HashMap::new();
    for ((l, a), c) in page.links.iter().zip(&ap).zip(&cx) {
        if web.labels.contains_key(l.url.as_str()) && l.url.as_str() != url {
            let parent = verdict.relevance * if l.boilerplate { TEMPLATE_WEIGHT } else { 1.0 };
            let e = by_target.entry(l.url.as_str()).or_insert([0.0; 3]);
            *e = [e[0].max(a.priority), e[1].max(c.priority), e[2].max(parent)];
        }
    }
    let mut targets: Vec<(&str, [f64; 3])> = by_target.into_iter().collect();
    targets.sort_unstable_by(|a, b| a.0.cmp(b.0));
    PageScores {
        apprentice: targets.iter().map(|t| t.1[0]).collect(),
        context: targets.iter().map(|t| t.1[1]).collect(),
        parent: targets.iter().map(|t| t.1[2]).collect(),
        truth: targets
            .iter()
            .map(|t| web.is_relevant(t.0, &task.good))
            .collect(),
    }
}

/// The apprentice as the host's would be after the crawl's first pages `first`: trained on
/// their links to pages fetched among them, with the crawl's relevance as critic.
fn train(
    web: &MiniWeb,
    classifier: &forager_classifier::Classifier,
    first: &[(String, f64)],
    scratch: &mut Scratch,
) -> Apprentice {
    let relevance: HashMap<&str, f64> = first.iter().map(|(u, r)| (u.as_str(), *r)).collect();
    let mut apprentice = Apprentice::new();
    for (url, _) in first {
        let Some((page, spans, verdict)) = read(web, url, classifier, scratch) else {
            continue;
        };
        let tokens = LeafTokens::new(classifier.tokenizer(), &page.leaves);
        for (l, s) in page.links.iter().zip(&spans) {
            if let Some(r) = relevance.get(l.url.as_str()) {
                let link = (s.start, s.end, s.anchor.as_str());
                let f = link_features(classifier, &tokens, &verdict, link, DEFAULT_D_MAX, scratch);
                apprentice.add(&f, forager_core::crawl::policy::high(*r));
            }
        }
    }
    apprentice
}

/// The page at `url` parsed, its links as spans, and the classifier's verdict on it.
fn read(
    web: &MiniWeb,
    url: &str,
    classifier: &forager_classifier::Classifier,
    scratch: &mut Scratch,
) -> Option<(
    forager_core::parse::ParsedPage,
    Vec<LinkSpan>,
    forager_classifier::Classification,
)> {
    let html = web.read_page(url).ok()?;
    let page = parse_page(&html, &url::Url::parse(url).ok()?);
    let spans = page.links.iter().map(OutLink::span).collect();
    let verdict = classifier.classify(&page.text.text, scratch);
    Some((page, spans, verdict))
}

/// P@5, AUC and the marked/unmarked rates of one scorer. Ties are shared fairly: a tie across
/// the top-5 boundary counts each tied link by the share of it that falls inside.
fn quality(pages: &[PageScores], scores: impl Fn(&PageScores) -> &Vec<f64>) -> Quality {
    let (mut p5, mut n5) = (0.0, 0usize);
    let (mut marked, mut marked_rel, mut other, mut other_rel) = (0.0, 0.0, 0.0, 0.0);
    let mut pooled: Vec<(f64, bool)> = Vec::new();
    let (mut page_auc, mut n_auc) = (0.0, 0usize);
    for p in pages {
        let s = scores(p);
        let mut own: Vec<(f64, bool)> = s.iter().copied().zip(p.truth.iter().copied()).collect();
        if own.iter().any(|x| x.1) && own.iter().any(|x| !x.1) {
            page_auc += auc(&mut own);
            n_auc += 1;
        }
        pooled.extend(own);
        let inside = top_share(s, MARKED);
        for ((w, &t), _) in inside.iter().zip(&p.truth).zip(s) {
            marked += w;
            other += 1.0 - w;
            if t {
                marked_rel += w;
                other_rel += 1.0 - w;
            }
        }
        if s.len() >= MARKED {
            let hits: f64 = inside
                .iter()
                .zip(&p.truth)
                .filter(|(_, &t)| t)
                .map(|(w, _)| w)
                .sum();
            p5 += hits / MARKED as f64;
            n5 += 1;
        }
    }
    Quality {
        p_at_5: p5 / n5.max(1) as f64,
        auc: auc(&mut pooled),
        page_auc: page_auc / n_auc.max(1) as f64,
        marked_rate: marked_rel / f64::max(marked, 1.0),
        unmarked_rate: other_rel / f64::max(other, 1.0),
    }
}

/// How much of each item is inside the top `k` by score (1 or 0, or a share for ties).
fn top_share(s: &[f64], k: usize) -> Vec<f64> {
    let mut out = vec![0.0; s.len()];
    for (i, &x) in s.iter().enumerate() {
        let above = s.iter().filter(|&&y| y > x).count();
        let tied = s.iter().filter(|&&y| y == x).count();
        let room = k.saturating_sub(above).min(tied);
        out[i] = room as f64 / tied as f64;
    }
    out
}

/// The area under the ROC curve (Mann-Whitney, ties counted half).
pub fn auc(pairs: &mut [(f64, bool)]) -> f64 {
    pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let (pos, neg) = pairs.iter().fold(
        (0.0, 0.0),
        |(p, n), x| if x.1 { (p + 1.0, n) } else { (p, n + 1.0) },
    );
    if pos == 0.0 || neg == 0.0 {
        return 0.5;
    }
    let (mut rank_sum, mut i) = (0.0, 0);
    while i < pairs.len() {
        let j = pairs[i..].iter().take_while(|x| x.0 == pairs[i].0).count() + i;
        let mid = (i + j + 1) as f64 / 2.0;
        rank_sum += mid * pairs[i..j].iter().filter(|x| x.1).count() as f64;
        i = j;
    }
    (rank_sum - pos * (pos + 1.0) / 2.0) / (pos * neg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auc_and_top_shares() {
        assert_eq!(auc(&mut [(0.9, true), (0.1, false)]), 1.0);
        assert_eq!(auc(&mut [(0.1, true), (0.9, false)]), 0.0);
        assert_eq!(auc(&mut [(0.5, true), (0.5, false)]), 0.5);
        assert_eq!(top_share(&[3.0, 2.0, 1.0], 2), vec![1.0, 1.0, 0.0]);
        assert_eq!(top_share(&[1.0, 1.0, 1.0, 1.0], 2), vec![0.5; 4]);
        let page = PageScores {
            apprentice: vec![0.9, 0.8, 0.1, 0.2, 0.3, 0.0],
            context: vec![],
            parent: vec![0.5; 6],
            truth: vec![true, true, false, false, false, false],
        };
        let q = quality(std::slice::from_ref(&page), |p| &p.apprentice);
        assert!((q.p_at_5 - 0.4).abs() < 1e-9);
        assert_eq!(q.auc, 1.0);
        let flat = quality(std::slice::from_ref(&page), |p| &p.parent);
        assert!((flat.p_at_5 - 2.0 / 6.0).abs() < 1e-9, "{flat:?}");
        assert_eq!(flat.auc, 0.5);
    }
}
