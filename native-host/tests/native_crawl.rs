//! Crawls started from the browser through the native host: events, stops, "crawl more",
//! a new crawl, refused options, and a browser that does not read.

mod common;
use common::host::{mark_astronomy_good, serve_generated_web, until_stopped, Host};
use common::tmp;
use serde_json::json;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

#[test]
fn bad_crawl_options_are_refused_in_plain_words_and_start_nothing() {
    let home = tmp("native-options");
    let mut h = Host::start(&home);
    h.request(json!({"id": 1, "type": "hello", "version": 1}));
    let cases = [
        (json!({"pages": -5}), "page budget"),
        (json!({"pages": 0}), "page budget"),
        (json!({"pages": 2.5}), "page budget"),
        (json!({"pages": 1e12}), "page budget"),
        (json!({"delay": -3}), "delay"),
        (json!({"delay": 61}), "delay"),
        (json!({"proxy": "garbage"}), "proxy"),
    ];
    for (i, (fields, word)) in cases.into_iter().enumerate() {
        let mut req = json!({"id": 10 + i, "type": "start_crawl", "seeds": ["http://a.test/"]});
        for (k, v) in fields.as_object().unwrap() {
            req[k] = v.clone();
        }
        let r = h.request(req);
        assert_eq!(r["ok"], false, "{fields}: {r}");
        let err = r["error"].as_str().unwrap();
        assert!(err.contains(word), "{fields}: {err}");
        assert!(
            !err.contains("invalid") && !err.contains("expected"),
            "jargon: {err}"
        );
        let s = h.request(json!({"id": 50, "type": "status"}));
        assert_eq!(s["result"]["status"]["state"], "idle", "{fields}: {s}");
    }
    assert_eq!(h.exit_code(), 0);
}

