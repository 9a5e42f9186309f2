//! The crawl loop (focused-crawling-1999 §4, crawling-the-web-2004 §2.6): a watchdog checks
//! out batches of frontier URLs, one task per fetch (bounded by `concurrency`), parsing and
//! classification on the blocking pool, results written back in batched transactions.

use crate::canon;
use crate::fetch::Fetcher;
use crate::parse::parse_page;
use crate::robots::{RobotsCache, Verdict};
use crate::store::{self, NewUrl, Outcome, Store, StoreError, Work};
use forager_classifier::apprentice::{Apprentice, LeafTokens, Source};
use forager_classifier::{Classifier, Scratch};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, Semaphore};

mod config;
mod open_world;

pub use config::{
    ApprenticeConfig, CrawlConfig, Judge, Mode, OpenWorldConfig, Query, SharkParams,
    DEFAULT_APPRENTICE_WARMUP, DEFAULT_OPEN_WORLD_FIRST, DEFAULT_TEMPLATE_WEIGHT,
};

/// A snapshot of a running or finished crawl.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Progress {
    /// Pages fetched and recorded (all runs).
    pub fetched: u64,
    /// URLs in the frontier.
    pub frontier: i64,
    /// Fetches in flight.
    pub in_flight: usize,
    /// Fetched pages per second in this run.
    pub pages_per_sec: f64,
    /// Mean relevance of the last 100 fetched pages.
    pub recent_relevance: f64,
    /// Failures and exclusions by kind.
    pub errors: HashMap<String, u64>,
    /// Seconds since this run started.
    pub elapsed: f64,
    /// Apprentice training instances so far, [low, high].
    pub apprentice_instances: [u64; 2],
    /// Apprentice retrains so far in this run.
    pub apprentice_retrains: u64,
    /// Distillations so far in this run.
    pub distillations: u64,
    /// Times the crawl re-judged its pages with a classifier changed by the user.
    pub rejudged: u64,
    /// Background learnings (open world) so far in this run.
    pub background_rounds: u64,
    /// Pages in the crawl classifier's background after the last learning.
    pub background_pages: usize,
    /// Revisits made in this run (maintenance mode).
    pub revisits: u64,
    /// Revisited pages whose content had changed.
    pub changed: u64,
    /// Stagnation and diffusion alarms holding now (over this run's pages).
    pub alarms: Vec<crate::monitor::Alarm>,
}

/// Why the crawl stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum StopReason {
    /// The page budget was reached.
    PageBudget,
    /// The time budget ran out.
    TimeBudget,
    /// The frontier is empty and every worker idle.
    FrontierEmpty,
    /// Asked to stop (Ctrl-C or the browser).
    Requested,
}

