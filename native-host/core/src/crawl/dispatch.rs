//! The fetch workers as the crawl loop sees them: one task per checked-out URL (at most
//! `concurrency` fetching at once), results on a bounded channel, URLs whose host or whose
//! crawler is at fault parked until their backoff ends, and a prompt stop that cancels
//! politeness waits and fetches in progress.

use super::blame::{Blame, BlameParams, Fault};
use super::words::{Troubles, Waiting};
use super::worker::{fetch_one, Done, Shared};
use crate::store::{DocStatus, Outcome, PageId, Work};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinSet;
use tracing::Instrument;

/// Dispatches work to fetch tasks and blames their failures.
pub(super) struct Dispatcher {
    sh: Arc<Shared>,
    tasks: JoinSet<()>,
    tx: mpsc::Sender<Done>,
    rx: mpsc::Receiver<Done>,
    sem: Arc<Semaphore>,
    /// Work handed to a task and not yet come back, by row id.
    out: HashMap<PageId, Work>,
    /// Work waiting for its host's or the crawler's backoff: (host, work).
    parked: Vec<(String, Work)>,
    blame: Blame,
    /// Deferrals so far, by the failure kind that caused them.
    pub(super) deferred: HashMap<String, u64>,
    /// The failing hosts, with their latest failure.
    pub(super) troubles: Troubles,
    /// Hosts the user gave up on.
    forsaken: std::collections::HashSet<String>,
    /// Outcomes of work given up without a fetch, to be recorded.
    given_up: Vec<Outcome>,
}

