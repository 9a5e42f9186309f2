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
            .stderr(Stdio::null())
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

#[test]
fn crawls_in_the_background_and_streams_events() {
    let home = tmp("native-crawl");
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
    let seeds = w.task("astronomy").unwrap().seeds.clone();
    let mut h = Host::start(&home.join("host"));
    h.request(json!({"id": 1, "type": "hello", "version": 1}));
    let topics = h.request(json!({"id": 10, "type": "topics"}));
    let astro = topics["result"]["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["path"] == "/Science/Astronomy")
        .unwrap()["id"]
        .clone();
    h.request(json!({"id": 11, "type": "set_good", "topic": astro, "good": true}));
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
    let r = h.request(json!({"id": 3, "type": "hubs", "top": 5}));
    assert_eq!(r["result"]["hubs"].as_array().unwrap().len(), 5);
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
    assert_eq!(h.exit_code(), 0);
    let _ = server.kill();
    let _ = server.wait();
}
