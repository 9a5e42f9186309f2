//! Whose failure a failed fetch is (crawling-the-web-2004 §2.2, politeness and robustness): the
//! URL's, its host's, or the crawler's own path to the web.
//!
//! Only a URL's own failures spend its tries. When the host is at fault (robots.txt
//! unavailable, connections refused or timing out), the host is deferred with exponential
//! backoff and its URLs wait, tries intact. When the crawler is at fault (its proxy refuses
//! connections, or every fetch on several hosts fails the same way), the whole crawl pauses
//! with an alarm and probes again with backoff. A pure, synchronous policy: the crawl loop
//! asks it and acts; time is passed in.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// Why a fetch failed, as far as blame is concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The configured proxy could not be reached: every fetch fails this way.
    Proxy(String),
    /// Connecting to the host failed (refused, unreachable).
    Connect,
    /// The host's name did not resolve.
    Dns,
    /// The request timed out.
    Timeout,
    /// robots.txt could not be read (5xx or no answer): the host may not be crawled for now.
    RobotsUnavailable,
    /// Anything about this URL alone (404, not HTML, a bad redirect, a reset body...).
    Url,
    /// The host does not exist (confirmed): its URLs are given up, and nothing about the
    /// crawler's path to the web follows from it.
    Dead(String),
}

impl Cause {
    /// A failure that could be the network's rather than the host's.
    fn network(&self) -> bool {
        matches!(self, Cause::Connect | Cause::Dns | Cause::Timeout)
    }
}

/// Who a failure is blamed on, and so what happens to the URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The URL: it spends a try.
    Url,
    /// The host: the URL waits for the host's backoff, tries intact.
    Host,
    /// The crawler: the URL waits for the crawl to resume, tries intact.
    Crawler,
}

/// Hosts whose backoff state blame keeps at most. Past it, hosts with nothing to remember
/// but a success are forgotten first, then those not backing off now (a forgotten host that
/// fails again starts its backoffs anew, its URLs' tries intact), so a crawl of a hundred
/// thousand hosts holds a few MB here, not tens.
pub const MAX_HOSTS: usize = 1 << 14;

/// The policy's parameters.
#[derive(Clone, Copy, Debug)]
pub struct BlameParams {
    /// First backoff of a host or of the crawler; it doubles with each failed retry.
    pub backoff: Duration,
    /// Longest backoff.
    pub max_backoff: Duration,
    /// Backoffs a host gets before its failures count against its URLs again.
    pub host_strikes: u32,
    /// Network failures in a row, with no success between, that blame the crawler...
    pub crawler_window: usize,
    /// ...when they span at least this many hosts.
    pub crawler_hosts: usize,
    /// How long the crawler may stay failing before the crawl gives up (and stops, its
    /// frontier intact).
    pub give_up: Duration,
}

impl Default for BlameParams {
    fn default() -> Self {
        BlameParams {
            backoff: Duration::from_secs(10),
            max_backoff: Duration::from_secs(600),
            host_strikes: 3,
            crawler_window: 12,
            crawler_hosts: 4,
            give_up: Duration::from_secs(1800),
        }
    }
}

#[derive(Debug, Default)]
struct Backoff {
    /// The host's last fetch was answered.
    answered: bool,
    /// The host could not be reached at least once (refused, timed out, no address).
    unreachable: bool,
    /// Backoffs so far without a success.
    strikes: u32,
    /// No fetch before this.
    until: Option<Instant>,
}

impl Backoff {
    fn waiting(&self, now: Instant) -> bool {
        self.until.is_some_and(|u| now < u)
    }

    /// Starts the next backoff, unless one is running (fetches already in flight when it
    /// started fail again without making it longer).
    fn strike(&mut self, now: Instant, p: &BlameParams) {
        if self.waiting(now) {
            return;
        }
        let wait = p
            .backoff
            .saturating_mul(1u32 << self.strikes.min(16))
            .min(p.max_backoff);
        self.strikes += 1;
        self.until = Some(now + wait);
    }
}

/// The crawler's failing state.
#[derive(Debug)]
struct Failing {
    since: Instant,
    why: String,
    backoff: Backoff,
}

/// The blame policy's state over one crawl.
#[derive(Debug, Default)]
pub struct Blame {
    params: BlameParams,
    hosts: HashMap<String, Backoff>,
    /// The latest outcomes: (host, a network failure).
    recent: VecDeque<(String, bool)>,
    crawler: Option<Failing>,
    /// Some host has answered a fetch in this crawl.
    answered_once: bool,
}

impl Blame {
    /// A policy with these parameters.
    pub fn new(params: BlameParams) -> Self {
        Blame {
            params,
            ..Blame::default()
        }
    }

