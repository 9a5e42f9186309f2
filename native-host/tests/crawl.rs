//! Crawls of the generated web through the in-process loopback server, via the real binary.

use std::path::Path;

mod common;
use common::{forager, run, tmp};

/// Crawls `pages` pages of the astronomy task in `mode`; returns the fetch log.
fn crawl(dir: &Path, web: &Path, mode: &str, pages: u32) -> Vec<String> {
    crawl_with(dir, web, mode, pages, &[])
}

/// Like [`crawl`], with extra arguments; the database is named after mode and arguments.
fn crawl_with(dir: &Path, web: &Path, mode: &str, pages: u32, extra: &[&str]) -> Vec<String> {
    let name = format!("{mode}{}", extra.join("").replace('-', ""));
    let db = dir.join(format!("{name}.db"));
    let log = dir.join(format!("{name}.log"));
    let pages = pages.to_string();
    run(forager()
        .args([
            "crawl",
            "--task",
            "astronomy",
            "--mode",
            mode,
            "--pages",
            &pages,
        ])
        .args(extra)
        // Each crawl of a test starts a new apprentice (none reused from an earlier one).
        .arg("--fresh-apprentice")
        .arg("--web")
        .arg(web)
        .arg("--db")
        .arg(&db)
        .arg("--fetch-log")
        .arg(&log));
    std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn soft_focus_beats_bfs_and_obeys_robots() {
    let dir = tmp("soft");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    let w = forager::miniweb::MiniWeb::open(&web).unwrap();
    let good = w.task("astronomy").unwrap().good.clone();
    let harvest = |log: &[String]| {
        log.iter().filter(|u| w.is_relevant(u, &good)).count() as f64 / log.len() as f64
    };
    let soft = crawl(&dir, &web, "soft", 800);
    let bfs = crawl(&dir, &web, "bfs", 800);
    assert_eq!(soft.len(), 800, "the page budget is exact");
    assert_eq!(bfs.len(), 800);
    let (hs, hb) = (harvest(&soft), harvest(&bfs));
    assert!(hs > hb + 0.05, "soft {hs:.3} vs bfs {hb:.3}");
    assert!(
        soft.iter().all(|u| !u.contains("/private/")),
        "robots.txt ignored"
    );
    let mut uniq = soft.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), soft.len(), "a page was fetched twice");

    // The paper's queries run as written (modulo the table prefix), read-only.
    let db = dir.join("soft.db");
    let out = run(forager()
        .arg("sql")
        .arg(&db)
        .arg("select num_tries, count(*) from arc.doc group by num_tries"));
    assert!(out.starts_with("num_tries\tcount(*)\n0\t"), "{out}");
    let census = run(forager().arg("sql").arg(&db).arg(
        "with census(cid,cnt) as (select cid,count(oid) from arc.doc group by cid) \
         select cid,cnt,kcname from census,arc.cidmap where cid=kcid order by cnt",
    ));
    assert!(census.contains("Astronomy"), "{census}");
    let denied = forager()
        .arg("sql")
        .arg(&db)
        .arg("delete from doc")
        .output()
        .unwrap();
    assert!(!denied.status.success(), "sql must be read-only");
    let status = run(forager().arg("status").arg(&db).arg("--json"));
    let v: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(v["fetched"], 800);

    // Resuming with a larger budget continues where it stopped, refetching nothing.
    let more = crawl(&dir, &web, "soft", 1000);
    assert_eq!(more.len(), 1000);
    let mut all = more.clone();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 1000, "resume refetched pages");
    assert_eq!(&more[..800], &soft[..]);
}

