//! Re-judging fetched pages and re-scoring the frontier (focused-crawling-1999 §3.3,
//! accelerated-focused-crawling-2002 §3.3): the store pages its rows out, the focus policy
//! ([`super::policy::rules`]) decides every score, and the store writes them back. Runs on the
//! blocking pool (it classifies and reads the whole crawl).

use super::policy::rules::{apprentice_rescored, rescored, Inherited, ParentVerdict};
use super::{policy, Judge, Mode};
use crate::store::{CrawlDb, InLink, PageId, ScoreChange, StoreError, TextSample, Verdict, PAGE};
use forager_classifier::Scratch;
use std::collections::HashMap;

mod beside;
pub use beside::Beside;

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
/// `score(features, what soft focus knows of the link)` ([`apprentice_rescored`]), writing
/// only the scores that changed; returns rows updated.
pub(super) fn by_apprentice(
    s: &mut impl CrawlDb,
    score: impl Fn(&[u32], Inherited) -> f64,
) -> Result<usize, StoreError> {
    Ok(rescan(&mut InLine(s), &score)?.written)
}

/// What one pass over the links into frontier URLs ([`rescan`]) did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scanned {
    /// Frontier URLs with features on an in-link (the ones the apprentice scores).
    pub scored: usize,
    /// Of those, the ones whose score changed.
    pub changed: usize,
    /// Rows updated (changed ones that still held the score read).
    pub written: usize,
    /// Whether the pass was stopped before the end.
    pub stopped: bool,
}

/// Where a pass over the frontier's in-links reads them and writes its changes.
pub(super) trait Door {
    /// A page of links into frontier URLs after `after`.
    fn read(
        &mut self,
        after: Option<(PageId, PageId)>,
        limit: usize,
    ) -> Result<Vec<InLink>, StoreError>;
    /// Writes score changes (compare and set); returns rows updated.
    fn write(&mut self, changes: Vec<ScoreChange>) -> Result<usize, StoreError>;
    /// Whether the pass should end now.
    fn stopped(&self) -> bool {
        false
    }
}

/// The crawl's own door, in line.
struct InLine<'a, S>(&'a mut S);

impl<S: CrawlDb> Door for InLine<'_, S> {
    fn read(
        &mut self,
        after: Option<(PageId, PageId)>,
        limit: usize,
    ) -> Result<Vec<InLink>, StoreError> {
        self.0.frontier_in_links(after, limit)
    }
    fn write(&mut self, changes: Vec<ScoreChange>) -> Result<usize, StoreError> {
        self.0.swap_frontier_scores(&changes)
    }
}

/// One pass over the links into frontier URLs: each URL with features on an in-link scored by
/// the apprentice ([`apprentice_rescored`]) and its score written where it changed (a [`PAGE`]
/// of changes at a time, so memory stays bounded).
pub(super) fn rescan(
    door: &mut impl Door,
    score: &impl Fn(&[u32], Inherited) -> f64,
) -> Result<Scanned, StoreError> {
    let mut out = Scanned::default();
    let mut changes: Vec<ScoreChange> = Vec::new();
    let mut visit = |links: &[InLink], changes: &mut Vec<ScoreChange>| {
        let Some(new) = apprentice_score(links, score) else {
            return;
        };
        out.scored += 1;
        let old = links[0].dst_score;
        if new.to_bits() != old.to_bits() {
            out.changed += 1;
            changes.push((links[0].dst, old, new));
        }
    };
    let mut group = Grouped::default();
    let (mut after, mut written, mut stopped) = (None, 0, false);
    loop {
        if changes.len() >= PAGE {
            written += door.write(std::mem::take(&mut changes))?;
        }
        if door.stopped() {
            stopped = true;
            break;
        }
        let page = door.read(after, PAGE)?;
        let Some(last) = page.last() else { break };
        after = Some((last.dst, last.src));
        group.feed(page, |links| visit(links, &mut changes));
    }
    if !stopped {
        group.finish(|links| visit(links, &mut changes));
    }
    if !changes.is_empty() {
        written += door.write(changes)?;
    }
    out.written = written;
    out.stopped = stopped;
    Ok(out)
}

/// A frontier URL's apprentice score from the links into it ([`apprentice_rescored`]), or
/// `None` when none has features.
fn apprentice_score(links: &[InLink], score: &impl Fn(&[u32], Inherited) -> f64) -> Option<f64> {
    let with_features = (links.iter()).filter_map(|l| {
        let base = Inherited {
            relevance: l.src_relevance.unwrap_or(0.0),
            weight: l.weight,
        };
        Some((l.features.as_deref()?, base))
    });
    apprentice_rescored(with_features, score)
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
    let mut group = Grouped::default();
    let mut f = |links: &[InLink]| f(links[0].dst, links[0].dst_score, links);
    let mut after = None;
    loop {
        let page = s.frontier_in_links(after, page)?;
        let Some(last) = page.last() else { break };
        after = Some((last.dst, last.src));
        group.feed(page, &mut f);
    }
    group.finish(f);
    Ok(())
}