    /// A fetch of `host` succeeded (any HTTP answer counts): the host and the crawler work.
    pub fn success(&mut self, host: &str) {
        self.make_room(host, Instant::now());
        self.hosts.insert(
            host.to_owned(),
            Backoff {
                answered: true,
                ..Backoff::default()
            },
        );
        self.crawler = None;
        self.answered_once = true;
        self.push(host, false);
    }

    /// True while no host has answered a fetch in this crawl, every host that failed could
    /// not be reached (refused, timed out), and the crawler itself is not failing: when all
    /// the work left waits for such hosts, backing off would only delay telling the user that
    /// nothing can be fetched. A crawl that has reached the web keeps its backoffs for
    /// failures that pass, a host that answered with an error (robots.txt 503) is waited
    /// for, and a failing proxy or network keeps its pause.
    pub fn every_host_failed(&self) -> bool {
        !self.answered_once && self.crawler.is_none() && self.hosts.values().all(|b| b.unreachable)
    }

    /// Blames a failed fetch of `host` with `cause`, and starts the backoff that follows.
    pub fn failure(&mut self, host: &str, cause: &Cause, now: Instant) -> Fault {
        if let Cause::Proxy(why) = cause {
            self.crawler_fails(why.clone(), now);
            return Fault::Crawler;
        }
        if matches!(cause, Cause::Dead(_)) {
            return Fault::Url;
        }
        self.push(host, cause.network());
        self.make_room(host, now);
        if cause.network() {
            self.hosts.entry(host.to_owned()).or_default().unreachable = true;
        }
        if cause.network() && self.network_down() {
            let hosts = self.recent_hosts();
            self.crawler_fails(
                format!("every fetch fails (no connection to {hosts} hosts in a row): is the network down?"),
                now,
            );
            return Fault::Crawler;
        }
        if *cause == Cause::Url {
            return Fault::Url;
        }
        let p = self.params;
        let b = self.hosts.entry(host.to_owned()).or_default();
        if *cause == Cause::Timeout && std::mem::take(&mut b.answered) {
            // One slow page on a host that just answered is that page's; a second in a row
            // is the host's.
            return Fault::Url;
        }
        if b.waiting(now) {
            return Fault::Host;
        }
        if b.strikes >= p.host_strikes {
            // The host failed through every backoff: its URLs take the blame again.
            return Fault::Url;
        }
        b.strike(now, &p);
        Fault::Host
    }

    /// When `host` may be fetched again, if it is backing off now.
    pub fn host_wait(&self, host: &str, now: Instant) -> Option<Instant> {
        self.hosts
            .get(host)
            .filter(|b| b.waiting(now))
            .and_then(|b| b.until)
    }

    /// When the crawl may fetch again, if the crawler is backing off now.
    pub fn crawler_wait(&self, now: Instant) -> Option<Instant> {
        self.crawler
            .as_ref()
            .filter(|f| f.backoff.waiting(now))
            .and_then(|f| f.backoff.until)
    }

    /// The alarm to show while the crawler is failing: what fails, and when it is tried again.
    pub fn alarm(&self, now: Instant) -> Option<String> {
        let f = self.crawler.as_ref()?;
        let wait = f.backoff.until.map_or(0.0, |u| {
            u.saturating_duration_since(now).as_secs_f64().ceil()
        });
        Some(format!(
            "{}; the crawl is paused and tries again in {wait:.0} s",
            f.why
        ))
    }

    /// True when the crawler has been failing for longer than the give-up time.
    pub fn gave_up(&self, now: Instant) -> bool {
        self.crawler
            .as_ref()
            .is_some_and(|f| now.saturating_duration_since(f.since) >= self.params.give_up)
    }

    /// Hosts backing off now.
    pub fn hosts_waiting(&self, now: Instant) -> usize {
        self.hosts.values().filter(|b| b.waiting(now)).count()
    }

    /// Hosts whose state is kept now (at most [`MAX_HOSTS`]).
    pub fn hosts_kept(&self) -> usize {
        self.hosts.len()
    }

    /// Before `host` is added: when [`MAX_HOSTS`] are kept, forgets those that only
    /// answered, then if need be all but the latest-ending backoffs, down to three quarters.
    fn make_room(&mut self, host: &str, now: Instant) {
        if self.hosts.len() < MAX_HOSTS || self.hosts.contains_key(host) {
            return;
        }
        let keep = MAX_HOSTS * 3 / 4;
        self.hosts
            .retain(|_, b| b.strikes > 0 || b.unreachable || b.waiting(now));
        if self.hosts.len() > keep {
            self.hosts.retain(|_, b| b.waiting(now));
        }
        if self.hosts.len() > keep {
            let mut ends: Vec<Instant> = self.hosts.values().filter_map(|b| b.until).collect();
            ends.sort_unstable();
            let cut = ends[ends.len() - keep];
            self.hosts.retain(|_, b| b.until.is_some_and(|u| u >= cut));
        }
    }

