//! The `forager` binary end to end on a generated web written to disk.

use std::path::{Path, PathBuf};

mod common;
use common::{forager, run, tmp, ServeWeb};

fn gen_web(dir: &Path) -> PathBuf {
    let web = dir.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    web
}

#[test]
fn train_then_classify_json() {
    let dir = tmp("train");
    let (web, model) = common::trained_web(&dir);
    // Pick a labelled page that is not an example.
    let labels = std::fs::read_to_string(web.join("labels.tsv")).unwrap();
    let examples = std::fs::read_to_string(web.join("examples.tsv")).unwrap();
    let (url, label) = labels
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .find(|(u, _)| !examples.contains(u))
        .unwrap();
    let file = forager::miniweb::file_for(&web.join("sites"), url).unwrap();
    let out = run(forager()
        .args(["classify", "--json", "--good", label, "--model"])
        .arg(&model)
        .arg(&file));
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["best_leaf"], label, "{v}");
    assert!(v["relevance"].as_f64().unwrap() > 0.5);
    assert_eq!(
        v["path"].as_array().unwrap().last().unwrap()["topic"],
        label
    );
    assert_eq!(v["input"], file.to_str().unwrap());
}

/// `train --self-train-from DB` adds confident fetched pages of a crawl as examples, and
/// `eval --self-train` scores both classifiers that way on every held-out page.
#[test]
fn self_training_from_a_crawl_and_in_eval() {
    let dir = tmp("selftrain");
    let web = gen_web(&dir);
    let db = dir.join("c.db");
    run(forager()
        .args([
            "crawl",
            "--task",
            "astronomy",
            "--pages",
            "150",
            "--deterministic",
            "--web",
        ])
        .arg(&web)
        .arg("--db")
        .arg(&db));
    let (plain, refined) = (dir.join("plain.fgm"), dir.join("refined.fgm"));
    run(forager()
        .arg("train")
        .arg("--web")
        .arg(&web)
        .arg("--out")
        .arg(&plain));
    run(forager()
        .arg("train")
        .arg("--web")
        .arg(&web)
        .arg("--out")
        .arg(&refined)
        .arg("--self-train-from")
        .arg(&db));
    let load =
        |p: &Path| forager_classifier::Model::from_bytes(&std::fs::read(p).unwrap()).unwrap();
    let (plain, refined) = (load(&plain), load(&refined));
    let fetched = run(forager()
        .arg("sql")
        .arg(&db)
        .arg("SELECT url FROM doc WHERE status = 2"));
    let fetched: std::collections::HashSet<&str> = fetched.lines().skip(1).collect();
    let old: std::collections::HashSet<String> =
        plain.examples().into_iter().map(|e| e.url).collect();
    let new: Vec<String> = refined
        .examples()
        .into_iter()
        .map(|e| e.url)
        .filter(|u| !old.contains(u))
        .collect();
    assert!(new.len() > 50, "only {} pages were added", new.len());
    assert!(new.iter().all(|u| fetched.contains(u.as_str())));

    let out = run(forager()
        .args(["eval", "--json", "--self-train", "--web"])
        .arg(&web));
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["hierarchical", "flat", "hier+self", "flat+self"]);
    for r in rows {
        assert_eq!(r["pages"], rows[0]["pages"], "{r}");
        assert!(r["leaf_accuracy"].as_f64().unwrap() > 0.9, "{r}");
    }
    // Self-trained models know words of the unlabelled pages that no example has.
    let features = |i: usize| rows[i]["features"].as_u64().unwrap();
    assert!(
        features(2) > features(0) && features(3) > features(1),
        "{v}"
    );
    let bad = forager()
        .args(["eval", "--self-train", "--self-train-min-p", "2", "--web"])
        .arg(&web)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("min_p 2 is not in [0, 1]"));
}

