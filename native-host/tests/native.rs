//! The native-messaging host as the browser sees it: the handshake, broken messages, the
//! model's edits and their refusals (crawls are in `native_crawl.rs`).

mod common;
use common::host::{topic_id, Host};
use common::tmp;
use serde_json::{json, Value};

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
