//! Recording a batch of fetch outcomes in one transaction: statuses, compressed texts, the
//! fetch order, redirect targets, new links and the apprentice's training instances.

use super::features::FeatureDict;
use super::frontier::{enqueue, Enqueue};
use super::seen::{Caches, Known};
use super::url_key::url_key;
use super::{
    now, search, ApprenticeEvidence, DocStatus, FetchedPage, NewUrl, Outcome, Recorded, Result,
    Store,
};
use rusqlite::{params, Transaction};

impl Store {
    /// Records a batch of outcomes in one transaction, the search index's entries of the
    /// fetched pages included; returns the fetch sequence numbers given to fetched pages, in
    /// order.
    pub fn record(&mut self, batch: &[Outcome]) -> Result<Recorded> {
        self.page_cache.tick(&self.conn)?;
        let tx = self.conn.transaction()?;
        let mut rec = Recorded::default();
        let mut seq = self.seq;
        // The search index's entries go in last, together and by rowid: FTS5 keeps them in
        // memory until the transaction ends, but writes them out as a segment whenever another
        // statement of the transaction opens a statement journal (an upsert) or a rowid comes
        // below the last one; interleaved with the pages, in fetch order, it wrote a small
        // segment per page and spent its time merging them (#27 profile: 6-9% of the
        // crawler's CPU).
        let mut index = Vec::new();
        {
            let st = &mut Enqueue::new(&tx, &mut self.features)?;
            for o in batch {
                if o.revisit {
                    rec.revisited += 1;
                    let changed = record_revisit(&tx, st, &mut self.caches, o, &mut rec.instances)?;
                    rec.changed += usize::from(changed);
                    if changed {
                        index.push(o);
                    }
                } else {
                    record_attempt(&tx, st, &mut self.caches, o, &mut seq, &mut rec)?;
                    if o.status == DocStatus::Fetched {
                        index.push(o);
                    }
                }
            }
        }
        if self.index_text {
            index.sort_by_key(|o| o.oid);
            for o in index {
                search::index_page(&tx, o.oid.raw(), o.title.as_deref(), o.text.as_deref())?;
            }
        }
        tx.commit()?;
        self.seq = seq;
        Ok(rec)
    }
}

/// The LZ4 blob stored for a page's visible text.
fn compressed(text: Option<&String>) -> Option<Vec<u8>> {
    text.map(|t| lz4_flex::compress_prepend_size(t.as_bytes()))
}

