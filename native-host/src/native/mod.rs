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
}

/// The embedded starter taxonomy: the demo topics trained on the generated web's examples.
pub fn starter_model() -> Model {
    let web = crate::synthweb::SynthWeb::generate(&Default::default()).web;
    crate::training::from_miniweb(&web, Default::default(), Default::default())
        .map(|(m, _)| m)
        .unwrap_or_default()
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
        json!({
            "state": if self.state.is_empty() { "idle" } else { self.state },
            "fetched": p.fetched, "frontier": p.frontier, "pages_per_sec": p.pages_per_sec,
            "errors": p.errors.values().sum::<u64>(), "recent_relevance": p.recent_relevance,
            "alarms": p.alarms,
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
    out: mpsc::UnboundedSender<Value>,
}

/// A request the host refuses, with the reason for the reply.
type Refusal = String;

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
        std::fs::create_dir_all(&self.paths.dir).map_err(|e| e.to_string())?;
        let tmp = self.paths.model().with_extension("tmp");
        std::fs::write(&tmp, self.model.to_bytes()).map_err(|e| e.to_string())?;
        std::fs::rename(&tmp, self.paths.model()).map_err(|e| e.to_string())
    }

    fn status(&self) -> Value {
        let mut st = self.status.lock().unwrap_or_else(|p| p.into_inner());
        if st.state.is_empty() || st.state == "idle" {
            // No crawl running in this process: describe the crawl database as it stands, so a
            // reconnecting extension sees the crawl an earlier host made.
            if let Some(p) = db_progress(&self.paths) {
                st.progress = p;
            }
        }
        st.json()
    }

    async fn handle(&mut self, req: Request) -> Result<Value, Refusal> {
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
                self.model
                    .add_example(topic, &url, &text)
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
            Request::GetModel { offset } => {
                let bytes = self.model.to_bytes();
                let offset = usize::try_from(offset).unwrap_or(usize::MAX);
                if offset > bytes.len() {
                    return Err("offset beyond the model".into());
                }
                let end = (offset + MODEL_CHUNK).min(bytes.len());
                Ok(json!({"total": bytes.len(), "offset": offset,
                    "data": base64::engine::general_purpose::STANDARD.encode(&bytes[offset..end])}))
            }
            Request::StartCrawl(start) => self.start_crawl(start).await,
            Request::StopCrawl {} => {
                self.stop_crawl().await;
                Ok(json!({"status": self.status()}))
            }
            Request::Status {} => Ok(json!({"status": self.status()})),
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
        if self.crawl.as_ref().is_some_and(|c| !c.task.is_finished()) {
            return Err("a crawl is already running".into());
        }
        if req.seeds.len() > 10_000 {
            return Err("too many seeds".into());
        }
        let mut seeds = Vec::new();
        for s in &req.seeds {
            let u = crate::canon::parse(s).map_err(|_| format!("not an http(s) URL: {s:?}"))?;
            seeds.push(u);
        }
        if seeds.is_empty() {
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
        if seeds.is_empty() {
            return Err("no seeds: give URLs or mark a topic with examples good".into());
        }
        let pages = req.pages.unwrap_or(2000).clamp(1, 10_000_000);
        let delay = req.delay.unwrap_or(1.0);
        let delay = if delay.is_finite() {
            delay.clamp(0.0, 60.0)
        } else {
            1.0
        };
        let proxy = match &req.proxy {
            Some(p) => Some(loopback_proxy(p)?),
            None => None,
        };
        let apprentice = req.apprentice.unwrap_or(true);
        std::fs::create_dir_all(&self.paths.dir).map_err(|e| e.to_string())?;
        let mut store = Store::open(&self.paths.db()).map_err(|e| e.to_string())?;
        store
            .save_taxonomy(&self.model)
            .map_err(|e| e.to_string())?;
        let seeds: Vec<NewUrl> = seeds.iter().map(NewUrl::seed).collect();
        store.add_seeds(&seeds).map_err(|e| e.to_string())?;
        // The budget is for this start: "crawl more" after a finished crawl must fetch more.
        let before = u64::try_from(store.fetched().map_err(|e| e.to_string())?).unwrap_or(0);
        let config = CrawlConfig {
            mode: Mode::Soft,
            max_pages: Some(before.saturating_add(pages)),
            concurrency: 8,
            delay: Duration::from_secs_f64(delay),
            fetch: crate::fetch::FetchConfig {
                proxy,
                ..Default::default()
            },
            apprentice: apprentice.then(ApprenticeConfig::default),
            distill_every: Some(200),
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
                    let _ = out2.send(json!({"type": "progress", "status": st.json()}));
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
                    let _ = out.send(json!({"type": "progress", "status": st.json()}));
                    format!("{r:?}")
                }
                Err(e) => format!("Error: {e}"),
            };
            // A last flush of pages and hubs, then the final state.
            {
                let mut c = cursor.lock().unwrap_or_else(|e| e.into_inner());
                let _ = flush_events(&paths, &out, &mut c);
            }
            let st = {
                let mut st = status.lock().unwrap_or_else(|e| e.into_inner());
                st.state = "idle";
                st.json()
            };
            let _ = out.send(json!({"type": "crawl_stopped", "reason": reason, "status": st}));
        });
        self.crawl = Some(RunningCrawl {
            stop: Some(stop_tx),
            judge: judge_tx,
            task,
        });
        Ok(json!({"started": true, "status": self.status()}))
    }

    async fn stop_crawl(&mut self) {
        if let Some(mut c) = self.crawl.take() {
            {
                let mut st = self.status.lock().unwrap_or_else(|p| p.into_inner());
                if st.state == "running" {
                    st.state = "stopping";
                }
            }
            if let Some(s) = c.stop.take() {
                let _ = s.send(());
            }
            let _ = tokio::time::timeout(Duration::from_secs(60), &mut c.task).await;
        }
    }
}

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
    let mut errors = std::collections::HashMap::new();
    errors.insert(
        "failed".to_owned(),
        count("SELECT count(*) FROM doc WHERE status IN (3, 4)")? as u64,
    );
    Some(Progress {
        fetched: count("SELECT count(*) FROM doc WHERE status = 2")? as u64,
        frontier,
        recent_relevance: recent.iter().sum::<f64>() / recent.len().max(1) as f64,
        alarms: crate::report::alarms_of(&conn, &relevance, frontier).ok()?,
        errors,
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
    let mut v: Vec<Value> = st
        .query_map([limit], |r| {
            Ok(
                json!({"seq": r.get::<_, i64>(0)?, "url": r.get::<_, String>(1)?,
                "relevance": r.get::<_, f64>(2)?, "title": r.get::<_, Option<String>>(3)?}),
            )
        })?
        .collect::<Result<_, _>>()?;
    v.reverse();
    Ok(v)
}

fn hubs(paths: &HostPaths, top: usize) -> Result<Value, crate::store::StoreError> {
    if !paths.db().exists() {
        return Ok(json!({"hubs": [], "authorities": []}));
    }
    let conn = read_only(paths)?;
    let list = |table: &str| -> Result<Vec<Value>, crate::store::StoreError> {
        let mut st = conn.prepare(&format!(
            "SELECT d.url, t.score FROM {table} t JOIN doc d ON d.oid = t.oid
             ORDER BY t.score DESC LIMIT ?1"
        ))?;
        let rows = st.query_map([top as i64], |r| {
            Ok(json!({"url": r.get::<_, String>(0)?, "score": r.get::<_, f64>(1)?}))
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
    out: &mpsc::UnboundedSender<Value>,
    cursor: &mut Cursor,
) -> Result<(), crate::store::StoreError> {
    let conn = read_only(paths)?;
    let mut st = conn.prepare(
        "SELECT fetch_seq, url, relevance, title FROM doc WHERE fetch_seq > ?1
         ORDER BY fetch_seq LIMIT 2000",
    )?;
    let pages: Vec<Value> = st
        .query_map([cursor.seq], |r| {
            Ok(
                json!({"seq": r.get::<_, i64>(0)?, "url": r.get::<_, String>(1)?,
                "relevance": r.get::<_, f64>(2)?, "title": r.get::<_, Option<String>>(3)?}),
            )
        })?
        .collect::<Result<_, _>>()?;
    if let Some(last) = pages.last().and_then(|p| p["seq"].as_i64()) {
        cursor.seq = last;
        let _ = out.send(json!({"type": "pages", "pages": pages}));
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
            let _ = out
                .send(json!({"type": "hubs", "hubs": h["hubs"], "authorities": h["authorities"]}));
        }
    }
    Ok(())
}

/// Streams `pages` and `hubs` events while a crawl runs.
async fn pump_events(
    paths: HostPaths,
    out: mpsc::UnboundedSender<Value>,
    cursor: Arc<Mutex<Cursor>>,
) {
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
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Value>();
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
    let model = std::fs::read(HostPaths::model(&paths))
        .ok()
        .and_then(|b| Model::from_bytes(&b).ok())
        .unwrap_or_else(starter_model);
    let mut session = Session {
        paths,
        model,
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
                let _ = out_tx.send(json!({"type": "reply", "id": null, "ok": false,
                    "error": format!("corrupt stream: {why}")}));
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
                        let outcome = match serde_json::from_value::<Request>(v) {
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
        if out_tx.send(reply).is_err() {
            break 0;
        }
    };
    // The browser closed the port: the crawl stops gracefully (it resumes on the next start).
    session.stop_crawl().await;
    drop(session);
    drop(out_tx);
    let _ = writer.join();
    code
}
