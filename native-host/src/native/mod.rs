//! The browser's native-messaging endpoint (`forager native`): the host side of
//! extension/PROTOCOL.md. The host is the one source of truth for taxonomy, model and crawl;
//! the crawl runs here and keeps running while the extension's pages come and go.
//!
//! One thread reads frames from stdin, one writes frames to stdout; requests are handled in
//! order on the async runtime, and crawl events flow to the writer through the same channel.

use crate::crawl::{self, ApprenticeConfig, CrawlConfig, Mode, Progress};
use crate::framing::{self, Frame, FrameError};
use crate::store::{NewUrl, Store};
use base64::Engine;
use forager_classifier::Model;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

mod protocol;

pub use protocol::{Request, StartCrawl};

/// Protocol version spoken by this host.
pub const PROTOCOL_VERSION: u64 = 1;
/// Largest model chunk sent in one `get_model` reply (base64 grows it by a third).
const MODEL_CHUNK: usize = 512 * 1024;
/// Messages waiting for the browser before the host stops taking requests.
const OUT_QUEUE: usize = 32;
/// Rough size at which a `pages` event is cut.
const EVENT_BYTES: usize = 256 * 1024;
/// Longest title sent to the browser, in characters.
pub const MAX_TITLE_CHARS: usize = 300;

/// `s` cut to at most `max` characters, with an ellipsis when cut.
pub fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}
/// Largest page text accepted in `add_example`.
const MAX_TEXT: usize = 2 << 20;

/// Where the host keeps its model and crawl database.
#[derive(Clone, Debug)]
pub struct HostPaths {
    /// The data directory.
    pub dir: PathBuf,
}

impl HostPaths {
    /// `$FORAGER_HOME`, else `$XDG_DATA_HOME/forager`, else `~/.local/share/forager`; empty
    /// (and, for the XDG and HOME variables, relative) values count as unset.
    pub fn from_env() -> Self {
        use crate::install::env_path;
        let dir = env_path("FORAGER_HOME", false)
            .or_else(|| env_path("XDG_DATA_HOME", true).map(|d| d.join("forager")))
            .or_else(|| env_path("HOME", true).map(|h| h.join(".local/share/forager")))
            .unwrap_or_else(|| PathBuf::from("forager-data"));
        HostPaths { dir }
    }

    /// The model file.
    pub fn model(&self) -> PathBuf {
        self.dir.join("model.fgm")
    }

    /// The crawl database.
    pub fn db(&self) -> PathBuf {
        self.dir.join("crawl.db")
    }

    /// The prefix of the WARC archive's files (`warc/crawl-00000.warc.gz`, ...).
    pub fn warc_prefix(&self) -> PathBuf {
        self.dir.join("warc").join("crawl")
    }
}

/// The starter model's bytes, shipped with the host (`native-host/starter.fgm`: the demo
/// topics and their examples; `forager starter-model --from-generated-web` rebuilds it).
pub const STARTER_MODEL: &[u8] = include_bytes!("../../starter.fgm");

/// The embedded starter taxonomy the host serves until the user has a model of their own.
pub fn starter_model() -> Model {
    Model::from_bytes(STARTER_MODEL).unwrap_or_default()
}

/// The crawl's live state, shared by the crawl task and the request handler.
#[derive(Clone, Debug, Default)]
struct Status {
    state: &'static str,
    progress: Progress,
}

impl Status {
    fn json(&self) -> Value {
        let p = &self.progress;
        let state = if self.state.is_empty() {
            "idle"
        } else {
            self.state
        };
        // A rate only while crawling; errors are pages given up on, in all runs.
        let rate = if state == "idle" {
            0.0
        } else {
            p.pages_per_sec
        };
        json!({
            "state": state,
            "fetched": p.fetched, "frontier": p.frontier, "pages_per_sec": rate,
            "errors": p.given_up, "recent_relevance": p.recent_relevance,
            "alarms": p.alarms, "paused": p.paused, "hosts_waiting": p.hosts_waiting,
            "parked": p.parked, "distill_every": DISTILL_EVERY,
        })
    }
}

struct RunningCrawl {
    stop: Option<oneshot::Sender<()>>,
    /// Sends the crawl the judge of an edited model (negative feedback).
    judge: tokio::sync::watch::Sender<crate::crawl::Judge>,
    task: tokio::task::JoinHandle<()>,
}

/// One connection's state.
struct Session {
    paths: HostPaths,
    model: Model,
    greeted: bool,
    status: Arc<Mutex<Status>>,
    crawl: Option<RunningCrawl>,
    out: mpsc::Sender<Value>,
    /// Why the saved model could not be loaded (it was kept aside), told at every hello.
    model_error: Option<String>,
    /// False when the model file exists but could not be opened: it must not be replaced.
    may_save: bool,
}

/// A request the host refuses, with the reason for the reply.
type Refusal = String;

