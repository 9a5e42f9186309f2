//! The crawl writer's checkpoints, off its thread (#27). SQLite's automatic checkpoint runs
//! inside the commit that crosses its threshold: the crawl loop's record waited while
//! pages were copied from the write-ahead log into a database of several GB and synced (8.7
//! to 13.3% of the million-page crawl's time). Here the writer's commits only count the log's
//! frames (a WAL hook, which also turns the automatic checkpoint off), and a thread with its
//! own connection runs a PASSIVE checkpoint each time the log has grown by [`START_FRAMES`]:
//! the writer keeps writing while the pages are copied. The log starts over at a write that
//! finds it all copied; a writer that writes on while the thread copies can keep it from
//! that, so the log stays bounded by the writer itself: at [`BOUND_FRAMES`] it checkpoints
//! in line as SQLite would (by then most frames are copied, so little is left to copy), and
//! the file is cut back to [`LIMIT_BYTES`] when the log starts over. (Not a RESTART from the
//! thread: it holds the write lock while it waits for readers, and the writer's deferred
//! transactions, reading first, then fail at once with "database is locked".)

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

/// What the writer's commits tell the checkpointer.
#[derive(Debug, Default)]
struct State {
    /// Frames in the log at the commit that asked for a checkpoint; 0 when none is wanted.
    frames: i32,
    /// Frames in the log from which the next checkpoint is wanted (the log at the last one
    /// plus the step).
    next: i32,
    /// The store is closing.
    stop: bool,
    /// The thread is checkpointing now.
    running: bool,
    /// Checkpoints run by the thread, and by the writer in line (for tests and reports).
    background: u64,
    inline: u64,
}

/// The state, and its two signals: "a checkpoint is wanted" (to the thread) and "the
/// thread's checkpoint is over" (to the writer at the bound).
type Shared = Arc<(Mutex<State>, Condvar, Condvar)>;

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
        let shared: Shared = Arc::new((
            Mutex::new(State {
                next: start,
                ..State::default()
            }),
            Condvar::new(),
            Condvar::new(),
        ));
        let hook = Arc::clone(&shared);
        // Registering the hook replaces SQLite's automatic checkpoint (itself a WAL hook).
        writer.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, frames: i32| {
            if frames >= bound {
                // The writer's commit has ended and released its lock, as with the automatic
                // checkpoint. The thread's checkpoint under way would make this one busy, and
                // the log would not start over: it is waited for, and no other starts
                // before this one ends (the state stays locked).
                let mut s = lock(&hook.0);
                while s.running {
                    s = hook.2.wait(s).unwrap_or_else(|p| p.into_inner());
                }
                let done = wal.checkpoint_v2(CheckpointMode::PASSIVE);
                s.inline += 1;
                s.next = start;
                tracing::debug!(frames, ?done, inline = s.inline, "store.checkpoint.inline");
            } else if frames >= start {
                let mut s = lock(&hook.0);
                if frames <= s.next - start {
                    // The log started over since the last checkpoint.
                    s.next = start;
                }
                if frames >= s.next {
                    s.frames = frames;
                    hook.1.notify_one();
                }
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

/// The thread: waits for a log grown by `step` frames since the last checkpoint, and
/// checkpoints it without blocking the writer.
fn run(conn: &Connection, shared: &Shared, step: i32) {
    let (m, cv, _) = &**shared;
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
            s.running = true;
        }
        // A failed checkpoint (the disk, a busy lock) is tried again at a later commit; the
        // writer's in-line checkpoint bounds the log meanwhile.
        let t = std::time::Instant::now();
        let done = conn.wal_checkpoint_v2(None::<&str>, CheckpointMode::PASSIVE);
        let mut s = lock(m);
        s.background += 1;
        s.running = false;
        shared.2.notify_all();
        if let Ok((log, _)) = done {
            s.next = s.next.max(log.saturating_add(step));
        }
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
    use crate::store::temp_db;

    fn wal_bytes(p: &Path) -> u64 {
        std::fs::metadata(format!("{}-wal", p.display())).map_or(0, |m| m.len())
    }

    /// A writer connection in WAL mode, as the store opens it, with one table.
    fn writer(path: &Path) -> Connection {
        let w = Connection::open(path).unwrap();
        w.pragma_update(None, "journal_mode", "WAL").unwrap();
        w.pragma_update(None, "synchronous", "NORMAL").unwrap();
        w.execute_batch("CREATE TABLE t(x BLOB)").unwrap();
        w
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
        let path = temp_db("ckpt", "bg");
        let mut w = writer(&path);
        // Checkpoints every 50 frames, the writer's own from 400.
        let c = Checkpointer::start_at(&mut w, &path, 50, 400).unwrap();
        for _ in 0..20 {
            write(&w, 100);
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let (bg, inline) = c.runs();
        assert!(bg >= 1, "{bg} {inline}");
        // 2,000 rows of a page each were written; the log started over near its bound.
        assert!(wal_bytes(&path) < 800 * 4120, "{}", wal_bytes(&path));
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
        let path = temp_db("ckpt", "bound");
        let mut w = writer(&path);
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
