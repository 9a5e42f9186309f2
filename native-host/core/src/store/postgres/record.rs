//! Recording a batch of fetch outcomes on PostgreSQL in one transaction: statuses, compressed
//! texts, the fetch order (a sequence shared by every worker), redirect targets, and the new
//! links of the whole batch in one batched insert.
//!
//! Batches of many workers are recorded side by side: no global lock serialises them (it was
//! held across a dozen client round trips, and a CPU-starved client kept every other worker
//! waiting). They take row locks in one order instead, waiting on nothing a waiter could
//! hold: new `server` rows by host, `doc` rows by URL (inserted, then raised or excluded in
//! one ordered pass; rows in flight or fetched are never locked there), then the batch's own
//! rows (no other batch locks them: a batch inserting a link to a page being recorded waits
//! for that batch, which has passed its URL phase), links by key, and the batch's own
//! `server` rows by id. `server` rows are locked `FOR NO KEY UPDATE` (a `doc` insert shares
//! its server's key). A deadlock that slips through anyway is run again by the door.

use super::frontier::{enqueue_urls, link, Found};
use super::Conn;
use crate::store::{
    features_from_blob, now, DocStatus, FetchedPage, NewUrl, Outcome, Recorded, Result, StoreError,
};
use postgres::Transaction;
use r2d2_postgres::postgres;
use std::collections::{BTreeMap, HashMap};

/// The advisory lock key of recording ("recd"): record batches take it shared (side by
/// side), a job's bulk rewrite of `doc` rows exclusively (rows rewritten in oid order beside
/// a batch's URL order would deadlock).
pub(super) const RECORD_LOCK: i64 = 0x7265_6364;

/// Records a batch of outcomes in one transaction; fetched pages get the next fetch sequence
/// numbers, in batch order. First fetches and failed attempts are written in a few batched
/// statements (not a few per page).
pub(super) fn record(c: &mut Conn, batch: &[Outcome]) -> Result<Recorded> {
    let mut tx = c.transaction()?;
    let firsts: Vec<&Outcome> = batch.iter().filter(|o| !o.revisit).collect();
    let k = (firsts.iter())
        .filter(|o| o.status == DocStatus::Fetched)
        .count();
    let oids: Vec<i64> = batch.iter().map(|o| o.oid.raw()).collect();
    // The shared lock, the fetch order's numbers and the pages' servers in one round trip.
    let start = tx.query_one(
        "SELECT pg_advisory_xact_lock_shared($1),
           ARRAY(SELECT nextval('fetch_seq') FROM generate_series(1, $2::int8)),
           ARRAY(SELECT oid FROM doc WHERE oid = ANY($3) ORDER BY oid),
           ARRAY(SELECT sid FROM doc WHERE oid = ANY($3) ORDER BY oid)",
        &[&RECORD_LOCK, &(k as i64), &oids],
    )?;
    let mut seqs: Vec<i64> = start.get(1);
    seqs.sort_unstable();
    let sid_of: HashMap<i64, i64> = (start.get::<_, Vec<i64>>(2).into_iter())
        .zip(start.get::<_, Vec<i64>>(3))
        .collect();
    let mut crawled: BTreeMap<i64, i64> = BTreeMap::new();
    for o in firsts.iter().filter(|o| o.status == DocStatus::Fetched) {
        if let Some(sid) = sid_of.get(&o.oid.raw()) {
            *crawled.entry(*sid).or_default() += 1;
        }
    }
    // The links of the pages recorded (a revisit's only when it was fetched), and the pages
    // redirects landed on: these pages, excluded from the frontier, never fetched again.
    let mut found: Vec<Found<'_>> = Vec::new();
    for o in batch
        .iter()
        .filter(|o| !o.revisit || o.status == DocStatus::Fetched)
    {
        if let Some(sid) = sid_of.get(&o.oid.raw()) {
            found.extend(o.links.iter().map(|l| (Some((o.oid.raw(), *sid)), l)));
        }
    }
    let aliases: Vec<NewUrl> = (firsts.iter())
        .filter_map(|o| crate::canon::parse(o.final_url.as_deref()?).ok())
        .map(|target| NewUrl {
            score: 0.0,
            ..NewUrl::seed(&target)
        })
        .collect();
    found.extend(aliases.iter().map(|a| (None, a)));
    let excluded: Vec<&str> = aliases.iter().map(|a| a.url.as_str()).collect();
    let at = enqueue_urls(&mut tx, &found, &excluded, &crawled)?;
    let mut rec = Recorded::default();
    attempts(&mut tx, &firsts, &seqs, &mut rec)?;
    let mut searchable: Vec<&Outcome> = Vec::new();
    for o in batch {
        if o.revisit {
            rec.revisited += 1;
            let changed = revisit(&mut tx, o)?;
            rec.changed += usize::from(changed);
            searchable.extend(changed.then_some(o));
        } else {
            searchable.extend((o.status == DocStatus::Fetched).then_some(o));
        }
    }
    link(&mut tx, &found, &at, &mut rec.instances)?;
    count_crawled(&mut tx, &crawled)?;
    super::search::index_pages(&mut tx, &searchable)?;
    tx.commit()?;
    Ok(rec)
}