/// The page budget and delay of a start, refused in plain words when out of range.
fn crawl_limits(req: &protocol::StartCrawl) -> Result<(u64, f64), Refusal> {
    let pages = match req.pages {
        None => 2000,
        Some(p) if p.fract() == 0.0 && (1.0..=protocol::MAX_PAGES as f64).contains(&p) => p as u64,
        Some(p) => {
            return Err(format!(
                "the page budget must be a whole number of pages from 1 to {} (got {p})",
                protocol::MAX_PAGES
            ))
        }
    };
    let delay = match req.delay {
        None => 1.0,
        Some(d) if (0.0..=protocol::MAX_DELAY).contains(&d) => d,
        Some(d) => {
            return Err(format!(
                "the delay must be from 0 to {} seconds (got {d})",
                protocol::MAX_DELAY
            ))
        }
    };
    Ok((pages, delay))
}

/// Accepts only a loopback `http://host:port` proxy: the browser must not be able to send the
/// crawler's traffic anywhere else.
fn loopback_proxy(s: &str) -> Result<String, Refusal> {
    let u = url::Url::parse(s).map_err(|_| "proxy must be a URL".to_string())?;
    let loopback = match u.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost",
        None => false,
    };
    if u.scheme() != "http" || !loopback {
        return Err("proxy must be http://127.0.0.1:PORT (loopback only)".into());
    }
    Ok(s.to_owned())
}

impl Session {
    fn topics(&self) -> Value {
        json!(self.model.topics())
    }

    fn save_model(&self) -> Result<(), Refusal> {
        if !self.may_save {
            return Err(self.model_error.clone().unwrap_or_default());
        }
        std::fs::create_dir_all(&self.paths.dir).map_err(|e| e.to_string())?;
        crate::model_file::write_atomic(&self.paths.model(), &self.model.to_bytes())
            .map_err(|e| format!("saving the model: {e}"))
    }

    fn status(&self) -> Value {
        let mut st = self.status.lock().unwrap_or_else(|p| p.into_inner());
        if self.crawl.as_ref().is_some_and(|c| c.task.is_finished()) {
            // A crawl task that ended without saying so (it panicked) is not running.
            st.state = "idle";
        }
        if st.state.is_empty() || st.state == "idle" {
            // No crawl running in this process: describe the crawl database as it stands, so a
            // reconnecting extension sees the crawl an earlier host made.
            if let Some(p) = db_progress(&self.paths) {
                st.progress = p;
            }
        }
        st.json()
    }

    /// Answers one request. An edit whose reply fails (it could not be saved, say) is undone,
    /// so the host never keeps an edit it reported as failed.
    async fn handle(&mut self, req: Request) -> Result<Value, Refusal> {
        let edit = matches!(
            req,
            Request::AddTopic { .. }
                | Request::RenameTopic { .. }
                | Request::MoveTopic { .. }
                | Request::DeleteTopic { .. }
                | Request::SetGood { .. }
                | Request::AddExample { .. }
                | Request::RemoveExample { .. }
                | Request::MoveExample { .. }
                | Request::MarkNotRelevant { .. }
                | Request::SelfTrain { .. }
        );
        let before = (edit && self.greeted).then(|| self.model.clone());
        let r = self.answer(req).await;
        if let (Err(_), Some(m)) = (&r, before) {
            self.model = m;
        }
        r
    }

