//! The `forager` command: a thin layer that parses arguments and reports errors once.

mod commands;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use commands::{cmd_crawl, cmd_distill, cmd_sql, cmd_status, CrawlArgs};
use forager::fetch::{FetchConfig, Fetcher};
use forager::miniweb::MiniWeb;
use forager::parse::page_text;
use forager::{accuracy, training};
use forager_classifier::{Model, Scratch, TextOptions, TrainOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(
    name = "forager",
    version,
    about = "A focused web crawler you steer from your browser"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Args, Clone)]
struct TrainArgs {
    /// Features kept per internal node of the taxonomy.
    #[arg(long, default_value_t = TrainOptions::default().features_per_node)]
    features: u32,
    /// Lidstone smoothing constant.
    #[arg(long, default_value_t = TrainOptions::default().lidstone)]
    lidstone: f64,
    /// Minimum number of examples a term must occur in to become a feature.
    #[arg(long, default_value_t = TrainOptions::default().min_docs)]
    min_docs: u32,
    /// Stem words (Snowball English); off by default, it lowered accuracy on FOLDOC.
    #[arg(long)]
    stem: bool,
    /// Self-training: the least probability of its best leaf for an unlabelled page to become
    /// an example of it.
    #[arg(long, default_value_t = Model::SELF_TRAIN_MIN_P)]
    self_train_min_p: f64,
}

