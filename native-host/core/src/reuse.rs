//! The apprentice reused across crawls (accelerated-focused-crawling-2002 §3.5, the offline
//! protocol): what the apprentice learned in earlier crawls of the same good topics guides the
//! next crawl from its first page, instead of soft focus alone until the warm-up ends.
//!
//! One file, [`FILE_NAME`], beside the crawl database: the browser's host keeps its database
//! and its model in its data directory, so there it sits beside the model; a `forager crawl`
//! keeps it in the directory of `--db`, so a `--new` crawl (which sets the old database aside)
//! or a crawl into another database of that directory finds it. It is not kept inside the
//! crawl database: a new crawl starts a new database, and the point is to carry the apprentice
//! from one crawl to the next.
//!
//! The file is keyed by a hash of the model's taxonomy (every topic path: the apprentice's
//! class features name its leaves) and of its good topic paths: when either changes, the
//! saved apprentice is not used (a reset) and the crawl's own replaces it. Its trust, the
//! critic's prequential skill (2·AUC − 1 on links predicted before they were learned), is
//! saved with it, so an apprentice that did not separate good links from bad leaves soft
//! focus in charge; an unmeasured one starts at trust 0. The file is written through
//! [`crate::output`]'s rules: it replaces only an earlier apprentice file, never anything
//! else found at that path.

use crate::output::{self, OutputError, Policy};
use forager_classifier::apprentice::Apprentice;
use forager_classifier::Model;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The saved apprentice's file name, beside the crawl database.
pub const FILE_NAME: &str = "apprentice.forager";
/// First bytes of a saved apprentice.
const MAGIC: &[u8; 8] = b"FORAGERP";
/// Current format version.
const VERSION: u16 = 1;
/// Bytes before the apprentice: magic, version, key, trust flag and trust.
const HEADER: usize = 8 + 2 + 32 + 1 + 8;

/// What the apprentice is keyed by: a hash of the taxonomy's topic paths and the good ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key([u8; 32]);

impl Key {
    /// The key of `model`'s taxonomy and good topics.
    pub fn of(model: &Model) -> Key {
        let tax = model.taxonomy();
        let mut all: Vec<String> = Vec::new();
        let mut good: Vec<String> = Vec::new();
        for t in tax.topics() {
            let Ok(path) = tax.path(t.id) else { continue };
            if tax.is_effectively_good(t.id) {
                good.push(path.clone());
            }
            all.push(path);
        }
        all.sort();
        good.sort();
        let mut h = Sha256::new();
        for (part, paths) in [("taxonomy", all), ("good", good)] {
            h.update(part.as_bytes());
            for p in paths {
                h.update([0]);
                h.update(p.as_bytes());
            }
            h.update([1]);
        }
        Key(h.finalize().into())
    }
}

/// The apprentice a finished crawl learned, with its trust (what is saved for the next one).
#[derive(Clone)]
pub struct Learned(pub Arc<Apprentice>);

impl std::fmt::Debug for Learned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Learned({:?} instances)", self.0.instances())
    }
}

/// What was found beside the crawl database at the start of a crawl.
#[derive(Debug)]
pub enum Loaded {
    /// An apprentice learned in earlier crawls of these topics, its trust set.
    Reused(Apprentice),
    /// No saved apprentice: a cold start.
    Missing,
    /// A saved apprentice of other topics or another taxonomy: a cold start, and this
    /// crawl's apprentice replaces it.
    TopicsChanged,
    /// Something that is not a readable apprentice: a cold start; why, in words.
    Unreadable(String),
}

impl Loaded {
    /// The apprentice to start from, if any.
    pub fn apprentice(self) -> Option<Apprentice> {
        match self {
            Loaded::Reused(a) => Some(a),
            _ => None,
        }
    }

    /// One sentence for the user about what was found at `path`.
    pub fn words(&self, path: &Path) -> String {
        let p = path.display();
        match self {
            Loaded::Reused(a) => format!(
                "apprentice: reusing the one learned in earlier crawls of these topics ({} links \
                 learned, trust {:.2}) from {p}",
                a.instances().iter().sum::<u64>(),
                a.trust()
            ),
            Loaded::Missing => format!("apprentice: none saved at {p} yet; learning a new one"),
            Loaded::TopicsChanged => format!(
                "apprentice: the one saved at {p} was learned for other topics; learning a new \
                 one, which replaces it"
            ),
            Loaded::Unreadable(why) => {
                format!("apprentice: cannot use {p} ({why}); learning a new one")
            }
        }
    }
}

/// Where the apprentice of the crawl in database `db` is saved.
pub fn path_beside(db: &Path) -> PathBuf {
    match db.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.join(FILE_NAME),
        _ => PathBuf::from(FILE_NAME),
    }
}

/// Reads the apprentice saved at `path` for `key`; never fails: anything wrong is a cold start.
pub fn load(path: &Path, key: Key) -> Loaded {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Loaded::Missing,
        Err(e) => return Loaded::Unreadable(e.to_string()),
    };
    if !meta.file_type().is_file() {
        return Loaded::Unreadable("not a regular file".into());
    }
    // A model budget's worth: an apprentice of a long crawl is a few megabytes.
    if meta.len() > 256 << 20 {
        return Loaded::Unreadable("larger than 256 MB".into());
    }
    match std::fs::read(path) {
        Ok(bytes) => from_bytes(&bytes, key),
        Err(e) => Loaded::Unreadable(e.to_string()),
    }
}