#[test]
fn bad_model_is_a_clear_error() {
    let dir = tmp("bad");
    let model = dir.join("bad.fgm");
    std::fs::write(&model, b"FORAGERM\x01\x00garbage").unwrap();
    let out = forager()
        .args(["classify", "--model"])
        .arg(&model)
        .arg("x.html")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad model bytes"), "{err}");
}

fn bookmarks_file(dir: &Path, web: &Path) -> PathBuf {
    let w = forager::miniweb::MiniWeb::open(web).unwrap();
    let mut html = String::from("<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n");
    for (i, topic) in ["/Science/Astronomy", "/Leisure/Cooking"]
        .iter()
        .enumerate()
    {
        html += &format!("<DT><H3>Folder {i}</H3>\n<DL><p>\n");
        for (_, u) in w.examples.iter().filter(|(t, _)| t == topic).take(5) {
            html += &format!("<DT><A HREF=\"{u}\">page</A>\n");
        }
        html += "</DL><p>\n";
    }
    html += "<DT><A HREF=\"http://nowhere.test/\">loose</A>\n</DL><p>\n";
    let file = dir.join("bookmarks.html");
    std::fs::write(&file, html).unwrap();
    file
}

#[test]
fn bookmarks_fetched_through_a_proxy() {
    let dir = tmp("bm-fetch");
    let web = gen_web(&dir);
    let file = bookmarks_file(&dir, &web);
    // One bookmark points at a dead host: it is skipped, not fatal.
    let text = std::fs::read_to_string(&file).unwrap().replacen(
        "<DT><A HREF=\"http://",
        "<DT><A HREF=\"http://dead-host.test/\">x</A>\n<DT><A HREF=\"http://",
        1,
    );
    std::fs::write(&file, text).unwrap();
    let server = ServeWeb::start(&web);
    let model = dir.join("bm.fgm");
    let out = forager()
        .arg("train")
        .arg("--bookmarks")
        .arg(&file)
        .arg("--proxy")
        .arg(format!("http://127.0.0.1:{}", server.1))
        .arg("--out")
        .arg(&model)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("dead-host.test") && err.contains("HTTP 502"),
        "{err}"
    );
    let m = forager_classifier::Model::from_bytes(&std::fs::read(&model).unwrap()).unwrap();
    assert_eq!(m.example_count(), 10);
}

#[test]
fn bookmarks_become_topics() {
    let dir = tmp("bm");
    let web = gen_web(&dir);
    let file = bookmarks_file(&dir, &web);
    let model = dir.join("bm.fgm");
    let out = forager()
        .arg("train")
        .arg("--bookmarks")
        .arg(&file)
        .arg("--web")
        .arg(&web)
        .arg("--out")
        .arg(&model)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not in a folder"));
    let m = forager_classifier::Model::from_bytes(&std::fs::read(&model).unwrap()).unwrap();
    let paths: Vec<String> = m.topics().iter().map(|t| t.path.clone()).collect();
    assert_eq!(paths, vec!["/", "/Folder 0", "/Folder 1"]);
    assert_eq!(m.example_count(), 10);
}

#[test]
fn demo_runs_on_the_embedded_default() {
    let dir = tmp("demo");
    let report = dir.join("demo.html");
    let out = run(forager()
        .args(["demo", "--pages", "400", "--report"])
        .arg(&report));
    assert!(out.contains("Harvest"), "{out}");
    assert!(
        out.contains("soft+apprentice+uncapped") && out.contains("Top hubs"),
        "{out}"
    );
    // The web has off-taxonomy regions, and both focused crawls say how far to trust them.
    assert!(out.contains("off-taxonomy regions"), "{out}");
    assert!(
        out.contains("length-aware       (soft+apprentice): precision"),
        "{out}"
    );
    assert!(
        out.contains("every word counted (soft+apprentice+uncapped): precision"),
        "{out}"
    );
    // The default focused crawl must beat breadth-first on the generated web; the one counting
    // every word is reported, not bounded, here (tests/length_aware.rs bounds it).
    let last = out
        .lines()
        .find(|l| l.trim_start().starts_with("400 "))
        .expect("a 400-page row");
    let cols: Vec<f64> = last
        .split_whitespace()
        .skip(1)
        .map(|c| c.parse().unwrap())
        .collect();
    assert!(cols[1] > cols[0], "{last}");
    // Last column: the simulated oracle, the best any link-following crawl can do.
    assert!(cols[3] >= cols[1].max(cols[2]) && cols[3] > 0.5, "{last}");
    assert!(out.contains("of the best possible"), "{out}");
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("<svg") && html.contains("Top hubs"));
}

