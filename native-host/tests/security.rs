//! Hostile pages cannot steer the crawler (#15 defects 6, 7, 8): links and redirects to local
//! services are refused in every spelling of the address, robots.txt is checked on every
//! redirect hop, credentials in a redirect are neither sent nor stored, and `forager sql`
//! writes nothing.

use bytes::Bytes;
use forager::crawl::{self, CrawlConfig, Mode};
use forager::store::{NewUrl, Store};
use http_body_util::Full;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod common;

/// What one server saw: hits by path, and whether any request carried credentials.
#[derive(Default)]
struct Seen {
    hits: HashMap<String, usize>,
    authorization: usize,
}

/// An answer: status, Location header, body.
type Answer = (u16, Option<String>, String);

/// A loopback server answering each path with `route(path, own port, other port)`.
async fn serve(route: fn(&str, u16, u16) -> Answer, other: u16) -> (SocketAddr, Arc<Mutex<Seen>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let s = seen.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let seen = s.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req: Request<_>| {
                    let seen = seen.clone();
                    async move {
                        let path = req.uri().path().to_owned();
                        {
                            let mut s = seen.lock().unwrap();
                            *s.hits.entry(path.clone()).or_default() += 1;
                            s.authorization +=
                                usize::from(req.headers().contains_key("authorization"));
                        }
                        let (status, location, body) = route(&path, addr.port(), other);
                        let mut r = Response::builder()
                            .status(status)
                            .header("content-type", "text/html");
                        if let Some(l) = location {
                            r = r.header("location", l);
                        }
                        Ok::<_, Infallible>(r.body(Full::new(Bytes::from(body))).unwrap())
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    (addr, seen)
}

/// The local service a hostile page aims at: every path answers 200.
fn internal(_path: &str, _own: u16, _other: u16) -> Answer {
    (200, None, "<p>deleted everything</p>".into())
}

/// The hostile site: its start page links to the local service in many spellings, and
/// redirects to it, to a path its robots.txt disallows, and to a URL with credentials.
fn hostile(path: &str, own: u16, b: u16) -> Answer {
    let page = |body: String| (200, None, format!("<html><body>{body}</body></html>"));
    match path {
        "/robots.txt" => (200, None, "User-agent: *\nDisallow: /private/\n".into()),
        "/" => page(format!(
            "<a href=\"http://127.0.0.1:{b}/admin?action=delete-all\">a</a>
             <a href=\"http://2130706433:{b}/decimal\">b</a>
             <a href=\"http://0x7f000001:{b}/hex\">c</a>
             <a href=\"http://[::ffff:127.0.0.1]:{b}/mapped\">d</a>
             <a href=\"http://localhost:{b}/name\">e</a>
             <a href=\"/to-internal\">f</a> <a href=\"/to-private\">g</a>
             <a href=\"/to-creds\">h</a>"
        )),
        "/to-internal" => (
            302,
            Some(format!("http://127.0.0.1:{b}/redirected")),
            String::new(),
        ),
        "/to-private" => (302, Some("/private/secret".into()), String::new()),
        "/to-creds" => (
            302,
            Some(format!("http://user:hunter2@127.0.0.1:{own}/landing")),
            String::new(),
        ),
        _ => page("<p>landing</p>".into()),
    }
}

fn config(allow_private: bool) -> CrawlConfig {
    let mut c = CrawlConfig {
        mode: Mode::Soft,
        concurrency: 4,
        delay: Duration::ZERO,
        max_pages: Some(50),
        ..Default::default()
    };
    c.fetch.reach.allow_private = allow_private;
    c.fetch.total_timeout = Duration::from_secs(5);
    c
}

async fn crawl_from(db: &Path, seed: &str, allow_private: bool) {
    let mut store = Store::open(db).unwrap();
    let u = forager::canon::parse(seed).unwrap();
    store.add_seeds(&[NewUrl::seed(&u)]).unwrap();
    let classifier = forager::native::starter_model().classifier();
    crawl::run(
        store,
        classifier,
        config(allow_private),
        std::future::pending(),
        |_| {},
    )
    .await
    .unwrap();
}

/// Every row as (url, status, error, final_url, redirects).
type Row = (String, i64, Option<String>, Option<String>, Option<String>);

fn rows(db: &Path) -> Vec<Row> {
    let conn = Store::open_read_only(db).unwrap();
    let mut st = conn
        .prepare("SELECT url, status, error, final_url, redirects FROM doc")
        .unwrap();
    st.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_cannot_steer_the_crawl_at_local_services() {
    let dir = common::tmp("sec-private");
    let (b, b_seen) = serve(internal, 0).await;
    let (a, a_seen) = serve(hostile, b.port()).await;
    let db = dir.join("c.db");
    crawl_from(&db, &format!("http://{a}/"), false).await;

    let b_hits: usize = b_seen.lock().unwrap().hits.values().sum();
    assert_eq!(b_hits, 0, "the local service was reached");
    let rows = rows(&db);
    let on_b: Vec<&Row> = rows
        .iter()
        .filter(|r| r.0.contains(&format!(":{}/", b.port())))
        .collect();
    assert_eq!(on_b.len(), 5, "{rows:#?}");
    for r in &on_b {
        assert_eq!(r.2.as_deref(), Some("private-address"), "{r:?}");
    }
    let refused = |path: &str| {
        let r = rows.iter().find(|r| r.0.ends_with(path)).unwrap();
        r.2.clone().unwrap_or_default()
    };
    assert_eq!(refused("/to-internal"), "private-address");
    // robots.txt on the redirect hop.
    assert_eq!(refused("/to-private"), "robots");
    let a_hits = a_seen.lock().unwrap().hits.clone();
    assert_eq!(a_hits.get("/private/secret"), None, "{a_hits:?}");
    assert_eq!(a_hits.get("/landing"), Some(&1), "{a_hits:?}");
    // Credentials in a redirect target are neither sent nor stored.
    assert_eq!(a_seen.lock().unwrap().authorization, 0);
    assert!(
        rows.iter().all(|r| !format!("{r:?}").contains("hunter2")),
        "{rows:#?}"
    );

    // The same web with --allow-private: the links are followed (so the test can fail).
    let db2 = dir.join("c2.db");
    crawl_from(&db2, &format!("http://{a}/"), true).await;
    let b_hits: usize = b_seen.lock().unwrap().hits.values().sum();
    assert!(b_hits >= 4, "allowed crawl reached {b_hits} local pages");
}

#[test]
fn forager_sql_refuses_statements_that_write() {
    let dir = common::tmp("sec-sql");
    let db = dir.join("c.db");
    drop(Store::open(&db).unwrap());
    let copy = dir.join("copy.db");
    let out = common::forager()
        .arg("sql")
        .arg(&db)
        .arg(format!("VACUUM INTO '{}'", copy.display()))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("read-only"));
    assert!(!copy.exists(), "VACUUM INTO wrote a file");
    let ok = common::run(
        common::forager()
            .arg("sql")
            .arg(&db)
            .arg("SELECT count(*) FROM doc"),
    );
    assert!(ok.contains('0'));
}
