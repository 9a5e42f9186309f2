//! Scaling (issue #26): one crawl on PostgreSQL shared by 1, 2 and 4 processes (`forager
//! crawl` then `forager worker`s), on a generated web of ≥ 2,000 hosts served with 50-100 ms
//! of latency per response and a per-host politeness delay, so the crawl is bound by latency
//! and politeness, not CPU. Prints pages/s over a fixed window after a warm-up, each process's
//! CPU share, and the ratio to one worker (the bar: 4 workers ≥ 3.5x one).
//!
//! PostgreSQL: `FORAGER_TEST_PG`, else a throwaway cluster from scripts/pg-cluster.sh.
//! Knobs (environment): SCALING_SITES (2000), SCALING_CONCURRENCY (4 fetches in flight per
//! process), SCALING_DELAY (1 s per host), SCALING_WARMUP (8 s), SCALING_WINDOW (20 s),
//! SCALING_LATENCY (50..100 ms), SCALING_PROCESSES (1,2,4), SCALING_BASE (another `forager`
//! binary, say an earlier build: each process count is then run with it and with this one,
//! alternating, for a before/after table from one run), SCALING_TRACE (1: print what each
//! process's fetch slots did over the window — busy, waiting on politeness, on robots.txt, on
//! checkout — from its traced spans: see common/slots.rs).

#[path = "common/pg.rs"]
mod pg;
#[path = "common/slots.rs"]
mod slots;
#[path = "common/synth_model.rs"]
mod synth_model;
use forager::store::postgres::{testing, testing::TestDb};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn knob<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// CPU seconds (user + system) a process has used so far, from /proc.
fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(") ").map(|(_, r)| r).unwrap_or("");
    let f: Vec<f64> = rest
        .split(' ')
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse().ok())
        .collect();
    f.iter().sum::<f64>() / 100.0
}

/// Pages the shared crawl has fetched. (The bench reads the crawl database with plain SQL: a
/// door of this build would bring its schema to this build's version under a base build.)
fn fetched(db: &str) -> i64 {
    testing::number(db, "SELECT count(*) FROM doc WHERE status = 2")
}

/// The settings every process of a run shares.
struct Setup {
    proxy: String,
    model: std::path::PathBuf,
    seeds: Vec<String>,
    good: Vec<String>,
    concurrency: usize,
    delay: f64,
    warmup: f64,
    window: f64,
    logs: std::path::PathBuf,
    /// Trace each process's fetch slots (`SCALING_TRACE`).
    trace: bool,
}

