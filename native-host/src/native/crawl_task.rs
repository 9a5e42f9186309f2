//! The crawl a session runs: checking a start's limits, starting the crawl task with its
//! progress and event plumbing, and stopping it promptly.

use super::*;

pub(super) struct RunningCrawl {
    pub(super) stop: Option<oneshot::Sender<()>>,
    /// Sends the crawl the judge of an edited model (negative feedback).
    pub(super) judge: tokio::sync::watch::Sender<crate::crawl::Judge>,
    /// Sends the crawl links the user queued from the page being read.
    pub(super) queue: mpsc::Sender<Vec<crate::store::NewUrl>>,
    /// Sends the crawl the failing hosts the user gives up on.
    pub(super) give_up: mpsc::Sender<Vec<String>>,
    pub(super) task: tokio::task::JoinHandle<()>,
}

/// The page budget and delay of a start, refused in plain words when out of range.
pub(super) fn crawl_limits(req: &protocol::StartCrawl) -> Result<(u64, f64), Refusal> {
    let pages = match req.pages {
        None => 2000,
        Some(p) if p.fract() == 0.0 && (1.0..=protocol::MAX_PAGES as f64).contains(&p) => p as u64,
        Some(p) => {
            return Err(Refusal::Invalid(format!(
                "the page budget must be a whole number of pages from 1 to {} (got {p})",
                protocol::MAX_PAGES
            )))
        }
    };
    let delay = match req.delay {
        None => 1.0,
        Some(d) if (0.0..=protocol::MAX_DELAY).contains(&d) => d,
        Some(d) => {
            return Err(Refusal::Invalid(format!(
                "the delay must be from 0 to {} seconds (got {d})",
                protocol::MAX_DELAY
            )))
        }
    };
    Ok((pages, delay))
}

/// What Start says when there is nothing to crawl: no seeds given, no good topic with
/// examples of the user's own, no frontier to resume.
pub(super) const NOTHING_TO_CRAWL: &str =
    "Nothing to crawl yet: open a page about your topic and press \
     \"Add current page as example\" (then tick the topic good), or paste seed URLs above Start.";

/// The URLs of the starter taxonomy's examples: made-up demo pages, never a crawl's seeds.
fn demo_examples() -> &'static std::collections::HashSet<String> {
    static DEMO: std::sync::OnceLock<std::collections::HashSet<String>> =
        std::sync::OnceLock::new();
    DEMO.get_or_init(|| {
        (starter_model().examples().into_iter())
            .map(|e| e.url.to_string())
            .collect()
    })
}

/// The fetch settings of a crawl from the browser: its proxy and reach, and the timeout of
/// the host's environment ([`crate::fetch::TIMEOUT_ENV`]) if set.
fn fetch_config(
    proxy: Option<String>,
    allow_private: bool,
) -> Result<crate::fetch::FetchConfig, Refusal> {
    let timeout = std::env::var_os(crate::fetch::TIMEOUT_ENV);
    crate::fetch::FetchConfig {
        proxy,
        reach: crate::address::Reach {
            allow_private,
            ..Default::default()
        },
        ..Default::default()
    }
    .with_timeout_from(timeout.as_ref().map(|v| v.to_string_lossy()).as_deref())
    .map_err(|e| Refusal::Invalid(e.to_string()))
}

/// Accepts only a loopback `http://host:port` proxy: the browser must not be able to send the
/// crawler's traffic anywhere else.
pub(super) fn loopback_proxy(s: &str) -> Result<String, Refusal> {
    let u = url::Url::parse(s).map_err(|_| Refusal::Invalid("proxy must be a URL".into()))?;
    let loopback = match u.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost",
        None => false,
    };
    if u.scheme() != "http" || !loopback {
        return Err(Refusal::Invalid(
            "proxy must be http://127.0.0.1:PORT (loopback only)".into(),
        ));
    }
    Ok(s.to_owned())
}

