//! One model, one distiller, many fetchers (focused-crawling-1999 §4; issue #26): the workers
//! of a crawl shared through a database server follow its model and its apprentice, and one
//! of them at a time runs the periodic job — re-judging after the model changed, training the
//! apprentice on every worker's link evidence, and the distiller.
//!
//! Each worker's crawl has a follower beside it ([`follow`]): every [`SharedCrawl::poll`] it
//! asks the crawl database, through a door of its own, for a model or an apprentice newer than
//! the ones the fetch workers judge and score with, and hands them over; a good-topic change
//! or a "not relevant" mark saved by any process (the browser's host, `forager not-relevant`,
//! another `forager crawl`) reaches every worker so. At most every [`SharedCrawl::job_every`]
//! it offers to run the job ([`run_job`]); the database elects one runner at a time
//! ([`crate::store::SharedDb::begin_job`]) and logs each run. The job's settings are the
//! crawl's, stored in its database by the crawl that started it ([`JobSettings`]).

use super::worker::Shared;
use super::{policy, rescore, ApprenticeConfig, CrawlConfig, Judge, Mode};
use crate::store::{self, CrawlDb, Locator, SharedDb, StoreError};
use forager_classifier::apprentice::Apprentice;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// How often a worker looks for a changed model or apprentice.
pub const POLL: Duration = Duration::from_secs(2);
/// Least time between the end of one run of the periodic job and the start of the next.
pub const JOB_EVERY: Duration = Duration::from_secs(10);
/// After a model change, the time every worker has to reload it before the job judges the
/// crawl's pages again a second time (pages judged with the old model while a worker had not
/// looked yet): a few looks, plus a batch being recorded.
pub fn reload_grace(poll: Duration) -> Duration {
    poll * 3 + Duration::from_secs(2)
}
mod learn;
pub use learn::{learn, remember, trained_with_trust, Trained, TRUST_WINDOW};

/// The periodic job's settings: the crawl's own, stored in its database (job value
/// `settings`, JSON) by the crawl that started it, read by whichever worker runs the job.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JobSettings {
    /// Run the distiller every this many pages fetched by all workers.
    pub distill_every: Option<u64>,
    /// After each distillation, raise the unvisited cross-site out-neighbours of this many top
    /// hubs to the head of the frontier.
    pub hub_feedback: Option<usize>,
    /// Train and publish the apprentice (its links' features are recorded by every worker).
    pub apprentice: Option<SharedApprentice>,
    /// How every worker crawls, as the crawl was started (`None`: a crawl started by an
    /// earlier build, whose workers crawl as their own options say).
    #[serde(default)]
    pub crawl: Option<CrawlWide>,
}

/// What every worker of a shared crawl does the same way: set by the `forager crawl` that
/// starts it, followed by every `forager worker` that joins it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CrawlWide {
    /// The link policy, by name (`--mode`).
    pub mode: String,
    /// The classifier counts every word of a page (`--uncapped`).
    pub uncapped: bool,
    /// Most pages fetched from one host.
    pub max_pages_per_host: u64,
    /// The share of a page's relevance the links in its navigation boilerplate inherit.
    pub template_weight: f64,
}

impl CrawlWide {
    /// The crawl-wide part of `config`, its classifier uncapped or not.
    pub fn of(config: &CrawlConfig, uncapped: bool) -> Self {
        CrawlWide {
            mode: config.mode.name().to_owned(),
            uncapped,
            max_pages_per_host: config.max_pages_per_host,
            template_weight: config.template_weight,
        }
    }
}

/// What a worker's own command line says about what the crawl decides (`None`, `false`: not
/// given): a worker crawls the crawl as it was started, and a contradicting option is refused.
#[derive(Clone, Debug, Default)]
pub struct Asked {
    /// `--uncapped`.
    pub uncapped: bool,
    /// `--max-pages-per-host`.
    pub max_pages_per_host: Option<u64>,
}

/// Why joining a shared crawl failed.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    /// The crawl database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The options contradict how the crawl was started, or ask what a shared crawl lacks.
    #[error("{0}")]
    Options(String),
}

