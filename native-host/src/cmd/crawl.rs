//! `forager crawl`: from a mini-web task (trains, serves and seeds itself), from seeds, or resuming a database.

use crate::{choice, read_model, runtime};
use anyhow::{bail, Result};
use forager::fetch::FetchConfig;
use forager::miniweb::MiniWeb;
use forager::training;
use forager_classifier::{Model, TextOptions, TrainOptions};
use std::path::PathBuf;

/// Arguments of `forager crawl`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Mini-web directory to crawl through its own loopback server.
    #[arg(long)]
    web: Option<PathBuf>,
    /// Task of the mini-web (good topics and seeds).
    #[arg(long)]
    task: Option<String>,
    /// Model file (when not training from --web).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Seed URLs (besides the task's).
    #[arg(long)]
    seed: Vec<String>,
    /// Good topic paths (besides the task's).
    #[arg(long)]
    good: Vec<String>,
    /// Link policy.
    #[arg(long, default_value = "soft", value_parser = choice::<forager::crawl::Mode>(&forager::crawl::Mode::NAMES))]
    mode: forager::crawl::Mode,
    /// Page budget (total, across resumes).
    #[arg(long)]
    pages: Option<u64>,
    /// Time budget in seconds for this run.
    #[arg(long)]
    seconds: Option<f64>,
    /// Crawl database (created if missing, resumed if present).
    #[arg(long)]
    db: PathBuf,
    /// Start a new crawl: an existing database at --db is kept aside under a dated name
    /// (crawl-20261124T225500Z.db), never deleted.
    #[arg(long)]
    new: bool,
    /// Append fetched URLs here, one per line, in fetch order.
    #[arg(long)]
    fetch_log: Option<PathBuf>,
    /// Replace an existing file at --fetch-log that is not an earlier fetch log (never a
    /// crawl database, a model, a link, a FIFO or a directory).
    #[arg(long)]
    force: bool,
    /// Record every answered fetch as WARC request and response records in FILE-00000.warc.gz,
    /// FILE-00001.warc.gz, ... (a resumed crawl adds files).
    #[arg(long, value_name = "FILE")]
    warc: Option<PathBuf>,
    /// Start a new WARC file once one holds this many bytes.
    #[arg(long, default_value_t = forager::warc::DEFAULT_MAX_BYTES)]
    warc_max_bytes: u64,
    /// Fetches in flight.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Seconds between requests to one host (default 1; 0 with --web, which is loopback).
    #[arg(long)]
    delay: Option<f64>,
    /// HTTP proxy.
    #[arg(long)]
    proxy: Option<String>,
    /// The apprentice learns on every crawl which links lead to relevant pages (for the next
    /// crawl of these topics and the browser's link marks); it guides soft and hard focus
    /// `auto`: while its critic finds it better than soft focus on the pages just fetched;
    /// `always`: from the end of its warm-up; `learn`: never; `off`: no apprentice at all.
    #[arg(long, value_enum, default_value_t = Guide::Auto)]
    apprentice_guide: Guide,
    /// The apprentice guides always (the same as --apprentice-guide always).
    #[arg(long)]
    apprentice: bool,
    /// Pages between apprentice retrains.
    #[arg(long, default_value_t = 200)]
    retrain_every: u64,
    /// Fetched pages before the learning apprentice may guide the crawl.
    #[arg(long, default_value_t = forager::crawl::DEFAULT_APPRENTICE_WARMUP)]
    apprentice_warmup: u64,
    /// The apprentice's DOM offset window.
    #[arg(long, default_value_t = forager_classifier::apprentice::DEFAULT_D_MAX)]
    d_max: usize,
    /// Start the apprentice trained on a previous crawl database (it guides as
    /// --apprentice-guide says; `off` is refused).
    #[arg(long)]
    apprentice_from: Option<PathBuf>,
    /// Start a new apprentice instead of the one learned in earlier crawls of the same good
    /// topics (saved as apprentice.forager beside --db); this crawl's replaces it at the end.
    #[arg(long)]
    fresh_apprentice: bool,
    /// Run the distiller every this many fetched pages (and at the end).
    #[arg(long)]
    distill_every: Option<u64>,
    /// Feed the distiller back: the unvisited cross-site out-neighbours of this many top hubs
    /// go to the head of the frontier (implies distilling every 500 pages unless set).
    #[arg(long)]
    hub_feedback: Option<usize>,
    /// Most pages fetched from one host (a trap guard).
    #[arg(long, default_value_t = 5_000)]
    max_pages_per_host: u64,
    /// Soft and hard focus: the share of a page's relevance that links in its navigation
    /// boilerplate (site menus, footers) inherit; 1 treats them like links in the text.
    #[arg(long, default_value_t = forager::crawl::DEFAULT_TEMPLATE_WEIGHT, allow_negative_numbers = true)]
    template_weight: f64,
    /// Soft and hard focus: learn "none of the topics" from the crawl's own pages (positive-
    /// unlabelled learning with spies) at 100 pages and every doubling, and re-judge the crawl.
    /// Experimental: on FOLDOC it lowers harvest (see ARCHITECTURE.md).
    #[arg(long)]
    open_world: bool,
    /// Count every word of a page as evidence (the classifier before length-aware posteriors,
    /// which caps a page's evidence at 10 word occurrences), to compare the two.
    #[arg(long)]
    uncapped: bool,
    /// Maintenance mode: share of fetches spent revisiting fetched pages (best hubs first).
    #[arg(long, default_value_t = 0.0)]
    revisit_share: f64,
    /// Seconds before a fetched page may be revisited.
    #[arg(long, default_value_t = 3600.0)]
    revisit_after: f64,
    /// Seconds allowed for one request, body included.
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
    /// Reproducible order: lockstep waves of 4 × --concurrency fetches, each recorded in
    /// checkout order before the next is checked out.
    #[arg(long)]
    deterministic: bool,
    /// Put the URLs that failed back in the frontier, tries reset (after fixing a proxy, say).
    #[arg(long)]
    retry_failed: bool,
    /// Seconds a failing host (or a failing proxy or network) waits before it is tried again;
    /// the wait doubles with each failed retry.
    #[arg(long, default_value_t = 10.0)]
    host_backoff: f64,
    /// Minutes the crawl keeps retrying while every fetch fails for the crawler's own reasons
    /// (proxy, network) before it stops, its frontier intact.
    #[arg(long, default_value_t = 30.0)]
    give_up_after: f64,
    /// Let links lead to loopback, private and link-local addresses (by default only the
    /// seeds' own hosts there are fetched, so a page cannot steer the crawler at local services).
    #[arg(long)]
    allow_private: bool,
    /// Print progress as JSON lines on stdout.
    #[arg(long)]
    json: bool,
    /// Time the crawl loop's steps and each fetch's phases, and print a phase summary at the
    /// end (`RUST_LOG` chooses the spans; by default the crawl core's).
    #[arg(long)]
    pub(crate) trace: bool,
}

