//! What a crawl's failures and stops mean, in the user's words: the failing hosts with their
//! cause and one of their URLs, why the crawl stopped, and what it is waiting for. The error
//! kinds stay in the database and the reports; these sentences are what people read.

use super::{Progress, StopReason};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Most hosts a crawl remembers troubles of (the list shown is shorter).
const MAX_TROUBLED: usize = 2_000;
/// Most failing hosts a progress report lists.
pub const LISTED: usize = 20;

/// One failing host as the user sees it.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct HostTrouble {
    /// The host.
    pub host: String,
    /// One of its URLs that failed (the latest).
    pub url: String,
    /// Why, in words ("unknown host: the name does not exist").
    pub why: String,
    /// The error kind as recorded in the database (the technical detail).
    pub kind: String,
    /// Seconds until it is tried again, while its URLs wait for it.
    pub retry_in: Option<f64>,
}

/// What the crawl waits for when only parked work is left.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Waiting {
    /// Seconds until the first of them is tried again.
    pub secs: f64,
    /// Hosts whose URLs wait.
    pub hosts: usize,
}

/// A failure kind (as the database records it) in words.
pub fn failure_in_words(kind: &str) -> String {
    let known = match kind {
        "unknown-host" => "unknown host: no such site could be found",
        "dns" => "its name could not be looked up",
        "connect" => "the connection was refused",
        "timeout" => "it did not answer in time",
        "network" => "the connection broke off",
        "proxy" => "the proxy could not be reached",
        "robots-unavailable" => "its robots.txt could not be read (the site may be down)",
        "robots" => "its robots.txt does not allow crawling it",
        "private-address" => "it is on a local or private address (only your own seeds may be)",
        "not-html" => "it is not a web page",
        "redirect" => "it redirects too often or nowhere",
        "bad-url" | "unsupported-url" => "it is not a web address Forager can fetch",
        "trap-host-page-cap" => "the site has given the crawl enough pages",
        "given-up" => "you gave up on it",
        "parse-panic" => "the page could not be read",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_owned();
    }
    match kind
        .strip_prefix("http-")
        .and_then(|c| c.parse::<u16>().ok())
    {
        Some(404 | 410) => format!("page not found ({})", &kind[5..]),
        Some(401 | 403) => format!("access denied ({})", &kind[5..]),
        Some(429) => "the site asks to slow down (429)".to_owned(),
        Some(c) if c >= 500 => format!("the site had an error ({c})"),
        Some(c) => format!("the site answered {c}"),
        None if kind.starts_with("trap-") => "it looks like a crawler trap".to_owned(),
        None => kind.replace('-', " "),
    }
}

/// Why the crawl stopped, as one sentence (with the failing hosts when nothing was fetched).
pub fn stop_in_words(reason: StopReason, p: &Progress, fetched_in_run: u64) -> String {
    let base = match reason {
        StopReason::PageBudget => "It fetched as many pages as it was given (the page budget).",
        StopReason::TimeBudget => "Its time ran out.",
        StopReason::FrontierEmpty if fetched_in_run == 0 => {
            "Nothing could be fetched: every URL it had failed."
        }
        StopReason::FrontierEmpty => "No links were left to follow.",
        StopReason::Requested => "You stopped it.",
        StopReason::Offline => {
            "The crawler could not reach the web for too long; the URLs left wait for the next start."
        }
    };
    if p.failing.is_empty() || fetched_in_run > 0 {
        return base.to_owned();
    }
    format!("{base} {}", troubles_in_words(&p.failing, p.failing_hosts))
}

/// "a.test: unknown host ... (http://a.test/x); b.test: ..." for the first few failing hosts.
pub fn troubles_in_words(list: &[HostTrouble], total: usize) -> String {
    let named: Vec<String> = (list.iter().take(5))
        .map(|t| format!("{}: {} ({})", t.host, t.why, t.url))
        .collect();
    let more = total.saturating_sub(named.len());
    let tail = if more > 0 {
        format!("; and {more} more")
    } else {
        String::new()
    };
    format!("{}{tail}.", named.join("; "))
}

/// Times the stretches of a run with only parked work left: waiting, not crawling.
#[derive(Debug, Default)]
pub(super) struct IdleClock {
    since: Option<Instant>,
    total: Duration,
}

impl IdleClock {
    /// Whether the crawl is idle now (called every turn of the loop).
    pub(super) fn tick(&mut self, idle: bool) {
        match (idle, self.since) {
            (true, None) => self.since = Some(Instant::now()),
            (false, Some(t)) => {
                self.total += t.elapsed();
                self.since = None;
            }
            _ => {}
        }
    }

    /// Seconds idle so far, the stretch going on included.
    pub(super) fn secs(&self) -> f64 {
        (self.total + self.since.map_or(Duration::ZERO, |t| t.elapsed())).as_secs_f64()
    }
}

