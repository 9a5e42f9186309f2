//! Searching a harvest (#30), measured: full unfocused crawls of FOLDOC by the real binary at
//! its default concurrency, with the search index on and off in alternating pairs (crawl
//! throughput: every pair and the median of their ratios, with the load before and after);
//! query latency over 200 queries and the index's share of the database, on FOLDOC and on a
//! 100k-page generated crawl (FOLDOC's texts recombined, recorded through the store with the
//! index on and off); and precision at 10 of relevant pages for 50 queries of the tasks' topic
//! words, the text score combined with R against the text score alone. With a PostgreSQL
//! server (`FORAGER_TEST_PG`, from scripts/pg-cluster.sh), the same latency and index share on
//! PostgreSQL's `tsvector` index (FOLDOC's fetched pages and the generated crawl recorded
//! through its door) and the same P@10 on a copy of the FOLDOC crawl. Prints numbers; asserts
//! only sanity. `SEARCH_BENCH_PAIRS` (default 6), `SEARCH_BENCH_PAGES` (default 100000),
//! `SEARCH_BENCH_KEEP_PG` (keep the PostgreSQL databases for a look in psql).

mod common;
use forager::miniweb::MiniWeb;
use forager::store::postgres::{testing, PgStore};
use forager::store::{
    CrawlDb, DocStatus, Locator, NewUrl, Outcome, ReadOnly, Reader, SearchRanking, Store, LEASE,
    LOCAL_WORKER,
};
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Removes a database and its companion files.
fn remove(db: &Path) {
    for ext in ["", "-wal", "-shm", ".lock"] {
        let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
    }
}

/// This run's directory of databases: each crawl's apprentice is saved beside its database,
/// and a directory of its own keeps another run's from being reused.
fn run_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("forager-sbench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A database path in [`run_dir`], nothing there.
fn fresh(name: &str) -> PathBuf {
    let db = run_dir().join(format!("{name}.db"));
    remove(&db);
    db
}

/// A full unfocused crawl of the web behind `proxy` by the real binary: (pages, seconds).
fn crawl(db: &Path, model: &Path, proxy: &str, seeds: &[String], index: bool) -> (u64, f64) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_forager"));
    cmd.args([
        "crawl",
        "--mode",
        "unfocused",
        "--delay",
        "0",
        "--proxy",
        proxy,
        // Each crawl as a user's first: none reuses the apprentice the one before it saved.
        "--fresh-apprentice",
    ])
    .arg("--model")
    .arg(model)
    .arg("--db")
    .arg(db)
    .args(["--good", "/Computing/Networking"]);
    if !index {
        cmd.env("FORAGER_SEARCH_INDEX", "off");
    }
    for s in seeds {
        cmd.args(["--seed", s]);
    }
    let t = Instant::now();
    let out = cmd.output().unwrap();
    let secs = t.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err.lines().last().unwrap_or("");
    let fetched = (last.split("fetched ").nth(1))
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    (fetched, secs)
}

/// Median and worst latency in ms of `queries` on `db` (each query's best of three runs).
fn latency(db: &Path, queries: &[String]) -> (f64, f64, usize) {
    latency_of(&ReadOnly::open(db).unwrap().read(), queries)
}

/// Median and worst latency in ms of `queries` read by `r` (each query's best of three runs).
fn latency_of(r: &dyn Reader, queries: &[String]) -> (f64, f64, usize) {
    let mut ms = Vec::new();
    let mut each = Vec::new();
    let mut hits = 0;
    // Each query's best of three runs: its own cost, not a pause of the shared machine.
    for q in queries {
        let mut best = f64::INFINITY;
        for run in 0..3 {
            let t = Instant::now();
            let n = (r.search(q, 10, SearchRanking::Combined)).map_or(0, |h| h.len());
            best = best.min(t.elapsed().as_secs_f64() * 1e3);
            if run == 0 {
                hits += n;
            }
        }
        ms.push(best);
        each.push((best, q.as_str()));
    }
    each.sort_by(|a, b| b.0.total_cmp(&a.0));
    let slowest: Vec<String> = (each.iter().take(5))
        .map(|(t, q)| format!("{q:?} {t:.1} ms"))
        .collect();
    println!("    slowest: {}", slowest.join(", "));
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], ms[ms.len() - 1], hits)
}

