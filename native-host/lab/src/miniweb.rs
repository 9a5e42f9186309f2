//! Mini-webs (shared/miniweb/FORMAT.md): a frozen web on disk with topics, examples, labels
//! and crawl tasks, used for training, serving, benchmarks and quality tests.

use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

/// Errors reading a mini-web.
#[derive(Debug, Error)]
pub enum MiniWebError {
    /// A file of the mini-web could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file of the mini-web is malformed.
    #[error("{path}:{line}: {msg}")]
    Format {
        /// The file.
        path: PathBuf,
        /// 1-based line (0 for whole-file errors).
        line: usize,
        /// What is wrong.
        msg: String,
    },
    /// No task of that name.
    #[error("no task named {0:?} (have: {1})")]
    NoTask(String, String),
}

/// A crawl task: good topics, seeds and held-out targets.
#[derive(Clone, Debug, Deserialize)]
pub struct Task {
    /// Task name, e.g. `networking`.
    pub name: String,
    /// Good topic paths.
    pub good: Vec<String>,
    /// Seed URLs.
    pub seeds: Vec<String>,
    /// Held-out relevant URLs for target recall.
    #[serde(default)]
    pub targets: Vec<String>,
}

/// Where a mini-web's files live.
#[derive(Clone, Debug)]
pub enum Store {
    /// `root/sites/<host>/<path>` on disk.
    Dir,
    /// URL → body in memory (generated webs), plus generated trap pages.
    Memory(Arc<BTreeMap<String, String>>),
}

/// A mini-web opened from its directory or generated in memory.
#[derive(Clone, Debug)]
pub struct MiniWeb {
    /// The web's root directory (empty for an in-memory web).
    pub root: PathBuf,
    /// Where the files are.
    pub store: Store,
    /// (topic path, title), root first.
    pub topics: Vec<(String, String)>,
    /// (leaf topic path, example URL).
    pub examples: Vec<(String, String)>,
    /// URL → topic paths (ground truth).
    pub labels: HashMap<String, Vec<String>>,
    /// Crawl tasks.
    pub tasks: Vec<Task>,
    /// (topic path, URL) of pages known to be good hubs (`hubs.tsv`, optional).
    pub hubs: Vec<(String, String)>,
}

fn read(path: &Path) -> Result<String, MiniWebError> {
    std::fs::read_to_string(path).map_err(|source| MiniWebError::Io {
        path: path.to_owned(),
        source,
    })
}

fn tsv(path: &Path) -> Result<Vec<(String, String)>, MiniWebError> {
    let text = read(path)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let (a, b) = line.split_once('\t').ok_or_else(|| MiniWebError::Format {
            path: path.to_owned(),
            line: i + 1,
            msg: "expected two tab-separated fields".into(),
        })?;
        out.push((a.to_owned(), b.to_owned()));
    }
    Ok(out)
}

impl MiniWeb {
    /// Opens the mini-web at `root` (labels and tasks are optional).
    pub fn open(root: &Path) -> Result<Self, MiniWebError> {
        let topics = tsv(&root.join("topics.tsv"))?;
        let examples = tsv(&root.join("examples.tsv"))?;
        let labels_path = root.join("labels.tsv");
        let labels = if labels_path.exists() {
            tsv(&labels_path)?
                .into_iter()
                .map(|(u, t)| (u, t.split('|').map(str::to_owned).collect()))
                .collect()
        } else {
            HashMap::new()
        };
        let tasks_path = root.join("tasks.json");
        let tasks = if tasks_path.exists() {
            serde_json::from_str(&read(&tasks_path)?).map_err(|e| MiniWebError::Format {
                path: tasks_path.clone(),
                line: e.line(),
                msg: e.to_string(),
            })?
        } else {
            Vec::new()
        };
        let hubs_path = root.join("hubs.tsv");
        let hubs = if hubs_path.exists() {
            tsv(&hubs_path)?
        } else {
            Vec::new()
        };
        Ok(MiniWeb {
            root: root.to_owned(),
            store: Store::Dir,
            topics,
            examples,
            labels,
            tasks,
            hubs,
        })
    }

    /// A web held in memory, as made by the synthetic web generator.
    pub fn in_memory(
        files: Arc<BTreeMap<String, String>>,
        topics: Vec<(String, String)>,
        examples: Vec<(String, String)>,
        labels: HashMap<String, Vec<String>>,
        tasks: Vec<Task>,
    ) -> Self {
        MiniWeb {
            root: PathBuf::new(),
            store: Store::Memory(files),
            topics,
            examples,
            labels,
            tasks,
            hubs: Vec::new(),
        }
    }