    async fn answer(&mut self, req: Request) -> Result<Value, Refusal> {
        if !matches!(req, Request::Hello { .. }) && !self.greeted {
            return Err("send hello first".into());
        }
        let edited = |s: &mut Session| -> Result<Value, Refusal> {
            s.save_model()?;
            Ok(json!({"topics": s.topics()}))
        };
        let limit = |name: &str, v: &str, max: usize| -> Result<(), Refusal> {
            if v.len() > max {
                return Err(format!("{name:?} is longer than {max} bytes"));
            }
            Ok(())
        };
        match req {
            Request::Hello { version } => {
                if version != PROTOCOL_VERSION {
                    return Err(format!(
                        "protocol version {version} unsupported (host speaks {PROTOCOL_VERSION})"
                    ));
                }
                self.greeted = true;
                Ok(json!({"version": PROTOCOL_VERSION,
                    "host": concat!("forager ", env!("CARGO_PKG_VERSION")),
                    "model_error": self.model_error,
                    "crawl": self.status()}))
            }
            Request::Topics {} => Ok(json!({"topics": self.topics()})),
            Request::AddTopic { parent, name } => {
                limit("name", &name, 200)?;
                let id = self
                    .model
                    .add_topic(parent, &name, &name)
                    .map_err(|e| e.to_string())?;
                let mut r = edited(self)?;
                r["id"] = json!(id);
                Ok(r)
            }
            Request::RenameTopic { topic, name } => {
                limit("name", &name, 200)?;
                self.model
                    .rename_topic(topic, &name, &name)
                    .map_err(|e| e.to_string())?;
                edited(self)
            }
            Request::MoveTopic { topic, parent } => {
                self.model
                    .move_topic(topic, parent)
                    .map_err(|e| e.to_string())?;
                edited(self)
            }
            Request::DeleteTopic { topic } => {
                let n = self.model.delete_topic(topic).map_err(|e| e.to_string())?;
                let mut r = edited(self)?;
                r["removed_examples"] = json!(n);
                Ok(r)
            }
            Request::SetGood { topic, good } => {
                self.model
                    .set_good(topic, good)
                    .map_err(|e| e.to_string())?;
                edited(self)
            }
            Request::AddExample { topic, url, text } => {
                limit("url", &url, 4096)?;
                limit("text", &text, MAX_TEXT)?;
                let here = (self.model.taxonomy().path(topic)).map_err(|e| e.to_string())?;
                // Said, never silent: a page already an example of this topic is refused, one
                // of another topic moves and the reply says from where.
                let moved_from = match self.model.example(&url) {
                    Some(e) if e.topic == here && !e.self_trained => {
                        return Err(format!("{url} is already an example of {here}"));
                    }
                    Some(e) if e.topic != here => Some(e.topic),
                    _ => None,
                };
                self.model
                    .add_example(topic, &url, &text)
                    .map_err(|e| e.to_string())?;
                let mut r = edited(self)?;
                if let Some(from) = moved_from {
                    r["moved_from"] = json!(from);
                }
                Ok(r)
            }
            Request::Examples { topic } => {
                let path = (self.model.taxonomy().path(topic)).map_err(|e| e.to_string())?;
                let mut list: Vec<_> = (self.model.examples().into_iter())
                    .filter(|e| e.topic == path)
                    .collect();
                list.sort_by(|a, b| a.url.cmp(&b.url));
                // Bounded, as every reply: a long list says it was cut.
                let truncated = list.len() > MAX_EXAMPLES_LISTED;
                list.truncate(MAX_EXAMPLES_LISTED);
                Ok(json!({"examples": list, "truncated": truncated}))
            }
            Request::RemoveExample { url } => {
                limit("url", &url, 4096)?;
                self.model.remove_example(&url).map_err(|e| e.to_string())?;
                edited(self)
            }
            Request::MoveExample { url, topic } => {
                limit("url", &url, 4096)?;
                self.model
                    .move_example(&url, topic)
                    .map_err(|e| e.to_string())?;
                edited(self)
            }
            Request::MarkNotRelevant { url, text, undo } => {
                limit("url", &url, 4096)?;
                if let Some(t) = &text {
                    limit("text", t, MAX_TEXT)?;
                }
                self.mark_not_relevant(&url, text, undo)?;
                let mut r = edited(self)?;
                r["not_relevant"] = json!(self.model.not_relevant_urls());
                Ok(r)
            }
            Request::GetModel { offset } => chunk(&self.model.to_bytes(), offset, "model"),
            Request::Export {
                what,
                format,
                offset,
            } => {
                let paths = self.paths.clone();
                if what == protocol::ExportWhat::Warc {
                    let (total, data) = off_the_runtime(|| {
                        crate::warc::joined_range(&paths.warc_prefix(), offset, MODEL_CHUNK)
                    })
                    .map_err(|e| format!("reading the WARC archive: {e}"))?;
                    if total == 0 {
                        return Err(
                            "no WARC archive yet: start a crawl with \"Record WARC\"".into()
                        );
                    }
                    return chunk_reply(total, offset, &data, "export");
                }
                let text = off_the_runtime(|| export_text(&paths, what, format))?;
                chunk(text.as_bytes(), offset, "export")
            }
            Request::StartCrawl(start) => self.start_crawl(start).await,
            Request::StopCrawl {} => {
                self.stop_crawl().await;
                Ok(json!({"status": self.status()}))
            }
            Request::Status {} => Ok(json!({"status": self.status()})),
            Request::NewCrawl {} => {
                if self.crawl_running() {
                    return Err(
                        "stop the crawl first: a new crawl starts from a stopped one".into(),
                    );
                }
                let db = self.paths.db();
                let kept = off_the_runtime(|| Store::set_aside(&db)).map_err(|e| e.to_string())?;
                self.status
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .progress = Progress::default();
                Ok(json!({"kept": kept.map(|p| p.display().to_string()), "status": self.status()}))
            }
            Request::Hubs { top } => {
                hubs(&self.paths, top.min(200) as usize).map_err(|e| e.to_string())
            }
            Request::SelfTrain { min_p, clear } => {
                let removed = self.model.self_trained_count();
                if clear {
                    self.model.forget_self_trained();
                    let mut r = edited(self)?;
                    r["added"] = json!(0);
                    r["pages"] = json!(0);
                    r["removed"] = json!(removed);
                    return Ok(r);
                }
                if !self.paths.db().exists() {
                    return Err("no crawl yet: nothing to learn from".into());
                }
                let (paths, model) = (&self.paths, &mut self.model);
                // Reading and classifying every fetched page is blocking work.
                let (added, pages) =
                    off_the_runtime(|| -> Result<_, Box<dyn std::error::Error>> {
                        let conn = read_only(paths)?;
                        let mut t = model.self_trainer(min_p)?;
                        let mut pages = 0usize;
                        crate::store::each_fetched_text(&conn, |url, text| {
                            pages += 1;
                            t.offer(url, text)
                                .map(|_| ())
                                .map_err(Box::<dyn std::error::Error>::from)
                        })?;
                        Ok((t.added(), pages))
                    })
                    .map_err(|e| e.to_string())?;
                let mut r = edited(self)?;
                r["added"] = json!(added);
                r["pages"] = json!(pages);
                r["removed"] = json!(removed);
                Ok(r)
            }
            Request::RecentPages { limit } => {
                let pages =
                    recent_pages(&self.paths, limit.min(2000) as i64).map_err(|e| e.to_string())?;
                Ok(json!({"pages": pages}))
            }
        }
    }

