//! The speed floor (#27): how fast can any crawler built on this HTTP stack go on this
//! machine? On the crawl bench's server (`serve-web`, in this process) and through
//! `speed.sh`'s nginx, in one run: (c) the full crawl by the real binary, then over the very
//! URLs it fetched, in its order and at its concurrency, each as a separate process like the
//! crawl: (a) fetch only with the crawler's HTTP stack (`forager::fetch::Fetcher`, bodies read
//! and dropped), (b) fetch + parse + classify + score the links (the crawl's analyse, no
//! store). Then (a) with leaner HTTP and runtime settings (raw reqwest: no decompression,
//! tcp_nodelay, a larger idle pool; one worker thread; current_thread).
//!
//! Prints pages/s (over the fetch loop and over the whole process), client and server CPU
//! per page. Knobs: `FLOOR_ROUNDS` (default 1), `FLOOR_SERVERS` (`serve-web,nginx`),
//! `FORAGER_BIN` (the crawler for (c)). Asserts only sanity.

mod common;
use forager::miniweb::MiniWeb;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// CPU seconds of an nginx master and its workers.
fn nginx_cpu(master: u32) -> f64 {
    let mut total = common::cpu_seconds(master);
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let ppid = stat
            .rfind(')')
            .and_then(|c| stat[c + 2..].split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(master) {
            total += common::cpu_seconds(pid);
        }
    }
    total
}

/// A server the clients go through: its proxy URL and how to read its CPU so far.
struct Server {
    name: &'static str,
    proxy: String,
    cpu: Box<dyn Fn() -> f64>,
    /// Fetches in flight and the page budget, as the bar this server belongs to runs them.
    concurrency: usize,
    pages: Option<u64>,
}

/// One measured run: pages fetched (answered 200), loop seconds, process seconds, client
/// CPU seconds, server CPU seconds.
struct Run {
    pages: u64,
    loop_secs: f64,
    secs: f64,
    cpu: f64,
    server_cpu: f64,
}

impl Run {
    fn line(&self, label: &str) -> String {
        let per = |c: f64| 1e3 * c / self.pages.max(1) as f64;
        format!(
            "    {label:<34} {:6} pages  {:7.0} p/s loop  {:7.0} p/s process  client {:.3} ms/page  server {:.3} ms/page",
            self.pages,
            self.pages as f64 / self.loop_secs,
            self.pages as f64 / self.secs,
            per(self.cpu),
            per(self.server_cpu),
        )
    }
}

/// (c): the full soft crawl by the binary; its fetch log is the URL list of (a) and (b).
fn full_crawl(s: &Server, scratch: &Path, how: Start<'_>, log: &Path) -> Run {
    let db = scratch.join("floor.db");
    let clean = || {
        for ext in ["", "-wal", "-shm", ".lock"] {
            let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
        }
        let _ = std::fs::remove_file(scratch.join("apprentice.forager"));
    };
    clean();
    let _ = std::fs::remove_file(log);
    let mut cmd = std::process::Command::new(common::binary());
    cmd.args([
        "crawl", "--mode", "soft", "--delay", "0", "--proxy", &s.proxy,
    ])
    .args(["--concurrency", &s.concurrency.to_string()])
    .arg("--db")
    .arg(&db)
    .arg("--fetch-log")
    .arg(log);
    match how {
        Start::Model(model, seeds) => {
            cmd.arg("--model").arg(model);
            cmd.args(["--good", "/Computing/Networking"]);
            for u in seeds {
                cmd.args(["--seed", u]);
            }
        }
        Start::Web(web) => {
            cmd.arg("--web").arg(web).args(["--task", "networking"]);
        }
    }
    if let Some(n) = s.pages {
        cmd.args(["--pages", &n.to_string()]);
    }
    let server0 = (s.cpu)();
    let t = Instant::now();
    let out = cmd.output().unwrap();
    let secs = t.elapsed().as_secs_f64();
    let server_cpu = (s.cpu)() - server0;
    clean();
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err.lines().last().unwrap_or("");
    let cpu = (last.split("; cpu ").nth(1))
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(f64::NAN);
    let pages = std::fs::read_to_string(log).map_or(0, |l| l.lines().count() as u64);
    Run {
        pages,
        loop_secs: secs,
        secs,
        cpu,
        server_cpu,
    }
}

