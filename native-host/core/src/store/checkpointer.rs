//! The crawl writer's checkpoints, off its thread (#27). SQLite's automatic checkpoint runs
//! inside the commit that crosses its threshold: the crawl loop's record waited while
//! pages were copied from the write-ahead log into a database of several GB and synced (8.7
//! to 13.3% of the million-page crawl's time). Here the writer's commits only count the log's
//! frames (a WAL hook, which also turns the automatic checkpoint off), and a thread with its
//! own connection runs PASSIVE checkpoints once the log holds [`START_FRAMES`]: the writer
//! keeps writing while the pages are copied. When the writer kept the log from starting over
//! meanwhile, a RESTART checkpoint copies the rest holding the writer back for that time only.
//! The log stays bounded: should it reach
//! [`BOUND_FRAMES`] (the thread cannot keep up, or a long reader pins it), the writer
//! checkpoints in line as SQLite would, and the file is cut back to [`LIMIT_BYTES`] when the
//! log starts over.

use super::Result;
use rusqlite::wal::CheckpointMode;
use rusqlite::Connection;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// Frames (pages) in the log that start a background checkpoint: 64 MB at 4 KiB pages, as
/// the writer's automatic checkpoint was (a page written again and again is copied once per
/// checkpoint; checkpoints were 5% of the crawler's CPU at 16 MB, 1% at 64 MB).
pub(super) const START_FRAMES: i32 = 16_384;

/// Frames in the log at which the writer checkpoints in line (256 MB at 4 KiB pages).
pub(super) const BOUND_FRAMES: i32 = 4 * START_FRAMES;

/// The log file's size kept when it starts over (`journal_size_limit`), in bytes.
pub(super) const LIMIT_BYTES: i64 = 64 << 20;

/// The longest a background checkpoint waits to restart the log (for the writer's
/// transaction under way, and for readers of older frames); it then gives up until later.
const RESTART_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// What the writer's commits tell the checkpointer.
#[derive(Debug, Default)]
struct State {
    /// Frames in the log at the last commit, once at least [`START_FRAMES`]; 0 when no
    /// checkpoint is wanted.
    frames: i32,
    /// The store is closing.
    stop: bool,
    /// Checkpoints run by the thread, and by the writer in line (for tests and reports).
    background: u64,
    inline: u64,
}

type Shared = Arc<(Mutex<State>, Condvar)>;

/// The background checkpointer of one writer connection; stopped (after any checkpoint under
/// way) when dropped.
#[derive(Debug)]
pub(super) struct Checkpointer {
    shared: Shared,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Takes over the checkpoints of `writer`, the writing connection of the database at
    /// `path` (in WAL mode), starting the thread with its own connection.
    pub(super) fn start(writer: &mut Connection, path: &Path) -> Result<Checkpointer> {
        Self::start_at(writer, path, START_FRAMES, BOUND_FRAMES)
    }