#[test]
fn hard_focus_stays_on_topic_and_frontier_stays_small() {
    let dir = tmp("hard");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    let hard = crawl(&dir, &web, "hard", 300);
    let db = dir.join("hard.db");
    let soft_db_frontier = {
        crawl(&dir, &web, "soft", 300);
        run(forager()
            .arg("sql")
            .arg(dir.join("soft.db"))
            .arg("select count(*) from doc where status = 0"))
    };
    let hard_frontier = run(forager()
        .arg("sql")
        .arg(&db)
        .arg("select count(*) from doc where status = 0"));
    let n = |s: &str| s.lines().nth(1).unwrap().parse::<i64>().unwrap();
    assert_eq!(hard.len(), 300);
    assert!(
        n(&hard_frontier) < n(&soft_db_frontier),
        "hard {hard_frontier} soft {soft_db_frontier}"
    );
}

/// The set of fetched URLs of a crawl database, and whether SQLite finds it intact.
fn fetched_set(db: &Path) -> (std::collections::BTreeSet<String>, String) {
    let conn = forager::store::Store::open_read_only(db).unwrap();
    let set = conn
        .prepare("SELECT url FROM doc WHERE status = 2")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    (set, check)
}

/// Kills a real crawl process with SIGKILL at pseudo-random moments, resumes it each time, and
/// checks that nothing fetched is lost or fetched twice and the end state equals an
/// uninterrupted crawl. `FORAGER_KILL_CYCLES` (default 3) sets the number of kills.
#[test]
fn survives_sigkill_and_resumes() {
    let dir = tmp("kill");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    let args = |db: &Path, log: &Path| {
        let mut c = forager();
        c.args(["crawl", "--task", "astronomy", "--max-pages-per-host", "60"])
            .args(["--concurrency", "4", "--web"])
            .arg(&web)
            .arg("--db")
            .arg(db)
            .arg("--fetch-log")
            .arg(log)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        c
    };
    let (whole_db, whole_log) = (dir.join("whole.db"), dir.join("whole.log"));
    assert!(args(&whole_db, &whole_log).status().unwrap().success());
    let (whole, _) = fetched_set(&whole_db);
    assert!(whole.len() > 1000);

    let cycles: u64 = std::env::var("FORAGER_KILL_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let (db, log) = (dir.join("killed.db"), dir.join("killed.log"));
    let mut before = std::collections::BTreeSet::new();
    let mut seed: u64 = 0x2545F4914F6CDD1D;
    let mut kills_mid_crawl = 0;
    for _ in 0..cycles {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut child = args(&db, &log).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(150 + seed % 500));
        if child.try_wait().unwrap().is_none() {
            kills_mid_crawl += 1;
        }
        child.kill().unwrap_or(()); // SIGKILL on Unix
        child.wait().unwrap();
        let (now, check) = fetched_set(&db);
        assert_eq!(check, "ok");
        assert!(before.is_subset(&now), "a fetched page was lost");
        before = now;
    }
    assert!(kills_mid_crawl > 0, "no kill landed during a crawl");
    assert!(args(&db, &log).status().unwrap().success());
    let (after, check) = fetched_set(&db);
    assert_eq!(check, "ok");
    assert_eq!(
        after, whole,
        "resumed crawl differs from an uninterrupted one"
    );
    let lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let uniq: std::collections::BTreeSet<&String> = lines.iter().collect();
    assert_eq!(uniq.len(), lines.len(), "a page was fetched twice");
    assert_eq!(lines.len(), whole.len());
}

/// The apprentice learns a planted pattern (links under "Recommended reading" lead to relevant
/// pages, nothing else tells them apart) and beats plain soft focus there.
#[test]
fn apprentice_learns_a_planted_pattern() {
    let dir = tmp("planted");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--planted", "--out"]).arg(&web));
    let w = forager::miniweb::MiniWeb::open(&web).unwrap();
    let good = w.task("astronomy").unwrap().good.clone();
    let harvest = |log: &[String]| {
        log.iter().filter(|u| w.is_relevant(u, &good)).count() as f64 / log.len() as f64
    };
    let soft = harvest(&crawl_with(
        &dir,
        &web,
        "soft",
        400,
        &["--apprentice-guide", "off"],
    ));
    // By default the apprentice learns, and its critic lets it guide here, where it helps.
    let auto = harvest(&crawl_with(
        &dir,
        &web,
        "soft",
        400,
        &["--retrain-every", "50", "--apprentice-warmup", "50"],
    ));
    assert!(auto > soft + 0.1, "auto {auto:.3} vs soft {soft:.3}");
    let app = harvest(&crawl_with(
        &dir,
        &web,
        "soft",
        400,
        &[
            "--apprentice",
            "--retrain-every",
            "50",
            "--apprentice-warmup",
            "50",
        ],
    ));
    assert!(app > soft + 0.15, "apprentice {app:.3} vs soft {soft:.3}");
}

