//! A partial taxonomy of a mini-web: a cheap open-world testbed. Dropping whole branches of
//! the taxonomy (their topics and examples) turns their pages into pages about none of the
//! user's topics, as most of the real web is for a personal taxonomy. The labels of the kept
//! topics stay for scoring; a page left with no kept label counts as off-taxonomy, and the
//! full labels are kept beside them in `labels-full.tsv`. Tasks about a dropped branch go.

use std::path::{Path, PathBuf};

/// Why a partial web could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PartialError {
    /// A file of the mini-web could not be read or written.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    /// `tasks.json` is not a list of tasks.
    #[error("tasks.json: {0}")]
    Tasks(#[from] serde_json::Error),
    /// The root cannot be dropped, and a branch must be a topic path.
    #[error("cannot drop {0:?}: give topic paths below the root, such as /Business")]
    BadBranch(String),
}

/// What a partial web kept, for the user.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PartialReport {
    /// Topics kept and dropped.
    pub topics: (usize, usize),
    /// Examples kept and dropped.
    pub examples: (usize, usize),
    /// Labelled pages that now have no topic (off-taxonomy).
    pub unlabelled: usize,
    /// Tasks kept and dropped.
    pub tasks: (usize, usize),
}

fn dropped(path: &str, branches: &[String]) -> bool {
    branches.iter().any(|d| {
        path == d
            || path
                .strip_prefix(d.as_str())
                .is_some_and(|r| r.starts_with('/'))
    })
}

fn read(p: &Path) -> Result<String, PartialError> {
    std::fs::read_to_string(p).map_err(|e| PartialError::Io(p.to_owned(), e))
}

fn write(p: &Path, s: &str) -> Result<(), PartialError> {
    forager_core::output::write_owned(p, s.as_bytes()).map_err(|e| match e {
        forager_core::output::OutputError::Io(_, e) => PartialError::Io(p.to_owned(), e),
        other => PartialError::Io(p.to_owned(), std::io::Error::other(other.to_string())),
    })
}

/// Keeps the lines whose first tab-separated field `keep` accepts; returns (text, kept, gone).
fn filter_lines(text: &str, keep: impl Fn(&str) -> bool) -> (String, usize, usize) {
    let (mut out, mut kept, mut gone) = (String::new(), 0, 0);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if keep(line.split('\t').next().unwrap_or("")) {
            out.push_str(line);
            out.push('\n');
            kept += 1;
        } else {
            gone += 1;
        }
    }
    (out, kept, gone)
}

/// Writes the mini-web at `web` less the taxonomy `branches` to `out` (its `sites` is a link
/// to the original's, so nothing large is copied).
pub fn write_partial(
    web: &Path,
    branches: &[String],
    out: &Path,
) -> Result<PartialReport, PartialError> {
    if let Some(b) = branches.iter().find(|b| !b.starts_with('/') || b.len() < 2) {
        return Err(PartialError::BadBranch(b.clone()));
    }
    std::fs::create_dir_all(out).map_err(|e| PartialError::Io(out.to_owned(), e))?;
    let mut report = PartialReport::default();
    let (topics, k, g) = filter_lines(&read(&web.join("topics.tsv"))?, |p| !dropped(p, branches));
    report.topics = (k, g);
    write(&out.join("topics.tsv"), &topics)?;
    let (examples, k, g) =
        filter_lines(&read(&web.join("examples.tsv"))?, |p| !dropped(p, branches));
    report.examples = (k, g);
    write(&out.join("examples.tsv"), &examples)?;
    let labels = read(&web.join("labels.tsv")).unwrap_or_default();
    write(&out.join("labels-full.tsv"), &labels)?;
    let mut partial = String::new();
    for line in labels.lines().filter(|l| !l.trim().is_empty()) {
        let (url, list) = line.split_once('\t').unwrap_or((line, ""));
        let left: Vec<&str> = (list.split('|'))
            .filter(|l| !l.is_empty() && !dropped(l, branches))
            .collect();
        if left.is_empty() {
            report.unlabelled += 1;
        } else {
            partial.push_str(&format!("{url}\t{}\n", left.join("|")));
        }
    }
    write(&out.join("labels.tsv"), &partial)?;
    let tasks_path = web.join("tasks.json");
    if tasks_path.exists() {
        let tasks: Vec<serde_json::Value> = serde_json::from_str(&read(&tasks_path)?)?;
        let total = tasks.len();
        let keep: Vec<serde_json::Value> = (tasks.into_iter())
            .filter(|t| {
                let good = t["good"].as_array().map(Vec::as_slice).unwrap_or(&[]);
                !good
                    .iter()
                    .any(|g| dropped(g.as_str().unwrap_or(""), branches))
            })
            .collect();
        report.tasks = (keep.len(), total - keep.len());
        write(
            &out.join("tasks.json"),
            &serde_json::to_string_pretty(&keep)?,
        )?;
    }
    let sites = out.join("sites");
    if !sites.exists() {
        let target = std::fs::canonicalize(web.join("sites"))
            .map_err(|e| PartialError::Io(web.join("sites"), e))?;
        std::os::unix::fs::symlink(&target, &sites).map_err(|e| PartialError::Io(sites, e))?;
    }
    write(
        &out.join("README.md"),
        &format!(
            "A partial taxonomy of {} (forager partial-web): dropped {}. Pages left with no kept \
             label are off-taxonomy; labels-full.tsv has every label.\n",
            web.display(),
            branches.join(", ")
        ),
    )?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_branches_leave_their_pages_without_a_topic_and_their_tasks_go() {
        let dir = std::env::temp_dir().join(format!("forager-partial-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let web = dir.join("web");
        std::fs::create_dir_all(web.join("sites/a.test")).unwrap();
        let w = |f: &str, s: &str| std::fs::write(web.join(f), s).unwrap();
        w("topics.tsv", "/\tAll\n/A\tA\n/A/X\tX\n/AB\tAB\n/B\tB\n");
        w(
            "examples.tsv",
            "/A/X\thttp://a.test/1\n/AB\thttp://a.test/2\n/B\thttp://a.test/3\n",
        );
        w(
            "labels.tsv",
            "http://a.test/4\t/A/X\nhttp://a.test/5\t/A/X|/B\nhttp://a.test/6\t/AB\n",
        );
        w(
            "tasks.json",
            r#"[{"name": "x", "good": ["/A/X"], "seeds": [], "targets": []},
                {"name": "b", "good": ["/B"], "seeds": [], "targets": []}]"#,
        );
        let out = dir.join("partial");
        let r = write_partial(&web, &["/A".to_owned()], &out).unwrap();
        assert_eq!(r.topics, (3, 2), "/AB is not under /A");
        assert_eq!(r.examples, (2, 1));
        assert_eq!(r.unlabelled, 1);
        assert_eq!(r.tasks, (1, 1));
        let labels = std::fs::read_to_string(out.join("labels.tsv")).unwrap();
        assert_eq!(labels, "http://a.test/5\t/B\nhttp://a.test/6\t/AB\n");
        assert!(out.join("sites/a.test").exists(), "sites linked");
        let opened = crate::miniweb::MiniWeb::open(&out).unwrap();
        assert_eq!(opened.tasks.len(), 1);
        assert!(write_partial(&web, &["/".to_owned()], &dir.join("x")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
