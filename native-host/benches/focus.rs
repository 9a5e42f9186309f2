//! Focus holds (issue #26): harvest at 1000 and 3000 pages on three FOLDOC tasks, a crawl
//! shared by 4 `forager worker`s on PostgreSQL against the one-process SQLite `forager crawl`,
//! several runs each, at default settings (16 fetches in flight per process, no delay on
//! loopback). FOLDOC is served by `forager serve-web`; the server is the one in
//! `FORAGER_TEST_PG` (`scripts/pg-cluster.sh start`), a fresh database per run. Prints a table
//! of each side's mean and spread (min..max) and the gap of the means; the bar is 0.03.
//!
//! `FOCUS_RUNS` (default 3), `FOCUS_PAGES` (3000), `FOCUS_WORKERS` (4), `FOCUS_TASKS`
//! (networking,languages,hardware) change the plan; `FOCUS_CONCURRENCY` (16) sets the fetches
//! in flight of the one process and `FOCUS_WORKER_CONCURRENCY` (16) each worker's, to tell
//! the effect of more fetches in flight from that of sharing; `FOCUS_START_ARGS` (none) adds
//! options to the `forager crawl` that starts each shared crawl (say `--apprentice`).
//! `FOCUS_SIDES` replaces the two sides by a list, run in turn within every run (alternated)
//! and compared with the first: `one:N` is one process with N fetches in flight, `WxN` is W
//! workers with N each (say `one:16,one:64,4x16,4x4`); `SIDE@PATH` runs that side with the
//! `forager` binary at PATH (to compare two builds in one run). `FOCUS_DELAY` (0) is the
//! seconds between two requests to a host (the crawl's default is 1). Every run's line shows
//! the machine's load (1-minute average) as it started and each side's harvest and seconds.
//! `FOCUS_WALL` (60,120,300) lists wall times (seconds since a side's crawl was started) at
//! which each side's truly relevant pages fetched so far are counted: at a politeness delay
//! the sides fetch at different speeds, so equal pages and equal time tell different things
//! (a count at a time past a crawl's end is its total, marked `*` in a run's line).

mod common;
use forager::evaluation::measure;
use forager::miniweb::{MiniWeb, Task};
use forager::store::postgres::testing::{self, TestDb};
use forager::store::Locator;
use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

