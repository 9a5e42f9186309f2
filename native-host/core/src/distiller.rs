//! The distiller (focused-crawling-1999 §3.2; WWW8 §3.2): relevance-weighted HITS over the
//! crawl graph, finding the hubs that are the crawl's main output for a person.
//!
//! Candidate authorities are the fetched pages in the top `authority_share` by relevance; hubs
//! are pages linking to at least one of them, except pages judged R = 0 (marked not relevant by
//! the user); only links between different servers count.
//! Edge weights follow WWW8 (EF[u,v] = R(v) forward, EB[u,v] = R(u) backward) with the draft's
//! server votes: the pages of one server pointing to v share one vote for v, and the pages of
//! v's server that u points to share one vote from u. Pure and synchronous over an edge list:
//! the database only feeds it.

use rustc_hash::FxHashMap;
use std::collections::HashMap;

/// One link between fetched pages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Edge {
    /// Source page.
    pub src: i64,
    /// Target page.
    pub dst: i64,
    /// Source server.
    pub src_site: i64,
    /// Target server.
    pub dst_site: i64,
}

/// Distiller parameters.
#[derive(Clone, Debug)]
pub struct Params {
    /// Share of fetched pages (by relevance) that are candidate authorities (rho).
    pub authority_share: f64,
    /// Most power iterations.
    pub max_iterations: usize,
    /// Stop when no score moves more than this between iterations.
    pub tolerance: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            authority_share: 0.15,
            max_iterations: 50,
            tolerance: 1e-9,
        }
    }
}

/// Scores of one distillation, best first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scores {
    /// (page, hub score).
    pub hubs: Vec<(i64, f64)>,
    /// (page, authority score).
    pub authorities: Vec<(i64, f64)>,
    /// Iterations run.
    pub iterations: usize,
}

/// Runs relevance-weighted HITS; `relevance` gives R(d) of every fetched page (pages missing
/// from it are unfetched and ignored).
pub fn distill(edges: &[Edge], relevance: &HashMap<i64, f64>, p: &Params) -> Scores {
    // rho: the relevance of the page at the authority_share quantile.
    let mut rels: Vec<f64> = relevance
        .values()
        .copied()
        .filter(|r| r.is_finite())
        .collect();
    rels.sort_by(|a, b| b.total_cmp(a));
    if rels.is_empty() {
        return Scores::default();
    }
    let k = ((rels.len() as f64 * p.authority_share).ceil() as usize).clamp(1, rels.len());
    let rho = rels[k - 1];
    let is_auth = |v: i64| relevance.get(&v).is_some_and(|&r| r >= rho && r > 0.0);
    // A page judged R = 0 (the user marked it not relevant) is no hub either: a hub is the
    // user's answer, and the user has said this page is not one.
    let is_hub = |u: i64| relevance.get(&u).is_some_and(|&r| r > 0.0);

    let kept: Vec<Edge> = edges
        .iter()
        .copied()
        .filter(|e| e.src_site != e.dst_site && is_hub(e.src) && is_auth(e.dst))
        .collect();
    // Server votes: pages of one server pointing to v; pages of one server that u points to.
    let mut src_votes: FxHashMap<(i64, i64), u32> = FxHashMap::default(); // (src_site, dst) -> count
    let mut dst_votes: FxHashMap<(i64, i64), u32> = FxHashMap::default(); // (src, dst_site) -> count
    for e in &kept {
        *src_votes.entry((e.src_site, e.dst)).or_default() += 1;
        *dst_votes.entry((e.src, e.dst_site)).or_default() += 1;
    }
    // Dense indices.
    let mut hub_ix: FxHashMap<i64, usize> = FxHashMap::default();
    let mut auth_ix: FxHashMap<i64, usize> = FxHashMap::default();
    let mut hub_ids = Vec::new();
    let mut auth_ids = Vec::new();
    let mut w: Vec<(usize, usize, f64, f64)> = Vec::with_capacity(kept.len());
    for e in &kept {
        let h = *hub_ix.entry(e.src).or_insert_with(|| {
            hub_ids.push(e.src);
            hub_ids.len() - 1
        });
        let a = *auth_ix.entry(e.dst).or_insert_with(|| {
            auth_ids.push(e.dst);
            auth_ids.len() - 1
        });
        let (ru, rv) = (relevance[&e.src], relevance[&e.dst]);
        let ef = rv / f64::from(dst_votes[&(e.src, e.dst_site)]);
        let eb = ru / f64::from(src_votes[&(e.src_site, e.dst)]);
        w.push((h, a, ef, eb));
    }
    let mut hub = vec![1.0; hub_ids.len()];
    let mut auth = vec![1.0; auth_ids.len()];
    let mut iterations = 0;
    for _ in 0..p.max_iterations {
        iterations += 1;
        let mut new_auth = vec![0.0; auth.len()];
        for &(h, a, _, eb) in &w {
            new_auth[a] += eb * hub[h];
        }
        normalize(&mut new_auth);
        let mut new_hub = vec![0.0; hub.len()];
        for &(h, a, ef, _) in &w {
            new_hub[h] += ef * new_auth[a];
        }
        normalize(&mut new_hub);
        let delta = max_diff(&auth, &new_auth).max(max_diff(&hub, &new_hub));
        auth = new_auth;
        hub = new_hub;
        if delta < p.tolerance {
            break;
        }
    }
    let ranked = |ids: Vec<i64>, s: Vec<f64>| {
        let mut v: Vec<(i64, f64)> = ids.into_iter().zip(s).collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    };
    Scores {
        hubs: ranked(hub_ids, hub),
        authorities: ranked(auth_ids, auth),
        iterations,
    }
}