/// How (c) starts: from the bench's model and the task's seeds, or as `speed.sh` runs it
/// (`--web --task`: the binary trains its model from the web first).
#[derive(Clone, Copy)]
enum Start<'a> {
    Model(&'a Path, &'a [String]),
    Web(&'a Path),
}

/// (a) or (b) in a child process (this bench, `--client ...`).
fn client(s: &Server, args: &[&str], urls: &Path, model: &Path) -> Run {
    let server0 = (s.cpu)();
    let t = Instant::now();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--client", "--proxy", &s.proxy, "--urls"])
        .arg(urls)
        .arg("--model")
        .arg(model)
        .args(["--concurrency", &s.concurrency.to_string()])
        .args(args)
        .output()
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
    let server_cpu = (s.cpu)() - server0;
    let said = String::from_utf8_lossy(&out.stdout);
    let field = |k: &str| -> f64 {
        (said.split(&format!("{k} ")).nth(1))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    };
    assert!(
        out.status.success(),
        "client {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Run {
        pages: field("pages") as u64,
        loop_secs: field("secs"),
        secs,
        cpu: field("cpu"),
        server_cpu,
    }
}

/// The leaner settings tried on (a): (label, client arguments).
const VARIANTS: [(&str, &[&str]); 6] = [
    ("(a') raw reqwest, crawler's settings", &["--http", "raw"]),
    ("(a') raw, no decompression", &["--http", "raw", "--plain"]),
    ("(a') raw, tcp_nodelay", &["--http", "raw", "--nodelay"]),
    (
        "(a') raw, idle pool 32 per host",
        &["--http", "raw", "--pool", "32"],
    ),
    ("(a) crawler stack, 1 worker thread", &["--rt", "multi1"]),
    ("(a) crawler stack, current_thread", &["--rt", "current"]),
];