/// Empty XDG and FORAGER_HOME variables count as unset: nothing is written relative to the
/// current directory (issue #15, defect 10).
#[test]
fn empty_environment_variables_count_as_unset() {
    let dir = tmp("empty-env");
    let home = dir.join("home");
    let cwd = dir.join("cwd");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    run(forager()
        .args(["install", "--browser", "chromium"])
        .args(["--extension-id", "abcdefghijklmnopabcdefghijklmnop"])
        .current_dir(&cwd)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", ""));
    assert!(home
        .join(".config/chromium/NativeMessagingHosts/org.forager.host.json")
        .exists());
    // The host's data directory: `starter-model` writes nothing, so ask the host itself.
    let mut host = forager()
        .arg("chrome-extension://abcdefghijklmnopabcdefghijklmnop/")
        .current_dir(&cwd)
        .env("HOME", &home)
        .env("XDG_DATA_HOME", "")
        .env("FORAGER_HOME", "")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::{Read, Write};
        let body = br#"{"id":1,"type":"hello","version":1}"#;
        let stdin = host.stdin.as_mut().unwrap();
        stdin.write_all(&(body.len() as u32).to_ne_bytes()).unwrap();
        stdin.write_all(body).unwrap();
        let edit = br#"{"id":2,"type":"add_topic","parent":0,"name":"EnvTest"}"#;
        stdin.write_all(&(edit.len() as u32).to_ne_bytes()).unwrap();
        stdin.write_all(edit).unwrap();
        stdin.flush().unwrap();
        let out = host.stdout.as_mut().unwrap();
        for _ in 0..2 {
            let mut len = [0u8; 4];
            out.read_exact(&mut len).unwrap();
            let mut b = vec![0u8; u32::from_ne_bytes(len) as usize];
            out.read_exact(&mut b).unwrap();
        }
    }
    drop(host.stdin.take());
    host.wait().unwrap();
    let entries: Vec<_> = std::fs::read_dir(&cwd).unwrap().collect();
    assert!(entries.is_empty(), "files written in the current directory");
    assert!(home.join(".local/share/forager/model.fgm").exists());
}

/// `forager export`: hubs as CSV and pages as JSON Lines agree with the crawl database.
#[test]
fn export_hubs_and_pages() {
    let dir = tmp("export");
    let web = gen_web(&dir);
    let db = dir.join("c.db");
    run(forager()
        .args(["crawl", "--task", "astronomy", "--pages", "150", "--web"])
        .arg(&web)
        .arg("--db")
        .arg(&db));
    run(forager().arg("distill").arg(&db));
    let csv = dir.join("hubs.csv");
    run(forager()
        .arg("export")
        .arg(&db)
        .args(["--what", "hubs", "--format", "csv", "--out"])
        .arg(&csv));
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("url,title,relevance,best_leaf,fetched_at,score,relevant_links,fetched_links")
    );
    let distilled = run(forager().args(["distill", "--top", "5", "--json"]).arg(&db));
    let v: serde_json::Value = serde_json::from_str(distilled.trim()).unwrap();
    let first_hub = v["hubs"][0]["url"].as_str().unwrap();
    let first_row = lines.next().unwrap();
    assert!(first_row.starts_with(first_hub), "best hub first: {text}");
    // The hub says why it ranks, in the export as in `distill`: relevant of fetched out-links.
    let why = format!(
        ",{},{}",
        v["hubs"][0]["relevant_links"], v["hubs"][0]["fetched_links"]
    );
    assert!(first_row.ends_with(&why), "{first_row} vs {why}");
    assert!(v["hubs"][0]["fetched_links"].as_i64().unwrap() > 0);
    let pages = run(forager()
        .arg("export")
        .arg(&db)
        .args(["--what", "pages", "--format", "jsonl"]));
    let rows: Vec<serde_json::Value> = (pages.lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 150);
    assert!(rows
        .iter()
        .all(|r| r["url"].is_string() && r["relevance"].is_f64() && r["fetched_at"].is_f64()));
    assert!(rows.iter().any(|r| r["best_leaf"] == "/Science/Astronomy"));
}

