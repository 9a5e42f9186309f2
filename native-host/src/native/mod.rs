//! The browser's native-messaging endpoint (`forager native`): the host side of
//! extension/PROTOCOL.md. The host is the one source of truth for taxonomy, model and crawl;
//! the crawl runs here and keeps running while the extension's pages come and go.
//!
//! One thread reads frames from stdin, one writes frames to stdout; requests are handled in
//! order on the async runtime, and crawl events flow to the writer through the same channel.

use crate::crawl::{self, ApprenticeConfig, CrawlConfig, CrawlEvent, Guide, Mode, Progress};
use crate::framing::{self, Frame, FrameError};
use crate::store::{CrawlDb, FetchedPage, Locator, Ranking, Reader, Store};
use base64::Engine;
use forager_classifier::{Model, TopicId, TopicInfo};
use serde_json::Value;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

mod browse;
mod crawl_task;
mod edits;
mod events;
mod export;
#[cfg(test)]
mod limits_tests;
mod protocol;
mod reply;
mod search;
mod session;
#[cfg(test)]
mod tests;

use browse::*;
use crawl_task::*;
use events::*;
use export::*;
use session::*;

pub use protocol::{Request, StartCrawl};
pub use reply::{
    ExampleLink, HubView, HubsView, Outgoing, PageView, QueueFate, Refusal, RefusalCode, Reply,
    StatusView, SuggestionView,
};

/// Protocol version spoken by this host.
pub const PROTOCOL_VERSION: u64 = 1;
/// Largest model chunk sent in one `get_model` reply (base64 grows it by a third).
const MODEL_CHUNK: usize = 512 * 1024;
/// Messages waiting for the browser before the host stops taking requests.
const OUT_QUEUE: usize = 32;
/// Crawl events waiting for the browser before the crawl drops them (the pages are read
/// again from the database when the browser catches up).
const EVENT_QUEUE: usize = 64;
/// Rough size at which a `pages` event is cut.
const EVENT_BYTES: usize = 256 * 1024;
/// Longest title sent to the browser, in characters.
pub const MAX_TITLE_CHARS: usize = 300;