    /// [`Checkpointer::start`] with other thresholds (tests).
    fn start_at(
        writer: &mut Connection,
        path: &Path,
        start: i32,
        bound: i32,
    ) -> Result<Checkpointer> {
        writer.pragma_update(None, "journal_size_limit", LIMIT_BYTES)?;
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // A restart waits this long at most for the writer's transaction and the readers.
        conn.busy_timeout(RESTART_WAIT)?;
        let shared: Shared = Arc::default();
        let hook = Arc::clone(&shared);
        // Registering the hook replaces SQLite's automatic checkpoint (itself a WAL hook).
        writer.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, frames: i32| {
            if frames >= bound {
                // The writer's commit has ended and released its lock, as with the automatic
                // checkpoint; a checkpoint already under way makes this one return busy.
                let done = wal.checkpoint_v2(CheckpointMode::PASSIVE);
                let mut s = lock(&hook.0);
                s.inline += 1;
                tracing::debug!(frames, ?done, inline = s.inline, "store.checkpoint.inline");
            } else if frames >= start {
                lock(&hook.0).frames = frames;
                hook.1.notify_one();
            }
            Ok(())
        }))?;
        let mine = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("forager-checkpoint".into())
            .spawn(move || run(&conn, &mine, start))
            .map_err(|e| super::StoreError::Io("checkpoint thread".into(), e))?;
        Ok(Checkpointer {
            shared,
            thread: Some(thread),
        })
    }

    /// Checkpoints run so far: (by the thread, by the writer in line).
    #[cfg(test)]
    fn runs(&self) -> (u64, u64) {
        let s = lock(&self.shared.0);
        (s.background, s.inline)
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        lock(&self.shared.0).stop = true;
        self.shared.1.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Locks the state, whatever a panicking holder left.
fn lock(m: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The thread: waits for a full enough log, checkpoints it without blocking the writer, and
/// again while the writer's next commits report it full (the log starts over at the first
/// write after a checkpoint that caught up with it).
fn run(conn: &Connection, shared: &Shared, start: i32) {
    let (m, cv) = &**shared;
    loop {
        {
            let mut s = lock(m);
            while s.frames == 0 && !s.stop {
                s = cv.wait(s).unwrap_or_else(|p| p.into_inner());
            }
            if s.stop {
                return;
            }
            s.frames = 0;
        }
        // A failed checkpoint (the disk, a busy lock) is tried again at a later commit; the
        // writer's in-line checkpoint bounds the log meanwhile.
        let t = std::time::Instant::now();
        let mut done = conn.wal_checkpoint_v2(None::<&str>, CheckpointMode::PASSIVE);
        if done.as_ref().is_ok_and(|(log, _)| *log >= 2 * start) {
            // The writer kept the log from starting over (it wrote on while this caught up):
            // what is left is copied with the writer held back briefly, and the log starts
            // over at its next write.
            done = conn.wal_checkpoint_v2(None::<&str>, CheckpointMode::RESTART);
        }
        let mut s = lock(m);
        s.background += 1;
        tracing::debug!(
            ?done,
            runs = s.background,
            ms = t.elapsed().as_millis() as u64,
            "store.checkpoint"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_db(name: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("forager-ckpt-{}-{name}.db", std::process::id()));
        for ext in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{ext}", p.display()));
        }
        p
    }

    fn wal_bytes(p: &Path) -> u64 {
        std::fs::metadata(format!("{}-wal", p.display())).map_or(0, |m| m.len())
    }

    /// Writes `n` transactions of a page-sized row each.
    fn write(conn: &Connection, n: usize) {
        for i in 0..n {
            conn.execute("INSERT INTO t(x) VALUES(?1)", [vec![i as u8; 3000]])
                .unwrap();
        }
    }

    #[test]
    fn the_thread_checkpoints_and_the_log_starts_over_within_its_bound() {
        let path = temp_db("bg");
        let mut w = Connection::open(&path).unwrap();
        w.pragma_update(None, "journal_mode", "WAL").unwrap();
        w.pragma_update(None, "synchronous", "NORMAL").unwrap();
        w.execute_batch("CREATE TABLE t(x BLOB)").unwrap();
        // Checkpoints from 50 frames, the writer's own only from 10,000.
        let c = Checkpointer::start_at(&mut w, &path, 50, 10_000).unwrap();
        for _ in 0..20 {
            write(&w, 100);
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let (bg, inline) = c.runs();
        assert!(bg >= 1 && inline == 0, "{bg} {inline}");
        // 2,000 pages were written; the log started over and stayed far below them.
        assert!(wal_bytes(&path) < 1000 * 4096, "{}", wal_bytes(&path));
        drop(c);
        let n: i64 = w
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 2000);
        drop(w);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn the_writer_checkpoints_in_line_at_the_bound() {
        let path = temp_db("bound");
        let mut w = Connection::open(&path).unwrap();
        w.pragma_update(None, "journal_mode", "WAL").unwrap();
        w.pragma_update(None, "synchronous", "NORMAL").unwrap();
        w.execute_batch("CREATE TABLE t(x BLOB)").unwrap();
        // The thread never starts (its threshold is past the bound): only the writer's
        // in-line checkpoints keep the log from growing.
        let c = Checkpointer::start_at(&mut w, &path, i32::MAX, 100).unwrap();
        write(&w, 1000);
        let (bg, inline) = c.runs();
        assert_eq!(bg, 0);
        assert!(inline >= 5, "{inline}");
        assert!(wal_bytes(&path) < 500 * 4096, "{}", wal_bytes(&path));
        drop(c);
        drop(w);
        let _ = std::fs::remove_file(&path);
    }
}
