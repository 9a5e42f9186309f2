//! The guided re-score beside the crawl loop (#27): at an apprentice retrain the pass over the
//! frontier's in-links ([`super::rescan`]) runs on the blocking pool, on a read connection of
//! its own, while the loop keeps fetching and recording on the scores it has. Its changes come
//! back a page at a time over a bounded channel and the loop writes them between records, each
//! only where the URL still holds the score the pass read (a URL raised or fetched meanwhile
//! keeps what it has). One pass runs at a time, with the newest apprentice asked for; after a
//! pass of `d` seconds the next waits [`REST`] × `d`, so re-scoring takes at most a bounded
//! share of one core however large the frontier grows. Deterministic crawls re-score in line.

use super::{rescan, Door, Scanned};
use crate::crawl::policy::guided;
use crate::crawl::{blocking, CrawlError};
use crate::store::{CrawlDb, InLink, InLinkReader, PageId, ScoreChange, StoreError};
use forager_classifier::apprentice::Apprentice;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::time::Instant;
use tokio::task::JoinHandle;

/// After a pass of `d`, the next starts no sooner than `REST × d` later: re-scoring beside the
/// loop takes at most 1 / (1 + REST) of one core.
pub const REST: f64 = 1.0;

/// Pages of changes a pass may have sent and the loop not yet written.
const IN_TRANSIT: usize = 4;

/// A pass asked for and not started yet: the apprentice to score with.
struct Asked {
    score: Arc<Apprentice>,
}

/// A pass under way (stopped when dropped).
struct Job {
    changes: Receiver<Vec<ScoreChange>>,
    _stop: StopOnDrop,
    handle: JoinHandle<(Box<dyn InLinkReader>, Result<Scanned, StoreError>)>,
    started: Instant,
    /// Rows the loop has updated from its changes.
    written: usize,
}

/// Stops a pass when its job is dropped (cancelled, or the crawl ended).
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The re-score beside the loop: at most one pass under way, the newest one asked for next.
#[derive(Default)]
pub struct Beside {
    reader: Option<Box<dyn InLinkReader>>,
    job: Option<Job>,
    asked: Option<Asked>,
    rest_until: Option<Instant>,
    /// Whether the frontier holds the apprentice's scores (re-scored by it once in line).
    guided: bool,
}

impl Beside {
    /// Asks for a pass with `score` (the apprentice's blend), writing the changed scores;
    /// replaces a pass asked for and not started.
    pub fn ask(&mut self, score: Arc<Apprentice>) {
        self.asked = Some(Asked { score });
    }

    /// Stops the pass under way, unwritten changes dropped, and forgets the one asked for
    /// (the frontier is about to be re-scored otherwise, by the apprentice when `guided`).
    pub fn cancel(&mut self, guided: bool) {
        self.job = None;
        self.asked = None;
        self.guided = guided;
    }

    /// Whether the frontier holds the apprentice's scores: until it does, a pass beside the
    /// loop would leave soft focus's scores and the apprentice's side by side (two scales)
    /// while it runs, so the first re-score of a guided stretch runs in line.
    pub fn guided(&self) -> bool {
        self.guided
    }

    /// Writes the changes the pass under way has sent, lands it when it has ended (returned),
    /// and starts the pass asked for once rested. Without a reader of its own (a database
    /// with no file) the asked pass runs in line.
    pub async fn step<S: CrawlDb>(
        &mut self,
        store: &mut Option<S>,
    ) -> Result<Option<Scanned>, CrawlError> {
        let landed = self.write_and_land(store).await?;
        let rested = self.rest_until.is_none_or(|t| Instant::now() >= t);
        if self.job.is_none() && rested {
            if let Some(a) = self.asked.take() {
                if self.reader.is_none() {
                    self.reader = blocking(store, |s| s.in_link_reader()).await?;
                }
                match self.reader.take() {
                    Some(r) => self.job = Some(start(r, a)),
                    None => {
                        let scanned = blocking(store, move |s| {
                            let score = |f: &[u32], b| guided(&a.score, f, b);
                            rescan(&mut super::InLine(s), &score)
                        })
                        .await?;
                        return Ok(Some(scanned));
                    }
                }
            }
        }
        Ok(landed)
    }

    /// Writes what the pass has sent; when it has ended, the rest, and lands it.
    async fn write_and_land<S: CrawlDb>(
        &mut self,
        store: &mut Option<S>,
    ) -> Result<Option<Scanned>, CrawlError> {
        let Some(job) = self.job.as_mut() else {
            return Ok(None);
        };
        // Finished first, drained after: a finished pass has sent everything.
        let finished = job.handle.is_finished();
        let changes: Vec<ScoreChange> = job.changes.try_iter().flatten().collect();
        if !changes.is_empty() {
            job.written += blocking(store, move |s| s.swap_frontier_scores(&changes)).await?;
        }
        if !finished {
            return Ok(None);
        }
        let Some(Job {
            handle,
            started,
            written,
            ..
        }) = self.job.take()
        else {
            return Ok(None);
        };
        let (reader, scanned) = handle.await.map_err(|e| CrawlError::Task(e.to_string()))?;
        self.reader = Some(reader);
        self.rest_until = Some(Instant::now() + started.elapsed().mul_f64(REST));
        Ok(Some(Scanned {
            written,
            ..scanned?
        }))
    }
}

/// Starts a pass on the blocking pool with `reader`.
fn start(reader: Box<dyn InLinkReader>, a: Asked) -> Job {
    let (tx, changes) = sync_channel(IN_TRANSIT);
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let handle = tokio::task::spawn_blocking(move || {
        let mut door = Apart {
            reader,
            tx,
            stop: flag,
        };
        let score = |f: &[u32], b| guided(&a.score, f, b);
        let r = rescan(&mut door, &score);
        (door.reader, r)
    });
    Job {
        changes,
        _stop: StopOnDrop(stop),
        handle,
        started: Instant::now(),
        written: 0,
    }
}

/// A pass's door beside the loop: reads on its own connection, sends its changes to the loop.
struct Apart {
    reader: Box<dyn InLinkReader>,
    tx: SyncSender<Vec<ScoreChange>>,
    stop: Arc<AtomicBool>,
}

impl Door for Apart {
    fn read(
        &mut self,
        after: Option<(PageId, PageId)>,
        limit: usize,
    ) -> Result<Vec<InLink>, StoreError> {
        self.reader.frontier_in_links(after, limit)
    }
    fn write(&mut self, changes: Vec<ScoreChange>) -> Result<usize, StoreError> {
        let n = changes.len();
        // The loop gone (the crawl ended or the pass was cancelled): the pass stops.
        if self.tx.send(changes).is_err() {
            self.stop.store(true, Ordering::Relaxed);
        }
        Ok(n)
    }
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}