/// A number from the environment, or `default`.
fn env_num(name: &str, default: usize) -> usize {
    (std::env::var(name).ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The `forager` binary: `bin`, else this build's.
fn forager(bin: Option<&Path>) -> Command {
    Command::new(bin.unwrap_or(Path::new(env!("CARGO_BIN_EXE_forager"))))
}

/// Seconds between two requests to a host (`FOCUS_DELAY`, default 0: loopback).
fn delay() -> String {
    std::env::var("FOCUS_DELAY").unwrap_or("0".into())
}

/// `forager serve-web DIR` on a free port: the process and its proxy URL.
fn serve_web(dir: &Path) -> (Child, String) {
    let mut child = forager(None)
        .arg("serve-web")
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("forager serve-web");
    let out = child.stdout.take().expect("its stdout");
    let mut line = String::new();
    std::io::BufReader::new(out)
        .read_line(&mut line)
        .expect("serve-web prints its port");
    let port: u16 = line.trim().parse().expect("a port number");
    (child, format!("http://127.0.0.1:{port}"))
}

/// The arguments every crawl of `task` shares: the model, the good topics, the seeds and the
/// proxy, and the delay.
fn crawl_args(cmd: &mut Command, model: &Path, task: &Task, proxy: &str) {
    cmd.args(["crawl", "--model"]).arg(model);
    for g in &task.good {
        cmd.args(["--good", g]);
    }
    for s in &task.seeds {
        cmd.args(["--seed", s]);
    }
    cmd.args(["--proxy", proxy, "--delay", &delay()]);
}

/// Runs `cmd` to the end; panics with its stderr when it fails.
fn run(cmd: &mut Command) {
    let out = cmd.stdout(Stdio::null()).output().expect("forager runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What a crawl left: its fetch log ((URL, R) in fetch order) and when each fetched page was
/// fetched ((URL, Unix time)).
struct Crawled {
    log: Vec<(String, f64)>,
    times: Vec<(String, f64)>,
}

/// The fetch log and fetch times of the crawl at `locator`.
fn fetch_log(locator: &Locator) -> Crawled {
    let reader = forager::store::open_read(locator).expect("open the crawl");
    let pages = reader.fetched_pages().expect("its fetched pages");
    let times = (pages.into_iter())
        .filter_map(|p| Some((p.url, p.fetched_at?)))
        .collect();
    Crawled {
        log: reader.fetch_log().expect("its fetch log"),
        times,
    }
}

/// Unix time now.
fn unix_now() -> f64 {
    (std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH))
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The wall times (seconds since a crawl's start) at which relevant pages are counted
/// (`FOCUS_WALL`, default 60,120,300).
fn wall_times() -> Vec<f64> {
    (std::env::var("FOCUS_WALL").unwrap_or("60,120,300".into()))
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

/// How many of `times` ((URL, Unix time fetched)) are truly relevant pages fetched within
/// `secs` of `start`.
fn relevant_by(
    web: &MiniWeb,
    task: &Task,
    times: &[(String, f64)],
    start: f64,
    secs: f64,
) -> usize {
    (times.iter())
        .filter(|(u, at)| *at - start <= secs && web.is_relevant(u, &task.good))
        .count()
}

/// One `forager crawl` process on a SQLite file.
fn one_process(
    bin: Option<&Path>,
    model: &Path,
    task: &Task,
    proxy: &str,
    (pages, concurrency): (usize, usize),
    tmp: &Path,
) -> Crawled {
    let db = tmp.join(format!("one-{}.db", task.name));
    for ext in ["", "-wal", "-shm", ".lock"] {
        let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
    }
    let mut cmd = forager(bin);
    crawl_args(&mut cmd, model, task, proxy);
    // A new apprentice every run, as the shared crawl's (a crawl on a server learns a new
    // one): else runs after a task's first reuse the one it saved beside its database.
    cmd.arg("--fresh-apprentice");
    cmd.args(["--concurrency", &concurrency.to_string()]);
    run(cmd.args(["--pages", &pages.to_string(), "--db"]).arg(&db));
    fetch_log(&Locator::Sqlite(db))
}

/// `workers` `forager worker`s sharing a crawl on the server: `forager crawl --pages 0` stores
/// the model and seeds, then the workers start together.
fn shared(
    bin: Option<&Path>,
    (server, tmp): (&str, &Path),
    model: &Path,
    task: &Task,
    proxy: &str,
    (pages, workers, concurrency): (usize, usize, usize),
) -> Crawled {
    let db = TestDb::create(server, &format!("focus_{}", task.name));
    let mut prep = forager(bin);
    crawl_args(&mut prep, model, task, proxy);
    prep.args(start_args());
    run(prep.args(["--pages", "0", "--db", db.url()]));
    let err = |i: usize| tmp.join(format!("worker{i}.err"));
    let children: Vec<Child> = (0..workers)
        .map(|i| {
            forager(bin)
                .args(["worker", "--db", db.url(), "--name", &format!("w{i}")])
                .args([
                    "--pages",
                    &pages.to_string(),
                    "--proxy",
                    proxy,
                    "--delay",
                    &delay(),
                ])
                .args(["--concurrency", &concurrency.to_string()])
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(err(i)).expect("a scratch file"))
                .spawn()
                .expect("forager worker")
        })
        .collect();
    for (i, mut c) in children.into_iter().enumerate() {
        let ok = c.wait().expect("a worker ends").success();
        assert!(
            ok,
            "worker {i}: {}",
            std::fs::read_to_string(err(i)).unwrap_or_default()
        );
    }
    fetch_log(&Locator::Postgres(db.url().to_owned()))
}

/// Options added to the `forager crawl` that starts a shared crawl (`FOCUS_START_ARGS`).
fn start_args() -> Vec<String> {
    (std::env::var("FOCUS_START_ARGS").unwrap_or_default())
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// Harvest (by the web's labels) of `log` at `n` pages, if it fetched that many.
fn harvest_at(
    web: &MiniWeb,
    task: &Task,
    log: &[(String, f64)],
    pages: usize,
    n: usize,
) -> Option<f64> {
    (measure(web, task, log, pages).into_iter())
        .find(|c| c.n == n)
        .map(|c| c.harvest)
}

/// The pages at which harvest is read: 1000 and the crawl's length.
fn checkpoints(pages: usize) -> Vec<usize> {
    let mut v = vec![1000, pages];
    v.dedup();
    v
}

/// "mean [min..max]" of `xs` to `decimals` places, and the mean.
fn spread(xs: &[f64], decimals: usize) -> (String, f64) {
    if xs.is_empty() {
        return ("-".into(), f64::NAN);
    }
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let d = decimals;
    (format!("{mean:.d$} [{lo:.d$}..{hi:.d$}]"), mean)
}

/// How a side crawls.
#[derive(Clone, Copy, Debug, PartialEq)]
enum How {
    /// One `forager crawl` process on SQLite with this many fetches in flight.
    One(usize),
    /// This many `forager worker`s on PostgreSQL, each with this many fetches in flight.
    Shared(usize, usize),
}

/// One way of crawling a task: how, and with which `forager` binary (`None`: this build's).
#[derive(Clone, Debug, PartialEq)]
struct Side {
    how: How,
    bin: Option<std::path::PathBuf>,
}

impl Side {
    /// `one:N` or `WxN`, either followed by `@PATH`.
    fn parse(s: &str) -> Option<Side> {
        let (s, bin) = match s.trim().split_once('@') {
            Some((s, b)) => (s, Some(b.into())),
            None => (s.trim(), None),
        };
        let how = if let Some(n) = s.strip_prefix("one:") {
            How::One(n.parse().ok().filter(|n| *n > 0)?)
        } else {
            let (w, n) = s.split_once('x')?;
            let (w, n) = (w.parse().ok()?, n.parse().ok()?);
            (w > 0 && n > 0).then_some(How::Shared(w, n))?
        };
        Some(Side { how, bin })
    }

    /// The side's name in the table.
    fn name(&self) -> String {
        let bin = (self.bin.as_ref()).map_or(String::new(), |b| {
            let file = b.file_name().unwrap_or_default().to_string_lossy();
            format!(" ({file})")
        });
        match self.how {
            How::One(n) => format!("one x{n}{bin}"),
            How::Shared(w, n) => format!("{w} workers x{n}{bin}"),
        }
    }
}

/// The sides to compare: `FOCUS_SIDES`, else one process against the workers.
fn sides() -> Vec<Side> {
    if let Ok(list) = std::env::var("FOCUS_SIDES") {
        let sides: Vec<Side> = list.split(',').filter_map(Side::parse).collect();
        assert!(
            !sides.is_empty() && sides.len() == list.split(',').count(),
            "FOCUS_SIDES: a list of one:N or WxN, not {list:?}"
        );
        return sides;
    }
    let side = |how| Side { how, bin: None };
    vec![
        side(How::One(env_num("FOCUS_CONCURRENCY", 16).max(1))),
        side(How::Shared(
            env_num("FOCUS_WORKERS", 4).max(1),
            env_num("FOCUS_WORKER_CONCURRENCY", 16).max(1),
        )),
    ]
}

/// What one task's runs gave: per side, harvest at each checkpoint, relevant pages at each
/// wall time, and seconds.
struct Tally {
    harvest: Vec<[Vec<f64>; 2]>,
    wall: Vec<Vec<Vec<f64>>>,
    seconds: Vec<f64>,
}

/// Everything a run needs.
struct Plan<'a> {
    web: &'a MiniWeb,
    server: &'a str,
    tmp: &'a Path,
    model: &'a Path,
    proxy: &'a str,
    pages: usize,
}

/// Crawls `task` once as `side`; returns its fetch log and times.
fn crawl(plan: &Plan<'_>, task: &Task, side: &Side) -> Crawled {
    let bin = side.bin.as_deref();
    match side.how {
        How::One(n) => one_process(bin, plan.model, task, plan.proxy, (plan.pages, n), plan.tmp),
        How::Shared(w, n) => shared(
            bin,
            (plan.server, plan.tmp),
            plan.model,
            task,
            plan.proxy,
            (plan.pages, w, n),
        ),
    }
}

/// `runs` runs of `task`, every side in turn within each run; prints one line per run.
fn run_task(plan: &Plan<'_>, task: &Task, sides: &[Side], runs: usize) -> Tally {
    let walls = wall_times();
    let mut t = Tally {
        harvest: vec![Default::default(); sides.len()],
        wall: vec![vec![Vec::new(); walls.len()]; sides.len()],
        seconds: vec![0.0; sides.len()],
    };
    for r in 0..runs {
        let mut line = format!(
            "  {} run {} (load {:.2}):",
            task.name,
            r + 1,
            common::load_average()
        );
        for (i, side) in sides.iter().enumerate() {
            let (start, unix_start) = (Instant::now(), unix_now());
            let crawled = crawl(plan, task, side);
            let secs = start.elapsed().as_secs_f64();
            t.seconds[i] += secs;
            let mut hs = Vec::new();
            for (k, n) in checkpoints(plan.pages).into_iter().enumerate() {
                let h = harvest_at(plan.web, task, &crawled.log, plan.pages, n);
                hs.push(h.map_or("-".into(), |h| format!("{h:.3}")));
                t.harvest[i][k].extend(h);
            }
            let mut rel = Vec::new();
            for (k, w) in walls.iter().enumerate() {
                let r = relevant_by(plan.web, task, &crawled.times, unix_start, *w);
                t.wall[i][k].push(r as f64);
                rel.push(format!("{r}{}", if secs < *w { "*" } else { "" }));
            }
            line += &format!(
                " {} {} in {secs:.1} s, relevant by {:?} s {};",
                side.name(),
                hs.join(" / "),
                walls,
                rel.join(" / ")
            );
        }
        println!("{line}");
    }
    t
}

/// The table's rows of `task`: each side's harvest at each checkpoint and its gap to the
/// first side's.
fn print_task(name: &str, pages: usize, sides: &[Side], t: &Tally, runs: usize) {
    for (k, n) in checkpoints(pages).into_iter().enumerate() {
        let (_, first) = spread(&t.harvest[0][k], 3);
        let mut row = format!("{name:<12} {n:>5} ");
        for i in 0..sides.len() {
            let (s, m) = spread(&t.harvest[i][k], 3);
            let gap = if i == 0 {
                String::new()
            } else {
                format!(" {:+.3}", m - first)
            };
            row += &format!(" {:<28}", format!("{s}{gap}"));
        }
        println!("{row}");
    }
    for (k, w) in wall_times().iter().enumerate() {
        let mut row = format!("{name:<12} {:>5} ", format!("{w}s"));
        for i in 0..sides.len() {
            row += &format!(" {:<28}", spread(&t.wall[i][k], 0).0);
        }
        println!("{row}  relevant pages by then");
    }
    let secs: Vec<String> = (t.seconds.iter())
        .map(|s| format!("{:.1}", s / runs as f64))
        .collect();
    println!(
        "{:<12} {:>5}  mean seconds a crawl: {}",
        "",
        "",
        secs.join(" / ")
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let Some(dir) = common::foldoc_dir() else {
        println!("focus bench: FOLDOC mini-web not found, skipped");
        return;
    };
    let Some(server) = testing::server() else {
        println!("focus bench: no PostgreSQL server (FORAGER_TEST_PG), skipped");
        return;
    };
    let runs = env_num("FOCUS_RUNS", 3).max(1);
    let pages = env_num("FOCUS_PAGES", 3000).max(1000);
    let sides = sides();
    let tasks = std::env::var("FOCUS_TASKS").unwrap_or("networking,languages,hardware".into());
    let web = MiniWeb::open(&dir).unwrap();
    let tmp = std::env::temp_dir().join(format!("forager-focus-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let (model, _) =
        forager::training::from_miniweb(&web, Default::default(), Default::default()).unwrap();
    let model_path = tmp.join("foldoc.fgm");
    std::fs::write(&model_path, model.to_bytes()).unwrap();
    let (mut server_web, proxy) = serve_web(&dir);
    println!(
        "focus bench on FOLDOC: harvest (share of fetched pages truly relevant), {runs} runs \
         each, sides in turn within a run: one process on SQLite, workers on PostgreSQL \
         (started with {:?}), delay {} s; mean [min..max], and the gap to the first side",
        start_args(),
        delay()
    );
    let names: Vec<String> = sides.iter().map(|s| format!("{:<28}", s.name())).collect();
    println!("{:<12} {:>5}  {}", "task", "pages", names.join(" "));
    let plan = Plan {
        web: &web,
        server: &server,
        tmp: &tmp,
        model: &model_path,
        proxy: &proxy,
        pages,
    };
    for name in tasks.split(',') {
        let task = web.task(name).unwrap().clone();
        let tally = run_task(&plan, &task, &sides, runs);
        print_task(name, pages, &sides, &tally, runs);
    }
    let _ = server_web.kill();
    let _ = server_web.wait();
    let _ = std::fs::remove_dir_all(&tmp);
}
