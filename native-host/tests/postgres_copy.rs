//! `forager db copy` on a real PostgreSQL server (scripts/pg-cluster.sh; `FORAGER_TEST_PG`):
//! a crawl made in SQLite is copied to the server and back; the report, the status and search
//! read the same from the copy as from the original, a target holding a crawl is left alone
//! unless `--force`, and the crawl continues on the server where it stopped.

use forager::store::postgres::{testing, PgStore};
use forager::store::CrawlDb;
use std::collections::HashSet;
use std::path::Path;

mod common;
use common::{forager, run, tmp};

/// A command's JSON output.
fn json(args: &[&str], db: &str) -> serde_json::Value {
    let out = run(forager().args(&args[..1]).arg(db).args(&args[1..]));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?} {db}: {e}: {out}"))
}

/// A report with its lists of counts sorted and the site rating's hosts left out (its top 20
/// may end among sites of equal counts), so that the order of equal counts does not matter.
fn ties_sorted(mut report: serde_json::Value) -> serde_json::Value {
    for site in report["sites"].as_array_mut().unwrap() {
        site.as_object_mut().unwrap().remove("host");
    }
    for list in ["errors", "sites"] {
        report[list]
            .as_array_mut()
            .unwrap()
            .sort_by_key(|v| v.to_string());
    }
    report
}

/// `forager status --json`, its workers left out (a copy holds none).
fn status(db: &str) -> serde_json::Value {
    let mut v = json(&["status", "--json"], db);
    v.as_object_mut().unwrap().remove("workers");
    v
}

/// The astronomy crawl of `web` into `db`, to `pages` pages in all.
fn crawl(web: &Path, db: &str, pages: &str) {
    run(forager()
        .args(["crawl", "--task", "astronomy", "--pages", pages])
        .args(["--distill-every", "100", "--web"])
        .arg(web)
        .args(["--db", db]));
}

/// `forager db copy FROM TO [extra]`: its success and its stderr.
fn copy(from: &str, to: &str, extra: &[&str]) -> (bool, String) {
    let out = forager()
        .args(["db", "copy", from, to])
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_crawl_copied_to_postgres_and_back_reads_the_same_and_continues_on_the_server() {
    let Some(server) = testing::server() else {
        return;
    };
    let dir = tmp("postgres-copy");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    let a = dir.join("a.db");
    let a = a.to_str().unwrap();
    crawl(&web, a, "300");
    let db = testing::TestDb::create(&server, "copy");
    let pg = db.url();
    let (ok, said) = copy(a, pg, &[]);
    assert!(ok, "{said}");
    assert!(said.contains("doc "), "{said}");
    let b = dir.join("b.db");
    let b = b.to_str().unwrap();
    let (ok, said) = copy(pg, b, &[]);
    assert!(ok, "{said}");

    // The round trip reads as the original, and so does the server between.
    let report = json(&["report", "--json"], a);
    assert!(
        report["hubs"].as_array().is_some_and(|h| !h.is_empty()),
        "the crawl distilled: {report}"
    );
    assert_eq!(json(&["report", "--json"], b), report);
    // The server breaks ties among equal counts in its own order.
    assert_eq!(
        ties_sorted(json(&["report", "--json"], pg)),
        ties_sorted(report.clone())
    );
    assert_eq!(status(b), status(a));
    assert_eq!(status(pg), status(a));
    let found = json(&["search", "star", "--json"], a);
    assert!(found.as_array().is_some_and(|h| !h.is_empty()), "{found}");
    assert_eq!(json(&["search", "star", "--json"], b), found);
    let log =
        |db: &str| run(forager().args(["export", db, "--what", "pages", "--format", "jsonl"]));
    assert_eq!(log(b), log(a));

    // A target that holds a crawl is left alone unless told; a file that is no crawl, always.
    let (ok, said) = copy(b, pg, &[]);
    assert!(!ok && said.contains("--force"), "{said}");
    let other = dir.join("notes.txt");
    std::fs::write(&other, "my notes").unwrap();
    let (ok, said) = copy(a, other.to_str().unwrap(), &["--force"]);
    assert!(!ok && said.contains("not a crawl database"), "{said}");
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "my notes");
    let (ok, said) = copy(a, a, &["--force"]);
    assert!(!ok && said.contains("both FROM and TO"), "{said}");
    let (ok, said) = copy(b, pg, &["--force"]);
    assert!(ok, "{said}");
    assert_eq!(status(pg), status(a));

    // The crawl continues on the server: new pages get new ids and fetch numbers after the
    // copied ones, and no page is fetched twice.
    crawl(&web, pg, "450");
    let store = PgStore::open(pg).unwrap();
    let urls = store.fetched_urls().unwrap();
    let before = forager::store::Store::open(Path::new(a))
        .unwrap()
        .fetched_urls()
        .unwrap();
    assert!(urls.len() >= 450, "{} pages", urls.len());
    assert_eq!(
        &urls[..before.len()],
        &before[..],
        "the copied fetch log first"
    );
    let distinct: HashSet<&String> = urls.iter().collect();
    assert_eq!(distinct.len(), urls.len(), "a page fetched twice");
    let _ = std::fs::remove_dir_all(&dir);
}
