//! `forager install`: install the native-messaging host manifest for a browser.

use anyhow::{Context, Result};
use std::path::PathBuf;

/// Arguments of `forager install`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Which browser.
    #[arg(long, value_enum, default_value = "chromium")]
    browser: forager::install::Browser,
    /// A custom Chromium/Chrome profile directory (as given to --user-data-dir).
    #[arg(long)]
    user_data_dir: Option<PathBuf>,
    /// Another home directory (absolute): Firefox run with that HOME reads its host manifests
    /// from <home>/.mozilla/native-messaging-hosts.
    #[arg(long)]
    home: Option<PathBuf>,
    /// The extension's id (default: derived from the key in extension/manifest.json).
    #[arg(long)]
    extension_id: Option<String>,
    /// The extension's manifest, to derive the id from.
    #[arg(long)]
    extension_manifest: Option<PathBuf>,
    /// Replace an existing file at the manifest's path that is not a Forager host manifest
    /// (never a link, a FIFO or a directory).
    #[arg(long)]
    force: bool,
}

/// Runs `forager install`.
pub(crate) fn run(args: Args) -> Result<()> {
    let Args {
        browser,
        user_data_dir,
        home,
        extension_id,
        extension_manifest,
        force,
    } = args;
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
    let dir = install::manifest_dir(browser, user_data_dir.as_deref(), home.as_deref())
        .map_err(anyhow::Error::msg)?;
    let target = dir.join(format!("{}.json", install::HOST_NAME));
    let policy = forager::output::Policy::data(force).or_ours(is_host_manifest);
    forager::output::check(&target, policy)?;
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
    Ok(())
}

/// Whether a file is a Forager host manifest (an earlier install's, which install replaces).
fn is_host_manifest(head: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(head)
        .is_ok_and(|v| v["name"] == forager::install::HOST_NAME)
}