/// Whether `asked` agrees with how the crawl was started (`wide`), in words when it does not.
pub fn agree(wide: &CrawlWide, asked: &Asked) -> Result<(), String> {
    let mut clash = Vec::new();
    if asked.uncapped && !wide.uncapped {
        clash.push(
            "--uncapped: the crawl counts at most 10 occurrences of a word per page \
             (it was started without --uncapped)"
                .to_owned(),
        );
    }
    if let Some(n) = asked
        .max_pages_per_host
        .filter(|n| *n != wide.max_pages_per_host)
    {
        clash.push(format!(
            "--max-pages-per-host {n}: the crawl takes at most {} pages from a host",
            wide.max_pages_per_host
        ));
    }
    if clash.is_empty() {
        return Ok(());
    }
    Err(format!(
        "this worker's options contradict how the crawl was started, and every worker crawls \
         it the same way: {}. Leave them out (the crawl's own apply), or start a new crawl \
         with forager crawl",
        clash.join("; ")
    ))
}

/// The shared apprentice's schedule.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SharedApprentice {
    /// Pages fetched by all workers before it is first published.
    pub warmup: u64,
    /// Pages fetched between two trainings.
    pub retrain_every: u64,
    /// The DOM offset window of its features.
    pub d_max: usize,
}

/// A crawl shared with other workers through its database: where it is, and how often this
/// worker follows it and offers to run its job.
#[derive(Clone)]
pub struct SharedCrawl {
    /// The crawl database: the follower opens a door of its own on it.
    pub locator: Locator,
    /// How often the worker looks for a changed model or apprentice.
    pub poll: Duration,
    /// Least time between two runs of the periodic job.
    pub job_every: Duration,
    /// The crawl's classifier counts every word of a page (`--uncapped`): so does every
    /// judge the follower builds.
    pub uncapped: bool,
}

impl std::fmt::Debug for SharedCrawl {
    /// The locator as it may be shown (a server's password hidden).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (f.debug_struct("SharedCrawl"))
            .field("locator", &self.locator.to_string())
            .field("poll", &self.poll)
            .field("job_every", &self.job_every)
            .field("uncapped", &self.uncapped)
            .finish()
    }
}

/// The side of `door` that other workers share, or why there is none.
fn side(door: &mut impl CrawlDb) -> Result<&mut dyn SharedDb, StoreError> {
    door.shared().ok_or(StoreError::Unsupported(
        "shared crawl".into(),
        "this back-end has no other worker",
    ))
}

/// Makes `config` a worker of the crawl at `locator`, when its back-end is shared by workers
/// (a SQLite crawl is left as it is): `start` (the crawl that starts it) stores the crawl's
/// settings first, and a worker that joins (`start` is `None`) takes the crawl-wide ones
/// ([`CrawlWide`]: the mode, the page cap per host, the template weight), refusing options
/// `asked` that contradict them; the distiller and the apprentice's training move from this
/// worker's loop to the shared job, and the worker records its links' features when the crawl
/// has an apprentice. Returns the crawl's settings.
pub fn join(
    locator: Locator,
    store: &mut impl CrawlDb,
    config: &mut CrawlConfig,
    start: Option<&JobSettings>,
    asked: &Asked,
) -> Result<JobSettings, JoinError> {
    let Some(db) = store.shared() else {
        return Ok(start.cloned().unwrap_or_default());
    };
    if let Some(s) = start {
        if config.open_world.is_some() {
            return Err(JoinError::Options(
                "--open-world learns the background inside one process: a crawl shared by \
                 workers cannot use it yet (crawl into a SQLite file to use it)"
                    .into(),
            ));
        }
        let json = serde_json::to_string(s).unwrap_or_default();
        db.set_job_value("settings", &json)?;
    }
    let settings = settings_of(db)?;
    if let (None, Some(wide)) = (start, &settings.crawl) {
        agree(wide, asked).map_err(JoinError::Options)?;
        config.mode = wide.mode.parse().map_err(JoinError::Options)?;
        config.max_pages_per_host = wide.max_pages_per_host;
        config.template_weight = wide.template_weight;
    }
    if config.worker == store::LOCAL_WORKER {
        // Named as its door: the follower acts for the same worker (its dry hosts, its runs).
        config.worker = db.door_name();
    }
    config.shared = Some(SharedCrawl {
        locator,
        poll: POLL,
        job_every: JOB_EVERY,
        uncapped: settings.crawl.as_ref().is_some_and(|w| w.uncapped),
    });
    config.distill_every = None;
    config.hub_feedback = None;
    // The loop's own learner never publishes (the shared job does): its warm-up never ends.
    let initial = config.apprentice.take().and_then(|a| a.initial);
    config.apprentice = settings.apprentice.map(|a| ApprenticeConfig {
        warmup: u64::MAX,
        retrain_every: u64::MAX,
        d_max: a.d_max,
        initial,
        // The shared job decides what guides (it publishes and re-scores for every worker).
        guide: crate::crawl::policy::critic::Guide::Always,
    });
    Ok(settings)
}

