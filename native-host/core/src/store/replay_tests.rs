//! Replays a finished crawl's records into a fresh store and times `Store::record` alone (#27):
//! the record's CPU per page without the crawl around it, for profiles and before/after pairs.
//! `FORAGER_REPLAY=<crawl.db> cargo test --release -p forager-core --lib store::record::replay -- --ignored --nocapture`
//! (`FORAGER_REPLAY_BATCH`: outcomes per record, 64 as the crawl's batches;
//! `FORAGER_REPLAY_DROP=text,links,features,score` leaves those out, to see what they cost). The fetched pages
//! are recorded in the crawl's fetch order, each with its title, text and the links the crawl
//! stored from it (frontier score: the page's relevance times the link's weight).

use crate::store::{features::FeatureDict, NewUrl, Outcome, PageId, Store};
use crate::store::{remove_db, temp_db, url_key::url_key, DocStatus};
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// A fetched page of the source crawl, as its record had it.
struct Page {
    url: String,
    depth: i64,
    outcome: Outcome,
}

/// The source crawl's links by source page: (target URL, target depth, anchor, features, weight).
type Links = HashMap<i64, Vec<(String, i64, Option<String>, Option<Vec<u32>>, f64)>>;

fn links_of(src: &Connection) -> Links {
    let mut dict = FeatureDict::load(src).unwrap();
    let mut st = src
        .prepare(
            "SELECT l.oid_src, d.url, d.depth, l.anchor, l.features, l.weight
             FROM link l JOIN doc d ON d.oid = l.oid_dst",
        )
        .unwrap();
    let mut rows = st.query([]).unwrap();
    let mut out = Links::new();
    while let Some(r) = rows.next().unwrap() {
        let blob: Option<Vec<u8>> = r.get(4).unwrap();
        let features = blob.and_then(|b| dict.decode_on(src, &b).unwrap());
        out.entry(r.get(0).unwrap()).or_default().push((
            r.get(1).unwrap(),
            r.get(2).unwrap(),
            r.get(3).unwrap(),
            features,
            r.get(5).unwrap(),
        ));
    }
    out
}

fn pages_of(src: &Connection) -> Vec<Page> {
    let mut links = links_of(src);
    let mut st = src
        .prepare(
            "SELECT oid, url, depth, relevance, log_relevance, cid, title, text, content_hash,
                    http_status, final_url, redirects
             FROM doc WHERE fetch_seq IS NOT NULL ORDER BY fetch_seq",
        )
        .unwrap();
    let rows = st
        .query_map([], |r| {
            let oid: i64 = r.get(0)?;
            let relevance: f64 = r.get(3)?;
            let depth: i64 = r.get(2)?;
            let text: Option<Vec<u8>> = r.get(7)?;
            let redirects: Option<String> = r.get(11)?;
            Ok((
                oid,
                Page {
                    url: r.get(1)?,
                    depth,
                    outcome: Outcome {
                        status: DocStatus::Fetched,
                        relevance,
                        log_relevance: r.get(4)?,
                        cid: r.get(5)?,
                        title: r.get(6)?,
                        text: text.as_deref().and_then(crate::store::decompress_text),
                        content_hash: r.get(8)?,
                        http_status: r.get(9)?,
                        final_url: r.get(10)?,
                        redirects: redirects
                            .map(|s| s.split(' ').map(str::to_owned).collect())
                            .unwrap_or_default(),
                        ..Outcome::default()
                    },
                },
            ))
        })
        .unwrap();
    let mut pages = Vec::new();
    for row in rows {
        let (oid, mut p) = row.unwrap();
        for (url, depth, anchor, features, weight) in links.remove(&oid).unwrap_or_default() {
            let Ok(u) = url::Url::parse(&url) else {
                continue;
            };
            p.outcome.links.push(NewUrl {
                score: p.outcome.relevance * weight,
                depth,
                via: anchor.map(|a| (PageId::from_raw(0), a)),
                features,
                weight,
                ..NewUrl::seed(&u)
            });
        }
        pages.push(p);
    }
    pages
}

/// The row of `url` in the store replayed into, put in the frontier when the source crawl
/// reached it otherwise (a seed, a redirect's target).
fn oid_in(st: &mut Store, url: &str, depth: i64) -> i64 {
    let find = |st: &Store| -> Option<i64> {
        st.conn()
            .query_row(
                "SELECT oid FROM doc WHERE rnd = ?1 AND url = ?2",
                params![url_key(url), url],
                |r| r.get(0),
            )
            .optional()
            .unwrap()
    };
    if let Some(oid) = find(st) {
        return oid;
    }
    let u = url::Url::parse(url).unwrap();
    st.add_seeds(&[NewUrl {
        depth,
        ..NewUrl::seed(&u)
    }])
    .unwrap();
    find(st).unwrap()
}