fn normalize(v: &mut [f64]) {
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm > 0.0 {
        for x in v.iter_mut() {
            *x /= norm;
        }
    }
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(src: i64, dst: i64, s: i64, d: i64) -> Edge {
        Edge {
            src,
            dst,
            src_site: s,
            dst_site: d,
        }
    }

    #[test]
    fn hand_computed_two_hubs() {
        // Hubs 1 (site 10) and 2 (site 20); authorities 3, 4 (sites 30, 40); R = 1 everywhere.
        let edges = [e(1, 3, 10, 30), e(1, 4, 10, 40), e(2, 3, 20, 30)];
        let rel: HashMap<i64, f64> = [(1, 1.0), (2, 1.0), (3, 1.0), (4, 1.0)].into();
        let s = distill(
            &edges,
            &rel,
            &Params {
                authority_share: 1.0,
                ..Params::default()
            },
        );
        // Principal eigenvectors of A^T A and A A^T for A = [[1,1],[1,0]]: ratio golden.
        let phi = (1.0 + 5f64.sqrt()) / 2.0;
        assert_eq!(s.hubs[0].0, 1);
        assert_eq!(s.authorities[0].0, 3);
        assert!((s.hubs[0].1 / s.hubs[1].1 - phi).abs() < 1e-6);
        assert!((s.authorities[0].1 / s.authorities[1].1 - phi).abs() < 1e-6);
    }

    #[test]
    fn a_popular_irrelevant_page_is_no_authority() {
        // Page 9 (irrelevant) is linked from every page; page 5 (relevant) from two.
        let mut edges = vec![e(1, 5, 1, 5), e(2, 5, 2, 5)];
        for src in 1..=4 {
            edges.push(e(src, 9, src, 9));
        }
        let rel: HashMap<i64, f64> =
            [(1, 0.9), (2, 0.8), (3, 0.1), (4, 0.1), (5, 0.95), (9, 0.01)].into();
        let s = distill(&edges, &rel, &Params::default());
        assert_eq!(s.authorities[0].0, 5);
        assert!(s.authorities.iter().all(|&(p, _)| p != 9));
    }

    #[test]
    fn a_page_marked_not_relevant_is_no_hub() {
        // Hub 1 is the best (two authorities), until the user marks it: R(1) = 0.
        let edges = [e(1, 3, 10, 30), e(1, 4, 10, 40), e(2, 3, 20, 30)];
        let p = Params {
            authority_share: 0.5,
            ..Params::default()
        };
        let mut rel: HashMap<i64, f64> = [(1, 0.3), (2, 0.3), (3, 1.0), (4, 1.0)].into();
        assert_eq!(distill(&edges, &rel, &p).hubs[0].0, 1);
        rel.insert(1, 0.0);
        let s = distill(&edges, &rel, &p);
        assert_eq!(s.hubs.iter().map(|h| h.0).collect::<Vec<_>>(), [2]);
        assert_eq!(s.authorities[0].0, 3);
    }

    #[test]
    fn a_same_site_link_farm_does_not_inflate_a_hub() {
        // Hub 1 (site 1) links to two authorities on other sites. Hub 2 (site 2) links to one
        // authority elsewhere and to many pages of its own site.
        let mut edges = vec![e(1, 10, 1, 10), e(1, 11, 1, 11), e(2, 10, 2, 10)];
        for farm in 100..150 {
            edges.push(e(2, farm, 2, 2));
        }
        let mut rel: HashMap<i64, f64> = [(1, 1.0), (2, 1.0), (10, 1.0), (11, 1.0)].into();
        for farm in 100..150 {
            rel.insert(farm, 1.0);
        }
        let s = distill(
            &edges,
            &rel,
            &Params {
                authority_share: 1.0,
                ..Params::default()
            },
        );
        assert_eq!(s.hubs[0].0, 1);
    }

    #[test]
    fn many_pages_of_one_server_share_one_vote() {
        // Site 1 has 10 pages all pointing to authority 20; site 2 has 2 pages pointing to 21,
        // and one page of site 3 points to 21 too. 21 has two servers voting, 20 only one.
        let mut edges: Vec<Edge> = (0..10).map(|i| e(i, 20, 1, 20)).collect();
        edges.push(e(100, 21, 2, 21));
        edges.push(e(101, 21, 2, 21));
        edges.push(e(200, 21, 3, 21));
        let mut rel: HashMap<i64, f64> = (0..10).map(|i| (i, 1.0)).collect();
        for p in [100, 101, 200, 20, 21] {
            rel.insert(p, 1.0);
        }
        let s = distill(
            &edges,
            &rel,
            &Params {
                authority_share: 1.0,
                ..Params::default()
            },
        );
        assert_eq!(s.authorities[0].0, 21);
    }
}
