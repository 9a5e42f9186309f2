//! Searching a harvest and seeing what is new (#30), on both back-ends: `forager search` and
//! the store's search given arbitrary text (no panic, no SQL error text, bounded time) on the
//! same crawl in SQLite and in PostgreSQL (one body, two stores; PostgreSQL from
//! scripts/pg-cluster.sh, `FORAGER_TEST_PG`), the host's `search` request, and the Atom feed of
//! a crawl with revisits read by a real Atom parser (Python's feedparser, pinned in
//! scripts/setup.sh).

mod common;
use common::host::Host;
use common::{forager, run, tmp, trained_web};
use forager::store::postgres::testing::{self, TestDb};
use forager::store::{Locator, Reader, SearchRanking, StoreError};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The crawl of a test: `forager crawl` of the generated web (150 pages of the astronomy
/// task) into `db` (a file or a server's database).
fn crawl_web(web: &Path, db: &Path) {
    run(forager()
        .args(["crawl", "--task", "astronomy", "--pages", "150", "--web"])
        .arg(web)
        .arg("--db")
        .arg(db));
}

/// A crawl of the generated web in SQLite, made once: (dir, db).
fn crawled() -> &'static (PathBuf, PathBuf) {
    static DB: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    DB.get_or_init(|| {
        let dir = tmp("search-crawl");
        let (web, _) = trained_web(&dir);
        let db = dir.join("crawl.db");
        crawl_web(&web, &db);
        (dir, db)
    })
}

/// The same crawl in a PostgreSQL database, made once: (its database, its URL as a `--db`
/// argument); `None` without a test server (a skip on a developer's machine, a failure in CI).
fn crawled_pg() -> Option<&'static (TestDb, PathBuf)> {
    static DB: OnceLock<Option<(TestDb, PathBuf)>> = OnceLock::new();
    DB.get_or_init(|| {
        let server = testing::server()?;
        let db = TestDb::create(&server, "search");
        let url = PathBuf::from(db.url());
        crawl_web(&crawled().0.join("web"), &url);
        Some((db, url))
    })
    .as_ref()
}

/// Each back-end's crawl: (back-end, crawl database as commands take it).
fn crawls() -> Vec<(&'static str, &'static Path)> {
    let mut all = vec![("sqlite", crawled().1.as_path())];
    all.extend(crawled_pg().map(|(_, url)| ("postgres", url.as_path())));
    all
}

/// A back-end's name and a reader of its crawl.
type Named = (&'static str, Mutex<Box<dyn Reader + Send>>);

/// A reader of each back-end's crawl, opened once.
fn readers() -> &'static [Named] {
    static READERS: OnceLock<Vec<Named>> = OnceLock::new();
    READERS.get_or_init(|| {
        (crawls().into_iter())
            .map(|(name, db)| {
                let ro = forager::store::open_read(&Locator::from_path(db)).unwrap();
                (name, Mutex::new(ro))
            })
            .collect()
    })
}

/// Words of SQL, SQLite or PostgreSQL errors that must never reach a user.
fn sql_leak(msg: &str) -> bool {
    let m = msg.to_lowercase();
    [
        "fts5",
        "sqlite",
        "sql logic",
        "syntax error",
        "no such column",
        "malformed",
        "unterminated",
        "tsquery",
        "tsvector",
        "db error",
        "postgres",
    ]
    .iter()
    .any(|w| m.contains(w))
}

/// Query text a user or a fuzzer may type: words, FTS5 operators and syntax, quotes, control
/// characters, any Unicode, and very long text.
fn queries() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-z\"*():^+{}\\-\\.,;' \t\n\u{0}\u{1b}]{0,60}",
        prop::collection::vec(
            prop_oneof![
                Just("AND".to_owned()),
                Just("OR".to_owned()),
                Just("NOT".to_owned()),
                Just("NEAR(".to_owned()),
                Just("\"".to_owned()),
                Just("*".to_owned()),
                Just("title:".to_owned()),
                Just("^".to_owned()),
                Just("star".to_owned()),
                Just("orbit".to_owned()),
                "[a-z]{1,8}",
            ],
            0..40
        )
        .prop_map(|v| v.join(" ")),
        (1usize..20_000).prop_map(|n| "a \"b".repeat(n / 4)),
    ]
}