/// What leaving parts of the pages out (`FORAGER_REPLAY_DROP`) makes of them.
fn leave_out(pages: &mut [Page], what: &str) {
    for p in pages {
        let o = &mut p.outcome;
        if what.contains("text") {
            o.text = None;
        }
        if what.contains("links") {
            o.links.clear();
        }
        for l in &mut o.links {
            if what.contains("features") {
                l.features = None;
            }
            if what.contains("score") {
                l.score = 0.0;
            }
        }
    }
}

/// A fresh store at `path`, with the page size and SQL the knobs ask for.
fn fresh_store(path: &std::path::Path) -> Store {
    if let Ok(size) = std::env::var("FORAGER_REPLAY_PAGE_SIZE") {
        let c = Connection::open(path).unwrap();
        let sql =
            format!("PRAGMA page_size = {size}; CREATE TABLE scratch(x); DROP TABLE scratch;");
        c.execute_batch(&sql).unwrap();
    }
    let st = Store::open(path).unwrap();
    // A change of schema or pragmas to try: `FORAGER_REPLAY_SQL="DROP INDEX link_dst"`.
    if let Ok(sql) = std::env::var("FORAGER_REPLAY_SQL") {
        st.conn().execute_batch(&sql).unwrap();
    }
    st
}

/// The outcome of `p` with the ids of the store replayed into.
fn outcome_in(st: &mut Store, p: &Page) -> Outcome {
    let oid = PageId::from_raw(oid_in(st, &p.url, p.depth));
    let mut o = p.outcome.clone();
    o.oid = oid;
    for l in &mut o.links {
        if let Some(v) = &mut l.via {
            v.0 = oid;
        }
    }
    o
}

#[test]
#[ignore = "a measurement: FORAGER_REPLAY=<crawl.db>"]
fn replay() {
    let Some(source) = std::env::var_os("FORAGER_REPLAY") else {
        eprintln!("replay: FORAGER_REPLAY not set, skipped");
        return;
    };
    let batch: usize = std::env::var("FORAGER_REPLAY_BATCH")
        .ok()
        .and_then(|b| b.parse().ok())
        .unwrap_or(64);
    let src =
        Connection::open_with_flags(&source, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut pages = pages_of(&src);
    leave_out(
        &mut pages,
        &std::env::var("FORAGER_REPLAY_DROP").unwrap_or_default(),
    );
    let links: usize = pages.iter().map(|p| p.outcome.links.len()).sum();
    let path = temp_db("replay", "record");
    let mut st = fresh_store(&path);
    let (mut wall, mut cpu, mut written, mut records) = (Duration::ZERO, Duration::ZERO, 0, 0);
    for chunk in pages.chunks(batch) {
        let outcomes: Vec<Outcome> = chunk.iter().map(|p| outcome_in(&mut st, p)).collect();
        let (t, c, w) = (Instant::now(), thread_cpu(), thread_written());
        st.record(&outcomes).unwrap();
        wall += t.elapsed();
        cpu += thread_cpu() - c;
        written += thread_written() - w;
        records += 1;
    }
    let fetched = st.fetched().unwrap();
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    drop(st);
    remove_db(&path);
    let (n, ms) = (pages.len() as f64, |d: Duration| 1e3 * d.as_secs_f64());
    eprintln!(
        "replay: {} pages, {links} links, {records} records of {batch}: record {:.3} s = {:.4} \
         ms/page ({:.2} ms/record), its CPU {:.4} ms/page, it wrote {:.1} KB/page; db {} MB",
        pages.len(),
        wall.as_secs_f64(),
        ms(wall) / n,
        ms(wall) / f64::from(records.max(1)),
        ms(cpu) / n,
        written as f64 / 1024.0 / n,
        size >> 20,
    );
    assert_eq!(fetched as usize, pages.len());
}

/// CPU time of the calling thread so far (its scheduler statistics, in nanoseconds).
fn thread_cpu() -> Duration {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let ns = s.split_whitespace().next().and_then(|v| v.parse().ok());
    Duration::from_nanos(ns.unwrap_or(0))
}

/// Bytes the calling thread has written so far (`wchar`: the log's frames, any checkpoint).
fn thread_written() -> u64 {
    let s = std::fs::read_to_string("/proc/thread-self/io").unwrap_or_default();
    let w = s.lines().find_map(|l| l.strip_prefix("wchar: "));
    w.and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}
