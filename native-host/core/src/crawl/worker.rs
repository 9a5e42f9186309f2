//! One fetch worker's job (crawling-the-web-2004 §2): robots.txt, politeness, the fetch, and
//! on the blocking pool the parse, the classifier's verdict and the scored outlinks.

use super::blame::Cause;
use super::{CrawlConfig, Judge, Mode};
use crate::canon;
use crate::fetch::{FetchError, Fetched, Fetcher, HopGate};
use crate::parse::parse_page;
use crate::robots::{RobotsCache, Verdict};
use crate::store::{self, NewUrl, Outcome, Work};
use forager_classifier::apprentice::{Apprentice, LeafTokens, Source};
use forager_classifier::Scratch;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// What the workers share with the crawl loop.
pub(super) struct Shared {
    pub(super) fetcher: Fetcher,
    pub(super) robots: RobotsCache,
    /// The judge as of the last background learning or user mark, read by the fetch workers.
    pub(super) judge: RwLock<Judge>,
    pub(super) config: CrawlConfig,
    pub(super) next_slot: Mutex<HashMap<String, Instant>>,
    pub(super) per_host: Mutex<HashMap<String, u64>>,
    /// The apprentice as of its last retrain, read by the fetch workers.
    pub(super) apprentice: RwLock<Arc<Apprentice>>,
    /// Answered fetches go here to be archived (WARC), while the crawl records them.
    pub(super) warc: Mutex<Option<tokio::sync::mpsc::Sender<crate::warc::Exchange>>>,
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

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::new());
}

fn failure(oid: i64, st: i64, kind: &str) -> Outcome {
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
        FetchError::Proxy(why) => Cause::Proxy(format!(
            "proxy {} refuses connections ({why})",
            proxy.unwrap_or("?")
        )),
        FetchError::Connect(_) => Cause::Connect,
        FetchError::Dns(_) => Cause::Dns,
        FetchError::Timeout => Cause::Timeout,
        _ => Cause::Url,
    }
}

/// Fetches, parses and classifies one checked-out URL.
pub(super) async fn fetch_one(sh: Arc<Shared>, w: Work) -> Done {
    let revisit = w.revisit;
    let host = url::Url::parse(&w.url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default();
    let (mut outcome, answered, cause) = fetch_work(sh, w, &host).await;
    outcome.revisit = revisit;
    Done {
        outcome,
        host,
        answered,
        cause,
    }
}

/// Waits for the host's politeness slot: one request every max(delay, Crawl-delay).
async fn polite_wait(sh: &Shared, host: &str, extra: Duration) {
    let gap = sh.config.delay.max(extra);
    if gap.is_zero() {
        return;
    }
    let wait = {
        let mut slots = sh.next_slot.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let slot = slots.get(host).copied().unwrap_or(now).max(now);
        slots.insert(host.to_owned(), slot + gap);
        slot - now
    };
    tokio::time::sleep(wait).await;
}

async fn fetch_work(sh: Arc<Shared>, w: Work, host: &str) -> (Outcome, bool, Option<Cause>) {
    let Ok(url) = url::Url::parse(&w.url) else {
        let o = failure(w.oid, store::status::EXCLUDED, "unsupported-url");
        return (o, false, None);
    };
    let extra = match sh.robots.check(&sh.fetcher, &url).await {
        Verdict::Disallowed => {
            return (
                failure(w.oid, store::status::EXCLUDED, "robots"),
                true,
                None,
            )
        }
        Verdict::Unavailable => {
            let mut o = failure(w.oid, store::status::FAILED, "robots-unavailable");
            o.retry = true;
            return (o, false, Some(Cause::RobotsUnavailable));
        }
        Verdict::Unreachable(e @ FetchError::Private(_)) => {
            let o = failure(w.oid, store::status::EXCLUDED, e.kind());
            return (o, false, None);
        }
        Verdict::Unreachable(e) => {
            let mut o = failure(w.oid, store::status::FAILED, e.kind());
            o.retry = true;
            let cause = cause_of(&e, sh.config.fetch.proxy.as_deref());
            return (o, false, Some(cause));
        }
        Verdict::Allowed(d) => d.unwrap_or_default(),
    };
    // The per-host page cap counts requests robots.txt allowed.
    {
        let mut ph = sh.per_host.lock().unwrap_or_else(|p| p.into_inner());
        let n = ph.entry(host.to_owned()).or_default();
        if *n >= sh.config.max_pages_per_host {
            let o = failure(w.oid, store::status::EXCLUDED, "trap-host-page-cap");
            return (o, false, None);
        }
        *n += 1;
    }
    polite_wait(&sh, host, extra).await;
    let gate = RobotsOnRedirect(&sh);
    let resp = match sh.fetcher.get_via(url.as_str(), Some(&gate)).await {
        Ok(r) => {
            let archive = sh.warc.lock().unwrap_or_else(|p| p.into_inner()).clone();
            if let Some(tx) = archive {
                // Bounded: a slow disk slows the crawl rather than filling memory. A writer
                // that failed is reported when the crawl ends.
                let _ = tx.send(crate::warc::Exchange::of(&r)).await;
            }
            r
        }
        Err(e @ (FetchError::Private(_) | FetchError::Disallowed(_))) => {
            return (
                failure(w.oid, store::status::EXCLUDED, e.kind()),
                true,
                None,
            );
        }
        Err(e) => {
            let mut o = failure(w.oid, store::status::FAILED, e.kind());
            o.retry = matches!(e, FetchError::Timeout | FetchError::HopUnavailable(_));
            let cause = cause_of(&e, sh.config.fetch.proxy.as_deref());
            return (o, false, Some(cause));
        }
    };
    if resp.status != 200 {
        let mut o = failure(
            w.oid,
            store::status::FAILED,
            &format!("http-{}", resp.status),
        );
        o.http_status = Some(i64::from(resp.status));
        o.retry = resp.status == 429 || resp.status >= 500;
        if let Some(wait) = resp.retry_after {
            // Honour Retry-After (capped): the host gets no request before then.
            let until = Instant::now() + wait.min(Duration::from_secs(120));
            let mut slots = sh.next_slot.lock().unwrap_or_else(|p| p.into_inner());
            let slot = slots.entry(host.to_owned()).or_insert(until);
            *slot = (*slot).max(until);
        }
        return (o, true, None);
    }
    if !resp.is_html() {
        let mut o = failure(w.oid, store::status::FAILED, "not-html");
        o.http_status = Some(200);
        return (o, true, None);
    }
    let oid = w.oid;
    let job = tokio::task::spawn_blocking(move || analyse(&sh, resp, url, &w));
    let o = job
        .await
        .unwrap_or_else(|_| failure(oid, store::status::FAILED, "parse-panic"));
    (o, true, None)
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
            }
        })
    }
}

