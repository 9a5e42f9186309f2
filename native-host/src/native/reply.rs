//! What the host sends the browser (extension/PROTOCOL.md), as typed values: the reply to
//! each request, the crawl's events, and the refusal of a request, mirrored by the
//! `RequestMap`, `Reply` and `HostEvent` types of `extension/lib/protocol.js`.

use crate::crawl::Progress;
use forager_classifier::{ExampleInfo, TopicId, TopicInfo};
use serde::Serialize;
use serde_json::Value;

/// A frame from the host: a reply to a request, or an event of the running crawl.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Outgoing {
    /// The answer to the request with this `id` (`null` when the request had none readable).
    Reply {
        /// The request's id, echoed.
        id: Value,
        /// Whether the request was carried out.
        ok: bool,
        /// What it produced, when it was.
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Reply>,
        /// Why not, when it was refused.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// The kind of refusal, for the extension to act on.
        #[serde(skip_serializing_if = "Option::is_none")]
        code: Option<RefusalCode>,
    },
    /// The crawl's counters, about twice a second while it runs.
    Progress {
        /// The counters.
        status: StatusView,
    },
    /// Pages fetched since the last `pages` event, oldest first.
    Pages {
        /// The pages.
        pages: Vec<PageView>,
    },
    /// The distiller ran again: its top hubs and authorities.
    Hubs(HubsView),
    /// The crawl ended, and why.
    CrawlStopped {
        /// The stop reason, or the error that ended it.
        reason: String,
        /// Why it stopped, as a sentence for people (with the failing hosts when nothing
        /// could be fetched).
        message: String,
        /// The final counters.
        status: StatusView,
    },
}

impl Outgoing {
    /// The reply to request `id`: its result, or the refusal.
    pub fn reply(id: Value, outcome: Result<Reply, Refusal>) -> Outgoing {
        match outcome {
            Ok(r) => Outgoing::Reply {
                id,
                ok: true,
                result: Some(r),
                error: None,
                code: None,
            },
            Err(e) => Outgoing::Reply {
                id,
                ok: false,
                result: None,
                error: Some(e.to_string()),
                code: Some(e.code()),
            },
        }
    }

    /// The request id this frame answers, if it is a reply.
    pub fn id(&self) -> Option<&Value> {
        match self {
            Outgoing::Reply { id, .. } => Some(id),
            _ => None,
        }
    }
}

