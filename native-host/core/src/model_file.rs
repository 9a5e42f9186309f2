//! The model file on disk: written atomically (temp file, fsync, rename), and never replaced
//! when it could not be read: an unreadable file is kept aside under a `.bak` name.

use forager_classifier::Model;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What loading the model file found.
#[derive(Debug)]
pub enum Loaded {
    /// The model as saved.
    Model(Box<Model>),
    /// There is no model file yet.
    Missing,
    /// The file could not be read as a model (corrupt, or from a newer Forager); it was moved
    /// to `kept`, so that nothing overwrites it.
    SetAside {
        /// Where the unreadable file now is.
        kept: PathBuf,
        /// Why it could not be read.
        why: String,
    },
}

/// Writes `bytes` to `path` so that a crash leaves either the old file or the new one whole.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map_or("model".into(), |n| n.to_string_lossy());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    // The rename itself is durable once the directory is synced (not possible everywhere).
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Loads the model at `path`; an unreadable file is renamed to a free `.bak` name first.
pub fn load_or_set_aside(path: &Path) -> std::io::Result<Loaded> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Loaded::Missing),
        Err(e) => return Err(e),
    };
    match Model::from_bytes(&bytes) {
        Ok(m) => Ok(Loaded::Model(Box::new(m))),
        Err(e) => {
            let kept = free_backup_name(path);
            std::fs::rename(path, &kept)?;
            Ok(Loaded::SetAside {
                kept,
                why: e.to_string(),
            })
        }
    }
}

/// `<path>.bak`, or `<path>.bak.N` for the first N not taken: an older backup is kept too.
fn free_backup_name(path: &Path) -> PathBuf {
    let base = path.as_os_str().to_owned();
    let with = |suffix: &str| {
        let mut s = base.clone();
        s.push(suffix);
        PathBuf::from(s)
    };
    let first = with(".bak");
    if !first.exists() {
        return first;
    }
    (1..)
        .map(|n| with(&format!(".bak.{n}")))
        .find(|p| !p.exists())
        .unwrap_or(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("forager-mf-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn an_unreadable_model_is_kept_aside_never_replaced() {
        let d = dir("aside");
        let p = d.join("model.fgm");
        assert!(matches!(load_or_set_aside(&p).unwrap(), Loaded::Missing));
        for (i, junk) in [&b"FORAGERM\x09\x00newer"[..], b"garbage"]
            .iter()
            .enumerate()
        {
            std::fs::write(&p, junk).unwrap();
            let Loaded::SetAside { kept, why } = load_or_set_aside(&p).unwrap() else {
                panic!("junk loaded");
            };
            assert!(!why.is_empty());
            assert_eq!(std::fs::read(&kept).unwrap(), *junk, "kept whole");
            let want = if i == 0 {
                "model.fgm.bak"
            } else {
                "model.fgm.bak.1"
            };
            assert_eq!(kept.file_name().unwrap(), want);
            assert!(!p.exists());
        }
        let m = Model::default();
        write_atomic(&p, &m.to_bytes()).unwrap();
        assert!(matches!(load_or_set_aside(&p).unwrap(), Loaded::Model(_)));
        let left: Vec<_> = std::fs::read_dir(&d).unwrap().flatten().collect();
        assert_eq!(left.len(), 3, "no temp file left: {left:?}");
    }
}