    /// Adds or removes a "not relevant" mark and hands a running crawl the new classifier.
    fn mark_not_relevant(
        &mut self,
        url: &str,
        text: Option<String>,
        undo: bool,
    ) -> Result<(), Refusal> {
        if undo {
            if !self.model.not_relevant_urls().iter().any(|u| u == url) {
                return Err(format!("{url} is not marked not relevant"));
            }
            self.model.remove_example(url).map_err(|e| e.to_string())?;
        } else {
            let text = match text {
                Some(t) => t,
                None => read_only(&self.paths)
                    .ok()
                    .and_then(|c| crate::store::fetched_text_of(&c, url).ok().flatten())
                    .ok_or_else(|| format!("{url} was not fetched by the crawl: send its text"))?,
            };
            self.model
                .mark_not_relevant(url, &text)
                .map_err(|e| e.to_string())?;
        }
        if let Some(c) = self.crawl.as_ref().filter(|c| !c.task.is_finished()) {
            let _ = c.judge.send(crate::crawl::Judge::of(&mut self.model));
        }
        Ok(())
    }

    async fn start_crawl(&mut self, req: StartCrawl) -> Result<Value, Refusal> {
        if self.crawl_running() {
            let stopping = self.crawl.as_ref().is_some_and(|c| c.stop.is_none());
            return Err(if stopping {
                "the previous crawl is still stopping; try again in a few seconds".into()
            } else {
                "a crawl is already running".into()
            });
        }
        if req.seeds.len() > 10_000 {
            return Err("too many seeds".into());
        }
        let mut seeds = Vec::new();
        for s in &req.seeds {
            seeds.push(crate::canon::seed(s).map_err(|e| clip(&e, 300))?);
        }
        if seeds.is_empty() && req.from.is_empty() {
            let good: Vec<String> = self
                .model
                .topics()
                .into_iter()
                .filter(|t| self.model.taxonomy().is_effectively_good(t.id))
                .map(|t| t.path)
                .collect();
            for e in self.model.examples() {
                if good.contains(&e.topic) {
                    if let Ok(u) = crate::canon::parse(&e.url) {
                        seeds.push(u);
                    }
                }
            }
        }
        let (pages, delay) = crawl_limits(&req)?;
        let proxy = match &req.proxy {
            Some(p) => Some(loopback_proxy(p)?),
            None => None,
        };
        let apprentice = req.apprentice.unwrap_or(true);
        let allow_private = req.allow_private;
        std::fs::create_dir_all(&self.paths.dir).map_err(|e| e.to_string())?;
        let mut store = Store::open(&self.paths.db()).map_err(|e| e.to_string())?;
        store
            .save_taxonomy(&self.model)
            .map_err(|e| e.to_string())?;
        let mut seeds: Vec<NewUrl> = seeds.iter().map(NewUrl::seed).collect();
        let mut queued = 0;
        for u in &req.from {
            let u = crate::canon::seed(u).map_err(|e| clip(&e, 300))?;
            let n = store
                .boost_out_links(u.as_str())
                .map_err(|e| e.to_string())?;
            if n == 0 {
                // Not fetched yet (or nothing left to follow): it is a seed, as before.
                seeds.push(NewUrl::seed(&u));
            }
            queued += n;
        }
        store.add_seeds(&seeds).map_err(|e| e.to_string())?;
        let retried = if req.retry_failed {
            store.retry_failed().map_err(|e| e.to_string())?
        } else {
            0
        };
        // Without seeds a crawl resumes its frontier; with neither there is nothing to do.
        if seeds.is_empty() && store.frontier_len().map_err(|e| e.to_string())? == 0 {
            return Err("no seeds: give URLs or mark a topic with examples good".into());
        }
        // The budget is for this start: "crawl more" after a finished crawl must fetch more.
        let before = u64::try_from(store.fetched().map_err(|e| e.to_string())?).unwrap_or(0);
        let config = CrawlConfig {
            mode: Mode::Soft,
            max_pages: Some(before.saturating_add(pages)),
            concurrency: 8,
            delay: Duration::from_secs_f64(delay),
            warc: req.warc.then(|| crate::warc::WarcConfig {
                prefix: self.paths.warc_prefix(),
                max_bytes: crate::warc::DEFAULT_MAX_BYTES,
                user_agent: crate::fetch::FetchConfig::default().user_agent,
            }),
            fetch: crate::fetch::FetchConfig {
                proxy,
                reach: crate::address::Reach {
                    allow_private,
                    ..Default::default()
                },
                ..Default::default()
            },
            apprentice: apprentice.then(ApprenticeConfig::default),
            distill_every: Some(DISTILL_EVERY),
            progress_every: Duration::from_millis(500),
            ..Default::default()
        };
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let status = self.status.clone();
        let out = self.out.clone();
        let classifier = self.model.classifier();
        let (judge_tx, judge_rx) =
            tokio::sync::watch::channel(crate::crawl::Judge::of(&mut self.model));
        let config = CrawlConfig {
            judge_updates: Some(judge_rx),
            ..config
        };
        let paths = self.paths.clone();
        {
            let mut st = status.lock().unwrap_or_else(|p| p.into_inner());
            st.state = "running";
        }
        let task = tokio::spawn(async move {
            let cursor = Arc::new(Mutex::new(Cursor::start(&paths)));
            let pump = tokio::spawn(pump_events(paths.clone(), out.clone(), cursor.clone()));
            let st2 = status.clone();
            let out2 = out.clone();
            let result = crawl::run(
                store,
                classifier,
                config,
                async {
                    let _ = stop_rx.await;
                },
                move |p| {
                    let mut st = st2.lock().unwrap_or_else(|e| e.into_inner());
                    st.progress = p.clone();
                    // Progress is periodic: when the browser is behind, this one is skipped.
                    let _ = out2.try_send(json!({"type": "progress", "status": st.json()}));
                },
            )
            .await;
            pump.abort();
            let _ = pump.await;
            let reason = match &result {
                Ok((r, p)) => {
                    let mut st = status.lock().unwrap_or_else(|e| e.into_inner());
                    st.progress = p.clone();
                    // The final counts, even for a crawl shorter than one progress period.
                    let _ = out.try_send(json!({"type": "progress", "status": st.json()}));
                    format!("{r:?}")
                }
                Err(e) => format!("Error: {e}"),
            };
            // A last flush of pages and hubs, then the final state.
            // Off the runtime: `flush_events` reads the database and blocks on the bounded queue.
            let (p, o) = (paths.clone(), out.clone());
            let _ = tokio::task::spawn_blocking(move || {
                let mut c = cursor.lock().unwrap_or_else(|e| e.into_inner());
                let _ = flush_events(&p, &o, &mut c);
            })
            .await;
            let st = {
                let mut st = status.lock().unwrap_or_else(|e| e.into_inner());
                st.state = "idle";
                st.json()
            };
            let _ = out
                .send(json!({"type": "crawl_stopped", "reason": reason, "status": st}))
                .await;
        });
        self.crawl = Some(RunningCrawl {
            stop: Some(stop_tx),
            judge: judge_tx,
            task,
        });
        Ok(json!({"started": true, "retried": retried, "queued": queued, "status": self.status()}))
    }

