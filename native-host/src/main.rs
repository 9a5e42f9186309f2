//! The `forager` command: a thin layer that parses arguments and reports errors once.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use forager::fetch::{FetchConfig, Fetcher};
use forager::miniweb::MiniWeb;
use forager::parse::page_text;
use forager::{eval, training};
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
    },
    /// Serve a mini-web as an HTTP forward proxy on loopback (port 0 picks a free port).
    ServeWeb {
        /// Mini-web directory; omitted, the demo's generated web is served.
        web: Option<PathBuf>,
        /// Port on 127.0.0.1.
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
    /// Write the demo's generated web to a directory in the mini-web format.
    GenWeb {
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
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
        Cmd::Demo { seed } => {
            let cfg = forager::synthweb::SynthConfig {
                seed,
                ..Default::default()
            };
            forager::demo::run(&mut std::io::stdout().lock(), &cfg)?;
        }
        Cmd::ServeWeb { web, port } => {
            let web = match web {
                Some(dir) => MiniWeb::open(&dir)?,
                None => forager::synthweb::SynthWeb::generate(&Default::default()).web,
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
        Cmd::GenWeb { out, seed } => {
            let cfg = forager::synthweb::SynthConfig {
                seed,
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
            let pages = eval::held_out(&web);
            let mut flat = eval::flat_from_miniweb(&web, &hier);
            let rows = vec![
                eval::score("hierarchical", &mut hier, &pages, str::to_owned),
                eval::score("flat", &mut flat, &pages, eval::unflatten),
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
