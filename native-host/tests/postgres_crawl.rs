//! Crawls on a real PostgreSQL server (scripts/pg-cluster.sh; `FORAGER_TEST_PG`): a crawl of a
//! small generated web fetches the same pages on PostgreSQL as on SQLite, and three crawls
//! sharing one PostgreSQL database fetch that set between them, each page once.

use forager::crawl::{CrawlConfig, Mode, StopReason};
use forager::store::postgres::{testing, PgStore};
use forager::store::{CrawlDb, Store};
use forager_classifier::Model;
use std::collections::BTreeSet;
use std::sync::Arc;

mod common;

/// The per-host page cap: it stops the generated web's calendar spider trap (an endless
/// chain of months), the only host that reaches it. Which months a crawl fetches depends on
/// fetch order, so sets are compared without the trap's host.
const HOST_CAP: u64 = 100;

/// The trap's host.
const TRAP: &str = "http://events-calendar.test/";

/// The crawl's settings: soft focus (it never prunes: a finished crawl fetched every page it
/// can reach), through the mini-web's proxy, no politeness delay.
fn config(model: &Model, proxy: &str) -> CrawlConfig {
    CrawlConfig {
        mode: Mode::Soft,
        delay: std::time::Duration::ZERO,
        fetch: forager::fetch::FetchConfig {
            proxy: Some(proxy.to_owned()),
            ..Default::default()
        },
        query: Arc::new(forager::crawl::Query::from_model(model)),
        max_pages_per_host: HOST_CAP,
        ..Default::default()
    }
}

/// Prepares `store` with the model and seeds and crawls it until the frontier is dry; returns
/// the pages fetched in this crawl, in fetch order as the store recorded it.
async fn crawl<S: CrawlDb>(
    mut store: S,
    model: &Model,
    seeds: &[url::Url],
    proxy: &str,
) -> StopReason {
    let start = forager::crawl::Start {
        seeds: seeds.to_vec(),
        more_from: Vec::new(),
        retry_failed: false,
    };
    forager::crawl::prepare(&mut store, model, &start).unwrap();
    let classifier = model.clone().classifier();
    let (reason, _) = forager::crawl::run(
        store,
        classifier,
        config(model, proxy),
        std::future::pending::<()>(),
        |_| {},
    )
    .await
    .unwrap();
    reason
}

/// Asserts that `got` is the SQLite crawl's set `want`, showing the difference if not.
fn same(got: &BTreeSet<String>, want: &BTreeSet<String>, who: &str, workers: usize) {
    let trapped = |s: &BTreeSet<String>| s.iter().filter(|u| u.starts_with(TRAP)).count() as u64;
    assert_eq!(trapped(want), HOST_CAP, "the calendar trap is capped");
    // The cap is counted by each crawling process.
    assert!(
        (HOST_CAP..=workers as u64 * HOST_CAP).contains(&trapped(got)),
        "{who}: {}",
        trapped(got)
    );
    let (got, want): (BTreeSet<_>, BTreeSet<_>) = (
        got.iter().filter(|u| !u.starts_with(TRAP)).collect(),
        want.iter().filter(|u| !u.starts_with(TRAP)).collect(),
    );
    let missing: Vec<_> = want.difference(&got).take(10).collect();
    let extra: Vec<_> = got.difference(&want).take(10).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{who} fetched {} pages, the SQLite crawl {}; not fetched: {missing:?}; fetched only here: {extra:?}",
        got.len(),
        want.len()
    );
    assert!(
        want.len() > 500,
        "a small web, crawled whole: {}",
        want.len()
    );
}

