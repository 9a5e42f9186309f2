//! The reference crawls simulated on the FOLDOC mini-web reproduce the reference table the
//! issues quote (breadth-first and oracle harvest at 500 and 1000 fetches, every task), so
//! `forager bench` measures crawls against the same yardstick.

use forager::miniweb::MiniWeb;
use forager::reference::{crawl_on, LinkGraph, Reference};
use std::path::{Path, PathBuf};

/// The FOLDOC mini-web under `target/foldoc`, extracted from `../shared` when missing (into a
/// scratch folder first, so a killed run leaves no half web behind).
fn foldoc() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = root.join("target/foldoc");
    if dir.join("labels.tsv").exists() {
        return dir;
    }
    let tarball = root.join("../shared/miniweb/foldoc.tar.gz");
    assert!(
        tarball.exists(),
        "FOLDOC tarball missing: {}",
        tarball.display()
    );
    let scratch = root.join(format!("target/.foldoc-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let ok = std::process::Command::new("tar")
        .arg("xzf")
        .arg(&tarball)
        .arg("-C")
        .arg(&scratch)
        .status()
        .unwrap()
        .success();
    assert!(ok, "tar failed on {}", tarball.display());
    // Another process may have won the race; either way the web is then in place.
    let _ = std::fs::rename(scratch.join("foldoc"), &dir);
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(
        dir.join("labels.tsv").exists(),
        "no FOLDOC at {}",
        dir.display()
    );
    dir
}

fn harvest(web: &MiniWeb, good: &[String], fetched: &[(String, f64)], n: usize) -> f64 {
    let first = &fetched[..n];
    first
        .iter()
        .filter(|(u, _)| web.is_relevant(u, good))
        .count() as f64
        / n as f64
}

#[test]
fn simulated_references_reproduce_the_issues_table() {
    // task: (bfs@500, oracle@500, bfs@1000, oracle@1000), as the issues quote them.
    let table = [
        ("networking", [0.06, 0.97, 0.27, 0.79]),
        ("languages", [0.07, 0.97, 0.07, 0.77]),
        ("hardware", [0.06, 0.68, 0.04, 0.42]),
        ("operating-systems", [0.18, 0.75, 0.16, 0.42]),
        ("mathematics", [0.07, 0.43, 0.04, 0.23]),
        ("jargon", [0.08, 0.64, 0.09, 0.36]),
    ];
    let web = MiniWeb::open(Path::new(&foldoc())).unwrap();
    // One graph reached from every task's seeds serves all tasks.
    let seeds: Vec<String> = web.tasks.iter().flat_map(|t| t.seeds.clone()).collect();
    let graph = LinkGraph::explore(&web, &seeds);
    for (name, quoted) in table {
        let task = web.task(name).unwrap();
        let bfs = crawl_on(&graph, &web, task, Reference::Bfs, 1000, 0.1);
        let oracle = crawl_on(&graph, &web, task, Reference::Oracle, 1000, 0.1);
        let ours = [
            harvest(&web, &task.good, &bfs, 500),
            harvest(&web, &task.good, &oracle, 500),
            harvest(&web, &task.good, &bfs, 1000),
            harvest(&web, &task.good, &oracle, 1000),
        ];
        for (o, q) in ours.iter().zip(quoted) {
            assert!(
                (o - q).abs() <= 0.02,
                "{name}: simulated {ours:?}, quoted {quoted:?}"
            );
        }
    }
}
