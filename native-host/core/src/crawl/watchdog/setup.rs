//! What a crawl opens at its start and closes at its end: the state its workers share (the
//! fetcher, robots.txt, the judge, politeness slots), the WARC writer, the fetch log and the
//! first apprentice.

use super::super::worker::Shared;
use super::super::{blocking, policy, CrawlConfig, CrawlError, Judge};
use crate::fetch::Fetcher;
use crate::robots::RobotsCache;
use crate::store::CrawlDb;
use forager_classifier::apprentice::Apprentice;
use forager_classifier::Classifier;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use tokio::task::JoinHandle;

/// The archive being written beside the crawl, if it records one.
pub(super) type WarcTask = Option<JoinHandle<std::io::Result<Vec<PathBuf>>>>;

/// The state the workers share with the loop, and the WARC writer's task.
pub(super) fn shared<S: CrawlDb>(
    config: &CrawlConfig,
    store: &S,
    classifier: Arc<Classifier>,
    initial: Option<Apprentice>,
) -> Result<(Arc<Shared>, WarcTask), CrawlError> {
    let fetcher =
        Fetcher::new(config.fetch.clone()).map_err(|e| CrawlError::Fetcher(e.to_string()))?;
    let (warc_tx, warc_task) = warc_writer(config);
    let not_relevant = (config.judge_updates.as_ref())
        .map(|rx| rx.borrow().not_relevant.clone())
        .unwrap_or_default();
    let sh = Arc::new(Shared {
        warc: Mutex::new(warc_tx),
        fetcher,
        robots: RobotsCache::new(crate::robots::AGENT)
            .retry_unavailable_after(config.blame.backoff),
        judge: RwLock::new(Judge {
            classifier,
            not_relevant,
        }),
        config: config.clone(),
        next_slot: Mutex::new(super::super::worker::slots_from_wall(&store.host_slots()?)),
        per_host: Mutex::default(),
        apprentice: RwLock::new(Arc::new(initial.unwrap_or_default())),
        at_robots: std::sync::atomic::AtomicUsize::new(0),
    });
    Ok((sh, warc_task))
}

/// Waits until the archive has written out the records of every page fetched so far (each
/// worker hands its exchange over before its outcome), so a killed crawl never has a
/// committed page without its WARC records. A failed writer is reported at the end.
pub(super) async fn archive_barrier(
    archive: Option<tokio::sync::mpsc::Sender<crate::warc::Archived>>,
) {
    if let Some(tx) = archive {
        let (done, written) = tokio::sync::oneshot::channel();
        if tx.send(crate::warc::Archived::Flush(done)).await.is_ok() {
            let _ = written.await;
        }
    }
}

/// The WARC writer of a crawl that records one: a bounded channel to a blocking task.
#[allow(clippy::type_complexity)]
fn warc_writer(
    config: &CrawlConfig,
) -> (
    Option<tokio::sync::mpsc::Sender<crate::warc::Archived>>,
    Option<JoinHandle<std::io::Result<Vec<PathBuf>>>>,
) {
    let Some(c) = config.warc.clone() else {
        return (None, None);
    };
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    let task = tokio::task::spawn_blocking(move || crate::warc::archive(c, rx));
    (Some(tx), Some(task))
}

/// The fetch log, rewritten from the database first so it is exact even after a crash that
/// came between a commit and the log write.
pub(super) fn fetch_log(
    config: &CrawlConfig,
    store: &impl CrawlDb,
) -> Result<Option<std::io::BufWriter<std::fs::File>>, CrawlError> {
    let Some(p) = &config.fetch_log else {
        return Ok(None);
    };
    let io = |e: std::io::Error| CrawlError::FetchLog(p.display().to_string(), e);
    // The command checked the path with the user (`--force`); still never a link or a FIFO.
    let file = crate::output::create(p, crate::output::Policy::data(true))
        .map_err(|e| io(std::io::Error::other(e.to_string())))?;
    let mut w = std::io::BufWriter::new(file);
    for u in store.fetched_urls()? {
        writeln!(w, "{u}").map_err(io)?;
    }
    w.flush().map_err(io)?;
    Ok(Some(w))
}

/// The apprentice a crawl learns on: the offline-trained one, or on resume the one trained on
/// the instances recorded (none without an apprentice).
pub(super) async fn first_learner<S: CrawlDb>(
    store: &mut Option<S>,
    apprentice: bool,
    initial: Option<Apprentice>,
) -> Result<Apprentice, CrawlError> {
    Ok(match (apprentice, initial) {
        (true, Some(initial)) => initial,
        (true, None) => {
            blocking(store, |s| {
                s.apprentice_evidence().map(policy::trained_apprentice)
            })
            .await?
        }
        (false, _) => Apprentice::default(),
    })
}