/// The judge of `model`, its classifier counting every word when `uncapped`.
pub fn judge_of(model: &mut forager_classifier::Model, uncapped: bool) -> Judge {
    let mut judge = Judge::of(model);
    if uncapped {
        judge.classifier = model.uncapped_classifier();
    }
    judge
}

/// The crawl's job settings as stored (none stored: no distiller, no apprentice).
fn settings_of(db: &dyn SharedDb) -> Result<JobSettings, StoreError> {
    Ok((db.job_value("settings")?)
        .and_then(|j| serde_json::from_str(&j).ok())
        .unwrap_or_default())
}

/// A job value read as a number.
fn number(db: &dyn SharedDb, key: &str) -> Result<Option<i64>, StoreError> {
    Ok(db.job_value(key)?.and_then(|v| v.parse().ok()))
}

/// What the follower found changed since its last look.
#[derive(Default)]
struct News {
    judge: Option<Judge>,
    apprentice: Option<Apprentice>,
}

/// The follower's state between its turns.
struct Follower {
    config: SharedCrawl,
    worker: String,
    mode: Mode,
    learns: bool,
    door: Option<Box<dyn CrawlDb>>,
    model: i64,
    apprentice: i64,
    last_job: Option<Instant>,
}

/// Starts the follower of a shared crawl beside the crawl whose fetch workers share `sh`; it
/// ends once the crawl has ended (nothing else holds `sh`). A crawl that is not shared has
/// none.
pub(super) fn follow(config: &CrawlConfig, sh: &Arc<Shared>) {
    let Some(shared) = config.shared.clone() else {
        return;
    };
    let mut f = Follower {
        config: shared,
        worker: config.worker.clone(),
        mode: config.mode,
        learns: config.apprentice.is_some(),
        door: None,
        // Unknown versions: the first look reloads both (the model may have changed since
        // this worker read it).
        model: -1,
        apprentice: -1,
        last_job: None,
    };
    let sh: Weak<Shared> = Arc::downgrade(sh);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(f.config.poll).await;
            if sh.strong_count() == 0 {
                return;
            }
            let Ok((back, news)) = tokio::task::spawn_blocking(move || {
                let news = f.turn();
                (f, news)
            })
            .await
            else {
                return;
            };
            f = back;
            let Some(sh) = sh.upgrade() else { return };
            if let Some(j) = news.judge {
                *sh.judge.write().unwrap_or_else(|p| p.into_inner()) = j;
            }
            if let Some(a) = news.apprentice {
                *sh.apprentice.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(a);
            }
        }
    });
}

impl Follower {
    /// One look at the crawl database (blocking): a newer model or apprentice, and the job
    /// when it is this worker's turn to offer. A failing database is tried again next turn.
    fn turn(&mut self) -> News {
        match self.look() {
            Ok(news) => news,
            Err(e) => {
                tracing::warn!("following the shared crawl: {e}");
                self.door = None;
                News::default()
            }
        }
    }

    fn look(&mut self) -> Result<News, StoreError> {
        let mut door = match self.door.take() {
            Some(d) => d,
            None => store::open(&self.config.locator)?,
        };
        let news = self.look_with(&mut door)?;
        self.door = Some(door);
        Ok(news)
    }