    /// The task called `name`.
    pub fn task(&self, name: &str) -> Result<&Task, MiniWebError> {
        self.tasks.iter().find(|t| t.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.tasks.iter().map(|t| t.name.as_str()).collect();
            MiniWebError::NoTask(name.to_owned(), names.join(", "))
        })
    }

    /// The file serving `http://host/path`, or `None` when the URL cannot map into `sites/`.
    pub fn file_for(&self, url: &str) -> Option<PathBuf> {
        file_for(&self.root.join("sites"), url)
    }

    /// Reads the file at `url`.
    pub fn read_page(&self, url: &str) -> Result<String, MiniWebError> {
        if let Store::Memory(files) = &self.store {
            return files
                .get(url)
                .cloned()
                .or_else(|| trap_page(url))
                .ok_or_else(|| MiniWebError::Io {
                    path: url.into(),
                    source: std::io::ErrorKind::NotFound.into(),
                });
        }
        let path = self.file_for(url).ok_or_else(|| MiniWebError::Format {
            path: url.into(),
            line: 0,
            msg: "URL does not map into the mini-web".into(),
        })?;
        let bytes = std::fs::read(&path).map_err(|source| MiniWebError::Io { path, source })?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// True when `url` is relevant to the good topics (a label equals or lies under one).
    pub fn is_relevant(&self, url: &str, good: &[String]) -> bool {
        self.labels
            .get(url)
            .is_some_and(|ls| ls.iter().any(|l| under_good(l, good)))
    }

    /// Whether `url` is a good hub for a task with these good topics: a relevant page, or a
    /// page `hubs.tsv` lists under a good topic (the issues' "good hubs in the top 10").
    pub fn is_good_hub(&self, url: &str, good: &[String]) -> bool {
        self.is_relevant(url, good)
            || (self.hubs.iter()).any(|(t, u)| u == url && under_good(t, good))
    }
}

/// Whether topic path `l` is one of `good` or lies under one.
fn under_good(l: &str, good: &[String]) -> bool {
    good.iter()
        .any(|g| l == g || l.starts_with(&format!("{}/", g.trim_end_matches('/'))))
}

/// Maps `http://host/path` to `sites/host/path` (a trailing `/` serves `index.html`); refuses
/// anything that could escape `sites` (`..`, backslashes, empty or odd hosts).
pub fn file_for(sites: &Path, url: &str) -> Option<PathBuf> {
    let u = url::Url::parse(url).ok()?;
    if u.scheme() != "http" {
        return None;
    }
    let host = u.host_str()?.to_ascii_lowercase();
    if host.is_empty() || host.starts_with('.') || host.contains(['/', '\\']) {
        return None;
    }
    let mut path = sites.join(host);
    let raw = u.path();
    for seg in raw.split('/').filter(|s| !s.is_empty()) {
        let seg = percent_decode(seg)?;
        if seg == "." || seg == ".." || seg.contains(['/', '\\', '\0']) {
            return None;
        }
        path.push(seg);
    }
    if raw.ends_with('/') {
        path.push("index.html");
    }
    Some(path)
}

/// Decodes %XX escapes; `None` for non-UTF-8 results.
fn percent_decode(s: &str) -> Option<String> {
    percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .ok()
        .map(|c| c.into_owned())
}

/// The calendar trap that in-memory mini-webs (the generated web) answer: `http://events.test/calendar/Y/M` links to the next month, forever.
pub fn trap_page(url: &str) -> Option<String> {
    let rest = url.strip_prefix("http://events-calendar.test/calendar/")?;
    let mut it = rest.trim_end_matches('/').split('/');
    let y: u32 = it.next()?.parse().ok()?;
    let m: u32 = it.next().unwrap_or("1").parse().ok()?;
    if it.next().is_some() || !(1..=12).contains(&m) || y > 99_999 {
        return None;
    }
    let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    let (py, pm) = if m == 1 {
        (y.saturating_sub(1), 12)
    } else {
        (y, m - 1)
    };
    Some(format!(
        "<!DOCTYPE html><html><head><title>Events {y}-{m:02}</title></head><body>\
         <h1>Events in {y}-{m:02}</h1><p>No events this month.</p>\
         <a href=\"/calendar/{py}/{pm}\">previous month</a> \
         <a href=\"/calendar/{ny}/{nm}\">next month</a></body></html>"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_map_into_sites_only() {
        let s = Path::new("/w/sites");
        assert_eq!(
            file_for(s, "http://A.test/x/y.html"),
            Some(PathBuf::from("/w/sites/a.test/x/y.html"))
        );
        assert_eq!(
            file_for(s, "http://a.test/"),
            Some(PathBuf::from("/w/sites/a.test/index.html"))
        );
        let dotted = file_for(s, "http://a.test/%2e%2e/%2e%2e/etc/passwd");
        assert!(dotted.is_none_or(|p| p.starts_with("/w/sites/a.test")));
        assert_eq!(file_for(s, "http://a.test/a%2fb"), None);
        assert_eq!(file_for(s, "https://a.test/"), None);
        assert_eq!(file_for(s, "file:///etc/passwd"), None);
    }
}
