//! Crash safety of a shared crawl on PostgreSQL (issue #26; `FORAGER_TEST_PG`, see
//! scripts/pg-cluster.sh): a crawl by `forager crawl` and three `forager worker`s of a small
//! generated web served with latency, random processes SIGKILLed several times (each replaced
//! by a new worker), then left to finish: every fetched page recorded once, the fetched set the
//! one-process crawl's, the frontier empty and no host held. `FORAGER_KILLS` sets the number of
//! kills (3; 10 for the figure), `FORAGER_KILL_SEED` the random seed.

use forager::store::postgres::{testing, PgStore};
use forager::store::{CrawlDb, Store};
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::forager;

/// The per-host page cap (the calendar trap's host reaches it; counted per process).
const HOST_CAP: u64 = 100;
/// The trap's host.
const TRAP: &str = "http://events-calendar.test/";

/// A started process of the shared crawl.
struct Proc {
    name: String,
    child: Child,
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
}

impl Crawl {
    fn worker(&self, name: &str) -> Proc {
        let child = forager()
            .args([
                "worker",
                "--name",
                name,
                "--db",
                &self.db,
                "--proxy",
                &self.proxy,
            ])
            .args(["--delay", "0", "--concurrency", "2", "--seconds", "600"])
            .args(["--max-pages-per-host", &HOST_CAP.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Proc {
            name: name.to_owned(),
            child,
        }
    }
}

/// `forager crawl` of the generated web's astronomy task into `db` through `proxy`.
fn start_crawl(
    model: &std::path::Path,
    seeds: &[String],
    good: &[String],
    db: &str,
    proxy: &str,
) -> std::process::Command {
    let mut c = forager();
    c.arg("crawl").arg("--model").arg(model);
    for s in seeds {
        c.args(["--seed", s]);
    }
    for g in good {
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

fn fetched(db: &str) -> i64 {
    PgStore::open(db).and_then(|s| s.fetched()).unwrap_or(0)
}

#[test]
#[allow(clippy::too_many_lines)] // one scenario, read top to bottom
fn sigkilled_workers_lose_nothing_and_the_crawl_finishes_as_one_process_would() {
    let Some(server) = testing::server() else {
        return;
    };
    let kills: usize = std::env::var("FORAGER_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let seed: u64 = std::env::var("FORAGER_KILL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| u64::from(std::process::id()));
    eprintln!("kills {kills}, seed {seed} (FORAGER_KILL_SEED repeats the run)");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let dir = common::tmp("postgres-kill");
    let synth = forager::synthweb::SynthWeb::generate(&forager::synthweb::SynthConfig {
        sites: 20,
        ..Default::default()
    });
    let web = synth.web;
    let task = web.task("astronomy").unwrap().clone();
    let (model, _) = forager::training::from_miniweb(
        &web,
        forager_classifier::TextOptions::default(),
        forager_classifier::TrainOptions::default(),
    )
    .unwrap();
    let model_path = dir.join("model.fgm");
    std::fs::write(&model_path, model.to_bytes()).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let plain = rt
        .block_on(forager::serve::start(
            web.clone(),
            ([127, 0, 0, 1], 0).into(),
        ))
        .unwrap();
    let slow = rt
        .block_on(forager::serve::start_with(
            web,
            ([127, 0, 0, 1], 0).into(),
            Some("100..200".parse().unwrap()),
        ))
        .unwrap();

    // The one-process crawl, on SQLite.
    let lite = dir.join("one.db");
    let out = start_crawl(
        &model_path,
        &task.seeds,
        &task.good,
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

    // The shared crawl: forager crawl, then three workers once it has begun.
    let db = testing::TestDb::create(&server, "kill");
    let crawl = Crawl {
        db: db.url().to_owned(),
        proxy: slow.proxy_url(),
    };
    let first = start_crawl(
        &model_path,
        &task.seeds,
        &task.good,
        &crawl.db,
        &crawl.proxy,
    )
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let mut procs = vec![Proc {
        name: "local".into(),
        child: first,
    }];
    let t = Instant::now();
    // A worker finding no free host with pending URLs stops at once: join once the frontier
    // has spread.
    let spread = || {
        PgStore::open(&crawl.db)
            .and_then(|s| s.frontier_len())
            .unwrap_or(0)
    };
    while spread() < 40 && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
    }
    procs.extend((1..4).map(|i| crawl.worker(&format!("w{i}"))));
    let mut names: Vec<String> = procs.iter().map(|p| p.name.clone()).collect();
    let mut at_kill: Vec<(String, i64)> = Vec::new();
    for k in 0..kills {
        std::thread::sleep(Duration::from_millis(rng.random_range(400..1200)));
        let alive: Vec<usize> = (0..procs.len())
            .filter(|&i| procs[i].child.try_wait().unwrap().is_none())
            .collect();
        assert!(
            !alive.is_empty(),
            "every process stopped before kill {k}: {at_kill:?}"
        );
        let i = alive[rng.random_range(0..alive.len())];
        let victim = &mut procs[i];
        victim.child.kill().unwrap();
        let _ = victim.child.wait();
        at_kill.push((victim.name.clone(), fetched(&crawl.db)));
        let name = format!("r{k}");
        procs[i] = crawl.worker(&name);
        names.push(name);
    }
    eprintln!("killed (name, pages fetched then): {at_kill:?}");

    // Let it finish: the processes stop when their frontier is dry. The killed workers' hosts
    // stay leased until their leases lapse (made to lapse here, all processes stopped, rather
    // than waited out); then a finishing worker takes them and their in-flight URLs on, until
    // one finds nothing left.
    let deadline = Instant::now() + Duration::from_secs(300);
    let wait_all = |procs: &mut [Proc]| {
        while procs
            .iter_mut()
            .any(|p| p.child.try_wait().unwrap().is_none())
        {
            assert!(Instant::now() < deadline, "the crawl did not finish");
            std::thread::sleep(Duration::from_millis(300));
        }
    };
    wait_all(&mut procs);
    let stranded = (
        testing::leased_hosts(&crawl.db),
        testing::in_flight(&crawl.db),
    );
    for f in 1.. {
        testing::lapse_leases(&crawl.db);
        let before = fetched(&crawl.db);
        let name = format!("f{f}");
        procs = vec![crawl.worker(&name)];
        names.push(name);
        wait_all(&mut procs);
        let store = PgStore::open(&crawl.db).unwrap();
        if store.fetched().unwrap() == before && store.frontier_len().unwrap() == 0 {
            break;
        }
    }
    eprintln!(
        "left by the killed workers (hosts leased, URLs in flight): {stranded:?}; finishing workers: {}",
        names.iter().filter(|n| n.starts_with('f')).count()
    );
    assert_eq!(testing::leased_hosts(&crawl.db), 0, "hosts still leased");
    assert_eq!(testing::in_flight(&crawl.db), 0, "URLs still in flight");
    let store = PgStore::open(&crawl.db).unwrap();
    let log = store.fetched_urls().unwrap();
    let got: BTreeSet<String> = log.iter().cloned().collect();
    assert_eq!(got.len(), log.len(), "a page recorded twice");
    let trapped = |s: &BTreeSet<String>| s.iter().filter(|u| u.starts_with(TRAP)).count() as u64;
    assert_eq!(trapped(&want), HOST_CAP);
    assert!(trapped(&got) >= HOST_CAP, "{}", trapped(&got));
    let strip = |s: &BTreeSet<String>| -> BTreeSet<String> {
        s.iter().filter(|u| !u.starts_with(TRAP)).cloned().collect()
    };
    let (got, want) = (strip(&got), strip(&want));
    let missing: Vec<_> = want.difference(&got).take(10).collect();
    let extra: Vec<_> = got.difference(&want).take(10).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "the shared crawl fetched {} pages, one process {}; not fetched: {missing:?}; only here: {extra:?}",
        got.len(),
        want.len()
    );
    assert!(
        want.len() > 500,
        "a small web, crawled whole: {}",
        want.len()
    );
    eprintln!(
        "after {kills} kills: {} pages, each once, the one-process set; {} processes in all, {:.0} s",
        log.len(),
        names.len(),
        t.elapsed().as_secs_f64()
    );
    drop(procs);
    drop(db);
    rt.block_on(async {
        plain.shutdown().await;
        slow.shutdown().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}
