//! `forager bench`: crawl strategies compared on a mini-web, with the evaluation measures of
//! the three papers — harvest rate by ground truth and by the classifier, loss, target
//! recall, distinct sites, robustness to the seed set (focused-crawling-1999 Figs. 8-9), and
//! the distance of the top hubs' servers from the seeds (Fig. 11).

use crate::miniweb::{MiniWeb, Task};
use forager_classifier::Model;
use forager_core::crawl::{self, ApprenticeConfig, CrawlConfig, Guide, Mode};
use forager_core::reuse;
use forager_core::store::{Reader as _, Store};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Names of the strategies `forager bench` knows.
pub const STRATEGIES: &[&str] = &[
    "bfs",
    "unfocused",
    "best-first",
    "shark",
    "hard",
    "soft",
    "soft+distiller",
    "soft+apprentice",
    "soft+apprentice-offline",
    "soft+apprentice-reused",
    "soft+critic",
    "soft+critic-reused",
    "soft+open-world",
    "soft+open-world-em",
    "soft+apprentice+open-world",
    "soft+uncapped",
    "soft+apprentice+uncapped",
];

/// One crawl strategy.
#[derive(Clone, Copy, Debug)]
pub struct Strategy {
    /// Its name.
    pub name: &'static str,
    /// Link policy.
    pub mode: Mode,
    /// With the online apprentice.
    pub apprentice: bool,
    /// Whether that apprentice guides: always after its warm-up (`soft+apprentice...`) or
    /// while its critic finds it better than soft focus (`soft+critic...`, `forager crawl`'s
    /// default).
    pub guide: Guide,
    /// With distiller feedback.
    pub distiller: bool,
    /// The 2002 paper's protocol (§3.5): the apprentice is first trained on the instances of
    /// an unguided soft crawl from the same seeds, then guides a fresh crawl (and keeps
    /// learning).
    pub offline: bool,
    /// The apprentice reused across crawls ([`forager_core::reuse`]): a first crawl of the same
    /// task with the learning apprentice is saved and loaded as `forager crawl` does, then
    /// guides a fresh crawl from its first page (and keeps learning).
    pub reused: bool,
    /// Soft focus that learns "none of the topics" from the crawl's own pages
    /// ([`crawl::OpenWorldConfig`]) with this method.
    pub open_world: Option<forager_classifier::BackgroundMethod>,
    /// The classifier counts every word of a page (`+uncapped`: before #13's length-aware
    /// posteriors, [`forager_classifier::classify::DEFAULT_EVIDENCE_CAP`]).
    pub uncapped: bool,
}

/// The strategy called `name`.
pub fn strategy(name: &str) -> Option<Strategy> {
    let (mode, apprentice, distiller, offline) = match name {
        "bfs" => (Mode::Bfs, false, false, false),
        "unfocused" => (Mode::Unfocused, false, false, false),
        "best-first" => (Mode::BestFirst, false, false, false),
        "shark" => (Mode::Shark, false, false, false),
        "hard" => (Mode::Hard, false, false, false),
        "soft" => (Mode::Soft, false, false, false),
        "soft+distiller" => (Mode::Soft, false, true, false),
        "soft+apprentice" => (Mode::Soft, true, false, false),
        "soft+apprentice-offline" => (Mode::Soft, true, false, true),
        "soft+apprentice-reused" => {
            return Some(Strategy {
                name: "soft+apprentice-reused",
                reused: true,
                ..strategy("soft+apprentice")?
            })
        }
        "soft+critic" => {
            return Some(Strategy {
                name: "soft+critic",
                guide: Guide::WhenBetter,
                ..strategy("soft+apprentice")?
            })
        }
        "soft+critic-reused" => {
            return Some(Strategy {
                name: "soft+critic-reused",
                reused: true,
                ..strategy("soft+critic")?
            })
        }
        "soft+open-world" => {
            return Some(Strategy {
                name: "soft+open-world",
                open_world: Some(forager_classifier::BackgroundMethod::Spies),
                ..strategy("soft")?
            })
        }
        "soft+apprentice+open-world" => {
            return Some(Strategy {
                name: "soft+apprentice+open-world",
                open_world: Some(forager_classifier::BackgroundMethod::Spies),
                ..strategy("soft+apprentice")?
            })
        }
        "soft+uncapped" | "soft+apprentice+uncapped" => {
            let base = name.trim_end_matches("+uncapped");
            return Some(Strategy {
                name: STRATEGIES.iter().find(|s| **s == name)?,
                uncapped: true,
                ..strategy(base)?
            });
        }
        "soft+open-world-em" => {
            return Some(Strategy {
                name: "soft+open-world-em",
                open_world: Some(forager_classifier::BackgroundMethod::Em { rounds: 4 }),
                ..strategy("soft")?
            })
        }
        _ => return None,
    };
    let name = STRATEGIES.iter().find(|s| **s == name)?;
    Some(Strategy {
        name,
        mode,
        apprentice,
        guide: Guide::Always,
        distiller,
        offline,
        reused: false,
        open_world: None,
        uncapped: false,
    })
}