    /// Asks the running crawl to stop and waits a few seconds for it: the crawl cancels its
    /// waits and fetches at once, so it is normally done well within that. If not, the handle
    /// is kept, so no second crawl can start beside it (the database lock refuses one too).
    async fn stop_crawl(&mut self) {
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

    /// True while a crawl started by this session has not ended.
    fn crawl_running(&self) -> bool {
        self.crawl.as_ref().is_some_and(|c| !c.task.is_finished())
    }
}

/// Fetched pages between the distillations of the browser's crawls (the side panel says when
/// hubs appear from the `distill_every` of the status).
const DISTILL_EVERY: u64 = 200;

/// Examples an `examples` reply lists at most (URLs are capped at 4 KiB: the reply fits a frame).
const MAX_EXAMPLES_LISTED: usize = 200;

/// How long `stop_crawl` waits for the crawl to end before replying "stopping".
const STOP_WAIT: Duration = Duration::from_secs(4);

/// Counters and alarms of the crawl database, when there is one.
fn db_progress(paths: &HostPaths) -> Option<Progress> {
    if !paths.db().exists() {
        return None;
    }
    let conn = read_only(paths).ok()?;
    let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).ok();
    let relevance = crate::report::relevance_in_fetch_order(&conn).ok()?;
    let frontier = count("SELECT count(*) FROM doc WHERE status = 0")?;
    let recent = &relevance[relevance.len().saturating_sub(100)..];
    Some(Progress {
        fetched: count("SELECT count(*) FROM doc WHERE status = 2")? as u64,
        frontier,
        recent_relevance: recent.iter().sum::<f64>() / recent.len().max(1) as f64,
        alarms: crate::report::alarms_of(&conn, &relevance, frontier).ok()?,
        given_up: count("SELECT count(*) FROM doc WHERE status IN (3, 4)")? as u64,
        ..Progress::default()
    })
}

