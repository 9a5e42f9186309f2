//! Helpers shared by the benches and the FOLDOC quality test (`tests/reference.rs`).
#![allow(dead_code)]

pub mod million;

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The FOLDOC mini-web under `target/foldoc`, extracted from `../shared` when missing.
pub fn foldoc_dir() -> Option<PathBuf> {
    let repo = repo();
    let dir = repo.join("target/foldoc");
    if !dir.join("labels.tsv").exists() && !extract(&repo, &dir) {
        return None;
    }
    Some(dir)
}

/// Extracts into a scratch folder first, then renames it into place, so a killed run leaves no
/// half web behind and a concurrent extraction (the browser tests do the same) is harmless.
fn extract(repo: &Path, dir: &Path) -> bool {
    let scratch = repo.join(format!("target/.foldoc-{}", std::process::id()));
    let ok = std::fs::create_dir_all(&scratch).is_ok()
        && std::process::Command::new("tar")
            .arg("xzf")
            .arg(repo.join("../shared/miniweb/foldoc.tar.gz"))
            .arg("-C")
            .arg(&scratch)
            .status()
            .is_ok_and(|s| s.success());
    if ok {
        // Another process may have won the race; either way the web is then in place.
        let _ = std::fs::rename(scratch.join("foldoc"), dir);
    }
    let _ = std::fs::remove_dir_all(&scratch);
    dir.join("labels.tsv").exists()
}
