//! The `forager` command: a thin layer that parses arguments and reports errors once.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
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
        /// soft+distiller, soft+apprentice).
        #[arg(long, default_value = "bfs,soft,soft+apprentice")]
        strategies: String,
        /// Pages per crawl.
        #[arg(long, default_value_t = 1000)]
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
    },
    /// Accuracy of the hierarchical classifier and a flat baseline on a mini-web.
    Eval {
        /// Mini-web directory.
        #[arg(long)]
        web: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        opts: TrainArgs,
    },
}

fn write_model(model: &Model, out: &Path) -> Result<()> {
    let bytes = model.to_bytes();
    let tmp = out.with_extension("tmp");
    std::fs::write(&tmp, &bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, out).with_context(|| format!("writing {}", out.display()))?;
    eprintln!(
        "wrote {} ({} bytes, {} topics, {} examples)",
        out.display(),
        bytes.len(),
        model.taxonomy().len(),
        model.example_count()
    );
    Ok(())
}

fn read_model(path: &Path) -> Result<Model> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Model::from_bytes(&bytes).with_context(|| format!("loading {}", path.display()))
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

fn main() -> Result<()> {
    // Browsers start the host with the caller's origin (Chrome) or manifest path and id
    // (Firefox) as arguments, not a subcommand.
    let first = std::env::args().nth(1).unwrap_or_default();
    if first.starts_with("chrome-extension://") || first.ends_with(".json") {
        let code = runtime()?.block_on(forager::native::serve_stdio(
            forager::native::HostPaths::from_env(),
        ));
        std::process::exit(code);
    }
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Train {
            web,
            bookmarks,
            proxy,
            out,
            opts,
        } => {
            let (text, train) = opts.options();
            let (model, skipped) = if let Some(file) = bookmarks {
                let html =
                    std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
                let html = String::from_utf8_lossy(&html);
                let web = web.as_deref().map(MiniWeb::open).transpose()?;
                let fetcher = Fetcher::new(FetchConfig {
                    proxy,
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
                    writeln!(
                        out,
                        "{input}\n  best: {}\n  path: {}\n  relevance: {:.4} (ln {:.2}){}",
                        c.best_leaf,
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
        Cmd::Native { caller: _ } => {
            let code = runtime()?.block_on(forager::native::serve_stdio(
                forager::native::HostPaths::from_env(),
            ));
            std::process::exit(code);
        }
        Cmd::Install {
            browser,
            user_data_dir,
            extension_id,
            extension_manifest,
        } => {
            use forager::install;
            let id = match extension_id {
                Some(id) => id,
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
            let file = dir.join(format!("{}.json", install::HOST_NAME));
            std::fs::write(
                &file,
                install::manifest(browser, &binary, &id).map_err(anyhow::Error::msg)?,
            )?;
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
        Cmd::StarterModel { out } => write_model(&forager::native::starter_model(), &out)?,
        Cmd::Bench {
            web,
            task,
            strategies,
            pages,
            out,
            seed,
            no_robustness,
            retrain_every,
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
                };
                let results =
                    forager::evaluation::run(&web, &task, &list, &mut model, &cfg).await?;
                server.shutdown().await;
                println!(
                    "{:<16} {:>6} {:>8} {:>8} {:>6} {:>8} {:>6} {:>7}",
                    "strategy", "pages", "harvest", "by clf", "loss", "recall", "sites", "seconds"
                );
                for r in &results {
                    if let Some(c) = r.checkpoints.last() {
                        println!(
                            "{:<16} {:>6} {:>8.3} {:>8.3} {:>6} {:>8.3} {:>6} {:>7.1}",
                            r.strategy,
                            c.n,
                            c.harvest,
                            c.harvest_classifier,
                            c.loss,
                            c.target_recall,
                            c.sites,
                            r.seconds
                        );
                    }
                }
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
        Cmd::GenWeb { out, seed, planted } => {
            let cfg = forager::synthweb::SynthConfig {
                seed,
                planted,
                ..Default::default()
            };
            let web = forager::synthweb::SynthWeb::generate(&cfg);
            web.write_to(&out)
                .with_context(|| format!("writing {}", out.display()))?;
            eprintln!("wrote {} files under {}", web.files.len(), out.display());
        }
        Cmd::Eval { web, json, opts } => {
            let web = MiniWeb::open(&web)?;
            let (text, train) = opts.options();
            let t0 = std::time::Instant::now();
            let (mut hier, _) = training::from_miniweb(&web, text, train)?;
            let train_ms = t0.elapsed().as_secs_f64() * 1e3;
            let pages = accuracy::held_out(&web);
            let mut flat = accuracy::flat_from_miniweb(&web, &hier);
            let rows = vec![
                accuracy::score("hierarchical", &mut hier, &pages, str::to_owned),
                accuracy::score("flat", &mut flat, &pages, accuracy::unflatten),
            ];
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

/// Arguments of `forager crawl`.
#[derive(clap::Args)]
struct CrawlArgs {
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
    #[arg(long, value_enum, default_value = "soft")]
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
    /// Append fetched URLs here, one per line, in fetch order.
    #[arg(long)]
    fetch_log: Option<PathBuf>,
    /// Fetches in flight.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Seconds between requests to one host (default 1; 0 with --web, which is loopback).
    #[arg(long)]
    delay: Option<f64>,
    /// HTTP proxy.
    #[arg(long)]
    proxy: Option<String>,
    /// Guide the crawl with the apprentice, learning online.
    #[arg(long)]
    apprentice: bool,
    /// Pages between apprentice retrains.
    #[arg(long, default_value_t = 200)]
    retrain_every: u64,
    /// The apprentice's DOM offset window.
    #[arg(long, default_value_t = forager_classifier::apprentice::DEFAULT_D_MAX)]
    d_max: usize,
    /// Start the apprentice trained on a previous crawl database (implies --apprentice).
    #[arg(long)]
    apprentice_from: Option<PathBuf>,
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
    /// Maintenance mode: share of fetches spent revisiting fetched pages (best hubs first).
    #[arg(long, default_value_t = 0.0)]
    revisit_share: f64,
    /// Seconds before a fetched page may be revisited.
    #[arg(long, default_value_t = 3600.0)]
    revisit_after: f64,
    /// Seconds allowed for one request, body included.
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
    /// Reproducible order: one fetch at a time, each recorded before the next checkout.
    #[arg(long)]
    deterministic: bool,
    /// Print progress as JSON lines on stdout.
    #[arg(long)]
    json: bool,
}

fn cmd_crawl(a: CrawlArgs) -> Result<()> {
    use forager::store::{NewUrl, Store};
    let mut store = Store::open(&a.db)?;
    let web = a.web.as_deref().map(MiniWeb::open).transpose()?;
    let task = match (&web, &a.task) {
        (Some(w), Some(t)) => Some(w.task(t)?.clone()),
        (None, Some(_)) => bail!("--task needs --web"),
        _ => None,
    };
    // The model: given, trained from the web, or the one stored by an earlier run.
    let mut model = if let Some(p) = &a.model {
        read_model(p)?
    } else if let Some(w) = &web {
        training::from_miniweb(w, TextOptions::default(), TrainOptions::default())?.0
    } else if let Some(rusqlite::types::Value::Blob(b)) = store.meta("model")? {
        Model::from_bytes(&b)?
    } else {
        bail!("no model: give --model or --web, or resume a database that has one");
    };
    let mut good = a.good.clone();
    if let Some(t) = &task {
        good.extend(t.good.iter().cloned());
    }
    if !good.is_empty() {
        model.set_good_paths(&good)?;
    }
    store.save_taxonomy(&model)?;
    let mut seeds: Vec<String> = a.seed.clone();
    if let Some(t) = &task {
        seeds.extend(t.seeds.iter().cloned());
    }
    let seeds: Vec<NewUrl> = seeds
        .iter()
        .filter_map(|s| forager::canon::parse(s).ok())
        .map(|u| NewUrl::seed(&u))
        .collect();
    store.add_seeds(&seeds)?;
    let classifier = model.classifier();
    let query = std::sync::Arc::new(forager::crawl::Query::from_model(&model));
    let apprentice = if a.apprentice || a.apprentice_from.is_some() {
        let initial = match &a.apprentice_from {
            Some(p) => {
                let mut ap = forager_classifier::apprentice::Apprentice::new();
                for (f, high) in Store::open(p)?.all_instances()? {
                    ap.add(&f, high);
                }
                eprintln!(
                    "apprentice trained offline on {:?} instances [low, high]",
                    ap.instances()
                );
                Some(ap)
            }
            None => None,
        };
        Some(forager::crawl::ApprenticeConfig {
            retrain_every: a.retrain_every.max(1),
            d_max: a.d_max,
            initial,
        })
    } else {
        None
    };
    let rt = runtime()?;
    let json = a.json;
    rt.block_on(async move {
        let server = match web {
            Some(w) => Some(forager::serve::start(w, ([127, 0, 0, 1], 0).into()).await?),
            None => None,
        };
        let proxy = a
            .proxy
            .clone()
            .or_else(|| server.as_ref().map(|s| s.proxy_url()));
        let delay = a.delay.unwrap_or(if server.is_some() { 0.0 } else { 1.0 });
        let config = forager::crawl::CrawlConfig {
            mode: a.mode,
            max_pages: a.pages,
            max_time: a.seconds.map(std::time::Duration::from_secs_f64),
            concurrency: a.concurrency.max(1),
            delay: std::time::Duration::from_secs_f64(delay.max(0.0)),
            fetch: FetchConfig {
                proxy,
                total_timeout: std::time::Duration::from_secs_f64(a.timeout.clamp(0.1, 3600.0)),
                connect_timeout: std::time::Duration::from_secs_f64(a.timeout.clamp(0.1, 10.0)),
                ..FetchConfig::default()
            },
            fetch_log: a.fetch_log.clone(),
            max_pages_per_host: a.max_pages_per_host,
            apprentice,
            distill_every: a.distill_every.or(a.hub_feedback.map(|_| 500)),
            hub_feedback: a.hub_feedback,
            query,
            deterministic: a.deterministic,
            revisit_share: a.revisit_share,
            revisit_after: std::time::Duration::from_secs_f64(a.revisit_after.max(0.0)),
            ..Default::default()
        };
        let stop = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        let bar = match a.pages {
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
        let (reason, p) = forager::crawl::run(store, classifier, config, stop, |p| {
            if json {
                println!("{}", serde_json::to_string(p).unwrap_or_default());
            } else {
                bar.set_position(p.fetched);
                bar.set_message(format!(
                    "{:.0} pages/s  frontier {}  relevance(last 100) {:.3}  errors {}",
                    p.pages_per_sec,
                    p.frontier,
                    p.recent_relevance,
                    p.errors.values().sum::<u64>()
                ));
            }
        })
        .await?;
        bar.finish_and_clear();
        let rss = forager::crawl::peak_rss().map_or("?".into(), |b| format!("{} MB", b >> 20));
        eprintln!(
            "stopped: {reason:?}; fetched {} pages; frontier {}; peak RSS {rss}; errors {:?}",
            p.fetched, p.frontier, p.errors
        );
        if let Some(s) = server {
            s.shutdown().await;
        }
        anyhow::Ok(())
    })
}

fn cmd_sql(db: &Path, query: &str, json: bool) -> Result<()> {
    let conn = forager::store::Store::open_read_only(db)?;
    let mut st = conn.prepare(query)?;
    let names: Vec<String> = st.column_names().map(|s| s.to_string()).collect();
    let mut rows = st.query([])?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if !json {
        writeln!(out, "{}", names.join("\t"))?;
    }
    while let Some(row) = rows.next()? {
        let mut vals = Vec::new();
        for i in 0..names.len() {
            use rusqlite::types::ValueRef;
            vals.push(match row.get_ref(i)? {
                ValueRef::Null => serde_json::Value::Null,
                ValueRef::Integer(v) => v.into(),
                ValueRef::Real(v) => v.into(),
                ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned().into(),
                ValueRef::Blob(b) => format!("<{} bytes>", b.len()).into(),
            });
        }
        if json {
            let obj: serde_json::Map<String, serde_json::Value> =
                names.iter().cloned().zip(vals).collect();
            writeln!(out, "{}", serde_json::Value::Object(obj))?;
        } else {
            let cells: Vec<String> = vals
                .iter()
                .map(|v| match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            writeln!(out, "{}", cells.join("\t"))?;
        }
    }
    Ok(())
}

fn cmd_status(db: &Path, json: bool) -> Result<()> {
    let conn = forager::store::Store::open_read_only(db)?;
    let count = |sql: &str| -> Result<i64> { Ok(conn.query_row(sql, [], |r| r.get(0))?) };
    let fetched = count("SELECT count(*) FROM doc WHERE status = 2")?;
    let frontier = count("SELECT count(*) FROM doc WHERE status = 0")?;
    let failed = count("SELECT count(*) FROM doc WHERE status IN (3, 4)")?;
    let relevant = count("SELECT count(*) FROM doc WHERE status = 2 AND relevance >= 0.5")?;
    let mean_recent: f64 = conn.query_row(
        "SELECT coalesce(avg(relevance), 0) FROM (SELECT relevance FROM doc WHERE fetch_seq IS NOT NULL ORDER BY fetch_seq DESC LIMIT 100)",
        [],
        |r| r.get(0),
    )?;
    let mut errors = serde_json::Map::new();
    {
        let mut st = conn.prepare(
            "SELECT error, count(*) FROM doc WHERE status IN (3, 4) GROUP BY error ORDER BY 2 DESC",
        )?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let k: Option<String> = r.get(0)?;
            let n: i64 = r.get(1)?;
            errors.insert(k.unwrap_or_default(), n.into());
        }
    }
    let relevance = forager::report::relevance_in_fetch_order(&conn)?;
    let alarms = forager::report::alarms_of(&conn, &relevance, frontier)?;
    let v = serde_json::json!({
        "alarms": alarms,
        "fetched": fetched, "frontier": frontier, "failed_or_excluded": failed,
        "relevant_fetched": relevant, "recent_relevance": mean_recent, "errors": errors,
    });
    if json {
        println!("{v}");
    } else {
        println!("fetched {fetched}  frontier {frontier}  failed/excluded {failed}");
        println!("relevant (R >= 0.5) {relevant}   mean relevance of last 100: {mean_recent:.3}");
        for a in &alarms {
            println!("ALARM {}: {}", a.kind, a.detail);
        }
        for (k, n) in &errors {
            println!("  {k}: {n}");
        }
    }
    Ok(())
}

fn cmd_distill(db: &Path, top: usize, json: bool) -> Result<()> {
    let mut store = forager::store::Store::open(db)?;
    let (edges, rel) = store.graph()?;
    let t = std::time::Instant::now();
    let scores = forager::distiller::distill(&edges, &rel, &Default::default());
    let ms = t.elapsed().as_secs_f64() * 1e3;
    store.save_distillation(&scores)?;
    let url_of = |oid: i64| -> Result<String> {
        Ok(store
            .conn()
            .query_row("SELECT url FROM doc WHERE oid = ?1", [oid], |r| r.get(0))?)
    };
    let list = |v: &[(i64, f64)]| -> Result<Vec<serde_json::Value>> {
        v.iter()
            .take(top)
            .map(|&(oid, score)| Ok(serde_json::json!({"url": url_of(oid)?, "score": score})))
            .collect()
    };
    let (hubs, auths) = (list(&scores.hubs)?, list(&scores.authorities)?);
    if json {
        println!(
            "{}",
            serde_json::json!({"hubs": hubs, "authorities": auths, "edges": edges.len(),
                "iterations": scores.iterations, "ms": ms})
        );
    } else {
        println!(
            "distilled {} cross-site edges in {ms:.1} ms ({} iterations)",
            edges.len(),
            scores.iterations
        );
        for (name, l) in [("hubs", &hubs), ("authorities", &auths)] {
            println!("top {name}:");
            for v in l {
                println!(
                    "  {:.4}  {}",
                    v["score"].as_f64().unwrap_or(0.0),
                    v["url"].as_str().unwrap_or("")
                );
            }
        }
    }
    Ok(())
}
