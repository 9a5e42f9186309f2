//! Crawl-delay holds across stop and start (#28 defect 6): a host whose robots.txt asks for
//! 3 s between requests gets its first request of a resumed crawl no sooner than 3 s after
//! the last one of the crawl before.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;
use common::{forager, run, tmp};

/// A loopback site: robots.txt with Crawl-delay 3, pages linking onwards; the time of every
/// page request.
fn serve() -> (u16, Arc<Mutex<Vec<Instant>>>) {
    let hits: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let seen = hits.clone();
    let port = common::http::serve(move |path| {
        if path == "/robots.txt" {
            return ("text/plain", "User-agent: *\nCrawl-delay: 3\n".to_owned());
        }
        seen.lock().unwrap().push(Instant::now());
        let n: u32 = path.trim_start_matches("/p").parse().unwrap_or(0);
        let body = format!(
            "<html><head><title>p{n}</title></head><body>astronomy telescope \
             <a href=\"/p{}\">next</a></body></html>",
            n + 1
        );
        ("text/html", body)
    });
    (port, hits)
}

#[test]
fn crawl_delay_is_remembered_across_stop_and_start() {
    let dir = tmp("politeness");
    let model = dir.join("m.fgm");
    run(forager().args(["starter-model", "--out"]).arg(&model));
    let (port, hits) = serve();
    let crawl = |pages: &str| {
        run(forager()
            .args(["crawl", "--delay", "0", "--pages", pages, "--seed"])
            .arg(format!("http://127.0.0.1:{port}/p0"))
            .arg("--model")
            .arg(&model)
            .arg("--db")
            .arg(dir.join("c.db")));
    };
    crawl("1");
    crawl("2");
    let hits = hits.lock().unwrap();
    assert_eq!(hits.len(), 2, "one page per run");
    let gap = hits[1] - hits[0];
    assert!(
        gap >= Duration::from_millis(2900),
        "the resumed crawl asked again after {gap:?}, not the 3 s robots.txt asks for"
    );
}
