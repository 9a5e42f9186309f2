//! Re-judging fetched pages and re-scoring the frontier (focused-crawling-1999 §3.3,
//! accelerated-focused-crawling-2002 §3.3): the store pages its rows out, the focus policy
//! ([`super::policy::rules`]) decides every score, and the store writes them back. Runs on the
//! blocking pool (it classifies and reads the whole crawl).

use super::policy::rules::{apprentice_rescored, rescored, ParentVerdict};
use super::{policy, Judge, Mode};
use crate::store::{CrawlDb, InLink, PageId, StoreError, TextSample, Verdict, PAGE};
use forager_classifier::Scratch;
use std::collections::HashMap;

/// Re-judges the crawl's fetched pages with `judge` and, when `frontier`, re-scores the
/// frontier from their new verdicts under `mode`; returns (pages re-judged, frontier rows
/// re-scored).
pub fn rejudge(
    s: &mut impl CrawlDb,
    judge: &Judge,
    mode: Mode,
    frontier: bool,
) -> Result<(usize, usize), StoreError> {
    let mut scratch = Scratch::new();
    let mut expands = HashMap::new();
    let (mut judged, mut after) = (0, None);
    loop {
        let page = s.fetched_texts(after, PAGE)?;
        let Some(last) = page.last() else { break };
        after = Some(last.oid);
        let mut verdicts: Vec<(PageId, Verdict)> = Vec::with_capacity(page.len());
        for p in &page {
            let Some(text) = &p.text else { continue };
            let v = judge.judge(&p.url, text, &mut scratch);
            expands.insert(p.oid, policy::expands(mode, &v, false));
            verdicts.push((p.oid, (v.relevance, v.log_relevance, v.best_leaf_id.into())));
        }
        judged += verdicts.len();
        s.save_verdicts(&verdicts)?;
    }
    let rescored = if frontier {
        by_parents(s, mode, &expands)?
    } else {
        0
    };
    Ok((judged, rescored))
}

/// Re-scores the frontier from its fetched parents' stored relevance ([`rescored`]); a parent
/// not in `expands` (no stored text to judge again) counts as expanded, as it was when its
/// links were queued.
fn by_parents(
    s: &mut impl CrawlDb,
    mode: Mode,
    expands: &HashMap<PageId, bool>,
) -> Result<usize, StoreError> {
    let mut updates = Vec::new();
    for_each_target(s, |dst, score, links| {
        let parents: Vec<ParentVerdict> = (links.iter())
            .filter_map(|l| {
                Some(ParentVerdict {
                    relevance: l.src_relevance?,
                    weight: l.weight,
                    expands: expands.get(&l.src).copied().unwrap_or(true),
                })
            })
            .collect();
        if let Some(new) = rescored(mode, score, &parents) {
            updates.push((dst, new));
        }
    })?;
    s.set_frontier_scores(&updates)
}

/// Re-scores every frontier URL with features on its in-links by the retrained apprentice's
/// `score(features, R(parent) × weight)` ([`apprentice_rescored`]); returns rows updated.
pub(super) fn by_apprentice(
    s: &mut impl CrawlDb,
    score: impl Fn(&[u32], f64) -> f64,
) -> Result<usize, StoreError> {
    let mut updates = Vec::new();
    for_each_target(s, |dst, _, links| {
        let with_features = (links.iter()).filter_map(|l| {
            let base = l.src_relevance.unwrap_or(0.0) * l.weight;
            Some((l.features.as_deref()?, base))
        });
        if let Some(new) = apprentice_rescored(with_features, &score) {
            updates.push((dst, new));
        }
    })?;
    s.set_frontier_scores(&updates)
}

/// Calls `f` with each frontier URL that has in-links: (row id, score, its in-links), paging
/// through the store's rows (a URL's links may straddle two pages).
fn for_each_target(
    s: &impl CrawlDb,
    mut f: impl FnMut(PageId, f64, &[InLink]),
) -> Result<(), StoreError> {
    let mut group: Vec<InLink> = Vec::new();
    let mut after = None;
    loop {
        let page = s.frontier_in_links(after, PAGE)?;
        let Some(last) = page.last() else { break };
        after = Some((last.dst, last.src));
        for l in page {
            if group.first().is_some_and(|g| g.dst != l.dst) {
                f(group[0].dst, group[0].dst_score, &group);
                group.clear();
            }
            group.push(l);
        }
    }
    if let Some(g) = group.first() {
        f(g.dst, g.dst_score, &group);
    }
    Ok(())
}

/// Up to `max` fetched pages' (URL, text), the ones with the smallest URL hashes
/// ([`TextSample`]).
pub(super) fn sample_texts(
    s: &impl CrawlDb,
    max: usize,
) -> Result<Vec<(String, String)>, StoreError> {
    let mut sample = TextSample::new(max);
    let mut after = None;
    loop {
        let page = s.fetched_texts(after, PAGE)?;
        let Some(last) = page.last() else { break };
        after = Some(last.oid);
        for p in &page {
            if let Some(text) = &p.text {
                sample.offer(&p.url, text);
            }
        }
    }
    Ok(sample.into_pages())
}
