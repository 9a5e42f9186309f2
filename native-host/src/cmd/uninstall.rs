//! `forager uninstall`: remove the native-messaging host manifest.

use anyhow::Result;
use std::path::PathBuf;

/// Arguments of `forager uninstall`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Which browser.
    #[arg(long, value_enum, default_value = "chromium")]
    browser: forager::install::Browser,
    /// A custom Chromium/Chrome profile directory.
    #[arg(long)]
    user_data_dir: Option<PathBuf>,
    /// Another home directory (absolute): Firefox run with that HOME reads its host manifests
    /// from <home>/.mozilla/native-messaging-hosts.
    #[arg(long)]
    home: Option<PathBuf>,
}

/// Runs `forager uninstall`.
pub(crate) fn run(args: Args) -> Result<()> {
    let Args {
        browser,
        user_data_dir,
        home,
    } = args;
    let dir = forager::install::manifest_dir(browser, user_data_dir.as_deref(), home.as_deref())
        .map_err(anyhow::Error::msg)?;
    let file = dir.join(format!("{}.json", forager::install::HOST_NAME));
    match std::fs::remove_file(&file) {
        Ok(()) => eprintln!("removed {}", file.display()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("{} was not installed", file.display())
        }
        Err(e) => return Err(e.into()),
    }
    Ok(())
}
