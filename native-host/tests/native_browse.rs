//! Browse with Forager through the native host: the apprentice the browser downloads, and
//! links queued from the page being read into the frontier (of the next crawl, or of the
//! running one).

mod common;
use base64::Engine;
use common::host::{
    mark_astronomy_good, serve_generated_web, serve_generated_web_with, until_stopped, Host,
};
use common::tmp;
use forager_classifier::apprentice::Apprentice;
use serde_json::json;
use std::time::{Duration, Instant};

/// Downloads the apprentice in chunks as the extension does.
fn download_apprentice(h: &mut Host) -> Vec<u8> {
    let mut bytes = Vec::new();
    loop {
        let r = h.request(json!({"id": 9, "type": "get_apprentice", "offset": bytes.len()}));
        assert_eq!(r["ok"], true, "{r}");
        let data = r["result"]["data"].as_str().unwrap();
        bytes.extend(
            base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap(),
        );
        if bytes.len() as u64 >= r["result"]["total"].as_u64().unwrap() {
            return bytes;
        }
    }
}

/// (status, relevance) of a URL in the host's crawl database.
fn doc(db: &std::path::Path, url: &str) -> Option<(i64, f64)> {
    let conn = forager::store::Store::open_read_only(db).unwrap();
    conn.query_row(
        "SELECT status, relevance FROM doc WHERE url = ?1",
        [url],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .ok()
}

/// Unvisited frontier URLs, lowest score first.
fn frontier(db: &std::path::Path) -> Vec<String> {
    let conn = forager::store::Store::open_read_only(db).unwrap();
    let mut st = conn
        .prepare("SELECT url FROM doc WHERE status = 0 ORDER BY relevance, url")
        .unwrap();
    let rows = st.query_map([], |r| r.get(0)).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

#[test]
fn the_browser_gets_the_crawl_s_apprentice_and_queues_links_into_the_frontier() {
    let home = tmp("native-browse");
    let (mut server, proxy, seeds) = serve_generated_web(&home);
    let mut h = Host::start(&home.join("host"));
    h.request(json!({"id": 1, "type": "hello", "version": 1}));
    let r = h.request(json!({"id": 2, "type": "get_apprentice"}));
    assert_eq!(r["ok"], false, "no crawl yet: {r}");
    assert_eq!(r["code"], "missing", "{r}");
    mark_astronomy_good(&mut h);
    let r = h.request(
        json!({"id": 3, "type": "start_crawl", "seeds": seeds, "pages": 80, "proxy": proxy, "delay": 0}),
    );
    assert_eq!(r["ok"], true, "{r}");
    until_stopped(&mut h);
    let db = home.join("host").join("crawl.db");

    // The apprentice holds every instance of the crawl.
    let a = Apprentice::from_bytes(&download_apprentice(&mut h)).unwrap();
    let conn = forager::store::Store::open_read_only(&db).unwrap();
    let n: i64 = conn
        .query_row(
            "SELECT count(*) FROM link l JOIN doc d ON d.oid = l.oid_dst
             WHERE d.status = 2 AND l.features IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    drop(conn);
    assert!(n > 0);
    assert_eq!(a.instances()[0] + a.instances()[1], n as u64);

    // Between crawls, a queued link goes to the head of the next crawl's frontier.
    let waiting = frontier(&db);
    assert!(waiting.len() >= 2, "{waiting:?}");
    let r = h.request(json!({"id": 4, "type": "queue_links", "urls": [waiting[0]]}));
    assert_eq!(r["result"]["queued"], 1, "{r}");
    assert_eq!(r["result"]["running"], false, "{r}");
    assert_eq!(doc(&db, &waiting[0]), Some((0, 1.0)));

    // Refusals in plain words.
    for urls in [json!([]), json!(["javascript:alert(1)"])] {
        let r = h.request(json!({"id": 5, "type": "queue_links", "urls": urls}));
        assert_eq!(r["code"], "invalid", "{urls}: {r}");
    }

    // Into a running (slow, polite) crawl: the link is fetched next, while it runs.
    let r = h.request(
        json!({"id": 6, "type": "start_crawl", "seeds": [], "pages": 500, "proxy": proxy, "delay": 1}),
    );
    assert_eq!(r["ok"], true, "{r}");
    let late = frontier(&db)[0].clone();
    let r = h.request(json!({"id": 7, "type": "queue_links", "urls": [late]}));
    assert_eq!(r["result"]["running"], true, "{r}");
    let t = Instant::now();
    while doc(&db, &late).is_some_and(|(status, _)| status == 0) {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "{late} never fetched"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let s = h.request(json!({"id": 8, "type": "status"}));
    assert_eq!(s["result"]["status"]["state"], "running", "{s}");
    h.request(json!({"id": 10, "type": "stop_crawl"}));
    assert_eq!(h.exit_code(), 0);
    let _ = server.kill();
    let _ = server.wait();
}

/// The suggestions of a host that crawled 400 pages of the generated web made with `args`,
/// Astronomy good.
fn suggestions_after_a_crawl(name: &str, args: &[&str]) -> serde_json::Value {
    let home = tmp(name);
    let (mut server, proxy, seeds) = serve_generated_web_with(&home, args);
    let mut h = Host::start(&home.join("host"));
    h.request(json!({"id": 1, "type": "hello", "version": 1}));
    let none = h.request(json!({"id": 2, "type": "suggestions"}));
    assert_eq!(
        none["result"]["suggestions"],
        json!([]),
        "no crawl, no suggestion: {none}"
    );
    mark_astronomy_good(&mut h);
    let r = h.request(
        json!({"id": 3, "type": "start_crawl", "seeds": seeds, "pages": 400, "proxy": proxy, "delay": 0}),
    );
    assert_eq!(r["ok"], true, "{r}");
    until_stopped(&mut h);
    let r = h.request(json!({"id": 4, "type": "suggestions"}));
    assert_eq!(r["ok"], true, "{r}");
    // What the census looked at, so that "nothing to suggest" can be said (#29).
    assert!(r["result"]["looked"]["of"].as_u64().unwrap_or(0) > 0, "{r}");
    eprintln!("{name}: looked {}", r["result"]["looked"]);
    assert_eq!(h.exit_code(), 0);
    let _ = server.kill();
    let _ = server.wait();
    r["result"]["suggestions"].clone()
}

#[test]
fn the_census_suggests_the_planted_neighbour_and_nothing_on_a_plain_web() {
    let s = suggestions_after_a_crawl("native-widen", &["--neighbour"]);
    let list = s.as_array().unwrap();
    let bio = list
        .iter()
        .find(|x| x["path"] == "/Science/Biology")
        .unwrap_or_else(|| panic!("Biology not suggested: {s}"));
    assert_eq!(bio["relation"], "sibling");
    assert_eq!(bio["next_to"], "/Science/Astronomy");
    let (pages, of) = (bio["pages"].as_u64().unwrap(), bio["of"].as_u64().unwrap());
    assert!(pages >= 10 && pages as f64 >= of as f64 / 3.0, "{bio}");
    eprintln!("neighbour web: {bio}");
    let examples = bio["examples"].as_array().unwrap();
    assert!(!examples.is_empty() && examples.len() <= 3, "{bio}");
    assert!(examples
        .iter()
        .all(|e| e["url"].as_str().unwrap().starts_with("http://")));
    // On the plain web Astronomy's pages lead nowhere in particular.
    let plain = suggestions_after_a_crawl("native-widen-plain", &[]);
    eprintln!("plain web: {plain}");
    assert!(
        !plain
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["path"] == "/Science/Biology"),
        "{plain}"
    );
}

/// A loopback server that counts every request it gets (a local admin page, say).
fn counting_server() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let h = hits.clone();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            h.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = [0u8; 2048];
            let _ = s.read(&mut buf);
            let _ = s.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 20\r\n\r\n<p>admin secret</p>",
            );
        }
    });
    (port, hits)
}

