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

/// Re-scores the frontier by soft focus's rule from its fetched parents' stored relevance,
/// when the apprentice stops guiding; returns rows updated.
pub(super) fn by_soft_focus(s: &mut impl CrawlDb, mode: Mode) -> Result<usize, StoreError> {
    by_parents(s, mode, &HashMap::new())
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
    f: impl FnMut(PageId, f64, &[InLink]),
) -> Result<(), StoreError> {
    for_each_target_paged(s, PAGE, f)
}

/// [`for_each_target`] reading `page` rows at a time.
fn for_each_target_paged(
    s: &impl CrawlDb,
    page: usize,
    mut f: impl FnMut(PageId, f64, &[InLink]),
) -> Result<(), StoreError> {
    let mut group: Vec<InLink> = Vec::new();
    let mut after = None;
    loop {
        let page = s.frontier_in_links(after, page)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{DocStatus, NewUrl, Outcome, Store};

    /// A store where fetched pages a (R 0.8) and b (R 0.3) both link to y, and a also to x.
    fn two_parents(name: &str) -> (Store, std::path::PathBuf) {
        let p =
            std::env::temp_dir().join(format!("forager-rescore-{}-{name}.db", std::process::id()));
        let _ = std::fs::remove_file(&p);
        let mut st = Store::open(&p).unwrap();
        let seed = |u: &str| NewUrl::seed(&url::Url::parse(u).unwrap());
        st.add_seeds(&[seed("http://a.test/"), seed("http://b.test/")])
            .unwrap();
        let work = st.checkout(2).unwrap();
        let link = |via: PageId, u: &str, r: f64| NewUrl {
            via: Some((via, "l".into())),
            score: r,
            depth: 1,
            ..seed(u)
        };
        let page = |w: &crate::store::Work, r: f64, to: &[&str]| Outcome {
            oid: w.oid,
            status: DocStatus::Fetched,
            relevance: r,
            links: to.iter().map(|u| link(w.oid, u, r)).collect(),
            ..Outcome::default()
        };
        let (a, b) = if work[0].url.contains("a.test") {
            (&work[0], &work[1])
        } else {
            (&work[1], &work[0])
        };
        st.record(&[
            page(a, 0.8, &["http://x.test/", "http://y.test/"]),
            page(b, 0.3, &["http://y.test/"]),
        ])
        .unwrap();
        (st, p)
    }

    #[test]
    fn a_url_whose_links_straddle_pages_is_seen_once_with_all_of_them() {
        let (st, p) = two_parents("straddle");
        let mut by_one = Vec::new();
        for_each_target_paged(&st, 1, |dst, _, links| by_one.push((dst, links.len()))).unwrap();
        let mut by_page = Vec::new();
        for_each_target(&st, |dst, _, links| by_page.push((dst, links.len()))).unwrap();
        assert_eq!(by_one, by_page);
        let mut counts: Vec<usize> = by_one.iter().map(|(_, n)| *n).collect();
        counts.sort();
        assert_eq!(counts, vec![1, 2], "x has one parent, y two: {by_one:?}");
        drop(st);
        let _ = std::fs::remove_file(&p);
    }

    #[test]
    fn hard_focus_rescoring_drops_urls_of_parents_it_would_not_expand() {
        let (mut st, p) = two_parents("hard");
        let mut expands = HashMap::new();
        for_each_target(&st, |_, _, links| {
            for l in links {
                // a (R 0.8) is judged off the good topics now; b (R 0.3) stays on them.
                expands.insert(l.src, l.src_relevance < Some(0.5));
            }
        })
        .unwrap();
        assert_eq!(by_parents(&mut st, Mode::Hard, &expands).unwrap(), 2);
        let mut scores: Vec<f64> = st.checkout(2).unwrap().iter().map(|w| w.score).collect();
        scores.sort_by(f64::total_cmp);
        assert_eq!(scores, vec![0.0, 0.3], "x only had a; y keeps b's score");
        drop(st);
        let _ = std::fs::remove_file(&p);
    }
}
