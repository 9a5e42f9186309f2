//! `forager demo`: the main job on the embedded default, with no input files and no network.
//!
//! Generates the synthetic topical web with off-taxonomy regions (or opens a mini-web), trains
//! the taxonomy from its examples, serves the web on loopback, and crawls it side by side with
//! live progress: breadth-first, soft focus guided by the apprentice (the default crawl, with
//! length-aware posteriors), and the same crawl with the closed-world classifier that counts every
//! word of a page (as Forager did before #13). Then it prints the harvest table, how precise each
//! focused crawl's relevance was and how much it fetched that belongs to no topic, and the
//! distiller's top hubs, and writes an HTML report.

use crate::accuracy;
use crate::evaluation::{self, BenchConfig, StrategyResult};
use crate::miniweb::{MiniWeb, Task};
use crate::synthweb::{SynthConfig, SynthWeb};
use crate::training;
use forager_classifier::{TextOptions, TrainOptions};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

/// What the demo runs on.
#[derive(Clone, Debug)]
pub struct DemoOptions {
    /// A mini-web directory; `None` generates the synthetic web.
    pub web: Option<PathBuf>,
    /// Task of the web (default: its first).
    pub task: Option<String>,
    /// Pages per crawl.
    pub pages: u64,
    /// Seed of the generated web.
    pub seed: u64,
    /// Where to write the HTML report.
    pub report: PathBuf,
}