pub(crate) fn run(a: Args) -> Result<()> {
    check(&a)?;
    use forager::store::Locator;
    let locator = super::locator(&a.db);
    if a.new {
        set_aside(&locator)?;
    }
    // Everything that can fail before the database is opened, so that a mistake leaves no
    // empty database and lock file behind.
    let web = a.web.as_deref().map(MiniWeb::open).transpose()?;
    let task = match (&web, &a.task) {
        (Some(w), Some(t)) => Some(w.task(t)?.clone()),
        (None, Some(_)) => bail!("--task needs --web"),
        _ => None,
    };
    let given = a.model.as_deref().map(read_model).transpose()?;
    let missing = matches!(&locator, Locator::Sqlite(p) if std::fs::symlink_metadata(p).is_err());
    if given.is_none() && web.is_none() && missing {
        bail!("no model: give --model or --web, or resume a database that has one");
    }
    let mut store = forager::store::open(&locator)?;
    let mut model = model_of(&a, given, web.as_ref(), task.as_ref(), &*store)?;
    let start = start_of(&a, task.as_ref())?;
    let prepared = forager::crawl::prepare(&mut store, &model, &start)?;
    if a.retry_failed {
        eprintln!("{} failed URLs back in the frontier", prepared.retried);
    }
    let (apprentice, reuse) = apprentice_of(&a, &locator, &model)?;
    let classifier = if a.uncapped {
        model.uncapped_classifier()
    } else {
        model.classifier()
    };
    runtime()?.block_on(async move {
        let server = match web {
            Some(w) => Some(forager::serve::start(w, ([127, 0, 0, 1], 0).into()).await?),
            None => None,
        };
        let proxy = (a.proxy.clone()).or_else(|| server.as_ref().map(|s| s.proxy_url()));
        let delay = a.delay.unwrap_or(if server.is_some() { 0.0 } else { 1.0 });
        let mut config = config_of(&a, &model, apprentice, proxy, delay);
        let mut store = store;
        // On a database server the crawl is shared: its job settings are stored for workers.
        let settings = job_of(&a, &config);
        let asked = forager::crawl::shared::Asked::default();
        forager::crawl::shared::join(locator.clone(), &mut store, &mut config, Some(&settings), &asked)?;
        let bar = progress_bar(a.pages);
        let json = a.json;
        // One run; on a shared database, rounds while other workers hold the work.
        let (reason, p) = super::worker::rounds(store, &locator, classifier, config, |p| {
            show_progress(&bar, json, p)
        })
        .await?;
        bar.finish_and_clear();
        if json {
            // The final counters, whether or not a periodic line came before.
            let mut v = serde_json::to_value(&p)?;
            v["stopped"] = format!("{reason:?}").into();
            println!("{v}");
        }
        save_learned(&reuse, &p);
        if let Some((app, soft)) = p.critic_auc {
            let now = if p.apprentice_guides { "guiding" } else { "not guiding" };
            eprintln!(
                "apprentice: {now} at the end (AUC on the last pages fetched: apprentice {app:.3}, soft focus {soft:.3})"
            );
        }
        if let Some(s) = crate::trace::summary() {
            eprint!("{s}");
        }
        // In words first: the "stopped:" line stays the last (scripts read it).
        say_why(reason, &p, p.fetched.saturating_sub(prepared.fetched));
        let rss = forager::crawl::peak_rss().map_or("?".into(), |b| format!("{} MB", b >> 20));
        eprintln!(
            "stopped: {reason:?}; fetched {} pages; frontier {}; peak RSS {rss}; cpu {:.1} s; errors {:?}; deferred {:?}",
            p.fetched, p.frontier, forager::crawl::cpu_seconds().unwrap_or(f64::NAN), p.errors, p.deferred
        );
        if let Some(why) = &p.paused {
            eprintln!("the crawl could not reach the web: {why}");
        }
        if let Some(s) = server {
            s.shutdown().await;
        }
        anyhow::Ok(())
    })
}

