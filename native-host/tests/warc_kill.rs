//! The WARC archive and the database agree after SIGKILL (#28 defect 8): a crawl recording a
//! WARC is killed right after it commits pages (the moment a record still buffered would be
//! lost), or at pseudo-random moments, and resumed; after every kill, each page the database
//! holds as fetched has its 200 response record in the archive.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;

mod common;
use common::{forager, tmp};

/// The target URIs of the 200 response records in the archive's files (a member cut short by
/// the kill ends its file's reading).
fn archived(prefix: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for f in forager::warc::files(prefix) {
        let bytes = std::fs::read(&f).unwrap();
        let mut text = Vec::new();
        let _ = flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_end(&mut text);
        let text = String::from_utf8_lossy(&text);
        for r in text.split("WARC/1.1\r\n").skip(1) {
            if r.contains("WARC-Type: response") && r.contains("\r\n\r\nHTTP/1.1 200 OK") {
                if let Some(u) = r.lines().find_map(|l| l.strip_prefix("WARC-Target-URI: ")) {
                    out.insert(u.to_owned());
                }
            }
        }
    }
    out
}

/// The pages the database holds as fetched (none while its schema is still being made: a
/// kill can land then too).
fn fetched(db: &Path) -> BTreeSet<String> {
    let out = forager()
        .arg("sql")
        .arg(db)
        .arg("SELECT url FROM doc WHERE status = 2")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() || err.contains("no such table"),
        "{err}"
    );
    let rows = String::from_utf8_lossy(&out.stdout);
    rows.lines().skip(1).map(str::to_owned).collect()
}

#[test]
fn every_committed_page_has_its_warc_record_after_sigkill() {
    let dir = tmp("warc-kill");
    let (web, model) = common::trained_web(&dir);
    let db = dir.join("c.db");
    let prefix = dir.join("arc");
    let crawl = || {
        let mut c = forager();
        c.args([
            "crawl",
            "--task",
            "astronomy",
            "--concurrency",
            "8",
            "--web",
        ])
        .arg(&web)
        .arg("--model")
        .arg(&model)
        .arg("--db")
        .arg(&db)
        .arg("--warc")
        .arg(dir.join("arc.warc.gz"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
        c
    };
    let cycles: u64 = std::env::var("FORAGER_KILL_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let mut seed: u64 = 0x9E3779B97F4A7C15;
    let mut mid_crawl = 0;
    for cycle in 0..cycles {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let before = if db.exists() { fetched(&db).len() } else { 0 };
        let mut child = crawl().spawn().unwrap();
        if cycle % 2 == 0 {
            // Just after a commit: as soon as the database holds more fetched pages.
            let t = std::time::Instant::now();
            while t.elapsed() < std::time::Duration::from_secs(20)
                && child.try_wait().unwrap().is_none()
                && (!db.exists() || fetched(&db).len() <= before)
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        } else {
            std::thread::sleep(std::time::Duration::from_millis(300 + seed % 700));
        }
        if child.try_wait().unwrap().is_none() {
            mid_crawl += 1;
        }
        child.kill().unwrap_or(()); // SIGKILL on Unix
        child.wait().unwrap();
        let pages = fetched(&db);
        let records = archived(&prefix);
        let missing: Vec<&String> = pages.difference(&records).collect();
        assert!(
            missing.is_empty(),
            "after kill {cycle}: {} of {} committed pages have no response record: {:?}",
            missing.len(),
            pages.len(),
            &missing[..missing.len().min(5)]
        );
    }
    assert!(mid_crawl > 0, "no kill landed during a crawl");
    assert!(!fetched(&db).is_empty());
}