#[test]
fn forager_search_lists_pages_with_marked_snippets_and_refuses_bad_queries_in_words() {
    for (store, db) in crawls() {
        let out = run(forager()
            .arg("search")
            .arg(db)
            .args(["star", "--json", "--limit", "5"]));
        let hits: Vec<Value> = serde_json::from_str(&out).unwrap();
        assert!(
            !hits.is_empty(),
            "{store}: no hit for 'star' in an astronomy crawl"
        );
        assert!(hits.len() <= 5);
        for h in &hits {
            assert!(h["url"].as_str().unwrap().starts_with("http://"), "{h}");
            assert!(h["relevance"].is_f64() && h["fetched_at"].is_f64(), "{h}");
            let parts = h["snippet"].as_array().unwrap();
            let text = h["title"].as_str().unwrap().to_lowercase();
            let marked = parts
                .iter()
                .skip(1)
                .step_by(2)
                .any(|p| p.as_str().unwrap().to_lowercase().starts_with("star"));
            assert!(
                marked || text.contains("star"),
                "{store}: no matched word marked: {h}"
            );
        }
        let text = run(forager().arg("search").arg(db).arg("star"));
        assert!(
            text.contains("**") && text.contains("R "),
            "{store}: {text}"
        );
        for bad in ["\"", "( ) * ^ - :", &"x".repeat(10_000)] {
            let out = (forager()
                .env("RUST_BACKTRACE", "0")
                .env("RUST_LIB_BACKTRACE", "0"))
            .arg("search")
            .arg(db)
            .arg(bad)
            .output()
            .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{store}: {bad:?} accepted");
            assert!(!sql_leak(&err) && err.len() < 300, "{store}: {err}");
        }
        // Operators are words: "AND OR" finds nothing rather than failing.
        run(forager().arg("search").arg(db).arg("star AND"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn any_query_text_is_searched_or_refused_in_words(q in queries()) {
        for (store, ro) in readers() {
            let ro = ro.lock().unwrap_or_else(|p| p.into_inner());
            let t = Instant::now();
            match ro.search(&q, 20, SearchRanking::Combined) {
                Ok(hits) => prop_assert!(hits.len() <= 20),
                Err(StoreError::BadQuery(why)) => {
                    prop_assert!(!sql_leak(&why) && why.len() < 200, "{}", why)
                }
                Err(e) => prop_assert!(false, "{}: {:?} failed: {}", store, q, e),
            }
            prop_assert!(t.elapsed() < Duration::from_secs(2), "{}: {:?} took {:?}", store, q, t.elapsed());
        }
    }
}

/// One host for the property test's requests, greeted, over the crawl's database.
fn host() -> &'static Mutex<Host> {
    static HOST: OnceLock<Mutex<Host>> = OnceLock::new();
    HOST.get_or_init(|| {
        let (dir, db) = crawled();
        let home = dir.join("home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::copy(db, home.join("crawl.db")).unwrap();
        let mut h = Host::start(&home);
        let r = h.request(json!({"id": 1, "type": "hello", "version": 1}));
        assert_eq!(r["ok"], true, "{r}");
        Mutex::new(h)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

    #[test]
    fn the_hosts_search_request_answers_any_text_without_sql_errors(q in queries()) {
        let mut h = host().lock().unwrap_or_else(|p| p.into_inner());
        let t = Instant::now();
        let r = h.request(json!({"id": 7, "type": "search", "query": q, "limit": 10}));
        prop_assert!(t.elapsed() < Duration::from_secs(2), "took {:?}", t.elapsed());
        if r["ok"] == true {
            prop_assert!(r["result"]["hits"].as_array().unwrap().len() <= 10, "{}", r);
        } else {
            let e = r["error"].as_str().unwrap_or_default();
            prop_assert_eq!(&r["code"], "invalid", "{}", r);
            prop_assert!(!sql_leak(e), "{}", e);
        }
    }
}

#[test]
fn the_hosts_search_finds_pages_and_whats_new_counts_them() {
    let mut h = host().lock().unwrap_or_else(|p| p.into_inner());
    let r = h.request(json!({"id": 2, "type": "search", "query": "orbit"}));
    let hits = r["result"]["hits"].as_array().unwrap();
    assert!(!hits.is_empty(), "{r}");
    assert!(hits[0]["snippet"].as_array().unwrap().len() >= 2, "{r}");
    let r = h.request(json!({"id": 3, "type": "whats_new", "since": 0}));
    let count = r["result"]["count"].as_i64().unwrap();
    assert!(count > 0, "{r}");
    assert!(r["result"]["pages"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["relevance"].as_f64().unwrap() >= 0.5));
    let now = r["result"]["now"].as_f64().unwrap();
    let r = h.request(json!({"id": 4, "type": "whats_new", "since": now}));
    assert_eq!(r["result"]["count"], 0, "nothing new since now: {r}");
    let r = h.request(json!({"id": 5, "type": "whats_new", "since": "yesterday"}));
    assert_eq!(r["ok"], false, "{r}");
}

/// A loopback site whose /changing page changes at every request; / links to it and to a
/// page that never changes.
fn changing_site() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut n = 0u64;
        for stream in listener.incoming().flatten() {
            n += 1;
            let mut line = String::new();
            let mut reader = BufReader::new(&stream);
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).map_or(true, |k| k <= 2) {
                    break;
                }
            }
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
            let body = match path.as_str() {
                "/" => {
                    "<html><head><title>Star charts</title></head><body><p>Telescope star orbit \
                        comet planet galaxy.</p><a href=\"/changing\">news</a> \
                        <a href=\"/static\">about</a></body></html>"
                        .to_owned()
                }
                "/changing" => format!(
                    "<html><head><title>Comet watch</title></head><body><p>Comet sighting \
                     number {n}: telescope orbit star.</p></body></html>"
                ),
                "/static" => "<html><head><title>About</title></head><body><p>Planet orbit \
                              telescope.</p></body></html>"
                    .to_owned(),
                _ => String::new(),
            };
            let status = if body.is_empty() {
                "404 Not Found"
            } else {
                "200 OK"
            };
            let _ = write!(
                &stream,
                "HTTP/1.1 {status}\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{addr}/")
}

#[test]
fn the_atom_feed_of_a_crawl_with_revisits_validates_and_lists_the_changed_pages() {
    let dir = tmp("feed");
    let (_, model) = trained_web(&dir);
    feed_case(&dir, &model, &dir.join("m.db"));
    if let Some(server) = testing::server() {
        let pg = TestDb::create(&server, "feed");
        feed_case(&dir.join("pg"), &model, Path::new(pg.url()));
    }
}

/// The feed case on the crawl database `db` (a file or a server's database), its files in
/// `dir`.
fn feed_case(dir: &Path, model: &Path, db: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let seed = changing_site();
    run(forager()
        .arg("crawl")
        .arg("--model")
        .arg(model)
        .args([
            "--good",
            "/Science/Astronomy",
            "--seed",
            &seed,
            "--delay",
            "0",
        ])
        .args([
            "--revisit-share",
            "0.5",
            "--revisit-after",
            "0",
            "--seconds",
            "3",
        ])
        .arg("--db")
        .arg(db));
    let feed = dir.join("feed.xml");
    run(forager().arg("feed").arg(db).arg("--out").arg(&feed));
    let py = r#"
import feedparser, json, sys
d = feedparser.parse(sys.argv[1])
print(json.dumps({"bozo": bool(d.bozo), "version": d.version, "title": d.feed.get("title"),
  "entries": [{"link": e.link, "id": e.id, "summary": e.summary, "updated": e.updated} for e in d.entries]}))
"#;
    let out = run(std::process::Command::new("python3")
        .args(["-c", py])
        .arg(&feed));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["bozo"], false, "{db:?}: not valid Atom: {v}");
    assert_eq!(v["version"], "atom10", "{v}");
    let entries = v["entries"].as_array().unwrap();
    let changing = format!("{seed}changing");
    let changed: Vec<&str> = (entries.iter())
        .filter(|e| {
            e["summary"]
                .as_str()
                .unwrap()
                .starts_with("Changed on revisit")
        })
        .map(|e| e["link"].as_str().unwrap())
        .collect();
    assert_eq!(changed, vec![changing.as_str()], "{db:?}: {v}");
    // Nothing is new after the last entry; the file is not replaced unless told.
    let out = forager()
        .arg("feed")
        .arg(db)
        .arg("--out")
        .arg(&feed)
        .output()
        .unwrap();
    assert!(!out.status.success(), "overwrote the feed");
    let later = dir.join("later.xml");
    let now = format!("{}", forager::store::now());
    run(forager()
        .arg("feed")
        .arg(db)
        .args(["--since", &now, "--out"])
        .arg(&later));
    let out = run(std::process::Command::new("python3")
        .args(["-c", py])
        .arg(&later));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["bozo"].clone(), v["entries"].as_array().unwrap().len()),
        (json!(false), 0),
        "{v}"
    );
}