/// Runs blocking work without stalling the runtime's other tasks (the crawl, the event pump).
fn off_the_runtime<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}

fn read_only(paths: &HostPaths) -> Result<rusqlite::Connection, crate::store::StoreError> {
    Store::open_read_only(&paths.db())
}

fn recent_pages(paths: &HostPaths, limit: i64) -> Result<Vec<Value>, crate::store::StoreError> {
    if !paths.db().exists() {
        return Ok(Vec::new());
    }
    let conn = read_only(paths)?;
    let mut st = conn.prepare(
        "SELECT fetch_seq, url, relevance, title FROM doc WHERE fetch_seq IS NOT NULL
         ORDER BY fetch_seq DESC LIMIT ?1",
    )?;
    let rows = st.query_map([limit], |r| {
        let title = r
            .get::<_, Option<String>>(3)?
            .map(|t| clip(&t, MAX_TITLE_CHARS));
        Ok(
            json!({"seq": r.get::<_, i64>(0)?, "url": r.get::<_, String>(1)?,
            "relevance": r.get::<_, f64>(2)?, "title": title}),
        )
    })?;
    // Newest first until the reply's budget is spent: it must fit in one frame.
    let mut v = Vec::new();
    let mut size = 0;
    for row in rows {
        let row = row?;
        size += row.to_string().len();
        if size > EVENT_BYTES * 3 {
            break;
        }
        v.push(row);
    }
    v.reverse();
    Ok(v)
}

/// The chunk of `bytes` at `offset` as `get_model` and `export` reply with it (base64, at
/// most `MODEL_CHUNK` bytes); `what` names it in the refusal of an offset past its end.
fn chunk(bytes: &[u8], offset: u64, what: &str) -> Result<Value, Refusal> {
    let start = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    let end = start.saturating_add(MODEL_CHUNK).min(bytes.len());
    chunk_reply(bytes.len() as u64, offset, &bytes[start..end], what)
}

/// The reply of one chunk, `data`, at `offset` of `total` bytes.
fn chunk_reply(total: u64, offset: u64, data: &[u8], what: &str) -> Result<Value, Refusal> {
    if offset > total {
        return Err(format!("offset beyond the {what}"));
    }
    Ok(json!({"total": total, "offset": offset,
        "data": base64::engine::general_purpose::STANDARD.encode(data)}))
}

/// The text `export` sends: a list as CSV or JSON Lines, or the HTML report.
fn export_text(
    paths: &HostPaths,
    what: protocol::ExportWhat,
    format: Option<crate::export::Format>,
) -> Result<String, Refusal> {
    use crate::export::What;
    use protocol::ExportWhat as W;
    if !paths.db().exists() {
        return Err("there is no crawl yet: start one first".into());
    }
    let conn = read_only(paths).map_err(|e| e.to_string())?;
    let list = match what {
        W::Hubs => What::Hubs,
        W::Authorities => What::Authorities,
        W::Pages => What::Pages,
        W::Warc => return Err("the WARC archive is sent as bytes".into()),
        W::Report => {
            let r = crate::report::build(&conn, 20).map_err(|e| e.to_string())?;
            return Ok(crate::report::html(&r, "Forager crawl report"));
        }
    };
    let format = format.ok_or("give a format: csv or jsonl")?;
    crate::export::export(&conn, list, format).map_err(|e| e.to_string())
}