/// A revisit refreshes a fetched page (a failed one leaves it as it was); true when its
/// content had changed.
fn record_revisit(
    tx: &Transaction,
    st: &mut Enqueue<'_>,
    caches: &mut Caches,
    o: &Outcome,
    instances: &mut Vec<ApprenticeEvidence>,
) -> Result<bool> {
    if o.status != DocStatus::Fetched {
        tx.prepare_cached("UPDATE doc SET revisits = revisits + 1 WHERE oid = ?1")?
            .execute([o.oid])?;
        return Ok(false);
    }
    let (old_hash, sid, url): (Option<String>, i64, String) = tx
        .prepare_cached("SELECT content_hash, sid, url FROM doc WHERE oid = ?1")?
        .query_row([o.oid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    caches.remember(
        &url,
        Known {
            oid: o.oid.raw(),
            fetched: true,
            relevance: o.relevance,
        },
    );
    let is_changed = old_hash != o.content_hash;
    tx.prepare_cached(
        "UPDATE doc SET revisits = revisits + 1, changes = changes + ?9,
           content_hash = ?2, text = ?3, relevance = ?4, log_relevance = ?5,
           cid = ?6, title = ?7, fetched_at = ?8,
           changed_at = CASE WHEN ?9 THEN ?8 ELSE changed_at END
         WHERE oid = ?1",
    )?
    .execute(params![
        o.oid,
        o.content_hash,
        compressed(o.text.as_ref()),
        o.relevance,
        o.log_relevance,
        o.cid,
        o.title,
        now(),
        i64::from(is_changed)
    ])?;
    for l in &o.links {
        enqueue(tx, st, caches, l, Some((o.oid.raw(), sid)), instances)?;
    }
    Ok(is_changed)
}

/// Records a first fetch (or a failed attempt) of a frontier entry.
fn record_attempt(
    tx: &Transaction,
    st: &mut Enqueue<'_>,
    caches: &mut Caches,
    o: &Outcome,
    seq: &mut i64,
    rec: &mut Recorded,
) -> Result<()> {
    // (No join with `server` here: that statement was prepared again at every step, 2% of
    // the crawler's CPU; the host comes back from the update of its count below.)
    let (url, sid, tries): (String, i64, i64) = tx
        .prepare_cached("SELECT url, sid, num_tries FROM doc WHERE oid = ?1")?
        .query_row([o.oid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    // The policy settled the status: `Unvisited` sends a failure back to the frontier, behind
    // untried URLs since the frontier orders by num_tries.
    let new_status = o.status;
    let this_seq = (o.status == DocStatus::Fetched).then(|| {
        *seq += 1;
        rec.fetched.push(FetchedPage {
            seq: *seq,
            url: url.clone(),
            relevance: o.relevance,
            title: o.title.clone(),
        });
        *seq
    });
    tx.prepare_cached(
        "UPDATE doc SET status = ?2, num_tries = num_tries + 1, http_status = ?3,
           relevance = CASE WHEN ?2 = 2 THEN ?4 ELSE relevance END,
           log_relevance = ?5, cid = ?6, title = ?7, text = ?8, content_hash = ?9,
           error = ?10, fetched_at = ?11, fetch_seq = coalesce(?12, fetch_seq),
           first_fetched_at = coalesce(first_fetched_at, CASE WHEN ?12 IS NOT NULL THEN ?11 END),
           final_url = ?13, redirects = ?14
         WHERE oid = ?1",
    )?
    .execute(params![
        o.oid,
        new_status,
        o.http_status,
        o.relevance,
        o.log_relevance,
        o.cid,
        o.title,
        compressed(o.text.as_ref()),
        o.content_hash,
        o.error,
        now(),
        this_seq,
        o.final_url,
        (!o.redirects.is_empty()).then(|| o.redirects.join(" ")),
    ])?;
    mark_redirect_target(tx, st, caches, o, &mut rec.instances)?;
    if o.status == DocStatus::Fetched {
        if tries == 0 {
            instances_into(tx, st.features, o, &mut rec.instances)?;
        }
        caches.remember(
            &url,
            Known {
                oid: o.oid.raw(),
                fetched: true,
                relevance: o.relevance,
            },
        );
        let host: String = tx
            .prepare_cached(
                "UPDATE server SET crawled = crawled + 1 WHERE sid = ?1 RETURNING host",
            )?
            .query_row([sid], |r| r.get(0))?;
        caches.crawled_one(&host);
    }
    for l in &o.links {
        enqueue(
            tx,
            st,
            caches,
            l,
            Some((o.oid.raw(), sid)),
            &mut rec.instances,
        )?;
    }
    Ok(())
}

/// The page a redirect landed on is this page: it must not be fetched again.
fn mark_redirect_target(
    tx: &Transaction,
    st: &mut Enqueue<'_>,
    caches: &mut Caches,
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
    enqueue(tx, st, caches, &alias, None, instances)?;
    tx.prepare_cached(
        "UPDATE doc SET status = ?2, error = 'redirect-target'
         WHERE rnd = ?3 AND url = ?1 AND status = 0",
    )?
    .execute(params![alias.url, DocStatus::Excluded, url_key(&alias.url)])?;
    Ok(())
}

/// Links into a newly fetched page from pages fetched earlier become training instances.
fn instances_into(
    tx: &Transaction,
    features: &FeatureDict,
    o: &Outcome,
    instances: &mut Vec<ApprenticeEvidence>,
) -> Result<()> {
    let mut st =
        tx.prepare_cached("SELECT features FROM link WHERE oid_dst = ?1 AND features IS NOT NULL")?;
    let rows = st.query_map([o.oid], |r| r.get::<_, Vec<u8>>(0))?;
    for b in rows {
        // A damaged list teaches nothing rather than something wrong.
        if let Some(f) = features.decode(&b?) {
            instances.push((f, o.relevance));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "replay_tests.rs"]
mod replay;
