//! The requests the extension may send (extension/PROTOCOL.md), as typed values: anything
//! that does not deserialize into one of them is refused before it reaches the handler.

use forager_classifier::{Model, TopicId};

/// A request from the extension: the host-side mirror of the union in
/// `extension/lib/protocol.js`, keyed on `type` (extension/PROTOCOL.md). Anything that does not
/// deserialize into one of these is refused before it reaches the handler.
#[derive(Debug, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    /// The handshake; must come first.
    Hello {
        /// Protocol version the extension speaks.
        version: u64,
    },
    /// The taxonomy with example counts.
    Topics {},
    /// Adds a topic.
    AddTopic {
        /// Parent topic id.
        parent: TopicId,
        /// Name (also the title).
        name: String,
    },
    /// Renames a topic.
    RenameTopic {
        /// Topic id.
        topic: TopicId,
        /// New name.
        name: String,
    },
    /// Moves a topic under another.
    MoveTopic {
        /// Topic id.
        topic: TopicId,
        /// New parent id.
        parent: TopicId,
    },
    /// Deletes a topic, its subtree and examples.
    DeleteTopic {
        /// Topic id.
        topic: TopicId,
    },
    /// Marks a topic good or not.
    SetGood {
        /// Topic id.
        topic: TopicId,
        /// Good or not.
        good: bool,
    },
    /// Adds a page (its visible text) as an example of a topic.
    AddExample {
        /// Topic id.
        topic: TopicId,
        /// The page's URL.
        url: String,
        /// Its visible text.
        text: String,
    },
    /// The examples of one topic (not its subtree), by URL.
    Examples {
        /// Topic id.
        topic: TopicId,
    },
    /// Removes an example.
    RemoveExample {
        /// The example's URL.
        url: String,
    },
    /// Makes an example one of another topic.
    MoveExample {
        /// The example's URL.
        url: String,
        /// The topic it moves to.
        topic: TopicId,
    },
    /// Marks a page as about none of the user's topics (a background example of the model), or
    /// with `undo` removes that mark. Without `text`, the crawl's stored text of the page is
    /// used. A running crawl re-judges its pages and frontier with the changed model.
    MarkNotRelevant {
        /// The page's URL.
        url: String,
        /// Its visible text, if the browser has it.
        #[serde(default)]
        text: Option<String>,
        /// Remove the mark instead.
        #[serde(default)]
        undo: bool,
    },
    /// A chunk of the model bytes.
    GetModel {
        /// Byte offset.
        #[serde(default)]
        offset: u64,
    },
    /// A chunk of the apprentice trained on the crawl's links (the browser scores the links
    /// of the page being read with it), built afresh at offset 0.
    GetApprentice {
        /// Byte offset.
        #[serde(default)]
        offset: u64,
    },
    /// Puts links (the "best next links" of the page being read) at the head of the frontier:
    /// of the running crawl, else of the next one.
    QueueLinks {
        /// The URLs.
        urls: Vec<String>,
    },
    /// Gives up on failing hosts of the running crawl ("give up on these"): their waiting
    /// URLs, and any found later, are given up at once.
    GiveUpHosts {
        /// The hosts.
        hosts: Vec<String>,
    },
    /// What the crawl did with each URL so far (fetched, given up on, or new), without
    /// queueing anything: the browser leaves fetched pages out of its "best next links".
    LinkFates {
        /// The URLs.
        urls: Vec<String>,
    },
    /// Topics next to the good ones that the crawl's good pages keep leading to (widen the
    /// focus), with the census's evidence.
    Suggestions {},
    /// A crawl's results to take away, in chunks like the model: hubs, authorities or pages
    /// as CSV or JSON Lines, or the HTML report.
    Export {
        /// What to export: `hubs`, `authorities`, `pages` or `report`.
        what: ExportWhat,
        /// `csv` or `jsonl` (lists only; the report is HTML).
        #[serde(default)]
        format: Option<crate::export::Format>,
        /// Byte offset.
        #[serde(default)]
        offset: u64,
    },
    /// Starts (or resumes) the crawl.
    StartCrawl(StartCrawl),
    /// Stops the crawl (resumable).
    StopCrawl {},
    /// A new crawl: the crawl database is kept aside under a dated name (refused while a
    /// crawl runs); the next start begins afresh.
    NewCrawl {},
    /// The crawl's state.
    Status {},
    /// Where the host's crawl lives: a `postgres://` URL shares the crawl on that server with
    /// `forager worker`s on other machines; `null` goes back to the crawl file in the host's
    /// data directory. Refused while a crawl runs, and when the server cannot be reached.
    SetCrawlDb {
        /// The server's connection string, or `null`.
        #[serde(default)]
        url: Option<String>,
    },
    /// Top hubs and authorities.
    Hubs {
        /// How many.
        #[serde(default = "default_top")]
        top: u64,
    },
    /// Self-trains the model once on the crawl's fetched pages ([`Model::self_train`]),
    /// replacing earlier self-trained examples; with `clear`, only removes those.
    SelfTrain {
        /// Least probability of its best leaf for a page to become an example of it.
        #[serde(default = "default_min_p")]
        min_p: f64,
        /// Only forget the self-trained examples.
        #[serde(default)]
        clear: bool,
    },
    /// Recently fetched pages, oldest first.
    RecentPages {
        /// How many.
        #[serde(default = "default_recent")]
        limit: u64,
    },
    /// The crawl's fetched pages matching words, best first (BM25 with R).
    Search {
        /// What the user typed.
        query: String,
        /// How many at most (up to 50).
        #[serde(default = "default_hits")]
        limit: u64,
    },
    /// Relevant pages first fetched, and pages changed on a revisit, since a time.
    WhatsNew {
        /// Unix seconds (0: since the crawl began).
        #[serde(default)]
        since: f64,
        /// How many to list at most (up to 200; the count covers all).
        #[serde(default = "default_news")]
        limit: u64,
    },
}