/// `forager bench` writes its files, and the same seed gives the same fetch order.
#[test]
fn bench_is_deterministic_and_complete() {
    let dir = tmp("bench");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    let bench = |out: &str| {
        let out = dir.join(out);
        let table = run(forager()
            .args([
                "bench",
                "--task",
                "astronomy",
                "--strategies",
                "bfs,shark,soft+apprentice",
                "--deterministic",
            ])
            .args(["--pages", "200", "--retrain-every", "50"])
            .args(["--apprentice-warmup", "50", "--web"])
            .arg(&web)
            .arg("--out")
            .arg(&out));
        (out, table)
    };
    let (a, table) = bench("a");
    let (b, _) = bench("b");
    assert!(table.contains("soft+apprentice"), "{table}");
    for s in ["bfs", "shark", "soft+apprentice"] {
        let fa = std::fs::read_to_string(a.join(format!("{s}.fetched.txt"))).unwrap();
        let fb = std::fs::read_to_string(b.join(format!("{s}.fetched.txt"))).unwrap();
        assert_eq!(fa.lines().count(), 200);
        assert_eq!(fa, fb, "{s} is not deterministic");
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(a.join(format!("{s}.json"))).unwrap())
                .unwrap();
        let last = j["checkpoints"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["n"], 200);
        assert!(j["robustness"].as_array().is_some_and(|r| !r.is_empty()));
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("summary.json")).unwrap()).unwrap();
    let all = summary["strategies"].as_array().unwrap();
    assert_eq!(
        all.len(),
        3 + 4,
        "three crawls and four simulated references"
    );
    // The simulated oracle's harvest is the best at every checkpoint.
    let harvests = |name: &str| -> Vec<f64> {
        let s = all.iter().find(|s| s["strategy"] == name).unwrap();
        (s["checkpoints"].as_array().unwrap().iter())
            .map(|c| c["harvest"].as_f64().unwrap())
            .collect()
    };
    let oracle = harvests("sim:oracle");
    assert_eq!(oracle.len(), harvests("bfs").len());
    for name in [
        "bfs",
        "shark",
        "soft+apprentice",
        "sim:bfs",
        "sim:soft-perfect",
    ] {
        let h = harvests(name);
        assert!(
            oracle.iter().zip(&h).all(|(o, x)| o >= x),
            "{name}: {h:?} vs oracle {oracle:?}"
        );
    }
    assert!(table.contains("share of the oracle's"), "{table}");
    let html = std::fs::read_to_string(a.join("summary.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("soft+apprentice"));
}

/// The reference crawls are simulated on exactly the pages a real crawl can fetch: an
/// exhaustive breadth-first crawl of the generated web and the simulated one fetch the same set.
#[test]
fn references_see_the_pages_a_real_crawl_fetches() {
    let dir = tmp("reference-pages");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    let out = dir.join("bench");
    run(forager()
        .args(["bench", "--task", "astronomy", "--no-robustness"])
        .args(["--strategies", "bfs", "--pages", "1000000", "--web"])
        .arg(&web)
        .arg("--out")
        .arg(&out));
    let set = |f: &str| -> std::collections::BTreeSet<String> {
        let text = std::fs::read_to_string(out.join(f)).unwrap();
        text.lines().map(str::to_owned).collect()
    };
    let (real, simulated) = (set("bfs.fetched.txt"), set("sim-bfs.fetched.txt"));
    assert!(real.len() > 1000, "{} pages", real.len());
    assert_eq!(real, simulated);
    assert_eq!(simulated, set("sim-soft-clairvoyant.fetched.txt"));
    // By default the bench crawls as users run `forager crawl`: concurrently.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["concurrency"], 16);
}

/// The monitor's alarms fire when a crawl is driven into stagnation or diffusion on purpose,
/// and stay quiet on a healthy crawl.
#[test]
fn alarms_fire_on_stagnation_and_diffusion_only() {
    let dir = tmp("alarms");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    let alarms = |name: &str| -> Vec<String> {
        let out = run(forager()
            .arg("report")
            .arg(dir.join(format!("{name}.db")))
            .arg("--json"));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["alarms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["kind"].as_str().unwrap().to_owned())
            .collect()
    };
    // Healthy: an apprentice-guided soft crawl that keeps finding relevant pages, and the
    // first pages of a hard crawl.
    crawl_with(
        &dir,
        &web,
        "soft",
        600,
        &[
            "--apprentice",
            "--retrain-every",
            "50",
            "--apprentice-warmup",
            "50",
        ],
    );
    assert!(alarms("softapprenticeretrainevery50apprenticewarmup50").is_empty());
    crawl(&dir, &web, "hard", 300);
    assert!(alarms("hard").is_empty());
    // Diffusion: a soft crawl long enough to exhaust the topic (resumed to 2500 pages).
    crawl(&dir, &web, "soft", 2500);
    assert_eq!(alarms("soft"), vec!["diffusion"]);
    // Stagnation: a hard crawl run until its frontier is empty.
    crawl(&dir, &web, "hard", 100_000);
    assert_eq!(alarms("hard"), vec!["stagnation"]);
}

/// Links in site templates inherit a tenth of the page's relevance by default, so soft focus
/// follows the links in the text first; `--template-weight 1` treats them alike again.
#[test]
fn template_links_wait_behind_links_in_the_text() {
    let dir = tmp("template");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    // The navigation bar of every page links its site's home, a popular portal and "about".
    let is_template = |u: &String| {
        u.contains("//portal-")
            || u.ends_with("/about.html")
            || u.matches('/').count() == 3 && u.ends_with('/')
    };
    let count = |log: &[String]| log.iter().filter(|u| is_template(u)).count();
    // Soft focus's own rule, without the apprentice.
    let off = ["--apprentice-guide", "off"];
    let default = crawl_with(&dir, &web, "soft", 600, &off);
    let alike = crawl_with(
        &dir,
        &web,
        "soft",
        600,
        &[&off[..], &["--template-weight", "1"]].concat(),
    );
    let (d, a) = (count(&default), count(&alike));
    assert!(
        a >= 20,
        "treated alike, template pages are fetched early: {a}"
    );
    assert!(
        d * 4 <= a,
        "default {d} template pages vs {a} when treated alike"
    );
    for bad in ["NaN", "1.5", "-0.1"] {
        let out = forager()
            .args(["crawl", "--task", "astronomy", "--pages", "1"])
            .args(["--template-weight", bad, "--web"])
            .arg(&web)
            .arg("--db")
            .arg(dir.join("bad.db"))
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bad} was taken");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--template-weight"));
    }
}