impl Session {
    /// Starts a crawl in the background: checked, prepared (taxonomy, seeds, "crawl more
    /// from here"), then run by its own task, which reports progress and events.
    pub(super) async fn start_crawl(&mut self, req: StartCrawl) -> Result<Reply, Refusal> {
        if self.crawl_running() {
            let stopping = self.crawl.as_ref().is_some_and(|c| c.stop.is_none());
            return Err(Refusal::Busy(if stopping {
                "the previous crawl is still stopping; try again in a few seconds".into()
            } else {
                "a crawl is already running".into()
            }));
        }
        let start = self.start_of(&req)?;
        let (pages, delay) = crawl_limits(&req)?;
        let proxy = req.proxy.as_deref().map(loopback_proxy).transpose()?;
        std::fs::create_dir_all(&self.paths.dir)
            .map_err(|e| Refusal::Failed(format!("{}: {e}", self.paths.dir.display())))?;
        let mut store = crate::store::open(&locator(&self.paths))?;
        let prepared = crawl::prepare(&mut store, &self.model, &start)?;
        // Without seeds a crawl resumes its frontier; with neither there is nothing to do.
        if prepared.seeds == 0 && prepared.frontier == 0 {
            return Err(Refusal::Invalid(NOTHING_TO_CRAWL.into()));
        }
        // The apprentice always learns (for the link marks and the next crawl of these topics,
        // starting from what earlier crawls of them learned, kept beside the model); it guides
        // as `forager crawl` does by default, while its critic finds it better than soft
        // focus, unless the user turned that off.
        let guide = match req.apprentice {
            Some(false) => Guide::Never,
            Some(true) | None => Guide::WhenBetter,
        };
        let reuse = Some((
            crate::reuse::path_beside(&self.paths.db()),
            crate::reuse::Key::of(&self.model),
        ));
        let initial = reuse.as_ref().and_then(|(path, key)| {
            let loaded = crate::reuse::load(path, *key);
            eprintln!("forager: {}", loaded.words(path));
            loaded.apprentice()
        });
        let config = CrawlConfig {
            mode: Mode::Soft,
            // The budget is for this start: "crawl more" after a finished crawl must fetch more.
            max_pages: Some(prepared.fetched.saturating_add(pages)),
            concurrency: 8,
            delay: Duration::from_secs_f64(delay),
            warc: req.warc.then(|| crate::warc::WarcConfig {
                prefix: self.paths.warc_prefix(),
                max_bytes: crate::warc::DEFAULT_MAX_BYTES,
                user_agent: crate::fetch::FetchConfig::default().user_agent,
            }),
            fetch: fetch_config(proxy, req.allow_private)?,
            apprentice: Some(ApprenticeConfig {
                initial,
                guide,
                ..Default::default()
            }),
            distill_every: Some(DISTILL_EVERY),
            progress_every: Duration::from_millis(500),
            ..Default::default()
        };
        self.spawn_crawl(store, config, prepared.fetched, reuse);
        Ok(Reply::CrawlStarted {
            started: true,
            retried: prepared.retried,
            queued: prepared.queued,
            status: self.status(),
        })
    }

    /// The seeds and "more from" pages of a start, checked before anything is written;
    /// without either, the examples of the good topics are the seeds.
    fn start_of(&self, req: &StartCrawl) -> Result<crawl::Start, Refusal> {
        if req.seeds.len() > 10_000 || req.from.len() > 10_000 {
            return Err(Refusal::Invalid("too many seeds".into()));
        }
        let canon = |s: &String| crate::canon::seed(s).map_err(|e| Refusal::Invalid(clip(&e, 300)));
        let mut seeds: Vec<url::Url> = req.seeds.iter().map(canon).collect::<Result<_, _>>()?;
        let more_from = req.from.iter().map(canon).collect::<Result<_, _>>()?;
        if seeds.is_empty() && req.from.is_empty() {
            let taxonomy = self.model.taxonomy();
            let demo = demo_examples();
            for e in self.model.examples() {
                let good = taxonomy
                    .find(&e.topic)
                    .is_ok_and(|t| taxonomy.is_effectively_good(t));
                // The starter taxonomy's examples are made-up demo pages: never seeds.
                if !good || demo.contains(e.url.as_str()) {
                    continue;
                }
                if let Ok(u) = crate::canon::parse(&e.url) {
                    seeds.push(u);
                }
            }
        }
        Ok(crawl::Start {
            seeds,
            more_from,
            retry_failed: req.retry_failed,
        })
    }

