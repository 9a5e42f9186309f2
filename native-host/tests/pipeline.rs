//! The crawl loop's pipeline (#27): a fetch waiting for its host's robots.txt holds no fetch
//! slot, and `forager crawl --trace` prints where the crawl's time went, phase by phase.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;
use common::{forager, run, tmp};

/// A loopback site whose robots.txt answers after `robots_wait`, with a chain of pages
/// /p0 -> /p1 -> ...; the time of every page request.
fn serve(robots_wait: Duration) -> (u16, Arc<Mutex<Vec<Instant>>>) {
    let hits: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let seen = hits.clone();
    let port = common::http::serve(move |path| {
        if path == "/robots.txt" {
            std::thread::sleep(robots_wait);
            return ("text/plain", "User-agent: *\nAllow: /\n".to_owned());
        }
        seen.lock().unwrap().push(Instant::now());
        let n: u32 = path.trim_start_matches("/p").parse().unwrap_or(0);
        let body = format!(
            "<html><head><title>p{n}</title></head><body>astronomy telescope galaxy \
             <a href=\"/p{}\">next</a></body></html>",
            n + 1
        );
        ("text/html", body)
    });
    (port, hits)
}

/// A crawl of one fetch at a time from the first pages of `ports`, for `secs` seconds.
fn crawl(dir: &std::path::Path, ports: &[u16], secs: &str, extra: &[&str]) -> String {
    let model = dir.join("m.fgm");
    run(forager().args(["starter-model", "--out"]).arg(&model));
    let mut cmd = forager();
    cmd.args([
        "crawl",
        "--delay",
        "0",
        "--concurrency",
        "1",
        "--seconds",
        secs,
    ])
    .arg("--model")
    .arg(&model)
    .arg("--db")
    .arg(dir.join("c.db"))
    .args(extra);
    for p in ports {
        cmd.arg("--seed").arg(format!("http://127.0.0.1:{p}/p0"));
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_slow_robots_txt_holds_no_fetch_slot() {
    let dir = tmp("pipeline-robots");
    let wait = Duration::from_secs(3);
    let (slow, slow_hits) = serve(wait);
    let (fast, fast_hits) = serve(Duration::ZERO);
    let start = Instant::now();
    crawl(&dir, &[slow, fast], "6", &[]);
    let before = (fast_hits.lock().unwrap().iter())
        .filter(|t| t.duration_since(start) < wait)
        .count();
    // With its one fetch slot held by the fetch waiting for the slow robots.txt, the crawl
    // would fetch at most one page of the fast site in those 3 s.
    assert!(
        before >= 5,
        "only {before} pages of the fast site were fetched while the slow site's robots.txt was awaited"
    );
    assert!(
        !slow_hits.lock().unwrap().is_empty(),
        "the slow site was fetched once its robots.txt came"
    );
}

#[test]
fn trace_prints_a_phase_summary() {
    let dir = tmp("pipeline-trace");
    let (port, _) = serve(Duration::ZERO);
    let err = crawl(&dir, &[port], "30", &["--trace", "--pages", "20"]);
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines.last().is_some_and(|l| l.starts_with("stopped:")),
        "the stopped line stays last: {err}"
    );
    let phase = |name: &str| -> (u64, f64) {
        let l = (lines.iter())
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} in the summary: {err}"));
        let f: Vec<&str> = l.split_whitespace().collect();
        (f[1].parse().unwrap(), f[2].parse().unwrap())
    };
    for name in [
        "fetch.robots",
        "fetch.headers",
        "fetch.parse",
        "fetch.classify",
    ] {
        let (n, _) = phase(name);
        assert!(n >= 20, "{name}: {n} times for 20 pages");
    }
    let (_, waited) = phase("fetch.headers");
    assert!(waited > 0.0, "20 requests took no time: {err}");
    let (n, _) = phase("loop.record");
    assert!(n >= 1, "loop.record ran {n} times");
    // Without --trace (and RUST_LOG) there is no summary.
    let quiet = tmp("pipeline-quiet");
    let err = crawl(&quiet, &[port], "30", &["--pages", "5"]);
    assert!(!err.contains("phase summary"), "{err}");
}
