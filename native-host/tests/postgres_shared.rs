//! One model, one distiller, many fetchers (issue #26) on a real PostgreSQL server
//! (scripts/pg-cluster.sh; `FORAGER_TEST_PG`): two workers crawl a generated web through one
//! database. A good-topic change and "not relevant" marks saved mid-crawl reach both workers'
//! scoring, and the crawl's periodic job — re-judging, apprentice training on every worker's
//! evidence, the distiller — runs on one worker at a time.

use forager::crawl::shared::{self, JobSettings, SharedApprentice};
use forager::crawl::{CrawlConfig, CrawlEvent, Judge, Mode, Progress, StopReason};
use forager::miniweb::MiniWeb;
use forager::store::postgres::{testing, PgStore};
use forager::store::{CrawlDb, FetchedPage, Locator, SharedDb};
use forager_classifier::{Model, Scratch};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

mod common;

/// A worker crawling: its end, and the pages it recorded (its own events, in order).
struct Worker {
    done: JoinHandle<(StopReason, Progress)>,
    pages: JoinHandle<Vec<FetchedPage>>,
}

/// Starts worker `name` on the shared crawl at `url`: soft focus through the mini-web's
/// proxy, a politeness delay that makes the crawl last some seconds, the follower looking
/// every `poll` and offering the job every `job_every`.
fn start(url: &str, name: &str, model: &Model, proxy: &str, every: (Duration, Duration)) -> Worker {
    let mut store = PgStore::open(url).unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::channel(10_000);
    let mut config = CrawlConfig {
        worker: name.to_owned(),
        mode: Mode::Soft,
        concurrency: 4,
        delay: Duration::from_millis(60),
        max_pages_per_host: 40,
        fetch: forager::fetch::FetchConfig {
            proxy: Some(proxy.to_owned()),
            ..Default::default()
        },
        query: Arc::new(forager::crawl::Query::from_model(model)),
        events: Some(tx),
        ..Default::default()
    };
    let asked = shared::Asked::default();
    shared::join(
        Locator::Postgres(url.into()),
        &mut store,
        &mut config,
        None,
        &asked,
    )
    .unwrap();
    let s = config
        .shared
        .as_mut()
        .expect("a PostgreSQL crawl is shared");
    (s.poll, s.job_every) = every;
    let classifier = model.clone().classifier();
    let done = tokio::spawn(async move {
        let never = std::future::pending::<()>();
        forager::crawl::run(store, classifier, config, never, |_| {})
            .await
            .unwrap()
    });
    let pages = tokio::spawn(async move {
        let mut pages = Vec::new();
        while let Some(e) = rx.recv().await {
            if let CrawlEvent::Pages(p) = e {
                pages.extend(p);
            }
        }
        pages
    });
    Worker { done, pages }
}

/// Prepares the crawl at `url`: the model, the seeds, and the job's settings.
fn prepare(url: &str, model: &Model, seeds: &[url::Url], settings: &JobSettings) -> PgStore {
    let mut door = PgStore::open(url).unwrap();
    let start = forager::crawl::Start {
        seeds: seeds.to_vec(),
        ..Default::default()
    };
    forager::crawl::prepare(&mut door, model, &start).unwrap();
    let json = serde_json::to_string(settings).unwrap();
    SharedDb::set_job_value(&mut door, "settings", &json).unwrap();
    door
}