/// "Crawl more from here" on a fetched page: its unvisited links are fetched first, and the
/// reply says how many were queued.
#[test]
fn crawl_more_from_a_page_fetches_its_unvisited_links_first() {
    let home = tmp("native-more");
    let (mut server, proxy, seeds) = serve_generated_web(&home);
    let mut h = Host::start(&home.join("host"));
    h.request(json!({"id": 1, "type": "hello", "version": 1}));
    mark_astronomy_good(&mut h);
    let r = h.request(
        json!({"id": 2, "type": "start_crawl", "seeds": seeds, "pages": 60,
        "proxy": proxy, "delay": 0}),
    );
    assert_eq!(r["ok"], true, "{r}");
    until_stopped(&mut h);
    let db = home.join("host").join("crawl.db");
    let conn = forager::store::Store::open_read_only(&db).unwrap();
    // The fetched page with the most unvisited links, and those links.
    let (page, last): (String, i64) = conn
        .query_row(
            "SELECT s.url, (SELECT max(fetch_seq) FROM doc) FROM doc s JOIN link l ON l.oid_src = s.oid
             JOIN doc d ON d.oid = l.oid_dst
             WHERE s.status = 2 AND d.status = 0
             GROUP BY s.oid ORDER BY count(*) DESC, s.url LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let links: Vec<String> = {
        let mut st = conn
            .prepare(
                "SELECT d.url FROM doc s JOIN link l ON l.oid_src = s.oid
                 JOIN doc d ON d.oid = l.oid_dst WHERE s.url = ?1 AND d.status = 0",
            )
            .unwrap();
        let rows = st.query_map([&page], |r| r.get(0)).unwrap();
        rows.collect::<Result<_, _>>().unwrap()
    };
    assert!(links.len() >= 3, "{page}: {links:?}");
    drop(conn);
    let r = h.request(
        json!({"id": 3, "type": "start_crawl", "seeds": [], "from": [page],
        "pages": links.len() + 8, "proxy": proxy, "delay": 0}),
    );
    assert_eq!(r["result"]["queued"], links.len(), "{r}");
    until_stopped(&mut h);
    let conn = forager::store::Store::open_read_only(&db).unwrap();
    let mut st = conn
        .prepare("SELECT url FROM doc WHERE fetch_seq > ?1 ORDER BY fetch_seq")
        .unwrap();
    let next: Vec<String> = (st.query_map([last], |r| r.get(0)).unwrap())
        .collect::<Result<_, _>>()
        .unwrap();
    for l in &links {
        // Fetched among the next pages, or tried and failed (the web has dead links); either
        // way it left the frontier before the budget ran out.
        let status: i64 = conn
            .query_row("SELECT status FROM doc WHERE url = ?1", [l], |r| r.get(0))
            .unwrap();
        assert!(
            next.contains(l) || status == 3 || status == 4,
            "{l} (status {status}) not among the next fetches {next:?}"
        );
    }
    assert_eq!(h.exit_code(), 0);
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
#[allow(clippy::too_many_lines)] // one crawl as the browser sees it, start to stop
fn crawls_in_the_background_and_streams_events() {
    let home = tmp("native-crawl");
    let (mut server, proxy, seeds) = serve_generated_web(&home);
    let mut h = Host::start(&home.join("host"));
    h.request(json!({"id": 1, "type": "hello", "version": 1}));
    mark_astronomy_good(&mut h);
    let r = h.request(
        json!({"id": 2, "type": "start_crawl", "seeds": seeds, "pages": 300,
        "proxy": proxy, "delay": 0}),
    );
    assert_eq!(r["ok"], true, "{r}");
    let (mut pages, mut progress, mut hubs) = (0, 0, 0);
    let t = Instant::now();
    let stopped = loop {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "no crawl_stopped event"
        );
        let v = h.recv();
        match v["type"].as_str().unwrap() {
            "pages" => pages += v["pages"].as_array().unwrap().len(),
            "progress" => progress += 1,
            "hubs" => hubs += usize::from(!v["hubs"].as_array().unwrap().is_empty()),
            "crawl_stopped" => break v,
            _ => {}
        }
    };
    assert_eq!(stopped["reason"], "PageBudget", "{stopped}");
    assert_eq!(stopped["status"]["fetched"], 300);
    assert_eq!(pages, 300, "every fetched page is streamed once");
    assert!(progress > 0 && hubs > 0, "progress {progress} hubs {hubs}");
    // Idle: no rate; errors are the pages given up on, as the database has them (#14.6).
    let s = h.request(json!({"id": 20, "type": "status"}));
    assert_eq!(s["result"]["status"]["pages_per_sec"], 0.0, "{s}");
    let errors = s["result"]["status"]["errors"].as_u64().unwrap();
    let db = home.join("host").join("crawl.db");
    let given_up: i64 = forager::store::Store::open_read_only(&db)
        .unwrap()
        .query_row("SELECT count(*) FROM doc WHERE status IN (3, 4)", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(
        errors > 0 && errors as i64 == given_up,
        "{errors} vs {given_up}"
    );
    assert_eq!(stopped["status"]["errors"], errors, "{stopped}");
    let r = h.request(json!({"id": 3, "type": "hubs", "top": 5}));
    assert_eq!(r["result"]["hubs"].as_array().unwrap().len(), 5);
    // Titles for the side panel; nothing with a zero score.
    let all = h.request(json!({"id": 21, "type": "hubs", "top": 100000}));
    for list in ["hubs", "authorities"] {
        for e in all["result"][list].as_array().unwrap() {
            assert!(e["score"].as_f64().unwrap() > 0.0, "{list}: {e}");
            assert!(e["title"].is_string(), "{list}: {e}");
        }
    }
    assert!(
        (r["result"]["hubs"].as_array().unwrap().iter())
            .all(|e| !e["title"].as_str().unwrap().is_empty()),
        "{r}"
    );
    let r = h.request(json!({"id": 4, "type": "recent_pages", "limit": 10}));
    let recent = r["result"]["pages"].as_array().unwrap().clone();
    assert_eq!(recent.len(), 10);
    // Negative feedback: a fetched page marked not relevant from its stored text, then undone.
    let url = recent[0]["url"].as_str().unwrap().to_owned();
    let r = h.request(json!({"id": 5, "type": "mark_not_relevant", "url": url}));
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["result"]["not_relevant"], json!([url]), "{r}");
    let r = h.request(json!({"id": 6, "type": "mark_not_relevant", "url": url, "undo": true}));
    assert_eq!(r["result"]["not_relevant"], json!([]), "{r}");
    let r = h.request(json!({"id": 7, "type": "mark_not_relevant", "url": "http://never.test/"}));
    assert_eq!(r["ok"], false, "{r}");
    assert!(
        r["error"].as_str().unwrap().contains("send its text"),
        "{r}"
    );
    let r = h.request(json!({"id": 8, "type": "mark_not_relevant",
        "url": "http://never.test/", "text": "php function array package release notes"}));
    assert_eq!(
        r["result"]["not_relevant"],
        json!(["http://never.test/"]),
        "{r}"
    );
    assert_eq!(h.exit_code(), 0);
    // A new host (the browser relaunched it) describes the existing crawl.
    let mut h = Host::start(&home.join("host"));
    let r = h.request(json!({"id": 1, "type": "hello", "version": 1}));
    assert_eq!(r["result"]["crawl"]["fetched"], 300, "{r}");
    // Starting again resumes the crawl, with a budget for this start: 100 more pages.
    let r = h.request(
        json!({"id": 2, "type": "start_crawl", "seeds": [], "pages": 100, "proxy": proxy, "delay": 0}),
    );
    assert_eq!(r["ok"], true, "{r}");
    let stopped = loop {
        let v = h.recv();
        if v["type"] == "crawl_stopped" {
            break v;
        }
    };
    assert_eq!(stopped["reason"], "PageBudget", "{stopped}");
    assert_eq!(stopped["status"]["fetched"], 400, "{stopped}");
    assert!(
        stopped["status"]["errors"].as_u64().unwrap() >= errors,
        "errors do not reset on a new start: {stopped}"
    );
    assert_eq!(h.exit_code(), 0);
    let _ = server.kill();
    let _ = server.wait();
}

/// A loopback site whose robots.txt asks for a 10 s Crawl-delay; pages link to ten more.
fn polite_site() -> std::net::SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).unwrap_or(0);
            let req = String::from_utf8_lossy(&buf[..n]).into_owned();
            let path = req.split_whitespace().nth(1).unwrap_or("/").to_owned();
            let (ct, body) = if path == "/robots.txt" {
                ("text/plain", "User-agent: *\nCrawl-delay: 10\n".to_string())
            } else {
                let links: String = (0..10)
                    .map(|i| format!("<a href=\"{path}{i}/\">next {i}</a>"))
                    .collect();
                (
                    "text/html",
                    format!("<html><body><p>stars</p>{links}</body></html>"),
                )
            };
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\ncontent-type: {ct}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    addr
}