#[test]
fn a_postgres_crawl_recorded_before_search_is_indexed_when_first_opened_losing_nothing() {
    let Some(server) = testing::server() else {
        return;
    };
    let pg = TestDb::create(&server, "backfill");
    let (dir, _) = crawled();
    run(forager()
        .arg("crawl")
        .arg("--model")
        .arg(dir.join("m.fgm"))
        .args(["--good", "/Science/Astronomy", "--seed", &changing_site()])
        .args(["--delay", "0", "--pages", "3"])
        .arg("--db")
        .arg(pg.url()));
    let url = pg.url();
    let count = || testing::number(url, "SELECT count(*) FROM doc");
    let fetched = testing::number(url, "SELECT count(*) FROM doc WHERE status = 2");
    let indexed = || testing::number(url, "SELECT count(*) FROM page_search");
    assert_eq!(indexed(), fetched, "every fetched page indexed as recorded");
    let before = count();
    // As a crawl recorded before the index: no entries, not marked built.
    testing::number(
        url,
        "WITH a AS (DELETE FROM page_search RETURNING 1), b AS (DELETE FROM meta
         WHERE key = 'search_index' RETURNING 1) SELECT (SELECT count(*) FROM a)",
    );
    assert_eq!(indexed(), 0);
    let (urls, _, err) = found(Path::new(url), "telescope");
    assert!(
        err.contains("indexing the crawl's pages for search: "),
        "no progress line: {err}"
    );
    assert!(!urls.is_empty(), "nothing found after indexing");
    assert_eq!(
        (indexed(), count()),
        (fetched, before),
        "rows lost or not indexed"
    );
    let (_, _, err) = found(Path::new(url), "telescope");
    assert!(!err.contains("indexing"), "indexed twice: {err}");
}