fn host_of(w: &Work) -> String {
    url::Url::parse(&w.url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default()
}

impl Dispatcher {
    /// A dispatcher for `concurrency` fetches at once.
    pub(super) fn new(sh: Arc<Shared>, concurrency: usize, params: BlameParams) -> Self {
        let (tx, rx) = mpsc::channel(concurrency.max(1) * 2);
        Dispatcher {
            sh,
            tasks: JoinSet::new(),
            tx,
            rx,
            sem: Arc::new(Semaphore::new(concurrency.max(1))),
            out: HashMap::new(),
            parked: Vec::new(),
            blame: Blame::new(params),
            deferred: HashMap::new(),
            troubles: Troubles::default(),
            forsaken: Default::default(),
            given_up: Vec::new(),
        }
    }

    /// Work handed out and not yet come back.
    pub(super) fn in_flight(&self) -> usize {
        self.out.len()
    }

    /// Work out that waits for its host's robots.txt.
    pub(super) fn at_robots(&self) -> usize {
        (self.sh.at_robots.load(std::sync::atomic::Ordering::Relaxed)).min(self.out.len())
    }

    /// Work waiting for a backoff.
    pub(super) fn parked(&self) -> usize {
        self.parked.len()
    }

    /// True while the crawler itself is failing and waiting to try again.
    pub(super) fn crawler_waiting(&self) -> bool {
        self.blame.crawler_wait(Instant::now()).is_some()
    }

    /// The alarm while the crawler is failing (its proxy, its network).
    pub(super) fn alarm(&self) -> Option<String> {
        self.blame.alarm(Instant::now())
    }

    /// True when the crawler has failed for longer than the give-up time.
    pub(super) fn gave_up(&self) -> bool {
        self.blame.gave_up(Instant::now())
    }

    /// True while no host has answered a fetch in this crawl (and the crawler is not failing).
    pub(super) fn every_host_failed(&self) -> bool {
        self.blame.every_host_failed()
    }

    /// Hosts backing off now.
    pub(super) fn hosts_waiting(&self) -> usize {
        self.blame.hosts_waiting(Instant::now())
    }

    /// When only parked work is left: how long until the first of it may be tried, and for
    /// how many hosts.
    pub(super) fn waiting(&self) -> Option<Waiting> {
        if self.parked.is_empty() || !self.out.is_empty() {
            return None;
        }
        let now = Instant::now();
        let mut hosts: Vec<&str> = self.parked.iter().map(|(h, _)| h.as_str()).collect();
        hosts.sort_unstable();
        hosts.dedup();
        let until = (self.blame.crawler_wait(now).into_iter())
            .chain(hosts.iter().filter_map(|h| self.blame.host_wait(h, now)))
            .min();
        Some(Waiting {
            secs: until.map_or(0.0, |u| {
                u.saturating_duration_since(now).as_secs_f64().ceil()
            }),
            hosts: hosts.len(),
        })
    }

    /// The failing hosts in words (at most `words::LISTED`), and how many there are.
    pub(super) fn failing(&self) -> (Vec<super::words::HostTrouble>, usize) {
        let now = Instant::now();
        self.troubles.listed(|h| {
            self.blame
                .host_wait(h, now)
                .map(|u| u.saturating_duration_since(now))
        })
    }

    /// Fetches `w` now, or parks it when its host or the crawler is backing off.
    pub(super) fn dispatch(&mut self, w: Work) {
        let now = Instant::now();
        let host = host_of(&w);
        if self.forsaken.contains(&host) {
            self.given_up.push(given_up(w.oid));
            return;
        }
        if self.blame.crawler_wait(now).is_some() || self.blame.host_wait(&host, now).is_some() {
            self.parked.push((host, w));
            return;
        }
        self.out.insert(w.oid, w.clone());
        let (sh, tx, sem) = (self.sh.clone(), self.tx.clone(), self.sem.clone());
        self.tasks.spawn(async move {
            let done = fetch_one(sh, w, sem)
                .instrument(tracing::debug_span!("fetch"))
                .await;
            let _ = tx
                .send(done)
                .instrument(tracing::debug_span!("fetch.send"))
                .await;
        });
    }

    /// The user gives up on `hosts`: their parked work, and any of theirs checked out later,
    /// is given up without a fetch.
    pub(super) fn give_up(&mut self, hosts: Vec<String>) {
        self.forsaken.extend(hosts);
        let (gone, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut self.parked)
            .into_iter()
            .partition(|(h, _)| self.forsaken.contains(h));
        self.parked = keep;
        // Each host keeps its own cause in the failing list (refused, timed out...).
        for (_, w) in gone {
            self.given_up.push(given_up(w.oid));
        }
    }

    /// Outcomes of work given up without a fetch since the last call, after giving up on the
    /// hosts the user gave up on meanwhile (`rx`).
    pub(super) fn take_given_up(
        &mut self,
        rx: Option<&super::config::GivenUpHosts>,
    ) -> Vec<Outcome> {
        let hosts: Vec<String> = match rx {
            Some(rx) => {
                let mut rx = rx.lock().unwrap_or_else(|p| p.into_inner());
                std::iter::from_fn(|| rx.try_recv().ok())
                    .flatten()
                    .collect()
            }
            None => Vec::new(),
        };
        if !hosts.is_empty() {
            self.give_up(hosts);
        }
        std::mem::take(&mut self.given_up)
    }

    /// Dispatches the parked work whose backoff has ended.
    pub(super) fn unpark(&mut self) {
        let now = Instant::now();
        if self.parked.is_empty() || self.blame.crawler_wait(now).is_some() {
            return;
        }
        let (ready, wait): (Vec<_>, Vec<_>) = std::mem::take(&mut self.parked)
            .into_iter()
            .partition(|(h, _)| self.blame.host_wait(h, now).is_none());
        self.parked = wait;
        for (_, w) in ready {
            self.dispatch(w);
        }
    }

    /// Waits up to `tick` for a result; `None` when none came.
    pub(super) async fn next(&mut self, tick: Duration) -> Option<Done> {
        if self.out.is_empty() {
            tokio::time::sleep(tick).await;
            return None;
        }
        tokio::time::timeout(tick, self.rx.recv()).await.ok()?
    }

    /// A result that is already waiting.
    pub(super) fn try_next(&mut self) -> Option<Done> {
        self.rx.try_recv().ok()
    }

    /// Blames a result: the outcome to record, or `None` when the URL was parked for its
    /// host's or the crawler's backoff (its tries unspent).
    pub(super) fn settle(&mut self, d: Done) -> Option<Outcome> {
        let Some(w) = self.out.remove(&d.outcome.oid) else {
            return Some(d.outcome);
        };
        match (&d.outcome.status, &d.outcome.error) {
            (DocStatus::Fetched, _) => self.troubles.fetched(&d.host),
            (_, Some(kind)) => self.troubles.failed(&d.host, &w.url, kind),
            _ => {}
        }
        if d.answered {
            self.blame.success(&d.host);
        }
        let Some(cause) = &d.cause else {
            return Some(d.outcome);
        };
        match self.blame.failure(&d.host, cause, Instant::now()) {
            Fault::Url => Some(d.outcome),
            Fault::Host | Fault::Crawler => {
                if let Some(kind) = &d.outcome.error {
                    *self.deferred.entry(kind.clone()).or_default() += 1;
                }
                if cause_counts_a_request(cause) {
                    // The request never reached the host: it does not count against its cap.
                    let mut ph = self.sh.per_host.lock().unwrap_or_else(|p| p.into_inner());
                    ph.give_back(&d.host);
                }
                self.parked.push((d.host, w));
                None
            }
        }
    }

    /// Cancels every fetch (politeness waits included) and returns the row ids of all work
    /// not recorded: in flight, finished but unread, and parked.
    pub(super) async fn abort(&mut self) -> Vec<PageId> {
        self.tasks.abort_all();
        while self.tasks.join_next().await.is_some() {}
        let mut oids: Vec<PageId> = self.out.drain().map(|(oid, _)| oid).collect();
        oids.extend(self.parked.drain(..).map(|(_, w)| w.oid));
        oids
    }

    /// Reaps finished task handles (their results went through the channel).
    pub(super) fn reap(&mut self) {
        while self.tasks.try_join_next().is_some() {}
    }
}

/// The error kind of work the user gave up on.
const GIVEN_UP: &str = "given-up";

/// The outcome of work given up on without a fetch: final, not retried.
fn given_up(oid: PageId) -> Outcome {
    Outcome {
        oid,
        status: DocStatus::Failed,
        error: Some(GIVEN_UP.to_owned()),
        log_relevance: f64::NEG_INFINITY,
        ..Outcome::default()
    }
}

/// Whether a failure with this cause came after the per-host page cap counted the request.
fn cause_counts_a_request(c: &super::blame::Cause) -> bool {
    use super::blame::Cause;
    matches!(
        c,
        Cause::Proxy(_) | Cause::Connect | Cause::Dns | Cause::Timeout
    )
}