    /// Runs the crawl on its own task: progress to the status and the browser, pages and hubs
    /// pumped as events, and a last flush and `crawl_stopped` when it ends.
    fn spawn_crawl(
        &mut self,
        store: Box<dyn CrawlDb>,
        config: CrawlConfig,
        fetched_before: u64,
        reuse: Option<(std::path::PathBuf, crate::reuse::Key)>,
    ) {
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let status = self.status.clone();
        let out = self.out.clone();
        let classifier = self.model.classifier();
        let (judge_tx, judge_rx) =
            tokio::sync::watch::channel(crate::crawl::Judge::of(&mut self.model));
        let (events_tx, events_rx) = mpsc::channel(EVENT_QUEUE);
        let (queue_tx, queue_rx) = mpsc::channel(QUEUE_DEPTH);
        let (give_up_tx, give_up_rx) = mpsc::channel(QUEUE_DEPTH);
        let config = CrawlConfig {
            queued: Some(Arc::new(Mutex::new(queue_rx))),
            give_up: Some(Arc::new(Mutex::new(give_up_rx))),
            judge_updates: Some(judge_rx),
            events: Some(events_tx),
            ..config
        };
        let paths = self.paths.clone();
        status.lock().unwrap_or_else(|p| p.into_inner()).state = "running";
        let task = tokio::spawn(async move {
            let cursor = Arc::new(Mutex::new(Cursor::start(&paths)));
            let pump = tokio::spawn(pump_events(
                paths.clone(),
                out.clone(),
                cursor.clone(),
                events_rx,
            ));
            let (st2, out2) = (status.clone(), out.clone());
            let stop = async {
                let _ = stop_rx.await;
            };
            let result = crawl::run(store, classifier, config, stop, move |p| {
                let mut st = st2.lock().unwrap_or_else(|e| e.into_inner());
                st.progress = p.clone();
                // Progress is periodic: when the browser is behind, this one is skipped.
                let _ = out2.try_send(Outgoing::Progress { status: st.view() });
            })
            .await;
            pump.abort();
            let _ = pump.await;
            let learned = result.as_ref().ok().and_then(|(_, p)| p.learned.clone());
            save_learned(reuse, learned).await;
            let (reason, message) = match &result {
                Ok((r, p)) => {
                    let mut st = status.lock().unwrap_or_else(|e| e.into_inner());
                    st.progress = p.clone();
                    // The final counts, even for a crawl shorter than one progress period.
                    let _ = out.try_send(Outgoing::Progress { status: st.view() });
                    let in_run = p.fetched.saturating_sub(fetched_before);
                    (format!("{r:?}"), crawl::words::stop_in_words(*r, p, in_run))
                }
                Err(e) => (
                    format!("Error: {e}"),
                    format!("The crawl ended with an error: {e}."),
                ),
            };
            // A last flush of pages and hubs, then the final state.
            // Off the runtime: `flush_events` reads the database and blocks on the bounded queue.
            let (p, o) = (paths.clone(), out.clone());
            let _ = tokio::task::spawn_blocking(move || {
                let mut c = cursor.lock().unwrap_or_else(|e| e.into_inner());
                let _ = flush_events(&p, &o, &mut c);
            })
            .await;
            let status = {
                let mut st = status.lock().unwrap_or_else(|e| e.into_inner());
                st.state = "idle";
                st.view()
            };
            let _ = out
                .send(Outgoing::CrawlStopped {
                    reason,
                    message,
                    status,
                })
                .await;
        });
        self.crawl = Some(RunningCrawl {
            stop: Some(stop_tx),
            judge: judge_tx,
            queue: queue_tx,
            give_up: give_up_tx,
            task,
        });
    }

    /// Asks the running crawl to stop and waits a few seconds for it: the crawl cancels its
    /// waits and fetches at once, so it is normally done well within that. If not, the handle
    /// is kept, so no second crawl can start beside it (the database lock refuses one too).
    pub(super) async fn stop_crawl(&mut self) {
        let Some(c) = self.crawl.as_mut() else {
            return;
        };
        {
            let mut st = self.status.lock().unwrap_or_else(|p| p.into_inner());
            if st.state == "running" {
                st.state = "stopping";
            }
        }
        if let Some(s) = c.stop.take() {
            let _ = s.send(());
        }
        if tokio::time::timeout(STOP_WAIT, &mut c.task).await.is_ok() {
            self.crawl = None;
        }
    }

    /// Lets a crawl that has said it stopped finish ending before the next request: the task
    /// marks itself idle and sends `crawl_stopped` as its last acts, so a browser that answers
    /// that event at once (crawl more, a new crawl) must not be told a crawl is still running.
    pub(super) async fn settle_crawl(&mut self) {
        let idle = {
            let st = self.status.lock().unwrap_or_else(|p| p.into_inner());
            st.state == "idle"
        };
        let Some(c) = self.crawl.as_mut() else {
            return;
        };
        if (idle || c.task.is_finished())
            && tokio::time::timeout(STOP_WAIT, &mut c.task).await.is_ok()
        {
            self.crawl = None;
        }
    }

    /// Gives up on failing hosts of the running crawl: their waiting URLs are given up now.
    pub(super) fn give_up_hosts(&mut self, hosts: Vec<String>) -> Result<Reply, Refusal> {
        if hosts.is_empty() || hosts.len() > 10_000 {
            return Err(Refusal::Invalid(format!(
                "give up on 1 to 10000 hosts (got {})",
                hosts.len()
            )));
        }
        let Some(c) = self.crawl.as_ref().filter(|_| self.crawl_running()) else {
            return Err(Refusal::Missing(
                "no crawl is running: there is nothing to give up on now".into(),
            ));
        };
        let n = hosts.len();
        c.give_up.try_send(hosts).map_err(|_| {
            Refusal::Busy("the crawl has not taken the last hosts yet; try again".into())
        })?;
        Ok(Reply::GaveUp {
            hosts: n,
            status: self.status(),
        })
    }

    /// True while a crawl started by this session has not ended.
    pub(super) fn crawl_running(&self) -> bool {
        self.crawl.as_ref().is_some_and(|c| !c.task.is_finished())
    }
}

/// Saves what a crawl's apprentice learned, for the next crawl of these topics.
async fn save_learned(
    reuse: Option<(std::path::PathBuf, crate::reuse::Key)>,
    learned: Option<crate::reuse::Learned>,
) {
    if let (Some((path, key)), Some(l)) = (reuse, learned) {
        let _ = tokio::task::spawn_blocking(move || {
            if let Err(e) = crate::reuse::save(&path, key, &l.0) {
                eprintln!("forager: apprentice not saved: {e}");
            }
        })
        .await;
    }
}
