//! Distiller speed: relevance-weighted HITS over a random crawl graph of one million
//! cross-site edges, on one core. Prints the time; asserts only sanity.

use forager::distiller::{distill, Edge, Params};
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::time::Instant;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let (pages, sites, edges_n) = (200_000i64, 5_000i64, 1_000_000usize);
    let site = |p: i64| p % sites;
    let relevance: HashMap<i64, f64> = (0..pages).map(|p| (p, rng.random::<f64>())).collect();
    let edges: Vec<Edge> = (0..edges_n)
        .map(|_| {
            let (src, mut dst) = (rng.random_range(0..pages), rng.random_range(0..pages));
            if site(dst) == site(src) {
                dst = (dst + 1) % pages;
            }
            Edge {
                src,
                dst,
                src_site: site(src),
                dst_site: site(dst),
            }
        })
        .collect();
    for share in [0.15, 1.0] {
        let p = Params {
            authority_share: share,
            tolerance: 0.0, // run all 50 iterations
            ..Params::default()
        };
        let t = Instant::now();
        let s = distill(&edges, &relevance, &p);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        println!(
            "distiller: {} edges, authority share {share}: {ms:.0} ms for {} iterations ({} hubs, {} authorities)",
            edges.len(),
            s.iterations,
            s.hubs.len(),
            s.authorities.len()
        );
        assert!(!s.hubs.is_empty());
    }
}
