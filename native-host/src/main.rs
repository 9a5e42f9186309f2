//! The `forager` command: a thin layer that parses arguments and reports errors once.

mod cmd;
mod trace;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use forager_classifier::Model;
use std::path::Path;

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

#[derive(Subcommand)]
enum Cmd {
    /// Train a model from a mini-web's examples or a bookmarks export.
    Train(cmd::train::Args),
    /// Classify HTML files or URLs; prints the best path and the relevance to the good topics.
    Classify(cmd::classify::Args),
    /// Score the links of a saved page as the browser's "highlight promising links" does: with
    /// a crawl's apprentice (`--db`), else by the words around each link. JSON.
    Links(cmd::links::Args),
    /// How well "highlight promising links" picks links on mini-web tasks: P@5 and AUC of the
    /// apprentice, the words around each link, and the parent's relevance.
    HighlightEval(cmd::highlight_eval::Args),
    /// The main job on the embedded default: generate a web, learn its topics, show the results.
    Demo(cmd::demo::Args),
    /// Crawl: from a mini-web task (trains, serves and seeds itself) or resume an existing database.
    Crawl(Box<cmd::crawl::Args>),
    /// Mark pages as about none of your topics (negative feedback): each becomes an example of
    /// the model's background, so pages like it get low relevance. `--undo` removes marks.
    NotRelevant(cmd::not_relevant::Args),
    /// Run read-only SQL on a crawl database (tables doc, link, server, taxonomy, example;
    /// also attached as `arc`, so `arc.doc` works as in the paper).
    Sql(cmd::sql::Args),
    /// Compare crawl strategies on a mini-web task: fetch order, harvest, loss, recall,
    /// robustness and hub distance per strategy, plus summary.json and summary.html.
    Bench(cmd::bench::Args),
    /// The browser's native-messaging endpoint (the browser starts it; see extension/PROTOCOL.md).
    Native {
        /// What the browser passes: the calling extension's origin (Chrome) or manifest (Firefox).
        caller: Vec<String>,
    },
    /// Install the native-messaging host manifest for a browser.
    Install(cmd::install::Args),
    /// Remove the native-messaging host manifest.
    Uninstall(cmd::uninstall::Args),
    /// Write the embedded starter model (the demo taxonomy) for the extension.
    StarterModel(cmd::starter_model::Args),
    /// Run the distiller (relevance-weighted HITS) on a crawl database; prints the top hubs.
    Distill(cmd::distill::Args),
    /// Report on a crawl: hubs, authorities, site rating, census, num_tries, acquisition rate,
    /// errors and alarms.
    Report(cmd::report::Args),
    /// A crawl's hubs, authorities or fetched pages as CSV or JSON Lines (url, title,
    /// relevance, best leaf, fetched_at, score), to take away.
    Export(cmd::export::Args),
    /// Summary of a running or finished crawl.
    Status(cmd::status::Args),
    /// Join a crawl started by `forager crawl`: lease hosts, fetch and record their pages.
    Worker(cmd::worker::Args),
    /// Move a crawl between back-ends: `db copy FROM TO` copies a whole crawl from a SQLite
    /// file to a `postgres://` server or back.
    Db(cmd::db::Args),
    /// Find a crawl's pages by their words: title, snippet with the matched words marked, R,
    /// best leaf, fetched time; best first (BM25 combined with R).
    Search(cmd::search::Args),
    /// Write an Atom feed of what is new in a crawl: relevant pages first fetched, and pages
    /// changed on a revisit, since a time.
    Feed(cmd::feed::Args),
    /// Serve a mini-web as an HTTP forward proxy on loopback (port 0 picks a free port).
    ServeWeb(cmd::serve_web::Args),
    /// Write the demo's generated web to a directory in the mini-web format.
    GenWeb(cmd::gen_web::Args),
    /// A mini-web with whole taxonomy branches dropped (their topics, examples and tasks), so
    /// their pages are about none of the topics: an open-world testbed.
    PartialWeb(cmd::partial_web::Args),
    /// Accuracy of the hierarchical classifier and a flat baseline on a mini-web.
    Eval(cmd::eval::Args),
}

/// Writes a model to the output `out` the user named (a model there only with `force`).
pub(crate) fn write_model(model: &Model, out: &Path, force: bool) -> Result<()> {
    let bytes = model.to_bytes_within_budget()?;
    forager::output::write(out, &bytes, forager::output::Policy::model(force))?;
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
    let max = forager_classifier::codec::MAX_MODEL_BYTES;
    let bytes = forager::input::read_regular(path, max)
        .with_context(|| format!("reading {}", path.display()))?;
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
    let paths = match forager::native::HostPaths::from_env() {
        Ok(p) => p,
        Err(why) => {
            eprintln!("forager: {why}");
            std::process::exit(1)
        }
    };
    let code = match runtime() {
        Ok(rt) => {
            let code = rt.block_on(forager::native::serve_stdio(paths));
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
    trace::init(matches!(&cli.cmd, Cmd::Crawl(a) if a.trace));
    match cli.cmd {
        Cmd::Train(a) => cmd::train::run(a),
        Cmd::Classify(a) => cmd::classify::run(a),
        Cmd::Links(a) => cmd::links::run(a),
        Cmd::HighlightEval(a) => cmd::highlight_eval::run(a),
        Cmd::Demo(a) => cmd::demo::run(a),
        Cmd::Crawl(a) => cmd::crawl::run(*a),
        Cmd::NotRelevant(a) => cmd::not_relevant::run(a),
        Cmd::Sql(a) => cmd::sql::run(a),
        Cmd::Bench(a) => cmd::bench::run(a),
        Cmd::Native { caller: _ } => serve_native(),
        Cmd::Install(a) => cmd::install::run(a),
        Cmd::Uninstall(a) => cmd::uninstall::run(a),
        Cmd::StarterModel(a) => cmd::starter_model::run(a),
        Cmd::Distill(a) => cmd::distill::run(a),
        Cmd::Report(a) => cmd::report::run(a),
        Cmd::Export(a) => cmd::export::run(a),
        Cmd::Status(a) => cmd::status::run(a),
        Cmd::Worker(a) => cmd::worker::run(a),
        Cmd::Db(a) => cmd::db::run(a),
        Cmd::Search(a) => cmd::search::run(a),
        Cmd::Feed(a) => cmd::feed::run(a),
        Cmd::ServeWeb(a) => cmd::serve_web::run(a),
        Cmd::GenWeb(a) => cmd::gen_web::run(a),
        Cmd::PartialWeb(a) => cmd::partial_web::run(a),
        Cmd::Eval(a) => cmd::eval::run(a),
    }
}