/// The latest failure of each host that has failed and had no page fetched in this run.
#[derive(Debug, Default)]
pub(super) struct Troubles {
    hosts: HashMap<String, (HostTrouble, Instant)>,
    /// Hosts a page was fetched from in this run (their hashes): not failing, whatever else
    /// of theirs fails.
    working: std::collections::HashSet<u64>,
}

impl Troubles {
    /// A URL of `host` failed with `kind`.
    pub(super) fn failed(&mut self, host: &str, url: &str, kind: &str) {
        let full = self.hosts.len() >= MAX_TROUBLED && !self.hosts.contains_key(host);
        let working = self.working.contains(&crate::store::fnv64(host));
        if working || full || kind == "truncated" || kind.starts_with("trap-") {
            return;
        }
        // robots.txt "unavailable" after a refused or timed-out connection is that connection's
        // doing: the first, more telling cause stays.
        let network = |k: &str| matches!(k, "connect" | "timeout" | "dns" | "network");
        if kind == "robots-unavailable"
            && (self.hosts.get(host)).is_some_and(|(t, _)| network(&t.kind))
        {
            return;
        }
        let t = HostTrouble {
            host: host.to_owned(),
            url: url.to_owned(),
            why: failure_in_words(kind),
            kind: kind.to_owned(),
            retry_in: None,
        };
        self.hosts.insert(host.to_owned(), (t, Instant::now()));
    }

    /// A page of `host` was fetched: it is not failing.
    pub(super) fn fetched(&mut self, host: &str) {
        self.hosts.remove(host);
        self.working.insert(crate::store::fnv64(host));
    }

    /// Hosts failing now, those waiting for a retry first (soonest first), then the latest;
    /// `retry` tells when a host is tried again. Returns the list and the number of hosts.
    pub(super) fn listed(
        &self,
        retry: impl Fn(&str) -> Option<Duration>,
    ) -> (Vec<HostTrouble>, usize) {
        let mut v: Vec<(HostTrouble, Instant)> = (self.hosts.values())
            .map(|(t, at)| {
                let mut t = t.clone();
                t.retry_in = retry(&t.host).map(|d| d.as_secs_f64().ceil());
                (t, *at)
            })
            .collect();
        v.sort_by(|(a, at), (b, bt)| {
            let key = |t: &HostTrouble| t.retry_in.unwrap_or(f64::INFINITY);
            key(a).total_cmp(&key(b)).then(bt.cmp(at))
        });
        let n = v.len();
        (v.into_iter().take(LISTED).map(|(t, _)| t).collect(), n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_read_as_words_without_codes_people_do_not_know() {
        assert_eq!(failure_in_words("http-404"), "page not found (404)");
        assert!(failure_in_words("unknown-host").contains("unknown host"));
        assert!(failure_in_words("connect").contains("refused"));
        assert_eq!(failure_in_words("http-503"), "the site had an error (503)");
        for k in [
            "robots-unavailable",
            "dns",
            "timeout",
            "trap-path-depth",
            "odd-kind",
        ] {
            let w = failure_in_words(k);
            assert!(!w.contains('-') || w.contains("robots.txt"), "{k}: {w}");
        }
    }

    #[test]
    fn hosts_waiting_come_first_and_a_fetched_page_clears_a_host() {
        let mut t = Troubles::default();
        t.failed("a.test", "http://a.test/1", "unknown-host");
        t.failed("b.test", "http://b.test/x", "connect");
        t.failed("c.test", "http://c.test/404", "http-404");
        let retry = |h: &str| (h == "b.test").then(|| Duration::from_millis(9_100));
        let (list, n) = t.listed(retry);
        assert_eq!(n, 3);
        assert_eq!(list[0].host, "b.test");
        assert_eq!(list[0].retry_in, Some(10.0));
        t.fetched("c.test");
        t.failed("c.test", "http://c.test/other-404", "http-404");
        let (list, n) = t.listed(|_| None);
        assert_eq!(n, 2);
        assert!(list.iter().all(|x| x.host != "c.test"));
    }

    #[test]
    fn a_crawl_that_fetched_nothing_says_which_hosts_failed_and_why() {
        let mut t = Troubles::default();
        t.failed(
            "bandwith-archive.test",
            "http://bandwith-archive.test/a",
            "unknown-host",
        );
        let (failing, failing_hosts) = t.listed(|_| None);
        let p = Progress {
            failing,
            failing_hosts,
            ..Progress::default()
        };
        let s = stop_in_words(StopReason::FrontierEmpty, &p, 0);
        assert!(s.starts_with("Nothing could be fetched"), "{s}");
        assert!(
            s.contains("bandwith-archive.test: unknown host")
                && s.contains("http://bandwith-archive.test/a"),
            "{s}"
        );
        assert!(!s.contains("FrontierEmpty"), "{s}");
        let s = stop_in_words(StopReason::FrontierEmpty, &p, 3);
        assert_eq!(s, "No links were left to follow.");
    }
}