fn hubs(paths: &HostPaths, top: usize) -> Result<Value, crate::store::StoreError> {
    if !paths.db().exists() {
        return Ok(json!({"hubs": [], "authorities": []}));
    }
    let conn = read_only(paths)?;
    let list = |table: &str| -> Result<Vec<Value>, crate::store::StoreError> {
        // Zero scores rank nothing: they are left out.
        let mut st = conn.prepare(&format!(
            "SELECT d.url, t.score, coalesce(d.title, '') FROM {table} t JOIN doc d ON d.oid = t.oid
             WHERE t.score > 0 ORDER BY t.score DESC LIMIT ?1"
        ))?;
        let rows = st.query_map([top as i64], |r| {
            Ok(
                json!({"url": r.get::<_, String>(0)?, "score": r.get::<_, f64>(1)?,
                "title": r.get::<_, String>(2)?}),
            )
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    };
    Ok(json!({"hubs": list("hub")?, "authorities": list("auth")?}))
}

/// How far the event stream has got: the last page sent, the last distillation sent.
#[derive(Clone, Copy, Debug, Default)]
struct Cursor {
    seq: i64,
    distilled_at: Option<f64>,
}

impl Cursor {
    /// Starts after the pages already in the database (a resumed crawl).
    fn start(paths: &HostPaths) -> Self {
        let seq = read_only(paths)
            .ok()
            .and_then(|c| {
                c.query_row("SELECT coalesce(max(fetch_seq), 0) FROM doc", [], |r| {
                    r.get(0)
                })
                .ok()
            })
            .unwrap_or(0);
        Cursor {
            seq,
            distilled_at: None,
        }
    }
}

/// Sends the pages fetched since the cursor and, when the distiller ran again, the hubs.
fn flush_events(
    paths: &HostPaths,
    out: &mpsc::Sender<Value>,
    cursor: &mut Cursor,
) -> Result<(), crate::store::StoreError> {
    let conn = read_only(paths)?;
    let mut st = conn.prepare(
        "SELECT fetch_seq, url, relevance, title FROM doc WHERE fetch_seq > ?1
         ORDER BY fetch_seq LIMIT 2000",
    )?;
    let rows = st.query_map([cursor.seq], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, f64>(2)?,
            r.get::<_, Option<String>>(3)?,
        ))
    })?;
    // Events are cut to stay well under the browser's 1 MB frame limit, whatever the titles.
    let mut pages = Vec::new();
    let mut size = 0;
    for row in rows {
        let (seq, url, relevance, title) = row?;
        let title = title.map(|t| clip(&t, MAX_TITLE_CHARS));
        size += url.len() + title.as_ref().map_or(0, String::len) + 64;
        pages.push(json!({"seq": seq, "url": url, "relevance": relevance, "title": title}));
        cursor.seq = seq;
        if size > EVENT_BYTES {
            let _ =
                out.blocking_send(json!({"type": "pages", "pages": std::mem::take(&mut pages)}));
            size = 0;
        }
    }
    if !pages.is_empty() {
        let _ = out.blocking_send(json!({"type": "pages", "pages": pages}));
    }
    let at: Option<f64> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'distilled_at'",
            [],
            |r| r.get(0),
        )
        .ok();
    if at.is_some() && at != cursor.distilled_at {
        cursor.distilled_at = at;
        if let Ok(h) = hubs(paths, 20) {
            let _ = out.blocking_send(
                json!({"type": "hubs", "hubs": h["hubs"], "authorities": h["authorities"]}),
            );
        }
    }
    Ok(())
}

/// Streams `pages` and `hubs` events while a crawl runs.
async fn pump_events(paths: HostPaths, out: mpsc::Sender<Value>, cursor: Arc<Mutex<Cursor>>) {
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (p, o, c) = (paths.clone(), out.clone(), cursor.clone());
        let _ = tokio::task::spawn_blocking(move || {
            let mut c = c.lock().unwrap_or_else(|e| e.into_inner());
            let _ = flush_events(&p, &o, &mut c);
        })
        .await;
    }
}

/// The saved model, or the starter one with the reason when there is none or it could not be
/// read; an unreadable file is kept aside so the next edit cannot overwrite it.
fn load_model(paths: &HostPaths) -> (Model, Option<String>, bool) {
    use crate::model_file::Loaded;
    match crate::model_file::load_or_set_aside(&paths.model()) {
        Ok(Loaded::Model(m)) => (*m, None, true),
        Ok(Loaded::Missing) => (starter_model(), None, true),
        Ok(Loaded::SetAside { kept, why }) => {
            let msg = format!(
                "the saved model could not be read ({why}); it was kept as {} and the starter \
                 taxonomy was loaded",
                kept.display()
            );
            eprintln!("forager: {msg}");
            (starter_model(), Some(msg), true)
        }
        Err(e) => {
            // Unreadable for another reason (permissions): edits would fail to save as well.
            let msg = format!("the saved model could not be opened: {e}; edits are not saved");
            eprintln!("forager: {msg}");
            (starter_model(), Some(msg), false)
        }
    }
}

/// Why an edit made against another copy of the taxonomy must be refused: its optional
/// `expect` object gives, for each topic field it names (`topic`, `parent`), the path the
/// sender saw; the host refuses when its topic of that id has another path, so a stale browser
/// never edits the wrong topic.
fn stale_edit(model: &Model, v: &Value) -> Option<String> {
    let expect = v.get("expect")?.as_object()?;
    for (field, want) in expect {
        let want = want.as_str().unwrap_or_default();
        let id = v.get(field).and_then(Value::as_u64);
        let have = id.and_then(|id| model.taxonomy().path(id as _).ok());
        if have.as_deref() != Some(want) {
            return Some(format!(
                "{} is not {} on the host (its taxonomy changed since the browser read it); \
                 reload the topics and try again",
                clip(
                    &format!("topic {}", id.map_or("?".into(), |i| i.to_string())),
                    40
                ),
                clip(want, 200)
            ));
        }
    }
    None
}

