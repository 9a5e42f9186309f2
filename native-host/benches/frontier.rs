//! Frontier selection latency at scale: a crawl database holding one million unvisited URLs
//! on ten thousand servers; time to check out a batch of 64 in frontier order (served by the
//! partial index, no sort), and to record a batch of fetched pages with 20 outlinks each.

use forager::store::{DocStatus, NewUrl, Outcome, Store};
use std::time::Instant;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let path =
        std::env::temp_dir().join(format!("forager-frontier-bench-{}.db", std::process::id()));
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
    }
    let mut store = Store::open(&path).unwrap();
    let n = 1_000_000usize;
    let t = Instant::now();
    let mut batch = Vec::with_capacity(10_000);
    for i in 0..n {
        batch.push(NewUrl {
            url: format!("http://site-{}.test/page-{i}.html", i % 10_000),
            host: format!("site-{}.test", i % 10_000),
            score: ((i * 7919) % 1000) as f64 / 1000.0,
            depth: 1,
            via: None,
            features: None,
            weight: 1.0,
        });
        if batch.len() == 10_000 {
            store.add_seeds(&batch).unwrap();
            batch.clear();
        }
    }
    println!(
        "frontier bench: inserted {n} URLs in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let rounds = 200;
    let t = Instant::now();
    let mut checked = Vec::new();
    for _ in 0..rounds {
        checked.extend(store.checkout(64).unwrap());
    }
    let per = t.elapsed().as_secs_f64() * 1e3 / rounds as f64;
    println!("  checkout of 64 at {n} frontier URLs: {per:.2} ms per batch");
    let t = Instant::now();
    for chunk in checked.chunks(64).take(50) {
        let outcomes: Vec<Outcome> = chunk
            .iter()
            .map(|w| Outcome {
                oid: w.oid,
                status: DocStatus::Fetched,
                relevance: 0.5,
                links: (0..20)
                    .map(|k| NewUrl {
                        url: format!("{}/out-{k}", w.url),
                        host: url::Url::parse(&w.url)
                            .unwrap()
                            .host_str()
                            .unwrap()
                            .to_owned(),
                        score: 0.5,
                        depth: 2,
                        via: Some((w.oid, "a".into())),
                        features: None,
                        weight: 1.0,
                    })
                    .collect(),
                ..Outcome::default()
            })
            .collect();
        store.record(&outcomes).unwrap();
    }
    let per = t.elapsed().as_secs_f64() * 1e3 / 50.0;
    println!("  record 64 pages with 20 new outlinks each: {per:.1} ms per batch");
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!("  database: {} MB", size >> 20);
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
    }
}