/// 200 queries a user might type over `db`'s titles: single words, pairs, and a prefix.
fn user_queries(db: &Path) -> Vec<String> {
    let conn = Store::open_read_only(db).unwrap();
    let mut st = conn
        .prepare("SELECT title FROM doc WHERE status = 2 AND title IS NOT NULL ORDER BY oid")
        .unwrap();
    let mut words: Vec<String> = (st
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .flatten())
    .flat_map(|t| {
        t.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() >= 4)
            .map(str::to_lowercase)
            .collect::<Vec<_>>()
    })
    .collect();
    words.sort();
    words.dedup();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(30);
    let mut pick = || words[rng.random_range(0..words.len())].clone();
    let mut q = Vec::new();
    for i in 0..200 {
        q.push(match i % 4 {
            0 | 1 => format!("{} ", pick()),
            2 => format!("{} {} ", pick(), pick()),
            _ => pick().chars().take(4).collect(),
        });
    }
    q
}

/// Index bytes, database bytes.
fn sizes(db: &Path) -> (i64, i64) {
    ReadOnly::open(db)
        .unwrap()
        .read()
        .search_index_bytes()
        .unwrap()
}

/// The words of `text` a query may use: lower case, letters only, 4 letters or more.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    (text.split(|c: char| !c.is_alphabetic()))
        .filter(|w| w.chars().count() >= 4)
        .map(str::to_lowercase)
}

/// 50 queries of the tasks' topic words, shared round-robin among the tasks: (task index,
/// query). A task's topic words are the words of its good topics' titles, then the words its
/// good topics' examples use most distinctly (in at least 3 of them, by the share of its
/// examples holding the word over the share of all examples holding it), one word a query.
fn topic_queries(web: &MiniWeb, db: &Path) -> Vec<(usize, String)> {
    use std::collections::{HashMap, HashSet};
    let ro = ReadOnly::open(db).unwrap();
    let is_good = |t: &forager::miniweb::Task, path: &str| {
        t.good
            .iter()
            .any(|g| path == g || path.starts_with(&format!("{g}/")))
    };
    // Document frequency of each word in each example's stored text, by topic.
    let mut df: HashMap<String, HashMap<String, usize>> = HashMap::new();
    let mut n: HashMap<String, usize> = HashMap::new();
    for (topic, url) in &web.examples {
        let Some(text) = ro.read().fetched_text(url).unwrap() else {
            continue;
        };
        *n.entry(topic.clone()).or_default() += 1;
        let seen: HashSet<String> = words(&text).collect();
        let d = df.entry(topic.clone()).or_default();
        for w in seen {
            *d.entry(w).or_default() += 1;
        }
    }
    let n_all: usize = n.values().sum();
    let mut all: HashMap<&str, usize> = HashMap::new();
    for d in df.values() {
        for (w, k) in d {
            *all.entry(w).or_default() += k;
        }
    }
    let per_task: Vec<Vec<String>> = (web.tasks.iter())
        .map(|t| {
            let mut qs: Vec<String> = Vec::new();
            for (path, title) in &web.topics {
                if is_good(t, path) {
                    qs.extend(words(title).filter(|w| w != "other"));
                }
            }
            let mut good: HashMap<&str, usize> = HashMap::new();
            let mut n_good = 0;
            for (topic, d) in &df {
                if is_good(t, topic) {
                    n_good += n[topic];
                    for (w, k) in d {
                        *good.entry(w).or_default() += k;
                    }
                }
            }
            let mut scored: Vec<(f64, &str)> = (good.iter())
                .filter(|(_, k)| **k >= 3)
                .map(|(w, k)| {
                    let share = *k as f64 / n_good.max(1) as f64;
                    (share / (all[w] as f64 / n_all as f64), *w)
                })
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
            for (_, w) in scored {
                if !qs.iter().any(|q| q == w) {
                    qs.push(w.to_owned());
                }
            }
            qs.into_iter().map(|w| format!("{w} ")).collect()
        })
        .collect();
    let mut out = Vec::new();
    let mut k = 0;
    while out.len() < 50 && k < 10_000 {
        let t = k % per_task.len();
        if let Some(q) = per_task[t].get(k / per_task.len()) {
            out.push((t, q.clone()));
        }
        k += 1;
    }
    out
}