/// What one bench run does.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Pages per crawl.
    pub pages: u64,
    /// Seed of the random split of the seed URLs (robustness).
    pub seed: u64,
    /// Also crawl from two disjoint halves of the seeds and measure their overlap.
    pub robustness: bool,
    /// Output directory.
    pub out: PathBuf,
    /// HTTP proxy serving the web.
    pub proxy: String,
    /// Pages between apprentice retrains.
    pub retrain_every: u64,
    /// Fetched pages before the learning apprentice guides the crawl.
    pub warmup: u64,
    /// Also simulate the reference crawls on the web's link graph ([`crate::reference`]).
    pub references: bool,
    /// Fetches in flight per crawl: as users run `forager crawl` by default (16).
    pub concurrency: usize,
    /// The same crawl in lockstep waves recorded in checkout order
    /// ([`CrawlConfig::deterministic`]): the reproducible order that debugging and before/after
    /// comparisons need.
    pub deterministic: bool,
}

/// Measures after the first `n` fetches.
#[derive(Clone, Debug, Serialize)]
pub struct Checkpoint {
    /// Pages fetched.
    pub n: usize,
    /// Share of relevant pages by ground truth.
    pub harvest: f64,
    /// Mean R(d) of the fetched pages (the paper's harvest by the classifier).
    pub harvest_classifier: f64,
    /// n − relevant pages (ground truth).
    pub loss: usize,
    /// Σ (1 − R(d)): the paper's expected loss.
    pub loss_classifier: f64,
    /// Targets fetched / targets.
    pub target_recall: f64,
    /// Distinct servers fetched from.
    pub sites: usize,
    /// Fetched pages the classifier is confident about, R(d) >= 0.5.
    pub confident: usize,
    /// Of those, the share relevant by ground truth (the precision of R >= 0.5; 0 when none).
    pub precision: f64,
    /// Share of fetched pages the web labels with no topic at all (off-taxonomy).
    pub no_topic: f64,
    /// Area under the ROC curve of R over the fetched pages against the ground truth (None
    /// when all are relevant or none is).
    pub auc: Option<f64>,
}

/// Overlap of two crawls from disjoint seed halves after `n` fetches each.
#[derive(Clone, Debug, Serialize)]
pub struct Overlap {
    /// Pages fetched by each.
    pub n: usize,
    /// |A ∩ B| / |A ∪ B| of the URLs.
    pub urls: f64,
    /// |A ∩ B| / |A ∪ B| of the servers.
    pub servers: f64,
}

/// The result of one strategy.
#[derive(Clone, Debug, Serialize)]
pub struct StrategyResult {
    /// Strategy name.
    pub strategy: String,
    /// Measures at checkpoints.
    pub checkpoints: Vec<Checkpoint>,
    /// Seed-half overlap over time (empty without robustness).
    pub robustness: Vec<Overlap>,
    /// Link distance from the seeds of the top-100 hubs → how many hubs.
    pub hub_distance: BTreeMap<i64, usize>,
    /// The top 10 hubs of each distiller method on the finished crawl (where the web has
    /// labels; empty for the simulated references).
    pub hubs: Vec<crate::hub_quality::HubQuality>,
    /// Crawl seconds (for soft+apprentice-offline, its training crawl's included; for the
    /// simulated references, the whole reference step).
    pub seconds: f64,
}

