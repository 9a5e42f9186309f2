//! The browser's native-messaging endpoint (`forager native`): the host side of
//! extension/PROTOCOL.md. The host is the one source of truth for taxonomy, model and crawl;
//! the crawl runs here and keeps running while the extension's pages come and go.
//!
//! One thread reads frames from stdin, one writes frames to stdout; requests are handled in
//! order on the async runtime, and crawl events flow to the writer through the same channel.

use crate::crawl::{self, ApprenticeConfig, CrawlConfig, Mode, Progress};
use crate::framing::{self, Frame, FrameError};
use crate::store::{NewUrl, PageRow, Ranking, ReadOnly, Store};
use base64::Engine;
use forager_classifier::Model;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

mod crawl_task;
mod events;
mod protocol;
mod session;

use crawl_task::*;
use events::*;
use session::*;

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

/// A request the host refuses, with the reason for the reply.
type Refusal = String;

/// Fetched pages between the distillations of the browser's crawls (the side panel says when
/// hubs appear from the `distill_every` of the status).
const DISTILL_EVERY: u64 = 200;

/// Examples an `examples` reply lists at most (URLs are capped at 4 KiB: the reply fits a frame).
const MAX_EXAMPLES_LISTED: usize = 200;

/// How long `stop_crawl` waits for the crawl to end before replying "stopping".
const STOP_WAIT: Duration = Duration::from_secs(4);

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
