//! What a crawl is asked to do: the link policy (focus mode), its parameters and the defaults
//! chosen on the FOLDOC tasks.

pub use super::policy::critic::Guide;
use crate::canon::TrapLimits;
use crate::fetch::FetchConfig;
use forager_classifier::apprentice::Apprentice;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How outlinks are ordered and admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every outlink, in pseudo-random hash order.
    Unfocused,
    /// Every outlink, breadth first.
    Bfs,
    /// Every outlink, prioritised by the parent's relevance (max over parents).
    Soft,
    /// Outlinks only of pages whose best category path has a good topic.
    Hard,
    /// Naive best-first: every outlink, by the cosine similarity of the parent page to the
    /// good topics' examples (crawling-the-web-2004 §3.1).
    BestFirst,
    /// SharkSearch: anchor text, its context and a decaying inherited score (ibid. §3.2).
    Shark,
}

impl Mode {
    /// Every mode, in the order of [`Mode::NAMES`].
    pub const ALL: [Mode; 6] = [
        Mode::Unfocused,
        Mode::Bfs,
        Mode::Soft,
        Mode::Hard,
        Mode::BestFirst,
        Mode::Shark,
    ];
    /// The modes' names as users type them (`--mode`).
    pub const NAMES: [&'static str; 6] =
        ["unfocused", "bfs", "soft", "hard", "best-first", "shark"];

    /// The mode's name as users type it.
    pub fn name(self) -> &'static str {
        let i = Mode::ALL.iter().position(|m| *m == self).unwrap_or(0);
        Mode::NAMES[i]
    }
}

impl std::str::FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let i = Mode::NAMES.iter().position(|n| *n == s);
        i.map(|i| Mode::ALL[i])
            .ok_or_else(|| format!("unknown mode {s:?} (one of {})", Mode::NAMES.join(", ")))
    }
}

/// SharkSearch's parameters (Hersovici et al. 1998; the values of crawling-the-web-2004).
#[derive(Clone, Copy, Debug)]
pub struct SharkParams {
    /// Decay of the inherited score per link.
    pub delta: f64,
    /// Weight of the anchor against its context.
    pub beta: f64,
    /// Weight of the inherited score against the neighbourhood.
    pub gamma: f64,
    /// Leaves on each side of the anchor that make its context.
    pub context_leaves: usize,
}

impl Default for SharkParams {
    fn default() -> Self {
        SharkParams {
            delta: 0.5,
            beta: 0.8,
            gamma: 0.5,
            context_leaves: 5,
        }
    }
}

/// The query of the best-first and SharkSearch baselines: unit-length TF-IDF weights of the
/// good topics' examples, and the IDF that weighs a page's terms alike.
#[derive(Clone, Debug, Default)]
pub struct Query {
    /// Term → weight, unit length.
    pub weights: HashMap<String, f64>,
    /// Term → IDF; terms not listed get `max_idf`.
    pub idf: HashMap<String, f64>,
    /// IDF of a term no example has.
    pub max_idf: f64,
}

impl Query {
    /// The query for the good topics of `model`.
    pub fn from_model(model: &forager_classifier::Model) -> Self {
        let idf: HashMap<String, f64> = model.idf().into_iter().collect();
        let n = model.example_count() as f64;
        Query {
            weights: model.good_centroid().into_iter().collect(),
            idf,
            max_idf: (n + 1.0).ln() + 1.0,
        }
    }

    /// Cosine similarity of the query and the TF-IDF vector of `text`.
    pub fn cosine(&self, tok: &forager_classifier::Tokenizer, text: &str) -> f64 {
        let mut dot = 0.0;
        let mut norm = 0.0;
        for (t, c) in tok.counts(text) {
            let w = f64::from(c) * self.idf.get(&t).copied().unwrap_or(self.max_idf);
            norm += w * w;
            dot += w * self.weights.get(&t).copied().unwrap_or(0.0);
        }
        if norm == 0.0 {
            0.0
        } else {
            dot / norm.sqrt()
        }
    }
}

/// What a crawl tells as it goes, beside its periodic progress.
#[derive(Clone, Debug)]
pub enum CrawlEvent {
    /// Pages just recorded, in fetch order.
    Pages(Vec<crate::store::FetchedPage>),
    /// A distillation was stored: the hubs and authorities changed.
    Distilled,
}

