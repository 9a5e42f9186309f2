//! Every command opens its crawl through the one store door (`store::open`/`open_read`): a
//! `postgres://` locator gets the same clear answer from each, never "no such file" and never
//! the password; a SQLite path keeps working.

mod common;
use common::{forager, tmp};

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
        let err = refused(args);
        assert!(
            err.contains("no PostgreSQL back-end") && err.contains("crawler:***@127.0.0.1:1"),
            "{args:?}: {err}"
        );
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
