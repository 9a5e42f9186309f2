//! The record step off the crawl loop (#27): a record on the blocking pool. The loop hands
//! the writer its outcomes as they come; the writer checks out the URLs the loop asked for
//! (the workers' top-up), then records what was handed over. The loop reads what the record
//! made of its batch as it lands, and takes the store back after each record.
use super::CrawlError;
use crate::store::{self, CrawlDb, Outcome, Recorded, StoreError, Work};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tokio::task::{JoinError, JoinHandle};

/// Outcomes that make a record due (also due after 200 ms, or when no fetch is out). While
/// a record runs the outcomes gather, so the next batch is what came meanwhile: when the
/// loop is ahead of the writer, batches grow. (#27: 256 cut the crawler's CPU by ~8% on
/// FOLDOC, but a 600-page soft crawl then learned its frontier too late to keep template
/// links behind the text's: tests/crawl.rs `template_links_wait_behind_links_in_the_text`.)
pub(super) const BATCH: usize = 64;

/// Longest a record job runs before the loop stops handing it outcomes (they wait for the
/// next job) and takes the store back as soon as it lands (to renew its lease, write the
/// re-score's changes, judge again, distill).
pub(super) const CHAIN_SPAN: Duration = Duration::from_millis(250);

/// What the loop and the writer share: outcomes handed over, the top-up asked for, and what
/// came of them.
#[derive(Default)]
struct Queue {
    /// Outcomes handed over and not yet in a record, in order.
    outcomes: Vec<Outcome>,
    /// URLs to check out for the workers before the next record: (worker, how many).
    want: Option<(String, usize)>,
    /// Outcomes in the record under way.
    in_record: usize,
    /// URLs being checked out for the workers (taken from `want`, not yet in `ahead`).
    taking: usize,
    /// Records done, with their outcomes' number, for the loop to catch up with.
    landed: Vec<(usize, Result<Recorded, StoreError>)>,
    /// Work checked out for the workers, for the loop to dispatch.
    ahead: Vec<Result<Vec<Work>, StoreError>>,
}

/// The queue, and the loop's wake-up when something landed.
#[derive(Default)]
struct Chain {
    queue: Mutex<Queue>,
    wake: Notify,
}

impl Chain {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What a chain hands back when it ends: the store, and the span of the writer's wait for the
/// next record, open from the end of its last one.
type Ended<S> = (S, Option<tracing::Span>);

/// At most one chain of records at a time, and what it has done.
pub(super) struct Recorder<S: CrawlDb> {
    job: Option<JoinHandle<Ended<S>>>,
    ready: Option<Result<Ended<S>, JoinError>>,
    chain: Arc<Chain>,
    started: Instant,
    /// From the end of the last record to the start of the next (`loop.between_records` in
    /// `forager crawl --trace`: the time the writer is not recording).
    between: Option<tracing::Span>,
}

impl<S: CrawlDb> Default for Recorder<S> {
    fn default() -> Self {
        Recorder {
            job: None,
            ready: None,
            chain: Arc::default(),
            started: Instant::now(),
            between: None,
        }
    }
}

impl<S: CrawlDb> Recorder<S> {
    /// Starts a record job with `store` on the blocking pool: the outcomes handed over
    /// before and `batch` are recorded, after checking out `want` URLs for the workers.
    pub(super) fn start(&mut self, store: S, batch: Vec<Outcome>, want: Option<(String, usize)>) {
        {
            let mut q = self.chain.lock();
            q.outcomes.extend(batch);
            q.want = want;
        }
        self.started = Instant::now();
        let chain = self.chain.clone();
        let between = self.between.take();
        self.job = Some(tokio::task::spawn_blocking(move || {
            run(store, &chain, between)
        }));
    }

    /// Hands `outcomes` to the writer (recorded by the next job: the one under way took its
    /// batch when it started),
    /// and asks for `want` more URLs for the workers before its next record, within `cap`;
    /// `None` withdraws what was asked before (the crawl is stopping, or its budget is spent:
    /// nothing more is checked out).
    pub(super) fn hand(&self, outcomes: Vec<Outcome>, want: Option<(String, usize)>, cap: usize) {
        let mut q = self.chain.lock();
        q.outcomes.extend(outcomes);
        q.want = want.map(|(w, n)| {
            let had = q.want.take().map_or(0, |(_, k)| k);
            (w, (had + n).min(cap))
        });
    }

    /// True while the store is with the writer (from `start` until it is taken back).
    pub(super) fn away(&self) -> bool {
        self.job.is_some() || self.ready.is_some()
    }

    /// True when the record job has ended and the store waits to be taken back.
    pub(super) fn done(&self) -> bool {
        self.ready.is_some() || self.job.as_ref().is_some_and(JoinHandle::is_finished)
    }

    /// True when the record job under way has run for [`CHAIN_SPAN`].
    pub(super) fn overdue(&self) -> bool {
        self.away() && self.started.elapsed() >= CHAIN_SPAN
    }

