//! What a crawl process's fetch slots did (issue #26, the scaling bench's `SCALING_TRACE`):
//! the process runs with the crawl's spans printed on stderr ([`RUST_LOG`]), and each span's
//! close line (its end and its busy + idle time) gives its life. Sampled every 10 ms over a
//! window, a slot is *busy* while a fetch holds it (`fetch.headers`, `fetch.body`); an idle
//! slot is *waiting on politeness* while a checked-out URL sleeps for its host's slot
//! (`fetch.polite`), else *on robots.txt* while one waits for its host's robots.txt
//! (`fetch.robots`), else *on checkout*: nothing checked out is ready to go.
#![allow(dead_code)]

/// The spans to print (the fetch tasks' phases).
pub const RUST_LOG: &str = "forager_core::crawl=debug,forager_core::fetch=debug";

/// Shares of slot time over the window, and the mean number of URLs in a politeness wait.
#[derive(Clone, Copy, Debug, Default)]
pub struct Slots {
    /// A fetch holds the slot.
    pub busy: f64,
    /// Idle while a checked-out URL waits for its host's politeness slot.
    pub polite: f64,
    /// Idle while a checked-out URL waits for its host's robots.txt.
    pub robots: f64,
    /// Idle with nothing checked out that may go.
    pub checkout: f64,
    /// URLs waiting for their host's politeness slot, on average.
    pub waiting: f64,
}

impl std::fmt::Display for Slots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "busy {:.0}%, waiting on politeness {:.0}%, on robots.txt {:.0}%, on checkout {:.0}% \
             ({:.1} URLs in a politeness wait)",
            self.busy * 100.0,
            self.polite * 100.0,
            self.robots * 100.0,
            self.checkout * 100.0,
            self.waiting
        )
    }
}

/// Seconds since midnight UTC of `t` (the trace's clock).
pub fn of_day(t: std::time::SystemTime) -> f64 {
    let s = t
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64();
    s % 86_400.0
}

/// A duration as tracing prints it ("1.23µs", "45.6ms", "1.00s"), in seconds.
fn secs(d: &str) -> Option<f64> {
    let unit = d.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    let n: f64 = d[..d.len() - unit.len()].parse().ok()?;
    let scale = match unit {
        "ns" => 1e-9,
        "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        _ => return None,
    };
    Some(n * scale)
}

/// A span's (name, start, end) from its close line: "2026-11-26T07:50:01.123456Z DEBUG
/// fetch:fetch.polite: forager_core::crawl::worker: close time.busy=12µs time.idle=1.00s".
fn life(line: &str) -> Option<(&str, f64, f64)> {
    let t: Vec<&str> = line.split_whitespace().collect();
    let p = t.iter().position(|w| *w == "close")?;
    let (path, busy, idle) = (t.get(p.checked_sub(2)?)?, t.get(p + 1)?, t.get(p + 2)?);
    let name = path.trim_end_matches(':').rsplit(':').next()?;
    let name = name.split('{').next()?;
    let clock = t.first()?.split_once('T')?.1.trim_end_matches('Z');
    let mut hms = clock.split(':').map(|x| x.parse::<f64>().ok());
    let end = hms.next()?? * 3600.0 + hms.next()?? * 60.0 + hms.next()??;
    let lived = secs(busy.strip_prefix("time.busy=")?)? + secs(idle.strip_prefix("time.idle=")?)?;
    Some((name, end - lived, end))
}

/// The fetch slots of the process that wrote `log`, with `slots` of them, over the window
/// `from`..`to` (seconds of the day).
pub fn read(log: &str, slots: usize, from: f64, to: f64) -> Slots {
    let mut spans: Vec<(u8, f64, f64)> = Vec::new();
    for (name, a, b) in log.lines().filter_map(life) {
        let kind = match name {
            "fetch.headers" | "fetch.body" => 0,
            "fetch.polite" => 1,
            "fetch.robots" => 2,
            _ => continue,
        };
        if b >= from && a <= to {
            spans.push((kind, a, b));
        }
    }
    let (mut sum, mut samples) = (Slots::default(), 0u32);
    let c = slots as f64;
    let mut t = from;
    while t < to {
        let mut open = [0f64; 3];
        for (k, a, b) in &spans {
            if *a <= t && t < *b {
                open[*k as usize] += 1.0;
            }
        }
        let busy = open[0].min(c);
        let polite = open[1].min(c - busy);
        let robots = open[2].min(c - busy - polite);
        sum.busy += busy / c;
        sum.polite += polite / c;
        sum.robots += robots / c;
        sum.checkout += (c - busy - polite - robots) / c;
        sum.waiting += open[1];
        samples += 1;
        t += 0.01;
    }
    let n = f64::from(samples.max(1));
    Slots {
        busy: sum.busy / n,
        polite: sum.polite / n,
        robots: sum.robots / n,
        checkout: sum.checkout / n,
        waiting: sum.waiting / n,
    }
}