/// One run with `n` processes of the binary `forager`: pages/s over the window, each
/// process's CPU share, pages at the end and deadlocks the server broke in the window.
fn run(pg: &str, s: &Setup, n: usize, forager: &str) -> (f64, Vec<f64>, i64, i64) {
    let db = TestDb::create(pg, &format!("scaling{n}"));
    let life = format!("{}", s.warmup + s.window + 60.0);
    let common_args = |c: &mut Command| {
        c.arg("--db")
            .arg(db.url())
            .args(["--proxy", &s.proxy, "--seconds", &life])
            .args(["--delay", &s.delay.to_string()])
            .args(["--concurrency", &s.concurrency.to_string()])
            .stdout(Stdio::null());
        if s.trace {
            c.env("RUST_LOG", slots::RUST_LOG).env("NO_COLOR", "1");
        }
    };
    let log = |i: usize| s.logs.join(format!("{n}-{i}.log"));
    let mut crawl = Command::new(forager);
    crawl.arg("crawl").arg("--model").arg(&s.model);
    for u in &s.seeds {
        crawl.args(["--seed", u]);
    }
    for g in &s.good {
        crawl.args(["--good", g]);
    }
    common_args(&mut crawl);
    crawl.stderr(std::fs::File::create(log(0)).unwrap());
    let mut kids: Vec<Child> = vec![crawl.spawn().unwrap()];
    // Workers join once the crawl has stored its model (else they say so and stop).
    let t = Instant::now();
    let laid_out = || {
        let has = |sql: &str| testing::number(db.url(), sql) > 0;
        has("SELECT count(*) FROM pg_tables WHERE tablename = 'meta'")
            && has("SELECT count(*) FROM meta WHERE key = 'model'")
    };
    while !laid_out() && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
    }
    for i in 1..n {
        let mut w = Command::new(forager);
        w.args(["worker", "--name", &format!("w{i}")]);
        common_args(&mut w);
        w.stderr(std::fs::File::create(log(i)).unwrap());
        kids.push(w.spawn().unwrap());
    }
    std::thread::sleep(Duration::from_secs_f64(s.warmup));
    let me = std::process::id();
    let cpu0: Vec<f64> = kids.iter().map(|k| cpu_secs(k.id())).collect();
    let mut watch = testing::Sessions::connect(db.url());
    let dead0 = watch.deadlocks();
    let (me0, f0, t0) = (cpu_secs(me), fetched(db.url()), Instant::now());
    let day0 = slots::of_day(std::time::SystemTime::now());
    let sessions = sample_sessions(&mut watch, Duration::from_secs_f64(s.window));
    let (f1, secs) = (fetched(db.url()), t0.elapsed().as_secs_f64());
    if s.trace {
        trace_slots(s, n, day0, day0 + secs);
    }
    let deadlocks = watch.deadlocks() - dead0;
    drop(watch);
    let held = testing::leased_hosts(db.url());
    eprintln!(
        "{n} processes: hosts held at the window's end {held}; server sessions on average: {sessions}"
    );
    let mut cpu: Vec<f64> = kids
        .iter()
        .zip(&cpu0)
        .map(|(k, c0)| (cpu_secs(k.id()) - c0) / secs)
        .collect();
    cpu.push((cpu_secs(me) - me0) / secs);
    end(&mut kids, n, log);
    drop(db);
    ((f1 - f0) as f64 / secs, cpu, f1, deadlocks)
}

/// Says which of the `n` processes `kids` stopped before the window's end, and why (from its
/// log), then ends them all.
fn end(kids: &mut [Child], n: usize, log: impl Fn(usize) -> std::path::PathBuf) {
    for (i, k) in kids.iter_mut().enumerate() {
        if !matches!(k.try_wait(), Ok(None)) {
            let said = std::fs::read_to_string(log(i)).unwrap_or_default();
            let why = |l: &&str| {
                l.contains("panicked") || l.starts_with("Error") || l.starts_with("stopped")
            };
            let last = (said.lines().find(why).or(said.lines().last())).unwrap_or("");
            eprintln!("{n} processes: process {i} stopped before the window's end: {last}");
        }
    }
    for k in kids {
        let _ = k.kill();
        let _ = k.wait();
    }
}

/// Prints what each process's fetch slots did over the window `from`..`to` (seconds of the
/// day), from the spans in its log.
fn trace_slots(s: &Setup, n: usize, from: f64, to: f64) {
    for i in 0..n {
        let log = std::fs::read_to_string(s.logs.join(format!("{n}-{i}.log"))).unwrap_or_default();
        let traced = slots::read(&log, s.concurrency, from, to);
        eprintln!("{n} processes: process {i}'s fetch slots: {traced}");
    }
}

/// Samples the server's sessions on the crawl database every 100 ms for `window`: the average
/// number in each state (running, waiting for a lock, idle in a transaction: a round trip to
/// the client, idle), as one line.
fn sample_sessions(sessions: &mut testing::Sessions, window: Duration) -> String {
    let mut sum: std::collections::BTreeMap<String, i64> = Default::default();
    let (t, mut samples) = (Instant::now(), 0);
    while t.elapsed() < window {
        for (what, n) in sessions.sample() {
            *sum.entry(what).or_default() += n;
        }
        samples += 1;
        std::thread::sleep(Duration::from_millis(100));
    }
    let each: Vec<String> = (sum.iter())
        .map(|(what, n)| format!("{what} {:.2}", *n as f64 / f64::from(samples.max(1))))
        .collect();
    each.join(", ")
}