/// `crawl --warc`: one response record per fetched page (and its request), rotated files
/// that join into one archive, and a resumed crawl that adds files.
#[test]
fn crawl_records_a_warc_archive() {
    use std::io::Read;
    let dir = tmp("warc");
    let web = gen_web(&dir);
    let db = dir.join("c.db");
    let crawl = |pages: &str| {
        run(forager()
            .args(["crawl", "--task", "astronomy", "--pages", pages, "--web"])
            .arg(&web)
            .arg("--db")
            .arg(&db)
            .arg("--warc")
            .arg(dir.join("arc.warc.gz"))
            .args(["--warc-max-bytes", "100000"]));
    };
    crawl("120");
    let first = forager::warc::files(&dir.join("arc"));
    assert!(first.len() >= 2, "rotated: {first:?}");
    crawl("160");
    let all = forager::warc::files(&dir.join("arc"));
    assert!(all.len() > first.len(), "the resumed crawl added files");
    let mut joined = Vec::new();
    for f in &all {
        joined.extend(std::fs::read(f).unwrap());
    }
    let mut text = Vec::new();
    flate2::read::MultiGzDecoder::new(&joined[..])
        .read_to_end(&mut text)
        .unwrap();
    let text = String::from_utf8_lossy(&text);
    let ok_responses: Vec<&str> = (text.split("WARC/1.1\r\n").skip(1))
        .filter(|r| r.contains("WARC-Type: response") && r.contains("\r\n\r\nHTTP/1.1 200 OK"))
        .filter_map(|r| r.lines().find_map(|l| l.strip_prefix("WARC-Target-URI: ")))
        .collect();
    let fetched = run(forager()
        .arg("sql")
        .arg(&db)
        .arg("SELECT url FROM doc WHERE status = 2"));
    let mut fetched: Vec<&str> = fetched.lines().skip(1).collect();
    let mut got = ok_responses.clone();
    fetched.sort_unstable();
    got.sort_unstable();
    assert_eq!(got.len(), 160, "one 200 response per fetched page");
    assert_eq!(got, fetched);
    let requests = text.matches("WARC-Type: request").count();
    let responses = text.matches("WARC-Type: response").count();
    assert_eq!(requests, responses);
}

/// `crawl --new` keeps the previous database aside and starts afresh.
#[test]
fn crawl_new_keeps_the_previous_database() {
    let dir = tmp("crawl-new");
    let web = gen_web(&dir);
    let db = dir.join("c.db");
    let crawl = |extra: &[&str]| {
        run(forager()
            .args(["crawl", "--task", "astronomy", "--pages", "30", "--web"])
            .arg(&web)
            .arg("--db")
            .arg(&db)
            .args(extra));
    };
    crawl(&[]);
    crawl(&["--new"]);
    let kept: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("c-") && n.ends_with(".db")
        })
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    for p in [&kept[0], &db] {
        let n = run(forager()
            .arg("sql")
            .arg(p)
            .arg("SELECT count(*) FROM doc WHERE status = 2"));
        assert_eq!(n.lines().nth(1), Some("30"), "{}: {n}", p.display());
    }
}