/// Opens the finished crawl's database again, waiting a few seconds for its writer lock. A
/// fresh-clone CI run once found the lock still held just after `crawl::run` returned. The likely
/// holder: the other test of this file spawns `forager` processes, and a child holds a copy of
/// every open descriptor (the lock file's too) between its fork and its exec.
fn reopen(path: &std::path::Path) -> Store {
    let start = std::time::Instant::now();
    loop {
        match Store::open(path) {
            Err(forager::store::StoreError::Locked(_)) if start.elapsed().as_secs() < 10 => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            other => return other.unwrap(),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_on_postgres_fetches_what_the_sqlite_crawl_fetches_and_three_share_it() {
    let Some(server) = testing::server() else {
        return;
    };
    let (web, model, seeds) = common::astronomy_web_and_model();
    let site = forager::serve::start(web, ([127, 0, 0, 1], 0).into())
        .await
        .unwrap();
    let proxy = site.proxy_url();

    let dir = common::tmp("postgres-crawl");
    let lite = Store::open(&dir.join("crawl.db")).unwrap();
    let reason = crawl(lite, &model, &seeds, &proxy).await;
    assert_eq!(reason, StopReason::FrontierEmpty);
    let lite = reopen(&dir.join("crawl.db"));
    let want: BTreeSet<String> = lite.fetched_urls().unwrap().into_iter().collect();

    let one = testing::TestDb::create(&server, "crawl-one");
    let reason = crawl(PgStore::open(one.url()).unwrap(), &model, &seeds, &proxy).await;
    assert_eq!(reason, StopReason::FrontierEmpty);
    let pg = PgStore::open(one.url()).unwrap();
    let log = pg.fetched_urls().unwrap();
    let got: BTreeSet<String> = log.iter().cloned().collect();
    assert_eq!(got.len(), log.len(), "a page fetched twice");
    same(&got, &want, "the PostgreSQL crawl", 1);
    assert_eq!(pg.given_up().unwrap(), lite.given_up().unwrap());

    // Three crawls on one database: disjoint checkouts, the same set between them.
    let shared = testing::TestDb::create(&server, "crawl-three");
    let crawls: Vec<_> = (0..3)
        .map(|_| {
            let (store, model, seeds, proxy) = (
                PgStore::open(shared.url()).unwrap(),
                model.clone(),
                seeds.clone(),
                proxy.clone(),
            );
            tokio::spawn(async move { crawl(store, &model, &seeds, &proxy).await })
        })
        .collect();
    for c in crawls {
        c.await.unwrap();
    }
    let pg = PgStore::open(shared.url()).unwrap();
    let log = pg.fetched_urls().unwrap();
    let got: BTreeSet<String> = log.iter().cloned().collect();
    assert_eq!(got.len(), log.len(), "three crawls fetched a page twice");
    same(&got, &want, "three crawls on one database", 3);
    assert_eq!(pg.frontier_len().unwrap(), 0);
    site.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn forager_crawl_and_status_take_a_postgres_url() {
    let Some(server) = testing::server() else {
        return;
    };
    let dir = common::tmp("postgres-cli");
    let web = dir.join("web");
    common::run(common::forager().args(["gen-web", "--out"]).arg(&web));
    let db = testing::TestDb::create(&server, "cli");
    let crawl = |pages: &str| {
        common::run(
            common::forager()
                .args(["crawl", "--task", "astronomy", "--pages", pages, "--web"])
                .arg(&web)
                .args(["--db", db.url()]),
        )
    };
    crawl("60");
    let status = |db: &str| -> serde_json::Value {
        serde_json::from_str(&common::run(
            common::forager().args(["status", db, "--json"]),
        ))
        .unwrap()
    };
    let s = status(db.url());
    assert_eq!(s["fetched"], 60, "{s}");
    assert!(s["frontier"].as_i64().unwrap() > 0, "{s}");
    // A second run resumes the crawl on the server: the page budget counts across runs.
    crawl("90");
    assert_eq!(status(db.url())["fetched"], 90);
    let pg = PgStore::open(db.url()).unwrap();
    let log = pg.fetched_urls().unwrap();
    let set: BTreeSet<&String> = log.iter().collect();
    assert_eq!((log.len(), set.len()), (90, 90), "a page fetched twice");
    let _ = std::fs::remove_dir_all(&dir);
}
