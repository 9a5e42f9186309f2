//! The million-page bench's run (`cargo bench --bench million -- --pages N`), shared with its
//! CI-size self-check (`tests/million_bench.rs`): a soft crawl at default settings (delay 0 on
//! loopback, as with --web) by the real binary of a procedural web served in this process;
//! peak RSS (VmHWM of the crawler process, as it reports it), database bytes and bytes per
//! fetched page, throughput in ten windows of fetched pages, and checkout latency at the end.
#![allow(dead_code)]

use forager::synthweb::procedural::ProceduralWeb;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Windows the crawl's throughput is reported in, start to end.
pub const WINDOWS: usize = 10;

/// What the bench measured.
#[derive(Debug)]
pub struct Report {
    /// Pages fetched.
    pub fetched: u64,
    /// Frontier URLs at the end.
    pub frontier: i64,
    /// Rows of `doc` (every URL seen) and of `link`.
    pub urls: i64,
    /// Links recorded.
    pub links: i64,
    /// Wall-clock seconds of the crawl.
    pub seconds: f64,
    /// Peak RSS of the crawler process in MB (its VmHWM).
    pub peak_rss_mb: u64,
    /// Resident MB of the crawler at the end of each window (sampled with its progress).
    pub rss_mb: Vec<u64>,
    /// Bytes of the database files (db, WAL, shared memory).
    pub db_bytes: u64,
    /// Pages per second in each window of fetched pages.
    pub windows: Vec<f64>,
    /// Milliseconds of the crawler's own CPU time (user + system) per page in each window:
    /// the crawl's cost, whatever else the machine runs (a decay raises it; a busier machine
    /// lowers the pages per second but not this).
    pub cpu_ms: Vec<f64>,
    /// Cores the crawler kept busy in each window (its CPU seconds per second).
    pub cores: Vec<f64>,
    /// The machine's load (1-minute average) at the end of each window.
    pub load: Vec<f64>,
    /// Checkout latency at the end: median and worst of 20 checkouts of 64, in ms.
    pub checkout_ms: (f64, f64),
    /// The crawler's last line.
    pub last_line: String,
}

impl Report {
    /// Last window's throughput over the first's.
    pub fn last_over_first(&self) -> f64 {
        match (self.windows.first(), self.windows.last()) {
            (Some(f), Some(l)) if *f > 0.0 => l / f,
            _ => f64::NAN,
        }
    }

    /// First window's CPU time per page over the last's: the CPU-time throughput's
    /// last/first, to set beside the wall one (below 1: each page costs more CPU at the end).
    pub fn cpu_last_over_first(&self) -> f64 {
        match (self.cpu_ms.first(), self.cpu_ms.last()) {
            (Some(f), Some(l)) if *l > 0.0 => f / l,
            _ => f64::NAN,
        }
    }

    /// Database bytes per fetched page.
    pub fn bytes_per_page(&self) -> f64 {
        self.db_bytes as f64 / self.fetched.max(1) as f64
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "million-page bench: {} pages fetched in {:.0} s ({:.0} pages/s); frontier {} URLs; \
             {} URLs seen, {} links",
            self.fetched,
            self.seconds,
            self.fetched as f64 / self.seconds,
            self.frontier,
            self.urls,
            self.links
        )?;
        writeln!(
            f,
            "  peak RSS {} MB; RSS at window ends {:?} MB",
            self.peak_rss_mb, self.rss_mb
        )?;
        writeln!(
            f,
            "  database {:.2} GB = {:.0} bytes per fetched page",
            self.db_bytes as f64 / 1e9,
            self.bytes_per_page()
        )?;
        let w: Vec<String> = self.windows.iter().map(|x| format!("{x:.0}")).collect();
        writeln!(
            f,
            "  pages/s in {WINDOWS} windows: {}; last/first {:.2}",
            w.join(" "),
            self.last_over_first()
        )?;
        let list = |v: &[f64], digits: usize| {
            let s: Vec<String> = v.iter().map(|x| format!("{x:.digits$}")).collect();
            s.join(" ")
        };
        writeln!(
            f,
            "  crawler CPU ms per page in {WINDOWS} windows: {}; throughput last/first {:.2}",
            list(&self.cpu_ms, 3),
            self.cpu_last_over_first()
        )?;
        writeln!(
            f,
            "  crawler cores busy: {}; machine load (1 min) at window ends: {}",
            list(&self.cores, 2),
            list(&self.load, 1)
        )?;
        write!(
            f,
            "  checkout of 64 at the end: median {:.2} ms, worst {:.2} ms",
            self.checkout_ms.0, self.checkout_ms.1
        )
    }
}

