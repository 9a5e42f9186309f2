//! `forager serve-web`: serve a mini-web as an HTTP forward proxy on loopback (port 0 picks a free port).

use crate::runtime;
use anyhow::Result;
use forager::miniweb::MiniWeb;
use std::path::PathBuf;

/// Arguments of `forager serve-web`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Mini-web directory; omitted, the demo's generated web is served.
    web: Option<PathBuf>,
    /// Port on 127.0.0.1.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Sites of the generated web (when no WEB is given); 40 pages each.
    #[arg(long, default_value_t = forager::synthweb::SynthConfig::default().sites)]
    sites: usize,
    /// Serve a generated web made on request from each URL, needing no memory or disk for its
    /// pages (`<topic><k>.gen.test`, --sites sites per topic): the million-page bench's web.
    #[arg(long, conflicts_with = "web")]
    procedural: bool,
    /// Seed of the procedural web.
    #[arg(long, default_value_t = 42, requires = "procedural")]
    seed: u64,
    /// Delay each response MIN..MAX milliseconds (the same for a URL every time), like a
    /// distant server: `--latency 50..100`.
    #[arg(long, value_name = "MIN..MAX")]
    latency: Option<forager::serve::Latency>,
}

/// Runs `forager serve-web`.
pub(crate) fn run(args: Args) -> Result<()> {
    let Args {
        web,
        port,
        sites,
        procedural,
        seed,
        latency,
    } = args;
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    if procedural {
        let web = forager::synthweb::procedural::ProceduralWeb::new(seed, sites);
        return runtime()?.block_on(async {
            serve_until_ctrl_c(forager::serve::start_procedural(web, addr).await?).await
        });
    }
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
        serve_until_ctrl_c(forager::serve::start_with(web, addr, latency).await?).await
    })
}

/// Prints the port, serves until Ctrl-C, then stops.
async fn serve_until_ctrl_c(server: forager::serve::Server) -> Result<()> {
    println!("{}", server.addr.port());
    eprintln!("serving on {} (proxy); Ctrl-C stops", server.proxy_url());
    tokio::signal::ctrl_c().await?;
    server.shutdown().await;
    Ok(())
}