/// A copy of the SQLite crawl `base` in a new database of the PostgreSQL test server (when
/// one is set), made by `forager db copy`'s code.
fn postgres_copy(base: &Path) -> Option<testing::TestDb> {
    let server = std::env::var(testing::SERVER_VAR)
        .ok()
        .filter(|s| !s.is_empty())?;
    let db = testing::TestDb::create(&server, "sbench-p10");
    let from = forager::store::copy::open(&Locator::Sqlite(base.to_owned())).unwrap();
    let mut to = forager::store::copy::open(&Locator::Postgres(db.url().to_owned())).unwrap();
    forager::store::copy::copy(
        &*from,
        &mut *to,
        "the bench's database",
        false,
        &mut |_, _| {},
    )
    .unwrap();
    drop(to);
    // Opening it builds its search index.
    drop(PgStore::open(db.url()).unwrap());
    Some(db)
}

/// P@10 of relevant pages (the web's labels for the task) for each ranking, averaged, on the
/// SQLite crawl `base` and, when given, its copy on PostgreSQL (`pg`, re-judged the same way).
fn precision(web: &MiniWeb, base: &Path, model: &forager_classifier::Model, pg: Option<&str>) {
    let queries = topic_queries(web, base);
    // SQLite combined, text alone; PostgreSQL combined, text alone.
    let mut sums = [0.0f64; 4];
    let mut differ = 0;
    let mut pg_store = pg.map(|url| PgStore::open(url).unwrap());
    for (t, task) in web.tasks.iter().enumerate() {
        let db = fresh(&format!("task-{}", task.name));
        std::fs::copy(base, &db).unwrap();
        let mut m = model.clone();
        m.set_good_paths(&task.good).unwrap();
        let judge = forager::crawl::Judge::of(&mut m);
        let mut st = Store::open(&db).unwrap();
        forager::crawl::rejudge(&mut st, &judge, forager::crawl::Mode::Soft, false).unwrap();
        drop(st);
        if let Some(pg) = pg_store.as_mut() {
            forager::crawl::rejudge(pg, &judge, forager::crawl::Mode::Soft, false).unwrap();
        }
        let ro = ReadOnly::open(&db).unwrap();
        let sqlite = ro.read();
        let mut readers: Vec<&dyn Reader> = vec![&sqlite];
        if let Some(pg) = pg_store.as_ref() {
            readers.push(pg);
        }
        for (_, q) in queries.iter().filter(|(i, _)| *i == t) {
            for (b, r) in readers.iter().enumerate() {
                let mut lists = Vec::new();
                for (k, ranking) in [SearchRanking::Combined, SearchRanking::TextOnly]
                    .into_iter()
                    .enumerate()
                {
                    let hits = r.search(q, 10, ranking).unwrap();
                    let rel = hits
                        .iter()
                        .filter(|h| web.is_relevant(&h.url, &task.good))
                        .count();
                    sums[2 * b + k] += rel as f64 / 10.0;
                    lists.push(hits.into_iter().map(|h| h.url).collect::<Vec<_>>());
                }
                differ += usize::from(b == 0 && lists[0] != lists[1]);
            }
        }
        drop(ro);
        remove(&db);
    }
    let n = queries.len() as f64;
    println!(
        "  ranking, FOLDOC, {} queries of the tasks' topic words (R re-judged per task):",
        queries.len()
    );
    println!("    SQLite P@10 BM25 + ln R (combined): {:.3}", sums[0] / n);
    println!("    SQLite P@10 BM25 alone:             {:.3}", sums[1] / n);
    if pg_store.is_some() {
        println!(
            "    PostgreSQL P@10 ts_rank_cd + ln R (combined): {:.3}",
            sums[2] / n
        );
        println!(
            "    PostgreSQL P@10 ts_rank_cd alone:             {:.3}",
            sums[3] / n
        );
    }
    println!("    queries whose top 10 differ (SQLite): {differ}");
    let shown: Vec<&str> = queries.iter().map(|(_, q)| q.trim()).collect();
    println!("    queries: {}", shown.join(", "));
}

