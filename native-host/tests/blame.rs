//! Failures blamed on the right thing (#15 defects 1 and 3, #14 defect 1): a dead proxy pauses
//! the crawl instead of failing its frontier, a host whose robots.txt answers 503 once or whose
//! pages time out is retried as a host with its URLs' tries intact, a stop is prompt even
//! behind a long Crawl-delay, and a crawl database takes one writer only.

use bytes::Bytes;
use forager::crawl::{self, blame::BlameParams, CrawlConfig, Mode, Progress, StopReason};
use forager::store::{NewUrl, Store, StoreError};
use http_body_util::Full;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;

/// How the test site behaves.
#[derive(Clone, Copy, Default)]
struct Site {
    /// robots.txt answers 503 to this many requests, then allows all.
    robots_503: usize,
    /// Crawl-delay in robots.txt, seconds.
    crawl_delay: u32,
    /// Pages never answer (the connection hangs).
    hang: bool,
    /// Every request answers 502, as a forward proxy does for a host it does not know.
    gateway: bool,
}

/// A loopback site of pages `/p/0` … `/p/99`, each linking to the next five; counts requests
/// by path.
struct Server {
    addr: SocketAddr,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

async fn serve(ip: [u8; 4], site: Site) -> Server {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from((ip, 0)))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let hits: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let robots_seen = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (hits, robots_seen) = (h.clone(), robots_seen.clone());
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req: Request<_>| {
                    let (hits, robots_seen) = (hits.clone(), robots_seen.clone());
                    async move {
                        let path = req.uri().path().to_owned();
                        *hits.lock().unwrap().entry(path.clone()).or_default() += 1;
                        Ok::<_, Infallible>(respond(&path, site, &robots_seen).await)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    Server { addr, hits }
}

async fn respond(path: &str, site: Site, robots_seen: &AtomicUsize) -> Response<Full<Bytes>> {
    let text = |status: u16, body: String, ct: &str| {
        Response::builder()
            .status(status)
            .header("content-type", ct)
            .body(Full::new(Bytes::from(body)))
            .unwrap()
    };
    if site.gateway {
        return text(502, "unknown host\n".into(), "text/plain");
    }
    if path == "/robots.txt" {
        if robots_seen.fetch_add(1, Ordering::SeqCst) < site.robots_503 {
            return text(503, "busy".into(), "text/plain");
        }
        let delay = if site.crawl_delay > 0 {
            format!("Crawl-delay: {}\n", site.crawl_delay)
        } else {
            String::new()
        };
        return text(
            200,
            format!("User-agent: *\n{delay}Allow: /\n"),
            "text/plain",
        );
    }
    if site.hang {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
    let Some(i) = path
        .strip_prefix("/p/")
        .and_then(|n| n.parse::<usize>().ok())
    else {
        return text(404, "no".into(), "text/html");
    };
    let links: String = (i + 1..(i + 6).min(100))
        .map(|j| format!("<a href=\"/p/{j}\">star page {j}</a> "))
        .collect();
    let body = format!(
        "<html><head><title>Page {i}</title></head><body><p>telescope galaxy orbit {i}</p>{links}</body></html>"
    );
    text(200, body, "text/html")
}

fn config(proxy: Option<String>, backoff_ms: u64) -> CrawlConfig {
    let mut c = CrawlConfig {
        mode: Mode::Soft,
        concurrency: 4,
        delay: Duration::ZERO,
        progress_every: Duration::from_millis(100),
        blame: BlameParams {
            backoff: Duration::from_millis(backoff_ms),
            give_up: Duration::from_millis(1500),
            ..Default::default()
        },
        ..Default::default()
    };
    c.fetch.proxy = proxy;
    c.fetch.total_timeout = Duration::from_millis(500);
    c.fetch.connect_timeout = Duration::from_millis(500);
    c
}

fn seeded(db: &Path, urls: &[String]) -> Store {
    let mut store = Store::open(db).unwrap();
    let seeds: Vec<NewUrl> = urls
        .iter()
        .map(|u| NewUrl::seed(&forager::canon::parse(u).unwrap()))
        .collect();
    store.add_seeds(&seeds).unwrap();
    store
}

async fn crawl_until(
    store: Store,
    config: CrawlConfig,
    stop: impl std::future::Future<Output = ()>,
) -> (StopReason, Progress) {
    let model = forager::native::starter_model();
    let classifier = model.clone().classifier();
    crawl::run(store, classifier, config, stop, |_| {})
        .await
        .unwrap()
}

/// (status, num_tries, error) of every row.
fn rows(db: &Path) -> Vec<(i64, i64, Option<String>)> {
    let conn = Store::open_read_only(db).unwrap();
    let mut st = conn
        .prepare("SELECT status, num_tries, error FROM doc ORDER BY oid")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn pages(addr: SocketAddr, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("http://{addr}/p/{i}")).collect()
}

fn dead_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_proxy_pauses_the_crawl_and_spends_no_tries() {
    let dir = common::tmp("blame-proxy");
    let db = dir.join("c.db");
    let site = serve([127, 0, 0, 1], Site::default()).await;
    let seeds = pages(site.addr, 20);
    let store = seeded(&db, &seeds);
    let dead = format!("http://127.0.0.1:{}", dead_port());
    let (reason, p) = crawl_until(
        store,
        config(Some(dead.clone()), 100),
        std::future::pending(),
    )
    .await;
    assert_eq!(reason, StopReason::Offline, "{p:?}");
    let why = p.paused.clone().unwrap_or_default();
    assert!(
        why.contains(&dead["http://".len()..]) && why.contains("refuses"),
        "{why}"
    );
    assert_eq!(p.fetched, 0);
    let r = rows(&db);
    assert_eq!(r.len(), 20);
    assert!(
        r.iter().all(|(st, tries, _)| *st == 0 && *tries == 0),
        "every URL waits in the frontier, tries intact: {r:?}"
    );
    // With the way to the web back, the same crawl goes on.
    let (reason, p) = crawl_until(
        Store::open(&db).unwrap(),
        CrawlConfig {
            max_pages: Some(20),
            ..config(None, 100)
        },
        std::future::pending(),
    )
    .await;
    assert_eq!((reason, p.fetched), (StopReason::PageBudget, 20));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_robots_503_defers_the_host_and_fails_no_url() {
    let dir = common::tmp("blame-robots");
    let db = dir.join("c.db");
    let site = serve(
        [127, 0, 0, 1],
        Site {
            robots_503: 1,
            ..Site::default()
        },
    )
    .await;
    let store = seeded(&db, &pages(site.addr, 20));
    let (reason, p) = crawl_until(
        store,
        CrawlConfig {
            max_pages: Some(20),
            ..config(None, 200)
        },
        std::future::pending(),
    )
    .await;
    assert_eq!((reason, p.fetched), (StopReason::PageBudget, 20), "{p:?}");
    assert!(
        p.deferred
            .get("robots-unavailable")
            .is_some_and(|n| *n >= 1),
        "{p:?}"
    );
    let r = rows(&db);
    assert!(
        r.iter()
            .all(|(_, tries, e)| *tries <= 1 && e.as_deref() != Some("robots-unavailable")),
        "{r:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_times_out_waits_as_a_host_with_its_urls_tries_intact() {
    let dir = common::tmp("blame-timeout");
    let db = dir.join("c.db");
    let good = serve([127, 0, 0, 1], Site::default()).await;
    let slow = serve(
        [127, 0, 0, 2],
        Site {
            hang: true,
            ..Site::default()
        },
    )
    .await;
    let mut seeds = pages(slow.addr, 10);
    seeds.extend(pages(good.addr, 10));
    let store = seeded(&db, &seeds);
    let (_, p) = crawl_until(
        store,
        CrawlConfig {
            max_time: Some(Duration::from_millis(2500)),
            ..config(None, 1000)
        },
        std::future::pending(),
    )
    .await;
    assert!(p.fetched >= 10, "the good host was crawled: {p:?}");
    assert!(p.deferred.get("timeout").is_some_and(|n| *n >= 1), "{p:?}");
    let conn = Store::open_read_only(&db).unwrap();
    let slow_rows: Vec<(i64, i64)> = conn
        .prepare("SELECT status, num_tries FROM doc WHERE url LIKE ?1")
        .unwrap()
        .query_map([format!("http://{}/%", slow.addr)], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(slow_rows.len(), 10);
    assert!(slow_rows.iter().all(|r| *r == (0, 0)), "{slow_rows:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_is_prompt_behind_a_crawl_delay_and_a_second_writer_is_refused() {
    let dir = common::tmp("blame-stop");
    let db = dir.join("c.db");
    let site = serve(
        [127, 0, 0, 1],
        Site {
            crawl_delay: 10,
            ..Site::default()
        },
    )
    .await;
    let store = seeded(&db, &pages(site.addr, 20));
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let db2 = db.clone();
    let crawl = tokio::spawn(async move {
        crawl_until(store, config(None, 100), async {
            let _ = stop_rx.await;
        })
        .await
    });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // While the crawl runs, nobody else may write its database.
    match Store::open(&db2) {
        Err(StoreError::Locked(_)) => {}
        other => panic!("a second writer was not refused: {:?}", other.err()),
    }
    let asked = Instant::now();
    stop_tx.send(()).unwrap();
    let (reason, _) = crawl.await.unwrap();
    let took = asked.elapsed();
    assert_eq!(reason, StopReason::Requested);
    assert!(took < Duration::from_secs(5), "stop took {took:?}");
    // Nothing is left checked out, and a new crawl may open the database at once.
    let r = rows(&db);
    assert!(r.iter().all(|(st, _, _)| *st != 1), "{r:?}");
    let (_, _) = crawl_until(
        Store::open(&db).unwrap(),
        CrawlConfig {
            max_time: Some(Duration::from_millis(1500)),
            ..config(None, 100)
        },
        std::future::pending(),
    )
    .await;
    // No page was fetched twice across the two crawls.
    let hits = site.hits.lock().unwrap();
    let twice: Vec<_> = hits
        .iter()
        .filter(|(p, n)| p.starts_with("/p/") && **n > 1)
        .collect();
    assert!(twice.is_empty(), "{twice:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_does_not_exist_is_given_up_at_once_through_a_proxy_or_by_its_name() {
    let dir = common::tmp("blame-dead");
    // Through a proxy that answers 502 for it (serve-web and nginx do for unknown hosts).
    let proxy = serve(
        [127, 0, 0, 1],
        Site {
            gateway: true,
            ..Site::default()
        },
    )
    .await;
    let db = dir.join("proxied.db");
    let urls: Vec<String> = (0..30)
        .map(|i| format!("http://nowhere.test/p/{i}"))
        .collect();
    let t = Instant::now();
    let (reason, p) = crawl_until(
        seeded(&db, &urls),
        // Backoff as by default: a dead host must not wait for it.
        config(Some(format!("http://{}", proxy.addr)), 10_000),
        std::future::pending(),
    )
    .await;
    let took = t.elapsed();
    assert_eq!(reason, StopReason::FrontierEmpty, "{p:?}");
    assert!(took < Duration::from_secs(5), "ended in {took:?}");
    assert!(p.idle_secs < 1.0, "no idle tail: {p:?}");
    let r = rows(&db);
    assert!(
        r.iter()
            .all(|(st, tries, e)| *st == 3 && *tries == 1 && e.as_deref() == Some("unknown-host")),
        "every URL given up at once as an unknown host: {r:?}"
    );
    // robots.txt asked twice (one confirmation), nothing else.
    let asked: usize = proxy.hits.lock().unwrap().values().sum();
    assert_eq!(asked, 2, "{:?}", proxy.hits.lock().unwrap());
    assert_eq!(p.failing_hosts, 1);
    assert_eq!(p.failing[0].host, "nowhere.test");
    assert!(p.failing[0].why.contains("unknown host"), "{:?}", p.failing);
    let said = crawl::words::stop_in_words(reason, &p, 0);
    assert!(
        said.contains("nowhere.test: unknown host") && said.contains("http://nowhere.test/p/"),
        "{said}"
    );

    // A name that does not resolve (RFC 6761: .invalid never does).
    let db = dir.join("dns.db");
    let t = Instant::now();
    let (reason, p) = crawl_until(
        seeded(&db, &["http://bandwith-archive.invalid/a".to_owned()]),
        config(None, 10_000),
        std::future::pending(),
    )
    .await;
    assert_eq!(reason, StopReason::FrontierEmpty, "{p:?}");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert_eq!(rows(&db)[0].2.as_deref(), Some("unknown-host"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_a_failing_host_is_named_and_not_counted_as_crawling() {
    let dir = common::tmp("blame-idle");
    let db = dir.join("c.db");
    let refused = format!("http://127.0.0.1:{}/p/0", dead_port());
    // A host that answers (one page, no links): the crawl has reached the web, so the refused
    // host's failures may pass and are waited for.
    let site = serve([127, 0, 0, 3], Site::default()).await;
    let answers = format!("http://{}/p/99", site.addr);
    let mut waits = Vec::new();
    let model = forager::native::starter_model();
    let (reason, p) = crawl::run(
        seeded(&db, &[refused, answers]),
        model.clone().classifier(),
        config(None, 300),
        std::future::pending(),
        |p| waits.extend(p.waiting.clone()),
    )
    .await
    .unwrap();
    assert_eq!(reason, StopReason::FrontierEmpty, "{p:?}");
    assert!(
        waits.iter().any(|w| w.hosts == 1 && w.secs > 0.0),
        "the progress said what it waits for: {waits:?}"
    );
    // Backoffs of 0.3 + 0.6 + 1.2 s with nothing else to do.
    assert!(
        p.idle_secs >= 1.5,
        "idle {:.2} s of {:.2}",
        p.idle_secs,
        p.elapsed
    );
    assert!(p.idle_secs <= p.elapsed, "{p:?}");
    assert!(
        p.failing.iter().any(|t| t.why.contains("refused")),
        "{:?}",
        p.failing
    );
}

/// A loopback server that accepts connections and never answers.
async fn silent() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.2:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeds_whose_hosts_all_fail_end_the_crawl_at_once_naming_host_and_reason() {
    let dir = common::tmp("blame-all-fail");
    let db = dir.join("c.db");
    let refused = format!("http://127.0.0.1:{}/p/0", dead_port());
    let quiet = silent().await;
    let timeout = format!("http://{quiet}/p/0");
    // The default 10 s backoff: waiting for it would take 10 s and more.
    let t = Instant::now();
    let (reason, p) = crawl_until(
        seeded(&db, &[refused, timeout]),
        config(None, 10_000),
        std::future::pending(),
    )
    .await;
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(reason, StopReason::FrontierEmpty, "{p:?}");
    assert!(secs < 5.0, "the crawl took {secs:.1} s: {p:?}");
    assert_eq!(p.fetched, 0);
    let why = |host: &str| {
        (p.failing.iter())
            .find(|t| t.host == host)
            .map(|t| t.why.clone())
            .unwrap_or_default()
    };
    assert!(why("127.0.0.1").contains("refused"), "{:?}", p.failing);
    assert!(why("127.0.0.2").contains("in time"), "{:?}", p.failing);
    let words = crawl::words::stop_in_words(reason, &p, 0);
    assert!(
        words.contains("refused") && words.contains(&quiet.to_string()),
        "{words}"
    );
    // Nothing is lost: both seeds wait in the frontier for the next start, tries intact.
    assert_eq!(rows(&db), vec![(0, 0, None), (0, 0, None)]);
}