/// The generated web of `sites` sites, its host count, the astronomy task's seeds and good
/// topics, and a model trained on it written to `dir`.
fn generate(
    sites: usize,
    dir: &std::path::Path,
) -> (
    forager::miniweb::MiniWeb,
    usize,
    Vec<String>,
    Vec<String>,
    std::path::PathBuf,
) {
    let t = Instant::now();
    let (synth, task, model_path) = synth_model::astronomy_web(sites, dir);
    let web = synth.web;
    let hosts: std::collections::BTreeSet<String> = (synth.files.keys())
        .filter_map(|u| url::Url::parse(u).ok()?.host_str().map(str::to_owned))
        .collect();
    eprintln!(
        "generated {} pages on {} hosts and trained in {:.1} s",
        synth.files.len(),
        hosts.len(),
        t.elapsed().as_secs_f64()
    );
    (web, hosts.len(), task.seeds, task.good, model_path)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let sites: usize = knob("SCALING_SITES", 2000);
    let latency: forager::serve::Latency = knob("SCALING_LATENCY", "50..100".parse().unwrap());
    let pg = pg::Pg::get();
    let dir = std::env::temp_dir().join(format!("forager-scaling-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (web, hosts, seeds, good, model_path) = generate(sites, &dir);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = rt
        .block_on(forager::serve::start_with(
            web,
            ([127, 0, 0, 1], 0).into(),
            Some(latency),
        ))
        .unwrap();
    let setup = Setup {
        proxy: server.proxy_url(),
        model: model_path,
        seeds,
        good,
        concurrency: knob("SCALING_CONCURRENCY", 4),
        delay: knob("SCALING_DELAY", 1.0),
        warmup: knob("SCALING_WARMUP", 8.0),
        window: knob("SCALING_WINDOW", 20.0),
        logs: dir.clone(),
        trace: knob("SCALING_TRACE", 0) > 0,
    };
    println!(
        "scaling: {} hosts, latency {}..{} ms, per-host delay {} s, {} fetches in flight per process, \
         {} s window after {} s warm-up; {} cores",
        hosts,
        latency.min_ms,
        latency.max_ms,
        setup.delay,
        setup.concurrency,
        setup.window,
        setup.warmup,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let this = env!("CARGO_BIN_EXE_forager").to_owned();
    let mut builds = vec![("this", this)];
    if let Ok(base) = std::env::var("SCALING_BASE") {
        builds.insert(0, ("base", base));
    }
    println!("| processes | build | pages/s | x one | pages at end | deadlocks | CPU share per process (crawl, workers..., bench+server) |");
    println!("|---:|---|---:|---:|---:|---:|---|");
    let mut one = vec![f64::NAN; builds.len()];
    let counts: Vec<usize> = (knob("SCALING_PROCESSES", "1,2,4".to_owned()).split(','))
        .filter_map(|c| c.trim().parse().ok())
        .collect();
    for n in counts {
        for (b, (name, forager)) in builds.iter().enumerate() {
            eprintln!("{n} processes of {name} ({forager})");
            let (rate, cpu, total, deadlocks) = run(&pg.url, &setup, n, forager);
            if n == 1 {
                one[b] = rate;
            }
            let cpu: Vec<String> = cpu.iter().map(|c| format!("{:.0}%", c * 100.0)).collect();
            println!(
                "| {n} | {name} | {rate:.1} | {:.2} | {total} | {deadlocks} | {} |",
                rate / one[b],
                cpu.join(" ")
            );
        }
    }
    rt.block_on(server.shutdown());
    let _ = std::fs::remove_dir_all(&dir);
}