struct Shared {
    fetcher: Fetcher,
    robots: RobotsCache,
    /// The judge as of the last background learning or user mark, read by the fetch workers.
    judge: RwLock<Judge>,
    config: CrawlConfig,
    next_slot: Mutex<HashMap<String, Instant>>,
    per_host: Mutex<HashMap<String, u64>>,
    /// The apprentice as of its last retrain, read by the fetch workers.
    apprentice: RwLock<Arc<Apprentice>>,
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

/// Fetches, parses and classifies one checked-out URL.
async fn fetch_one(sh: Arc<Shared>, w: Work) -> Outcome {
    let revisit = w.revisit;
    let mut o = fetch_work(sh, w).await;
    o.revisit = revisit;
    o
}

async fn fetch_work(sh: Arc<Shared>, w: Work) -> Outcome {
    let Ok(url) = url::Url::parse(&w.url) else {
        return failure(w.oid, store::status::EXCLUDED, "unsupported-url");
    };
    let host = url.host_str().unwrap_or("").to_owned();
    let extra = match sh.robots.check(&sh.fetcher, &url).await {
        Verdict::Disallowed => return failure(w.oid, store::status::EXCLUDED, "robots"),
        Verdict::Unavailable => {
            let mut o = failure(w.oid, store::status::FAILED, "robots-unavailable");
            o.retry = true;
            return o;
        }
        Verdict::Allowed(d) => d.unwrap_or_default(),
    };
    // The per-host page cap counts requests robots.txt allowed.
    {
        let mut ph = sh.per_host.lock().unwrap_or_else(|p| p.into_inner());
        let n = ph.entry(host.clone()).or_default();
        if *n >= sh.config.max_pages_per_host {
            return failure(w.oid, store::status::EXCLUDED, "trap-host-page-cap");
        }
        *n += 1;
    }
    // Politeness: one slot per host every max(delay, Crawl-delay).
    let gap = sh.config.delay.max(extra);
    if !gap.is_zero() {
        let wait = {
            let mut slots = sh.next_slot.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            let slot = slots.get(&host).copied().unwrap_or(now).max(now);
            slots.insert(host.clone(), slot + gap);
            slot - now
        };
        tokio::time::sleep(wait).await;
    }
    let resp = match sh.fetcher.get(url.as_str()).await {
        Ok(r) => r,
        Err(e) => {
            let mut o = failure(w.oid, store::status::FAILED, e.kind());
            o.retry = matches!(e, crate::fetch::FetchError::Timeout);
            return o;
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
            let slot = slots.entry(host.clone()).or_insert(until);
            *slot = (*slot).max(until);
        }
        return o;
    }
    if !resp.is_html() {
        let mut o = failure(w.oid, store::status::FAILED, "not-html");
        o.http_status = Some(200);
        return o;
    }
    let sh2 = sh.clone();
    let depth = w.depth;
    let parent_score = w.score;
    let oid = w.oid;
    let work_url = w.url;
    let job = tokio::task::spawn_blocking(move || {
        let judge = sh2.judge.read().unwrap_or_else(|p| p.into_inner()).clone();
        let classifier = judge.classifier.clone();
        let html = resp.text();
        let base = url::Url::parse(&resp.final_url).unwrap_or(url);
        let page = parse_page(&html, &base);
        let verdict =
            SCRATCH.with(|s| judge.judge(&work_url, &page.text.text, &mut s.borrow_mut()));
        let follow = !page.meta_nofollow
            && match sh2.config.mode {
                Mode::Hard => verdict.hard_focus,
                _ => true,
            };
        let mut links = Vec::new();
        let mut rejects = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let apprentice = sh2.config.apprentice.as_ref().map(|cfg| {
            let a = sh2
                .apprentice
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            let leaves = LeafTokens::new(classifier.tokenizer(), &page.leaves);
            (cfg.d_max, a, leaves)
        });
        let tok = classifier.tokenizer();
        let (query, shark) = (&sh2.config.query, sh2.config.shark);
        let page_sim = match sh2.config.mode {
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
        if page_links.len() > sh2.config.max_links_per_page {
            page_links.truncate(sh2.config.max_links_per_page);
            rejects.push("trap-too-many-links");
        }
        if follow {
            for l in page_links.into_iter().filter(|l| !l.nofollow) {
                if let Err(r) = canon::check_traps(&l.url, &sh2.config.traps) {
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
                let score = match (sh2.config.mode, &apprentice, &features) {
                    (Mode::Soft | Mode::Hard, Some((_, a, _)), Some(f)) if a.is_trained() => {
                        a.p_high(f)
                    }
                    (Mode::Soft | Mode::Hard, _, _) if l.boilerplate => {
                        verdict.relevance * sh2.config.template_weight
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
                    sh2.config.template_weight
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
    });
    job.await
        .unwrap_or_else(|_| failure(oid, store::status::FAILED, "parse-panic"))
}

/// Runs a store operation on the blocking pool so SQLite never stalls the runtime's threads;
/// the store moves there and back.
async fn blocking<T: Send + 'static>(
    slot: &mut Option<Store>,
    f: impl FnOnce(&mut Store) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    let mut st = slot
        .take()
        .ok_or_else(|| StoreError::Schema("crawl database lost after a failed write".into()))?;
    let (st, r) = tokio::task::spawn_blocking(move || {
        let r = f(&mut st);
        (st, r)
    })
    .await
    .map_err(|e| StoreError::Schema(format!("database task failed: {e}")))?;
    *slot = Some(st);
    r
}

/// Runs a crawl on `store` until a stop condition; `on_progress` is called about once a
/// second; `stop` ends the crawl gracefully when it resolves.
pub async fn run(
    store: Store,
    classifier: Arc<Classifier>,
    mut config: CrawlConfig,
    stop: impl std::future::Future<Output = ()>,
    mut on_progress: impl FnMut(&Progress),
) -> Result<(StopReason, Progress), crate::store::StoreError> {
    if config.deterministic {
        // A reproducible order needs one fetch at a time, whatever concurrency was asked for.
        config.concurrency = 1;
    }
    let fetcher = Fetcher::new(config.fetch.clone())
        .map_err(|e| crate::store::StoreError::Schema(e.to_string()))?;
    let sh = Arc::new(Shared {
        fetcher,
        robots: RobotsCache::new(crate::robots::AGENT),
        judge: RwLock::new(Judge {
            classifier,
            not_relevant: config
                .judge_updates
                .as_ref()
                .map(|rx| rx.borrow().not_relevant.clone())
                .unwrap_or_default(),
        }),
        config: config.clone(),
        next_slot: Mutex::default(),
        per_host: Mutex::default(),
        apprentice: RwLock::new(Arc::new(
            config
                .apprentice
                .as_ref()
                .and_then(|a| a.initial.clone())
                .unwrap_or_default(),
        )),
    });
    let mut open_world = open_world::Learner::new(config.open_world.clone(), config.mode);
    let mut since_retrain = 0u64;
    let mut since_distill = 0u64;
    let mut distilling: Option<tokio::task::JoinHandle<crate::distiller::Scores>> = None;
    // The log is rewritten from the database first, so it is exact even after a crash that
    // came between a commit and the log write.
    let mut log = match &config.fetch_log {
        Some(p) => {
            let io = |e: std::io::Error| StoreError::Schema(format!("{}: {e}", p.display()));
            let mut w = std::io::BufWriter::new(std::fs::File::create(p).map_err(io)?);
            for u in store.fetched_urls()? {
                writeln!(w, "{u}").map_err(io)?;
            }
            w.flush().map_err(io)?;
            Some(w)
        }
        None => None,
    };
    store.set_meta("mode", format!("{:?}", config.mode))?;
    let mut store = Some(store);
    // The learning apprentice; the workers read snapshots of it published at each retrain. It
    // starts from the offline-trained one, or on resume from the instances already recorded.
    let mut learner: Apprentice = match config.apprentice.as_ref().map(|a| &a.initial) {
        Some(Some(initial)) => initial.clone(),
        Some(None) => blocking(&mut store, |s| s.trained_apprentice()).await?,
        None => Apprentice::default(),
    };
    // Whether the published apprentice guides the crawl (an offline-trained one does at once).
    let mut guiding = config
        .apprentice
        .as_ref()
        .and_then(|a| a.initial.as_ref())
        .is_some_and(Apprentice::is_trained);
    let sem = Arc::new(Semaphore::new(config.concurrency.max(1)));
    let (tx, mut rx) = mpsc::channel::<Outcome>(config.concurrency.max(1) * 2);
    let started = Instant::now();
    let mut progress = Progress {
        fetched: blocking(&mut store, |s| s.fetched()).await? as u64,
        ..Progress::default()
    };
    let fetched_at_start = progress.fetched;
    let mut recent: std::collections::VecDeque<f64> = std::collections::VecDeque::new();
    // R(d) of every page fetched in this run, in order, for the monitor's alarms.
    let mut history: Vec<f64> = Vec::new();
    let monitor = crate::monitor::MonitorParams::default();
    let mut in_flight = 0usize;
    let mut pending: Vec<Outcome> = Vec::new();
    let mut last_flush = Instant::now();
    let mut last_report = Instant::now();
    let mut reason = None;
    let mut frontier_dry = false;
    tokio::pin!(stop);
    loop {
        if reason.is_none() {
            if config.max_pages.is_some_and(|m| progress.fetched >= m) {
                reason = Some(StopReason::PageBudget);
            } else if config.max_time.is_some_and(|t| started.elapsed() >= t) {
                reason = Some(StopReason::TimeBudget);
            }
        }
        if reason.is_none() {
            let budget = config.max_pages.map_or(usize::MAX, |m| {
                // Outcomes received but not yet recorded may be fetched pages too.
                (m.saturating_sub(progress.fetched) as usize)
                    .saturating_sub(in_flight + pending.len())
            });
            // Checked out ahead of the workers: twice their number, or exactly one at a time
            // when the order must be reproducible.
            let ahead = if config.deterministic { 1 } else { 2 };
            let room = (config.concurrency * ahead).saturating_sub(in_flight);
            let n = budget.min(room).min(64);
            if n > 0 && (in_flight < config.concurrency || !frontier_dry) {
                // In maintenance mode a share of the batch revisits pages fetched before.
                let k = ((n as f64) * config.revisit_share.clamp(0.0, 0.9)).round() as usize;
                let age = config.revisit_after.as_secs_f64();
                let mut work = if k > 0 {
                    blocking(&mut store, move |s| s.checkout_revisits(k, age)).await?
                } else {
                    Vec::new()
                };
                let m = n - work.len();
                let fresh = blocking(&mut store, move |s| s.checkout(m)).await?;
                frontier_dry = fresh.is_empty() && work.is_empty();
                work.extend(fresh);
                for w in work {
                    in_flight += 1;
                    let (sh, tx, sem) = (sh.clone(), tx.clone(), sem.clone());
                    tokio::spawn(async move {
                        let permit = sem.acquire_owned().await;
                        let out = fetch_one(sh, w).await;
                        drop(permit);
                        let _ = tx.send(out).await;
                    });
                }
            }
        }
        if in_flight == 0 && pending.is_empty() {
            // All workers idle and nothing to check out: the crawl is complete.
            let done = reason.or(frontier_dry.then_some(StopReason::FrontierEmpty));
            if let Some(r) = done {
                if let Some(h) = distilling.take() {
                    let _ = h.await;
                }
                if config.distill_every.is_some() {
                    blocking(&mut store, |s| {
                        let (edges, rel) = s.graph()?;
                        s.save_distillation(&crate::distiller::distill(
                            &edges,
                            &rel,
                            &Default::default(),
                        ))
                    })
                    .await?;
                    progress.distillations += 1;
                }
                progress.frontier = blocking(&mut store, |s| s.frontier_len()).await?;
                progress.alarms = crate::monitor::alarms(
                    &history,
                    progress.frontier,
                    config.mode == Mode::Hard,
                    &monitor,
                );
                return Ok((r, progress));
            }
        }
        if in_flight > 0 {
            tokio::select! {
                got = rx.recv() => {
                    if let Some(o) = got {
                        in_flight -= 1;
                        pending.push(o);
                    }
                }
                _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                _ = &mut stop, if reason.is_none() => reason = Some(StopReason::Requested),
            }
            while let Ok(o) = rx.try_recv() {
                in_flight -= 1;
                pending.push(o);
            }
        }
        let flush = !pending.is_empty()
            && (pending.len() >= 64
                || in_flight == 0
                || last_flush.elapsed() > Duration::from_millis(200));
        if flush {
            let batch = std::mem::take(&mut pending);
            for o in &batch {
                for r in &o.rejects {
                    *progress.errors.entry((*r).to_owned()).or_default() += 1;
                }
                if let Some(e) = &o.error {
                    if o.status != store::status::FETCHED {
                        *progress.errors.entry(e.clone()).or_default() += 1;
                    }
                }
                if o.status == store::status::FETCHED {
                    history.push(o.relevance);
                    recent.push_back(o.relevance);
                    if recent.len() > 100 {
                        recent.pop_front();
                    }
                }
            }
            let rec = blocking(&mut store, move |s| s.record(&batch)).await?;
            progress.fetched += rec.fetched.len() as u64;
            progress.revisits += rec.revisited as u64;
            progress.changed += rec.changed as u64;
            if let Some(cfg) = &config.apprentice {
                for (f, high) in &rec.instances {
                    learner.add(f, *high);
                }
                since_retrain += rec.fetched.len() as u64;
                // Publish at the end of the warm-up, then every `retrain_every` pages.
                let warm = guiding || progress.fetched >= cfg.warmup;
                let due = !guiding || since_retrain >= cfg.retrain_every;
                if warm && due && learner.is_trained() {
                    // Retrain: publish the counts, then re-evaluate the whole frontier.
                    since_retrain = 0;
                    guiding = true;
                    let snapshot = Arc::new(learner.clone());
                    *sh.apprentice.write().unwrap_or_else(|p| p.into_inner()) = snapshot.clone();
                    if matches!(config.mode, Mode::Soft | Mode::Hard) {
                        blocking(&mut store, move |s| {
                            s.rescore_frontier(|f| snapshot.p_high(f))
                        })
                        .await?;
                    }
                    progress.apprentice_retrains += 1;
                }
                progress.apprentice_instances = learner.instances();
            }
            let updated = (config.judge_updates.as_mut())
                .filter(|rx| rx.has_changed().unwrap_or(false))
                .map(|rx| rx.borrow_and_update().clone());
            if let Some(j) = updated {
                // The user changed the model: judge everything again with it.
                *sh.judge.write().unwrap_or_else(|p| p.into_inner()) = j.clone();
                let frontier = !guiding;
                blocking(&mut store, move |s| open_world::rejudge(s, &j, frontier)).await?;
                progress.rejudged += 1;
            }
            if open_world.due(progress.fetched) {
                let frontier = !guiding;
                let marked = sh
                    .judge
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .not_relevant
                    .clone();
                let (judge, report) = open_world.learn(&mut store, marked, frontier).await?;
                *sh.judge.write().unwrap_or_else(|p| p.into_inner()) = judge;
                progress.background_rounds += 1;
                progress.background_pages = report.background;
            }
            since_distill += rec.fetched.len() as u64;
            if config.distill_every.is_some_and(|n| since_distill >= n) && distilling.is_none() {
                // The graph is read under the store, HITS runs beside the crawl.
                since_distill = 0;
                let (edges, rel) = blocking(&mut store, |s| s.graph()).await?;
                let job = tokio::task::spawn_blocking(move || {
                    crate::distiller::distill(&edges, &rel, &Default::default())
                });
                if config.deterministic {
                    // Inline, so that the feedback lands at the same point of every run.
                    if let Ok(scores) = job.await {
                        apply_distillation(&mut store, scores, config.hub_feedback).await?;
                        progress.distillations += 1;
                    }
                } else {
                    distilling = Some(job);
                }
            }
            if let Some(l) = log.as_mut() {
                for (_, u) in &rec.fetched {
                    let _ = writeln!(l, "{u}");
                }
                let _ = l.flush();
            }
            frontier_dry = false;
            last_flush = Instant::now();
        }
        if distilling.as_ref().is_some_and(|h| h.is_finished()) {
            if let Some(Ok(scores)) = match distilling.take() {
                Some(h) => Some(h.await),
                None => None,
            } {
                apply_distillation(&mut store, scores, config.hub_feedback).await?;
                progress.distillations += 1;
            }
        }
        if last_report.elapsed() >= config.progress_every {
            progress.frontier = blocking(&mut store, |s| s.frontier_len()).await?;
            progress.in_flight = in_flight;
            progress.elapsed = started.elapsed().as_secs_f64();
            progress.pages_per_sec =
                (progress.fetched - fetched_at_start) as f64 / progress.elapsed.max(1e-9);
            progress.recent_relevance = recent.iter().sum::<f64>() / recent.len().max(1) as f64;
            progress.alarms = crate::monitor::alarms(
                &history,
                progress.frontier,
                config.mode == Mode::Hard,
                &monitor,
            );
            on_progress(&progress);
            last_report = Instant::now();
        }
    }
}

/// Peak resident memory of this process in bytes (Linux; `None` elsewhere).
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Stores a distillation and, when asked, feeds its top hubs' neighbours back to the frontier.
async fn apply_distillation(
    store: &mut Option<Store>,
    scores: crate::distiller::Scores,
    feedback: Option<usize>,
) -> Result<(), StoreError> {
    blocking(store, move |s| {
        s.save_distillation(&scores)?;
        if let Some(top) = feedback {
            s.boost_hub_neighbours(top)?;
        }
        Ok(())
    })
    .await
}