    fn crawler_fails(&mut self, why: String, now: Instant) {
        let p = self.params;
        let f = self.crawler.get_or_insert_with(|| Failing {
            since: now,
            why: why.clone(),
            backoff: Backoff::default(),
        });
        f.why = why;
        f.backoff.strike(now, &p);
    }

    fn push(&mut self, host: &str, network: bool) {
        self.recent.push_back((host.to_owned(), network));
        while self.recent.len() > self.params.crawler_window {
            self.recent.pop_front();
        }
    }

    fn recent_hosts(&self) -> usize {
        let mut hosts: Vec<&str> = self.recent.iter().map(|(h, _)| h.as_str()).collect();
        hosts.sort_unstable();
        hosts.dedup();
        hosts.len()
    }

    /// The last `crawler_window` outcomes were all network failures, on enough hosts.
    fn network_down(&self) -> bool {
        self.recent.len() >= self.params.crawler_window
            && self.recent.iter().all(|(_, n)| *n)
            && self.recent_hosts() >= self.params.crawler_hosts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> BlameParams {
        BlameParams {
            backoff: Duration::from_secs(10),
            max_backoff: Duration::from_secs(40),
            host_strikes: 3,
            crawler_window: 6,
            crawler_hosts: 3,
            give_up: Duration::from_secs(100),
        }
    }

    #[test]
    fn a_dead_host_is_the_urls_fault_and_never_the_networks() {
        let mut b = Blame::new(params());
        let t = Instant::now();
        let dead = Cause::Dead("unknown host".into());
        for i in 0..20 {
            assert_eq!(b.failure(&format!("h{i}"), &dead, t), Fault::Url);
        }
        assert_eq!(b.crawler_wait(t), None);
        assert_eq!(b.hosts_waiting(t), 0);
    }

    #[test]
    fn a_url_failure_spends_the_urls_try_and_defers_nothing() {
        let mut b = Blame::new(params());
        let t = Instant::now();
        assert_eq!(b.failure("a", &Cause::Url, t), Fault::Url);
        assert_eq!(b.host_wait("a", t), None);
        assert_eq!(b.crawler_wait(t), None);
    }

    #[test]
    fn a_dead_proxy_pauses_the_crawler_with_backoff_and_an_alarm() {
        let mut b = Blame::new(params());
        let t = Instant::now();
        let why = Cause::Proxy("proxy 127.0.0.1:9 refuses connections".into());
        assert_eq!(b.failure("a", &why, t), Fault::Crawler);
        // Fetches already in flight fail too, without lengthening the pause.
        assert_eq!(
            b.failure("b", &why, t + Duration::from_secs(1)),
            Fault::Crawler
        );
        assert_eq!(b.crawler_wait(t), Some(t + Duration::from_secs(10)));
        let alarm = b.alarm(t).unwrap();
        assert!(
            alarm.contains("127.0.0.1:9 refuses") && alarm.contains("10 s"),
            "{alarm}"
        );
        // The probe after the pause fails: the pause doubles.
        let t2 = t + Duration::from_secs(10);
        b.failure("a", &why, t2);
        assert_eq!(b.crawler_wait(t2), Some(t2 + Duration::from_secs(20)));
        assert!(!b.gave_up(t2));
        assert!(b.gave_up(t + Duration::from_secs(100)));
        // One success and all is forgiven.
        b.success("a");
        assert_eq!(b.crawler_wait(t2), None);
        assert_eq!(b.alarm(t2), None);
    }

    #[test]
    fn a_failing_host_backs_off_then_its_urls_take_the_blame() {
        let mut b = Blame::new(params());
        let t = Instant::now();
        assert_eq!(b.failure("h", &Cause::RobotsUnavailable, t), Fault::Host);
        assert_eq!(b.host_wait("h", t), Some(t + Duration::from_secs(10)));
        // A second failure inside the backoff does not lengthen it.
        assert_eq!(b.failure("h", &Cause::Timeout, t), Fault::Host);
        assert_eq!(b.host_wait("h", t), Some(t + Duration::from_secs(10)));
        let t2 = t + Duration::from_secs(10);
        assert_eq!(b.failure("h", &Cause::Timeout, t2), Fault::Host);
        assert_eq!(b.host_wait("h", t2), Some(t2 + Duration::from_secs(20)));
        let t3 = t2 + Duration::from_secs(20);
        assert_eq!(b.failure("h", &Cause::Timeout, t3), Fault::Host);
        assert_eq!(b.host_wait("h", t3), Some(t3 + Duration::from_secs(40)));
        let t4 = t3 + Duration::from_secs(40);
        assert_eq!(b.failure("h", &Cause::Timeout, t4), Fault::Url);
        // Other hosts are untouched, and a success clears the host.
        assert_eq!(b.host_wait("other", t), None);
        b.success("h");
        assert_eq!(b.failure("h", &Cause::Connect, t4), Fault::Host);
    }

    #[test]
    fn a_crawl_knows_whether_any_host_ever_answered() {
        let mut b = Blame::new(params());
        let t = Instant::now();
        assert!(b.every_host_failed());
        assert_eq!(b.failure("refused", &Cause::Connect, t), Fault::Host);
        assert_eq!(b.failure("silent", &Cause::Timeout, t), Fault::Host);
        assert!(b.every_host_failed(), "failures are not answers");
        b.success("other");
        assert!(!b.every_host_failed());
        // The failing hosts keep their backoff once the crawl has reached the web.
        assert!(b.host_wait("refused", t).is_some());
        // A failing proxy is the crawler's failure, not every host's.
        let mut b = Blame::new(params());
        b.failure("a", &Cause::Proxy("the proxy refuses".into()), t);
        assert!(!b.every_host_failed());
        // A host whose robots.txt answered 503 answered: it is waited for.
        let mut b = Blame::new(params());
        b.failure("busy", &Cause::RobotsUnavailable, t);
        assert!(!b.every_host_failed());
        // ...but robots.txt left unread by a host that timed out is that host's timeout,
        // whichever of its URLs is settled first.
        let mut b = Blame::new(params());
        b.failure("silent", &Cause::RobotsUnavailable, t);
        b.failure("silent", &Cause::Timeout, t);
        assert!(b.every_host_failed());
    }

    #[test]
    fn one_slow_page_of_a_host_that_answers_is_the_pages_fault() {
        let mut b = Blame::new(params());
        let t = Instant::now();
        b.success("h");
        assert_eq!(b.failure("h", &Cause::Timeout, t), Fault::Url);
        assert_eq!(b.host_wait("h", t), None);
        // Two in a row: the host is slow.
        assert_eq!(b.failure("h", &Cause::Timeout, t), Fault::Host);
        assert!(b.host_wait("h", t).is_some());
    }

    #[test]
    fn a_hundred_thousand_hosts_keep_the_backoffs_that_matter_in_bounded_memory() {
        let mut b = Blame::new(params());
        let t = Instant::now();
        // A host backing off, then 100k hosts that answer, some of them failing once.
        assert_eq!(b.failure("slow", &Cause::RobotsUnavailable, t), Fault::Host);
        let mut most = 0;
        for i in 0..100_000 {
            let h = format!("h{i}");
            b.success(&h);
            if i % 10 == 0 {
                b.failure(&h, &Cause::RobotsUnavailable, t);
            }
            most = most.max(b.hosts_kept());
        }
        assert!(most <= MAX_HOSTS, "{most} hosts kept");
        // The backoffs running now are kept over hosts that only answered.
        assert_eq!(b.host_wait("slow", t), Some(t + Duration::from_secs(10)));
        assert!(b.host_wait("h99990", t).is_some());
        // 100k hosts all backing off at once: the latest-ending are kept, still bounded.
        let mut b = Blame::new(params());
        for i in 0..100_000u64 {
            let at = t + Duration::from_micros(i);
            b.failure(&format!("f{i}"), &Cause::RobotsUnavailable, at);
            most = most.max(b.hosts_kept());
        }
        assert!(most <= MAX_HOSTS, "{most} hosts kept");
        assert!(b.host_wait("f99999", t).is_some());
    }

    #[test]
    fn network_failures_on_many_hosts_blame_the_crawler() {
        let mut b = Blame::new(params());
        let t = Instant::now();
        // Two dead hosts are the hosts' fault, however many times they fail.
        for i in 0..6 {
            let h = if i % 2 == 0 { "a" } else { "b" };
            assert_eq!(b.failure(h, &Cause::Connect, t), Fault::Host);
        }
        // A third host failing the same way, six in a row: the network is down.
        let mut faults = Vec::new();
        for h in ["c", "a", "b", "c", "a", "c"] {
            faults.push(b.failure(h, &Cause::Dns, t));
        }
        assert_eq!(faults.last(), Some(&Fault::Crawler));
        assert!(b.alarm(t).unwrap().contains("network"));
        // A success anywhere resets the window.
        b.success("d");
        assert_eq!(b.failure("e", &Cause::Connect, t), Fault::Host);
    }
}