/// In-links read in (target, source) order, handed on one target's links at a time (a
/// target's links may straddle two pages).
#[derive(Default)]
struct Grouped(Vec<InLink>);

impl Grouped {
    /// Hands `f` each target of `page` whose links are complete; keeps the last one's.
    fn feed(&mut self, page: Vec<InLink>, mut f: impl FnMut(&[InLink])) {
        for l in page {
            if self.0.first().is_some_and(|g| g.dst != l.dst) {
                f(&self.0);
                self.0.clear();
            }
            self.0.push(l);
        }
    }

    /// Hands `f` the last target's links, if any.
    fn finish(self, mut f: impl FnMut(&[InLink])) {
        if !self.0.is_empty() {
            f(&self.0);
        }
    }
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
        remove_db(&p);
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
        remove_db(&p);
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
        remove_db(&p);
    }

    /// A store on file where a (R 0.8) links to x [1] and y [2], b (R 0.3) to y [3] and z.
    fn featured(name: &str) -> (Store, std::path::PathBuf) {
        let p =
            std::env::temp_dir().join(format!("forager-rescore-{}-{name}.db", std::process::id()));
        remove_db(&p);
        let mut st = Store::open(&p).unwrap();
        crate::store::contract::two_fetched_parents(&mut st);
        (st, p)
    }

    /// Removes a test database with its WAL, shared memory and lock files.
    fn remove_db(p: &std::path::Path) {
        for ext in ["", "-wal", "-shm", ".lock"] {
            let _ = std::fs::remove_file(format!("{}{ext}", p.display()));
        }
    }

    /// A scorer of features alone: feature f scores f / 10, plus a tenth of soft focus's score.
    fn by_feature(f: &[u32], base: Inherited) -> f64 {
        f64::from(f[0]) / 10.0 + base.soft() / 10.0
    }

    /// What soft focus knows of a link in the text of a page of relevance `r`.
    fn text(relevance: f64) -> Inherited {
        Inherited {
            relevance,
            weight: 1.0,
        }
    }

    /// Every frontier URL's score, by row.
    fn scores(st: &Store) -> Vec<(PageId, f64)> {
        let mut v: Vec<(PageId, f64)> = (crate::store::contract::all_in_links(st, PAGE).iter())
            .map(|l| (l.dst, l.dst_score))
            .collect();
        v.dedup();
        v
    }

    #[test]
    fn an_apprentice_rescore_writes_only_the_scores_that_change() {
        let (mut st, p) = featured("changed");
        // x: [1] from a (base 0.8); y: best of [2] from a (0.8) and [3] from b (0.3); z: none.
        assert_eq!(by_apprentice(&mut st, by_feature).unwrap(), 2);
        let got: Vec<f64> = scores(&st).iter().map(|s| s.1).collect();
        let y = by_feature(&[2], text(0.8)).max(by_feature(&[3], text(0.3)));
        assert_eq!(got, vec![by_feature(&[1], text(0.8)), y, 0.3]);
        assert_eq!(
            by_apprentice(&mut st, by_feature).unwrap(),
            0,
            "nothing changed"
        );
        drop(st);
        remove_db(&p);
    }

    #[test]
    fn a_rescore_beside_the_loop_lands_what_the_one_in_line_writes() {
        let (mut inline, p) = featured("inline");
        let a = apprentice();
        by_apprentice(&mut inline, |f, b| crate::crawl::policy::guided(&a, f, b)).unwrap();
        let want = scores(&inline);
        let (st, q) = featured("beside");
        let rt = tokio::runtime::Runtime::new().unwrap();
        let mut slot = Some(st);
        let mut beside = Beside::default();
        beside.ask(std::sync::Arc::new(apprentice()));
        let landed = rt.block_on(async {
            for _ in 0..500 {
                if let Some(done) = beside.step(&mut slot).await.unwrap() {
                    return done;
                }
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            }
            panic!("the pass never landed");
        });
        let st = slot.take().unwrap();
        assert_eq!(scores(&st), want);
        assert_eq!((landed.scored, landed.written), (2, landed.changed));
        drop((st, inline));
        remove_db(&p);
        remove_db(&q);
    }

    /// An apprentice trained so that feature 3 leads to relevant pages and 1 and 2 do not.
    fn apprentice() -> forager_classifier::apprentice::Apprentice {
        let mut a = forager_classifier::apprentice::Apprentice::new();
        for _ in 0..5 {
            a.add(&[3], true);
            a.add(&[1], false);
            a.add(&[2], false);
        }
        a
    }
}
