//! `forager gen-web`: write the demo's generated web to a directory in the mini-web format.

use anyhow::{Context, Result};
use std::path::PathBuf;

/// Arguments of `forager gen-web`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Output directory.
    #[arg(long)]
    out: PathBuf,
    /// Plant the apprentice's test pattern (a "Recommended reading" list of relevant links).
    #[arg(long)]
    planted: bool,
    /// Plant a natural neighbour: Astronomy pages' off-topic links lead mostly to Biology.
    #[arg(long)]
    neighbour: bool,
    /// Seed of the generated web.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Off-taxonomy regions (0-4): clusters of sites about none of the topics, densely
    /// linked and popular, with vocabularies that partly overlap the topics'.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=4))]
    off_taxonomy: u8,
    /// Write into an existing directory that is not empty and not one Forager wrote (never
    /// a link or a file).
    #[arg(long)]
    force: bool,
    /// A dominant, tightly-knit community of generic pages (all linking to each other, linked
    /// from everywhere) that captures plain HITS.
    #[arg(long)]
    community: bool,
    /// Topical hubs link mostly within their own site; writes hubs.tsv.
    #[arg(long)]
    site_hubs: bool,
    /// Relevant regions reachable only through pages that look irrelevant (link evidence
    /// finds them, page relevance does not).
    #[arg(long)]
    hidden: bool,
}

/// Runs `forager gen-web`.
pub(crate) fn run(args: Args) -> Result<()> {
    let Args {
        out,
        seed,
        planted,
        neighbour,
        off_taxonomy,
        force,
        community,
        site_hubs,
        hidden,
    } = args;
    forager::output::dir(&out, force)?;
    let cfg = forager::synthweb::SynthConfig {
        seed,
        planted,
        neighbour,
        off_taxonomy: off_taxonomy.into(),
        community,
        site_hubs,
        hidden,
        ..Default::default()
    };
    let web = forager::synthweb::SynthWeb::generate(&cfg);
    web.write_to(&out)
        .with_context(|| format!("writing {}", out.display()))?;
    eprintln!("wrote {} files under {}", web.files.len(), out.display());
    Ok(())
}
