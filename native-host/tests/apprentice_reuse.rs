//! The apprentice reused across crawls (#25, the 2002 paper's offline protocol): `forager
//! crawl --apprentice` saves what its apprentice learned beside the database, and the next
//! crawl of the same good topics starts guided by it; other topics start a new one; a file
//! that is not a saved apprentice is a cold start with a clear message, and is never replaced.
//! Crawls are `--deterministic` so that two cold starts fetch the same pages in the same order.

use std::path::Path;

mod common;
use common::{forager, tmp};

/// Crawls `task` of `web` into `db` with the apprentice, 400 pages in lockstep waves; returns
/// the fetch order and the command's stderr.
fn crawl(web: &Path, task: &str, db: &Path) -> (Vec<String>, String) {
    let log = db.with_extension("log");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let out = forager()
        .args(["crawl", "--apprentice", "--deterministic", "--pages", "400"])
        .args(["--task", task, "--web"])
        .arg(web)
        .arg("--db")
        .arg(db)
        .arg("--fetch-log")
        .arg(&log)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "crawl failed: {stderr}");
    let order = std::fs::read_to_string(&log).unwrap();
    (order.lines().map(str::to_owned).collect(), stderr)
}

fn web(dir: &Path) -> std::path::PathBuf {
    let web = dir.join("web");
    common::run(forager().args(["gen-web", "--out"]).arg(&web));
    web
}

#[test]
fn a_second_crawl_of_the_same_topics_starts_guided_and_other_topics_reset() {
    let dir = tmp("reuse");
    let web = web(&dir);
    let (first, err) = crawl(&web, "networking", &dir.join("a/first.db"));
    assert!(err.contains("none saved"), "{err}");
    assert!(err.contains("apprentice: saved"), "{err}");
    let saved = dir.join("a").join(forager::reuse::FILE_NAME);
    // The same topics again, into a new database of that directory: guided from the start.
    let (second, err) = crawl(&web, "networking", &dir.join("a/second.db"));
    assert!(err.contains("reusing the one learned"), "{err}");
    // A cold start elsewhere: the control, identical to the first crawl over the warm-up.
    let (cold, _) = crawl(&web, "networking", &dir.join("b/cold.db"));
    assert_eq!(first[..200], cold[..200], "two cold starts differ");
    let same = (0..200).filter(|&i| second[i] == cold[i]).count();
    assert!(
        same < 150,
        "the reused apprentice did not guide: {same} of 200 in place"
    );
    // Its trust goes with it: the same file with a measured trust of 0 (the header's flag and
    // f64 after the 32-byte key) leaves the start to soft focus.
    let mut untrusted = std::fs::read(&saved).unwrap();
    untrusted[42] = 1;
    untrusted[43..51].copy_from_slice(&0f64.to_le_bytes());
    std::fs::write(&saved, &untrusted).unwrap();
    let (distrusted, err) = crawl(&web, "networking", &dir.join("a/distrusted.db"));
    assert!(err.contains("trust 0.00"), "{err}");
    assert_eq!(
        distrusted[..200],
        cold[..200],
        "an apprentice of trust 0 guided"
    );
    let bytes = std::fs::read(&saved).unwrap();
    // Other good topics: a new apprentice, as a cold start of those topics, which replaces it.
    let (other, err) = crawl(&web, "finance", &dir.join("a/other.db"));
    assert!(err.contains("learned for other topics"), "{err}");
    let (other_cold, _) = crawl(&web, "finance", &dir.join("c/cold.db"));
    assert_eq!(other[..200], other_cold[..200]);
    assert_ne!(std::fs::read(&saved).unwrap(), bytes);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unreadable_apprentice_file_is_a_cold_start_in_words_and_is_kept() {
    let dir = tmp("reuse-bad");
    let web = web(&dir);
    let saved = dir.join("a").join(forager::reuse::FILE_NAME);
    std::fs::create_dir_all(saved.parent().unwrap()).unwrap();
    std::fs::write(&saved, b"notes the user keeps here\n").unwrap();
    let (order, err) = crawl(&web, "networking", &dir.join("a/x.db"));
    assert!(
        err.contains("cannot use") && err.contains("not a saved Forager apprentice"),
        "{err}"
    );
    assert!(
        err.contains("not saved") && err.contains("it is kept"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&saved).unwrap(),
        b"notes the user keeps here\n"
    );
    let (cold, _) = crawl(&web, "networking", &dir.join("b/cold.db"));
    assert_eq!(order[..200], cold[..200]);
    // A cut-short apprentice of ours: a cold start, replaced by this crawl's apprentice.
    let whole = std::fs::read(dir.join("b").join(forager::reuse::FILE_NAME)).unwrap();
    std::fs::write(&saved, &whole[..30]).unwrap();
    let (_, err) = crawl(&web, "networking", &dir.join("a/y.db"));
    assert!(
        err.contains("cannot use") && err.contains("truncated"),
        "{err}"
    );
    assert!(err.contains("apprentice: saved"), "{err}");
    let (_, err) = crawl(&web, "networking", &dir.join("a/z.db"));
    assert!(err.contains("reusing the one learned"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
