//! Length-aware posteriors (#13): on a generated web with off-taxonomy regions (dense, popular,
//! words partly shared with the topics, long pages), soft focus crawled as a user runs it
//! (concurrent, default settings) reaches most of the simulated oracle's harvest at 500 pages
//! and fetches few pages that belong to no topic; the closed-world classifier without the
//! evidence cap, crawled the same way, does not (the control that makes the bar mean something).

mod common;
use common::{forager, off_taxonomy_web, run, tmp};

/// (harvest, share of no-topic pages) at `n` of strategy `name` in a bench summary.
fn at(summary: &serde_json::Value, name: &str, n: u64) -> (f64, f64) {
    let s = (summary["strategies"].as_array().unwrap().iter())
        .find(|s| s["strategy"] == name)
        .unwrap_or_else(|| panic!("no {name} in the summary"));
    let c = (s["checkpoints"].as_array().unwrap().iter())
        .find(|c| c["n"] == n)
        .unwrap_or_else(|| panic!("{name} has no checkpoint at {n}"));
    (
        c["harvest"].as_f64().unwrap(),
        c["no_topic"].as_f64().unwrap_or(0.0),
    )
}

#[test]
fn soft_focus_holds_on_a_web_with_off_taxonomy_regions() {
    let dir = tmp("length-aware");
    let (web, _) = off_taxonomy_web(&dir);
    for task in ["astronomy", "programming", "cooking", "finance"] {
        let out = dir.join(task);
        run(forager()
            .args(["bench", "--task", task, "--pages", "500", "--no-robustness"])
            .args(["--strategies", "soft,soft+uncapped", "--web"])
            .arg(&web)
            .arg("--out")
            .arg(&out));
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        let (oracle, _) = at(&summary, "sim:oracle", 500);
        let (soft, soft_none) = at(&summary, "soft", 500);
        let (closed, closed_none) = at(&summary, "soft+uncapped", 500);
        eprintln!(
            "{task}: harvest@500 soft {soft:.3} ({:.2} of the oracle {oracle:.3}), no-topic {soft_none:.3}; \
             uncapped {closed:.3}, no-topic {closed_none:.3}",
            soft / oracle
        );
        assert!(
            soft >= 0.8 * oracle,
            "{task}: {soft} < 0.8 × oracle {oracle}"
        );
        assert!(
            closed < 0.65 * oracle,
            "{task}: the uncapped control reaches {closed}"
        );
        assert!(
            soft_none <= 0.7 * closed_none,
            "{task}: no-topic {soft_none} vs {closed_none}"
        );
    }
}

/// `forager crawl --uncapped` crawls with the classifier counting every word: on the same web it
/// wanders into the off-taxonomy regions far more than the default crawl.
#[test]
fn crawl_uncapped_compares_with_the_default_from_the_command_line() {
    let dir = tmp("length-aware-cli");
    let (web, regions) = off_taxonomy_web(&dir);
    let region_fetches = |extra: &[&str], name: &str| {
        let db = dir.join(name);
        run(forager()
            .args(["crawl", "--task", "astronomy", "--pages", "500", "--web"])
            .arg(&web)
            .arg("--db")
            .arg(&db)
            // Each crawl learns its own apprentice: the second must not reuse the first's.
            .arg("--fresh-apprentice")
            .args(extra));
        let urls = run(forager()
            .arg("sql")
            .arg(&db)
            .arg("SELECT url FROM doc WHERE status = 2"));
        urls.lines().filter(|u| regions.contains_key(*u)).count()
    };
    let capped = region_fetches(&[], "capped.db");
    let uncapped = region_fetches(&["--uncapped"], "uncapped.db");
    eprintln!("region pages among 500 fetches: default {capped}, --uncapped {uncapped}");
    assert!(
        2 * uncapped > 3 * capped.max(1),
        "default {capped}, --uncapped {uncapped}"
    );
}