#[test]
fn a_stop_behind_a_crawl_delay_is_prompt_and_the_host_exits_promptly() {
    let home = tmp("native-stop");
    let site = polite_site();
    let seeds: Vec<String> = (0..20).map(|i| format!("http://{site}/s{i}/")).collect();
    let mut h = Host::start(&home);
    h.request(json!({"id": 1, "type": "hello", "version": 1}));
    let r = h.request(json!({"id": 2, "type": "start_crawl", "seeds": &seeds, "pages": 100}));
    assert_eq!(r["ok"], true, "{r}");
    std::thread::sleep(Duration::from_millis(1500));
    let asked = Instant::now();
    let r = h.request(json!({"id": 3, "type": "stop_crawl"}));
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "stop took {:?}",
        asked.elapsed()
    );
    assert_eq!(r["result"]["status"]["state"], "idle", "{r}");
    // "Crawl more": stop then start at once is accepted, and only one crawl writes.
    let r = h.request(json!({"id": 4, "type": "start_crawl", "seeds": seeds, "pages": 100}));
    assert_eq!(r["ok"], true, "{r}");
    // A running crawl's database is never set aside.
    let r = h.request(json!({"id": 5, "type": "new_crawl"}));
    assert_eq!(r["ok"], false, "{r}");
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains("stop the crawl first"),
        "{r}"
    );
    assert!(home.join("crawl.db").exists());
    std::thread::sleep(Duration::from_millis(1500));
    // The browser goes away mid-crawl: the host is gone within a few seconds.
    let closed = Instant::now();
    let code = h.exit_code();
    assert_eq!(code, 0);
    assert!(
        closed.elapsed() < Duration::from_secs(6),
        "exit took {:?}",
        closed.elapsed()
    );
    let conn = forager::store::Store::open_read_only(&home.join("crawl.db")).unwrap();
    let (in_flight, dup): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM doc WHERE status = 1),
                    (SELECT count(*) - count(DISTINCT fetch_seq) FROM doc WHERE fetch_seq IS NOT NULL)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((in_flight, dup), (0, 0));
}