fn measure(s: &Server, scratch: &Path, model: &Path, seeds: &[String], web: &Path) {
    println!(
        "  {} ({} in flight{}):",
        s.name,
        s.concurrency,
        s.pages.map_or(String::new(), |n| format!(", {n} pages"))
    );
    let log = scratch.join(format!("{}.urls", s.name));
    let c = full_crawl(s, scratch, Start::Model(model, seeds), &log);
    let a = client(s, &[], &log, model);
    let b = client(s, &["--analyse"], &log, model);
    println!("{}", a.line("(a) fetch only, crawler's stack"));
    println!("{}", b.line("(b) fetch + parse + classify + links"));
    println!("{}", c.line("(c) full soft crawl (process)"));
    if s.pages.is_some() {
        let trained = scratch.join("trained.urls");
        let c2 = full_crawl(s, scratch, Start::Web(web), &trained);
        println!("{}", c2.line("(c') as speed.sh: trains first"));
    }
    for (label, args) in VARIANTS {
        println!("{}", client(s, args, &log, model).line(label));
    }
    assert!(c.pages > 1000, "the crawl fetched only {} pages", c.pages);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    if args.iter().any(|a| a == "--client") {
        return client_main(&args);
    }
    let Some(dir) = common::foldoc_dir() else {
        println!("floor bench: FOLDOC mini-web not found, skipped");
        return;
    };
    let web = MiniWeb::open(&dir).unwrap();
    let (model, _) =
        forager::training::from_miniweb(&web, Default::default(), Default::default()).unwrap();
    let scratch = std::env::temp_dir().join(format!("forager-bench-floor-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let model_path = scratch.join("model.fgm");
    std::fs::write(&model_path, model.to_bytes()).unwrap();
    let seeds = web.task("networking").unwrap().seeds.clone();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let served = rt
        .block_on(forager::serve::start(web, "127.0.0.1:0".parse().unwrap()))
        .unwrap();
    let want = std::env::var("FLOOR_SERVERS").unwrap_or_else(|_| "serve-web,nginx".into());
    let mut servers = Vec::new();
    if want.contains("serve-web") {
        servers.push(Server {
            name: "serve-web (crawl bench)",
            proxy: served.proxy_url(),
            cpu: Box::new(|| forager::crawl::cpu_seconds().unwrap_or(0.0)),
            concurrency: 32,
            pages: None,
        });
    }
    let nginx = want.contains("nginx").then(|| start_nginx(&dir)).flatten();
    if let Some((pid, port)) = nginx {
        servers.push(Server {
            name: "nginx (speed.sh)",
            proxy: format!("http://127.0.0.1:{port}"),
            cpu: Box::new(move || nginx_cpu(pid)),
            concurrency: 16,
            pages: Some(5000),
        });
    }
    let rounds: usize = (std::env::var("FLOOR_ROUNDS").ok())
        .and_then(|r| r.parse().ok())
        .unwrap_or(1);
    println!(
        "floor bench on FOLDOC, delay 0; crawler {}; client/server CPU per page answered",
        common::binary().display()
    );
    for round in 1..=rounds {
        println!(" round {round}");
        for s in &servers {
            measure(s, &scratch, &model_path, &seeds, &dir);
        }
    }
    if let Some((pid, _)) = nginx {
        let _ = std::process::Command::new("kill")
            .arg(pid.to_string())
            .status();
    }
    rt.block_on(served.shutdown());
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Starts `speed.sh`'s nginx on a free port: (master pid, port), or `None` without nginx.
fn start_nginx(web: &Path) -> Option<(u32, u16)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    // `../shared` from the project root (a worktree may sit deeper).
    let repo = common::repo().canonicalize().ok()?;
    let Some(script) = (repo.ancestors())
        .map(|d| d.join("shared/miniweb/serve-nginx.sh"))
        .find(|s| s.exists())
    else {
        println!("  nginx: serve-nginx.sh not found, skipped");
        return None;
    };
    let out = std::process::Command::new(script)
        .arg(web)
        .arg(port.to_string())
        .output()
        .ok()?;
    let pid = String::from_utf8_lossy(&out.stdout).trim().parse().ok();
    if pid.is_none() {
        println!("  nginx: not started, skipped");
    }
    Some((pid?, port))
}

/// The child: fetch (and analyse) every URL of `--urls` at `--concurrency`; prints
/// "pages N secs S cpu C" (answered pages, loop seconds, CPU seconds of the loop).
fn client_main(args: &[String]) {
    let opt = |k: &str| (args.iter().position(|a| a == k)).and_then(|i| args.get(i + 1).cloned());
    let has = |k: &str| args.iter().any(|a| a == k);
    let urls: Vec<String> = std::fs::read_to_string(opt("--urls").unwrap())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let concurrency: usize = opt("--concurrency").unwrap().parse().unwrap();
    let proxy = opt("--proxy").unwrap();
    let judge = has("--analyse").then(|| {
        let bytes = std::fs::read(opt("--model").unwrap()).unwrap();
        let mut model = forager_classifier::Model::from_bytes(&bytes).unwrap();
        model.set_good_paths(&["/Computing/Networking"]).unwrap();
        forager::crawl::Judge::of(&mut model)
    });
    let http = if has("--http") {
        Http::Raw(raw_client(
            &proxy,
            has("--plain"),
            has("--nodelay"),
            opt("--pool").and_then(|p| p.parse().ok()),
        ))
    } else {
        Http::Crawler(
            forager::fetch::Fetcher::new(forager::fetch::FetchConfig {
                proxy: Some(proxy),
                ..Default::default()
            })
            .unwrap(),
        )
    };
    let rt = match opt("--rt").as_deref() {
        Some("current") => tokio::runtime::Builder::new_current_thread(),
        Some("multi1") => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(1);
            b
        }
        _ => tokio::runtime::Builder::new_multi_thread(),
    }
    .enable_all()
    .build()
    .unwrap();
    let cpu0 = forager::crawl::cpu_seconds().unwrap_or(0.0);
    let t = Instant::now();
    let pages = rt.block_on(fetch_all(
        Arc::new(http),
        Arc::new(urls),
        concurrency,
        judge,
    ));
    let secs = t.elapsed().as_secs_f64();
    let cpu = forager::crawl::cpu_seconds().unwrap_or(0.0) - cpu0;
    println!("pages {pages} secs {secs} cpu {cpu}");
}

/// The HTTP stack of a client run.
enum Http {
    /// The crawler's own fetcher (per-host slots, its resolver and pool settings).
    Crawler(forager::fetch::Fetcher),
    /// A bare reqwest client with the fetcher's pool settings, less what is switched off.
    Raw(reqwest::Client),
}

fn raw_client(proxy: &str, plain: bool, nodelay: bool, pool: Option<usize>) -> reqwest::Client {
    let d = forager::fetch::FetchConfig::default();
    let mut b = reqwest::Client::builder()
        .user_agent(d.user_agent)
        .connect_timeout(d.connect_timeout)
        .timeout(d.total_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(pool.unwrap_or(d.per_host_connections))
        .pool_idle_timeout(std::time::Duration::from_secs(2))
        .proxy(reqwest::Proxy::all(proxy).unwrap());
    if plain {
        b = b.no_gzip().no_brotli().no_deflate();
    }
    if nodelay {
        b = b.tcp_nodelay(true);
    }
    b.build().unwrap()
}

/// Fetches every URL with `concurrency` tasks; with a judge, each 200 HTML answer is
/// analysed on the blocking pool as the crawl does. Returns the pages answered 200.
async fn fetch_all(
    http: Arc<Http>,
    urls: Arc<Vec<String>>,
    concurrency: usize,
    judge: Option<forager::crawl::Judge>,
) -> u64 {
    let next = Arc::new(AtomicUsize::new(0));
    let ok = Arc::new(AtomicUsize::new(0));
    let judge = judge.map(Arc::new);
    let config = Arc::new(forager::crawl::CrawlConfig::default());
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (http, urls, next, ok) = (http.clone(), urls.clone(), next.clone(), ok.clone());
        let (judge, config) = (judge.clone(), config.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(u) = urls.get(i) else { break };
                let Some(got) = get(&http, u).await else {
                    continue;
                };
                ok.fetch_add(1, Ordering::Relaxed);
                if let (Some(j), Some(f)) = (&judge, got) {
                    let (j, config, u) = (j.clone(), config.clone(), u.clone());
                    let _ = tokio::task::spawn_blocking(move || analyse(&j, &config, &f, &u)).await;
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    ok.load(Ordering::Relaxed) as u64
}

/// One GET: `None` unless answered 200; the crawler's `Fetched` when its stack fetched it.
async fn get(http: &Http, u: &str) -> Option<Option<forager::fetch::Fetched>> {
    match http {
        Http::Crawler(f) => {
            let r = f.get(u).await.ok()?;
            (r.status == 200).then_some(Some(r))
        }
        Http::Raw(c) => {
            let r = c.get(u).send().await.ok()?;
            let status = r.status().as_u16();
            let _ = r.bytes().await.ok()?;
            (status == 200).then_some(None)
        }
    }
}

thread_local! {
    static SCRATCH: std::cell::RefCell<forager_classifier::Scratch> =
        std::cell::RefCell::new(forager_classifier::Scratch::new());
}

/// The crawl's analyse (`crawl::worker`) without the apprentice: parse, judge, score links.
fn analyse(
    judge: &forager::crawl::Judge,
    config: &forager::crawl::CrawlConfig,
    f: &forager::fetch::Fetched,
    u: &str,
) -> usize {
    let base = url::Url::parse(&f.final_url).unwrap();
    let html = f.html();
    let mut page = forager::parse::parse_page(&html, &base);
    SCRATCH.with(|s| {
        let scratch = &mut s.borrow_mut();
        let verdict = judge.judge(u, &page.text.text, scratch);
        let parent = forager::crawl::policy::Parent {
            oid: forager::store::PageId::default(),
            depth: 1,
            score: 0.5,
            text: &page.text.text,
            leaves: &page.leaves,
            nofollow: page.meta_nofollow,
        };
        let links = std::mem::take(&mut page.links);
        let scored = forager::crawl::policy::score_links(
            config,
            &parent,
            links,
            &verdict,
            &judge.classifier,
            None,
            scratch,
        );
        std::hint::black_box(forager::store::fnv64(&page.text.text));
        scored.links.len()
    })
}
