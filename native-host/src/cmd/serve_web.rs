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
}

/// Runs `forager serve-web`.
pub(crate) fn run(args: Args) -> Result<()> {
    let Args { web, port, sites } = args;
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
            forager::serve::start(web, std::net::SocketAddr::from(([127, 0, 0, 1], port))).await?;
        println!("{}", server.addr.port());
        eprintln!("serving on {} (proxy); Ctrl-C stops", server.proxy_url());
        tokio::signal::ctrl_c().await?;
        server.shutdown().await;
        anyhow::Ok(())
    })?;
    Ok(())
}
