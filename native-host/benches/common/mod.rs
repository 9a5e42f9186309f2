//! Helpers shared by the benches and the FOLDOC quality test (`tests/reference.rs`).
#![allow(dead_code)]

pub mod million;

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `forager` binary a bench runs: `FORAGER_BIN` when set (to measure two builds with
/// one bench binary), else this build's.
pub fn binary() -> PathBuf {
    std::env::var_os("FORAGER_BIN").map_or_else(|| env!("CARGO_BIN_EXE_forager").into(), Into::into)
}

/// The machine's 1-minute load average (0 where /proc has none), printed beside figures measured
/// on a shared machine.
pub fn load_average() -> f64 {
    (std::fs::read_to_string("/proc/loadavg").ok())
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0.0)
}

/// CPU seconds (user + system) process `pid` has used so far, from `/proc/PID/stat` (utime and
/// stime, fields 14 and 15 in USER_HZ ticks of 1/100 s, counted after the command's closing
/// parenthesis); 0 when it has gone.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = (stat.rsplit_once(')').map_or("", |(_, r)| r))
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
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