/// Crawl settings.
#[derive(Clone, Debug)]
pub struct CrawlConfig {
    /// This crawler's name among the workers of a shared crawl: it checks out only URLs of
    /// the hosts it leases (`store::LOCAL_WORKER` for a one-process crawl).
    pub worker: String,
    /// Link policy.
    pub mode: Mode,
    /// Stop after this many fetched pages (in total, across resumes).
    pub max_pages: Option<u64>,
    /// Stop after this much time in this run.
    pub max_time: Option<Duration>,
    /// Fetches in flight at once.
    pub concurrency: usize,
    /// Minimum time between two requests to one host.
    pub delay: Duration,
    /// Most pages fetched from one host.
    pub max_pages_per_host: u64,
    /// Most outlinks taken from one page (the rest are dropped and reported).
    pub max_links_per_page: usize,
    /// In soft and hard focus, a link in the page's navigation boilerplate inherits this
    /// share of the page's relevance: site templates link anywhere, whatever the page is about.
    /// (Once the apprentice guides, its Pr(high) is the score and it learns this by itself.)
    pub template_weight: f64,
    /// URL trap guards.
    pub traps: TrapLimits,
    /// Fetcher settings (proxy, timeouts, caps).
    pub fetch: FetchConfig,
    /// Append each fetched URL here, in fetch order.
    pub fetch_log: Option<PathBuf>,
    /// Record every answered fetch in WARC files (`crate::warc`); the files' User-Agent is
    /// the fetcher's.
    pub warc: Option<crate::warc::WarcConfig>,
    /// The apprentice (accelerated-focused-crawling-2002): it learns from the crawl's links and
    /// guides soft or hard focus as [`ApprenticeConfig::guide`] says; `None`: no apprentice.
    pub apprentice: Option<ApprenticeConfig>,
    /// Run the distiller every this many fetched pages (and once at the end).
    pub distill_every: Option<u64>,
    /// After each distillation, move the unvisited cross-site out-neighbours of this many top
    /// hubs to the head of the frontier (the paper's feedback).
    pub hub_feedback: Option<usize>,
    /// The query vector of the best-first and SharkSearch baselines (unit-length term weights;
    /// see `Model::good_centroid`).
    pub query: Arc<Query>,
    /// SharkSearch parameters.
    pub shark: SharkParams,
    /// Reproducible order: the crawl in lockstep waves (4 × `concurrency` checked out at once:
    /// what the concurrent crawl acts on before it sees their outcomes), each wave recorded in
    /// checkout order before the next checkout,
    /// distillation inline. The same schedule as the concurrent crawl, without its timing: for
    /// benchmarks, tests and debugging.
    pub deterministic: bool,
    /// How often the progress callback is called.
    pub progress_every: Duration,
    /// Maintenance mode: the share of fetches spent revisiting fetched pages (0 = off).
    pub revisit_share: f64,
    /// A page is revisited no sooner than this after its last fetch.
    pub revisit_after: Duration,
    /// Open-world relevance: learn "none of the topics" from the crawl's own pages (soft and
    /// hard focus; `None` keeps the classifier's closed world).
    pub open_world: Option<OpenWorldConfig>,
    /// A new judge sent here (after the user marks a page "not relevant", say) replaces the
    /// crawl's: fetched pages are re-judged and the frontier re-scored.
    pub judge_updates: Option<tokio::sync::watch::Receiver<Judge>>,
    /// Where the crawl tells what it records as it records it (the browser's side panel).
    /// Never waits: an event that finds the channel full is dropped, and the receiver sees
    /// the gap in the pages' sequence numbers (the database has them).
    pub events: Option<tokio::sync::mpsc::Sender<CrawlEvent>>,
    /// URLs the user queues while the crawl runs (the "best next links" of the page being
    /// read): they enter the frontier as seeds, at its head.
    pub queued: Option<QueuedUrls>,
    /// Hosts the user gives up on while the crawl runs ("give up on these" beside the failing
    /// hosts): their waiting URLs and any found later are given up at once.
    pub give_up: Option<GivenUpHosts>,
    /// How failures are blamed on URLs, hosts or the crawler, and the backoffs that follow.
    pub blame: super::blame::BlameParams,
    /// A crawl shared with other workers through its database: the model and apprentice are
    /// followed there and the periodic job offered ([`super::shared`]; set by
    /// [`super::shared::join`]).
    pub shared: Option<super::shared::SharedCrawl>,
}

/// The receiving end of the URLs queued into a running crawl (shared, so a config clones).
pub type QueuedUrls =
    std::sync::Arc<std::sync::Mutex<tokio::sync::mpsc::Receiver<Vec<crate::store::NewUrl>>>>;

/// The receiving end of the hosts given up on in a running crawl.
pub type GivenUpHosts = std::sync::Arc<std::sync::Mutex<tokio::sync::mpsc::Receiver<Vec<String>>>>;

/// What judges a crawl's pages: the classifier, and the pages the user marked not relevant
/// (their relevance is 0 whatever the classifier says; their text also taught the classifier's
/// background, so pages like them score low too).
#[derive(Clone, Debug)]
pub struct Judge {
    /// The compiled classifier.
    pub classifier: Arc<forager_classifier::Classifier>,
    /// URLs marked not relevant.
    pub not_relevant: Arc<std::collections::HashSet<String>>,
}

impl Judge {
    /// The judge of `model` as it stands.
    pub fn of(model: &mut forager_classifier::Model) -> Self {
        Judge {
            classifier: model.classifier(),
            not_relevant: Arc::new(model.not_relevant_urls().into_iter().collect()),
        }
    }

