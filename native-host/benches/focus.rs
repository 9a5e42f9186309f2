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

/// The `forager` binary.
fn forager() -> Command {
    Command::new(env!("CARGO_BIN_EXE_forager"))
}

/// `forager serve-web DIR` on a free port: the process and its proxy URL.
fn serve_web(dir: &Path) -> (Child, String) {
    let mut child = forager()
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
/// proxy, no delay on loopback.
fn crawl_args(cmd: &mut Command, model: &Path, task: &Task, proxy: &str) {
    cmd.args(["crawl", "--model"]).arg(model);
    for g in &task.good {
        cmd.args(["--good", g]);
    }
    for s in &task.seeds {
        cmd.args(["--seed", s]);
    }
    cmd.args(["--proxy", proxy, "--delay", "0"]);
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

/// The fetch log ((URL, R) in fetch order) of the crawl at `locator`.
fn fetch_log(locator: &Locator) -> Vec<(String, f64)> {
    (forager::store::open_read(locator).expect("open the crawl"))
        .fetch_log()
        .expect("its fetch log")
}

/// One `forager crawl` process on a SQLite file.
fn one_process(
    model: &Path,
    task: &Task,
    proxy: &str,
    (pages, concurrency): (usize, usize),
    tmp: &Path,
) -> Vec<(String, f64)> {
    let db = tmp.join(format!("one-{}.db", task.name));
    for ext in ["", "-wal", "-shm", ".lock"] {
        let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
    }
    let mut cmd = forager();
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
    (server, tmp): (&str, &Path),
    model: &Path,
    task: &Task,
    proxy: &str,
    (pages, workers, concurrency): (usize, usize, usize),
) -> Vec<(String, f64)> {
    let db = TestDb::create(server, &format!("focus_{}", task.name));
    let mut prep = forager();
    crawl_args(&mut prep, model, task, proxy);
    prep.args(start_args());
    run(prep.args(["--pages", "0", "--db", db.url()]));
    let err = |i: usize| tmp.join(format!("worker{i}.err"));
    let children: Vec<Child> = (0..workers)
        .map(|i| {
            forager()
                .args(["worker", "--db", db.url(), "--name", &format!("w{i}")])
                .args([
                    "--pages",
                    &pages.to_string(),
                    "--proxy",
                    proxy,
                    "--delay",
                    "0",
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

/// "mean [min..max]" of `xs`, and the mean.
fn spread(xs: &[f64]) -> (String, f64) {
    if xs.is_empty() {
        return ("-".into(), f64::NAN);
    }
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (format!("{mean:.3} [{lo:.3}..{hi:.3}]"), mean)
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
    let workers = env_num("FOCUS_WORKERS", 4).max(1);
    let concurrency = env_num("FOCUS_CONCURRENCY", 16).max(1);
    let per_worker = env_num("FOCUS_WORKER_CONCURRENCY", 16).max(1);
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
         each, one process (SQLite, {concurrency} fetches in flight) vs {workers} workers \
         (PostgreSQL, {per_worker} in flight each, started with {:?}), delay 0",
        start_args()
    );
    println!(
        "{:<12} {:>5}  {:<22} {:<22} {:>7}",
        "task", "pages", "one process", "shared", "gap"
    );
    for name in tasks.split(',') {
        let task = web.task(name).unwrap().clone();
        let mut one: [Vec<f64>; 2] = Default::default();
        let mut many: [Vec<f64>; 2] = Default::default();
        let last = checkpoints(pages).len() - 1;
        let (mut t_one, mut t_many) = (0.0, 0.0);
        for _ in 0..runs {
            let t = Instant::now();
            let a = one_process(&model_path, &task, &proxy, (pages, concurrency), &tmp);
            t_one += t.elapsed().as_secs_f64();
            let t = Instant::now();
            let b = shared(
                (&server, &tmp),
                &model_path,
                &task,
                &proxy,
                (pages, workers, per_worker),
            );
            t_many += t.elapsed().as_secs_f64();
            for (k, n) in checkpoints(pages).into_iter().enumerate() {
                one[k].extend(harvest_at(&web, &task, &a, pages, n));
                many[k].extend(harvest_at(&web, &task, &b, pages, n));
            }
        }
        for (k, n) in checkpoints(pages).into_iter().enumerate() {
            let (a, ma) = spread(&one[k]);
            let (b, mb) = spread(&many[k]);
            println!("{name:<12} {n:>5}  {a:<22} {b:<22} {:>+7.3}", mb - ma);
        }
        println!(
            "{:<12} {:>5}  runs: one process {:?}, shared {:?}; mean seconds a crawl: {:.1} vs {:.1}",
            "",
            "",
            one[last].iter().map(|h| format!("{h:.3}")).collect::<Vec<_>>(),
            many[last].iter().map(|h| format!("{h:.3}")).collect::<Vec<_>>(),
            t_one / runs as f64,
            t_many / runs as f64
        );
    }
    let _ = server_web.kill();
    let _ = server_web.wait();
    let _ = std::fs::remove_dir_all(&tmp);
}