    fn look_with(&mut self, door: &mut Box<dyn CrawlDb>) -> Result<News, StoreError> {
        let mut news = News::default();
        let db = side(door)?;
        if let Some(v) = db.model_since(self.model)? {
            let mut model = model_of(&v.value)?;
            news.judge = Some(judge_of(&mut model, self.config.uncapped));
            tracing::info!("worker {}: model version {} loaded", self.worker, v.version);
            self.model = v.version;
        }
        if self.learns {
            if let Some(v) = db.apprentice_since(self.apprentice)? {
                news.apprentice = Some(v.value);
                self.apprentice = v.version;
            }
        }
        let due = (self.last_job).is_none_or(|t| t.elapsed() >= self.config.job_every);
        if due {
            self.last_job = Some(Instant::now());
            let back = db.give_back_dry_hosts(&self.worker)?;
            tracing::debug!("worker {}: {back} dry hosts given back", self.worker);
            let timing = Timing {
                gap: self.config.job_every,
                grace: reload_grace(self.config.poll),
            };
            if let Some(did) = run_job(door, &self.worker, self.mode, timing)? {
                tracing::info!("worker {}: the crawl's job: {did}", self.worker);
            }
        }
        Ok(news)
    }
}

/// The model stored as `bytes`.
fn model_of(bytes: &[u8]) -> Result<forager_classifier::Model, StoreError> {
    forager_classifier::Model::from_bytes(bytes)
        .map_err(|e| StoreError::Schema(format!("the crawl's model: {e}")))
}

/// When the job runs.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Least time from the end of one run to the start of the next.
    pub gap: Duration,
    /// After a model change, the time workers have to reload it ([`reload_grace`]).
    pub grace: Duration,
}

/// Runs the crawl's periodic job on `door` as `worker` when the database elects it (no other
/// worker runs it and the last run ended `timing.gap` ago or more): returns what it did, or
/// `None` when it was not this worker's to run. The run is logged, failed or not.
pub fn run_job(
    door: &mut impl CrawlDb,
    worker: &str,
    mode: Mode,
    timing: Timing,
) -> Result<Option<String>, StoreError> {
    let Some(run) = side(door)?.begin_job(worker, timing.gap.as_secs_f64())? else {
        return Ok(None);
    };
    let did = job(door, mode, timing.grace);
    let words = match &did {
        Ok(w) => w.clone(),
        Err(e) => format!("failed: {e}"),
    };
    side(door)?.end_job(run, &words)?;
    did.map(Some)
}

/// The job's steps, each when due: re-judging after the model changed, the apprentice, the
/// distiller.
fn job(door: &mut impl CrawlDb, mode: Mode, grace: Duration) -> Result<String, StoreError> {
    let settings = settings_of(side(door)?)?;
    let fetched = u64::try_from(door.fetched()?).unwrap_or(0);
    let mut did = Vec::new();
    let guided = settings.apprentice.is_some() && number(side(door)?, "trained_at")?.is_some();
    let uncapped = settings.crawl.as_ref().is_some_and(|w| w.uncapped);
    did.extend(rejudge(door, mode, (!guided, uncapped), grace)?);
    if let Some(a) = settings.apprentice {
        did.extend(train(door, mode, fetched, a)?);
    }
    if let Some(n) = settings.distill_every {
        did.extend(distill(door, fetched, n, settings.hub_feedback)?);
    }
    Ok(if did.is_empty() {
        "nothing was due".into()
    } else {
        did.join("; ")
    })
}

