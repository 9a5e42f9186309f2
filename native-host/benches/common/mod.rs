//! Helpers shared by the benches.

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The FOLDOC mini-web under `target/foldoc`, extracted from `../shared` when missing.
pub fn foldoc_dir() -> Option<PathBuf> {
    let repo = repo();
    let dir = repo.join("target/foldoc");
    if !dir.join("labels.tsv").exists() && !extract(&repo) {
        return None;
    }
    Some(dir)
}

fn extract(repo: &Path) -> bool {
    std::process::Command::new("tar")
        .arg("xzf")
        .arg(repo.join("../shared/miniweb/foldoc.tar.gz"))
        .arg("-C")
        .arg(repo.join("target"))
        .status()
        .is_ok_and(|s| s.success())
}
