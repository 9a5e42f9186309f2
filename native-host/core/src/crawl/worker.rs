//! One fetch worker's job (crawling-the-web-2004 §2): robots.txt, politeness, the fetch, and
//! on the blocking pool the parse, the classifier's verdict and the scored outlinks.

use super::blame::Cause;
use super::{policy, CrawlConfig, Judge};
use crate::fetch::{FetchError, Fetched, Fetcher, HopGate};
use crate::parse::parse_page;
use crate::robots::{RobotsCache, Verdict};
use crate::store::{self, Outcome, Work};
use forager_classifier::apprentice::Apprentice;
use forager_classifier::Scratch;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tracing::{debug_span, Instrument};

/// KiB of HTML being parsed at once, across every crawl of the process: a parse holds
/// permits for its page's size, so whatever the pages, only so much is parsed together
/// (a 2 MB page parses to tens of MB of DOM).
const PARSE_BUDGET_KB: usize = 4 * 1024;
static PARSE_BUDGET: std::sync::LazyLock<tokio::sync::Semaphore> =
    std::sync::LazyLock::new(|| tokio::sync::Semaphore::new(PARSE_BUDGET_KB));

/// What the workers share with the crawl loop.
pub(super) struct Shared {
    pub(super) fetcher: Fetcher,
    pub(super) robots: RobotsCache,
    /// The judge as of the last background learning or user mark, read by the fetch workers.
    pub(super) judge: RwLock<Judge>,
    pub(super) config: CrawlConfig,
    /// When each host may next be asked (bounded: [`super::polite::Slots`]).
    pub(super) next_slot: Mutex<super::polite::Slots>,
    /// Requests robots.txt allowed per host in this run (the per-host page cap).
    pub(super) per_host: Mutex<super::host_cap::HostCaps>,
    /// The apprentice as of its last retrain, read by the fetch workers.
    pub(super) apprentice: RwLock<Arc<Apprentice>>,
    /// Answered fetches go here to be archived (WARC), while the crawl records them.
    pub(super) warc: Mutex<Option<tokio::sync::mpsc::Sender<crate::warc::Archived>>>,
    /// Fetch tasks waiting for their host's robots.txt now.
    pub(super) at_robots: AtomicUsize,
}

/// Counts a task in `Shared::at_robots` while it lives (cancelled tasks included).
struct AtRobots<'a>(&'a AtomicUsize);

impl<'a> AtRobots<'a> {
    fn enter(n: &'a AtomicUsize) -> Self {
        n.fetch_add(1, Ordering::Relaxed);
        AtRobots(n)
    }
}

impl Drop for AtRobots<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A worker's result: the outcome to record, and what blame needs to know.
pub(super) struct Done {
    /// What to record.
    pub(super) outcome: Outcome,
    /// The URL's host.
    pub(super) host: String,
    /// The host answered (any HTTP status): it and the crawler's path to it work.
    pub(super) answered: bool,
    /// Why the fetch failed, when it did in a way blame weighs.
    pub(super) cause: Option<Cause>,
}

/// The error kind of a URL whose host does not exist.
pub(crate) const UNKNOWN_HOST: &str = "unknown-host";

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::new());
}

fn failure(oid: store::PageId, st: store::DocStatus, kind: &str) -> Outcome {
    Outcome {
        oid,
        status: st,
        error: Some(kind.to_owned()),
        log_relevance: f64::NEG_INFINITY,
        ..Outcome::default()
    }
}

fn hex_hash(s: &str) -> String {
    format!("{:016x}", store::fnv64(s))
}

/// What blame makes of a fetch error.
fn cause_of(e: &FetchError, proxy: Option<&str>) -> Cause {
    match e {
        // The connection error's own words (an OS error number) stay out of the alarm.
        FetchError::Proxy(_) => Cause::Proxy(format!(
            "the proxy {} refuses connections",
            proxy.unwrap_or("?")
        )),
        FetchError::Connect(_) => Cause::Connect,
        FetchError::Dns(_) => Cause::Dns,
        FetchError::Timeout => Cause::Timeout,
        _ => Cause::Url,
    }
}