/// What the reader thread hands the handler.
enum Incoming {
    Message(Vec<u8>),
    Oversize(usize),
    End,
    Corrupt(String),
}

/// Serves one browser connection on stdin/stdout until the browser disconnects; returns the
/// process exit code (0 at a clean end, 1 after a corrupt stream).
pub async fn serve_stdio(paths: HostPaths) -> i32 {
    // Bounded: a browser that does not read its replies slows itself down (the host stops
    // reading its requests), it does not grow the host's memory.
    let (out_tx, mut out_rx) = mpsc::channel::<Value>(OUT_QUEUE);
    let writer = std::thread::spawn(move || {
        let stdout = std::io::stdout();
        let mut w = stdout.lock();
        while let Some(v) = out_rx.blocking_recv() {
            if let Err(e) = framing::write_frame(&mut w, &v) {
                if e.kind() == std::io::ErrorKind::InvalidInput {
                    // Too large for the browser: say so instead of dropping silently.
                    let id = v.get("id").cloned().unwrap_or(Value::Null);
                    let msg =
                        json!({"type": "reply", "id": id, "ok": false, "error": e.to_string()});
                    if framing::write_frame(&mut w, &msg).is_err() {
                        break;
                    }
                } else {
                    break; // the browser went away
                }
            }
        }
    });
    let (in_tx, mut in_rx) = mpsc::channel::<Incoming>(16);
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut r = stdin.lock();
        loop {
            let item = match framing::read_frame(&mut r) {
                Ok(Some(Frame::Message(b))) => Incoming::Message(b),
                Ok(Some(Frame::Oversize(n))) => Incoming::Oversize(n),
                Ok(None) => Incoming::End,
                Err(FrameError::Truncated) => Incoming::End,
                Err(e) => Incoming::Corrupt(e.to_string()),
            };
            let last = matches!(item, Incoming::End | Incoming::Corrupt(_));
            if in_tx.blocking_send(item).is_err() || last {
                break;
            }
        }
    });
    let (model, model_error, may_save) = load_model(&paths);
    let mut session = Session {
        paths,
        model,
        model_error,
        may_save,
        greeted: false,
        status: Arc::default(),
        crawl: None,
        out: out_tx.clone(),
    };
    let code = loop {
        let Some(item) = in_rx.recv().await else {
            break 0;
        };
        let reply = match item {
            Incoming::End => break 0,
            Incoming::Corrupt(why) => {
                let _ = out_tx
                    .send(json!({"type": "reply", "id": null, "ok": false,
                        "error": format!("corrupt stream: {why}")}))
                    .await;
                break 1;
            }
            Incoming::Oversize(n) => json!({"type": "reply", "id": null, "ok": false,
                "error": format!("frame of {n} bytes is over the {} byte limit", framing::MAX_FROM_BROWSER)}),
            Incoming::Message(b) => match serde_json::from_slice::<Value>(&b) {
                Ok(v) if v.is_object() => {
                    let id = v.get("id").cloned().unwrap_or(Value::Null);
                    if !id.is_u64() && !id.is_i64() {
                        json!({"type": "reply", "id": id, "ok": false, "error": "a request needs a numeric id"})
                    } else {
                        let stale = stale_edit(&session.model, &v);
                        let outcome = match serde_json::from_value::<Request>(v) {
                            Ok(_) if stale.is_some() => Err(stale.unwrap_or_default()),
                            Ok(req) => session.handle(req).await,
                            Err(e) => Err(if e.to_string().contains("unknown variant") {
                                format!("unknown request type: {e}")
                            } else {
                                format!("malformed request: {e}")
                            }),
                        };
                        match outcome {
                            Ok(result) => {
                                json!({"type": "reply", "id": id, "ok": true, "result": result})
                            }
                            Err(e) => json!({"type": "reply", "id": id, "ok": false, "error": e}),
                        }
                    }
                }
                Ok(_) => {
                    json!({"type": "reply", "id": null, "ok": false, "error": "a message must be a JSON object"})
                }
                Err(e) => {
                    json!({"type": "reply", "id": null, "ok": false, "error": format!("invalid JSON: {e}")})
                }
            },
        };
        if out_tx.send(reply).await.is_err() {
            break 0;
        }
    };
    // The browser closed the port: the crawl stops gracefully (it resumes on the next start).
    session.stop_crawl().await;
    let clean = match session.crawl.take() {
        None => true,
        // Still writing its last batch: a few more seconds, then the process exits anyway
        // (SQLite rolls back an unfinished transaction; nothing committed is lost).
        Some(c) => tokio::time::timeout(STOP_WAIT, c.task).await.is_ok(),
    };
    drop(session);
    drop(out_tx);
    if clean {
        let _ = writer.join();
    }
    code
}
