//! Distiller speed: a random crawl graph of 100,000 fetched pages on 5,000 servers with ten
//! links each (one million edges, a third of them within a server), on one core, for each
//! method. Prints the time (the target: under 2 s for the default); asserts only sanity.

use forager::distiller::{distill, Edge, Method, Params};
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::time::Instant;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let (pages, sites, edges_n) = (100_000i64, 5_000i64, 1_000_000usize);
    let site = |p: i64| p % sites;
    let relevance: HashMap<i64, f64> = (0..pages).map(|p| (p, rng.random::<f64>())).collect();
    let edges: Vec<Edge> = (0..edges_n)
        .map(|_| {
            let src = rng.random_range(0..pages);
            let dst = if rng.random_bool(1.0 / 3.0) {
                // A page of the same server.
                site(src) + sites * rng.random_range(0..pages / sites)
            } else {
                rng.random_range(0..pages)
            };
            Edge {
                src,
                dst,
                src_site: site(src),
                dst_site: site(dst),
            }
        })
        .collect();
    for method in [
        Method::Randomized,
        Method::Hits,
        Method::OutDegree,
        Method::Topical,
    ] {
        for share in [0.15, 1.0] {
            let p = Params {
                authority_share: share,
                tolerance: 0.0, // run all 50 iterations
                method,
                ..Params::default()
            };
            let t = Instant::now();
            let s = distill(&edges, &relevance, &p);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            println!(
                "distiller {method:?}: {pages} pages, {} edges, authority share {share}: {ms:.0} ms for {} iterations ({} hubs, {} authorities)",
                edges.len(),
                s.iterations,
                s.hubs.len(),
                s.authorities.len()
            );
            assert!(!s.hubs.is_empty());
        }
    }
}