/// `s` cut to at most `max` characters, with an ellipsis when cut; control characters (which
/// JSON escapes to six bytes each) become spaces.
pub fn clip(s: &str, max: usize) -> String {
    let plain = |t: &str| -> String {
        t.chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect()
    };
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", plain(&s[..i])),
        None => plain(s),
    }
}
/// Largest reply the host sends, measured as JSON: the browser's limit less room for the
/// envelope (`{"type":"reply","id":…,"ok":true,"result":…}`).
const MAX_REPLY: usize = framing::MAX_TO_BROWSER - 1024;
/// The bytes one list in a reply may take (hubs and authorities, marks) before it is cut.
const LIST_BYTES: usize = 256 * 1024;
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
    /// (and, for the XDG and HOME variables, relative) values count as unset. With none of
    /// them set, refused: the host never writes into whatever directory it was started in.
    pub fn from_env() -> Result<Self, String> {
        use crate::install::env_path;
        let dir = env_path("FORAGER_HOME", false)
            .or_else(|| env_path("XDG_DATA_HOME", true).map(|d| d.join("forager")))
            .or_else(|| env_path("HOME", true).map(|h| h.join(".local/share/forager")))
            .ok_or(
                "no data directory: set HOME (or XDG_DATA_HOME, or FORAGER_HOME) to where the \
                 host may keep its model and crawl",
            )?;
        Ok(HostPaths { dir })
    }

    /// The model file.
    pub fn model(&self) -> PathBuf {
        self.dir.join("model.fgm")
    }

    /// The crawl database.
    pub fn db(&self) -> PathBuf {
        self.dir.join("crawl.db")
    }

    /// The file naming the shared crawl the user chose (a `postgres://` URL, one line).
    pub fn shared_crawl_file(&self) -> PathBuf {
        self.dir.join("shared-crawl.url")
    }

    /// Where the host's crawl lives: the shared server the user chose (`set_crawl_db`), else
    /// the crawl database file in the data directory.
    pub fn locator(&self) -> Locator {
        let chosen = std::fs::read_to_string(self.shared_crawl_file()).unwrap_or_default();
        match Locator::parse(chosen.trim()) {
            shared @ Locator::Postgres(_) => shared,
            Locator::Sqlite(_) => Locator::Sqlite(self.db()),
        }
    }

    /// Whether there is a crawl to read: a shared server always is one; a file once made.
    pub fn has_crawl(&self) -> bool {
        match self.locator() {
            Locator::Postgres(_) => true,
            Locator::Sqlite(p) => p.exists(),
        }
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

/// Fetched pages between the distillations of the browser's crawls (the side panel says when
/// hubs appear from the `distill_every` of the status).
const DISTILL_EVERY: u64 = 200;

/// Examples an `examples` reply lists at most (URLs are capped at 4 KiB: the reply fits a frame).
const MAX_EXAMPLES_LISTED: usize = 200;

/// How long `stop_crawl` waits for the crawl to end before replying "stopping".
const STOP_WAIT: Duration = Duration::from_secs(4);

/// Most JSON values (arrays, objects and their members) one request may hold: a thousand
/// queued links are about a thousand.
const MAX_VALUES: usize = 100_000;

/// About how many JSON values `b` holds (a count of commas and opening brackets outside
/// strings), without parsing it.
fn json_values(b: &[u8]) -> usize {
    let (mut n, mut in_str, mut esc) = (0, false, false);
    for &c in b {
        if in_str {
            match c {
                _ if esc => esc = false,
                b'\\' => esc = true,
                b'"' => in_str = false,
                _ => {}
            }
        } else {
            match c {
                b'"' => in_str = true,
                b',' | b'[' | b'{' => n += 1,
                _ => {}
            }
        }
    }
    n
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
    serve(paths, std::io::stdin(), std::io::stdout()).await
}

/// Serves one connection: framed requests read from `input`, replies and events written to
/// `output`, until `input` ends; returns 0 at a clean end, 1 after a corrupt stream.
pub async fn serve(
    paths: HostPaths,
    input: impl Read + Send + 'static,
    output: impl Write + Send + 'static,
) -> i32 {
    // Bounded: a browser that does not read its replies slows itself down (the host stops
    // reading its requests), it does not grow the host's memory.
    let (out_tx, out_rx) = mpsc::channel::<Outgoing>(OUT_QUEUE);
    let writer = std::thread::spawn(move || write_frames(output, out_rx));
    let (in_tx, mut in_rx) = mpsc::channel::<Incoming>(16);
    std::thread::spawn(move || read_frames(input, in_tx));
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
        apprentice: None,
    };
    let code = loop {
        let Some(item) = in_rx.recv().await else {
            break 0;
        };
        let refuse = |why: String| Outgoing::reply(Value::Null, Err(Refusal::Invalid(why)));
        let reply = match item {
            Incoming::End => break 0,
            Incoming::Corrupt(why) => {
                let _ = out_tx.send(refuse(format!("corrupt stream: {why}"))).await;
                break 1;
            }
            Incoming::Oversize(n) => refuse(format!(
                "frame of {n} bytes is over the {} byte limit",
                framing::MAX_FROM_BROWSER
            )),
            Incoming::Message(b) => session.answer_frame(&b).await,
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

/// The writer thread: frames to `output` until the channel closes or the browser goes away.
fn write_frames(mut output: impl Write, mut out_rx: mpsc::Receiver<Outgoing>) {
    while let Some(msg) = out_rx.blocking_recv() {
        match framing::write_frame(&mut output, &msg) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
                // Too large for the browser: say so instead of dropping silently.
                let id = msg.id().cloned().unwrap_or(Value::Null);
                let why = Outgoing::reply(id, Err(Refusal::Failed(e.to_string())));
                if framing::write_frame(&mut output, &why).is_err() {
                    break;
                }
            }
            Err(_) => break, // the browser went away
        }
    }
}

/// The reader thread: frames from `input` until it ends or is corrupt.
fn read_frames(mut input: impl Read, in_tx: mpsc::Sender<Incoming>) {
    loop {
        let item = match framing::read_frame(&mut input) {
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
}

impl Session {
    /// The reply to one framed message: parsed, checked against a stale taxonomy, answered.
    async fn answer_frame(&mut self, b: &[u8]) -> Outgoing {
        let values = json_values(b);
        if values > MAX_VALUES {
            // Parsed, a 4 MB frame of tiny values ([{},{},...]) costs hundreds of MB.
            let why = format!(
                "a request holds {values} JSON values, more than the {MAX_VALUES} any request needs"
            );
            return Outgoing::reply(Value::Null, Err(Refusal::Invalid(why)));
        }
        let v = match serde_json::from_slice::<Value>(b) {
            Ok(v) if v.is_object() => v,
            Ok(_) => {
                let why = "a message must be a JSON object".to_string();
                return Outgoing::reply(Value::Null, Err(Refusal::Invalid(why)));
            }
            Err(e) => {
                let why = format!("invalid JSON: {e}");
                return Outgoing::reply(Value::Null, Err(Refusal::Invalid(why)));
            }
        };
        let id = v.get("id").cloned().unwrap_or(Value::Null);
        if !id.is_u64() && !id.is_i64() {
            let why = "a request needs a numeric id".to_string();
            return Outgoing::reply(id, Err(Refusal::Invalid(why)));
        }
        let stale = stale_edit(&self.model, &v);
        let outcome = match (stale, serde_json::from_value::<Request>(v)) {
            (Some(stale), Ok(_)) => Err(stale),
            (None, Ok(req)) => self.handle(req).await,
            (_, Err(e)) => Err(Refusal::Invalid(
                if e.to_string().contains("unknown variant") {
                    format!("unknown request type: {e}")
                } else {
                    format!("malformed request: {e}")
                },
            )),
        };
        Outgoing::reply(id, outcome)
    }
}