impl StrategyResult {
    /// A result with measures only (no seed-half robustness, no hub distances).
    pub fn plain(strategy: &str, checkpoints: Vec<Checkpoint>, seconds: f64) -> Self {
        StrategyResult {
            strategy: strategy.to_owned(),
            checkpoints,
            robustness: Vec::new(),
            hub_distance: BTreeMap::new(),
            hubs: Vec::new(),
            seconds,
        }
    }
}

/// Checkpoints for a crawl of `pages`: ten even steps plus the usual 500/1000/3000.
pub fn checkpoints(pages: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (1..=10).map(|i| pages * i / 10).collect();
    v.extend([100, 500, 1000, 3000, 5000].iter().filter(|&&c| c <= pages));
    v.sort_unstable();
    v.dedup();
    v.retain(|&c| c > 0);
    v
}

fn host(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default()
}

/// Runs one crawl of `strategy` from `seeds` into `db` with the bench's concurrency; returns
/// (url, R) in fetch order and the seconds it took.
async fn crawl_once(
    s: Strategy,
    model: &mut Model,
    seeds: &[String],
    db: &Path,
    cfg: &BenchConfig,
) -> anyhow::Result<(Vec<(String, f64)>, f64)> {
    crawl_strategy(s, model, seeds, db, cfg, cfg.concurrency, |_| {}).await
}

/// Runs one crawl of `strategy` from `seeds` into a fresh `db` with `concurrency` fetches at a
/// time (reproducible when `cfg.deterministic`); returns (url, R) in fetch order and the seconds it took (for the
/// offline apprentice, the training crawl's included).
pub async fn crawl_strategy(
    s: Strategy,
    model: &mut Model,
    seeds: &[String],
    db: &Path,
    cfg: &BenchConfig,
    concurrency: usize,
    on_progress: impl FnMut(&crawl::Progress),
) -> anyhow::Result<(Vec<(String, f64)>, f64)> {
    let t = std::time::Instant::now();
    let base = CrawlConfig {
        mode: s.mode,
        max_pages: Some(cfg.pages),
        concurrency: concurrency.max(1),
        deterministic: cfg.deterministic,
        progress_every: Duration::from_millis(100),
        delay: Duration::ZERO,
        fetch: forager_core::fetch::FetchConfig {
            proxy: Some(cfg.proxy.clone()),
            ..Default::default()
        },
        distill_every: s.distiller.then_some(500),
        hub_feedback: s.distiller.then_some(10),
        query: Arc::new(crawl::Query::from_model(model)),
        open_world: s.open_world.map(|method| {
            let mut ow = crawl::OpenWorldConfig::new(model.clone());
            ow.options.method = method;
            ow
        }),
        ..Default::default()
    };
    let initial = if s.offline {
        // The unguided crawl whose links train the apprentice: soft focus recording features.
        let collect = db.with_extension("collect.db");
        let unguided = CrawlConfig {
            apprentice: Some(ApprenticeConfig {
                retrain_every: u64::MAX,
                warmup: u64::MAX,
                guide: Guide::Never,
                ..Default::default()
            }),
            ..base.clone()
        };
        crawl_fresh(model, seeds, &collect, unguided, s.uncapped, |_| {}).await?;
        Some(Store::open(&collect)?.trained_apprentice()?)
    } else if s.reused {
        let first = CrawlConfig {
            apprentice: Some(ApprenticeConfig {
                retrain_every: cfg.retrain_every,
                warmup: cfg.warmup,
                guide: s.guide,
                ..Default::default()
            }),
            ..base.clone()
        };
        let db1 = db.with_extension("first.db");
        let (_, learned) = crawl_fresh(model, seeds, &db1, first, s.uncapped, |_| {}).await?;
        let (path, key) = (
            db.with_extension("apprentice.forager"),
            reuse::Key::of(model),
        );
        if let Some(l) = learned {
            reuse::save(&path, key, &l.0)?;
        }
        reuse::load(&path, key).apprentice()
    } else {
        None
    };
    let config = CrawlConfig {
        apprentice: s.apprentice.then(|| ApprenticeConfig {
            retrain_every: cfg.retrain_every,
            warmup: cfg.warmup,
            initial,
            guide: s.guide,
            ..Default::default()
        }),
        ..base
    };
    let (fetched, _) = crawl_fresh(model, seeds, db, config, s.uncapped, on_progress).await?;
    Ok((fetched, t.elapsed().as_secs_f64()))
}