/// The crawl's start: `--seed` URLs and the task's seeds, canonical, and whether failed URLs go back.
fn start_of(a: &Args, task: Option<&forager::miniweb::Task>) -> Result<forager::crawl::Start> {
    let mut seeds: Vec<String> = a.seed.clone();
    if let Some(t) = task {
        seeds.extend(t.seeds.iter().cloned());
    }
    Ok(forager::crawl::Start {
        seeds: (seeds.iter().map(|s| forager::canon::seed(s)))
            .collect::<Result<_, _>>()
            .map_err(anyhow::Error::msg)?,
        more_from: Vec::new(),
        retry_failed: a.retry_failed,
    })
}

/// `--new`: the previous crawl in a SQLite file is kept beside it under another name.
fn set_aside(locator: &forager::store::Locator) -> Result<()> {
    let forager::store::Locator::Sqlite(path) = locator else {
        bail!(
            "--new sets a SQLite crawl database aside; on a database server, start a new database"
        );
    };
    if let Some(kept) = forager::store::Store::set_aside(path)? {
        eprintln!("kept the previous crawl as {}", kept.display());
    }
    Ok(())
}

/// Saves what the crawl's apprentice learned, for the next crawl of these topics.
fn save_learned(reuse: &Reuse, p: &forager::crawl::Progress) {
    if let (Some((path, key)), Some(learned)) = (reuse, &p.learned) {
        match forager::reuse::save(path, *key, &learned.0) {
            Ok(()) => eprintln!(
                "apprentice: saved for the next crawl of these topics at {}",
                path.display()
            ),
            Err(e) => eprintln!("apprentice: not saved: {e}"),
        }
    }
}

/// Why the crawl stopped and which hosts failed, in words, and the time spent waiting for them.
fn say_why(reason: forager::crawl::StopReason, p: &forager::crawl::Progress, in_run: u64) {
    use forager::crawl::words::{stop_in_words, troubles_in_words};
    eprintln!("{}", stop_in_words(reason, p, in_run));
    if in_run > 0 && p.failing_hosts > 0 {
        eprintln!(
            "failing hosts: {}",
            troubles_in_words(&p.failing, p.failing_hosts)
        );
    }
    eprintln!(
        "waited {:.1} s of {:.1} s with only failing hosts' URLs left",
        p.idle_secs, p.elapsed
    );
}

/// How the apprentice takes part in the crawl (`--apprentice-guide`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Guide {
    /// Guides while the critic finds it better than soft focus (the default).
    Auto,
    /// Guides from the end of its warm-up.
    Always,
    /// Learns, never guides.
    Learn,
    /// No apprentice.
    Off,
}

