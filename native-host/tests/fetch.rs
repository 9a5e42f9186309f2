//! The fetcher and the crawl loop against a real HTTP server on 127.0.0.1 that misbehaves on
//! purpose: redirect chains and loops, oversized and compressed bodies, charsets, robots.txt,
//! URL variants of one page, and an endless calendar.

use bytes::Bytes;
use forager::crawl::{self, CrawlConfig, Mode};
use forager::fetch::{FetchConfig, FetchError, Fetcher};
use forager::store::{NewUrl, Store};
use http_body_util::Full;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

/// Runs a crawl until it stops by itself (no stop signal, no progress callback).
async fn crawl_to_end(
    store: Store,
    model: &mut forager_classifier::Model,
    config: CrawlConfig,
) -> (crawl::StopReason, crawl::Progress) {
    crawl::run(
        store,
        model.classifier(),
        config,
        std::future::pending::<()>(),
        |_| {},
    )
    .await
    .unwrap()
}

fn page(body: &str) -> String {
    format!("<!DOCTYPE html><html><head><title>t</title></head><body>{body}</body></html>")
}

fn respond(req: &Request<hyper::body::Incoming>) -> Response<Full<Bytes>> {
    let path = req.uri().path().to_owned();
    let html = |s: String| {
        Response::builder()
            .header("content-type", "text/html; charset=utf-8")
            .body(Full::new(Bytes::from(s)))
            .unwrap()
    };
    let redirect = |to: &str| {
        Response::builder()
            .status(302)
            .header("location", to)
            .body(Full::new(Bytes::new()))
            .unwrap()
    };
    match path.as_str() {
        "/robots.txt" => Response::new(Full::new(Bytes::from(
            "User-agent: *\nDisallow: /private/\n",
        ))),
        "/" => html(page(
            r#"<a href="/a.html">a</a> <a href="/redir/1">r</a> <a href="/loop">l</a>
               <a href="/private/secret.html">p</a> <a href="/dir/">d</a>
               <a href="/dir/index.html">d2</a> <a href="/x/../a.html#frag">a2</a>
               <a href="/%7Eb.html">b</a> <a href="/~b.html">b2</a> <a href="/img.png">i</a>
               <a href="/cal/2024/1">calendar</a> <a href="/big">big</a>
               <a rel="nofollow" href="/nofollow.html">n</a>"#,
        )),
        "/a.html" | "/dir/" | "/~b.html" | "/final" => html(page("a page")),
        "/changing" => {
            static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            html(page(&format!("version {n} <a href=\"/a.html\">a</a>")))
        }
        "/redir/1" => redirect("/redir/2"),
        "/redir/2" => redirect("/final"),
        "/loop" => redirect("/loop"),
        "/img.png" => Response::builder()
            .header("content-type", "image/png")
            .body(Full::new(Bytes::from_static(b"\x89PNG")))
            .unwrap(),
        "/big" => html(page(&"word ".repeat(700_000))),
        "/bomb" => {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            gz.write_all(b"<html><body>").unwrap();
            let zeros = vec![b' '; 1 << 20];
            for _ in 0..50 {
                gz.write_all(&zeros).unwrap();
            }
            Response::builder()
                .header("content-type", "text/html")
                .header("content-encoding", "gzip")
                .body(Full::new(Bytes::from(gz.finish().unwrap())))
                .unwrap()
        }
        "/latin1" => Response::builder()
            .header("content-type", "text/html; charset=ISO-8859-1")
            .body(Full::new(Bytes::from_static(b"<p>caf\xe9</p>")))
            .unwrap(),
        p if p.starts_with("/cal/") => {
            let n: u32 = p
                .rsplit('/')
                .next()
                .and_then(|x| x.parse().ok())
                .unwrap_or(1);
            html(page(&format!(r#"<a href="/cal/2024/{}">next</a>"#, n + 1)))
        }
        p if p.starts_with("/private/") || p == "/nofollow.html" => html(page("hidden")),
        _ => Response::builder()
            .status(404)
            .body(Full::new(Bytes::new()))
            .unwrap(),
    }
}

async fn serve() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let svc =
                    hyper::service::service_fn(
                        |req| async move { Ok::<_, Infallible>(respond(&req)) },
                    );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    addr
}

fn fetcher() -> Fetcher {
    Fetcher::new(FetchConfig {
        max_body: 1 << 20,
        total_timeout: Duration::from_secs(10),
        // The test server is on loopback.
        reach: forager::address::Reach {
            allow_private: true,
            ..Default::default()
        },
        ..FetchConfig::default()
    })
    .unwrap()
}

#[tokio::test]
async fn redirects_caps_and_charsets() {
    let base = format!("http://{}", serve().await);
    let f = fetcher();
    let r = f.get(&format!("{base}/redir/1")).await.unwrap();
    assert_eq!(r.final_url, format!("{base}/final"));
    assert_eq!(
        r.redirects,
        vec![format!("{base}/redir/1"), format!("{base}/redir/2")]
    );
    assert!(matches!(
        f.get(&format!("{base}/loop")).await,
        Err(FetchError::Redirect(_))
    ));
    let big = f.get(&format!("{base}/big")).await.unwrap();
    assert!(big.truncated && big.body.len() == 1 << 20);
    let bomb = f.get(&format!("{base}/bomb")).await.unwrap();
    assert!(bomb.truncated, "decompressed size must be capped");
    assert_eq!(bomb.body.len(), 1 << 20);
    let latin = f.get(&format!("{base}/latin1")).await.unwrap();
    assert_eq!(latin.text(), "<p>café</p>");
    let png = f.get(&format!("{base}/img.png")).await.unwrap();
    assert!(!png.is_html());
    assert!(matches!(
        f.get("ftp://127.0.0.1/x").await,
        Err(FetchError::BadUrl(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines)] // one served site, its every rule checked in turn
async fn crawl_obeys_robots_canonicalises_and_escapes_traps() {
    let addr = serve().await;
    let base = format!("http://{addr}");
    let dir = std::env::temp_dir().join(format!("forager-fetch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut store = Store::open(&dir.join("c.db")).unwrap();
    store
        .add_seeds(&[NewUrl {
            url: format!("{base}/"),
            host: "127.0.0.1".into(),
            score: 1.0,
            depth: 0,
            via: None,
            features: None,
            weight: 1.0,
        }])
        .unwrap();
    let mut model = forager_classifier::Model::default();
    let t = model.add_topic(forager_classifier::ROOT, "t", "").unwrap();
    model.add_example(t, "http://e.test/", "a page").unwrap();
    let config = CrawlConfig {
        mode: Mode::Soft,
        max_pages_per_host: 40,
        delay: Duration::ZERO,
        fetch: FetchConfig {
            max_body: 1 << 20,
            ..FetchConfig::default()
        },
        ..CrawlConfig::default()
    };
    let (reason, progress) = crawl_to_end(store, &mut model, config).await;
    assert_eq!(reason, crawl::StopReason::FrontierEmpty);
    let conn = Store::open_read_only(&dir.join("c.db")).unwrap();
    let urls: Vec<(String, i64, Option<String>)> = conn
        .prepare("SELECT url, status, error FROM doc ORDER BY url")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let get = |p: &str| {
        urls.iter()
            .find(|(u, _, _)| u == &format!("{base}{p}"))
            .cloned()
    };
    // Variants of one page are one row.
    assert!(get("/dir/index.html").is_none());
    assert!(get("/%7Eb.html").is_none());
    assert_eq!(get("/~b.html").unwrap().1, 2);
    assert_eq!(get("/a.html").unwrap().1, 2);
    // robots.txt and rel=nofollow.
    assert_eq!(
        get("/private/secret.html").unwrap().2.as_deref(),
        Some("robots")
    );
    assert!(get("/nofollow.html").is_none());
    // Redirects: recorded on the row, and the target is not fetched again.
    let redirects: String = conn
        .query_row(
            "SELECT redirects FROM doc WHERE url = ?1",
            [format!("{base}/redir/1")],
            |r| r.get(0),
        )
        .unwrap();
    assert!(redirects.contains("/redir/2"));
    assert_eq!(get("/final").unwrap().2.as_deref(), Some("redirect-target"));
    assert_eq!(get("/loop").unwrap().2.as_deref(), Some("redirect"));
    assert_eq!(get("/img.png").unwrap().2.as_deref(), Some("not-html"));
    // The endless calendar stops at the host page cap, and the cap is reported.
    assert!(
        progress
            .errors
            .get("trap-host-page-cap")
            .copied()
            .unwrap_or(0)
            > 0
    );
    let fetched: i64 = conn
        .query_row("SELECT count(*) FROM doc WHERE status = 2", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(fetched <= 40, "{fetched}");
    let truncated: i64 = conn
        .query_row(
            "SELECT count(*) FROM doc WHERE error = 'truncated'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(truncated, 1, "/big is stored truncated and marked");
}

/// Maintenance mode revisits fetched pages and tells changed pages from unchanged ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maintenance_mode_detects_changed_pages() {
    let base = format!("http://{}", serve().await);
    let dir = std::env::temp_dir().join(format!("forager-maint-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut store = Store::open(&dir.join("m.db")).unwrap();
    let seed = |p: &str| NewUrl {
        url: format!("{base}{p}"),
        host: "127.0.0.1".into(),
        score: 1.0,
        depth: 0,
        via: None,
        features: None,
        weight: 1.0,
    };
    store
        .add_seeds(&[seed("/changing"), seed("/a.html")])
        .unwrap();
    let model = forager_classifier::Model::default();
    let config = CrawlConfig {
        delay: Duration::ZERO,
        revisit_share: 0.5,
        revisit_after: Duration::ZERO,
        max_time: Some(Duration::from_millis(1500)),
        max_pages_per_host: 100_000,
        concurrency: 2,
        ..CrawlConfig::default()
    };
    let mut model = model;
    let (_, progress) = crawl_to_end(store, &mut model, config).await;
    assert!(progress.revisits > 2, "{progress:?}");
    let conn = Store::open_read_only(&dir.join("m.db")).unwrap();
    let row = |p: &str| -> (i64, i64) {
        conn.query_row(
            "SELECT revisits, changes FROM doc WHERE url = ?1",
            [format!("{base}{p}")],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    };
    let (rc, cc) = row("/changing");
    let (ra, ca) = row("/a.html");
    assert!(
        rc > 0 && cc == rc,
        "changing page: {rc} revisits, {cc} changes"
    );
    assert!(
        ra > 0 && ca == 0,
        "static page: {ra} revisits, {ca} changes"
    );
    assert_eq!(progress.fetched, 2, "revisits are not new pages");
}
