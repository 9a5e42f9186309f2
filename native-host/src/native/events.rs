//! What the host tells the browser unasked: crawl progress, and the newly fetched pages and
//! hubs the crawl reports as it records them (`CrawlEvent`), pumped to the writer.

use super::*;

/// Counters and alarms of the crawl database, when there is one (counted again only when
/// its files changed: see [`Counted`]).
pub(super) fn db_progress(paths: &HostPaths) -> Option<Progress> {
    static COUNTED: Counted = Counted::new();
    COUNTED.progress(paths)
}

/// The size and modification time of a database's files (the database and its WAL).
type Stamp = [(u64, Option<std::time::SystemTime>); 2];

fn stamp(db: &std::path::Path) -> Stamp {
    let of = |p: PathBuf| std::fs::metadata(p).map_or((0, None), |m| (m.len(), m.modified().ok()));
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    [of(db.to_path_buf()), of(PathBuf::from(wal))]
}

/// The crawl database's counters as last counted, reused while its files are unchanged:
/// counting reads every row (seconds at millions of URLs), and the browser asks for the
/// status of an idle crawl often.
pub(super) struct Counted {
    last: Mutex<Option<(PathBuf, Stamp, Progress)>>,
    /// Times the database was counted.
    counts: std::sync::atomic::AtomicU64,
}

impl Counted {
    /// Nothing counted yet.
    pub(super) const fn new() -> Self {
        Counted {
            last: Mutex::new(None),
            counts: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// The counters and alarms of the database at `paths`, counted if it changed since.
    pub(super) fn progress(&self, paths: &HostPaths) -> Option<Progress> {
        if let Locator::Postgres(_) = paths.locator() {
            // A shared crawl changes with every worker's record: counted each time.
            return count(paths);
        }
        let db = paths.db();
        if !db.exists() {
            return None;
        }
        // Stamped before counting: a write meanwhile makes the next call count again.
        let now = stamp(&db);
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, _, p)) = (last.as_ref()).filter(|(d, s, _)| *d == db && *s == now) {
            return Some(p.clone());
        }
        let p = count(paths)?;
        self.counts
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        *last = Some((db, now, p.clone()));
        Some(p)
    }
}

/// Counts the database's URLs and reads its relevance history.
fn count(paths: &HostPaths) -> Option<Progress> {
    let ro = read_only(paths).ok()?;
    let db = &*ro;
    let counts = db.counts().ok()?;
    let relevance = db.relevance_in_fetch_order().ok()?;
    let recent = &relevance[relevance.len().saturating_sub(100)..];
    Some(Progress {
        fetched: counts.fetched as u64,
        frontier: counts.frontier,
        recent_relevance: recent.iter().sum::<f64>() / recent.len().max(1) as f64,
        alarms: db.alarms(&relevance, counts.frontier),
        given_up: counts.given_up as u64,
        ..Progress::default()
    })
}

/// Runs blocking work without stalling the runtime's other tasks (the crawl, the event pump).
pub(super) fn off_the_runtime<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// Where the host's crawl database is.
pub(super) fn locator(paths: &HostPaths) -> Locator {
    paths.locator()
}

/// The host's crawl database, read-only.
pub(super) fn read_only(
    paths: &HostPaths,
) -> Result<Box<dyn Reader + Send>, crate::store::StoreError> {
    crate::store::open_read(&locator(paths))
}

/// A fetched page as the browser gets it (the title clipped).
fn page_view(p: FetchedPage) -> PageView {
    PageView {
        seq: p.seq,
        url: p.url,
        relevance: p.relevance,
        title: p.title.map(|t| clip(&t, MAX_TITLE_CHARS)),
    }
}

/// The bytes a page takes in an event or reply, as JSON (escaped).
fn page_size(p: &PageView) -> usize {
    serde_json::to_vec(p).map_or(usize::MAX / 4, |b| b.len()) + 1
}

/// The last `limit` fetched pages, oldest first, as many as fit one reply.
pub(super) fn recent_pages(
    paths: &HostPaths,
    limit: i64,
) -> Result<Vec<PageView>, crate::store::StoreError> {
    if !paths.has_crawl() {
        return Ok(Vec::new());
    }
    let rows = read_only(paths)?.latest_pages(limit)?;
    // Newest first until the reply's budget is spent: it must fit in one frame.
    let mut v = Vec::new();
    let mut size = 0;
    for row in rows.into_iter().map(page_view) {
        size += page_size(&row);
        if size > EVENT_BYTES * 3 {
            break;
        }
        v.push(row);
    }
    v.reverse();
    Ok(v)
}

/// The last distillation's top hubs and authorities (zero scores left out), with titles.
pub(super) fn hubs(paths: &HostPaths, top: usize) -> Result<HubsView, crate::store::StoreError> {
    if !paths.has_crawl() {
        return Ok(HubsView::default());
    }
    let ro = read_only(paths)?;
    let list = |ranking| -> Result<Vec<HubView>, crate::store::StoreError> {
        Ok((ro.ranked(ranking, Some(top))?.into_iter())
            .map(|p| HubView {
                url: p.url,
                score: p.score,
                title: clip(&p.title, MAX_TITLE_CHARS),
                relevant_links: p.relevant_links,
                fetched_links: p.fetched_links,
            })
            .collect::<Vec<_>>())
    };
    // Each list as many as fit half a frame, whatever the URLs and titles.
    Ok(HubsView {
        hubs: fit(list(Ranking::Hubs)?, LIST_BYTES * 3 / 2).0,
        authorities: fit(list(Ranking::Authorities)?, LIST_BYTES * 3 / 2).0,
    })
}

