//! Every command opens its crawl through the one store door (`store::open`/`open_read`): a
//! `postgres://` locator with no server there gets the same clear answer from each (the server,
//! without its password, could not be reached), never "no such file"; a SQLite path keeps
//! working.

mod common;
use common::{forager, run, tmp, ServeWeb};

const SERVER: &str = "postgres://crawler:s3cret@127.0.0.1:1/forager";

/// Runs `forager <args>` expecting failure; returns its stderr.
fn refused(args: &[&str]) -> String {
    let out = forager().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{args:?} succeeded: {err}");
    assert!(
        !err.contains("s3cret"),
        "{args:?} showed the password: {err}"
    );
    err
}

#[test]
fn every_command_opens_a_server_locator_through_the_store_door() {
    let dir = tmp("store-door");
    let out = dir.join("out.xml");
    let out = out.to_str().unwrap();
    let model = dir.join("none.fgm");
    let model = model.to_str().unwrap();
    let through_the_door: Vec<Vec<&str>> = vec![
        vec!["status", SERVER],
        vec!["report", SERVER],
        vec!["export", SERVER],
        vec!["distill", SERVER],
        vec!["search", SERVER, "anything"],
        vec!["feed", SERVER, "--out", out],
        vec![
            "crawl",
            "--db",
            SERVER,
            "--seed",
            "http://127.0.0.1:1/",
            "--pages",
            "1",
        ],
    ];
    for args in &through_the_door {
        // Nothing listens on port 1: the connection fails, naming the server without its
        // password; no file named like the URL is opened.
        let err = refused(args);
        assert!(
            err.contains("error connecting to server") && err.contains("crawler:***@127.0.0.1:1"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("no such crawl database"), "{args:?}: {err}");
    }
    // The SQL console is SQLite's own: it says so instead of opening a file named like a URL.
    let err = refused(&["sql", SERVER, "SELECT 1"]);
    assert!(err.contains("SQLite") && err.contains("psql"), "{err}");
    // A model is read before the crawl database, so its error comes first; no file appears.
    let err = refused(&["crawl", "--db", SERVER, "--model", model, "--pages", "1"]);
    assert!(err.contains("none.fgm"), "{err}");
    assert!(!std::path::Path::new("postgres:").exists());
    // A SQLite path that does not exist is named as missing, not created.
    let missing = dir.join("missing.db");
    let err = refused(&["status", missing.to_str().unwrap()]);
    assert!(err.contains("no such crawl database"), "{err}");
    assert!(!missing.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

fn status(db: &std::path::Path) -> serde_json::Value {
    let out = run(forager().arg("status").arg(db).arg("--json"));
    serde_json::from_str(&out).unwrap()
}

/// `forager worker` joins a crawl `forager crawl` started: it crawls on from the crawl's own
/// frontier with the crawl's model, under its own name, and `forager status` lists it with
/// the hosts it holds (none once it gave them back) and what it checked out.
#[test]
fn a_worker_joins_a_crawl_and_status_lists_it() {
    let dir = tmp("store-door-worker");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    let db = dir.join("shared.db");
    run(forager()
        .args(["crawl", "--task", "astronomy", "--pages", "20", "--web"])
        .arg(&web)
        .arg("--db")
        .arg(&db));
    let before = status(&db);
    assert_eq!(before["fetched"], 20);
    let local = &before["workers"][0];
    assert_eq!(local["name"], "local", "{before}");
    assert_eq!(local["hosts"], 0, "the crawl gave its hosts back: {before}");
    let server = ServeWeb::start(&web);
    let err = forager()
        .args([
            "worker", "--name", "w-test", "--pages", "50", "--delay", "0", "--db",
        ])
        .arg(&db)
        .arg("--proxy")
        .arg(format!("http://127.0.0.1:{}", server.1))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&err.stderr);
    assert!(err.status.success(), "{said}");
    assert!(said.contains("worker w-test"), "{said}");
    let after = status(&db);
    assert_eq!(after["fetched"], 50, "{after}");
    let workers = after["workers"].as_array().unwrap();
    let names: Vec<&str> = workers.iter().filter_map(|w| w["name"].as_str()).collect();
    assert_eq!(names, ["w-test"], "{after}");
    assert_eq!(workers[0]["hosts"], 0, "hosts given back: {after}");
    assert!(workers[0]["checked_out"].as_i64().unwrap() >= 30, "{after}");
    // Rated by the pages it recorded (30 of the 50), not by what it checked out.
    assert_eq!(workers[0]["recorded"], 30, "{after}");
    assert!(workers[0]["per_second"].as_f64().unwrap() > 0.0, "{after}");
    // A worker of a crawl with no model is told to start the crawl first.
    let empty = dir.join("empty.db");
    drop(forager::store::Store::open(&empty).unwrap());
    let out = forager()
        .args(["worker", "--db"])
        .arg(&empty)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("start it with forager crawl"));
    let _ = std::fs::remove_dir_all(&dir);
}
