//! Replies stay under the browser's 1 MB and tell the truth (#28 defects 4 and 7): whatever
//! the names, titles and URLs (control characters, 4-byte characters, maximum lengths), every
//! reply frame is at most 1 MB, a refused request leaves the model and the database as they
//! were, and only http(s) pages become "not relevant" marks.

use super::tests::{connect, tmp, Browser};
use super::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::json;

/// What a request could have changed: the model file and the crawl database.
fn snapshot(dir: &std::path::Path) -> Vec<Option<Vec<u8>>> {
    ["model.fgm", "crawl.db", "crawl.db-wal"]
        .iter()
        .map(|f| std::fs::read(dir.join(f)).ok())
        .collect()
}

/// Sends `v`; checks the frame's size and that a refusal changed nothing.
fn checked(b: &mut Browser, dir: &std::path::Path, v: Value) -> Value {
    let before = snapshot(dir);
    let what = v["type"].clone();
    let r = b.request(v);
    assert!(
        b.last_len <= framing::MAX_TO_BROWSER,
        "{what}: {} bytes",
        b.last_len
    );
    if r["ok"] != true {
        assert!(
            snapshot(dir) == before,
            "{what} refused ({}) but changed something",
            r["error"]
        );
    }
    r
}

/// A crawl database whose `n` pages have hostile titles and long URLs.
fn hostile_crawl(dir: &std::path::Path, n: usize) {
    use crate::store::{DocStatus, NewUrl, Outcome};
    std::fs::create_dir_all(dir).unwrap();
    let mut store = Store::open(&dir.join("crawl.db")).unwrap();
    let seeds: Vec<NewUrl> = (0..n)
        .map(|i| {
            let path = format!("{i}/{}", "😀".repeat(120));
            NewUrl::seed(&url::Url::parse(&format!("http://p{i}.test/{path}")).unwrap())
        })
        .collect();
    store.add_seeds(&seeds).unwrap();
    let work = store.checkout(n).unwrap();
    let title = |i: usize| match i % 3 {
        0 => "\u{1}\u{7}\n\t".repeat(250),
        1 => "\"\\".repeat(500),
        _ => "𝕏".repeat(400),
    };
    let outcomes: Vec<Outcome> = (work.iter().enumerate())
        .map(|(i, w)| Outcome {
            oid: w.oid,
            status: DocStatus::Fetched,
            relevance: 0.5,
            title: Some(title(i)),
            ..Outcome::default()
        })
        .collect();
    store.record(&outcomes).unwrap();
}

#[test]
fn recent_pages_with_hostile_titles_fit_a_frame() {
    let dir = tmp("hostile-titles");
    hostile_crawl(&dir, 2000);
    let (mut b, host) = connect(&dir);
    checked(&mut b, &dir, json!({"type": "hello", "version": 1}));
    let r = checked(&mut b, &dir, json!({"type": "recent_pages", "limit": 2000}));
    assert_eq!(r["ok"], true, "{}", r["error"]);
    let pages = r["result"]["pages"].as_array().unwrap();
    assert!(pages.len() > 100, "{} pages", pages.len());
    let title = pages[pages.len() - 1]["title"].as_str().unwrap_or("");
    assert!(
        !title.chars().any(char::is_control),
        "control characters stripped"
    );
    let r = checked(&mut b, &dir, json!({"type": "hubs", "top": 200}));
    assert_eq!(r["ok"], true, "{}", r["error"]);
    b.to_host = None;
    assert_eq!(host.join().unwrap(), 0);
}

#[test]
fn names_with_control_characters_are_refused_and_marks_are_web_pages() {
    let dir = tmp("names");
    let (mut b, host) = connect(&dir);
    checked(&mut b, &dir, json!({"type": "hello", "version": 1}));
    let r = checked(
        &mut b,
        &dir,
        json!({"type": "add_topic", "parent": 0, "name": "\u{1}".repeat(200)}),
    );
    assert_eq!(r["code"], "invalid", "{r}");
    let r = checked(
        &mut b,
        &dir,
        json!({"type": "add_topic", "parent": 0, "name": "line\nbreak"}),
    );
    assert_eq!(r["code"], "invalid", "{r}");
    for bad in [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "../../../etc/passwd",
        "data:,x",
        "",
    ] {
        let r = checked(
            &mut b,
            &dir,
            json!({"type": "mark_not_relevant", "url": bad, "text": "some words here"}),
        );
        assert_eq!(r["code"], "invalid", "{bad}: {r}");
        assert!(r["error"].as_str().unwrap().contains("http"), "{r}");
    }
    let r = checked(
        &mut b,
        &dir,
        json!({"type": "mark_not_relevant", "url": "https://a.test/x", "text": "some words here"}),
    );
    assert_eq!(
        r["result"]["not_relevant"],
        json!(["https://a.test/x"]),
        "{r}"
    );
    b.to_host = None;
    assert_eq!(host.join().unwrap(), 0);
}