/// The result of a request, by request (see `RequestMap` in `extension/lib/protocol.js`).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Reply {
    /// `hello`: the host's protocol version, name, model trouble and crawl.
    Hello {
        /// Protocol version.
        version: u64,
        /// `forager <version>`.
        host: &'static str,
        /// Why the saved model could not be loaded, if it could not.
        model_error: Option<String>,
        /// Where the crawl lives: the crawl file, or a shared server's URL without its
        /// password (`set_crawl_db`).
        database: String,
        /// The crawl's counters.
        crawl: StatusView,
    },
    /// Topic edits and `topics`: the taxonomy after the edit.
    Topics {
        /// Every topic with its example counts.
        topics: Vec<TopicInfo>,
    },
    /// `add_topic`: the new topic's id and the taxonomy.
    TopicAdded {
        /// The new topic.
        id: TopicId,
        /// Every topic.
        topics: Vec<TopicInfo>,
    },
    /// `delete_topic`: how many examples went with the subtree.
    TopicDeleted {
        /// Examples removed.
        removed_examples: usize,
        /// Every topic.
        topics: Vec<TopicInfo>,
    },
    /// `add_example`: the taxonomy, and the topic the page moved from if it was another's.
    ExampleAdded {
        /// Every topic.
        topics: Vec<TopicInfo>,
        /// The page's former topic.
        #[serde(skip_serializing_if = "Option::is_none")]
        moved_from: Option<String>,
    },
    /// `examples`: a topic's examples, cut to a bounded list.
    Examples {
        /// The examples.
        examples: Vec<ExampleInfo>,
        /// The list was cut.
        truncated: bool,
    },
    /// `mark_not_relevant`: the taxonomy and every page marked.
    NotRelevant {
        /// Every topic.
        topics: Vec<TopicInfo>,
        /// Pages marked not relevant: this request's first, as many as fit a reply.
        not_relevant: Vec<String>,
        /// How many pages are marked in all.
        not_relevant_total: usize,
    },
    /// `get_model` and `export`: one base64 chunk of a byte stream.
    Chunk {
        /// Length of the whole stream.
        total: u64,
        /// Where this chunk starts.
        offset: u64,
        /// The chunk, base64.
        data: String,
    },
    /// `start_crawl`.
    CrawlStarted {
        /// Always true (a refusal is an error).
        started: bool,
        /// Failed URLs put back in the frontier.
        retried: usize,
        /// Links queued first by "crawl more from here".
        queued: usize,
        /// The crawl's counters.
        status: StatusView,
    },
    /// `queue_links`: how many links went to the frontier's head, and whether a running crawl
    /// took them (else they wait for the next start).
    Queued {
        /// Links queued.
        queued: usize,
        /// A crawl was running.
        running: bool,
        /// What happened to each URL, in the order given.
        fates: Vec<QueueFate>,
        /// The crawl's counters.
        status: StatusView,
    },
    /// `give_up_hosts`: how many hosts the running crawl gives up on.
    GaveUp {
        /// Hosts given up on.
        hosts: usize,
        /// The crawl's counters.
        status: StatusView,
    },
    /// `link_fates`: what the crawl did with each URL (those that parse), in order.
    LinkFates {
        /// One per URL.
        fates: Vec<QueueFate>,
    },
    /// `suggestions`: topics next to the good ones that the good pages keep leading to.
    Suggestions {
        /// Most pages first.
        suggestions: Vec<SuggestionView>,
        /// What the census looked at (so "nothing to suggest" can say so), once a crawl ran.
        looked: Option<crate::widen::Looked>,
    },
    /// `new_crawl`: where the old database was kept.
    CrawlSetAside {
        /// The old database's new name, when there was one.
        kept: Option<String>,
        /// The (empty) crawl's counters.
        status: StatusView,
    },
    /// `set_crawl_db`: where the crawl now lives.
    CrawlDb {
        /// The crawl's place, shown (a server URL without its password).
        database: String,
        /// Whether it is a crawl shared on a server.
        shared: bool,
        /// Its counters.
        status: StatusView,
    },
    /// `status` and `stop_crawl`.
    Status {
        /// The crawl's counters.
        status: StatusView,
    },
    /// `hubs`.
    Hubs(HubsView),
    /// `self_train`: examples added from confident pages, and the ones removed.
    SelfTrained {
        /// Examples added.
        added: usize,
        /// Pages read.
        pages: usize,
        /// Earlier self-trained examples removed.
        removed: usize,
        /// Every topic.
        topics: Vec<TopicInfo>,
    },
    /// `recent_pages`.
    RecentPages {
        /// The pages, oldest first.
        pages: Vec<PageView>,
    },
    /// `search`: the pages found, best first.
    Search {
        /// The hits.
        hits: Vec<super::search::HitView>,
    },
    /// `whats_new`: relevant pages first fetched and pages changed since a time.
    WhatsNew {
        /// The host's time now (Unix seconds): "seen" up to here.
        now: f64,
        /// How many pages are new or changed in all.
        count: i64,
        /// The newest of them, newest first.
        pages: Vec<crate::store::NewsItem>,
    },
}

/// What `queue_links` did with one URL (`QueueFate` in protocol.js).
#[derive(Clone, Debug, Serialize)]
pub struct QueueFate {
    /// The URL as given.
    pub url: String,
    /// `queued`, `fetched` (already) or `failed` (given up on before): not queued again.
    pub fate: &'static str,
    /// The same in words.
    pub why: String,
}

/// The crawl's counters as the browser shows them (`Status` in protocol.js).
#[derive(Clone, Debug, Serialize)]
pub struct StatusView {
    /// `idle`, `running` or `stopping`.
    pub state: &'static str,
    /// Pages fetched (all runs).
    pub fetched: u64,
    /// URLs in the frontier.
    pub frontier: i64,
    /// Fetch rate of this run (0 when idle).
    pub pages_per_sec: f64,
    /// URLs given up on, in all runs.
    pub errors: u64,
    /// Mean relevance of the last 100 pages.
    pub recent_relevance: f64,
    /// The monitor's alarms.
    pub alarms: Vec<crate::monitor::Alarm>,
    /// Why the crawl waits, while its own path to the web fails.
    pub paused: Option<String>,
    /// Hosts backing off.
    pub hosts_waiting: usize,
    /// URLs waiting for a backoff.
    pub parked: usize,
    /// Pages between distillations.
    pub distill_every: u64,
    /// Failing hosts: cause in words, a URL, seconds to the next try (waiting ones first).
    pub failing: Vec<crate::crawl::words::HostTrouble>,
    /// How many hosts are failing, all of them.
    pub failing_hosts: usize,
    /// While only parked work is left: seconds until it is tried, and for how many hosts.
    pub waiting: Option<crate::crawl::words::Waiting>,
    /// Seconds of this run spent waiting with only parked work left.
    pub idle_secs: f64,
}