/// `crawl --deterministic` records each wave of fetches in checkout order, whatever order they
/// end in with 8 in flight, so two runs fetch the same pages in the same order.
#[test]
fn deterministic_crawls_repeat_exactly() {
    let dir = tmp("repeat");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    let a = crawl_with(
        &dir,
        &web,
        "soft",
        200,
        &["--deterministic", "--concurrency", "8"],
    );
    std::fs::create_dir_all(dir.join("again")).unwrap();
    let b = crawl_with(
        &dir.join("again"),
        &web,
        "soft",
        200,
        &["--deterministic", "--concurrency", "8"],
    );
    assert_eq!(a.len(), 200);
    assert_eq!(a, b);
}

/// The 2002 paper's protocol in `forager bench`: an unguided soft crawl records the link
/// instances, the apprentice trained on them guides a fresh crawl from the same seeds, and on
/// the planted web it beats soft focus from its first fetches.
#[test]
fn offline_apprentice_follows_the_paper_protocol() {
    let dir = tmp("offline");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--planted", "--out"]).arg(&web));
    let out = dir.join("bench");
    run(forager()
        .args([
            "bench",
            "--task",
            "astronomy",
            "--no-robustness",
            "--deterministic",
        ])
        .args([
            "--strategies",
            "soft,soft+apprentice-offline",
            "--pages",
            "400",
        ])
        .arg("--web")
        .arg(&web)
        .arg("--out")
        .arg(&out));
    let harvest_at = |s: &str, n: u64| {
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join(format!("{s}.json"))).unwrap())
                .unwrap();
        j["checkpoints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["n"] == n)
            .unwrap()["harvest"]
            .as_f64()
            .unwrap()
    };
    // Rows of a query on the training crawl's database, header dropped.
    let collect_db = |q: &str| -> Vec<String> {
        let out = run(forager()
            .arg("sql")
            .arg(out.join("soft-apprentice-offline.collect.db"))
            .arg(q));
        out.lines().skip(1).map(str::to_owned).collect()
    };
    // The training crawl recorded features on its links.
    let n: u64 = collect_db("SELECT count(*) FROM link WHERE features IS NOT NULL")[0]
        .trim()
        .parse()
        .unwrap();
    assert!(n > 1000, "{n} links with features");
    // ... and was not guided by what it learned: it is plain soft focus, page for page.
    let order = collect_db("SELECT url FROM doc WHERE fetch_seq IS NOT NULL ORDER BY fetch_seq");
    let soft = std::fs::read_to_string(out.join("soft.fetched.txt")).unwrap();
    assert_eq!(order, soft.lines().collect::<Vec<_>>());
    for at in [100, 400] {
        let (soft, offline) = (
            harvest_at("soft", at),
            harvest_at("soft+apprentice-offline", at),
        );
        assert!(
            offline > soft + 0.15,
            "at {at}: offline {offline:.3} vs soft {soft:.3}"
        );
    }
}

