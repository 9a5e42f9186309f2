//! The reference crawls simulated on the FOLDOC mini-web reproduce the reference table the
//! issues quote (breadth-first and oracle harvest at 500 and 1000 fetches, every task), so
//! `forager bench` measures crawls against the same yardstick.

#[path = "../benches/common/mod.rs"]
mod common;

use forager::evaluation::measure;
use forager::miniweb::MiniWeb;
use forager::reference::{crawl_on, LinkGraph, Reference};

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
    let dir =
        common::foldoc_dir().expect("FOLDOC: target/foldoc or ../shared/miniweb/foldoc.tar.gz");
    let web = MiniWeb::open(&dir).unwrap();
    // One graph reached from every task's seeds serves all tasks.
    let seeds: Vec<String> = web.tasks.iter().flat_map(|t| t.seeds.clone()).collect();
    let graph = LinkGraph::explore(&web, &seeds);
    for (name, quoted) in table {
        let task = web.task(name).unwrap();
        let bfs = crawl_on(&graph, &web, task, Reference::Bfs, 1000, 0.1);
        let oracle = crawl_on(&graph, &web, task, Reference::Oracle, 1000, 0.1);
        let at = |fetched: &[(String, f64)], n: usize| {
            let cps = measure(&web, task, fetched, 1000);
            cps.iter()
                .find(|c| c.n == n)
                .map_or(f64::NAN, |c| c.harvest)
        };
        let ours = [
            at(&bfs, 500),
            at(&oracle, 500),
            at(&bfs, 1000),
            at(&oracle, 1000),
        ];
        for (o, q) in ours.iter().zip(quoted) {
            assert!(
                (o - q).abs() <= 0.02,
                "{name}: simulated {ours:?}, quoted {quoted:?}"
            );
        }
    }
}
