//! Crash safety of a shared crawl on PostgreSQL (issue #26), shared by `tests/postgres_kill.rs`
//! (a few kills, asserted) and `cargo bench --bench kills` (ten, printed): `forager crawl` and
//! three `forager worker`s crawl a small generated web served with 100-200 ms of latency;
//! random processes are SIGKILLed at random moments, each replaced by a new worker; then the
//! processes are left to end by themselves (each waits while others hold hosts). A killed
//! worker's lease is made to lapse at once (as the clock would after [`forager::store::LEASE`]):
//! the survivors take its hosts and in-flight URLs over. The end state is compared with a
//! one-process crawl of the same web on SQLite.
#![allow(dead_code)]

use forager::store::postgres::{testing, PgStore};
use forager::store::{CrawlDb, Store};
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The per-host page cap (the calendar trap's host reaches it; counted per process).
pub const HOST_CAP: u64 = 100;
/// The trap's host: where the cap stops it depends on the processes, so it is compared apart.
const TRAP: &str = "http://events-calendar.test/";

/// One SIGKILL: whom, when, and what it held.
#[derive(Debug)]
pub struct Kill {
    /// The victim's worker name (`?` when it was killed before it looked for work).
    pub victim: String,
    /// Pages the crawl had fetched then.
    pub fetched: i64,
    /// Hosts it held, and their frontier and in-flight URLs.
    pub held: (i64, i64, i64),
}

/// What a run saw.
#[derive(Debug)]
pub struct Report {
    /// The kills, in order.
    pub kills: Vec<Kill>,
    /// Processes started in all (the four, and one replacement per kill).
    pub processes: usize,
    /// Pages the shared crawl fetched, and the one-process crawl.
    pub fetched: usize,
    /// Pages the one-process crawl fetched.
    pub one_process: usize,
    /// Pages fetched by one and not the other (the trap's host left out).
    pub missing: Vec<String>,
    /// Pages fetched only by the shared crawl (the trap's host left out).
    pub extra: Vec<String>,
    /// Pages fetched on the trap's host by the shared crawl.
    pub trapped: u64,
    /// Fetches recorded beyond one per page ([`testing::recorded_twice`]).
    pub recorded_twice: i64,
    /// At the end: frontier URLs, hosts leased, URLs in flight.
    pub left: (i64, i64, i64),
    /// Processes that did not exit successfully (name and the end of what they said).
    pub failed: Vec<String>,
    /// Seconds from the first process's start to the last one's end.
    pub seconds: f64,
}

impl Report {
    /// Whether nothing was lost, nothing done twice, and the crawl ended as one process's.
    pub fn sound(&self) -> bool {
        self.missing.is_empty()
            && self.extra.is_empty()
            && self.recorded_twice == 0
            && self.left == (0, 0, 0)
            && self.failed.is_empty()
            && self.trapped >= HOST_CAP
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "| kill | victim | pages then | hosts held | their frontier | in flight |"
        )?;
        writeln!(f, "|---:|---|---:|---:|---:|---:|")?;
        for (i, k) in self.kills.iter().enumerate() {
            let (h, q, r) = k.held;
            writeln!(
                f,
                "| {} | {} | {} | {h} | {q} | {r} |",
                i + 1,
                k.victim,
                k.fetched
            )?;
        }
        writeln!(
            f,
            "{} kills, {} processes, {:.0} s: {} pages fetched (one process: {}), not fetched {}, \
             fetched only here {}, trap pages {}, recorded twice {}, left (frontier, leased hosts, \
             in flight) {:?}, failed processes {}",
            self.kills.len(),
            self.processes,
            self.seconds,
            self.fetched,
            self.one_process,
            self.missing.len(),
            self.extra.len(),
            self.trapped,
            self.recorded_twice,
            self.left,
            self.failed.len()
        )
    }
}