/// The `--pages N` argument (default `default`).
pub fn pages_arg(default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    (args.iter().position(|a| a == "--pages"))
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// A scratch folder for the run, removed by [`Scratch::drop`].
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        // MILLION_KEEP_DB: keep the database to look into it (delete it yourself).
        if std::env::var_os("MILLION_KEEP_DB").is_some() {
            eprintln!("million bench: kept {}", self.0.display());
            return;
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Crawls `pages` pages of a procedural web of `sites` sites per topic; the database is
/// deleted afterwards.
pub fn run(pages: u64, sites: usize) -> Report {
    let dir = Scratch(std::env::temp_dir().join(format!("forager-million-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let model = dir.0.join("model.fgm");
    let synth = forager::synthweb::SynthWeb::generate(&Default::default());
    let (m, _) =
        forager::training::from_miniweb(&synth.web, Default::default(), Default::default())
            .unwrap();
    std::fs::write(&model, m.to_bytes()).unwrap();
    let web = ProceduralWeb::new(42, sites);
    let seeds = web.seeds("/Computing/Networking", 10);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt
        .block_on(forager::serve::start_procedural(
            web,
            "127.0.0.1:0".parse().unwrap(),
        ))
        .unwrap();
    let db = dir.0.join("crawl.db");
    let mut report = crawl(&model, &server.proxy_url(), &db, &seeds, pages);
    rt.block_on(server.shutdown());
    report.db_bytes = ["", "-wal", "-shm"]
        .iter()
        .filter_map(|e| std::fs::metadata(format!("{}{e}", db.display())).ok())
        .map(|m| m.len())
        .sum();
    count_rows(&db, &mut report);
    report.checkout_ms = checkout_latency(&db);
    report
}

/// Runs the crawler to `pages` pages, following its progress lines.
fn crawl(model: &Path, proxy: &str, db: &Path, seeds: &[String], pages: u64) -> Report {
    // MILLION_FORAGER: another build's binary, to measure two builds with one bench.
    let bin = std::env::var_os("MILLION_FORAGER").unwrap_or(env!("CARGO_BIN_EXE_forager").into());
    let mut cmd = std::process::Command::new(bin);
    cmd.args(["crawl", "--mode", "soft", "--delay", "0", "--json"])
        .args(["--proxy", proxy, "--pages", &pages.to_string()])
        .arg("--model")
        .arg(model)
        .arg("--db")
        .arg(db)
        .args(["--good", "/Computing/Networking"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for s in seeds {
        cmd.args(["--seed", s]);
    }
    let t = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let pid = child.id();
    let stderr = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let mut samples = vec![Sample::default()];
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&line.unwrap_or_default()) else {
            continue;
        };
        // The final line may come as the crawler exits: keep what was last seen then.
        let last = samples[samples.len() - 1];
        let (rss_mb, cpu) = Some(usage(pid))
            .filter(|u| u.1 >= last.cpu)
            .unwrap_or((last.rss_mb, last.cpu));
        samples.push(Sample {
            secs: t.elapsed().as_secs_f64(),
            fetched: v["fetched"].as_u64().unwrap_or(0),
            rss_mb,
            cpu,
            load: super::load_average(),
        });
    }
    let status = child.wait().unwrap();
    let seconds = t.elapsed().as_secs_f64();
    let err = err.join().unwrap();
    assert!(status.success(), "the crawl failed: {err}");
    let last_line = err.lines().last().unwrap_or("").to_owned();
    let peak_rss_mb = (last_line.split("peak RSS ").nth(1))
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let fetched = samples.last().map_or(0, |s| s.fetched);
    let w = windows(&samples, fetched);
    Report {
        fetched,
        frontier: 0,
        urls: 0,
        links: 0,
        seconds,
        peak_rss_mb,
        rss_mb: w.iter().map(|w| w.rss_mb).collect(),
        db_bytes: 0,
        windows: w.iter().map(|w| w.pages_per_sec).collect(),
        cpu_ms: w.iter().map(|w| w.cpu_ms_per_page).collect(),
        cores: w.iter().map(|w| w.cores).collect(),
        load: w.iter().map(|w| w.load).collect(),
        checkout_ms: (0.0, 0.0),
        last_line,
    }
}

/// The crawler as seen at one progress line.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sample {
    /// Seconds since the crawler started.
    pub secs: f64,
    /// Pages fetched.
    pub fetched: u64,
    /// Resident MB.
    pub rss_mb: u64,
    /// CPU seconds (user + system) spent by the crawler.
    pub cpu: f64,
    /// The machine's 1-minute load average.
    pub load: f64,
}

/// Resident MB and CPU seconds of process `pid` now (zeros when it has gone).
fn usage(pid: u32) -> (u64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss = (status.lines())
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
        >> 10;
    (rss, super::cpu_seconds(pid))
}

/// One window of the crawl.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// Pages per second.
    pub pages_per_sec: f64,
    /// Milliseconds of the crawler's CPU time per page.
    pub cpu_ms_per_page: f64,
    /// The crawler's CPU seconds per second.
    pub cores: f64,
    /// Resident MB at its end.
    pub rss_mb: u64,
    /// The machine's load at its end.
    pub load: f64,
}

/// The crawl in [`WINDOWS`] equal shares of `total` fetched pages (times interpolated
/// between progress samples).
pub fn windows(samples: &[Sample], total: u64) -> Vec<Window> {
    // (seconds, CPU seconds, resident MB, load) when `pages` pages were fetched.
    let at = |pages: f64| -> (f64, f64, u64, f64) {
        let i = samples.partition_point(|s| (s.fetched as f64) < pages);
        match (
            i.checked_sub(1).and_then(|j| samples.get(j)),
            samples.get(i),
        ) {
            (Some(a), Some(b)) if b.fetched > a.fetched => {
                let f = (pages - a.fetched as f64) / (b.fetched - a.fetched) as f64;
                (
                    a.secs + f * (b.secs - a.secs),
                    a.cpu + f * (b.cpu - a.cpu),
                    b.rss_mb,
                    b.load,
                )
            }
            (_, Some(b)) => (b.secs, b.cpu, b.rss_mb, b.load),
            (Some(a), None) => (a.secs, a.cpu, a.rss_mb, a.load),
            (None, None) => (0.0, 0.0, 0, 0.0),
        }
    };
    let share = total as f64 / WINDOWS as f64;
    let rate = |d: f64| if d > 0.0 { share / d } else { 0.0 };
    (0..WINDOWS)
        .map(|w| {
            let (t0, c0, _, _) = at(share * w as f64);
            let (t1, c1, rss_mb, load) = at(share * (w + 1) as f64);
            Window {
                pages_per_sec: rate(t1 - t0),
                cpu_ms_per_page: if share > 0.0 {
                    (c1 - c0) * 1e3 / share
                } else {
                    0.0
                },
                cores: if t1 > t0 { (c1 - c0) / (t1 - t0) } else { 0.0 },
                rss_mb,
                load,
            }
        })
        .collect()
}

/// Fills in the counts of URLs, frontier and links from the database.
fn count_rows(db: &Path, r: &mut Report) {
    let conn = forager::store::Store::open_read_only(db).unwrap();
    let count = |sql: &str| conn.query_row(sql, [], |row| row.get::<_, i64>(0)).unwrap();
    r.frontier = count("SELECT count(*) FROM doc WHERE status = 0");
    r.urls = count("SELECT count(*) FROM doc");
    r.links = count("SELECT count(*) FROM link");
}

/// Median and worst of 20 checkouts of 64 URLs (each released again), in ms.
fn checkout_latency(db: &Path) -> (f64, f64) {
    let mut st = forager::store::Store::open(db).unwrap();
    let mut ms: Vec<f64> = (0..20)
        .map(|_| {
            let t = Instant::now();
            let work = st.checkout(64).unwrap();
            let took = t.elapsed().as_secs_f64() * 1e3;
            let oids: Vec<_> = work.iter().map(|w| w.oid).collect();
            st.release(&oids).unwrap();
            took
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], ms[ms.len() - 1])
}