/// After the model changed: every fetched page judged again and, unless the apprentice
/// guides, the frontier re-scored from the new verdicts — at once, and once more when the
/// workers have had `grace` to reload (what they judged with the old model meanwhile).
fn rejudge(
    door: &mut impl CrawlDb,
    mode: Mode,
    (frontier, uncapped): (bool, bool),
    grace: Duration,
) -> Result<Option<String>, StoreError> {
    let db = side(door)?;
    let judged = number(db, "judged")?.unwrap_or(0);
    let Some(v) = db.model_since(judged)? else {
        return Ok(None);
    };
    // "version at": the version first judged again, and when.
    let first = (db.job_value("judging")?)
        .and_then(|j| {
            let (v, at) = j.split_once(' ')?;
            Some((v.parse::<i64>().ok()?, at.parse::<f64>().ok()?))
        })
        .filter(|(version, _)| *version == v.version);
    let now = store::now();
    let last = match first {
        None => false,
        Some((_, at)) if now - at >= grace.as_secs_f64() => true,
        Some(_) => return Ok(None),
    };
    let judge = judge_of(&mut model_of(&v.value)?, uncapped);
    let (pages, rescored) = rescore::rejudge(door, &judge, mode, frontier)?;
    let db = side(door)?;
    if last {
        db.set_job_value("judged", &v.version.to_string())?;
    } else {
        db.set_job_value("judging", &format!("{} {now}", v.version))?;
    }
    Ok(Some(format!(
        "re-judged {pages} pages with model version {}{}, re-scored {rescored} frontier URLs",
        v.version,
        if last {
            " (after the workers reloaded)"
        } else {
            ""
        }
    )))
}

/// Which judging of the stored pages their relevance comes from: it changes whenever the job
/// re-judges them (the apprentice's labels change with it).
fn labels(db: &dyn SharedDb) -> Result<String, StoreError> {
    Ok(format!(
        "{}|{}",
        db.job_value("judged")?.unwrap_or_default(),
        db.job_value("judging")?.unwrap_or_default()
    ))
}

/// The apprentice trained on every worker's link evidence (what appeared since the last
/// training added to it: [`learn`]), published with its trust (its skill on instances before
/// it learned them), and the frontier re-scored with it: after the warm-up, then every
/// `retrain_every` pages.
fn train(
    door: &mut impl CrawlDb,
    mode: Mode,
    fetched: u64,
    a: SharedApprentice,
) -> Result<Option<String>, StoreError> {
    let last = number(side(door)?, "trained_at")?.map(|n| n.max(0) as u64);
    let due = match last {
        None => fetched >= a.warmup,
        Some(at) => fetched >= at.saturating_add(a.retrain_every.max(1)),
    };
    if !due {
        return Ok(None);
    }
    let labels = labels(side(door)?)?;
    let t = learn(side(door)?, &labels)?;
    let ap = t.apprentice.clone();
    if !ap.is_trained() {
        return Ok(None);
    }
    let version = side(door)?.publish_apprentice(&ap)?;
    let (n, how) = (t.read, if t.incremental { "new" } else { "(all)" });
    remember(side(door)?, t, version)?;
    let rescored = if matches!(mode, Mode::Soft | Mode::Hard) {
        rescore::by_apprentice(door, |f, base| policy::guided(&ap, f, base))?
    } else {
        0
    };
    side(door)?.set_job_value("trained_at", &fetched.to_string())?;
    Ok(Some(format!(
        "apprentice version {version} learned {n} {how} instances, {} in all (trust {:.2}), re-scored {rescored} frontier URLs",
        ap.instances().iter().sum::<u64>(),
        ap.trust()
    )))
}

/// The distiller on the crawl graph every `every` pages, its hubs fed back when asked.
fn distill(
    door: &mut impl CrawlDb,
    fetched: u64,
    every: u64,
    feedback: Option<usize>,
) -> Result<Option<String>, StoreError> {
    let last = number(side(door)?, "distilled_at")?.map_or(0, |n| n.max(0) as u64);
    if fetched < last.saturating_add(every.max(1)) {
        return Ok(None);
    }
    let (edges, rel) = door.graph()?;
    let scores = crate::distiller::distill(&edges, &rel, &Default::default());
    door.save_distillation(&scores)?;
    let boosted = match feedback {
        Some(top) => door.boost_hub_neighbours(top, policy::BOOST)?,
        None => 0,
    };
    side(door)?.set_job_value("distilled_at", &fetched.to_string())?;
    Ok(Some(format!(
        "distilled {} hubs over {} links at {fetched} pages, {boosted} URLs raised",
        scores.hubs.len(),
        edges.len()
    )))
}