/// Parses a fetched page, judges it, and scores its outlinks by the crawl's policy.
fn analyse(sh: &Shared, resp: Fetched, url: url::Url, w: &Work) -> Outcome {
    let (depth, parent_score, oid, work_url) = (w.depth, w.score, w.oid, &w.url);
    let judge = sh.judge.read().unwrap_or_else(|p| p.into_inner()).clone();
    let classifier = judge.classifier.clone();
    let html = resp.text();
    let base = url::Url::parse(&resp.final_url).unwrap_or(url);
    let page = parse_page(&html, &base);
    let verdict = SCRATCH.with(|s| judge.judge(work_url, &page.text.text, &mut s.borrow_mut()));
    let follow = !page.meta_nofollow
        && match sh.config.mode {
            Mode::Hard => verdict.hard_focus,
            _ => true,
        };
    let mut links = Vec::new();
    let mut rejects = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let apprentice = sh.config.apprentice.as_ref().map(|cfg| {
        let a = sh
            .apprentice
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let leaves = LeafTokens::new(classifier.tokenizer(), &page.leaves);
        (cfg.d_max, a, leaves)
    });
    let tok = classifier.tokenizer();
    let (query, shark) = (&sh.config.query, sh.config.shark);
    let page_sim = match sh.config.mode {
        Mode::BestFirst | Mode::Shark => query.cosine(tok, &page.text.text),
        _ => 0.0,
    };
    // SharkSearch's inherited score: from this page's own similarity, or decayed further
    // from what this page inherited.
    let inherited = if page_sim > 0.0 {
        shark.delta * page_sim
    } else {
        shark.delta * parent_score.max(0.0)
    };
    let mut page_links = page.links;
    if page_links.len() > sh.config.max_links_per_page {
        page_links.truncate(sh.config.max_links_per_page);
        rejects.push("trap-too-many-links");
    }
    if follow {
        for l in page_links.into_iter().filter(|l| !l.nofollow) {
            if let Err(r) = canon::check_traps(&l.url, &sh.config.traps) {
                rejects.push(r.kind());
                continue;
            }
            if !seen.insert(l.url.to_string()) {
                continue;
            }
            let features = apprentice.as_ref().map(|(d_max, _, leaves)| {
                let anchor_class = (!l.anchor.is_empty()).then(|| {
                    SCRATCH.with(|sc| {
                        classifier
                            .classify(&l.anchor, &mut sc.borrow_mut())
                            .best_leaf
                    })
                });
                let src = Source {
                    class: &verdict.best_leaf,
                    relevance: verdict.relevance,
                    anchor_class: anchor_class.as_deref(),
                };
                leaves.link_features(l.leaf_range.0, l.leaf_range.1, *d_max, &src)
            });
            let score = match (sh.config.mode, &apprentice, &features) {
                (Mode::Soft | Mode::Hard, Some((_, a, _)), Some(f)) if a.is_trained() => {
                    a.p_high(f)
                }
                (Mode::Soft | Mode::Hard, _, _) if l.boilerplate => {
                    verdict.relevance * sh.config.template_weight
                }
                (Mode::Soft | Mode::Hard, _, _) => verdict.relevance,
                (Mode::Bfs, _, _) => -((depth + 1) as f64),
                (Mode::Unfocused, _, _) => 0.0,
                (Mode::BestFirst, _, _) => page_sim,
                (Mode::Shark, _, _) => {
                    let anchor = query.cosine(tok, &l.anchor);
                    let context = if anchor > 0.0 {
                        1.0
                    } else {
                        let (a, b) = l.leaf_range;
                        let lo = a.saturating_sub(shark.context_leaves);
                        let hi = (b + shark.context_leaves).min(page.leaves.len());
                        query.cosine(tok, &page.leaves[lo..hi].join(" "))
                    };
                    let neighbourhood = shark.beta * anchor + (1.0 - shark.beta) * context;
                    shark.gamma * inherited + (1.0 - shark.gamma) * neighbourhood
                }
            };
            let weight = if l.boilerplate {
                sh.config.template_weight
            } else {
                1.0
            };
            links.push(NewUrl {
                weight,
                host: l.url.host_str().unwrap_or("").to_owned(),
                url: l.url.to_string(),
                score,
                depth: depth + 1,
                via: Some((oid, l.anchor)),
                features,
            });
        }
    }
    Outcome {
        oid,
        status: store::status::FETCHED,
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
