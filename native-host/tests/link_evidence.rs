//! Link evidence on the generated webs that reproduce the real web's failures (#25): the
//! distiller's hub list neither collapses nor drifts off topic, and the apprentice, guiding
//! from 200 pages, beats soft focus where relevant regions hide behind irrelevant-looking pages.
//! Each crawl is `forager bench`'s: concurrent, default settings, through the real HTTP proxy.

use serde_json::Value;
use std::path::Path;

mod common;
use common::{forager, run, tmp};

/// Runs `forager bench` for `strategies` on `task`; returns each strategy's JSON result.
fn bench(web: &Path, task: &str, strategies: &str, out: &Path) -> Vec<Value> {
    run(forager()
        .args(["bench", "--task", task, "--strategies", strategies])
        .args(["--pages", "1000", "--no-robustness", "--no-references"])
        .args(["--apprentice-warmup", "200", "--web"])
        .arg(web)
        .arg("--out")
        .arg(out));
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    summary["strategies"].as_array().unwrap().clone()
}

/// The hub list of `method` in a strategy's result: (good in top 10, listed, distinct).
fn hubs(r: &Value, method: &str) -> (u64, u64, u64) {
    let h = (r["hubs"].as_array().unwrap().iter())
        .find(|h| h["method"] == method)
        .unwrap_or_else(|| panic!("no {method} in {r}"));
    let n = |k: &str| h[k].as_u64().unwrap();
    (n("good_in_top10"), n("listed"), n("distinct"))
}

fn harvest_at(r: &Value, n: u64) -> f64 {
    (r["checkpoints"].as_array().unwrap().iter())
        .find(|c| c["n"] == n)
        .and_then(|c| c["harvest"].as_f64())
        .unwrap_or_else(|| panic!("no checkpoint {n} in {r}"))
}

/// The community web's soft crawls at 1000 pages: per task, (task, hubs of each method).
fn community_crawls(name: &str) -> Vec<(&'static str, Value)> {
    let dir = tmp(name);
    let web = dir.join("web");
    run(forager()
        .args(["gen-web", "--community", "--out"])
        .arg(&web));
    let tasks = ["astronomy", "networking", "finance"];
    let mut out = Vec::new();
    for task in tasks {
        let r = bench(&web, task, "soft", &dir.join(task)).remove(0);
        for method in ["hits", "randomized", "out-degree", "topical"] {
            eprintln!(
                "{task} {method}: (good, listed, distinct) {:?}",
                hubs(&r, method)
            );
        }
        out.push((task, r));
    }
    out
}

/// A dominant tightly-knit community of generic pages, linked from everywhere: plain HITS
/// collapses onto it (at most 3 distinct scores in its top 10 on every task: the control),
/// while the default distiller still lists ten hubs with ten distinct scores.
#[test]
fn a_dominant_community_collapses_plain_hits_but_not_the_distiller() {
    for (task, r) in community_crawls("le-community") {
        let (_, _, hits_distinct) = hubs(&r, "hits");
        assert!(
            hits_distinct <= 3,
            "{task}: plain HITS does not collapse: {r}"
        );
        let (_, listed, distinct) = hubs(&r, "topical");
        assert_eq!((listed, distinct), (10, 10), "{task}: {r}");
    }
}

/// What the issue asks on the community web: the default distiller's top 10 hubs hold at
/// least 7 good ones on every task. Measured 10, 10, 10 (astronomy, networking, finance); the
/// relevance-weighted out-degree without the hub's own R, the default before, 0, 2, 10
/// (randomised HITS 4, 1, 5; plain HITS 0, 0, 0).
#[test]
fn the_default_distiller_keeps_good_hubs_on_the_community_web() {
    let default = forager::distiller::Method::default().name();
    let failures: Vec<_> = (community_crawls("le-community-good").into_iter())
        .map(|(task, r)| (task, hubs(&r, default)))
        .filter(|(_, (good, listed, distinct))| !(*good >= 7 && *listed == 10 && *distinct == 10))
        .collect();
    assert!(
        failures.is_empty(),
        "default distiller (good, listed, distinct): {failures:?}"
    );
}

/// Topical hubs that link mostly into their own site and relevant regions behind
/// irrelevant-looking gateways: at least 7 good hubs of 10 with distinct scores (the default
/// `topical` distiller and `randomized`), and both the apprentice from 200 pages and
/// `forager crawl`'s default (`soft+critic`: a new apprentice guiding once its critic lets it)
/// beat soft focus's harvest at 1000 on most tasks tried. (This is the web of session 15's
/// critic figures, +.24 on finance and networking; plain `--hidden` is a harder web where a new
/// apprentice learns the gateways too late for its critic within 1000 pages.)
#[test]
fn site_hubs_rank_and_the_apprentice_finds_hidden_regions() {
    let dir = tmp("le-hidden");
    let web = dir.join("web");
    run(forager()
        .args(["gen-web", "--site-hubs", "--hidden", "--out"])
        .arg(&web));
    let hubs_tsv = std::fs::read_to_string(web.join("hubs.tsv")).unwrap();
    assert!(hubs_tsv.lines().count() >= 100, "hubs.tsv lists the hubs");
    let (mut wins, mut default_wins) = (Vec::new(), Vec::new());
    let tasks = ["networking", "finance", "astronomy"];
    let strategies = "soft,soft+apprentice,soft+critic";
    for task in tasks {
        let rs = bench(&web, task, strategies, &dir.join(task));
        for method in ["randomized", "topical"] {
            let (good, listed, distinct) = hubs(&rs[0], method);
            assert!(
                good >= 7 && listed == 10 && distinct >= 9,
                "{task} {method}: {}",
                rs[0]
            );
        }
        let [soft, apprentice, critic] = [0, 1, 2].map(|i| harvest_at(&rs[i], 1000));
        eprintln!(
            "{task}: harvest at 1000 soft {soft:.3} apprentice {apprentice:.3} default {critic:.3}"
        );
        wins.push(apprentice > soft + 0.05);
        default_wins.push(critic > soft + 0.05);
    }
    assert!(
        wins.iter().filter(|w| **w).count() >= 2,
        "the apprentice beats soft focus on {wins:?} of {tasks:?}"
    );
    assert!(
        default_wins.iter().filter(|w| **w).count() >= 2,
        "the default crawl beats soft focus on {default_wins:?} of {tasks:?}"
    );
}
