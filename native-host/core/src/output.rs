//! Files and directories the user names as outputs (`--out`, `--html`, `--warc`,
//! `--fetch-log`, `install`'s manifest): one check and one way to write them for every command,
//! so that nothing replaces what Forager did not create. A new path is always fine; an existing
//! regular file only with `--force` (or when it is this command's own earlier output); a
//! symlink, FIFO, directory, socket or device never; a crawl database, its lock, WAL or journal,
//! and a model never (a model only by a command that writes models, with `--force`).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The first bytes of every SQLite database.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";
/// The marker file of a directory Forager wrote (`gen-web`, `partial-web`, `bench`).
pub const DIR_MARKER: &str = ".forager-output";

/// Why an output was refused or could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The path is a crawl database.
    #[error("{0} is a crawl database (SQLite); refusing to write over it, even with --force")]
    Database(PathBuf),
    /// The path is a crawl database's lock, WAL, shared-memory or journal file.
    #[error("{0} belongs to the crawl database {1}; refusing to write over it, even with --force")]
    DatabaseFile(PathBuf, PathBuf),
    /// The path is a model and this command does not write models, or `--force` is missing.
    #[error("{0} is a Forager model; refusing to write over it{1}")]
    Model(PathBuf, &'static str),
    /// The path is not a regular file (or a directory where one is wanted).
    #[error("{0} is {1}, not a regular file or a new path; refusing to write there")]
    NotRegular(PathBuf, &'static str),
    /// A directory is wanted and the path is something else.
    #[error("{0} is {1}, not a directory or a new path; refusing to write there")]
    NotDir(PathBuf, &'static str),
    /// The path is an existing file this command did not write.
    #[error("{0} already exists; pass --force to replace it")]
    Exists(PathBuf),
    /// The directory is not empty and not one Forager wrote.
    #[error("{0} is a directory that is not empty and was not written by Forager; pass --force to write into it")]
    DirNotEmpty(PathBuf),
    /// Reading or writing failed.
    #[error("writing {0}: {1}")]
    Io(PathBuf, std::io::Error),
}

/// What a command writes, which decides what an existing file may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Reports, exports, logs: may replace an existing plain file with `--force`.
    Data,
    /// A model: may also replace an existing model with `--force`.
    Model,
}

/// How one command may treat what is already at its output path.
#[derive(Clone, Copy, Debug)]
pub struct Policy {
    /// The user passed `--force`.
    pub force: bool,
    /// What the command writes.
    pub kind: Kind,
    /// Whether an existing file's first 64 KB are this command's own earlier output (then it
    /// is replaced without `--force`: a resumed crawl's fetch log, a reinstalled manifest).
    pub ours: Option<fn(&[u8]) -> bool>,
}

impl Policy {
    /// Data output, replaced only with `force`.
    pub fn data(force: bool) -> Policy {
        Policy {
            force,
            kind: Kind::Data,
            ours: None,
        }
    }

    /// Model output, replacing a model only with `force`.
    pub fn model(force: bool) -> Policy {
        Policy {
            kind: Kind::Model,
            ..Policy::data(force)
        }
    }

    /// The same policy, recognising the command's own earlier output with `ours`.
    pub fn or_ours(self, ours: fn(&[u8]) -> bool) -> Policy {
        Policy {
            ours: Some(ours),
            ..self
        }
    }
}

/// What is at an output path that may be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Nothing yet.
    New,
    /// A regular file that may be replaced.
    File,
}

fn kind_name(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

/// The first `n` bytes of a regular file (opened without following links, never blocking).
fn head(path: &Path, n: u64) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc_flags())
        .open(path)?;
    let mut out = Vec::new();
    f.take(n).read_to_end(&mut out)?;
    Ok(out)
}

/// Never follow a link at the path, never block on a FIFO.
fn libc_flags() -> i32 {
    libc::O_NOFOLLOW | libc::O_NONBLOCK
}

/// The database a lock, WAL, shared-memory or journal file at `path` belongs to, if any.
fn database_of(path: &Path) -> Option<PathBuf> {
    let s = path.as_os_str().to_str()?;
    [".lock", "-wal", "-shm", "-journal"]
        .iter()
        .filter_map(|suffix| s.strip_suffix(suffix))
        .map(PathBuf::from)
        .find(|db| head(db, 16).is_ok_and(|h| h.starts_with(SQLITE_MAGIC)))
}

/// Checks that `path` may be written as an output under `policy`; nothing is written.
pub fn check(path: &Path, policy: Policy) -> Result<Existing, OutputError> {
    let p = || path.to_owned();
    if let Some(db) = database_of(path) {
        return Err(OutputError::DatabaseFile(p(), db));
    }
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Existing::New),
        Err(e) => return Err(OutputError::Io(p(), e)),
    };
    if !meta.file_type().is_file() {
        return Err(OutputError::NotRegular(p(), kind_name(meta.file_type())));
    }
    let first = head(path, 64 * 1024).map_err(|e| OutputError::Io(p(), e))?;
    if first.starts_with(SQLITE_MAGIC) {
        return Err(OutputError::Database(p()));
    }
    if first.starts_with(forager_classifier::codec::MAGIC) {
        return match (policy.kind, policy.force) {
            (Kind::Model, true) => Ok(Existing::File),
            (Kind::Model, false) => Err(OutputError::Model(p(), "; pass --force to replace it")),
            (Kind::Data, _) => Err(OutputError::Model(p(), ", even with --force")),
        };
    }
    if policy.force || first.is_empty() || policy.ours.is_some_and(|ours| ours(&first)) {
        return Ok(Existing::File);
    }
    Err(OutputError::Exists(p()))
}