/// Waits (at most a minute) until `ready` holds.
async fn until(what: &str, mut ready: impl FnMut() -> bool) {
    let t = Instant::now();
    while !ready() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "waited a minute: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Workers w1 and w2 on the crawl `door` opened; w2 joins once the frontier spans hosts
/// (a worker that finds every host with work leased to another ends).
async fn two_workers(
    door: &mut PgStore,
    url: &str,
    model: &Model,
    proxy: &str,
    every: (Duration, Duration),
) -> Vec<Worker> {
    let first = start(url, "w1", model, proxy, every);
    until("w1's first pages", || door.fetched().unwrap() >= 20).await;
    vec![first, start(url, "w2", model, proxy, every)]
}

/// R of each page under `judge`, from its stored text.
fn judged(door: &PgStore, judge: &Judge, urls: &BTreeSet<String>) -> HashMap<String, f64> {
    let reader = door.reader();
    let mut scratch = Scratch::new();
    (urls.iter())
        .filter_map(|u| {
            let text = reader.fetched_text(u).unwrap()?;
            Some((u.clone(), judge.judge(u, &text, &mut scratch).relevance))
        })
        .collect()
}

/// The model after the user's change: other good topics, and the first 40 pages not fetched
/// yet marked not relevant (returned too).
fn changed(
    door: &PgStore,
    web: &MiniWeb,
    model: &Model,
    good: &[String],
) -> (Model, BTreeSet<String>) {
    let fetched: BTreeSet<String> = door.fetched_urls().unwrap().into_iter().collect();
    let marked: BTreeSet<String> = (web.labels.keys())
        .filter(|u| !fetched.contains(*u))
        .take(40)
        .cloned()
        .collect();
    let mut changed = model.clone();
    changed.set_good_paths(good).unwrap();
    for u in &marked {
        let text = forager::parse::page_text(&web.read_page(u).unwrap()).text;
        changed.mark_not_relevant(u, &text).unwrap();
    }
    (changed, marked)
}

/// Worker `i` recorded `pages` judged by the old model up to the change (sequence numbers
/// `seqs.0`), by the new one after every worker had time to reload (after `seqs.1`).
fn judged_as_they_should(
    i: usize,
    pages: &[FetchedPage],
    seqs: (i64, i64),
    (old, new): (&HashMap<String, f64>, &HashMap<String, f64>),
    marked: &BTreeSet<String>,
) {
    let (before, settled) = seqs;
    let early: Vec<_> = pages.iter().filter(|p| p.seq <= before).collect();
    let late: Vec<_> = pages.iter().filter(|p| p.seq > settled).collect();
    let near = |p: &FetchedPage, r: &HashMap<String, f64>| {
        r.get(&p.url).is_none_or(|r| (r - p.relevance).abs() < 1e-9)
    };
    assert!(
        early.len() >= 10 && late.len() >= 10,
        "worker {i}: {} early, {} late",
        early.len(),
        late.len()
    );
    let stale: Vec<_> = early.iter().filter(|p| !near(p, old)).collect();
    assert!(
        stale.is_empty(),
        "worker {i} judged with another model before: {stale:?}"
    );
    let stale: Vec<_> = late.iter().filter(|p| !near(p, new)).collect();
    assert!(
        stale.is_empty(),
        "worker {i} still judges with the old model: {stale:?}"
    );
    let moved = (late.iter())
        .filter(|p| (old[&p.url] - new[&p.url]).abs() > 1e-6)
        .count();
    // (The marks teach the background: nearly every page's R moves a little.)
    assert!(
        moved >= 5,
        "worker {i}: the change moved only {moved} late pages"
    );
    let zero = (late.iter()).filter(|p| marked.contains(&p.url)).count();
    eprintln!(
        "worker {i}: {} early, {} late pages, {moved} moved, {zero} marked",
        early.len(),
        late.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_good_topic_change_and_marks_reach_both_workers_and_the_job_rejudges_the_rest() {
    let Some(server) = testing::server() else {
        return;
    };
    let (web, model, seeds) = common::astronomy_web_and_model();
    let other = (web.tasks.iter()).find(|t| t.name != "astronomy").unwrap();
    let site = forager::serve::start(web.clone(), ([127, 0, 0, 1], 0).into())
        .await
        .unwrap();
    let db = testing::TestDb::create(&server, "shared-model");
    let mut door = prepare(db.url(), &model, &seeds, &JobSettings::default());
    let every = (Duration::from_millis(100), Duration::from_millis(300));
    let workers = two_workers(&mut door, db.url(), &model, &site.proxy_url(), every).await;
    until("150 pages and a first job", || {
        door.fetched().unwrap() >= 150 && !door.job_runs().unwrap().is_empty()
    })
    .await;

    let (changed, marked) = changed(&door, &web, &model, &other.good);
    let before = door.reader().last_fetch_seq().unwrap();
    door.save_taxonomy(&changed).unwrap();
    let version = door.model_since(-1).unwrap().unwrap().version;
    // A worker takes it at its next look; pages in flight were judged before.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let settled = door.reader().last_fetch_seq().unwrap();

    let mut all: Vec<Vec<FetchedPage>> = Vec::new();
    for w in workers {
        let (reason, _) = w.done.await.unwrap();
        assert_eq!(reason, StopReason::FrontierEmpty);
        all.push(w.pages.await.unwrap());
    }
    let urls: BTreeSet<String> = all.iter().flatten().map(|p| p.url.clone()).collect();
    let old = judged(&door, &Judge::of(&mut model.clone()), &urls);
    let new = judged(&door, &Judge::of(&mut changed.clone()), &urls);
    for (i, pages) in all.iter().enumerate() {
        judged_as_they_should(i, pages, (before, settled), (&old, &new), &marked);
    }
    let marked_late: Vec<_> = (all.iter().flatten())
        .filter(|p| p.seq > settled && marked.contains(&p.url))
        .collect();
    assert!(marked_late.len() >= 5, "{marked_late:?}");
    assert!(
        marked_late.iter().all(|p| p.relevance == 0.0),
        "{marked_late:?}"
    );
    // The job judged the pages fetched before the change again with the new model, and once
    // more after the workers had time to reload (run here if the crawl ended first).
    let now = shared::Timing {
        gap: Duration::ZERO,
        grace: Duration::ZERO,
    };
    shared::run_job(&mut door, "test", Mode::Soft, now).unwrap();
    let stored = door.reader().fetched_pages().unwrap();
    let wrong: Vec<_> = (stored.iter())
        .filter(|p| {
            new.get(&p.url)
                .is_some_and(|r| (r - p.relevance).abs() > 1e-9)
        })
        .map(|p| &p.url)
        .collect();
    assert!(wrong.is_empty(), "not judged again: {wrong:?}");
    let runs = door.job_runs().unwrap();
    let by_worker = (runs.iter()).any(|r| {
        let did = r.did.as_deref().unwrap_or("");
        let with = format!("with model version {version}");
        r.worker.starts_with('w') && did.contains("re-judged") && did.contains(&with)
    });
    assert!(by_worker, "a worker's job judged the pages again: {runs:?}");
    site.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_job_runs_on_one_worker_at_a_time_and_learns_from_every_worker() {
    let Some(server) = testing::server() else {
        return;
    };
    let (web, model, seeds) = common::astronomy_web_and_model();
    let site = forager::serve::start(web, ([127, 0, 0, 1], 0).into())
        .await
        .unwrap();
    let db = testing::TestDb::create(&server, "shared-job");
    let settings = JobSettings {
        distill_every: Some(100),
        hub_feedback: Some(5),
        apprentice: Some(SharedApprentice {
            warmup: 100,
            retrain_every: 100,
            d_max: forager_classifier::apprentice::DEFAULT_D_MAX,
        }),
        crawl: None,
    };
    let mut door = prepare(db.url(), &model, &seeds, &settings);
    let every = (Duration::from_millis(100), Duration::from_millis(200));
    let workers = two_workers(&mut door, db.url(), &model, &site.proxy_url(), every).await;
    let mut done = Vec::new();
    for w in workers {
        let (reason, progress) = w.done.await.unwrap();
        assert_eq!(reason, StopReason::FrontierEmpty);
        done.push((progress, w.pages.await.unwrap()));
    }
    // A follower may be in a run still: it ends within its turn.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let runs = door.job_runs().unwrap();
    let ended: Vec<_> = runs.iter().filter(|r| r.ended_at.is_some()).collect();
    assert!(ended.len() >= 3, "{runs:?}");
    for w in runs.windows(2) {
        let end = w[0].ended_at.expect("a run ended before the next began");
        assert!(w[1].started_at >= end, "two runs at once: {w:?}");
    }
    let did = |what: &str| {
        ended
            .iter()
            .any(|r| r.did.as_deref().unwrap_or("").contains(what))
    };
    assert!(did("distilled") && did("apprentice version"), "{runs:?}");
    assert!(!door
        .reader()
        .ranked(forager::store::Ranking::Hubs, Some(5))
        .unwrap()
        .is_empty());

    // Each worker's own loop learned only from what it recorded and never published; the
    // shared apprentice learns from every worker's evidence (trained again here on all of it).
    let own: Vec<u64> = done
        .iter()
        .map(|(p, _)| p.apprentice_instances.iter().sum())
        .collect();
    assert!(done.iter().all(|(p, _)| p.apprentice_retrains == 0));
    SharedDb::set_job_value(&mut door, "trained_at", "0").unwrap();
    let now = shared::Timing {
        gap: Duration::ZERO,
        grace: Duration::ZERO,
    };
    shared::run_job(&mut door, "test", Mode::Soft, now).unwrap();
    let evidence = door.apprentice_evidence().unwrap().len() as u64;
    let ap = door.apprentice_since(-1).unwrap().expect("published").value;
    let learned: u64 = ap.instances().iter().sum();
    assert_eq!(learned, evidence);
    assert!(
        own.iter().all(|n| *n > 0 && *n < learned),
        "own {own:?}, shared {learned}"
    );
    assert!(ap.measured_trust().is_some());
    // Learned run after run from what was new each time, it holds the counts of one full read
    // (its trust weighs its last predictions instead); with nothing new, a run reads nothing.
    let full = shared::trained_with_trust(door.apprentice_evidence().unwrap());
    assert_eq!(ap.to_bytes(), full.to_bytes());
    SharedDb::set_job_value(&mut door, "trained_at", "0").unwrap();
    let did = shared::run_job(&mut door, "test", Mode::Soft, now).unwrap();
    let did = did.unwrap_or_default();
    assert!(did.contains("learned 0 new instances"), "{did}");

    status_rates_each_worker(db.url(), &done);
    site.shutdown().await;
}

/// `forager status` rates each worker by the pages it recorded (`done`: each worker's end and
/// pages, w1 first).
fn status_rates_each_worker(url: &str, done: &[(Progress, Vec<FetchedPage>)]) {
    // `forager status` rates each worker by the pages it recorded.
    let status: serde_json::Value = serde_json::from_str(&common::run(
        common::forager().args(["status", url, "--json"]),
    ))
    .unwrap();
    for (i, (_, pages)) in done.iter().enumerate() {
        let name = format!("w{}", i + 1);
        let row = (status["workers"].as_array().unwrap().iter())
            .find(|w| w["name"] == name.as_str())
            .unwrap_or_else(|| panic!("{name} in {status}"));
        assert_eq!(row["recorded"], pages.len(), "{row}");
        assert!(row["per_second"].as_f64().unwrap() > 0.0, "{row}");
        assert_eq!(row["hosts"], 0, "hosts given back at the end: {row}");
    }
    assert!(status["job"]["runs"].as_u64().unwrap() >= 3, "{status}");
}

#[test]
fn a_worker_joins_as_the_crawl_was_started_and_contradicting_options_are_refused() {
    use shared::{Asked, CrawlWide};
    let Some(server) = testing::server() else {
        return;
    };
    let db = testing::TestDb::create(&server, "crawl-wide");
    let store = |wide: CrawlWide| {
        let settings = JobSettings {
            crawl: Some(wide),
            ..Default::default()
        };
        let mut door = PgStore::open(db.url()).unwrap();
        let json = serde_json::to_string(&settings).unwrap();
        SharedDb::set_job_value(&mut door, "settings", &json).unwrap();
    };
    let started = CrawlConfig {
        mode: Mode::Hard,
        max_pages_per_host: 7,
        template_weight: 0.5,
        ..Default::default()
    };
    let join = |asked: Asked| {
        let mut door = PgStore::open(db.url()).unwrap();
        let mut config = CrawlConfig::default();
        let at = Locator::Postgres(db.url().into());
        shared::join(at, &mut door, &mut config, None, &asked).map(|_| config)
    };
    store(CrawlWide::of(&started, true));
    let c = join(Asked::default()).unwrap();
    assert_eq!(
        (c.mode, c.max_pages_per_host, c.template_weight),
        (Mode::Hard, 7, 0.5)
    );
    assert!(c.shared.expect("shared").uncapped);
    let same = Asked {
        uncapped: true,
        max_pages_per_host: Some(7),
    };
    assert!(join(same).is_ok(), "the crawl's own settings, given again");
    let other_cap = Asked {
        max_pages_per_host: Some(9),
        ..Default::default()
    };
    let e = join(other_cap).unwrap_err().to_string();
    assert!(
        e.contains("--max-pages-per-host 9") && e.contains("at most 7"),
        "{e}"
    );
    store(CrawlWide::of(&started, false));
    let uncapped = Asked {
        uncapped: true,
        ..Default::default()
    };
    let e = join(uncapped).unwrap_err().to_string();
    assert!(e.contains("--uncapped"), "{e}");
    // The crawl that starts a shared crawl cannot learn an open world in one process.
    let mut door = PgStore::open(db.url()).unwrap();
    let mut config = CrawlConfig {
        open_world: Some(forager::crawl::OpenWorldConfig::new(Model::default())),
        ..Default::default()
    };
    let at = Locator::Postgres(db.url().into());
    let start = JobSettings::default();
    let e = shared::join(at, &mut door, &mut config, Some(&start), &Asked::default());
    assert!(e.unwrap_err().to_string().contains("--open-world"));
}

#[test]
fn a_worker_joining_an_uncapped_crawl_judges_every_word_as_the_crawl_does() {
    let Some(server) = testing::server() else {
        return;
    };
    let dir = common::tmp("postgres-uncapped");
    let web = dir.join("web");
    common::run(common::forager().args(["gen-web", "--out"]).arg(&web));
    let db = testing::TestDb::create(&server, "uncapped");
    common::run(
        common::forager()
            .args([
                "crawl",
                "--task",
                "astronomy",
                "--pages",
                "20",
                "--uncapped",
            ])
            .args(["--mode", "hard", "--max-pages-per-host", "50", "--web"])
            .arg(&web)
            .args(["--db", db.url()]),
    );
    let worker = |more: &[&str]| {
        let mut w = common::forager();
        w.args(["worker", "--db", db.url(), "--pages", "45", "--delay", "0"]);
        w.args(more).output().unwrap()
    };
    let out = worker(&["--max-pages-per-host", "9"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("--max-pages-per-host 9") && err.contains("at most 50"),
        "{err}"
    );
    let site = common::ServeWeb::start(&web);
    let out = worker(&["--proxy", &format!("http://127.0.0.1:{}", site.1)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("(hard focus, every word counted)"), "{err}");
    // Every page the worker recorded was judged as the crawl judges: every word counted.
    let pg = PgStore::open(db.url()).unwrap();
    let mut model = Model::from_bytes(&pg.model_bytes().unwrap().unwrap()).unwrap();
    let (uncapped, capped) = (model.uncapped_classifier(), model.classifier());
    let log = pg.fetched_urls().unwrap();
    assert!(log.len() > 30, "the worker crawled: {}", log.len());
    let by_worker: BTreeSet<&String> = log[20..].iter().collect();
    let reader = pg.reader();
    let relevance: HashMap<String, f64> = (reader.latest_pages(1000).unwrap().into_iter())
        .map(|p| (p.url, p.relevance))
        .collect();
    let mut scratch = Scratch::default();
    let (mut checked, mut differ) = (0, 0);
    for page in reader.fetched_texts(None, 1000).unwrap() {
        let Some(text) = page
            .text
            .as_deref()
            .filter(|_| by_worker.contains(&page.url))
        else {
            continue;
        };
        let r = relevance[&page.url];
        let u = uncapped.classify(text, &mut scratch).relevance;
        let c = capped.classify(text, &mut scratch).relevance;
        assert!(
            (r - u).abs() < 1e-9,
            "{}: stored {r}, uncapped {u}, capped {c}",
            page.url
        );
        checked += 1;
        differ += usize::from((c - u).abs() > 1e-6);
    }
    assert!(
        checked > 5 && differ > 0,
        "{checked} checked, {differ} differ"
    );
    drop(site);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The job's apprentice training on `n` synthetic instances, full read against incremental
/// (1,000 new instances), alternated: `cargo test --release --test postgres_shared -- --ignored
/// --nocapture training_cost`.
#[test]
#[ignore = "a measurement: prints the job's training time at 10k and 100k instances"]
fn training_cost_full_read_against_incremental() {
    let Some(server) = testing::server() else {
        return;
    };
    println!("| instances | full read + train (old) | incremental, 1,000 new |");
    println!("|---:|---:|---:|");
    for n in [10_000_i64, 100_000] {
        let db = testing::TestDb::create(&server, &format!("cost{n}"));
        let mut door = PgStore::open(db.url()).unwrap();
        let m = n / 10;
        let links = |from: i64, to: i64| {
            format!(
                "WITH x AS (INSERT INTO link(oid_src, oid_dst, sid_src, sid_dst, features)
                   SELECT i / 10 + 1, (i * 7919) % {m} + 1, 1, 1,
                     (SELECT string_agg(int4send(((i * k * 2654435761) % 60000)::int4), ''::bytea)
                      FROM generate_series(1, 20) k)
                   FROM generate_series({from}::int8, {to}::int8) i ON CONFLICT DO NOTHING RETURNING 1)
                 SELECT count(*) FROM x"
            )
        };
        testing::number(
            db.url(),
            &format!(
                "WITH s AS (INSERT INTO server(host) VALUES('s.test') RETURNING sid),
                 d AS (INSERT INTO doc(url, sid, rnd, status, relevance, first_fetched_at)
                   SELECT 'http://s.test/' || i, 1, i, 2, random(), 1
                   FROM s, generate_series(1, {m}) i RETURNING 1)
                 SELECT count(*) FROM d"
            ),
        );
        let made = testing::number(db.url(), &links(0, n - 1));
        let t = shared::learn(&door, "x").unwrap();
        let v = door.publish_apprentice(&t.apprentice).unwrap();
        shared::remember(&mut door, t, v).unwrap();
        testing::number(db.url(), &links(n * 10, n * 10 + 999));
        let (mut full, mut inc) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            let t0 = Instant::now();
            let ap = shared::trained_with_trust(door.apprentice_evidence().unwrap());
            full.push(t0.elapsed().as_secs_f64());
            let t0 = Instant::now();
            let t = shared::learn(&door, "x").unwrap();
            inc.push(t0.elapsed().as_secs_f64());
            assert!(t.incremental && t.read == 1000, "{} read", t.read);
            assert_eq!(t.apprentice.to_bytes(), ap.to_bytes());
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[1] * 1000.0
        };
        println!(
            "| {made} | {:.0} ms | {:.1} ms |",
            median(&mut full),
            median(&mut inc)
        );
    }
}
