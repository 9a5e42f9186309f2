//! robots.txt per RFC 9309 (parsed by `texting_robots`), cached per host for the crawl.
//!
//! A 4xx answer means no rules (allow all); a 5xx or no answer means disallow all for now, and
//! the host's URLs are retried later (the RFC's "unreachable" rule).

use crate::fetch::{FetchError, Fetcher};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use texting_robots::Robot;
use tokio::sync::OnceCell;

/// What robots.txt says about one host.
#[derive(Debug)]
pub enum Rules {
    /// Parsed rules.
    Parsed(Box<Robot>),
    /// No robots.txt (4xx): everything allowed.
    AllowAll,
    /// Server error or unreachable: nothing allowed.
    Unavailable,
    /// The host does not exist (its name does not resolve, or the proxy says it knows no such
    /// host), confirmed by a second try: nothing of it can be fetched in this crawl.
    Dead(String),
}

/// Rules with the time after which they must be fetched again.
#[derive(Debug)]
struct Entry {
    rules: Rules,
    until: Instant,
}

/// The verdict for one URL.
#[derive(Debug)]
pub enum Verdict {
    /// Fetch it, no sooner than this delay after the host's previous fetch.
    Allowed(Option<Duration>),
    /// robots.txt disallows it.
    Disallowed,
    /// robots.txt could not be read; try again later.
    Unavailable,
    /// robots.txt could not be fetched just now, for this reason (the proxy's failures are
    /// not cached: they say nothing about the host).
    Unreachable(FetchError),
    /// The host does not exist, for this reason: its URLs are given up at once.
    Dead(String),
}

/// Why an answer (or its absence) says the host does not exist: its name does not resolve,
/// or the crawler's forward proxy answers 502 (it found no such host).
fn no_such_host(
    fetcher: &Fetcher,
    answer: &Result<crate::fetch::Fetched, FetchError>,
) -> Option<String> {
    match answer {
        Err(FetchError::Dns(chain)) if name_not_known(chain) => {
            Some("unknown host: the name does not exist".to_owned())
        }
        Ok(r) if r.status == 502 && fetcher.config().proxy.is_some() => {
            Some("unknown host: the proxy cannot reach it (502)".to_owned())
        }
        _ => None,
    }
}

/// The resolver's answer says the name does not exist (not that it could not ask just now).
pub fn name_not_known(chain: &str) -> bool {
    [
        "Name or service not known",
        "No address associated with hostname",
        "nodename nor servname provided",
        "No such host is known",
    ]
    .iter()
    .any(|m| chain.contains(m))
}

/// Hosts whose robots.txt is kept at most (parsed rules can take kilobytes each); a host
/// evicted meanwhile has its robots.txt fetched again when next needed.
pub const ROBOTS_HOSTS: usize = 1 << 13;

/// The bounded per-host robots.txt cache shared by all fetch workers.
type HostRules = quick_cache::unsync::Cache<String, Arc<OnceCell<Entry>>>;

/// Per-host robots.txt cache shared by all fetch workers, bounded to [`ROBOTS_HOSTS`] hosts.
#[derive(Clone)]
pub struct RobotsCache {
    hosts: Arc<Mutex<HostRules>>,
    agent: String,
    unavailable_for: Duration,
}

impl Default for RobotsCache {
    fn default() -> Self {
        RobotsCache {
            hosts: Arc::new(Mutex::new(HostRules::new(ROBOTS_HOSTS))),
            agent: String::new(),
            unavailable_for: Duration::ZERO,
        }
    }
}

/// The product token Forager's crawler obeys robots.txt groups for.
pub const AGENT: &str = "Forager";

/// How long an unreachable robots.txt blocks its host before it is asked again.
const UNAVAILABLE_FOR: Duration = Duration::from_secs(600);
/// The pause before the second try that confirms a host does not exist.
const CONFIRM_AFTER: Duration = Duration::from_millis(200);
/// How long fetched rules are trusted (RFC 9309 §2.4: no more than 24 hours).
const RULES_FOR: Duration = Duration::from_secs(24 * 3600);

impl RobotsCache {
    /// An empty cache matching rules for `agent` (the product token, e.g. `Forager`).
    pub fn new(agent: &str) -> Self {
        RobotsCache {
            agent: agent.to_owned(),
            unavailable_for: UNAVAILABLE_FOR,
            ..RobotsCache::default()
        }
    }

    /// Keeps at most `hosts` hosts' robots.txt (instead of [`ROBOTS_HOSTS`]).
    pub fn with_capacity(mut self, hosts: usize) -> Self {
        self.hosts = Arc::new(Mutex::new(HostRules::new(hosts.max(1))));
        self
    }

