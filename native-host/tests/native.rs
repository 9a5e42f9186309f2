//! The native-messaging host as the browser sees it: a child process speaking framed JSON.

mod common;
use common::{forager, run, tmp};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

struct Host {
    child: Child,
}

impl Host {
    fn start(home: &std::path::Path) -> Host {
        let child = forager()
            .arg("chrome-extension://abcdefghijklmnopabcdefghijklmnop/")
            .env("FORAGER_HOME", home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if std::env::var("DBG").is_ok() {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .spawn()
            .unwrap();
        Host { child }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, v: &Value) {
        let body = serde_json::to_vec(v).unwrap();
        let mut frame = (body.len() as u32).to_ne_bytes().to_vec();
        frame.extend(body);
        self.send_raw(&frame);
    }

    fn recv(&mut self) -> Value {
        let out = self.child.stdout.as_mut().unwrap();
        let mut len = [0u8; 4];
        out.read_exact(&mut len).unwrap();
        let mut body = vec![0u8; u32::from_ne_bytes(len) as usize];
        out.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    /// The next reply, skipping events.
    fn reply(&mut self) -> Value {
        loop {
            let v = self.recv();
            if v["type"] == "reply" {
                return v;
            }
        }
    }

    fn request(&mut self, v: Value) -> Value {
        self.send(&v);
        self.reply()
    }

    /// Waits for the process to exit; fails if it hangs or dies of a signal.
    fn exit_code(mut self) -> i32 {
        drop(self.child.stdin.take());
        let t = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code().expect("killed by a signal");
            }
            assert!(t.elapsed() < Duration::from_secs(20), "host hangs");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn handshake_taxonomy_and_model_chunks() {
    let home = tmp("native-ok");
    let mut h = Host::start(&home);
    let early = h.request(json!({"id": 1, "type": "topics"}));
    assert_eq!(early["ok"], false, "requests before hello are refused");
    let hello = h.request(json!({"id": 2, "type": "hello", "version": 1}));
    assert_eq!(hello["ok"], true, "{hello}");
    assert_eq!(hello["result"]["crawl"]["state"], "idle");
    let topics = h.request(json!({"id": 3, "type": "topics"}));
    let list = topics["result"]["topics"].as_array().unwrap();
    let astro = list
        .iter()
        .find(|t| t["path"] == "/Science/Astronomy")
        .unwrap();
    let id = astro["id"].as_u64().unwrap();
    let r = h.request(json!({"id": 4, "type": "set_good", "topic": id, "good": true}));
    assert_eq!(r["id"], 4);
    let good = r["result"]["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap()["good"]
        .clone();
    assert_eq!(good, true);
    let before = astro["examples"].as_u64().unwrap();
    let r = h.request(json!({"id": 5, "type": "add_example", "topic": id,
        "url": "http://user.test/star.html", "text": "telescope orbit comet"}));
    let after = r["result"]["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap()["examples"]
        .as_u64()
        .unwrap();
    assert_eq!(after, before + 1);
    // The model arrives in chunks and loads.
    let mut bytes = Vec::new();
    loop {
        let r = h.request(json!({"id": 6, "type": "get_model", "offset": bytes.len()}));
        use base64::Engine;
        let chunk = base64::engine::general_purpose::STANDARD
            .decode(r["result"]["data"].as_str().unwrap())
            .unwrap();
        bytes.extend(chunk);
        if bytes.len() as u64 >= r["result"]["total"].as_u64().unwrap() {
            break;
        }
    }
    let m = forager_classifier::Model::from_bytes(&bytes).unwrap();
    assert!(m
        .examples()
        .iter()
        .any(|e| e.url == "http://user.test/star.html"));
    // Edits persist for the next connection.
    assert_eq!(h.exit_code(), 0);
    let mut h = Host::start(&home);
    h.request(json!({"id": 1, "type": "hello", "version": 1}));
    let r = h.request(json!({"id": 2, "type": "topics"}));
    assert!(r["result"]["topics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["id"] == id && t["good"] == true));
    // Unsafe requests are refused.
    let r = h.request(json!({"id": 3, "type": "start_crawl", "seeds": ["file:///etc/passwd"]}));
    assert_eq!(r["ok"], false);
    let r = h.request(
        json!({"id": 4, "type": "start_crawl", "seeds": ["http://a.test/"],
        "proxy": "http://10.0.0.1:3128"}),
    );
    assert_eq!(r["ok"], false, "{r}");
    assert_eq!(h.exit_code(), 0);
}

#[test]
fn broken_messages_get_error_replies_never_crashes() {
    let home = tmp("native-bad");
    let mut h = Host::start(&home);
    h.send_raw(&5u32.to_ne_bytes());
    h.send_raw(b"{bad}");
    assert_eq!(h.reply()["ok"], false);
    h.send(&json!([1, 2]));
    assert_eq!(h.reply()["ok"], false);
    h.send(&json!({"type": "hello", "version": 1}));
    assert_eq!(h.reply()["ok"], false, "no id");
    let r = h.request(json!({"id": 1, "type": "hello", "version": 1}));
    assert_eq!(r["ok"], true);
    let r = h.request(json!({"id": 2, "type": "launch_missiles"}));
    assert_eq!(r["ok"], false);
    assert!(r["error"].as_str().unwrap().contains("unknown"));
    let big = vec![b' '; forager::framing::MAX_FROM_BROWSER + 10];
    let mut frame = (big.len() as u32).to_ne_bytes().to_vec();
    frame.extend(&big);
    h.send_raw(&frame);
    assert_eq!(h.reply()["ok"], false);
    // Still in sync after the oversize frame.
    assert_eq!(h.request(json!({"id": 3, "type": "status"}))["ok"], true);
    // A truncated frame then end of input: a clean exit.
    h.send_raw(&100u32.to_ne_bytes());
    h.send_raw(b"{\"id\":");
    assert_eq!(h.exit_code(), 0);
    // An impossible length prefix: an error reply and exit status 1.
    let mut h = Host::start(&home);
    h.send_raw(&u32::MAX.to_ne_bytes());
    assert_eq!(h.reply()["ok"], false);
    assert_eq!(h.exit_code(), 1);
}

/// The generated web served on loopback: (server process, its proxy URL, astronomy's seeds).
fn serve_generated_web(home: &std::path::Path) -> (Child, String, Vec<String>) {
    let web = home.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    let mut server = forager()
        .arg("serve-web")
        .arg(&web)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let proxy = format!("http://127.0.0.1:{}", line.trim());
    let w = forager::miniweb::MiniWeb::open(&web).unwrap();
    (server, proxy, w.task("astronomy").unwrap().seeds.clone())
}

/// The id of the topic at `path` on the host.
fn topic_id(h: &mut Host, path: &str) -> Value {
    let topics = h.request(json!({"id": 10, "type": "topics"}));
    (topics["result"]["topics"].as_array().unwrap().iter())
        .find(|t| t["path"] == path)
        .unwrap()["id"]
        .clone()
}

/// Marks /Science/Astronomy good on the host.
fn mark_astronomy_good(h: &mut Host) {
    let astro = topic_id(h, "/Science/Astronomy");
    h.request(json!({"id": 11, "type": "set_good", "topic": astro, "good": true}));
}

/// Waits for the crawl to stop; returns the event.
fn until_stopped(h: &mut Host) -> Value {
    let t = Instant::now();
    loop {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "no crawl_stopped event"
        );
        let v = h.recv();
        if v["type"] == "crawl_stopped" {
            return v;
        }
    }
}

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

#[test]
fn an_unreadable_model_is_kept_aside_and_reported_never_overwritten() {
    let home = tmp("native-badmodel");
    let junk = b"FORAGERM\x63\x00from a newer forager".to_vec();
    std::fs::write(home.join("model.fgm"), &junk).unwrap();
    let mut h = Host::start(&home);
    let hello = h.request(json!({"id": 1, "type": "hello", "version": 1}));
    let why = hello["result"]["model_error"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(why.contains("model.fgm.bak"), "{hello}");
    // The starter taxonomy is served, and an edit saves a new model beside the kept one.
    let r = h.request(json!({"id": 2, "type": "add_topic", "parent": 0, "name": "Mine"}));
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(h.exit_code(), 0);
    assert_eq!(std::fs::read(home.join("model.fgm.bak")).unwrap(), junk);
    let saved = std::fs::read(home.join("model.fgm")).unwrap();
    let m = forager_classifier::Model::from_bytes(&saved).unwrap();
    assert!(m.topics().iter().any(|t| t.path == "/Mine"));
    // The next start reads the new model and reports nothing.
    let mut h = Host::start(&home);
    let hello = h.request(json!({"id": 1, "type": "hello", "version": 1}));
    assert!(hello["result"]["model_error"].is_null(), "{hello}");
    assert_eq!(h.exit_code(), 0);
}

#[test]
fn oversized_seeds_and_taxonomies_are_refused_without_applying_anything() {
    let home = tmp("native-caps");
    let mut h = Host::start(&home);
    h.request(json!({"id": 1, "type": "hello", "version": 1}));
    let long = format!("http://a.test/{}", "x".repeat(3_900_000));
    let r = h.request(json!({"id": 2, "type": "start_crawl", "seeds": [long], "pages": 1}));
    assert_eq!(r["ok"], false);
    let err = r["error"].as_str().unwrap();
    assert!(err.contains("longer than") && err.len() < 400, "{err}");
    // A chain of 200-byte names: the edit that would make a path too long is refused, and
    // the taxonomy is as before it.
    let name = "n".repeat(200);
    let mut parent = 0;
    let mut refused = None;
    for i in 0..10 {
        let r =
            h.request(json!({"id": 10 + i, "type": "add_topic", "parent": parent, "name": name}));
        if r["ok"] == false {
            refused = Some(r);
            break;
        }
        let topics = r["result"]["topics"].as_array().unwrap().clone();
        parent = topics
            .iter()
            .map(|t| t["id"].as_u64().unwrap())
            .max()
            .unwrap();
    }
    let r = refused.expect("a 2000-byte path was accepted");
    assert!(r["error"].as_str().unwrap().contains("at most"), "{r}");
    let topics = h.request(json!({"id": 30, "type": "topics"}));
    let longest = topics["result"]["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["path"].as_str().unwrap().len())
        .max()
        .unwrap();
    assert!(longest <= 512, "{longest}");
    assert!(serde_json::to_vec(&topics).unwrap().len() < 1 << 20);
    assert_eq!(h.exit_code(), 0);
}

#[test]
fn an_edit_made_against_another_taxonomy_is_refused() {
    let home = tmp("native-stale");
    let mut h = Host::start(&home);
    h.request(json!({"id": 1, "type": "hello", "version": 1}));
    let topics = h.request(json!({"id": 2, "type": "topics"}));
    let astro = topics["result"]["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["path"] == "/Science/Astronomy")
        .unwrap()
        .clone();
    let id = astro["id"].clone();
    let r = h.request(
        json!({"id": 3, "type": "set_good", "topic": id, "good": true,
        "expect": {"topic": "/Leisure/Sports"}}),
    );
    assert_eq!(r["ok"], false, "{r}");
    assert!(
        r["error"].as_str().unwrap().contains("/Leisure/Sports"),
        "{r}"
    );
    let r = h.request(
        json!({"id": 4, "type": "add_topic", "parent": id, "name": "Comets",
        "expect": {"parent": "/Science/Physics"}}),
    );
    assert_eq!(r["ok"], false, "{r}");
    let topics = h.request(json!({"id": 5, "type": "topics"}));
    let list = topics["result"]["topics"].as_array().unwrap();
    let now = list.iter().find(|t| t["id"] == id).unwrap();
    assert_eq!(now["good"], astro["good"], "nothing applied");
    assert!(list.iter().all(|t| t["name"] != "Comets"));
    // With the right paths the same edits are applied.
    let r = h.request(
        json!({"id": 6, "type": "set_good", "topic": id, "good": true,
        "expect": {"topic": "/Science/Astronomy"}}),
    );
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(h.exit_code(), 0);
}

/// Adding a page that is already an example is never silent: the same topic refuses, another
/// topic moves it and says from where.
#[test]
fn adding_an_example_twice_is_refused_and_a_move_is_reported() {
    let home = tmp("native-dup-example");
    let mut h = Host::start(&home);
    h.request(json!({"id": 1, "type": "hello", "version": 1}));
    let astro = topic_id(&mut h, "/Science/Astronomy");
    let bio = topic_id(&mut h, "/Science/Biology");
    let page = json!({"url": "http://p.test/x", "text": "telescope orbit planet star galaxy"});
    let add = |h: &mut Host, n: u64, topic: &Value| {
        h.request(json!({"id": n, "type": "add_example", "topic": topic,
            "url": page["url"], "text": page["text"]}))
    };
    assert_eq!(add(&mut h, 3, &astro)["ok"], true);
    let r = add(&mut h, 4, &astro);
    assert_eq!(r["ok"], false, "{r}");
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains("already an example of /Science/Astronomy"),
        "{r}"
    );
    let r = add(&mut h, 5, &bio);
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["result"]["moved_from"], "/Science/Astronomy", "{r}");
    let r = h.request(json!({"id": 6, "type": "add_topic", "parent": 0, "name": "science"}));
    assert_eq!(r["ok"], false, "{r}");
    assert!(
        r["error"].as_str().unwrap().contains("other letters"),
        "{r}"
    );
    assert_eq!(h.exit_code(), 0);
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
#[test]
fn examples_are_listed_moved_and_removed() {
    let home = tmp("native-examples");
    let mut h = Host::start(&home);
    h.request(json!({"id": 1, "type": "hello", "version": 1}));
    let astro = topic_id(&mut h, "/Science/Astronomy");
    let bio = topic_id(&mut h, "/Science/Biology");
    let list = |h: &mut Host, topic: &Value| -> Vec<String> {
        let r = h.request(json!({"id": 9, "type": "examples", "topic": topic}));
        (r["result"]["examples"].as_array().unwrap().iter())
            .map(|e| e["url"].as_str().unwrap().to_owned())
            .collect()
    };
    let before = list(&mut h, &astro);
    assert!(!before.is_empty(), "the starter topics have examples");
    let url = before[0].clone();
    let r = h.request(json!({"id": 3, "type": "move_example", "url": url, "topic": bio}));
    assert_eq!(r["ok"], true, "{r}");
    assert!(!list(&mut h, &astro).contains(&url));
    assert!(list(&mut h, &bio).contains(&url));
    let r = h.request(json!({"id": 4, "type": "remove_example", "url": url}));
    assert_eq!(r["ok"], true, "{r}");
    assert!(!list(&mut h, &bio).contains(&url));
    let r = h.request(json!({"id": 5, "type": "remove_example", "url": url}));
    assert_eq!(r["ok"], false, "removing it twice: {r}");
    assert_eq!(h.exit_code(), 0);
}

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