/// A `pages`-page crawl recorded through `store`'s door from FOLDOC's fetched pages in
/// `source`: each page the text of one FOLDOC page (in turn) and, when `recombine`, of a
/// random other, with the first one's R and title. Returns the seconds spent recording.
fn generated(source: &Path, store: &mut dyn CrawlDb, pages: usize, recombine: bool) -> f64 {
    let conn = Store::open_read_only(source).unwrap();
    let mut st = conn
        .prepare("SELECT title, text, relevance, log_relevance, cid FROM doc WHERE status = 2 AND text IS NOT NULL ORDER BY fetch_seq")
        .unwrap();
    type Row = (Option<String>, String, f64, Option<f64>, Option<i64>);
    let rows: Vec<Row> = (st.query_map([], |r| {
        let blob: Vec<u8> = r.get(1)?;
        Ok((
            r.get(0)?,
            forager::store::decompress_text(&blob).unwrap_or_default(),
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
        ))
    }))
    .unwrap()
    .flatten()
    .collect();
    let seeds: Vec<NewUrl> = (0..pages)
        .map(|i| NewUrl {
            url: format!("http://gen{}.test/p{i}", i % 997),
            host: format!("gen{}.test", i % 997),
            score: 1.0,
            depth: 0,
            via: None,
            features: None,
            weight: 1.0,
        })
        .collect();
    for chunk in seeds.chunks(10_000) {
        store.add_seeds(chunk).unwrap();
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(100);
    let mut secs = 0.0;
    let mut i = 0;
    loop {
        let work = store.checkout(LOCAL_WORKER, 256, LEASE).unwrap();
        if work.is_empty() {
            break;
        }
        let batch: Vec<Outcome> = (work.iter())
            .map(|w| {
                let (title, text, r, lr, cid) = &rows[i % rows.len()];
                let text = if recombine {
                    format!("{text}\n{}", rows[rng.random_range(0..rows.len())].1)
                } else {
                    text.clone()
                };
                i += 1;
                Outcome {
                    oid: w.oid,
                    status: DocStatus::Fetched,
                    http_status: Some(200),
                    relevance: *r,
                    log_relevance: lr.unwrap_or(f64::NEG_INFINITY),
                    cid: *cid,
                    title: title.clone(),
                    text: Some(text),
                    content_hash: Some(format!("{i:x}")),
                    ..Outcome::default()
                }
            })
            .collect();
        let t = Instant::now();
        store.record(&batch).unwrap();
        secs += t.elapsed().as_secs_f64();
    }
    secs
}

/// A SQLite crawl database at `db` recorded by [`generated`], the index kept or not.
fn generated_sqlite(source: &Path, db: &Path, pages: usize, index: bool) -> f64 {
    let mut store = Store::open(db).unwrap();
    store.keep_search_index(index);
    generated(source, &mut store, pages, true)
}

/// The PostgreSQL rows: FOLDOC's `foldoc` fetched pages (from the SQLite crawl `on`) and the
/// `pages`-page generated crawl recorded into databases of the test server, then the same
/// measures as SQLite's (queries from the SQLite twins `on` and `gen_on`).
fn postgres_rows(on: &Path, foldoc: usize, gen_on: &Path, pages: usize) {
    let Some(server) = std::env::var(testing::SERVER_VAR)
        .ok()
        .filter(|s| !s.is_empty())
    else {
        println!("  PostgreSQL: skipped ({} is not set)", testing::SERVER_VAR);
        return;
    };
    for (name, source, n, recombine, queries_from) in [
        ("FOLDOC", on, foldoc, false, on),
        ("generated", on, pages, true, gen_on),
    ] {
        let db = testing::TestDb::create(&server, &format!("sbench-{name}"));
        let mut store = PgStore::open(db.url()).unwrap();
        let secs = generated(source, &mut store, n, recombine);
        let (ix, all) = store.search_index_bytes().unwrap();
        println!(
            "  PostgreSQL {name} ({n} pages): recorded {:.0} pages/s; index (table + GIN) {:.1} MB of a {:.1} MB database = {:.1}%",
            n as f64 / secs,
            ix as f64 / 1e6,
            all as f64 / 1e6,
            100.0 * ix as f64 / all as f64
        );
        let queries = user_queries(queries_from);
        let (med, worst, hits) = latency_of(&store, &queries);
        println!("  PostgreSQL {name} ({n} pages), 200 queries (best of 3 runs each): median {med:.2} ms, worst {worst:.2} ms ({hits} hits)");
        if std::env::var_os("SEARCH_BENCH_KEEP_PG").is_some() {
            // Kept for a look in psql; dropped with the test server.
            println!("  kept: {}", db.url());
            std::mem::forget(db);
        }
    }
}

/// The database's bytes with the index as the previous build made it (its own copy of every
/// page's title and text), measured on a copy of `db`: (index bytes, database bytes).
fn sizes_with_text_copy(db: &Path) -> (i64, i64) {
    let copy = fresh("text-copy");
    std::fs::copy(db, &copy).unwrap();
    let mut conn = rusqlite::Connection::open(&copy).unwrap();
    let tx = conn.transaction().unwrap();
    tx.execute_batch(
        "DROP TABLE page_fts; CREATE VIRTUAL TABLE page_fts USING fts5(
           title, body, tokenize = 'porter unicode61 remove_diacritics 2');",
    )
    .unwrap();
    {
        let mut st = tx
            .prepare("SELECT oid, title, text FROM doc WHERE status = 2")
            .unwrap();
        let mut ins = tx
            .prepare("INSERT INTO page_fts(rowid, title, body) VALUES(?1, ?2, ?3)")
            .unwrap();
        let mut rows = st.query([]).unwrap();
        while let Some(r) = rows.next().unwrap() {
            let (oid, title): (i64, Option<String>) = (r.get(0).unwrap(), r.get(1).unwrap());
            let blob: Option<Vec<u8>> = r.get(2).unwrap();
            let text = blob
                .as_deref()
                .and_then(forager::store::decompress_text)
                .unwrap_or_default();
            ins.execute(rusqlite::params![oid, title.unwrap_or_default(), text])
                .unwrap();
        }
    }
    tx.commit().unwrap();
    conn.execute_batch("VACUUM").unwrap();
    drop(conn);
    let s = sizes(&copy);
    remove(&copy);
    s
}