impl TrainArgs {
    fn options(&self) -> (TextOptions, TrainOptions) {
        (
            TextOptions {
                stem: self.stem,
                ..TextOptions::default()
            },
            TrainOptions {
                features_per_node: self.features,
                lidstone: self.lidstone,
                min_docs: self.min_docs,
            },
        )
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Train a model from a mini-web's examples or a bookmarks export.
    Train {
        /// Mini-web directory (topics.tsv, examples.tsv, sites/).
        #[arg(long, required_unless_present = "bookmarks")]
        web: Option<PathBuf>,
        /// Bookmarks export (Netscape bookmark HTML): folders become topics.
        #[arg(long)]
        bookmarks: Option<PathBuf>,
        /// HTTP proxy for fetching bookmarked pages.
        #[arg(long)]
        proxy: Option<String>,
        /// Where to write the model.
        #[arg(long)]
        out: PathBuf,
        /// Then self-train once on the fetched pages of these crawl databases (semi-supervised:
        /// confident pages become examples of their best leaf).
        #[arg(long, value_name = "DB")]
        self_train_from: Vec<PathBuf>,
        #[command(flatten)]
        opts: TrainArgs,
    },
    /// Classify HTML files or URLs; prints the best path and the relevance to the good topics.
    Classify {
        /// The model file.
        #[arg(long)]
        model: PathBuf,
        /// Good topic paths (replacing the model's own marks).
        #[arg(long)]
        good: Vec<String>,
        /// One JSON object per input instead of a table.
        #[arg(long)]
        json: bool,
        /// Include the visible text and its tokens in the JSON.
        #[arg(long)]
        with_text: bool,
        /// HTTP proxy for URL inputs.
        #[arg(long)]
        proxy: Option<String>,
        /// HTML files or http(s) URLs.
        #[arg(required = true)]
        inputs: Vec<String>,
    },
    /// The main job on the embedded default: generate a web, learn its topics, show the results.
    Demo {
        /// Seed of the generated web.
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Run on this mini-web instead of the generated one.
        #[arg(long)]
        web: Option<PathBuf>,
        /// Task of the mini-web (default: its first).
        #[arg(long)]
        task: Option<String>,
        /// Pages per crawl.
        #[arg(long, default_value_t = 1000)]
        pages: u64,
        /// Where to write the HTML report.
        #[arg(long, default_value = "forager-demo.html")]
        report: PathBuf,
    },
    /// Crawl: from a mini-web task (trains, serves and seeds itself) or resume an existing database.
    Crawl(Box<CrawlArgs>),
    /// Mark pages as about none of your topics (negative feedback): each becomes an example of
    /// the model's background, so pages like it get low relevance. `--undo` removes marks.
    NotRelevant(commands::NotRelevantArgs),
    /// Run read-only SQL on a crawl database (tables doc, link, server, taxonomy, example;
    /// also attached as `arc`, so `arc.doc` works as in the paper).
    Sql {
        /// Crawl database.
        db: PathBuf,
        /// The query.
        query: String,
        /// Rows as JSON objects.
        #[arg(long)]
        json: bool,
    },
    /// Compare crawl strategies on a mini-web task: fetch order, harvest, loss, recall,
    /// robustness and hub distance per strategy, plus summary.json and summary.html.
    Bench {
        /// Mini-web directory.
        #[arg(long)]
        web: PathBuf,
        /// Task name.
        #[arg(long)]
        task: String,
        /// Comma-separated strategies (bfs, unfocused, best-first, shark, hard, soft,
        /// soft+distiller, soft+apprentice, soft+apprentice-offline, soft+open-world, soft+open-world-em).
        #[arg(long, default_value = "bfs,soft,soft+apprentice")]
        strategies: String,
        /// Pages per crawl.
        #[arg(long, default_value_t = 3000)]
        pages: u64,
        /// Output directory.
        #[arg(long, default_value = "bench-out")]
        out: PathBuf,
        /// Seed of the random split of the seeds into halves.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Skip the seed-half robustness crawls.
        #[arg(long)]
        no_robustness: bool,
        /// Pages between apprentice retrains.
        #[arg(long, default_value_t = 200)]
        retrain_every: u64,
        /// Fetched pages before the learning apprentice starts guiding the crawl.
        #[arg(long, default_value_t = forager::crawl::DEFAULT_APPRENTICE_WARMUP)]
        apprentice_warmup: u64,
        /// Skip the reference crawls simulated with the ground truth (sim:bfs, sim:oracle,
        /// sim:soft-perfect, sim:soft-clairvoyant).
        #[arg(long)]
        no_references: bool,
    },
    /// The browser's native-messaging endpoint (the browser starts it; see extension/PROTOCOL.md).
    Native {
        /// What the browser passes: the calling extension's origin (Chrome) or manifest (Firefox).
        caller: Vec<String>,
    },
    /// Install the native-messaging host manifest for a browser.
    Install {
        /// Which browser.
        #[arg(long, value_enum, default_value = "chromium")]
        browser: forager::install::Browser,
        /// A custom Chromium/Chrome profile directory (as given to --user-data-dir).
        #[arg(long)]
        user_data_dir: Option<PathBuf>,
        /// The extension's id (default: derived from the key in extension/manifest.json).
        #[arg(long)]
        extension_id: Option<String>,
        /// The extension's manifest, to derive the id from.
        #[arg(long)]
        extension_manifest: Option<PathBuf>,
    },
    /// Remove the native-messaging host manifest.
    Uninstall {
        /// Which browser.
        #[arg(long, value_enum, default_value = "chromium")]
        browser: forager::install::Browser,
        /// A custom Chromium/Chrome profile directory.
        #[arg(long)]
        user_data_dir: Option<PathBuf>,
    },
    /// Write the embedded starter model (the demo taxonomy) for the extension.
    StarterModel {
        /// Output file.
        #[arg(long)]
        out: PathBuf,
        /// Train it afresh from the generated web's examples instead (how the shipped
        /// `native-host/starter.fgm` was made).
        #[arg(long)]
        from_generated_web: bool,
    },
    /// Run the distiller (relevance-weighted HITS) on a crawl database; prints the top hubs.
    Distill {
        /// Crawl database.
        db: PathBuf,
        /// How many hubs and authorities to print.
        #[arg(long, default_value_t = 20)]
        top: usize,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Report on a crawl: hubs, authorities, site rating, census, num_tries, acquisition rate,
    /// errors and alarms.
    Report {
        /// Crawl database.
        db: PathBuf,
        /// Rows per list.
        #[arg(long, default_value_t = 20)]
        top: usize,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Also write a self-contained HTML report with charts here.
        #[arg(long)]
        html: Option<PathBuf>,
    },
    /// A crawl's hubs, authorities or fetched pages as CSV or JSON Lines (url, title,
    /// relevance, best leaf, fetched_at, score), to take away.
    Export {
        /// Crawl database.
        db: PathBuf,
        /// Which list.
        #[arg(long, default_value = "hubs", value_parser = choice::<forager::export::What>(&forager::export::What::NAMES))]
        what: forager::export::What,
        /// File format.
        #[arg(long, default_value = "csv", value_parser = choice::<forager::export::Format>(&forager::export::Format::NAMES))]
        format: forager::export::Format,
        /// Write here instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Summary of a running or finished crawl.
    Status {
        /// Crawl database.
        db: PathBuf,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Serve a mini-web as an HTTP forward proxy on loopback (port 0 picks a free port).
    ServeWeb {
        /// Mini-web directory; omitted, the demo's generated web is served.
        web: Option<PathBuf>,
        /// Port on 127.0.0.1.
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Sites of the generated web (when no WEB is given); 40 pages each.
        #[arg(long, default_value_t = forager::synthweb::SynthConfig::default().sites)]
        sites: usize,
    },
    /// Write the demo's generated web to a directory in the mini-web format.
    GenWeb {
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// Plant the apprentice's test pattern (a "Recommended reading" list of relevant links).
        #[arg(long)]
        planted: bool,
        /// Seed of the generated web.
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Off-taxonomy regions (0-4): clusters of sites about none of the topics, densely
        /// linked and popular, with vocabularies that partly overlap the topics'.
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=4))]
        off_taxonomy: u8,
    },
    /// A mini-web with whole taxonomy branches dropped (their topics, examples and tasks), so
    /// their pages are about none of the topics: an open-world testbed.
    PartialWeb {
        /// The mini-web.
        #[arg(long)]
        web: PathBuf,
        /// A branch to drop, e.g. /Business (repeat for more).
        #[arg(long, required = true)]
        drop: Vec<String>,
        /// Output directory (its `sites` links to the original's).
        #[arg(long)]
        out: PathBuf,
    },
    /// Accuracy of the hierarchical classifier and a flat baseline on a mini-web.
    Eval {
        /// Mini-web directory.
        #[arg(long)]
        web: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Also score both classifiers after self-training on the other held-out pages' text
        /// (two-fold cross-fitting: no page is classified by a model that has read it).
        #[arg(long)]
        self_train: bool,
        #[command(flatten)]
        opts: TrainArgs,
    },
}

pub(crate) fn write_model(model: &Model, out: &Path) -> Result<()> {
    let bytes = model.to_bytes();
    forager::model_file::write_atomic(out, &bytes)
        .with_context(|| format!("writing {}", out.display()))?;
    eprintln!(
        "wrote {} ({} bytes, {} topics, {} examples)",
        out.display(),
        bytes.len(),
        model.taxonomy().len(),
        model.example_count()
    );
    Ok(())
}

pub(crate) fn read_model(path: &Path) -> Result<Model> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Model::from_bytes(&bytes).with_context(|| format!("loading {}", path.display()))
}