impl StatusView {
    /// The view of `p` in crawl state `state` (empty: no crawl yet, shown as idle).
    pub fn of(state: &'static str, p: &Progress, distill_every: u64) -> StatusView {
        let state = if state.is_empty() { "idle" } else { state };
        StatusView {
            state,
            fetched: p.fetched,
            frontier: p.frontier,
            // A rate only while crawling; errors are pages given up on, in all runs.
            pages_per_sec: if state == "idle" {
                0.0
            } else {
                p.pages_per_sec
            },
            errors: p.given_up,
            recent_relevance: p.recent_relevance,
            alarms: p.alarms.clone(),
            paused: p.paused.clone(),
            hosts_waiting: p.hosts_waiting,
            parked: p.parked,
            distill_every,
            failing: p.failing.clone(),
            failing_hosts: p.failing_hosts,
            waiting: p.waiting.clone(),
            idle_secs: p.idle_secs,
        }
    }
}

/// A fetched page as the browser lists it (`Page` in protocol.js).
#[derive(Clone, Debug, Serialize)]
pub struct PageView {
    /// Fetch sequence number.
    pub seq: i64,
    /// URL.
    pub url: String,
    /// R(d).
    pub relevance: f64,
    /// Title, clipped.
    pub title: Option<String>,
}

/// A hub or authority (`Hub` in protocol.js).
#[derive(Clone, Debug, Serialize)]
pub struct HubView {
    /// URL.
    pub url: String,
    /// Score of the last distillation.
    pub score: f64,
    /// Title (empty when the page has none).
    pub title: String,
    /// Of its out-links to fetched pages, those to pages with R >= 0.5 (why it ranks).
    pub relevant_links: i64,
    /// Its out-links to fetched pages.
    pub fetched_links: i64,
}

/// The distiller's top hubs and authorities (`HubsResult` in protocol.js).
#[derive(Clone, Debug, Default, Serialize)]
pub struct HubsView {
    /// Top hubs.
    pub hubs: Vec<HubView>,
    /// Top authorities.
    pub authorities: Vec<HubView>,
}

/// Why a request was refused; its `code` goes with the message so the extension can act on
/// the kind (offer to reload on `stale`, wait on `busy`) without reading the words.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// The request is not valid: malformed, out of range, too long, or wrong for the model.
    #[error("{0}")]
    Invalid(String),
    /// The first request must be `hello`.
    #[error("send hello first")]
    NotGreeted,
    /// An edit made against another copy of the taxonomy.
    #[error("{0}")]
    Stale(String),
    /// A crawl is running or stopping.
    #[error("{0}")]
    Busy(String),
    /// What the request needs is not there yet (a crawl, a fetched page, an archive).
    #[error("{0}")]
    Missing(String),
    /// The host failed to carry it out (disk, database).
    #[error("{0}")]
    Failed(String),
}

/// The kind of a refusal, on the wire.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RefusalCode {
    /// See [`Refusal::Invalid`].
    Invalid,
    /// See [`Refusal::NotGreeted`].
    NotGreeted,
    /// See [`Refusal::Stale`].
    Stale,
    /// See [`Refusal::Busy`].
    Busy,
    /// See [`Refusal::Missing`].
    Missing,
    /// See [`Refusal::Failed`].
    Failed,
}

impl Refusal {
    /// The refusal's kind.
    pub fn code(&self) -> RefusalCode {
        match self {
            Refusal::Invalid(_) => RefusalCode::Invalid,
            Refusal::NotGreeted => RefusalCode::NotGreeted,
            Refusal::Stale(_) => RefusalCode::Stale,
            Refusal::Busy(_) => RefusalCode::Busy,
            Refusal::Missing(_) => RefusalCode::Missing,
            Refusal::Failed(_) => RefusalCode::Failed,
        }
    }
}

/// A model edit the model refused (an unknown topic, a duplicate name): the request was wrong.
impl From<forager_classifier::Error> for Refusal {
    fn from(e: forager_classifier::Error) -> Self {
        Refusal::Invalid(e.to_string())
    }
}

/// The crawl database failed under the request.
impl From<crate::store::StoreError> for Refusal {
    fn from(e: crate::store::StoreError) -> Self {
        match e {
            crate::store::StoreError::Locked(_) => Refusal::Busy(e.to_string()),
            e => Refusal::Failed(e.to_string()),
        }
    }
}

/// A suggestion to widen the focus, with its evidence (`Suggestion` in protocol.js).
#[derive(Clone, Debug, Serialize)]
pub struct SuggestionView {
    /// The topic, its relation to a good one and the census's counts.
    #[serde(flatten)]
    pub suggestion: crate::widen::Suggestion,
    /// Pages of the census classified under it, first fetched first.
    pub examples: Vec<ExampleLink>,
}

/// A page shown as evidence.
#[derive(Clone, Debug, Serialize)]
pub struct ExampleLink {
    /// Its URL.
    pub url: String,
    /// Its title ("" when it has none).
    pub title: String,
}
