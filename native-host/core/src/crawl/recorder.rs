//! The record step off the crawl loop: a batch of outcomes is written to the crawl database
//! on the blocking pool while the loop goes on collecting results and dispatching the work it
//! holds; the store comes back to the loop when the record lands.

use super::CrawlError;
use crate::store::{CrawlDb, Outcome, Recorded, StoreError};
use tokio::task::{JoinError, JoinHandle};

/// Outcomes that make a record due (also due after 200 ms, or when no fetch is out). While
/// a record runs the outcomes gather, so the next batch is what came meanwhile: when the
/// loop is ahead of the writer, batches grow. (#27: 256 cut the crawler's CPU by ~8% on
/// FOLDOC, but a 600-page soft crawl then learned its frontier too late to keep template
/// links behind the text's: tests/crawl.rs `template_links_wait_behind_links_in_the_text`.)
pub(super) const BATCH: usize = 64;

/// What a record job hands back: the store, what the record made of the batch, and the span
/// of the writer's wait for the next record, open from the job's end.
type Landed<S> = (S, Result<Recorded, StoreError>, tracing::Span);

/// At most one record in progress, and its result once it is done.
pub(super) struct Recorder<S: CrawlDb> {
    job: Option<JoinHandle<Landed<S>>>,
    ready: Option<Result<Landed<S>, JoinError>>,
    /// Outcomes in the batch being recorded.
    n: usize,
    /// From the end of the last record to the start of the next (`loop.between_records` in
    /// `forager crawl --trace`: the time the writer is not recording).
    between: Option<tracing::Span>,
}

impl<S: CrawlDb> Default for Recorder<S> {
    fn default() -> Self {
        Recorder {
            job: None,
            ready: None,
            n: 0,
            between: None,
        }
    }
}

impl<S: CrawlDb> Recorder<S> {
    /// Starts recording `batch` into `store` on the blocking pool (the loop may go on reading
    /// the batch meanwhile).
    pub(super) fn start(&mut self, mut store: S, batch: std::sync::Arc<Vec<Outcome>>) {
        let span = tracing::debug_span!("loop.record", n = batch.len());
        self.n = batch.len();
        self.between = None;
        self.job = Some(tokio::task::spawn_blocking(move || {
            let r = span.in_scope(|| store.record(&batch));
            drop(span);
            let between = tracing::debug_span!(parent: None, "loop.between_records");
            (store, r, between)
        }));
    }

    /// True from `start` until the record has landed.
    pub(super) fn busy(&self) -> bool {
        self.job.is_some() || self.ready.is_some()
    }

    /// True when the record is done and waits to land.
    pub(super) fn done(&self) -> bool {
        self.ready.is_some() || self.job.as_ref().is_some_and(JoinHandle::is_finished)
    }

    /// Outcomes being recorded (neither pending nor counted as fetched yet).
    pub(super) fn len(&self) -> usize {
        if self.busy() {
            self.n
        } else {
            0
        }
    }

    /// Waits until the record in progress is done (cancel-safe: the job is kept when this is
    /// dropped before).
    pub(super) async fn wait(&mut self) {
        if let Some(job) = self.job.as_mut() {
            let r = job.await;
            self.job = None;
            self.ready = Some(r);
        }
    }

    /// The store and the record's result, waiting for it if needed; `None` when no record
    /// was in progress. An error loses the store only when the job itself failed.
    pub(super) async fn land(&mut self) -> Option<(Option<S>, Result<Recorded, CrawlError>)> {
        self.wait().await;
        let r = self.ready.take()?;
        self.n = 0;
        Some(match r {
            Ok((store, rec, between)) => {
                self.between = Some(between);
                (Some(store), rec.map_err(CrawlError::from))
            }
            Err(e) => (None, Err(CrawlError::Task(e.to_string()))),
        })
    }
}