/// Crawls from `seeds` into a fresh `db` (with the classifier counting every word if `uncapped`);
/// returns (url, R) in fetch order and what its apprentice learned.
async fn crawl_fresh(
    model: &mut Model,
    seeds: &[String],
    db: &Path,
    config: CrawlConfig,
    uncapped: bool,
    on_progress: impl FnMut(&crawl::Progress),
) -> anyhow::Result<(Vec<(String, f64)>, Option<reuse::Learned>)> {
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
    }
    // Through the back-end neutral door, as every crawl will be (a path opens SQLite).
    let mut store = forager_core::store::open(&db.to_path_buf().into())?;
    let start = crawl::Start {
        seeds: (seeds.iter())
            .filter_map(|u| forager_core::canon::parse(u).ok())
            .collect(),
        ..Default::default()
    };
    crawl::prepare(&mut store, model, &start)?;
    let classifier = if uncapped {
        model.uncapped_classifier()
    } else {
        model.classifier()
    };
    let (_, progress) = crawl::run(
        store,
        classifier,
        config,
        std::future::pending(),
        on_progress,
    )
    .await?;
    let log = forager_core::store::ReadOnly::open(db)?
        .read()
        .fetch_log()?;
    Ok((log, progress.learned))
}

/// The measures of a crawl's fetch order at the checkpoints of a `pages` crawl.
pub fn measure(
    web: &MiniWeb,
    task: &Task,
    fetched: &[(String, f64)],
    pages: usize,
) -> Vec<Checkpoint> {
    let targets: HashSet<&str> = task.targets.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    for n in checkpoints(pages) {
        if n > fetched.len() {
            break;
        }
        let first = &fetched[..n];
        let relevant = first
            .iter()
            .filter(|(u, _)| web.is_relevant(u, &task.good))
            .count();
        let r_sum: f64 = first.iter().map(|(_, r)| r).sum();
        let confident: Vec<&str> = (first.iter())
            .filter(|(_, r)| *r >= 0.5)
            .map(|(u, _)| u.as_str())
            .collect();
        let confident_relevant = (confident.iter())
            .filter(|u| web.is_relevant(u, &task.good))
            .count();
        let no_topic = first
            .iter()
            .filter(|(u, _)| !web.labels.contains_key(u))
            .count();
        out.push(Checkpoint {
            n,
            harvest: relevant as f64 / n as f64,
            harvest_classifier: r_sum / n as f64,
            loss: n - relevant,
            loss_classifier: n as f64 - r_sum,
            target_recall: first
                .iter()
                .filter(|(u, _)| targets.contains(u.as_str()))
                .count() as f64
                / targets.len().max(1) as f64,
            sites: first
                .iter()
                .map(|(u, _)| host(u))
                .collect::<HashSet<_>>()
                .len(),
            confident: confident.len(),
            precision: confident_relevant as f64 / confident.len().max(1) as f64,
            no_topic: no_topic as f64 / n as f64,
            auc: crate::hub_quality::auc(
                (first.iter())
                    .map(|(u, r)| (*r, web.is_relevant(u, &task.good)))
                    .collect(),
            ),
        });
    }
    out
}

/// Writes a fetch order, one URL a line.
fn write_fetched(path: &Path, fetched: &[(String, f64)]) -> std::io::Result<()> {
    std::fs::write(
        path,
        fetched
            .iter()
            .map(|(u, _)| format!("{u}\n"))
            .collect::<String>(),
    )
}

