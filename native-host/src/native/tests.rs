//! The endpoint served in-process over pipes: the typed replies and refusals as the browser
//! reads them, without a child process.

use super::*;
use serde_json::json;
use std::io::{PipeReader, PipeWriter};

/// The browser's end of an in-process connection.
pub(super) struct Browser {
    pub(super) to_host: Option<PipeWriter>,
    from_host: PipeReader,
    next_id: u64,
    /// The length of the last frame received, in bytes.
    pub(super) last_len: usize,
}

impl Browser {
    fn send(&mut self, v: &Value) {
        let w = self.to_host.as_mut().expect("connection open");
        framing::write_frame(w, v).unwrap();
    }

    fn recv(&mut self) -> Value {
        match framing::read_frame(&mut self.from_host).unwrap() {
            Some(Frame::Message(b)) => {
                self.last_len = b.len();
                serde_json::from_slice(&b).unwrap()
            }
            other => panic!("expected a frame, got {other:?}"),
        }
    }

    /// Sends request `v` (given the next id) and returns its reply, skipping events.
    pub(super) fn request(&mut self, mut v: Value) -> Value {
        self.next_id += 1;
        v["id"] = json!(self.next_id);
        self.send(&v);
        loop {
            let r = self.recv();
            if r["type"] == "reply" {
                assert_eq!(r["id"], json!(self.next_id), "{r}");
                return r;
            }
        }
    }
}

/// A host served on a runtime of its own thread, and the browser's end.
pub(super) fn connect(dir: &std::path::Path) -> (Browser, std::thread::JoinHandle<i32>) {
    let (host_in, to_host) = std::io::pipe().unwrap();
    let (from_host, host_out) = std::io::pipe().unwrap();
    let paths = HostPaths {
        dir: dir.to_path_buf(),
    };
    let host = std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(serve(paths, host_in, host_out))
    });
    let b = Browser {
        to_host: Some(to_host),
        from_host,
        next_id: 0,
        last_len: 0,
    };
    (b, host)
}

pub(super) fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("forager-native-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn refusals_carry_their_kind_and_replies_their_typed_shape() {
    let dir = tmp("codes");
    let (mut b, host) = connect(&dir);
    let r = b.request(json!({"type": "topics"}));
    assert_eq!(
        (r["ok"].clone(), r["code"].clone()),
        (json!(false), json!("not_greeted")),
        "{r}"
    );
    let r = b.request(json!({"type": "hello", "version": 1}));
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["result"]["crawl"]["state"], "idle", "{r}");
    assert!(
        r["result"]["host"]
            .as_str()
            .unwrap()
            .starts_with("forager "),
        "{r}"
    );
    let topics = b.request(json!({"type": "topics"}))["result"]["topics"].clone();
    let first = &topics.as_array().unwrap()[1];
    // An edit against another copy of the taxonomy is stale; an edit the model refuses is
    // invalid; a request the crawl database cannot serve yet says what is missing.
    let r = b.request(
        json!({"type": "rename_topic", "topic": first["id"], "name": "x",
        "expect": {"topic": "/Not/What/The/Host/Has"}}),
    );
    assert_eq!(r["code"], "stale", "{r}");
    let r = b.request(json!({"type": "delete_topic", "topic": 987654}));
    assert_eq!(r["code"], "invalid", "{r}");
    let r = b.request(json!({"type": "export", "what": "hubs", "format": "csv", "offset": 0}));
    assert_eq!(r["code"], "missing", "{r}");
    let r = b.request(
        json!({"type": "start_crawl", "seeds": ["http://127.0.0.1:9/"],
        "pages": 0.5}),
    );
    assert_eq!(r["code"], "invalid", "{r}");
    assert!(r.get("result").is_none(), "{r}");
    // Successful replies have their shapes: an added topic's id, a model chunk, empty hubs.
    let r = b.request(json!({"type": "add_topic", "parent": 0, "name": "Typed"}));
    let id = r["result"]["id"].as_u64().expect("the new topic's id");
    let listed = r["result"]["topics"].as_array().unwrap();
    assert!(
        listed
            .iter()
            .any(|t| t["id"] == json!(id) && t["name"] == "Typed"),
        "{r}"
    );
    assert!(r.get("code").is_none() && r.get("error").is_none(), "{r}");
    let r = b.request(json!({"type": "get_model", "offset": 0}));
    assert!(r["result"]["total"].as_u64().unwrap() > 0, "{r}");
    assert!(
        r["result"]["data"].as_str().is_some_and(|d| !d.is_empty()),
        "{r}"
    );
    let r = b.request(json!({"type": "hubs"}));
    assert_eq!(r["result"], json!({"hubs": [], "authorities": []}), "{r}");
    // The browser closes the port: a clean end.
    b.to_host = None;
    assert_eq!(host.join().unwrap(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn dropped_page_events_are_filled_from_the_database_once_and_in_order() {
    use crate::store::{DocStatus, NewUrl, Outcome};
    let dir = tmp("gap");
    std::fs::create_dir_all(&dir).unwrap();
    let paths = HostPaths { dir: dir.clone() };
    let mut store = Store::open(&paths.db()).unwrap();
    let seeds: Vec<NewUrl> = (0..5)
        .map(|i| NewUrl::seed(&url::Url::parse(&format!("http://p{i}.test/")).unwrap()))
        .collect();
    store.add_seeds(&seeds).unwrap();
    let work = store.checkout(10).unwrap();
    let outcome = |i: usize| Outcome {
        oid: work[i].oid,
        status: DocStatus::Fetched,
        relevance: 0.5,
        title: Some(format!("page {i}")),
        ..Outcome::default()
    };
    let first = store.record(&[outcome(0), outcome(1), outcome(2)]).unwrap();
    let last = store.record(&[outcome(3), outcome(4)]).unwrap();
    drop(store);
    let (out, mut rx) = mpsc::channel(16);
    let mut cursor = Cursor::default();
    // The first batch's event was dropped (the browser was behind); the second arrives.
    forward(
        &paths,
        &out,
        &mut cursor,
        CrawlEvent::Pages(last.fetched.clone()),
    );
    // A late duplicate of the first batch is not sent again.
    forward(&paths, &out, &mut cursor, CrawlEvent::Pages(first.fetched));
    drop(out);
    let mut seqs = Vec::new();
    while let Some(ev) = rx.blocking_recv() {
        match ev {
            Outgoing::Pages { pages } => seqs.extend(pages.iter().map(|p| p.seq)),
            other => panic!("unexpected {other:?}"),
        }
    }
    let want: Vec<i64> = (1..=5).collect();
    assert_eq!(seqs, want);
    assert_eq!(cursor.seq, last.fetched.last().unwrap().seq);
    let _ = std::fs::remove_dir_all(&dir);
}