fn default_hits() -> u64 {
    20
}

fn default_news() -> u64 {
    50
}

fn default_top() -> u64 {
    20
}

fn default_recent() -> u64 {
    300
}

fn default_min_p() -> f64 {
    Model::SELF_TRAIN_MIN_P
}

/// What `export` exports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExportWhat {
    /// The distiller's hubs.
    Hubs,
    /// The distiller's authorities.
    Authorities,
    /// Every fetched page.
    Pages,
    /// The HTML crawl report (`forager report --html`).
    Report,
    /// The WARC archive of the crawls started with `warc` (one `.warc.gz`).
    Warc,
}

/// The largest page budget a start accepts.
pub const MAX_PAGES: u64 = 10_000_000;

/// The longest delay between requests to one host, in seconds.
pub const MAX_DELAY: f64 = 60.0;

/// The fields of `start_crawl`.
#[derive(Debug, serde::Deserialize)]
pub struct StartCrawl {
    /// Seed URLs; empty means the good topics' examples.
    #[serde(default)]
    pub seeds: Vec<String>,
    /// Page budget: a whole number from 1 to [`MAX_PAGES`] (a number, so that a bad one is
    /// refused in plain words rather than by the JSON decoder).
    pub pages: Option<f64>,
    /// Loopback HTTP proxy.
    pub proxy: Option<String>,
    /// Let the apprentice guide the crawl while its critic finds it better than soft focus
    /// (default true, as `forager crawl`); false: it only learns.
    pub apprentice: Option<bool>,
    /// Seconds between requests to one host (default 1), from 0 to [`MAX_DELAY`].
    pub delay: Option<f64>,
    /// "Crawl more from here": fetched pages whose unvisited out-links go to the head of the
    /// frontier (a page not fetched yet becomes a seed).
    #[serde(default)]
    pub from: Vec<String>,
    /// Record this start's fetches in the host's WARC archive (`export` `warc` returns it).
    #[serde(default)]
    pub warc: bool,
    /// Put the URLs that failed back in the frontier, tries reset, before starting.
    #[serde(default)]
    pub retry_failed: bool,
    /// Let links lead to local and private addresses (by default only the seeds' own).
    #[serde(default)]
    pub allow_private: bool,
}