/// Parses a saved apprentice (see [`to_bytes`]).
fn from_bytes(bytes: &[u8], key: Key) -> Loaded {
    let bad = |why: &str| Loaded::Unreadable(why.to_owned());
    if !bytes.starts_with(MAGIC) {
        return bad("not a saved Forager apprentice");
    }
    let Some(header) = bytes.get(..HEADER) else {
        return bad("truncated");
    };
    if header[8..10] != VERSION.to_le_bytes() {
        return bad("saved by another version of Forager");
    }
    if header[10..42] != key.0 {
        return Loaded::TopicsChanged;
    }
    let trust = f64::from_le_bytes(header[43..51].try_into().unwrap_or_default());
    let trust = match header[42] {
        0 => 0.0,
        1 if (0.0..=1.0).contains(&trust) => trust,
        _ => return bad("its trust is out of range"),
    };
    match Apprentice::from_bytes(&bytes[HEADER..]) {
        Ok(mut a) => {
            a.set_trust(trust);
            Loaded::Reused(a)
        }
        Err(e) => Loaded::Unreadable(e.to_string()),
    }
}

/// The bytes of `a` saved for `key`: magic, version, key, trust (flag and value), apprentice.
fn to_bytes(a: &Apprentice, key: Key) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&key.0);
    let trust = a.measured_trust();
    out.push(u8::from(trust.is_some()));
    out.extend_from_slice(&trust.unwrap_or(0.0).to_le_bytes());
    out.extend(a.to_bytes());
    out
}

/// Whether a file's first bytes are a saved apprentice (the only file [`save`] replaces).
fn is_saved_apprentice(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}

/// Why an apprentice was not saved.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// Something else is at the path: it is kept.
    #[error("{0} is not a saved apprentice; it is kept, and no apprentice is saved until it is moved away")]
    Foreign(PathBuf),
    /// The output rules refused the path, or writing failed.
    #[error(transparent)]
    Output(OutputError),
}

/// Saves `a` for `key` at `path`, atomically; replaces only an earlier saved apprentice.
pub fn save(path: &Path, key: Key, a: &Apprentice) -> Result<(), SaveError> {
    let policy = Policy::data(false).or_ours(is_saved_apprentice);
    output::write(path, &to_bytes(a, key), policy).map_err(|e| match e {
        OutputError::Exists(p) => SaveError::Foreign(p),
        e => SaveError::Output(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use forager_classifier::{Taxonomy, TextOptions, TrainOptions};

    fn model(good: &[&str]) -> Model {
        let mut t = Taxonomy::new("root");
        for p in ["/A/x", "/A/y", "/B"] {
            t.ensure_path(p, p).unwrap();
        }
        let mut m = Model::new(t, TextOptions::default(), TrainOptions::default());
        m.set_good_paths(good).unwrap();
        m
    }

    fn learned(trust: Option<f64>) -> Apprentice {
        let mut a = Apprentice::new();
        a.add(&[1, 2], true);
        a.add(&[3], false);
        if let Some(t) = trust {
            a.set_trust(t);
        }
        a
    }

    #[test]
    fn the_key_follows_the_good_topics_and_the_taxonomy() {
        let k = Key::of(&model(&["/A"]));
        assert_eq!(k, Key::of(&model(&["/A"])));
        assert_ne!(k, Key::of(&model(&["/B"])));
        let mut more = model(&["/A"]);
        more.ensure_topic("/C", "C").unwrap();
        assert_ne!(k, Key::of(&more));
    }

    #[test]
    fn saved_and_loaded_with_its_trust_or_reset_for_other_topics() {
        let dir = std::env::temp_dir().join(format!("forager-reuse-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(FILE_NAME);
        let key = Key::of(&model(&["/A"]));
        assert!(matches!(load(&path, key), Loaded::Missing));
        save(&path, key, &learned(Some(0.4))).unwrap();
        let Loaded::Reused(a) = load(&path, key) else {
            panic!("not reused")
        };
        assert_eq!((a.instances(), a.measured_trust()), ([1, 1], Some(0.4)));
        // Saved again over its own earlier file; an unmeasured trust comes back as 0.
        save(&path, key, &learned(None)).unwrap();
        let a = load(&path, key).apprentice().unwrap();
        assert_eq!(a.measured_trust(), Some(0.0));
        let other = Key::of(&model(&["/B"]));
        assert!(matches!(load(&path, other), Loaded::TopicsChanged));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn corrupt_or_foreign_files_are_cold_starts_and_never_overwritten() {
        let dir = std::env::temp_dir().join(format!("forager-reuse-bad-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(FILE_NAME);
        let key = Key::of(&model(&["/A"]));
        let good = to_bytes(&learned(Some(0.5)), key);
        // Every cut of a good file and a flipped trust flag: a reason in words, no panic.
        for n in [0, 5, 9, 20, HEADER, HEADER + 3, good.len() - 1] {
            std::fs::write(&path, &good[..n]).unwrap();
            let got = load(&path, key);
            assert!(matches!(got, Loaded::Unreadable(_)), "{n}: {got:?}");
            assert!(got.words(&path).contains("cannot use"), "{n}");
        }
        let mut flag = good.clone();
        flag[42] = 7;
        std::fs::write(&path, &flag).unwrap();
        assert!(matches!(load(&path, key), Loaded::Unreadable(_)));
        // A file that is not ours is never replaced; a truncated apprentice of ours is.
        std::fs::write(&path, b"my notes").unwrap();
        assert!(save(&path, key, &learned(Some(0.5))).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"my notes");
        std::fs::write(&path, &good[..20]).unwrap();
        save(&path, key, &learned(Some(0.5))).unwrap();
        assert!(matches!(load(&path, key), Loaded::Reused(_)));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