    /// Asks an unavailable robots.txt again after `d` (the crawl's host backoff, so that a
    /// host's retry also retries its robots.txt).
    pub fn retry_unavailable_after(mut self, d: Duration) -> Self {
        self.unavailable_for = d;
        self
    }

    /// The verdict for `url`, fetching the host's robots.txt once.
    pub async fn check(&self, fetcher: &Fetcher, url: &url::Url) -> Verdict {
        let origin = url.origin().ascii_serialization();
        let cell = {
            let mut map = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
            let known = map.get(origin.as_str()).cloned();
            let cell = known.unwrap_or_else(|| {
                let fresh = Arc::new(OnceCell::new());
                map.insert(origin.clone(), fresh.clone());
                fresh
            });
            if cell.get().is_some_and(|e| Instant::now() >= e.until) {
                let fresh = Arc::new(OnceCell::new());
                map.insert(origin.clone(), fresh.clone());
                fresh
            } else {
                cell
            }
        };
        let mut failed = None;
        let got = cell
            .get_or_try_init(|| async {
                let robots = format!("{origin}/robots.txt");
                let mut answer = fetcher.get(&robots).await;
                if let Some(why) = no_such_host(fetcher, &answer) {
                    // One confirmation: a host that does not exist fails the same way twice.
                    tokio::time::sleep(CONFIRM_AFTER).await;
                    answer = fetcher.get(&robots).await;
                    if no_such_host(fetcher, &answer).is_some() {
                        return Ok(Entry {
                            rules: Rules::Dead(why),
                            until: Instant::now() + RULES_FOR,
                        });
                    }
                }
                let rules = match answer {
                    Ok(r) if r.status < 300 => match Robot::new(&self.agent, &r.body) {
                        Ok(robot) => Rules::Parsed(Box::new(robot)),
                        Err(_) => Rules::AllowAll,
                    },
                    Ok(r) if (400..500).contains(&r.status) => Rules::AllowAll,
                    Ok(_) => Rules::Unavailable,
                    // Neither says anything about the host's robots.txt.
                    Err(e @ (FetchError::Proxy(_) | FetchError::Private(_))) => return Err(e),
                    Err(e) => {
                        failed = Some(e);
                        Rules::Unavailable
                    }
                };
                let ttl = match rules {
                    Rules::Unavailable => self.unavailable_for,
                    _ => RULES_FOR,
                };
                Ok(Entry {
                    rules,
                    until: Instant::now() + ttl,
                })
            })
            .await;
        let rules = match (got, failed) {
            (Err(e), _) | (Ok(_), Some(e)) => return Verdict::Unreachable(e),
            (Ok(r), None) => r,
        };
        match &rules.rules {
            Rules::AllowAll => Verdict::Allowed(None),
            Rules::Unavailable => Verdict::Unavailable,
            Rules::Dead(why) => Verdict::Dead(why.clone()),
            Rules::Parsed(robot) => {
                if robot.allowed(url.as_str()) {
                    Verdict::Allowed(
                        robot
                            .delay
                            .filter(|d| d.is_finite() && *d > 0.0)
                            .map(|d| Duration::from_secs_f32(d.min(60.0))),
                    )
                } else {
                    Verdict::Disallowed
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A forward proxy on loopback that answers every request 404 and counts them.
    async fn counting_proxy() -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let n = Arc::new(AtomicUsize::new(0));
        let count = n.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                let mut buf = vec![0u8; 4096];
                let _ = s.read(&mut buf).await;
                let _ = s
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    )
                    .await;
            }
        });
        (url, n)
    }

    #[tokio::test]
    async fn the_cache_keeps_a_bounded_number_of_hosts_and_asks_evicted_ones_again() {
        let (proxy, asked) = counting_proxy().await;
        let fetcher = Fetcher::new(crate::fetch::FetchConfig {
            proxy: Some(proxy),
            ..Default::default()
        })
        .unwrap();
        let robots = RobotsCache::new(AGENT).with_capacity(4);
        let url = |h: usize| url::Url::parse(&format!("http://h{h}.test/page")).unwrap();
        for h in 0..40 {
            assert!(matches!(
                robots.check(&fetcher, &url(h)).await,
                Verdict::Allowed(None)
            ));
            // A host just seen is answered from the cache.
            assert!(matches!(
                robots.check(&fetcher, &url(h)).await,
                Verdict::Allowed(None)
            ));
        }
        assert_eq!(asked.load(Ordering::SeqCst), 40);
        let held = robots.hosts.lock().unwrap().len();
        assert!(held <= 8, "{held} hosts held");
        for h in 0..40 {
            robots.check(&fetcher, &url(h)).await;
        }
        // Most hosts were evicted: their robots.txt is fetched again.
        assert!(
            asked.load(Ordering::SeqCst) >= 70,
            "{}",
            asked.load(Ordering::SeqCst)
        );
    }
}
