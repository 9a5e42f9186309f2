//! Holdout accuracy of the apprentice on a crawl database's link instances:
//! `cargo run --release --example apprentice_eval -- DB`.

use forager_classifier::apprentice::Apprentice;

fn main() {
    let db = std::env::args().nth(1).expect("usage: apprentice_eval DB");
    let store = forager::store::Store::open(std::path::Path::new(&db)).expect("open");
    let all: Vec<_> = (store.apprentice_evidence().expect("instances").into_iter())
        .map(|(f, r)| forager::crawl::policy::instance(f, r))
        .collect();
    let mut a = Apprentice::new();
    let (train, test): (Vec<_>, Vec<_>) = all.iter().enumerate().partition(|(i, _)| i % 2 == 0);
    for (_, (f, h)) in &train {
        a.add(f, *h);
    }
    let mut sums = [0.0; 2];
    let mut n = [0usize; 2];
    let mut correct = 0;
    for (_, (f, h)) in &test {
        let p = a.p_high(f);
        sums[usize::from(*h)] += p;
        n[usize::from(*h)] += 1;
        if (p >= 0.5) == *h {
            correct += 1;
        }
    }
    let mut scored: Vec<(f64, bool)> = test.iter().map(|(_, (f, h))| (a.p_high(f), *h)).collect();
    scored.sort_by(|x, y| x.0.total_cmp(&y.0));
    let (mut rank_sum, mut pos) = (0.0, 0.0);
    for (i, (_, h)) in scored.iter().enumerate() {
        if *h {
            rank_sum += (i + 1) as f64;
            pos += 1.0;
        }
    }
    let neg = scored.len() as f64 - pos;
    let auc = (rank_sum - pos * (pos + 1.0) / 2.0) / (pos * neg).max(1.0);
    println!("AUC {auc:.3}");
    println!(
        "instances {} (train {:?}); test accuracy {:.3}; mean p_high: low {:.3}, high {:.3}",
        all.len(),
        a.instances(),
        correct as f64 / test.len().max(1) as f64,
        sums[0] / n[0].max(1) as f64,
        sums[1] / n[1].max(1) as f64
    );
}
