//! The browser's host on a crawl shared through a real PostgreSQL server
//! (scripts/pg-cluster.sh; `FORAGER_TEST_PG`), spoken to over the real framing as the browser
//! does: `set_crawl_db` moves the host's crawl to the server; its crawls, status, hubs, recent
//! pages and marks act on the shared crawl, which a `forager worker` elsewhere crawls too.

use forager::store::postgres::testing;
use serde_json::json;
use std::time::{Duration, Instant};

mod common;
use common::host::{mark_astronomy_good, serve_generated_web, Host};
use common::{forager, run, tmp};

/// Counts the `pages` events' pages until the crawl stops; returns them and the stop event.
fn pages_until_stopped(h: &mut Host) -> (Vec<i64>, serde_json::Value) {
    let t = Instant::now();
    let mut seqs = Vec::new();
    loop {
        assert!(t.elapsed() < Duration::from_secs(90), "no crawl_stopped");
        let v = h.recv();
        match v["type"].as_str().unwrap_or("") {
            "pages" => seqs.extend(
                (v["pages"].as_array().unwrap().iter()).map(|p| p["seq"].as_i64().unwrap()),
            ),
            "crawl_stopped" => return (seqs, v),
            _ => {}
        }
    }
}

#[test]
#[allow(clippy::too_many_lines)] // one shared crawl as the browser sees it
fn the_host_crawls_a_shared_crawl_and_shows_every_workers_pages() {
    let Some(server) = testing::server() else {
        return;
    };
    let home = tmp("postgres-native");
    let (mut web, proxy, seeds) = serve_generated_web(&home);
    let db = testing::TestDb::create(&server, "native");
    let dir = home.join("host");
    let mut h = Host::start(&dir);
    let r = h.request(json!({"id": 1, "type": "hello", "version": 1}));
    assert!(
        r["result"]["database"]
            .as_str()
            .unwrap()
            .ends_with("crawl.db"),
        "{r}"
    );
    // Refused in plain words: not a server URL; a server that is not there (no password shown).
    let r = h.request(json!({"id": 2, "type": "set_crawl_db", "url": "http://db.test/x"}));
    assert_eq!(
        (r["ok"].as_bool(), r["code"].as_str()),
        (Some(false), Some("invalid")),
        "{r}"
    );
    let r = h.request(
        json!({"id": 3, "type": "set_crawl_db", "url": "postgres://u:s3cret@127.0.0.1:1/x"}),
    );
    assert_eq!(r["ok"], false, "{r}");
    assert!(!r.to_string().contains("s3cret"), "{r}");
    let r = h.request(json!({"id": 4, "type": "set_crawl_db", "url": db.url()}));
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["result"]["shared"], true, "{r}");
    assert_eq!(r["result"]["status"]["fetched"], 0, "{r}");
    let chosen = dir.join("shared-crawl.url");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&chosen).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "the URL may hold a password: {mode:o}");
    }

    // The host's crawl runs on the server.
    mark_astronomy_good(&mut h);
    let r = h.request(
        json!({"id": 5, "type": "start_crawl", "seeds": seeds, "pages": 150,
        "proxy": proxy, "delay": 0}),
    );
    assert_eq!(r["ok"], true, "{r}");
    let r = h.request(json!({"id": 6, "type": "set_crawl_db", "url": null}));
    assert_eq!(r["code"], "busy", "not while a crawl runs: {r}");
    let (seqs, stopped) = pages_until_stopped(&mut h);
    assert_eq!(stopped["status"]["fetched"], 150, "{stopped}");
    assert_eq!(seqs.len(), 150, "every page streamed once");
    assert!(
        !dir.join("crawl.db").exists(),
        "no crawl file on this computer"
    );
    let r = h.request(json!({"id": 7, "type": "new_crawl"}));
    assert_eq!(r["ok"], false, "{r}");

    // A worker on another machine crawls the same crawl; the host's status and lists show it.
    run(forager()
        .args([
            "worker",
            "--db",
            db.url(),
            "--pages",
            "300",
            "--proxy",
            &proxy,
        ])
        .args(["--delay", "0"]));
    let r = h.request(json!({"id": 8, "type": "status"}));
    assert_eq!(r["result"]["status"]["fetched"], 300, "{r}");
    let r = h.request(json!({"id": 9, "type": "recent_pages", "limit": 2000}));
    assert_eq!(r["result"]["pages"].as_array().unwrap().len(), 300, "{r}");

    // Resumed from the browser: the host fetches 100 more, each streamed once.
    let r = h.request(
        json!({"id": 10, "type": "start_crawl", "seeds": [], "pages": 100,
        "proxy": proxy, "delay": 0}),
    );
    assert_eq!(r["ok"], true, "{r}");
    let (seqs, stopped) = pages_until_stopped(&mut h);
    assert_eq!(stopped["status"]["fetched"], 400, "{stopped}");
    assert_eq!(seqs.len(), 100, "{seqs:?}");
    let distinct: std::collections::HashSet<_> = seqs.iter().collect();
    assert_eq!(distinct.len(), seqs.len(), "a page streamed twice");
    let r = h.request(json!({"id": 11, "type": "hubs", "top": 5}));
    assert_eq!(r["result"]["hubs"].as_array().unwrap().len(), 5, "{r}");

    // Reads reuse the host's pooled connections: 24 requests open at most a few sessions
    // (each look at the count opens one itself).
    let sessions = || {
        testing::number(
            db.url(),
            "SELECT sessions FROM pg_stat_database WHERE datname = current_database()",
        )
    };
    let before = sessions();
    for i in 0..6 {
        for ask in [
            json!({"type": "status"}),
            json!({"type": "hubs", "top": 5}),
            json!({"type": "recent_pages", "limit": 20}),
            json!({"type": "search", "query": "star", "limit": 5}),
        ] {
            let mut ask = ask;
            ask["id"] = json!(100 + i);
            let r = h.request(ask);
            assert_eq!(r["ok"], true, "{r}");
        }
    }
    let opened = sessions() - before - 1;
    assert!(opened <= 2, "24 host reads opened {opened} sessions");

    // A mark reads the page's text from the server.
    let url = r["result"]["hubs"][0]["url"].as_str().unwrap().to_owned();
    let r = h.request(json!({"id": 12, "type": "mark_not_relevant", "url": url}));
    assert_eq!(r["result"]["not_relevant"], json!([url]), "{r}");

    // Back to this computer: an empty crawl; the shared one stays on the server.
    let r = h.request(json!({"id": 13, "type": "set_crawl_db", "url": null}));
    assert_eq!(r["result"]["shared"], false, "{r}");
    assert_eq!(r["result"]["status"]["fetched"], 0, "{r}");
    assert!(!chosen.exists());
    assert_eq!(h.exit_code(), 0);
    let stored = forager::store::open_read(&forager::store::Locator::parse(db.url()))
        .unwrap()
        .counts()
        .unwrap();
    assert_eq!(stored.fetched, 400);
    let _ = web.kill();
    let _ = web.wait();
}