/// How far the event stream has got: the last page sent, the last distillation sent.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Cursor {
    pub(super) seq: i64,
    pub(super) distilled_at: Option<f64>,
}

impl Cursor {
    /// Starts after the pages already in the database (a resumed crawl).
    pub(super) fn start(paths: &HostPaths) -> Self {
        let seq = (read_only(paths).ok())
            .and_then(|db| db.last_fetch_seq().ok())
            .unwrap_or(0);
        Cursor {
            seq,
            distilled_at: None,
        }
    }
}

/// Sends the pages fetched since the cursor, read from the database, and, when the distiller
/// ran again, the hubs: the catch-up after events were dropped, and the last flush of a crawl.
pub(super) fn flush_events(
    paths: &HostPaths,
    out: &mpsc::Sender<Outgoing>,
    cursor: &mut Cursor,
) -> Result<(), crate::store::StoreError> {
    let ro = read_only(paths)?;
    let db = &*ro;
    loop {
        let rows = db.pages_since(cursor.seq, 2000)?;
        if rows.is_empty() {
            break;
        }
        let pages: Vec<PageView> = rows.into_iter().map(page_view).collect();
        send_pages(out, cursor, pages);
    }
    let at = db.distilled_at();
    if at.is_some() && at != cursor.distilled_at {
        cursor.distilled_at = at;
        send_hubs(paths, out);
    }
    Ok(())
}

/// Sends `pages` (those after the cursor) in events cut to stay well under the browser's 1 MB
/// frame limit, whatever the titles; blocks while the browser is behind.
fn send_pages(out: &mpsc::Sender<Outgoing>, cursor: &mut Cursor, pages: Vec<PageView>) {
    let mut batch = Vec::new();
    let mut size = 0;
    for p in pages {
        if p.seq <= cursor.seq {
            continue; // sent already
        }
        cursor.seq = p.seq;
        size += page_size(&p);
        batch.push(p);
        if size > EVENT_BYTES {
            let pages = std::mem::take(&mut batch);
            let _ = out.blocking_send(Outgoing::Pages { pages });
            size = 0;
        }
    }
    if !batch.is_empty() {
        let _ = out.blocking_send(Outgoing::Pages { pages: batch });
    }
}

/// Sends the last distillation's top hubs and authorities.
fn send_hubs(paths: &HostPaths, out: &mpsc::Sender<Outgoing>) {
    if let Ok(h) = hubs(paths, 20) {
        let _ = out.blocking_send(Outgoing::Hubs(h));
    }
}

/// Passes one event of the crawl on to the browser. Pages come as the crawl recorded them;
/// a gap in their sequence numbers (events dropped while the browser was behind) is filled
/// from the database first, so the browser sees every page once, in order.
pub(super) fn forward(
    paths: &HostPaths,
    out: &mpsc::Sender<Outgoing>,
    cursor: &mut Cursor,
    ev: CrawlEvent,
) {
    match ev {
        CrawlEvent::Pages(pages) => {
            let first = pages.first().map_or(i64::MAX, |p| p.seq);
            if first > cursor.seq + 1 {
                let _ = flush_events(paths, out, cursor);
            }
            send_pages(out, cursor, pages.into_iter().map(page_view).collect());
        }
        CrawlEvent::Distilled => {
            let at = read_only(paths).ok().and_then(|db| db.distilled_at());
            cursor.distilled_at = at.or(cursor.distilled_at);
            send_hubs(paths, out);
        }
    }
}

/// Streams `pages` and `hubs` events as the crawl reports them.
pub(super) async fn pump_events(
    paths: HostPaths,
    out: mpsc::Sender<Outgoing>,
    cursor: Arc<Mutex<Cursor>>,
    mut events: mpsc::Receiver<CrawlEvent>,
) {
    while let Some(ev) = events.recv().await {
        let (p, o, c) = (paths.clone(), out.clone(), cursor.clone());
        // Off the runtime: a catch-up reads the database, and sends block on the bounded queue.
        let _ = tokio::task::spawn_blocking(move || {
            let mut c = c.lock().unwrap_or_else(|e| e.into_inner());
            forward(&p, &o, &mut c, ev);
        })
        .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{DocStatus, NewUrl, Outcome};

    #[test]
    fn an_idle_database_is_counted_once_and_again_when_it_changes() {
        let dir = std::env::temp_dir().join(format!("forager-counted-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let paths = HostPaths { dir: dir.clone() };
        let counted = Counted::new();
        assert!(counted.progress(&paths).is_none(), "no database yet");
        let mut store = Store::open(&paths.db()).unwrap();
        let seeds: Vec<NewUrl> = (0..5)
            .map(|i| NewUrl::seed(&url::Url::parse(&format!("http://p{i}.test/")).unwrap()))
            .collect();
        store.add_seeds(&seeds).unwrap();
        let work = store.checkout(10).unwrap();
        let fetched = |i: usize| Outcome {
            oid: work[i].oid,
            status: DocStatus::Fetched,
            relevance: 0.5,
            ..Outcome::default()
        };
        store.record(&[fetched(0), fetched(1)]).unwrap();
        let times = || counted.counts.load(std::sync::atomic::Ordering::Relaxed);
        let p = counted.progress(&paths).unwrap();
        assert_eq!((p.fetched, times()), (2, 1));
        for _ in 0..3 {
            assert_eq!(counted.progress(&paths).unwrap().fetched, 2);
        }
        assert_eq!(times(), 1, "an unchanged database is not counted again");
        // The crawl (here, another connection) records more: counted again, the new figures.
        store.record(&[fetched(2), fetched(3), fetched(4)]).unwrap();
        let p = counted.progress(&paths).unwrap();
        assert_eq!((p.fetched, times()), (5, 2));
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
