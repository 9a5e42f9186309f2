use super::*;

/// What soft focus knows of a link in the text of a page of relevance `r`.
fn text(relevance: f64) -> Inherited {
    Inherited {
        relevance,
        weight: 1.0,
    }
}

/// `n` URLs: soft focus ranks them by number (0 best), the apprentice in reverse; URL `i`'s
/// link has feature `i`.
fn offered(n: u64) -> Leads {
    let mut l = Leads::new();
    for i in 0..n {
        let x = i as f64 / n as f64;
        l.offer(
            i,
            &format!("http://u{i}.test/"),
            &[i as u32],
            text(1.0 - x),
            x,
        );
    }
    l
}

fn best(ranked: &[Ranked], by: impl Fn(&Ranked) -> f64, k: usize) -> Vec<u64> {
    let mut r = ranked.to_vec();
    r.sort_by(|a, b| by(b).total_cmp(&by(a)).then(a.id.cmp(&b.id)));
    r.iter().take(k).map(|r| r.id).collect()
}

#[test]
fn the_pool_stays_bounded_and_keeps_each_rankers_best() {
    let n = 10 * CAP as u64;
    let mut l = offered(n);
    assert!(l.len() <= 4 * CAP, "{}", l.len());
    l.rescore(|f, _| f64::from(f[0]) / n as f64);
    let ranked = l.ranked();
    assert!(ranked.len() <= 2 * CAP, "{}", ranked.len());
    let top = CAP as u64;
    assert_eq!(best(&ranked, |r| r.soft, CAP), (0..top).collect::<Vec<_>>());
    let by_apprentice: Vec<u64> = (n - top..n).rev().collect();
    assert_eq!(best(&ranked, |r| r.apprentice, CAP), by_apprentice);
    assert_eq!(l.url(3).unwrap(), "http://u3.test/");
    l.fetched(3);
    assert_eq!(l.url(3), None, "a fetched URL leaves");
    // A URL in neither ranker's best is not even admitted once the pool has trimmed.
    let mut l = offered(n);
    l.offer(n + 1, "http://late.test/", &[0], text(0.5), 0.5);
    assert_eq!(l.url(n + 1), None);
}

#[test]
fn the_retrained_apprentice_scores_each_url_by_its_best_links_features() {
    let mut l = Leads::new();
    // Two links into one URL: the second scored better by the apprentice of the time.
    l.offer(1, "http://a.test/", &[7], text(0.2), 0.1);
    l.offer(1, "http://a.test/", &[8], text(0.1), 0.3);
    l.offer(2, "http://b.test/", &[7], text(0.4), 0.2);
    // The retrained apprentice: feature 8 is worth 0.9, 7 is worth 0.05, blended half and
    // half with the link's soft score.
    l.rescore(|f, base| 0.5 * if f[0] == 8 { 0.9 } else { 0.05 } + 0.5 * base.soft());
    let ranked = l.ranked();
    let get = |id: u64| *ranked.iter().find(|r| r.id == id).unwrap();
    assert_eq!(get(1).soft, 0.2, "soft focus keeps its best link");
    assert!((get(1).apprentice - 0.5).abs() < 1e-12, "{:?}", get(1));
    assert!((get(2).apprentice - 0.225).abs() < 1e-12, "{:?}", get(2));
}