/// The crawl's top 100 hubs by their link distance from the seeds (after distilling it).
fn hub_distance(db: &Path) -> anyhow::Result<BTreeMap<i64, usize>> {
    let mut hub_distance = BTreeMap::new();
    let mut store = Store::open(db)?;
    let (edges, rel) = store.graph()?;
    let scores = forager_core::distiller::distill(&edges, &rel, &Default::default());
    store.save_distillation(&scores)?;
    for (oid, _) in scores.hubs.iter().take(100) {
        let d = store.read().depth_of(*oid)?.unwrap_or_default();
        *hub_distance.entry(d).or_default() += 1;
    }
    Ok(hub_distance)
}

/// Robustness (crawling-the-web-2004 §4): the overlap of two crawls from disjoint halves of
/// the seeds, in URLs and in servers, at each checkpoint.
async fn robustness(
    s: Strategy,
    model: &mut Model,
    halves: [&[String]; 2],
    cfg: &BenchConfig,
) -> anyhow::Result<Vec<Overlap>> {
    let file = s.name.replace('+', "-");
    let mut runs = Vec::new();
    for (tag, seeds) in ["a", "b"].into_iter().zip(halves) {
        let db = cfg.out.join(format!("{file}.half-{tag}.db"));
        runs.push(crawl_once(s, model, seeds, &db, cfg).await?.0);
    }
    let (a, b) = (&runs[0], &runs[1]);
    let mut robustness = Vec::new();
    for n in checkpoints(cfg.pages as usize) {
        if n > a.len() || n > b.len() {
            break;
        }
        let jaccard = |x: HashSet<String>, y: HashSet<String>| {
            x.intersection(&y).count() as f64 / x.union(&y).count().max(1) as f64
        };
        let ua: HashSet<String> = a[..n].iter().map(|(u, _)| u.clone()).collect();
        let ub: HashSet<String> = b[..n].iter().map(|(u, _)| u.clone()).collect();
        let sa: HashSet<String> = a[..n].iter().map(|(u, _)| host(u)).collect();
        let sb: HashSet<String> = b[..n].iter().map(|(u, _)| host(u)).collect();
        robustness.push(Overlap {
            n,
            urls: jaccard(ua, ub),
            servers: jaccard(sa, sb),
        });
    }
    Ok(robustness)
}

/// The reference crawls simulated with the ground truth; each reports the whole reference
/// step's time (exploring the graph and the simulations).
fn references(
    web: &MiniWeb,
    task: &Task,
    cfg: &BenchConfig,
) -> anyhow::Result<Vec<StrategyResult>> {
    let t = std::time::Instant::now();
    let tw = crawl::DEFAULT_TEMPLATE_WEIGHT;
    let runs = crate::reference::crawls(web, task, cfg.pages as usize, tw);
    let seconds = t.elapsed().as_secs_f64();
    let mut results = Vec::new();
    for (policy, fetched) in runs {
        let file = policy.name().replace(':', "-");
        write_fetched(&cfg.out.join(format!("{file}.fetched.txt")), &fetched)?;
        let checkpoints = measure(web, task, &fetched, cfg.pages as usize);
        let result = StrategyResult::plain(policy.name(), checkpoints, seconds);
        std::fs::write(
            cfg.out.join(format!("{file}.json")),
            serde_json::to_string_pretty(&result)?,
        )?;
        results.push(result);
    }
    Ok(results)
}