/// Fetches, parses and classifies one checked-out URL; `fetching` bounds the fetches in
/// flight, and is taken only once robots.txt and the host's politeness slot let the fetch go.
pub(super) async fn fetch_one(sh: Arc<Shared>, w: Work, fetching: Arc<Semaphore>) -> Done {
    let (revisit, tries) = (w.revisit, w.tries);
    let host = url::Url::parse(&w.url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default();
    let (mut outcome, answered, cause) = fetch_work(sh, w, &host, fetching).await;
    outcome.revisit = revisit;
    policy::retry_or_give_up(&mut outcome, tries);
    Done {
        outcome,
        host,
        answered,
        cause,
    }
}

/// Politeness slots saved by an earlier crawl (host, Unix seconds): the ones still ahead.
pub(super) fn slots_from_wall(saved: &[(String, f64)]) -> super::polite::Slots {
    let (now, wall) = (Instant::now(), crate::store::now());
    let mut slots = super::polite::Slots::default();
    for (h, at) in saved.iter().filter(|(_, at)| at.is_finite() && *at > wall) {
        let until = now + Duration::from_secs_f64((at - wall).min(3600.0));
        slots.hold_until(h, until, now);
    }
    slots
}

/// The crawl's politeness slots still ahead, as (host, Unix seconds), to save at its end.
pub(super) fn slots_to_wall(sh: &Shared) -> Vec<(String, f64)> {
    let (now, wall) = (Instant::now(), crate::store::now());
    let slots = sh.next_slot.lock().unwrap_or_else(|p| p.into_inner());
    let mut v: Vec<(String, f64)> = (slots.ahead(now).into_iter())
        .map(|(h, at)| (h, wall + (at - now).as_secs_f64()))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// Waits for the host's politeness slot: one request every max(delay, Crawl-delay).
async fn polite_wait(sh: &Shared, host: &str, extra: Duration) {
    let gap = sh.config.delay.max(extra);
    if gap.is_zero() {
        return;
    }
    let wait = {
        let mut slots = sh.next_slot.lock().unwrap_or_else(|p| p.into_inner());
        slots.take(host, gap, Instant::now())
    };
    tokio::time::sleep(wait).await;
}

/// What a fetch attempt ends with: the outcome, whether the host answered, and whose fault a
/// failure was when it was not the URL's own.
type Attempt = (Outcome, bool, Option<Cause>);

async fn fetch_work(sh: Arc<Shared>, w: Work, host: &str, fetching: Arc<Semaphore>) -> Attempt {
    let Ok(url) = url::Url::parse(&w.url) else {
        let o = failure(w.oid, store::DocStatus::Excluded, "unsupported-url");
        return (o, false, None);
    };
    let at_robots = AtRobots::enter(&sh.at_robots);
    let admitted = admit(&sh, w.oid, &url, host)
        .instrument(debug_span!("fetch.robots"))
        .await;
    drop(at_robots);
    let extra = match admitted {
        Ok(extra) => extra,
        Err(attempt) => return attempt,
    };
    (polite_wait(&sh, host, extra))
        .instrument(debug_span!("fetch.polite"))
        .await;
    // Sleeping for robots.txt or a politeness slot holds no fetch slot; the semaphore is
    // never closed.
    let permit = (fetching.acquire_owned())
        .instrument(debug_span!("fetch.queue"))
        .await;
    let gate = RobotsOnRedirect(&sh);
    let got = sh.fetcher.get_via(url.as_str(), Some(&gate)).await;
    drop(permit);
    let resp = match got {
        Ok(r) => {
            let archive = sh.warc.lock().unwrap_or_else(|p| p.into_inner()).clone();
            if let Some(tx) = archive {
                // Bounded: a slow disk slows the crawl rather than filling memory. A writer
                // that failed is reported when the crawl ends.
                let x = crate::warc::Exchange::of(&r);
                let _ = tx.send(crate::warc::Archived::Exchange(x)).await;
            }
            r
        }
        Err(e @ (FetchError::Private(_) | FetchError::Disallowed(_))) => {
            let o = failure(w.oid, store::DocStatus::Excluded, e.kind());
            return (o, true, None);
        }
        Err(e) => {
            let mut o = failure(w.oid, store::DocStatus::Failed, e.kind());
            o.retry = matches!(e, FetchError::Timeout | FetchError::HopUnavailable(_));
            let cause = cause_of(&e, sh.config.fetch.proxy.as_deref());
            return (o, false, Some(cause));
        }
    };
    if resp.status != 200 {
        return (http_failure(&sh, w.oid, &resp, host), true, None);
    }
    if !resp.is_html() {
        let mut o = failure(w.oid, store::DocStatus::Failed, "not-html");
        o.http_status = Some(200);
        return (o, true, None);
    }
    let oid = w.oid;
    let kb = (resp.body.len() / 1024).clamp(1, PARSE_BUDGET_KB) as u32;
    // From here to the parse starting on the blocking pool: the parse budget and the pool's queue.
    let handoff = debug_span!("fetch.handoff");
    let permit = PARSE_BUDGET.acquire_many(kb).await;
    let job = tokio::task::spawn_blocking(move || {
        drop(handoff);
        let _permit = permit;
        analyse(&sh, resp, url, &w)
    });
    let o = job
        .await
        .unwrap_or_else(|_| failure(oid, store::DocStatus::Failed, "parse-panic"));
    (o, true, None)
}

/// Whether robots.txt and the per-host page cap let `url` be fetched; `Ok` with the host's
/// crawl delay, or the attempt's end.
async fn admit(
    sh: &Shared,
    oid: store::PageId,
    url: &url::Url,
    host: &str,
) -> Result<Duration, Attempt> {
    let extra = match sh.robots.check(&sh.fetcher, url).await {
        Verdict::Disallowed => {
            return Err((
                failure(oid, store::DocStatus::Excluded, "robots"),
                true,
                None,
            ))
        }
        Verdict::Unavailable => {
            let mut o = failure(oid, store::DocStatus::Failed, "robots-unavailable");
            o.retry = true;
            return Err((o, false, Some(Cause::RobotsUnavailable)));
        }
        Verdict::Unreachable(e @ FetchError::Private(_)) => {
            let o = failure(oid, store::DocStatus::Excluded, e.kind());
            return Err((o, false, None));
        }
        Verdict::Dead(why) => {
            // Given up at once: the host does not exist, however often it is asked.
            let o = failure(oid, store::DocStatus::Failed, UNKNOWN_HOST);
            return Err((o, false, Some(Cause::Dead(why))));
        }
        Verdict::Unreachable(e) => {
            let mut o = failure(oid, store::DocStatus::Failed, e.kind());
            o.retry = true;
            let cause = cause_of(&e, sh.config.fetch.proxy.as_deref());
            return Err((o, false, Some(cause)));
        }
        Verdict::Allowed(d) => d.unwrap_or_default(),
    };
    // The per-host page cap counts requests robots.txt allowed.
    let mut ph = sh.per_host.lock().unwrap_or_else(|p| p.into_inner());
    if !ph.admit(host, sh.config.max_pages_per_host) {
        let o = failure(oid, store::DocStatus::Excluded, "trap-host-page-cap");
        return Err((o, false, None));
    }
    Ok(extra)
}

/// A non-200 answer: retried later for 429 and 5xx; a Retry-After (capped) keeps the host
/// from getting another request before then.
fn http_failure(
    sh: &Shared,
    oid: store::PageId,
    resp: &crate::fetch::Fetched,
    host: &str,
) -> Outcome {
    let mut o = failure(
        oid,
        store::DocStatus::Failed,
        &format!("http-{}", resp.status),
    );
    o.http_status = Some(i64::from(resp.status));
    o.retry = resp.status == 429 || resp.status >= 500;
    if let Some(wait) = resp.retry_after {
        let now = Instant::now();
        let until = now + wait.min(Duration::from_secs(120));
        let mut slots = sh.next_slot.lock().unwrap_or_else(|p| p.into_inner());
        slots.hold_until(host, until, now);
    }
    o
}

/// Checks each redirect target against its host's robots.txt, as for any URL.
struct RobotsOnRedirect<'a>(&'a Shared);

impl HopGate for RobotsOnRedirect<'_> {
    fn allow<'a>(
        &'a self,
        url: &'a url::Url,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), FetchError>> + Send + 'a>>
    {
        Box::pin(async move {
            match self.0.robots.check(&self.0.fetcher, url).await {
                Verdict::Allowed(_) => Ok(()),
                Verdict::Disallowed => Err(FetchError::Disallowed(url.to_string())),
                Verdict::Unreachable(e @ FetchError::Private(_)) => Err(e),
                Verdict::Unavailable | Verdict::Unreachable(_) => {
                    Err(FetchError::HopUnavailable(url.to_string()))
                }
                Verdict::Dead(why) => Err(FetchError::Redirect(format!("{url}: {why}"))),
            }
        })
    }
}