/// Prints the index's share of `db` now and as the previous build's index (with its own copy
/// of the text) made it, both after a VACUUM.
fn print_sizes(name: &str, db: &Path) {
    let vacuumed = fresh("vacuumed");
    std::fs::copy(db, &vacuumed).unwrap();
    rusqlite::Connection::open(&vacuumed)
        .unwrap()
        .execute_batch("VACUUM")
        .unwrap();
    let (ix, all) = sizes(&vacuumed);
    remove(&vacuumed);
    let (old_ix, old_all) = sizes_with_text_copy(db);
    let mb = |b: i64| b as f64 / 1e6;
    println!(
        "  {name} index: {:.1} MB of a {:.1} MB database = {:.1}% (an index with its own text: {:.1} MB of {:.1} MB = {:.1}%)",
        mb(ix),
        mb(all),
        100.0 * ix as f64 / all as f64,
        mb(old_ix),
        mb(old_all),
        100.0 * old_ix as f64 / old_all as f64
    );
}

/// The machine's load averages (1, 5, 15 minutes), from `/proc/loadavg`.
fn load() -> String {
    let s = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    s.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// Full crawls with the index on and off in pairs, one after the other, the order alternating
/// (on-off, off-on, ...) so a drift of the machine's load favours neither side; prints every
/// pair, the median of the pairs' ratios (robust to a pair the load disturbed) and the load
/// before and after. `SEARCH_BENCH_PAIRS` pairs (default 6). Returns the pages of the last
/// crawl at `on`, which is kept.
fn throughput(on: &Path, off: &Path, model: &Path, proxy: &str, seeds: &[String]) -> u64 {
    let pairs: usize = std::env::var("SEARCH_BENCH_PAIRS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6);
    println!("  load average before: {}", load());
    let mut slower = Vec::new();
    let mut n_on = 0;
    for pair in 0..pairs.max(1) {
        let order = if pair % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        };
        let mut pps = [0.0f64; 2];
        for index in order {
            let db = if index { on } else { off };
            remove(db);
            let (n, secs) = crawl(db, model, proxy, seeds, index);
            if index {
                n_on = n;
            }
            pps[usize::from(!index)] = n as f64 / secs;
        }
        let pct = (1.0 - pps[0] / pps[1]) * 100.0;
        println!(
            "  pair {} ({}): index on {:5.0} pages/s, off {:5.0} pages/s: {pct:+5.1}% slower",
            pair + 1,
            if order[0] { "on first " } else { "off first" },
            pps[0],
            pps[1]
        );
        slower.push(pct);
    }
    println!("  load average after: {}", load());
    slower.sort_by(f64::total_cmp);
    let mid = slower.len() / 2;
    let median = if slower.len() % 2 == 0 {
        (slower[mid - 1] + slower[mid]) / 2.0
    } else {
        slower[mid]
    };
    println!(
        "  the crawl with the index is {median:.1}% slower, median of {} pairs (goal: under 10%)",
        slower.len()
    );
    n_on
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let Some(dir) = common::foldoc_dir() else {
        println!("search bench: FOLDOC mini-web not found, skipped");
        return;
    };
    let web = MiniWeb::open(&dir).unwrap();
    let (model, _) =
        forager::training::from_miniweb(&web, Default::default(), Default::default()).unwrap();
    let model_path = fresh("model").with_extension("fgm");
    std::fs::write(&model_path, model.to_bytes()).unwrap();
    let seeds: Vec<String> = (web.tasks.iter()).flat_map(|t| t.seeds.clone()).collect();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt
        .block_on(forager::serve::start(
            MiniWeb::open(&dir).unwrap(),
            "127.0.0.1:0".parse().unwrap(),
        ))
        .unwrap();
    let proxy = server.proxy_url();
    println!(
        "search bench: full unfocused crawls of FOLDOC through serve-web on loopback, delay 0"
    );
    let (on, off) = (fresh("on"), fresh("off"));
    let n_on = throughput(&on, &off, &model_path, &proxy, &seeds);
    rt.block_on(server.shutdown());
    assert!(n_on > 10_000, "the full crawl fetched only {n_on} pages");
    print_sizes("FOLDOC", &on);
    let queries = user_queries(&on);
    let (med, worst, hits) = latency(&on, &queries);
    println!("  FOLDOC ({n_on} pages), 200 queries (best of 3 runs each): median {med:.2} ms, worst {worst:.2} ms ({hits} hits)");
    let pg_copy = postgres_copy(&on);
    precision(&web, &on, &model, pg_copy.as_ref().map(|d| d.url()));
    drop(pg_copy);
    let pages: usize = std::env::var("SEARCH_BENCH_PAGES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let gen_on = fresh("gen-on");
    let gen_off = fresh("gen-off");
    let rec_on = generated_sqlite(&on, &gen_on, pages, true);
    let rec_off = generated_sqlite(&on, &gen_off, pages, false);
    println!(
        "  generated crawl of {pages} pages: recording {:.0} pages/s with the index, {:.0} without ({:.1}% slower)",
        pages as f64 / rec_on,
        pages as f64 / rec_off,
        (1.0 - rec_off / rec_on) * 100.0
    );
    print_sizes("generated", &gen_on);
    let queries = user_queries(&gen_on);
    let (med, worst, hits) = latency(&gen_on, &queries);
    println!("  generated ({pages} pages), 200 queries (best of 3 runs each): median {med:.2} ms, worst {worst:.2} ms ({hits} hits)");
    postgres_rows(&on, n_on as usize, &gen_on, pages);
    for p in [on, off, gen_on, gen_off, model_path] {
        remove(&p);
    }
    let _ = std::fs::remove_dir_all(run_dir());
}