/// Runs every strategy on `task` (then, if asked and the web has labels, the simulated
/// reference crawls) and writes `<out>/<strategy>.fetched.txt`, `<out>/<strategy>.json`,
/// `<out>/summary.json` and `<out>/summary.html`.
pub async fn run(
    web: &MiniWeb,
    task: &Task,
    strategies: &[Strategy],
    model: &mut Model,
    cfg: &BenchConfig,
) -> anyhow::Result<Vec<StrategyResult>> {
    std::fs::create_dir_all(&cfg.out)?;
    model.set_good_paths(&task.good)?;
    let mut halves = task.seeds.clone();
    halves.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(cfg.seed));
    let (half_a, half_b) = halves.split_at(halves.len() / 2);
    let mut results = Vec::new();
    for &s in strategies {
        let file = s.name.replace('+', "-");
        let db = cfg.out.join(format!("{file}.db"));
        let (fetched, seconds) = crawl_once(s, model, &task.seeds, &db, cfg).await?;
        write_fetched(&cfg.out.join(format!("{}.fetched.txt", s.name)), &fetched)?;
        let checkpoints_out = measure(web, task, &fetched, cfg.pages as usize);
        let hub_distance = hub_distance(&db)?;
        let hubs = if web.labels.is_empty() {
            Vec::new()
        } else {
            let ro = forager_core::store::ReadOnly::open(&db)?;
            crate::hub_quality::hub_quality(&ro.read(), web, task)?
        };
        let robustness = if cfg.robustness && !half_a.is_empty() && !half_b.is_empty() {
            robustness(s, model, [half_a, half_b], cfg).await?
        } else {
            Vec::new()
        };
        let result = StrategyResult {
            strategy: s.name.to_owned(),
            checkpoints: checkpoints_out,
            robustness,
            hub_distance,
            hubs,
            seconds,
        };
        std::fs::write(
            cfg.out.join(format!("{}.json", s.name)),
            serde_json::to_string_pretty(&result)?,
        )?;
        results.push(result);
    }
    if cfg.references && !web.labels.is_empty() {
        results.extend(references(web, task, cfg)?);
    }
    std::fs::write(
        cfg.out.join("summary.json"),
        serde_json::to_string_pretty(&serde_json::json!({
            "task": task.name, "pages": cfg.pages, "seed": cfg.seed,
            "concurrency": cfg.concurrency, "strategies": results,
        }))?,
    )?;
    std::fs::write(
        cfg.out.join("summary.html"),
        summary_html(&task.name, &results),
    )?;
    Ok(results)
}

/// A self-contained HTML page with the harvest and loss curves as inline SVG.
pub fn summary_html(task: &str, results: &[StrategyResult]) -> String {
    report_html(&format!("Forager bench — task {task}"), results, "")
}

/// [`summary_html`] with a title of its own and more HTML after the charts.
pub fn report_html(title: &str, results: &[StrategyResult], extra: &str) -> String {
    // One (strategy, points) series per strategy, of one measure against pages fetched.
    let series = |y: fn(&Checkpoint) -> f64| -> Vec<(String, Vec<(f64, f64)>)> {
        (results.iter())
            .map(|r| {
                let points = r.checkpoints.iter().map(|c| (c.n as f64, y(c))).collect();
                (r.strategy.clone(), points)
            })
            .collect()
    };
    let harvest = crate::report::line_chart(
        "Harvest rate (ground truth) vs pages fetched",
        "harvest",
        &series(|c| c.harvest),
    );
    let loss = crate::report::line_chart_at(
        "Loss (pages fetched that are not relevant)",
        "loss",
        &series(|c| c.loss as f64),
        plotters::chart::SeriesLabelPosition::UpperLeft,
    );
    let mut table = String::from(
        "<table><tr><th>strategy</th><th>pages</th><th>harvest</th><th>harvest (classifier)</th>\
         <th>loss</th><th>target recall</th><th>sites</th><th>seconds</th></tr>",
    );
    for r in results {
        if let Some(c) = r.checkpoints.last() {
            table += &format!(
                "<tr><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{}</td><td>{:.3}</td><td>{}</td><td>{:.1}</td></tr>",
                crate::report::escape(&r.strategy), c.n, c.harvest, c.harvest_classifier, c.loss,
                c.target_recall, c.sites, r.seconds
            );
        }
    }
    table += "</table>";
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{t}</title>\
         <style>{css}</style></head><body><h1>{t}</h1>{table}{harvest}{loss}{extra}</body></html>",
        t = crate::report::escape(title),
        css = crate::report::CSS,
    )
}