/// Raises the servers' counts of pages crawled by `crawled` (server id → pages), locking
/// their rows in id order.
fn count_crawled(tx: &mut Transaction<'_>, crawled: &BTreeMap<i64, i64>) -> Result<()> {
    if crawled.is_empty() {
        return Ok(());
    }
    let (sid, n): (Vec<i64>, Vec<i64>) = crawled.iter().map(|(s, n)| (*s, *n)).unzip();
    tx.execute(
        "UPDATE server SET crawled = server.crawled + u.n
         FROM unnest($1::int8[], $2::int8[]) AS u(sid, n)
         WHERE server.sid = u.sid AND server.sid IN (
           SELECT sid FROM server WHERE sid = ANY($1) ORDER BY sid FOR NO KEY UPDATE)",
        &[&sid, &n],
    )?;
    Ok(())
}

/// The columns of a batch of first fetches and failed attempts, as arrays for `unnest`.
#[derive(Default)]
struct Columns {
    oid: Vec<i64>,
    status: Vec<i64>,
    http_status: Vec<Option<i64>>,
    relevance: Vec<f64>,
    log_relevance: Vec<f64>,
    cid: Vec<Option<i64>>,
    title: Vec<Option<String>>,
    text: Vec<Option<Vec<u8>>>,
    content_hash: Vec<Option<String>>,
    error: Vec<Option<String>>,
    final_url: Vec<Option<String>>,
    redirects: Vec<Option<String>>,
    fetched: Vec<bool>,
    seq: Vec<Option<i64>>,
}

impl Columns {
    /// The batch's columns; fetched pages take `seqs` in order.
    fn of(batch: &[&Outcome], seqs: &[i64]) -> Columns {
        let mut c = Columns::default();
        let mut seqs = seqs.iter();
        for o in batch {
            let fetched = o.status == DocStatus::Fetched;
            c.oid.push(o.oid.raw());
            c.status.push(o.status.code());
            c.http_status.push(o.http_status);
            c.relevance.push(o.relevance);
            c.log_relevance.push(o.log_relevance);
            c.cid.push(o.cid);
            c.title.push(o.title.clone());
            c.text.push(compressed(o.text.as_ref()));
            c.content_hash.push(o.content_hash.clone());
            c.error.push(o.error.clone());
            c.final_url.push(o.final_url.clone());
            c.redirects
                .push((!o.redirects.is_empty()).then(|| o.redirects.join(" ")));
            c.fetched.push(fetched);
            c.seq
                .push(if fetched { seqs.next().copied() } else { None });
        }
        c
    }
}