/// Writes `bytes` to the output `path` after [`check`]: atomically (temp file, fsync, rename),
/// so a crash leaves the old file or the new one whole and a link never gets followed.
pub fn write(path: &Path, bytes: &[u8], policy: Policy) -> Result<(), OutputError> {
    check(path, policy)?;
    write_owned(path, bytes)
}

/// Writes `bytes` atomically to `path`, a file Forager owns (already checked, or inside a
/// directory Forager made): temp file, fsync, rename over it.
pub fn write_owned(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map_or("output".into(), |n| n.to_string_lossy());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let io = |e| OutputError::Io(path.to_owned(), e);
    let written = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(io)?;
    // The rename itself is durable once the directory is synced (not possible everywhere).
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Opens the output `path` for streaming after [`check`]: created, or truncated when it is a
/// regular file the policy allows replacing; never through a link.
pub fn create(path: &Path, policy: Policy) -> Result<std::fs::File, OutputError> {
    use std::os::unix::fs::OpenOptionsExt;
    let existing = check(path, policy)?;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).custom_flags(libc_flags());
    match existing {
        Existing::New => o.create_new(true),
        Existing::File => o.truncate(true),
    };
    o.open(path)
        .map_err(|e| OutputError::Io(path.to_owned(), e))
}

/// Makes the output directory `path`: new, empty, or one Forager wrote before (it holds
/// [`DIR_MARKER`]); any other existing directory only with `force`; never a link or a file.
/// The directory is marked as Forager's, so writing into it again needs no `--force`.
pub fn dir(path: &Path, force: bool) -> Result<(), OutputError> {
    let p = || path.to_owned();
    let io = |e| OutputError::Io(path.to_owned(), e);
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(path).map_err(io)?;
        }
        Err(e) => return Err(io(e)),
        Ok(m) if !m.file_type().is_dir() => {
            let what = if m.file_type().is_file() {
                "a file"
            } else {
                kind_name(m.file_type())
            };
            return Err(OutputError::NotDir(p(), what));
        }
        Ok(_) => {
            let marked = std::fs::symlink_metadata(path.join(DIR_MARKER))
                .is_ok_and(|m| m.file_type().is_file());
            let empty = std::fs::read_dir(path).map_err(io)?.next().is_none();
            if !(marked || empty || force) {
                return Err(OutputError::DirNotEmpty(p()));
            }
        }
    }
    let marker = path.join(DIR_MARKER);
    if std::fs::symlink_metadata(&marker).is_err() {
        write_owned(&marker, b"written by forager\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("forager-out-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn outputs_refuse_what_they_did_not_create() {
        let d = tmp("check");
        let db = d.join("c.db");
        std::fs::write(&db, b"SQLite format 3\0rest").unwrap();
        std::fs::write(d.join("c.db-wal"), b"wal").unwrap();
        let model = d.join("m.fgm");
        std::fs::write(&model, b"FORAGERM\x01\x00").unwrap();
        let plain = d.join("notes.txt");
        std::fs::write(&plain, b"mine").unwrap();
        std::os::unix::fs::symlink(&plain, d.join("link")).unwrap();
        for force in [false, true] {
            let data = Policy::data(force);
            assert!(matches!(check(&db, data), Err(OutputError::Database(_))));
            let wal = check(&d.join("c.db-wal"), data);
            assert!(matches!(wal, Err(OutputError::DatabaseFile(..))), "{wal:?}");
            assert!(matches!(
                check(&d.join("c.db.lock"), data),
                Err(OutputError::DatabaseFile(..))
            ));
            assert!(matches!(check(&model, data), Err(OutputError::Model(..))));
            assert!(matches!(
                check(&d.join("link"), data),
                Err(OutputError::NotRegular(..))
            ));
            assert!(matches!(check(&d, data), Err(OutputError::NotRegular(..))));
            assert_eq!(check(&d.join("new"), data).unwrap(), Existing::New);
            assert_eq!(check(&model, Policy::model(force)).is_ok(), force);
            assert_eq!(check(&plain, data).is_ok(), force);
        }
        let urls = |b: &[u8]| b.starts_with(b"http");
        assert!(check(&plain, Policy::data(false).or_ours(urls)).is_err());
        std::fs::write(&plain, b"http://a/\n").unwrap();
        assert!(check(&plain, Policy::data(false).or_ours(urls)).is_ok());
        assert_eq!(std::fs::read(&plain).unwrap(), b"http://a/\n");
    }

    #[test]
    fn output_directories_are_new_empty_or_forager_s() {
        let d = tmp("dir");
        let out = d.join("web");
        dir(&out, false).unwrap();
        dir(&out, false).unwrap();
        let theirs = d.join("theirs");
        std::fs::create_dir_all(&theirs).unwrap();
        std::fs::write(theirs.join("keep"), b"x").unwrap();
        assert!(matches!(
            dir(&theirs, false),
            Err(OutputError::DirNotEmpty(_))
        ));
        std::os::unix::fs::symlink(&out, d.join("link")).unwrap();
        assert!(dir(&d.join("link"), true).is_err());
        dir(&theirs, true).unwrap();
        assert_eq!(std::fs::read(theirs.join("keep")).unwrap(), b"x");
    }
}