/// A started process of the shared crawl.
struct Proc {
    name: Option<String>,
    child: Child,
    log: std::path::PathBuf,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What every process of the shared crawl is given.
struct Crawl {
    db: String,
    proxy: String,
    dir: std::path::PathBuf,
}

impl Crawl {
    fn worker(&self, name: &str) -> Proc {
        let log = self.dir.join(format!("{name}.log"));
        let child = Command::new(env!("CARGO_BIN_EXE_forager"))
            .args(["worker", "--name", name, "--db", &self.db])
            .args(["--proxy", &self.proxy])
            .args(["--delay", "0", "--concurrency", "2", "--seconds", "600"])
            .args(["--max-pages-per-host", &HOST_CAP.to_string()])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        Proc {
            name: Some(name.to_owned()),
            child,
            log,
        }
    }
}

/// `forager crawl` of the generated web's astronomy task into `db` through `proxy`.
fn start_crawl(model: &Path, task: &forager::miniweb::Task, db: &str, proxy: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_forager"));
    c.arg("crawl").arg("--model").arg(model);
    for s in &task.seeds {
        c.args(["--seed", s]);
    }
    for g in &task.good {
        c.args(["--good", g]);
    }
    c.args([
        "--db", db, "--proxy", proxy, "--delay", "0", "--mode", "soft",
    ])
    .args(["--max-pages-per-host", &HOST_CAP.to_string()])
    .args(["--concurrency", "2", "--seconds", "600"])
    .stdout(Stdio::null());
    c
}

/// Pages the crawl at `db` has fetched.
fn fetched(db: &str) -> i64 {
    PgStore::open(db).and_then(|s| s.fetched()).unwrap_or(0)
}

/// Runs the scenario on the server at `server` with `kills` kills chosen by `seed`, in
/// scratch folder `dir`.
#[allow(clippy::too_many_lines)] // one scenario, read top to bottom
pub fn run(server: &str, kills: usize, seed: u64, dir: &Path) -> Report {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    std::fs::create_dir_all(dir).unwrap();
    let (synth, task, model_path) = crate::synth_model::astronomy_web(20, dir);
    let web = synth.web;
    let rt = tokio::runtime::Runtime::new().unwrap();
    let local = |latency: Option<&str>| {
        let l = latency.map(|l| l.parse().unwrap());
        rt.block_on(forager::serve::start_with(
            web.clone(),
            ([127, 0, 0, 1], 0).into(),
            l,
        ))
        .unwrap()
    };
    let (plain, slow) = (local(None), local(Some("100..200")));

    // The one-process crawl, on SQLite.
    let lite = dir.join("one.db");
    let out = start_crawl(
        &model_path,
        &task,
        lite.to_str().unwrap(),
        &plain.proxy_url(),
    )
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want: BTreeSet<String> = Store::open(&lite)
        .unwrap()
        .fetched_urls()
        .unwrap()
        .into_iter()
        .collect();

    // The shared crawl: forager crawl and three workers.
    let db = testing::TestDb::create(server, "kill");
    let crawl = Crawl {
        db: db.url().to_owned(),
        proxy: slow.proxy_url(),
        dir: dir.to_owned(),
    };
    let t = Instant::now();
    let log = dir.join("crawl.log");
    let first = start_crawl(&model_path, &task, &crawl.db, &crawl.proxy)
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut procs = vec![Proc {
        name: None,
        child: first,
        log,
    }];
    // Workers join a crawl that has its model (`forager worker` says so and stops otherwise).
    let laid_out =
        || PgStore::open(&crawl.db).is_ok_and(|s| s.model_bytes().is_ok_and(|m| m.is_some()));
    while !laid_out() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the crawl stored no model"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    procs.extend((1..4).map(|i| crawl.worker(&format!("w{i}"))));
    let mut started = procs.len();
    let mut done = Vec::new();
    for k in 0..kills {
        std::thread::sleep(Duration::from_millis(rng.random_range(400..1200)));
        let alive: Vec<usize> = (0..procs.len())
            .filter(|&i| procs[i].child.try_wait().unwrap().is_none())
            .collect();
        if alive.is_empty() {
            break; // the crawl ended before this kill
        }
        let i = alive[rng.random_range(0..alive.len())];
        let victim = &mut procs[i];
        let name = (victim.name.clone())
            .or_else(|| testing::worker_of(&crawl.db, victim.child.id()).map(|w| w.0));
        victim.child.kill().unwrap(); // SIGKILL: no give-back, no release
        let _ = victim.child.wait();
        let held = name
            .as_deref()
            .map_or((0, 0, 0), |n| testing::held_by(&crawl.db, n));
        if let Some(n) = &name {
            testing::lapse_lease(&crawl.db, n);
        }
        done.push(Kill {
            victim: name.unwrap_or_else(|| "?".into()),
            fetched: fetched(&crawl.db),
            held,
        });
        procs[i] = crawl.worker(&format!("r{k}"));
        started += 1;
    }

    // Every process ends by itself once the frontier is empty and no host is held.
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut failed = Vec::new();
    for p in &mut procs {
        let status = loop {
            if let Some(s) = p.child.try_wait().unwrap() {
                break Some(s);
            }
            if Instant::now() > deadline {
                break None;
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        if !status.is_some_and(|s| s.success()) {
            let said = std::fs::read_to_string(&p.log).unwrap_or_default();
            let last: Vec<&str> = said.lines().rev().take(3).collect();
            failed.push(format!("{:?} ({status:?}): {last:?}", p.name));
        }
    }
    let seconds = t.elapsed().as_secs_f64();
    let store = PgStore::open(&crawl.db).unwrap();
    let got: BTreeSet<String> = store.fetched_urls().unwrap().into_iter().collect();
    let left = (
        store.frontier_len().unwrap(),
        testing::leased_hosts(&crawl.db),
        testing::in_flight(&crawl.db),
    );
    let recorded_twice = testing::recorded_twice(&crawl.db);
    let strip = |s: &BTreeSet<String>| -> BTreeSet<String> {
        s.iter().filter(|u| !u.starts_with(TRAP)).cloned().collect()
    };
    let (g, w) = (strip(&got), strip(&want));
    let report = Report {
        kills: done,
        processes: started,
        fetched: got.len(),
        one_process: want.len(),
        missing: w.difference(&g).cloned().collect(),
        extra: g.difference(&w).cloned().collect(),
        trapped: (got.len() - g.len()) as u64,
        recorded_twice,
        left,
        failed,
        seconds,
    };
    drop(store);
    drop(procs);
    drop(db);
    rt.block_on(async {
        plain.shutdown().await;
        slow.shutdown().await;
    });
    report
}
