//! Recording a batch of fetch outcomes on PostgreSQL in one transaction: statuses, compressed
//! texts, the fetch order (a sequence shared by every worker), redirect targets, and the new
//! links of the whole batch in one batched insert.

use super::frontier::{enqueue, Found};
use super::Conn;
use crate::store::{
    features_from_blob, now, ApprenticeEvidence, DocStatus, FetchedPage, NewUrl, Outcome, Recorded,
    Result,
};
use postgres::Transaction;
use r2d2_postgres::postgres;

/// The advisory lock key of recording a batch ("recd").
pub(super) const RECORD_LOCK: i64 = 0x7265_6364;

/// Records a batch of outcomes in one transaction; fetched pages get the next fetch sequence
/// numbers, in batch order.
pub(super) fn record(c: &mut Conn, batch: &[Outcome]) -> Result<Recorded> {
    let mut tx = c.transaction()?;
    // One batch at a time across workers: batches lock shared rows (servers, link targets) in
    // orders no sort can fix, and the server broke the resulting deadlocks by aborting them.
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&RECORD_LOCK])?;
    let mut rec = Recorded::default();
    let mut found: Vec<Found<'_>> = Vec::new();
    let mut searchable: Vec<&Outcome> = Vec::new();
    for o in batch {
        let sid = if o.revisit {
            rec.revisited += 1;
            let (sid, changed) = revisit(&mut tx, o)?;
            rec.changed += usize::from(changed);
            searchable.extend(changed.then_some(o));
            sid
        } else {
            searchable.extend((o.status == DocStatus::Fetched).then_some(o));
            Some(attempt(&mut tx, o, &mut rec)?)
        };
        if let Some(sid) = sid {
            found.extend(o.links.iter().map(|l| (Some((o.oid.raw(), sid)), l)));
        }
    }
    enqueue(&mut tx, &found, &mut rec.instances)?;
    super::search::index_pages(&mut tx, &searchable)?;
    tx.commit()?;
    Ok(rec)
}

/// The LZ4 blob stored for a page's visible text.
fn compressed(text: Option<&String>) -> Option<Vec<u8>> {
    text.map(|t| lz4_flex::compress_prepend_size(t.as_bytes()))
}

/// A revisit refreshes a fetched page (a failed one leaves it as it was); returns the page's
/// server id when its links are to be enqueued, and whether its content had changed.
fn revisit(tx: &mut Transaction<'_>, o: &Outcome) -> Result<(Option<i64>, bool)> {
    if o.status != DocStatus::Fetched {
        tx.execute(
            "UPDATE doc SET revisits = revisits + 1 WHERE oid = $1",
            &[&o.oid.raw()],
        )?;
        return Ok((None, false));
    }
    let old = tx.query_one(
        "SELECT content_hash, sid FROM doc WHERE oid = $1",
        &[&o.oid.raw()],
    )?;
    let (old_hash, sid): (Option<String>, i64) = (old.get(0), old.get(1));
    let changed = old_hash != o.content_hash;
    tx.execute(
        "UPDATE doc SET revisits = revisits + 1, changes = changes + $9,
           content_hash = $2, text = $3, relevance = $4, log_relevance = $5,
           cid = $6, title = $7, fetched_at = $8,
           changed_at = CASE WHEN $9 = 1 THEN $8 ELSE changed_at END
         WHERE oid = $1",
        &[
            &o.oid.raw(),
            &o.content_hash,
            &compressed(o.text.as_ref()),
            &o.relevance,
            &o.log_relevance,
            &o.cid,
            &o.title,
            &now(),
            &i64::from(changed),
        ],
    )?;
    Ok((Some(sid), changed))
}

/// Records a first fetch (or a failed attempt) of a frontier entry; returns its server id.
fn attempt(tx: &mut Transaction<'_>, o: &Outcome, rec: &mut Recorded) -> Result<i64> {
    let fetched = o.status == DocStatus::Fetched;
    let redirects = (!o.redirects.is_empty()).then(|| o.redirects.join(" "));
    let row = tx.query_one(
        "UPDATE doc SET status = $2, num_tries = num_tries + 1, http_status = $3,
           relevance = CASE WHEN $14 THEN $4 ELSE relevance END,
           log_relevance = $5, cid = $6, title = $7, text = $8, content_hash = $9,
           error = $10, fetched_at = $11,
           fetch_seq = CASE WHEN $14 THEN nextval('fetch_seq') ELSE fetch_seq END,
           first_fetched_at = CASE WHEN $14 THEN coalesce(first_fetched_at, $11)
                                   ELSE first_fetched_at END,
           final_url = $12, redirects = $13
         WHERE oid = $1
         RETURNING url, sid, num_tries - 1, fetch_seq",
        &[
            &o.oid.raw(),
            &o.status.code(),
            &o.http_status,
            &o.relevance,
            &o.log_relevance,
            &o.cid,
            &o.title,
            &compressed(o.text.as_ref()),
            &o.content_hash,
            &o.error,
            &now(),
            &o.final_url,
            &redirects,
            &fetched,
        ],
    )?;
    let (url, sid, tries): (String, i64, i64) = (row.get(0), row.get(1), row.get(2));
    mark_redirect_target(tx, o, &mut rec.instances)?;
    if fetched {
        rec.fetched.push(FetchedPage {
            seq: row.get(3),
            url,
            relevance: o.relevance,
            title: o.title.clone(),
        });
        if tries == 0 {
            instances_into(tx, o, &mut rec.instances)?;
        }
        tx.execute(
            "UPDATE server SET crawled = crawled + 1 WHERE sid = $1",
            &[&sid],
        )?;
    }
    Ok(sid)
}

/// The page a redirect landed on is this page: it must not be fetched again.
fn mark_redirect_target(
    tx: &mut Transaction<'_>,
    o: &Outcome,
    instances: &mut Vec<ApprenticeEvidence>,
) -> Result<()> {
    let Some(target) = (o.final_url.as_deref()).and_then(|u| crate::canon::parse(u).ok()) else {
        return Ok(());
    };
    let alias = NewUrl {
        score: 0.0,
        ..NewUrl::seed(&target)
    };
    enqueue(tx, &[(None, &alias)], instances)?;
    tx.execute(
        "UPDATE doc SET status = $2, error = 'redirect-target' WHERE url = $1 AND status = 0",
        &[&alias.url, &DocStatus::Excluded.code()],
    )?;
    Ok(())
}

/// Links into a newly fetched page from pages fetched earlier become training instances.
fn instances_into(
    tx: &mut Transaction<'_>,
    o: &Outcome,
    instances: &mut Vec<ApprenticeEvidence>,
) -> Result<()> {
    for r in tx.query(
        "SELECT features FROM link WHERE oid_dst = $1 AND features IS NOT NULL",
        &[&o.oid.raw()],
    )? {
        instances.push((features_from_blob(r.get(0)), o.relevance));
    }
    Ok(())
}