#[test]
fn a_crawl_database_made_before_search_is_indexed_when_first_searched_losing_nothing() {
    let (dir, db) = crawled();
    let old = dir.join("old.db");
    std::fs::copy(db, &old).unwrap();
    let conn = rusqlite::Connection::open(&old).unwrap();
    conn.execute_batch(
        "DROP TABLE page_fts; DROP INDEX doc_first_fetched; DROP INDEX doc_changed;
                 ALTER TABLE doc DROP COLUMN first_fetched_at;
         ALTER TABLE doc DROP COLUMN changed_at; UPDATE meta SET value = 1 WHERE key = 'schema';",
    )
    .unwrap();
    let count = |c: &rusqlite::Connection| -> (i64, i64) {
        c.query_row(
            "SELECT count(*), (SELECT count(*) FROM link) FROM doc",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    };
    let before = count(&conn);
    drop(conn);
    let out = forager()
        .arg("search")
        .arg(&old)
        .args(["star", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("indexing the crawl's pages for search: "),
        "no progress line: {err}"
    );
    let hits: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!hits.is_empty());
    let conn = rusqlite::Connection::open(&old).unwrap();
    assert_eq!(count(&conn), before, "rows lost");
    let indexed: i64 = conn
        .query_row("SELECT count(*) FROM page_fts_docsize", [], |r| r.get(0))
        .unwrap();
    let fetched: i64 = conn
        .query_row("SELECT count(*) FROM doc WHERE status = 2", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(indexed, fetched, "every fetched page indexed");
    // Searched again, nothing to index.
    let out = forager()
        .arg("search")
        .arg(&old)
        .arg("star")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("indexing"));
}

/// The URLs `forager search DB QUERY --json` finds, and its stderr.
fn found(db: &std::path::Path, query: &str) -> (Vec<String>, Vec<String>, String) {
    let out = forager()
        .arg("search")
        .arg(db)
        .args([query, "--json", "--limit", "50"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let hits: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let urls = hits
        .iter()
        .map(|h| h["url"].as_str().unwrap().to_owned())
        .collect();
    let snippets = (hits.iter()).map(|h| h["snippet"].to_string()).collect();
    (urls, snippets, err)
}

#[test]
fn an_index_that_kept_its_own_text_is_rebuilt_without_it_and_finds_the_same_pages() {
    let (dir, db) = crawled();
    let old = dir.join("old-v2.db");
    std::fs::copy(db, &old).unwrap();
    // The index as the previous build made it: with its own copy of every page's text.
    let conn = rusqlite::Connection::open(&old).unwrap();
    conn.execute_batch(
        "DROP TABLE page_fts; CREATE VIRTUAL TABLE page_fts USING fts5(
           title, body, tokenize = 'porter unicode61 remove_diacritics 2');",
    )
    .unwrap();
    let pages: Vec<(i64, Option<String>, Vec<u8>)> = conn
        .prepare("SELECT oid, title, text FROM doc WHERE status = 2")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (oid, title, text) in &pages {
        let text = forager::store::decompress_text(text).unwrap();
        conn.execute(
            "INSERT INTO page_fts(rowid, title, body) VALUES(?1, ?2, ?3)",
            rusqlite::params![oid, title.clone().unwrap_or_default(), text],
        )
        .unwrap();
    }
    let copies = |c: &rusqlite::Connection| -> i64 {
        c.query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'page_fts_content'",
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    assert_eq!(copies(&conn), 1);
    drop(conn);
    // Opened by this build: rebuilt with a progress line, without the copy.
    let (urls, snippets, err) = found(&old, "star");
    assert!(
        err.contains("indexing the crawl's pages for search: "),
        "{err}"
    );
    let conn = rusqlite::Connection::open(&old).unwrap();
    assert_eq!(copies(&conn), 0, "the index still keeps its own text");
    let indexed: i64 = conn
        .query_row("SELECT count(*) FROM page_fts_docsize", [], |r| r.get(0))
        .unwrap();
    assert_eq!(indexed as usize, pages.len(), "every fetched page indexed");
    drop(conn);
    // The same pages, in the same order, with the same marked snippets as a database made
    // by this build.
    let (want_urls, want_snippets, _) = found(db, "star");
    assert!(!urls.is_empty());
    assert_eq!(urls, want_urls);
    assert_eq!(snippets, want_snippets);
    // Snippets are [plain, marked, plain, ...]: the matched word is marked in each.
    assert!(
        snippets.iter().all(|s| s.contains(",\"star\",")),
        "{snippets:?}"
    );
    // Searched again, nothing to index.
    let (_, _, err) = found(&old, "star");
    assert!(!err.contains("indexing"), "{err}");
}