/// A clap parser that offers `names` (listed in `--help`) and parses the choice with
/// `FromStr`, so the library's enums need not know clap.
pub(crate) fn choice<T>(
    names: &'static [&'static str],
) -> impl clap::builder::TypedValueParser<Value = T>
where
    T: std::str::FromStr<Err = String> + Clone + Send + Sync + 'static,
{
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(names.iter().copied()).try_map(|s| s.parse::<T>())
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// Serves the browser on stdin/stdout, then exits at once: a parse still running on the
/// blocking pool (its crawl already stopped and its database closed) must not hold the exit.
fn serve_native() -> ! {
    let code = match runtime() {
        Ok(rt) => {
            let code = rt.block_on(forager::native::serve_stdio(
                forager::native::HostPaths::from_env(),
            ));
            rt.shutdown_timeout(std::time::Duration::from_secs(1));
            code
        }
        Err(e) => {
            eprintln!("forager: {e:#}");
            1
        }
    };
    std::process::exit(code)
}

fn main() -> Result<()> {
    // Browsers start the host with the caller's origin (Chrome) or manifest path and id
    // (Firefox) as arguments, not a subcommand.
    let first = std::env::args().nth(1).unwrap_or_default();
    if first.starts_with("chrome-extension://") || first.ends_with(".json") {
        serve_native();
    }
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Train {
            web,
            bookmarks,
            proxy,
            out,
            self_train_from,
            opts,
        } => {
            let (text, train) = opts.options();
            let (mut model, skipped) = if let Some(file) = bookmarks {
                let html =
                    std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
                let html = String::from_utf8_lossy(&html);
                let web = web.as_deref().map(MiniWeb::open).transpose()?;
                let fetcher = Fetcher::new(FetchConfig {
                    proxy,
                    // URLs the user named: wherever they are.
                    reach: forager::address::Reach {
                        allow_private: true,
                        ..Default::default()
                    },
                    ..FetchConfig::default()
                })?;
                let source = match &web {
                    Some(w) => training::PageSource::MiniWeb(w),
                    None => training::PageSource::Fetch(&fetcher),
                };
                runtime()?.block_on(training::from_bookmarks(&html, source, text, train))
            } else {
                let dir = web.context("--web or --bookmarks is required")?;
                training::from_miniweb(&MiniWeb::open(&dir)?, text, train)?
            };
            for s in &skipped {
                eprintln!("skipped {}: {}", s.url, s.reason);
            }
            if model.example_count() == 0 {
                bail!("no examples could be read; nothing to train");
            }
            if !self_train_from.is_empty() {
                // One round over all the crawls' pages together.
                let mut t = model.self_trainer(opts.self_train_min_p)?;
                let mut pages = 0usize;
                for db in &self_train_from {
                    let conn = forager::store::Store::open_read_only(db)
                        .with_context(|| format!("opening {}", db.display()))?;
                    forager::store::each_fetched_text(&conn, |url, text| -> Result<()> {
                        pages += 1;
                        t.offer(url, text)?;
                        Ok(())
                    })
                    .with_context(|| format!("self-training on {}", db.display()))?;
                }
                eprintln!(
                    "self-training: {} of {pages} fetched pages became examples",
                    t.added()
                );
            }
            write_model(&model, &out)?;
        }
        Cmd::Classify {
            model,
            good,
            json,
            with_text,
            proxy,
            inputs,
        } => {
            let mut model = read_model(&model)?;
            if !good.is_empty() {
                model.set_good_paths(&good)?;
            }
            let classifier = model.classifier();
            let mut scratch = Scratch::new();
            let fetcher = Fetcher::new(FetchConfig {
                proxy,
                // URLs the user named: wherever they are.
                reach: forager::address::Reach {
                    allow_private: true,
                    ..Default::default()
                },
                ..FetchConfig::default()
            })?;
            let rt = runtime()?;
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            for input in &inputs {
                let html = if input.starts_with("http://") || input.starts_with("https://") {
                    let r = rt.block_on(fetcher.get(input))?;
                    r.text()
                } else {
                    let b = std::fs::read(input).with_context(|| format!("reading {input}"))?;
                    forager::fetch::decode_html(&b, None)
                };
                let text = page_text(&html).text;
                let c = classifier.classify(&text, &mut scratch);
                if json {
                    let mut v = serde_json::to_value(&c)?;
                    v["input"] = input.as_str().into();
                    if with_text {
                        v["tokens"] = serde_json::to_value(classifier.tokenizer().tokens(&text))?;
                        v["text"] = text.into();
                    }
                    writeln!(out, "{v}")?;
                } else {
                    let path: Vec<String> = c
                        .path
                        .iter()
                        .map(|s| format!("{} ({:.3})", s.topic, s.p))
                        .collect();
                    let best = if c.none {
                        format!(
                            "none of your topics (Pr {:.3}; nearest {})",
                            c.background, c.best_leaf
                        )
                    } else {
                        c.best_leaf.clone()
                    };
                    writeln!(
                        out,
                        "{input}\n  best: {}\n  path: {}\n  relevance: {:.4} (ln {:.2}){}",
                        best,
                        path.join(" > "),
                        c.relevance,
                        c.log_relevance,
                        if c.hard_focus { "  [in focus]" } else { "" }
                    )?;
                }
            }
        }
        Cmd::Demo {
            seed,
            web,
            task,
            pages,
            report,
        } => {
            let opts = forager::demo::DemoOptions {
                web,
                task,
                pages,
                seed,
                report,
            };
            runtime()?.block_on(forager::demo::run(&mut std::io::stdout(), &opts))?;
        }
        Cmd::Crawl(args) => cmd_crawl(*args)?,
        Cmd::NotRelevant(args) => commands::cmd_not_relevant(args)?,
        Cmd::Sql { db, query, json } => cmd_sql(&db, &query, json)?,
        Cmd::Status { db, json } => cmd_status(&db, json)?,
        Cmd::Distill { db, top, json } => cmd_distill(&db, top, json)?,
        Cmd::Report {
            db,
            top,
            json,
            html,
        } => {
            let conn = forager::store::Store::open_read_only(&db)?;
            let r = forager::report::build(&conn, top)?;
            if json {
                println!("{}", serde_json::to_string(&r)?);
            } else {
                print!("{}", forager::report::text(&r));
            }
            if let Some(path) = html {
                let title = format!("Forager crawl report: {}", db.display());
                std::fs::write(&path, forager::report::html(&r, &title))
                    .with_context(|| format!("writing {}", path.display()))?;
                eprintln!("wrote {}", path.display());
            }
        }
        Cmd::Export {
            db,
            what,
            format,
            out,
        } => {
            let conn = forager::store::Store::open_read_only(&db)?;
            let text = forager::export::export(&conn, what, format)?;
            match out {
                Some(path) => {
                    forager::model_file::write_atomic(&path, text.as_bytes())
                        .with_context(|| format!("writing {}", path.display()))?;
                    eprintln!("wrote {}", path.display());
                }
                None => print!("{text}"),
            }
        }
        Cmd::Native { caller: _ } => {
            serve_native();
        }
        Cmd::Install {
            browser,
            user_data_dir,
            extension_id,
            extension_manifest,
        } => {
            use forager::install;
            let id = match extension_id {
                Some(id) => {
                    install::check_extension_id(&id).map_err(anyhow::Error::msg)?;
                    id
                }
                None => {
                    let path = match extension_manifest {
                        Some(p) => p,
                        None => {
                            // Beside the repository the binary was built in, else the cwd.
                            let exe = std::env::current_exe()?;
                            let near = exe
                                .ancestors()
                                .nth(3)
                                .map(|r| r.join("extension/manifest.json"));
                            near.filter(|p| p.exists())
                                .unwrap_or_else(|| PathBuf::from("extension/manifest.json"))
                        }
                    };
                    install::extension_id_from_manifest(&path).map_err(anyhow::Error::msg)?
                }
            };
            let binary = std::env::current_exe()?.canonicalize()?;
            let dir = install::manifest_dir(browser, user_data_dir.as_deref())
                .map_err(anyhow::Error::msg)?;
            std::fs::create_dir_all(&dir)?;
            let text = install::manifest(browser, &binary, &id).map_err(anyhow::Error::msg)?;
            let file = install::write_manifest(&dir, &text)
                .with_context(|| format!("writing the manifest into {}", dir.display()))?;
            println!("{}", file.display());
            eprintln!(
                "installed {} for extension {id} -> {}",
                install::HOST_NAME,
                binary.display()
            );
        }
        Cmd::Uninstall {
            browser,
            user_data_dir,
        } => {
            let dir = forager::install::manifest_dir(browser, user_data_dir.as_deref())
                .map_err(anyhow::Error::msg)?;
            let file = dir.join(format!("{}.json", forager::install::HOST_NAME));
            match std::fs::remove_file(&file) {
                Ok(()) => eprintln!("removed {}", file.display()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    eprintln!("{} was not installed", file.display())
                }
                Err(e) => return Err(e.into()),
            }
        }
        Cmd::StarterModel {
            out,
            from_generated_web,
        } => {
            let model = if from_generated_web {
                let web = forager::synthweb::SynthWeb::generate(&Default::default()).web;
                training::from_miniweb(&web, TextOptions::default(), TrainOptions::default())?.0
            } else {
                forager::native::starter_model()
            };
            write_model(&model, &out)?
        }
        Cmd::Bench {
            web,
            task,
            strategies,
            pages,
            out,
            seed,
            no_robustness,
            retrain_every,
            apprentice_warmup,
            no_references,
        } => {
            let web = MiniWeb::open(&web)?;
            let task = web.task(&task)?.clone();
            let list = strategies
                .split(',')
                .map(|s| {
                    forager::evaluation::strategy(s.trim()).with_context(|| {
                        format!(
                            "unknown strategy {s:?} (know: {})",
                            forager::evaluation::STRATEGIES.join(", ")
                        )
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let (mut model, _) =
                training::from_miniweb(&web, TextOptions::default(), TrainOptions::default())?;
            runtime()?.block_on(async {
                let server = forager::serve::start(web.clone(), ([127, 0, 0, 1], 0).into()).await?;
                let cfg = forager::evaluation::BenchConfig {
                    pages,
                    seed,
                    robustness: !no_robustness,
                    out: out.clone(),
                    proxy: server.proxy_url(),
                    retrain_every,
                    warmup: apprentice_warmup,
                    references: !no_references,
                };
                let results =
                    forager::evaluation::run(&web, &task, &list, &mut model, &cfg).await?;
                server.shutdown().await;
                print_bench(&results);
                eprintln!("wrote {}", out.join("summary.html").display());
                anyhow::Ok(())
            })?;
        }
        Cmd::ServeWeb { web, port, sites } => {
            let web = match web {
                Some(dir) => MiniWeb::open(&dir)?,
                None => {
                    let cfg = forager::synthweb::SynthConfig {
                        sites,
                        ..Default::default()
                    };
                    forager::synthweb::SynthWeb::generate(&cfg).web
                }
            };
            runtime()?.block_on(async {
                let server =
                    forager::serve::start(web, std::net::SocketAddr::from(([127, 0, 0, 1], port)))
                        .await?;
                println!("{}", server.addr.port());
                eprintln!("serving on {} (proxy); Ctrl-C stops", server.proxy_url());
                tokio::signal::ctrl_c().await?;
                server.shutdown().await;
                anyhow::Ok(())
            })?;
        }
        Cmd::PartialWeb { web, drop, out } => {
            let r = forager::partial::write_partial(&web, &drop, &out)?;
            eprintln!(
                "wrote {}: topics {} kept, {} dropped; examples {} kept, {} dropped; {} labelled \
                 pages now off-taxonomy; tasks {} kept, {} dropped",
                out.display(),
                r.topics.0,
                r.topics.1,
                r.examples.0,
                r.examples.1,
                r.unlabelled,
                r.tasks.0,
                r.tasks.1
            );
        }
        Cmd::GenWeb {
            out,
            seed,
            planted,
            off_taxonomy,
        } => {
            let cfg = forager::synthweb::SynthConfig {
                seed,
                planted,
                off_taxonomy: off_taxonomy.into(),
                ..Default::default()
            };
            let web = forager::synthweb::SynthWeb::generate(&cfg);
            web.write_to(&out)
                .with_context(|| format!("writing {}", out.display()))?;
            eprintln!("wrote {} files under {}", web.files.len(), out.display());
        }
        Cmd::Eval {
            web,
            json,
            self_train,
            opts,
        } => {
            let web = MiniWeb::open(&web)?;
            let (text, train) = opts.options();
            let t0 = std::time::Instant::now();
            let (mut hier, _) = training::from_miniweb(&web, text, train)?;
            let train_ms = t0.elapsed().as_secs_f64() * 1e3;
            let pages = accuracy::held_out(&web);
            let mut flat = accuracy::flat_from_miniweb(&web, &hier);
            let mut rows = vec![
                accuracy::score("hierarchical", &mut hier, &pages, str::to_owned),
                accuracy::score("flat", &mut flat, &pages, accuracy::unflatten),
            ];
            if self_train {
                let p = opts.self_train_min_p;
                rows.push(accuracy::score_self_trained(
                    "hier+self",
                    &hier,
                    &pages,
                    str::to_owned,
                    p,
                )?);
                rows.push(accuracy::score_self_trained(
                    "flat+self",
                    &flat,
                    &pages,
                    accuracy::unflatten,
                    p,
                )?);
            }
            let size = hier.to_bytes().len();
            if json {
                println!(
                    "{}",
                    serde_json::json!({"rows": rows, "model_bytes": size, "train_ms": train_ms})
                );
            } else {
                println!(
                    "{:<14} {:>6} {:>9} {:>9} {:>9} {:>9}",
                    "classifier", "pages", "leaf acc", "top acc", "micro-F1", "features"
                );
                for r in &rows {
                    println!(
                        "{:<14} {:>6} {:>9.3} {:>9.3} {:>9.3} {:>9}",
                        r.name, r.pages, r.leaf_accuracy, r.top_accuracy, r.micro_f1, r.features
                    );
                }
                println!("model: {size} bytes; trained in {train_ms:.0} ms");
            }
        }
    }
    Ok(())
}

/// Prints `forager bench`'s table, then each crawl's harvest as a share of the simulated
/// oracle's at 500 and 1000 fetches (the issues' yardstick).
fn print_bench(results: &[forager::evaluation::StrategyResult]) {
    println!(
        "{:<22} {:>6} {:>8} {:>8} {:>6} {:>8} {:>6} {:>7} {:>8} {:>8}",
        "strategy",
        "pages",
        "harvest",
        "by clf",
        "loss",
        "recall",
        "sites",
        "seconds",
        "prec@R.5",
        "no-topic"
    );
    for r in results {
        if let Some(c) = r.checkpoints.last() {
            println!(
                "{:<22} {:>6} {:>8.3} {:>8.3} {:>6} {:>8.3} {:>6} {:>7.1} {:>8.3} {:>8.3}",
                r.strategy,
                c.n,
                c.harvest,
                c.harvest_classifier,
                c.loss,
                c.target_recall,
                c.sites,
                r.seconds,
                c.precision,
                c.no_topic
            );
        }
    }
    let harvest_at = |r: &forager::evaluation::StrategyResult, n: usize| {
        r.checkpoints.iter().find(|c| c.n == n).map(|c| c.harvest)
    };
    let Some(oracle) = results.iter().find(|r| r.strategy == "sim:oracle") else {
        return;
    };
    println!("\nHarvest as a share of the oracle's:");
    println!("{:<22} {:>18} {:>18}", "strategy", "at 500", "at 1000");
    for r in results.iter().filter(|r| r.strategy != "sim:oracle") {
        let cell = |n| match (harvest_at(r, n), harvest_at(oracle, n)) {
            (Some(h), Some(o)) if o > 0.0 => format!("{h:.3}/{o:.3}={:.2}", h / o),
            _ => "-".to_owned(),
        };
        println!("{:<22} {:>18} {:>18}", r.strategy, cell(500), cell(1000));
    }
}
