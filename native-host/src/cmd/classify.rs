//! `forager classify`: classify HTML files or URLs; prints the best path and the relevance to the good topics.

use crate::{read_model, runtime};
use anyhow::{Context, Result};
use forager::fetch::{FetchConfig, Fetcher};
use forager::parse::page_text;
use forager_classifier::Scratch;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `forager classify`.
#[derive(clap::Args)]
pub(crate) struct Args {
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
}

/// Runs `forager classify`.
pub(crate) fn run(args: Args) -> Result<()> {
    let Args {
        model,
        good,
        json,
        with_text,
        proxy,
        inputs,
    } = args;
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
        // A page the user marked (by this URL or file name) is none of the topics, as in a crawl.
        let c = if model.is_marked_not_relevant(input) {
            c.marked_not_relevant()
        } else {
            c
        };
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
    Ok(())
}
