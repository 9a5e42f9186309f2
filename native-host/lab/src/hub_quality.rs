//! How good a crawl's link evidence is, where the web has labels: the good hubs in the top 10
//! of each distiller method (next to the ceiling of ranking by the true count of relevant
//! out-neighbours), and the area under the ROC curve of R over the fetched pages.

use crate::miniweb::{MiniWeb, Task};
use forager_core::distiller::{self, Method, Params};
use forager_core::store::{Reader, StoreError};
use serde::Serialize;
use std::collections::HashMap;

/// One hub list's quality on one crawl.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HubQuality {
    /// Distiller method (or `sim:true-count`: pages ranked by their truly relevant fetched
    /// out-neighbours, a ceiling).
    pub method: String,
    /// Good hubs (relevant pages or listed hubs of a good topic) among the top 10.
    pub good_in_top10: usize,
    /// Hubs in the top 10 with a score that shows (>= 0.0005 of the best).
    pub listed: usize,
    /// Distinct scores among those (a collapsed list has one or two).
    pub distinct: usize,
}

/// Area under the ROC curve (the classifier crate's one definition, shared with the apprentice's critic).
pub use forager_classifier::apprentice::auc;

/// The quality of each distiller method's top 10 hubs on the crawl in `db`, and of the
/// true-count ceiling.
pub fn hub_quality(
    db: &dyn Reader,
    web: &MiniWeb,
    task: &Task,
) -> Result<Vec<HubQuality>, StoreError> {
    let (edges, rel) = db.graph()?;
    let mut urls: HashMap<i64, String> = HashMap::new();
    let mut url = |oid: i64| -> Result<String, StoreError> {
        if let Some(u) = urls.get(&oid) {
            return Ok(u.clone());
        }
        let u = db.url_of(oid)?.unwrap_or_default();
        urls.insert(oid, u.clone());
        Ok(u)
    };
    let mut out = Vec::new();
    for name in Method::NAMES {
        let p = Params {
            method: Method::from_name(name).unwrap_or_default(),
            ..Params::default()
        };
        let s = distiller::distill(&edges, &rel, &p);
        let mut top = Vec::new();
        for &(oid, score) in s.hubs.iter().take(10) {
            top.push((url(oid)?, score));
        }
        out.push(quality(name, &top, web, task));
    }
    // The ceiling: the true count of relevant fetched out-neighbours (self-links left out).
    let mut count: HashMap<i64, usize> = HashMap::new();
    for e in edges.iter().filter(|e| e.src != e.dst) {
        if web.is_relevant(&url(e.dst)?, &task.good) {
            *count.entry(e.src).or_default() += 1;
        }
    }
    let mut ranked: Vec<(i64, usize)> = count.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut top = Vec::new();
    for &(oid, n) in ranked.iter().take(10) {
        top.push((url(oid)?, n as f64));
    }
    out.push(quality("sim:true-count", &top, web, task));
    Ok(out)
}

fn quality(method: &str, top: &[(String, f64)], web: &MiniWeb, task: &Task) -> HubQuality {
    let best = top.first().map_or(0.0, |t| t.1);
    let shown: Vec<&(String, f64)> = top
        .iter()
        .filter(|t| t.1 >= 0.0005 * best && t.1 > 0.0)
        .collect();
    let mut scores: Vec<f64> = shown.iter().map(|t| t.1).collect();
    scores.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    HubQuality {
        method: method.to_owned(),
        good_in_top10: shown
            .iter()
            .filter(|t| web.is_good_hub(&t.0, &task.good))
            .count(),
        listed: shown.len(),
        distinct: scores.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::auc;

    #[test]
    fn auc_of_perfect_reversed_and_tied_rankings() {
        let perfect = vec![(0.9, true), (0.8, true), (0.2, false), (0.1, false)];
        assert_eq!(auc(perfect), Some(1.0));
        assert_eq!(auc(vec![(0.9, false), (0.1, true)]), Some(0.0));
        assert_eq!(auc(vec![(0.5, false), (0.5, true)]), Some(0.5));
        // One positive above one of two negatives: 1/2.
        assert_eq!(
            auc(vec![(0.3, true), (0.1, false), (0.5, false)]),
            Some(0.5)
        );
        assert_eq!(auc(vec![(0.3, true)]), None);
    }
}