/// Records first fetches and failed attempts of frontier entries (fetched pages numbered
/// `seqs` in order): their rows, the fetch order and training instances.
fn attempts(
    tx: &mut Transaction<'_>,
    batch: &[&Outcome],
    seqs: &[i64],
    rec: &mut Recorded,
) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let c = Columns::of(batch, seqs);
    let rows = tx.query(
        "UPDATE doc SET status = u.status, num_tries = doc.num_tries + 1,
           http_status = u.http_status,
           relevance = CASE WHEN u.fetched THEN u.relevance ELSE doc.relevance END,
           log_relevance = u.log_relevance, cid = u.cid, title = u.title, text = u.text,
           content_hash = u.content_hash, error = u.error, fetched_at = $15,
           fetch_seq = CASE WHEN u.fetched THEN u.seq ELSE doc.fetch_seq END,
           first_fetched_at = CASE WHEN u.fetched THEN coalesce(doc.first_fetched_at, $15)
                                   ELSE doc.first_fetched_at END,
           final_url = u.final_url, redirects = u.redirects
         FROM unnest($1::int8[], $2::int8[], $3::int8[], $4::float8[], $5::float8[],
                     $6::int8[], $7::text[], $8::bytea[], $9::text[], $10::text[],
                     $11::text[], $12::text[], $13::bool[], $14::int8[])
           AS u(oid, status, http_status, relevance, log_relevance, cid, title, text,
                content_hash, error, final_url, redirects, fetched, seq)
         WHERE doc.oid = u.oid
         RETURNING doc.oid, doc.url, doc.sid, doc.num_tries - 1",
        &[
            &c.oid,
            &c.status,
            &c.http_status,
            &c.relevance,
            &c.log_relevance,
            &c.cid,
            &c.title,
            &c.text,
            &c.content_hash,
            &c.error,
            &c.final_url,
            &c.redirects,
            &c.fetched,
            &c.seq,
            &now(),
        ],
    )?;
    // oid → (url, server id, tries before this one)
    let row: HashMap<i64, (String, i64, i64)> = (rows.iter())
        .map(|r| (r.get(0), (r.get(1), r.get(2), r.get(3))))
        .collect();
    if let Some(o) = batch.iter().find(|o| !row.contains_key(&o.oid.raw())) {
        return Err(StoreError::Schema(format!(
            "recording page {}: no such page in the crawl",
            o.oid.raw()
        )));
    }
    fetched_pages(tx, batch, &row, seqs, rec)
}

/// The LZ4 blob stored for a page's visible text.
fn compressed(text: Option<&String>) -> Option<Vec<u8>> {
    text.map(|t| lz4_flex::compress_prepend_size(t.as_bytes()))
}

/// A revisit refreshes a fetched page (a failed one leaves it as it was); returns whether its
/// content had changed.
fn revisit(tx: &mut Transaction<'_>, o: &Outcome) -> Result<bool> {
    if o.status != DocStatus::Fetched {
        tx.execute(
            "UPDATE doc SET revisits = revisits + 1 WHERE oid = $1",
            &[&o.oid.raw()],
        )?;
        return Ok(false);
    }
    let old = tx.query_one(
        "SELECT content_hash FROM doc WHERE oid = $1",
        &[&o.oid.raw()],
    )?;
    let old_hash: Option<String> = old.get(0);
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
    Ok(changed)
}

/// The fetched pages of a batch (`row`: oid → URL, server id, tries before): listed in fetch
/// order with their sequence numbers `seqs`, and links into first-fetched ones as training
/// instances.
fn fetched_pages(
    tx: &mut Transaction<'_>,
    batch: &[&Outcome],
    row: &HashMap<i64, (String, i64, i64)>,
    seqs: &[i64],
    rec: &mut Recorded,
) -> Result<()> {
    let fetched: Vec<&&Outcome> = (batch.iter())
        .filter(|o| o.status == DocStatus::Fetched)
        .collect();
    let new: Vec<i64> = (fetched.iter())
        .filter(|o| row[&o.oid.raw()].2 == 0)
        .map(|o| o.oid.raw())
        .collect();
    let mut features = links_into(tx, &new)?;
    for (o, seq) in fetched.iter().zip(seqs) {
        let (url, _, tries) = &row[&o.oid.raw()];
        rec.fetched.push(FetchedPage {
            seq: *seq,
            url: url.clone(),
            relevance: o.relevance,
            title: o.title.clone(),
        });
        if *tries == 0 {
            for f in features.remove(&o.oid.raw()).unwrap_or_default() {
                rec.instances.push((f, o.relevance));
            }
        }
    }
    Ok(())
}

/// The features of links into the pages `oids` (newly fetched) from pages fetched earlier:
/// each becomes a training instance.
fn links_into(tx: &mut Transaction<'_>, oids: &[i64]) -> Result<HashMap<i64, Vec<Vec<u32>>>> {
    let mut out: HashMap<i64, Vec<Vec<u32>>> = HashMap::new();
    if oids.is_empty() {
        return Ok(out);
    }
    for r in tx.query(
        "SELECT oid_dst, features FROM link WHERE oid_dst = ANY($1) AND features IS NOT NULL",
        &[&oids],
    )? {
        out.entry(r.get(0))
            .or_default()
            .push(features_from_blob(r.get(1)));
    }
    Ok(out)
}
