//! Helpers shared by the binary's integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

pub mod host;
pub mod http;

/// The `forager` binary under test.
pub fn forager() -> Command {
    Command::new(env!("CARGO_BIN_EXE_forager"))
}

/// A fresh scratch directory for one test.
pub fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("forager-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs a command that must succeed; returns its stdout.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Writes the generated web to `dir/web` and trains a model on it at `dir/m.fgm`.
pub fn trained_web(dir: &std::path::Path) -> (PathBuf, PathBuf) {
    let web = dir.join("web");
    run(forager().args(["gen-web", "--out"]).arg(&web));
    let model = dir.join("m.fgm");
    run(forager()
        .arg("train")
        .arg("--web")
        .arg(&web)
        .arg("--out")
        .arg(&model));
    (web, model)
}

/// The generated web with four off-taxonomy regions, written under `dir`: its folder, and the
/// URL → region of every region page (`off_taxonomy.tsv`).
pub fn off_taxonomy_web(
    dir: &std::path::Path,
) -> (PathBuf, std::collections::HashMap<String, String>) {
    let web = dir.join("web");
    run(forager()
        .args(["gen-web", "--off-taxonomy", "4", "--out"])
        .arg(&web));
    let regions = (std::fs::read_to_string(web.join("off_taxonomy.tsv"))
        .unwrap()
        .lines())
    .filter_map(|l| l.split_once('\t'))
    .map(|(u, r)| (u.to_owned(), r.to_owned()))
    .collect();
    (web, regions)
}

/// A `forager serve-web` child process (and its port), killed on drop.
pub struct ServeWeb(pub std::process::Child, pub u16);

impl ServeWeb {
    /// Serves the mini-web `web` on a free loopback port.
    pub fn start(web: &std::path::Path) -> ServeWeb {
        use std::io::BufRead;
        let mut child = forager()
            .arg("serve-web")
            .arg(web)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().unwrap();
        ServeWeb(child, port)
    }
}

impl Drop for ServeWeb {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A generated web of 20 sites (800 pages), a model trained on it for the astronomy task, and
/// the task's seeds: the small shared crawl of the PostgreSQL tests.
pub fn astronomy_web_and_model() -> (
    forager::miniweb::MiniWeb,
    forager_classifier::Model,
    Vec<url::Url>,
) {
    let cfg = forager::synthweb::SynthConfig {
        sites: 20,
        ..Default::default()
    };
    let web = forager::synthweb::SynthWeb::generate(&cfg).web;
    let task = web.task("astronomy").unwrap().clone();
    let (mut model, _) =
        forager::training::from_miniweb(&web, Default::default(), Default::default()).unwrap();
    model.set_good_paths(&task.good).unwrap();
    let seeds = (task.seeds.iter())
        .map(|s| forager::canon::seed(s).unwrap())
        .collect();
    (web, model, seeds)
}