    /// True when the writer holds nothing: no chain, no outcomes, nothing landed unread.
    pub(super) fn idle(&self) -> bool {
        let q = self.chain.lock();
        !self.away() && q.outcomes.is_empty() && q.landed.is_empty() && q.ahead.is_empty()
    }

    /// Outcomes handed over and not yet read back, and URLs asked for and not yet
    /// dispatched (neither pending nor counted as fetched or in flight).
    pub(super) fn len(&self) -> usize {
        let q = self.chain.lock();
        let ahead: usize = (q.ahead.iter())
            .map(|a| a.as_ref().map_or(0, Vec::len))
            .sum();
        q.outcomes.len()
            + q.in_record
            + q.landed.iter().map(|(n, _)| n).sum::<usize>()
            + q.want.as_ref().map_or(0, |(_, n)| *n)
            + q.taking
            + ahead
    }

    /// Outcomes handed over and not in a record yet.
    pub(super) fn queued(&self) -> usize {
        self.chain.lock().outcomes.len()
    }

    /// The records done since the last call, in order.
    pub(super) fn take_landed(&self) -> Vec<Result<Recorded, StoreError>> {
        let landed = std::mem::take(&mut self.chain.lock().landed);
        landed.into_iter().map(|(_, r)| r).collect()
    }

    /// The work checked out for the workers since the last call.
    pub(super) fn take_ahead(&self) -> Vec<Result<Vec<Work>, StoreError>> {
        std::mem::take(&mut self.chain.lock().ahead)
    }

    /// Waits until a record lands, work is checked out, or the chain ends (cancel-safe: the
    /// job is kept when this is dropped before).
    pub(super) async fn wait(&mut self) {
        let Some(job) = self.job.as_mut() else {
            return;
        };
        tokio::select! {
            r = job => {
                self.job = None;
                self.ready = Some(r);
            }
            () = self.chain.wake.notified() => {}
        }
    }

    /// Ends the chain after its record and takes the store back; `None` when no chain was
    /// under way. What landed is read with [`Self::take_landed`]; outcomes not recorded stay
    /// handed over for the next chain. An error loses the store only when the job failed.
    pub(super) async fn land(&mut self) -> Option<Result<S, CrawlError>> {
        if let Some(job) = self.job.take() {
            self.ready = Some(job.await);
        }
        Some(match self.ready.take()? {
            Ok((store, between)) => {
                self.between = between;
                Ok(store)
            }
            Err(e) => Err(CrawlError::Task(e.to_string())),
        })
    }
}

/// The record: the top-up asked for is checked out, then what was handed over is recorded.
/// One batch a job: the loop takes the store back after each record. (Session 20: records
/// chained while at least 32 outcomes waited let the workers' top-ups read a frontier the
/// apprentice's re-score had not reached yet, on a loaded machine; the planted web's 400-page
/// crawl, 4 at once, load 5-15: harvest .41-.62 chained, .51-.58 one record a job, .48-.60
/// before the chain.)
fn run<S: CrawlDb>(mut store: S, chain: &Chain, between: Option<tracing::Span>) -> Ended<S> {
    let (batch, want) = {
        let mut q = chain.lock();
        let batch = std::mem::take(&mut q.outcomes);
        q.in_record = batch.len();
        let want = q.want.take().filter(|(_, n)| *n > 0);
        // Counted by `len` (the page budget) until the work is in `ahead`.
        q.taking = want.as_ref().map_or(0, |(_, n)| *n);
        (batch, want)
    };
    if let Some((w, n)) = want {
        let span = tracing::debug_span!(parent: None, "loop.top_up", n);
        let work = span.in_scope(|| store.checkout(&w, n, store::LEASE));
        drop(span);
        let mut q = chain.lock();
        q.taking = 0;
        q.ahead.push(work);
        drop(q);
        chain.wake.notify_one();
    }
    drop(between);
    let span = tracing::debug_span!(parent: None, "loop.record", n = batch.len());
    let r = span.in_scope(|| store.record(&batch));
    drop(span);
    {
        let mut q = chain.lock();
        q.in_record = 0;
        q.landed.push((batch.len(), r));
    }
    chain.wake.notify_one();
    (
        store,
        Some(tracing::debug_span!(parent: None, "loop.between_records")),
    )
}

#[cfg(test)]
mod tests {
    use super::Recorder;
    use crate::store::Store;

    #[test]
    fn urls_asked_for_add_up_within_the_cap_and_a_none_withdraws_them() {
        let r = Recorder::<Store>::default();
        r.hand(Vec::new(), Some(("w".into(), 5)), 8);
        assert_eq!(r.len(), 5, "asked for 5");
        r.hand(Vec::new(), Some(("w".into(), 5)), 8);
        assert_eq!(r.len(), 8, "5 + 5 within the cap of 8");
        // The crawl is stopping or its budget is spent: nothing more may be checked out
        // (session 20's review: the old `hand` kept the earlier ask, and the writer checked
        // it out after a stop).
        r.hand(Vec::new(), None, 8);
        assert_eq!(r.len(), 0, "the ask is withdrawn");
    }
}