/// Runs the demo, writing a human report to `out`.
pub async fn run(out: &mut impl Write, opts: &DemoOptions) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let web = open_web(out, opts)?;
    let task: Task = match &opts.task {
        Some(t) => web.task(t)?.clone(),
        None => {
            (web.tasks.first().cloned()).ok_or_else(|| anyhow::anyhow!("the web has no tasks"))?
        }
    };
    let mut model = train(out, &web)?;
    writeln!(
        out,
        "Task {:?}: good topics {}; {} seeds; crawling {} pages each way...\n",
        task.name,
        task.good.join(", "),
        task.seeds.len(),
        opts.pages
    )?;
    model.set_good_paths(&task.good)?;
    let dir = std::env::temp_dir().join(format!("forager-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (mut results, dbs) = crawl_all(&web, &task, &model, opts, &dir).await?;
    results.push(oracle(&web, &task, opts.pages as usize));
    print_harvest(out, &results)?;
    print_precision(out, &results)?;
    let focused_db = dbs[1].clone();
    let hubs_html = print_hubs(out, &web, &task, &focused_db)?;
    let html = evaluation::report_html(
        &format!("Forager demo — task {}", task.name),
        &results,
        &hubs_html,
    );
    forager_core::output::write_owned(&opts.report, html.as_bytes())?;
    writeln!(
        out,
        "\nReport: {}   Crawl databases: {} (try `forager sql {} \"select num_tries, count(*) \
         from doc group by num_tries\"`)\nDone in {:.1} s.",
        opts.report.display(),
        dir.display(),
        focused_db.display(),
        t0.elapsed().as_secs_f64()
    )?;
    Ok(())
}

/// The mini-web given, or the generated one (said to `out`).
fn open_web(out: &mut impl Write, opts: &DemoOptions) -> anyhow::Result<MiniWeb> {
    if let Some(dir) = &opts.web {
        return Ok(MiniWeb::open(dir)?);
    }
    let cfg = SynthConfig {
        seed: opts.seed,
        off_taxonomy: crate::synthweb::off_taxonomy::REGIONS.len(),
        ..SynthConfig::default()
    };
    let synth = SynthWeb::generate(&cfg);
    writeln!(
        out,
        "Generated a topical web: {} files on {} sites (topics with their own words, mixed \
         sites, hubs, popular portals, dead links, a robots.txt-disallowed area, a calendar \
         trap) and {} off-taxonomy regions with {} pages: dense, popular clusters about none \
         of the topics whose words partly overlap theirs, as most of the real web is.",
        synth.files.len(),
        cfg.sites + 5 + cfg.off_taxonomy * (cfg.sites / 10).max(1),
        cfg.off_taxonomy,
        synth.off_taxonomy.len()
    )?;
    Ok(synth.web)
}

/// The taxonomy trained on the web's examples, and its accuracy on held-out pages.
fn train(out: &mut impl Write, web: &MiniWeb) -> anyhow::Result<forager_classifier::Model> {
    let t1 = Instant::now();
    let (mut model, skipped) =
        training::from_miniweb(web, TextOptions::default(), TrainOptions::default())?;
    let train_ms = t1.elapsed().as_secs_f64() * 1e3;
    let pages = accuracy::held_out(web);
    let acc = accuracy::score("hierarchical", &mut model, &pages, str::to_owned);
    writeln!(
        out,
        "Trained {} topics on {} examples in {:.0} ms ({} skipped); on {} held-out pages the \
         best leaf is right {:.0}% of the time, the top-level topic {:.0}%.",
        model.taxonomy().len(),
        model.example_count(),
        train_ms,
        skipped.len(),
        acc.pages,
        acc.leaf_accuracy * 100.0,
        acc.top_accuracy * 100.0
    )?;
    Ok(model)
}

/// The crawls the demo compares, side by side.
const CRAWLS: [&str; 3] = ["bfs", "soft+apprentice", "soft+apprentice+uncapped"];

/// Breadth-first and soft focus with the apprentice, with and without the evidence cap, crawled side by
/// side on the web served on loopback with live progress bars; returns their results and
/// databases.
async fn crawl_all(
    web: &MiniWeb,
    task: &Task,
    model: &forager_classifier::Model,
    opts: &DemoOptions,
    dir: &std::path::Path,
) -> anyhow::Result<(Vec<StrategyResult>, Vec<PathBuf>)> {
    let server = crate::serve::start(web.clone(), ([127, 0, 0, 1], 0).into()).await?;
    let cfg = BenchConfig {
        pages: opts.pages,
        seed: opts.seed,
        robustness: false,
        out: dir.to_path_buf(),
        proxy: server.proxy_url(),
        retrain_every: 200,
        // A short crawl: the apprentice guides after the first fifth of it.
        warmup: opts.pages / 5,
        references: false,
        concurrency: 1,
        deterministic: false,
    };
    let bars = indicatif::MultiProgress::new();
    let style =
        indicatif::ProgressStyle::with_template("{prefix:<16} [{bar:30}] {pos:>5}/{len}  {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> ");
    let mut runs = Vec::new();
    for name in CRAWLS {
        let s = evaluation::strategy(name).ok_or_else(|| anyhow::anyhow!("no strategy {name}"))?;
        let bar = bars.add(indicatif::ProgressBar::new(opts.pages));
        bar.set_style(style.clone());
        bar.set_prefix(name.replace("soft+apprentice", "focused"));
        runs.push((s, bar, dir.join(format!("{}.db", name.replace('+', "-")))));
    }
    let crawl = |i: usize| {
        let (s, bar, db) = runs[i].clone();
        let mut model = model.clone();
        let (cfg, seeds) = (cfg.clone(), task.seeds.clone());
        async move {
            let r = evaluation::crawl_strategy(s, &mut model, &seeds, &db, &cfg, 8, |p| {
                bar.set_position(p.fetched);
                bar.set_message(format!(
                    "{:>5.0} pages/s  relevance of last 100: {:.2}",
                    p.pages_per_sec, p.recent_relevance
                ));
            })
            .await;
            bar.finish();
            r
        }
    };
    let (a, b, c) = tokio::join!(crawl(0), crawl(1), crawl(2));
    server.shutdown().await;
    let mut results: Vec<StrategyResult> = Vec::new();
    for ((s, _, _), r) in runs.iter().zip([a?, b?, c?]) {
        let checkpoints = evaluation::measure(web, task, &r.0, opts.pages as usize);
        results.push(StrategyResult::plain(s.name, checkpoints, r.1));
    }
    Ok((results, runs.into_iter().map(|r| r.2).collect()))
}

/// The yardstick: the oracle, a crawl that knows every page's topic (simulated on the links).
fn oracle(web: &MiniWeb, task: &Task, pages: usize) -> StrategyResult {
    let t2 = Instant::now();
    let graph = crate::reference::LinkGraph::explore(web, &task.seeds);
    let oracle = crate::reference::crawl_on(
        &graph,
        web,
        task,
        crate::reference::Reference::Oracle,
        pages,
        forager_core::crawl::DEFAULT_TEMPLATE_WEIGHT,
    );
    let checkpoints = evaluation::measure(web, task, &oracle, pages);
    StrategyResult::plain("oracle", checkpoints, t2.elapsed().as_secs_f64())
}

/// The harvest table (breadth-first, focused, oracle) and what it means.
fn print_harvest(out: &mut impl Write, results: &[StrategyResult]) -> anyhow::Result<()> {
    writeln!(
        out,
        "\nHarvest (share of fetched pages that are relevant, by ground truth):"
    )?;
    write!(out, "{:>8}", "pages")?;
    for r in results {
        write!(out, " {:>26}", r.strategy)?;
    }
    writeln!(out)?;
    let n_rows = (results.iter().map(|r| r.checkpoints.len()))
        .min()
        .unwrap_or(0);
    for i in 0..n_rows {
        write!(out, "{:>8}", results[0].checkpoints[i].n)?;
        for r in results {
            write!(out, " {:>26.3}", r.checkpoints[i].harvest)?;
        }
        writeln!(out)?;
    }
    // The crawl `forager crawl` runs by default: soft focus with the apprentice.
    let focused = &results[1];
    if let (Some(a), Some(b)) = (results[0].checkpoints.last(), focused.checkpoints.last()) {
        writeln!(
            out,
            "Focused crawling wasted {} fetches on irrelevant pages where breadth-first wasted \
             {} ({:.0}% less); it reached {:.0}% of the held-out target pages against {:.0}%.",
            b.loss,
            a.loss,
            100.0 * (1.0 - b.loss as f64 / a.loss.max(1) as f64),
            b.target_recall * 100.0,
            a.target_recall * 100.0
        )?;
    }
    if let (Some(b), Some(o)) = (
        focused.checkpoints.last(),
        results[results.len() - 1].checkpoints.last(),
    ) {
        writeln!(
            out,
            "The oracle (a crawler told every page's true topic, simulated on the same links) \
             harvests {:.3}: the focused crawl got {:.0}% of the best possible.",
            o.harvest,
            100.0 * b.harvest / o.harvest.max(f64::MIN_POSITIVE)
        )?;
    }
    Ok(())
}

/// How far each focused crawl's relevance could be trusted, length-aware against counting every word:
/// the precision of R(d) >= 0.5 among its fetched pages and the share of its fetches that
/// belong to no topic (by ground truth).
fn print_precision(out: &mut impl Write, results: &[StrategyResult]) -> anyhow::Result<()> {
    writeln!(
        out,
        "\nOf the pages each crawl judged relevant (R >= 0.5), the share truly relevant; and the \
         share of its fetches about none of the topics:"
    )?;
    for r in results.iter().filter(|r| r.strategy.starts_with("soft")) {
        if let Some(c) = r.checkpoints.last() {
            let world = if r.strategy.contains("uncapped") {
                "every word counted"
            } else {
                "length-aware      "
            };
            writeln!(
                out,
                "  {world} ({}): precision {:.2}, no topic {:.0}% of {} fetches",
                r.strategy,
                c.precision,
                100.0 * c.no_topic,
                c.n
            )?;
        }
    }
    let last = |i: usize| results.get(i).and_then(|r| r.checkpoints.last());
    if let (Some(capped), Some(uncapped)) = (last(1), last(2)) {
        let verdict = if capped.harvest > uncapped.harvest {
            "raised"
        } else {
            "did not raise"
        };
        writeln!(
            out,
            "  On this web length-aware posteriors (a page's words count as at most {} \
             occurrences) {verdict} the harvest: {:.3}, against {:.3} counting every word.",
            forager_classifier::classify::DEFAULT_EVIDENCE_CAP,
            capped.harvest,
            uncapped.harvest
        )?;
    }
    Ok(())
}

/// The distiller on the focused crawl: its top hubs are the crawl's output for a person.
/// Printed, and returned as the report's HTML table.
fn print_hubs(
    out: &mut impl Write,
    web: &MiniWeb,
    task: &Task,
    db: &std::path::Path,
) -> anyhow::Result<String> {
    let mut store = forager_core::store::Store::open(db)?;
    use forager_core::store::Reader as _;
    let (edges, rel) = store.graph()?;
    let scores = forager_core::distiller::distill(&edges, &rel, &Default::default());
    store.save_distillation(&scores)?;
    writeln!(
        out,
        "\nTop hubs of the focused crawl (pages linking to many relevant pages elsewhere):"
    )?;
    let mut hubs_html = String::from(
        "<h2>Top hubs of the focused crawl</h2><table><tr><th>hub</th><th>score</th>\
         <th>relevant out-links</th></tr>",
    );
    for (oid, score) in scores.hubs.iter().take(10) {
        let url = store.read().url_of(*oid)?.unwrap_or_default();
        let targets = store.read().out_links(*oid)?;
        let good = (targets.iter())
            .filter(|u| web.is_relevant(u, &task.good))
            .count();
        writeln!(
            out,
            "  {score:.3}  {url:<44} {good}/{} relevant",
            targets.len()
        )?;
        hubs_html += &format!(
            "<tr><td><a href=\"{u}\">{u}</a></td><td>{score:.3}</td><td>{good}/{}</td></tr>",
            targets.len(),
            u = crate::report::escape(&url)
        );
    }
    hubs_html += "</table>";
    Ok(hubs_html)
}
