//! What the host tells the browser unasked: crawl progress, newly fetched pages and hubs,
//! read from the crawl database and pumped to the writer.

use super::*;

/// Counters and alarms of the crawl database, when there is one.
pub(super) fn db_progress(paths: &HostPaths) -> Option<Progress> {
    if !paths.db().exists() {
        return None;
    }
    let conn = read_only(paths).ok()?;
    let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).ok();
    let relevance = crate::report::relevance_in_fetch_order(&conn).ok()?;
    let frontier = count("SELECT count(*) FROM doc WHERE status = 0")?;
    let recent = &relevance[relevance.len().saturating_sub(100)..];
    Some(Progress {
        fetched: count("SELECT count(*) FROM doc WHERE status = 2")? as u64,
        frontier,
        recent_relevance: recent.iter().sum::<f64>() / recent.len().max(1) as f64,
        alarms: crate::report::alarms_of(&conn, &relevance, frontier).ok()?,
        given_up: count("SELECT count(*) FROM doc WHERE status IN (3, 4)")? as u64,
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

pub(super) fn read_only(
    paths: &HostPaths,
) -> Result<rusqlite::Connection, crate::store::StoreError> {
    Store::open_read_only(&paths.db())
}

pub(super) fn recent_pages(
    paths: &HostPaths,
    limit: i64,
) -> Result<Vec<Value>, crate::store::StoreError> {
    if !paths.db().exists() {
        return Ok(Vec::new());
    }
    let conn = read_only(paths)?;
    let mut st = conn.prepare(
        "SELECT fetch_seq, url, relevance, title FROM doc WHERE fetch_seq IS NOT NULL
         ORDER BY fetch_seq DESC LIMIT ?1",
    )?;
    let rows = st.query_map([limit], |r| {
        let title = r
            .get::<_, Option<String>>(3)?
            .map(|t| clip(&t, MAX_TITLE_CHARS));
        Ok(
            json!({"seq": r.get::<_, i64>(0)?, "url": r.get::<_, String>(1)?,
            "relevance": r.get::<_, f64>(2)?, "title": title}),
        )
    })?;
    // Newest first until the reply's budget is spent: it must fit in one frame.
    let mut v = Vec::new();
    let mut size = 0;
    for row in rows {
        let row = row?;
        size += row.to_string().len();
        if size > EVENT_BYTES * 3 {
            break;
        }
        v.push(row);
    }
    v.reverse();
    Ok(v)
}

pub(super) fn hubs(paths: &HostPaths, top: usize) -> Result<Value, crate::store::StoreError> {
    if !paths.db().exists() {
        return Ok(json!({"hubs": [], "authorities": []}));
    }
    let conn = read_only(paths)?;
    let list = |table: &str| -> Result<Vec<Value>, crate::store::StoreError> {
        // Zero scores rank nothing: they are left out.
        let mut st = conn.prepare(&format!(
            "SELECT d.url, t.score, coalesce(d.title, '') FROM {table} t JOIN doc d ON d.oid = t.oid
             WHERE t.score > 0 ORDER BY t.score DESC LIMIT ?1"
        ))?;
        let rows = st.query_map([top as i64], |r| {
            Ok(
                json!({"url": r.get::<_, String>(0)?, "score": r.get::<_, f64>(1)?,
                "title": r.get::<_, String>(2)?}),
            )
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    };
    Ok(json!({"hubs": list("hub")?, "authorities": list("auth")?}))
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
        let seq = read_only(paths)
            .ok()
            .and_then(|c| {
                c.query_row("SELECT coalesce(max(fetch_seq), 0) FROM doc", [], |r| {
                    r.get(0)
                })
                .ok()
            })
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
    out: &mpsc::Sender<Value>,
    cursor: &mut Cursor,
) -> Result<(), crate::store::StoreError> {
    let conn = read_only(paths)?;
    let mut st = conn.prepare(
        "SELECT fetch_seq, url, relevance, title FROM doc WHERE fetch_seq > ?1
         ORDER BY fetch_seq LIMIT 2000",
    )?;
    let rows = st.query_map([cursor.seq], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, f64>(2)?,
            r.get::<_, Option<String>>(3)?,
        ))
    })?;
    // Events are cut to stay well under the browser's 1 MB frame limit, whatever the titles.
    let mut pages = Vec::new();
    let mut size = 0;
    for row in rows {
        let (seq, url, relevance, title) = row?;
        let title = title.map(|t| clip(&t, MAX_TITLE_CHARS));
        size += url.len() + title.as_ref().map_or(0, String::len) + 64;
        pages.push(json!({"seq": seq, "url": url, "relevance": relevance, "title": title}));
        cursor.seq = seq;
        if size > EVENT_BYTES {
            let _ =
                out.blocking_send(json!({"type": "pages", "pages": std::mem::take(&mut pages)}));
            size = 0;
        }
    }
    if !pages.is_empty() {
        let _ = out.blocking_send(json!({"type": "pages", "pages": pages}));
    }
    let at: Option<f64> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'distilled_at'",
            [],
            |r| r.get(0),
        )
        .ok();
    if at.is_some() && at != cursor.distilled_at {
        cursor.distilled_at = at;
        if let Ok(h) = hubs(paths, 20) {
            let _ = out.blocking_send(
                json!({"type": "hubs", "hubs": h["hubs"], "authorities": h["authorities"]}),
            );
        }
    }
    Ok(())
}

/// Streams `pages` and `hubs` events while a crawl runs.
pub(super) async fn pump_events(
    paths: HostPaths,
    out: mpsc::Sender<Value>,
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
