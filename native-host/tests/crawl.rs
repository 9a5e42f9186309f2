//! Crawls of the generated web through the in-process loopback server, via the real binary.

use std::path::Path;

mod common;
use common::{forager, run, tmp};

/// Crawls `pages` pages of the astronomy task in `mode`; returns the fetch log.
fn crawl(dir: &Path, web: &Path, mode: &str, pages: u32) -> Vec<String> {
    let db = dir.join(format!("{mode}.db"));
    let log = dir.join(format!("{mode}.log"));
    run(forager()
        .args([
            "crawl",
            "--task",
            "astronomy",
            "--mode",
            mode,
            "--pages",
            &pages.to_string(),
        ])
        .arg("--web")
        .arg(web)
        .arg("--db")
        .arg(&db)
        .arg("--fetch-log")
        .arg(&log));
    std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn soft_focus_beats_bfs_and_obeys_robots() {
    let dir = tmp("soft");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    let w = forager::miniweb::MiniWeb::open(&web).unwrap();
    let good = w.task("astronomy").unwrap().good.clone();
    let harvest = |log: &[String]| {
        log.iter().filter(|u| w.is_relevant(u, &good)).count() as f64 / log.len() as f64
    };
    let soft = crawl(&dir, &web, "soft", 400);
    let bfs = crawl(&dir, &web, "bfs", 400);
    assert_eq!(soft.len(), 400, "the page budget is exact");
    assert_eq!(bfs.len(), 400);
    let (hs, hb) = (harvest(&soft), harvest(&bfs));
    assert!(hs > hb + 0.03, "soft {hs:.3} vs bfs {hb:.3}");
    assert!(
        soft.iter().all(|u| !u.contains("/private/")),
        "robots.txt ignored"
    );
    let mut uniq = soft.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), soft.len(), "a page was fetched twice");

    // The paper's queries run as written (modulo the table prefix), read-only.
    let db = dir.join("soft.db");
    let out = run(forager()
        .arg("sql")
        .arg(&db)
        .arg("select num_tries, count(*) from arc.doc group by num_tries"));
    assert!(out.starts_with("num_tries\tcount(*)\n0\t"), "{out}");
    let census = run(forager().arg("sql").arg(&db).arg(
        "with census(cid,cnt) as (select cid,count(oid) from arc.doc group by cid) \
         select cid,cnt,kcname from census,arc.cidmap where cid=kcid order by cnt",
    ));
    assert!(census.contains("Astronomy"), "{census}");
    let denied = forager()
        .arg("sql")
        .arg(&db)
        .arg("delete from doc")
        .output()
        .unwrap();
    assert!(!denied.status.success(), "sql must be read-only");
    let status = run(forager().arg("status").arg(&db).arg("--json"));
    let v: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(v["fetched"], 400);

    // Resuming with a larger budget continues where it stopped, refetching nothing.
    let more = crawl(&dir, &web, "soft", 600);
    assert_eq!(more.len(), 600);
    let mut all = more.clone();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 600, "resume refetched pages");
    assert_eq!(&more[..400], &soft[..]);
}

#[test]
fn hard_focus_stays_on_topic_and_frontier_stays_small() {
    let dir = tmp("hard");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    let hard = crawl(&dir, &web, "hard", 300);
    let db = dir.join("hard.db");
    let soft_db_frontier = {
        crawl(&dir, &web, "soft", 300);
        run(forager()
            .arg("sql")
            .arg(dir.join("soft.db"))
            .arg("select count(*) from doc where status = 0"))
    };
    let hard_frontier = run(forager()
        .arg("sql")
        .arg(&db)
        .arg("select count(*) from doc where status = 0"));
    let n = |s: &str| s.lines().nth(1).unwrap().parse::<i64>().unwrap();
    assert_eq!(hard.len(), 300);
    assert!(
        n(&hard_frontier) < n(&soft_db_frontier),
        "hard {hard_frontier} soft {soft_db_frontier}"
    );
}
