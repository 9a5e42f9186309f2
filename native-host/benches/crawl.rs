//! Crawl throughput on the FOLDOC mini-web through `serve-web` on loopback with no delay:
//! the server's own capacity (a bare concurrent fetch loop), then full soft-focus and
//! unfocused crawls by the real binary as a separate process: pages/s, share of the server's
//! capacity, peak RSS. Prints numbers; asserts only sanity.
//!
//! Each run crawls in a scratch folder of its own, so the first soft crawl is a user's first
//! crawl of the topic (no `apprentice.forager` beside its database, whoever ran before); the
//! second soft crawl, in the same folder, is the user's next one: it reuses what the first
//! learned, and the apprentice guides it from its first page (re-scoring the frontier at each
//! retrain), as in runs 2 and 3 of `../shared/peers/speed.sh`.

mod common;
use forager::miniweb::MiniWeb;
use std::path::Path;
use std::time::Instant;

/// Every page URL of a mini-web on disk.
fn all_urls(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let sites = dir.join("sites");
    for host in std::fs::read_dir(&sites).into_iter().flatten().flatten() {
        let h = host.file_name().to_string_lossy().into_owned();
        let mut stack = vec![host.path()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if let Ok(rel) = p.strip_prefix(sites.join(&h)) {
                    out.push(format!("http://{h}/{}", rel.to_string_lossy()));
                }
            }
        }
    }
    out.sort();
    out
}

async fn server_capacity(proxy: &str, urls: &[String]) -> f64 {
    let client = reqwest::Client::builder()
        .proxy(reqwest::Proxy::all(proxy).unwrap())
        .build()
        .unwrap();
    let urls = std::sync::Arc::new(urls.to_vec());
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let t = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..32 {
        let (client, urls, next) = (client.clone(), urls.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(u) = urls.get(i) else { break };
                if let Ok(r) = client.get(u).send().await {
                    let _ = r.bytes().await;
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    urls.len() as f64 / t.elapsed().as_secs_f64()
}

/// One crawl by the binary with its database in `scratch` (and any apprentice saved there
/// by an earlier crawl of the same topics): (pages, seconds, peak RSS, idle tail).
fn crawl(
    scratch: &Path,
    model: &Path,
    proxy: &str,
    mode: &str,
    seeds: &[String],
) -> (u64, f64, String, f64) {
    let db = scratch.join(format!("{mode}.db"));
    let clean = || {
        for ext in ["", "-wal", "-shm", ".lock"] {
            let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
        }
    };
    clean();
    let mut cmd = std::process::Command::new(common::binary());
    cmd.args([
        "crawl",
        "--mode",
        mode,
        "--delay",
        "0",
        "--concurrency",
        "32",
        "--proxy",
        proxy,
    ])
    .arg("--model")
    .arg(model)
    .arg("--db")
    .arg(&db)
    .args(["--good", "/Computing/Networking"]);
    for s in seeds {
        cmd.args(["--seed", s]);
    }
    let t = Instant::now();
    let out = cmd.output().unwrap();
    let secs = t.elapsed().as_secs_f64();
    clean();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let last = err.lines().last().unwrap_or("").to_owned();
    let fetched = last
        .split("fetched ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let rss = last
        .split("peak RSS ")
        .nth(1)
        .and_then(|s| s.split(';').next())
        .unwrap_or("?")
        .to_owned();
    // "waited X s of Y s with only failing hosts' URLs left": the idle tail.
    let idle = (err.lines())
        .find_map(|l| l.strip_prefix("waited "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(f64::NAN);
    (fetched, secs, rss, idle)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let Some(dir) = common::foldoc_dir() else {
        println!("crawl bench: FOLDOC mini-web not found, skipped");
        return;
    };
    let web = MiniWeb::open(&dir).unwrap();
    let (model, _) =
        forager::training::from_miniweb(&web, Default::default(), Default::default()).unwrap();
    let model_path = std::env::temp_dir().join(format!("forager-bench-{}.fgm", std::process::id()));
    std::fs::write(&model_path, model.to_bytes()).unwrap();
    let seeds = web.task("networking").unwrap().seeds.clone();
    let urls = all_urls(&dir);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt
        .block_on(forager::serve::start(web, "127.0.0.1:0".parse().unwrap()))
        .unwrap();
    let proxy = server.proxy_url();
    let cap = rt.block_on(server_capacity(&proxy, &urls));
    println!(
        "crawl bench on FOLDOC ({} files) through serve-web on loopback, delay 0",
        urls.len()
    );
    println!("  server capacity (bare fetch loop, 32 conns): {cap:8.0} pages/s");
    println!("  crawler: {}", common::binary().display());
    let scratch = std::env::temp_dir().join(format!("forager-bench-crawl-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    // (label, mode): the second soft crawl reuses the apprentice the first one saved.
    let runs = [
        ("soft", "soft"),
        ("soft, apprentice reused", "soft"),
        ("unfocused", "unfocused"),
    ];
    for (label, mode) in runs {
        let (n, secs, rss, idle) = crawl(&scratch, &model_path, &proxy, mode, &seeds);
        let pps = n as f64 / secs;
        println!(
            "  {label:<23} crawl: {n:6} pages in {secs:5.2} s = {pps:7.0} pages/s ({:.2} of server capacity), \
             idle tail {idle:.1} s, peak RSS {rss}",
            pps / cap
        );
        assert!(n > 1000, "{label} crawl fetched only {n} pages");
    }
    rt.block_on(server.shutdown());
    let _ = std::fs::remove_dir_all(&scratch);
    let _ = std::fs::remove_file(&model_path);
}