    /// The classifier's verdict on the page at `url` with main text `text`; a page the user
    /// marked not relevant gets relevance 0 and `none`.
    pub fn judge(
        &self,
        url: &str,
        text: &str,
        scratch: &mut forager_classifier::Scratch,
    ) -> forager_classifier::Classification {
        let v = self.classifier.classify(text, scratch);
        if self.not_relevant.contains(url) {
            v.marked_not_relevant()
        } else {
            v
        }
    }
}

/// Fetched pages after which the crawl first learns its background; it learns again each time
/// the count doubles. A few hundred pages around the seeds are enough to tell the topics'
/// vocabulary from their neighbourhood's, and doubling keeps the total re-judging work at
/// about twice one pass over the crawl.
pub const DEFAULT_OPEN_WORLD_FIRST: u64 = 100;

/// How a crawl learns the background (see `forager_classifier::background`).
#[derive(Clone, Debug)]
pub struct OpenWorldConfig {
    /// The model the crawl's classifier came from; the learned background is added to a copy.
    pub model: forager_classifier::Model,
    /// Learn first after this many fetched pages, then at every doubling.
    pub first: u64,
    /// The spy technique's parameters.
    pub options: forager_classifier::BackgroundOptions,
}

impl OpenWorldConfig {
    /// Open-world learning for `model` with the default schedule.
    pub fn new(model: forager_classifier::Model) -> Self {
        OpenWorldConfig {
            model,
            first: DEFAULT_OPEN_WORLD_FIRST,
            options: Default::default(),
        }
    }
}

/// Fetched pages before a learning apprentice may guide the crawl (#25: from the first few
/// hundred pages); then, and at each retrain, the critic decides whether it does
/// ([`Guide::WhenBetter`], the default) or it guides from then on ([`Guide::Always`]). Its
/// links' priorities blend Pr(high) with soft focus's by the apprentice's trust, its
/// prequential skill (2 AUC - 1 on instances it had not learned yet). Guiding always, it lifts
/// harvest at 1000 on the generated web with hidden regions from .46/.39 to .70/.63
/// (networking, finance) but lowers it on FOLDOC on six of six tasks (networking .388 vs .454;
/// reused: five of six), hence the critic.
pub const DEFAULT_APPRENTICE_WARMUP: u64 = 200;

/// How the apprentice learns during a crawl and whether it guides it.
#[derive(Clone, Debug)]
pub struct ApprenticeConfig {
    /// Retrain (publish the counts and re-score the frontier) every this many fetched pages.
    pub retrain_every: u64,
    /// The apprentice learns from the first fetch but guides the crawl no sooner than after
    /// this many fetched pages (guiding always, an `initial` apprentice guides from the start).
    pub warmup: u64,
    /// DOM offset window.
    pub d_max: usize,
    /// Start from this apprentice (offline-trained from a previous crawl), if any.
    pub initial: Option<Apprentice>,
    /// Whether it guides: when the critic finds it better than soft focus (default), always,
    /// or never (it only learns).
    pub guide: Guide,
}

impl Default for ApprenticeConfig {
    fn default() -> Self {
        ApprenticeConfig {
            retrain_every: 200,
            warmup: DEFAULT_APPRENTICE_WARMUP,
            d_max: forager_classifier::apprentice::DEFAULT_D_MAX,
            initial: None,
            guide: Guide::default(),
        }
    }
}

/// The share of a page's relevance its navigation-boilerplate links inherit. On FOLDOC, links
/// in site templates lead to relevant pages no more often than chance (1-4% vs 20-48% for links
/// in the text of relevant pages); 0.1 raised soft focus's harvest at 1000 fetches on five of six tasks, while 0
/// starved the crawl of the cross-site links it needs.
pub const DEFAULT_TEMPLATE_WEIGHT: f64 = forager_classifier::links::TEMPLATE_WEIGHT;

impl Default for CrawlConfig {
    fn default() -> Self {
        CrawlConfig {
            worker: crate::store::LOCAL_WORKER.to_owned(),
            mode: Mode::Soft,
            max_pages: None,
            max_time: None,
            concurrency: 16,
            delay: Duration::from_secs(1),
            max_pages_per_host: 5_000,
            max_links_per_page: 5_000,
            template_weight: DEFAULT_TEMPLATE_WEIGHT,
            traps: TrapLimits::default(),
            fetch: FetchConfig::default(),
            fetch_log: None,
            warc: None,
            apprentice: None,
            distill_every: None,
            hub_feedback: None,
            query: Arc::default(),
            shark: SharkParams::default(),
            deterministic: false,
            progress_every: Duration::from_secs(1),
            revisit_share: 0.0,
            revisit_after: Duration::from_secs(3600),
            open_world: None,
            judge_updates: None,
            events: None,
            queued: None,
            give_up: None,
            blame: Default::default(),
            shared: None,
        }
    }
}