#[test]
fn six_hundred_marks_with_long_urls_all_answer_ok_and_fit() {
    let dir = tmp("marks");
    let (mut b, host) = connect(&dir);
    checked(&mut b, &dir, json!({"type": "hello", "version": 1}));
    let url = |i: usize| format!("https://m.test/{i}/{}", "\"".repeat(2000));
    for i in 0..600 {
        let r = checked(
            &mut b,
            &dir,
            json!({"type": "mark_not_relevant", "url": url(i),
            "text": format!("word{i} other words")}),
        );
        assert_eq!(r["ok"], true, "mark {i}: {}", r["error"]);
        assert_eq!(r["result"]["not_relevant_total"], i + 1);
        assert_eq!(
            r["result"]["not_relevant"][0],
            url(i),
            "this request's mark first"
        );
    }
    let r = checked(
        &mut b,
        &dir,
        json!({"type": "mark_not_relevant", "url": url(3), "undo": true}),
    );
    assert_eq!(r["ok"], true, "{}", r["error"]);
    assert_eq!(r["result"]["not_relevant_total"], 599);
    b.to_host = None;
    assert_eq!(host.join().unwrap(), 0);
}

/// Hostile strings: control characters, 4-byte characters, quotes, at and over the limits.
fn hostile() -> impl Strategy<Value = String> {
    prop_oneof![
        "[\\x00-\\x1f]{0,260}",
        "[𝕏😀]{0,70}",
        "[\"\\\\]{0,260}",
        "[a-z]{190,210}",
        ".{0,40}",
    ]
}

#[derive(Clone, Debug)]
enum Req {
    AddTopic(String),
    Rename(String),
    Example(String, String),
    Mark(String, String),
    Unmark(String),
    List,
}

/// A URL: a web page's with a hostile path, or a hostile string.
fn url() -> impl Strategy<Value = String> {
    (hostile(), prop::bool::ANY).prop_map(|(s, web)| {
        if web {
            format!("https://h.test/{s}")
        } else {
            s
        }
    })
}

fn request() -> impl Strategy<Value = Req> {
    prop_oneof![
        hostile().prop_map(Req::AddTopic),
        hostile().prop_map(Req::Rename),
        (url(), hostile()).prop_map(|(u, t)| Req::Example(u, t)),
        (url(), hostile()).prop_map(|(u, t)| Req::Mark(u, t)),
        url().prop_map(Req::Unmark),
        Just(Req::List),
    ]
}

#[test]
fn every_reply_fits_and_every_refusal_changes_nothing() {
    let dir = tmp("prop");
    hostile_crawl(&dir, 600);
    let (b, host) = connect(&dir);
    let b = std::cell::RefCell::new(b);
    checked(
        &mut b.borrow_mut(),
        &dir,
        json!({"type": "hello", "version": 1}),
    );
    let mut runner = TestRunner::new(Config {
        cases: 48,
        failure_persistence: None,
        ..Config::default()
    });
    let seq = prop::collection::vec(request(), 1..8);
    runner
        .run(&seq, |reqs| {
            let mut b = b.borrow_mut();
            let topics = b.request(json!({"type": "topics"}));
            let last = (topics["result"]["topics"]
                .as_array()
                .unwrap()
                .last()
                .unwrap())["id"]
                .clone();
            for r in reqs {
                let v = match r {
                    Req::AddTopic(n) => json!({"type": "add_topic", "parent": 0, "name": n}),
                    Req::Rename(n) => json!({"type": "rename_topic", "topic": last, "name": n}),
                    Req::Example(u, t) => {
                        json!({"type": "add_example", "topic": last, "url": u, "text": t})
                    }
                    Req::Mark(u, t) => json!({"type": "mark_not_relevant", "url": u, "text": t}),
                    Req::Unmark(u) => json!({"type": "mark_not_relevant", "url": u, "undo": true}),
                    Req::List => json!({"type": "recent_pages", "limit": 2000}),
                };
                checked(&mut b, &dir, v);
            }
            for v in [
                json!({"type": "topics"}),
                json!({"type": "examples", "topic": last}),
                json!({"type": "hubs", "top": 200}),
            ] {
                let r = checked(&mut b, &dir, v);
                prop_assert_eq!(&r["ok"], &json!(true), "{}", r);
            }
            Ok(())
        })
        .unwrap();
    b.borrow_mut().to_host = None;
    assert_eq!(host.join().unwrap(), 0);
}