/// Parses a fetched page, judges it, and scores its outlinks by the crawl's policy.
fn analyse(sh: &Shared, resp: Fetched, url: url::Url, w: &Work) -> Outcome {
    let judge = sh.judge.read().unwrap_or_else(|p| p.into_inner()).clone();
    let parsing = debug_span!("fetch.parse").entered();
    let html = resp.html();
    let base = url::Url::parse(&resp.final_url).unwrap_or(url);
    let mut page = parse_page(&html, &base);
    drop(parsing);
    let apprentice = (sh.config.apprentice.as_ref()).map(|_| {
        sh.apprentice
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    });
    let (verdict, scored) = SCRATCH.with(|s| {
        let scratch = &mut s.borrow_mut();
        let classifying = debug_span!("fetch.classify").entered();
        let verdict = judge.judge(&w.url, &page.text.text, scratch);
        drop(classifying);
        let _links = debug_span!("fetch.links").entered();
        let parent = policy::Parent {
            oid: w.oid,
            depth: w.depth,
            score: w.score,
            text: &page.text.text,
            leaves: &page.leaves,
            nofollow: page.meta_nofollow,
        };
        let links = std::mem::take(&mut page.links);
        let scored = policy::score_links(
            &sh.config,
            &parent,
            links,
            &verdict,
            &judge.classifier,
            apprentice.as_deref(),
            scratch,
        );
        (verdict, scored)
    });
    let oid = w.oid;
    let policy::Scored { links, rejects } = scored;
    Outcome {
        oid,
        status: store::DocStatus::Fetched,
        http_status: Some(200),
        relevance: verdict.relevance,
        log_relevance: verdict.log_relevance,
        cid: Some(i64::from(verdict.best_leaf_id)),
        content_hash: Some(hex_hash(&page.text.text)),
        title: Some(page.text.title),
        text: (!page.meta_noindex).then_some(page.text.text),
        error: resp.truncated.then(|| "truncated".to_owned()),
        retry: false,
        final_url: (!resp.redirects.is_empty()).then(|| resp.final_url.clone()),
        redirects: resp.redirects.clone(),
        links,
        rejects,
        revisit: false,
    }
}