/// The learning apprentice guides only after its warm-up: until then the crawl is plain soft
/// focus, page for page.
#[test]
fn apprentice_guides_only_after_its_warmup() {
    let dir = tmp("warmup");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--planted", "--out"]).arg(&web));
    let det = ["--deterministic"];
    let soft = crawl_with(&dir, &web, "soft", 300, &det);
    let args = |w: &'static str| {
        [
            "--deterministic",
            "--apprentice",
            "--retrain-every",
            "50",
            "--apprentice-warmup",
            w,
        ]
    };
    let late = crawl_with(&dir, &web, "soft", 300, &args("150"));
    let early = crawl_with(&dir, &web, "soft", 300, &args("50"));
    assert_eq!(late[..150], soft[..150], "guided before its warm-up");
    assert_ne!(late[150..], soft[150..], "never guided");
    assert_ne!(early[..150], soft[..150]);
}

/// A resumed crawl's apprentice starts from the instances its database already holds, and
/// `--json` ends with the final counters.
#[test]
fn resumed_apprentice_keeps_what_it_learned() {
    let dir = tmp("resume-apprentice");
    let web = dir.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    let last = |pages: &str| -> serde_json::Value {
        let out = run(forager()
            .args(["crawl", "--task", "astronomy", "--apprentice", "--json"])
            .args(["--apprentice-warmup", "100", "--pages", pages, "--web"])
            .arg(&web)
            .arg("--db")
            .arg(dir.join("c.db")));
        serde_json::from_str(out.lines().last().unwrap()).unwrap()
    };
    let first = last("300");
    assert_eq!(first["stopped"], "PageBudget");
    assert_eq!(first["fetched"], 300);
    let total = |v: &serde_json::Value| {
        v["apprentice_instances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .sum::<u64>()
    };
    let (before, after) = (total(&first), total(&last("350")));
    assert!(before > 200, "{before} instances");
    // The 50 new pages add instances to the stored ones, not replace them.
    assert!(after > before, "{after} after resuming vs {before} before");
}