#[test]
fn a_link_queued_from_a_page_is_never_a_trusted_seed_and_each_fate_is_reported() {
    // #28 defect 5: a page's link to a private address, queued with no crawl running, must not
    // be fetched by the next crawl (only the user's own seeds may open a private address).
    let home = tmp("native-queue-trust");
    let (mut server, proxy, seeds) = serve_generated_web(&home);
    let (port, hits) = counting_server();
    let admin = format!("http://127.0.0.1:{port}/admin");
    let mut h = Host::start(&home.join("host"));
    h.request(json!({"id": 1, "type": "hello", "version": 1}));
    mark_astronomy_good(&mut h);
    let r = h.request(json!({"id": 2, "type": "queue_links", "urls": [admin]}));
    assert_eq!(r["result"]["queued"], 1, "{r}");
    assert_eq!(r["result"]["fates"][0]["fate"], "queued", "{r}");
    let r = h.request(
        json!({"id": 3, "type": "start_crawl", "seeds": seeds, "pages": 30, "proxy": proxy, "delay": 0}),
    );
    assert_eq!(r["ok"], true, "{r}");
    until_stopped(&mut h);
    let db = home.join("host").join("crawl.db");
    assert_eq!(
        hits.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the admin page was never asked"
    );
    let conn = forager::store::Store::open_read_only(&db).unwrap();
    let (depth, error): (i64, Option<String>) = conn
        .query_row(
            "SELECT depth, error FROM doc WHERE url = ?1",
            [format!("http://127.0.0.1:{port}/admin")],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(depth, 1, "queued links are not seeds");
    assert_eq!(error.as_deref(), Some("private-address"));
    // Queueing a page the crawl fetched, one it gave up on and a new one: one fate each.
    let fetched: String = conn
        .query_row("SELECT url FROM doc WHERE status = 2 LIMIT 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    drop(conn);
    let r = h.request(json!({"id": 4, "type": "queue_links",
        "urls": [fetched, admin, "http://new-page.test/x"]}));
    let fates: Vec<&str> = (r["result"]["fates"].as_array().unwrap().iter())
        .map(|f| f["fate"].as_str().unwrap())
        .collect();
    assert_eq!(fates, ["fetched", "failed", "queued"], "{r}");
    assert_eq!(r["result"]["queued"], 1, "{r}");
    assert!(
        r["result"]["fates"][1]["why"]
            .as_str()
            .unwrap()
            .contains("local or private address"),
        "{r}"
    );
    let r =
        h.request(json!({"id": 5, "type": "link_fates", "urls": [fetched, "http://other.test/"]}));
    assert_eq!(r["result"]["fates"][0]["fate"], "fetched", "{r}");
    assert_eq!(r["result"]["fates"][1]["fate"], "new", "{r}");
    let _ = server.kill();
}