impl Args {
    /// The apprentice's setting, `None` for none (`--apprentice` is `always`).
    fn guide(&self) -> Option<forager::crawl::Guide> {
        use forager::crawl::Guide as G;
        match (self.apprentice, self.apprentice_guide) {
            (true, _) | (_, Guide::Always) => Some(G::Always),
            (_, Guide::Auto) => Some(G::WhenBetter),
            (_, Guide::Learn) => Some(G::Never),
            (_, Guide::Off) => None,
        }
    }
}

/// The options checked before anything is written.
fn check(a: &Args) -> Result<()> {
    if a.apprentice && a.apprentice_guide != Guide::Auto && a.apprentice_guide != Guide::Always {
        bail!("--apprentice is --apprentice-guide always: give one of them");
    }
    if a.apprentice_from.is_some() && a.guide().is_none() {
        bail!("--apprentice-from starts an apprentice; --apprentice-guide off has none");
    }
    if !(0.0..=1.0).contains(&a.template_weight) {
        bail!("--template-weight must be between 0 and 1");
    }
    if !(a.host_backoff.is_finite() && a.host_backoff > 0.0) {
        bail!("--host-backoff must be a positive number of seconds");
    }
    if !(a.give_up_after.is_finite() && a.give_up_after > 0.0) {
        bail!("--give-up-after must be a positive number of minutes");
    }
    if let Some(p) = &a.fetch_log {
        let policy = forager::output::Policy::data(a.force).or_ours(is_fetch_log);
        forager::output::check(p, policy)?;
    }
    if let Some(w) = &a.warc {
        let prefix = forager::warc::prefix_of(w);
        let named =
            prefix.file_name().is_some() && !prefix.as_os_str().to_string_lossy().ends_with('/');
        if !named || w.is_dir() {
            bail!(
                "--warc {} is a directory; give a file name in it (--warc {}), and Forager \
                 writes crawl-00000.warc.gz, crawl-00001.warc.gz, ... beside it",
                w.display(),
                w.join("crawl.warc.gz").display()
            );
        }
    }
    Ok(())
}

/// Whether a file's first bytes are a fetch log (one http(s) URL a line), which a resumed
/// crawl rewrites from its database.
fn is_fetch_log(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let mut lines: Vec<&str> = text.split('\n').collect();
    if head.len() >= 64 * 1024 {
        lines.pop(); // cut short by the 64 KB read
    }
    lines
        .iter()
        .filter(|l| !l.is_empty())
        .all(|l| url::Url::parse(l).is_ok_and(|u| matches!(u.scheme(), "http" | "https")))
}

/// The model: given, trained from the web, or the one stored by an earlier run; with the
/// good topics of the options and the task.
fn model_of(
    a: &Args,
    given: Option<Model>,
    web: Option<&MiniWeb>,
    task: Option<&forager::miniweb::Task>,
    store: &dyn forager::store::CrawlDb,
) -> Result<Model> {
    let mut model = if let Some(m) = given {
        m
    } else if let Some(w) = web {
        training::from_miniweb(w, TextOptions::default(), TrainOptions::default())?.0
    } else if let Some(b) = store.reader().model_bytes()? {
        Model::from_bytes(&b)?
    } else {
        bail!("no model: give --model or --web, or resume a database that has one");
    };
    let mut good = a.good.clone();
    if let Some(t) = task {
        good.extend(t.good.iter().cloned());
    }
    if !good.is_empty() {
        model.set_good_paths(&good)?;
    }
    Ok(model)
}

/// Where this crawl's apprentice is saved for the next one, and its key.
type Reuse = Option<(PathBuf, forager::reuse::Key)>;

/// The apprentice's settings, unless it is off: trained offline from another crawl when asked,
/// else the one learned in earlier crawls of the same topics (saved beside the database,
/// [`forager::reuse`]), which this crawl's replaces at the end.
fn apprentice_of(
    a: &Args,
    locator: &forager::store::Locator,
    model: &Model,
) -> Result<(Option<forager::crawl::ApprenticeConfig>, Reuse)> {
    let Some(guide) = a.guide() else {
        return Ok((None, None));
    };
    let mut reuse = None;
    let initial = match &a.apprentice_from {
        Some(p) => {
            let ap = super::open_read(p)?.trained_apprentice()?;
            eprintln!(
                "apprentice trained offline on {:?} instances [low, high]",
                ap.instances()
            );
            Some(ap)
        }
        None => match locator {
            forager::store::Locator::Sqlite(db) => {
                let path = forager::reuse::path_beside(db);
                let key = forager::reuse::Key::of(model);
                reuse = Some((path.clone(), key));
                if a.fresh_apprentice {
                    eprintln!("apprentice: learning a new one (--fresh-apprentice)");
                    None
                } else {
                    let loaded = forager::reuse::load(&path, key);
                    eprintln!("{}", loaded.words(&path));
                    loaded.apprentice()
                }
            }
            forager::store::Locator::Postgres(_) => {
                eprintln!("apprentice: a crawl on a database server learns a new one");
                None
            }
        },
    };
    let config = forager::crawl::ApprenticeConfig {
        retrain_every: a.retrain_every.max(1),
        warmup: a.apprentice_warmup,
        d_max: a.d_max,
        initial,
        guide,
    };
    Ok((Some(config), reuse))
}