/// "New crawl": the database is kept aside whole, the next start begins afresh, and a running
/// crawl is never set aside.
#[test]
fn a_new_crawl_keeps_the_old_database_and_starts_afresh() {
    let home = tmp("native-new");
    let (mut server, proxy, seeds) = serve_generated_web(&home);
    let mut h = Host::start(&home.join("host"));
    h.request(json!({"id": 1, "type": "hello", "version": 1}));
    mark_astronomy_good(&mut h);
    let start = |h: &mut Host, id: u64| {
        let r = h.request(
            json!({"id": id, "type": "start_crawl", "seeds": seeds, "pages": 40,
            "proxy": proxy, "delay": 0}),
        );
        assert_eq!(r["ok"], true, "{r}");
    };
    start(&mut h, 2);
    until_stopped(&mut h);
    let r = h.request(json!({"id": 4, "type": "new_crawl"}));
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["result"]["status"]["fetched"], 0, "{r}");
    let kept = std::path::PathBuf::from(r["result"]["kept"].as_str().unwrap());
    assert!(!home.join("host").join("crawl.db").exists());
    let n: i64 = forager::store::Store::open_read_only(&kept)
        .unwrap()
        .query_row("SELECT count(*) FROM doc WHERE status = 2", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(n, 40, "the kept crawl is whole");
    start(&mut h, 5);
    let stopped = until_stopped(&mut h);
    assert_eq!(stopped["status"]["fetched"], 40, "afresh: {stopped}");
    assert_eq!(h.exit_code(), 0);
    let _ = server.kill();
    let _ = server.wait();
}

/// A topic's examples can be listed, moved to another topic and removed.
/// Resident memory of a process, in bytes (Linux).
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = (status.lines())
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    kb * 1024
}

/// A browser that sends without reading slows itself down, not the machine: the host's
/// output queue is bounded, so its memory stays small while thousands of large replies wait.
#[test]
fn a_client_that_does_not_read_its_replies_cannot_grow_the_host() {
    let home = tmp("native-backpressure");
    let mut h = Host::start(&home);
    h.request(json!({"id": 1, "type": "hello", "version": 1}));
    let chunk = h.request(json!({"id": 2, "type": "get_model", "offset": 0}));
    let reply_bytes = chunk["result"]["data"].as_str().unwrap().len() as u64;
    const N: u64 = 5000;
    let pid = h.child.id();
    let baseline = rss(pid);
    let mut stdin = h.child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        for i in 0..N {
            let body = serde_json::to_vec(&json!({"id": 10 + i, "type": "get_model"})).unwrap();
            let mut frame = (body.len() as u32).to_ne_bytes().to_vec();
            frame.extend(body);
            stdin.write_all(&frame).unwrap();
        }
        stdin
    });
    std::thread::sleep(Duration::from_secs(5));
    let grown = rss(pid).saturating_sub(baseline);
    eprintln!("host RSS grew {grown} bytes with {N} replies of {reply_bytes} bytes unread");
    assert!(
        grown < 6 << 20,
        "the host grew by {grown} bytes with {N} replies of {reply_bytes} bytes unread"
    );
    // Reading now lets everything through, in order.
    for i in 0..N {
        let r = h.reply();
        assert_eq!(r["id"], 10 + i);
    }
    h.child.stdin = Some(writer.join().unwrap());
    assert_eq!(h.exit_code(), 0);
}
