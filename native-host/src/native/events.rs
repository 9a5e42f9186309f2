//! What the host tells the browser unasked: crawl progress, newly fetched pages and hubs,
//! read from the crawl database and pumped to the writer.

use super::*;

/// Counters and alarms of the crawl database, when there is one.
pub(super) fn db_progress(paths: &HostPaths) -> Option<Progress> {
    if !paths.db().exists() {
        return None;
    }
    let ro = read_only(paths).ok()?;
    let db = ro.read();
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

/// The host's crawl database, read-only.
pub(super) fn read_only(paths: &HostPaths) -> Result<ReadOnly, crate::store::StoreError> {
    ReadOnly::open(&paths.db())
}

/// A fetched page as the browser gets it (the title clipped).
fn page_view(p: PageRow) -> PageView {
    PageView {
        seq: p.seq,
        url: p.url,
        relevance: p.relevance,
        title: p.title.map(|t| clip(&t, MAX_TITLE_CHARS)),
    }
}

/// Roughly the bytes a page takes in an event (titles are clipped to `MAX_TITLE_CHARS`).
fn page_size(p: &PageView) -> usize {
    p.url.len() + p.title.as_ref().map_or(0, |t| t.len()) + 64
}

/// The last `limit` fetched pages, oldest first, as many as fit one reply.
pub(super) fn recent_pages(
    paths: &HostPaths,
    limit: i64,
) -> Result<Vec<PageView>, crate::store::StoreError> {
    if !paths.db().exists() {
        return Ok(Vec::new());
    }
    let rows = read_only(paths)?.read().latest_pages(limit)?;
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
    if !paths.db().exists() {
        return Ok(HubsView::default());
    }
    let ro = read_only(paths)?;
    let list = |ranking| -> Result<Vec<HubView>, crate::store::StoreError> {
        Ok((ro.read().ranked(ranking, Some(top))?.into_iter())
            .map(|p| HubView {
                url: p.url,
                score: p.score,
                title: p.title,
            })
            .collect())
    };
    Ok(HubsView {
        hubs: list(Ranking::Hubs)?,
        authorities: list(Ranking::Authorities)?,
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
            .and_then(|db| db.read().last_fetch_seq().ok())
            .unwrap_or(0);
        Cursor {
            seq,
            distilled_at: None,
        }
    }
}

/// Sends the pages fetched since the cursor and, when the distiller ran again, the hubs.
pub(super) fn flush_events(
    paths: &HostPaths,
    out: &mpsc::Sender<Outgoing>,
    cursor: &mut Cursor,
) -> Result<(), crate::store::StoreError> {
    let ro = read_only(paths)?;
    let db = ro.read();
    // Events are cut to stay well under the browser's 1 MB frame limit, whatever the titles.
    let mut pages = Vec::new();
    let mut size = 0;
    for p in db.pages_since(cursor.seq, 2000)? {
        cursor.seq = p.seq;
        let p = page_view(p);
        size += page_size(&p);
        pages.push(p);
        if size > EVENT_BYTES {
            let pages = std::mem::take(&mut pages);
            let _ = out.blocking_send(Outgoing::Pages { pages });
            size = 0;
        }
    }
    if !pages.is_empty() {
        let _ = out.blocking_send(Outgoing::Pages { pages });
    }
    let at = db.distilled_at();
    if at.is_some() && at != cursor.distilled_at {
        cursor.distilled_at = at;
        if let Ok(h) = hubs(paths, 20) {
            let _ = out.blocking_send(Outgoing::Hubs(h));
        }
    }
    Ok(())
}

/// Streams `pages` and `hubs` events while a crawl runs.
pub(super) async fn pump_events(
    paths: HostPaths,
    out: mpsc::Sender<Outgoing>,
    cursor: Arc<Mutex<Cursor>>,
) {
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (p, o, c) = (paths.clone(), out.clone(), cursor.clone());
        let _ = tokio::task::spawn_blocking(move || {
            let mut c = c.lock().unwrap_or_else(|e| e.into_inner());
            let _ = flush_events(&p, &o, &mut c);
        })
        .await;
    }
}