/// The settings of a shared crawl (its periodic job's, and how every worker crawls), from
/// the options.
fn job_of(a: &Args, config: &forager::crawl::CrawlConfig) -> forager::crawl::shared::JobSettings {
    let apprentice = a.apprentice || a.apprentice_from.is_some();
    forager::crawl::shared::JobSettings {
        distill_every: a.distill_every.or(a.hub_feedback.map(|_| 500)),
        hub_feedback: a.hub_feedback,
        apprentice: apprentice.then_some(forager::crawl::shared::SharedApprentice {
            warmup: a.apprentice_warmup,
            retrain_every: a.retrain_every.max(1),
            d_max: a.d_max,
        }),
        crawl: Some(forager::crawl::shared::CrawlWide::of(config, a.uncapped)),
    }
}

/// The crawl's settings from the options.
fn config_of(
    a: &Args,
    model: &Model,
    apprentice: Option<forager::crawl::ApprenticeConfig>,
    proxy: Option<String>,
    delay: f64,
) -> forager::crawl::CrawlConfig {
    let secs = std::time::Duration::from_secs_f64;
    forager::crawl::CrawlConfig {
        mode: a.mode,
        max_pages: a.pages,
        max_time: a.seconds.map(secs),
        concurrency: a.concurrency.max(1),
        delay: secs(delay.max(0.0)),
        fetch: FetchConfig {
            proxy,
            reach: forager::address::Reach {
                allow_private: a.allow_private,
                ..Default::default()
            },
            ..FetchConfig::default()
        }
        .with_timeout(a.timeout),
        fetch_log: a.fetch_log.clone(),
        warc: a.warc.as_deref().map(|p| forager::warc::WarcConfig {
            prefix: forager::warc::prefix_of(p),
            max_bytes: a.warc_max_bytes.max(1),
            user_agent: FetchConfig::default().user_agent,
        }),
        max_pages_per_host: a.max_pages_per_host,
        template_weight: a.template_weight,
        open_world: (a.open_world).then(|| forager::crawl::OpenWorldConfig::new(model.clone())),
        apprentice,
        distill_every: a.distill_every.or(a.hub_feedback.map(|_| 500)),
        hub_feedback: a.hub_feedback,
        query: std::sync::Arc::new(forager::crawl::Query::from_model(model)),
        deterministic: a.deterministic,
        revisit_share: a.revisit_share,
        revisit_after: secs(a.revisit_after.max(0.0)),
        blame: forager::crawl::blame::BlameParams {
            backoff: secs(a.host_backoff.min(3600.0)),
            give_up: secs(a.give_up_after.min(1e6) * 60.0),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// A bar to the page budget, or a spinner without one.
fn progress_bar(pages: Option<u64>) -> indicatif::ProgressBar {
    let bar = match pages {
        Some(n) => indicatif::ProgressBar::new(n),
        None => indicatif::ProgressBar::new_spinner(),
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} pages  {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar
}

/// One progress report: a JSON line, or the bar's position and message.
fn show_progress(bar: &indicatif::ProgressBar, json: bool, p: &forager::crawl::Progress) {
    if json {
        println!("{}", serde_json::to_string(p).unwrap_or_default());
        return;
    }
    bar.set_position(p.fetched);
    bar.set_message(match (&p.paused, &p.waiting) {
        (Some(why), _) => format!("PAUSED: {why}"),
        (None, Some(w)) => format!(
            "waiting {:.0} s for {} failing host{} ({})",
            w.secs,
            w.hosts,
            if w.hosts == 1 { "" } else { "s" },
            forager::crawl::words::troubles_in_words(&p.failing, p.failing_hosts)
        ),
        (None, None) => format!(
            "{:.0} pages/s  frontier {}  relevance(last 100) {:.3}  errors {}",
            p.pages_per_sec,
            p.frontier,
            p.recent_relevance,
            p.errors.values().sum::<u64>()
        ),
    });
}
