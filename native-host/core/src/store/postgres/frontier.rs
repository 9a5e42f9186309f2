//! The frontier on PostgreSQL: unvisited `doc` rows enqueued in batches (`ON CONFLICT`: a URL
//! keeps the best score over its parents while unvisited), checked out in the frontier index's
//! order with `FOR UPDATE SKIP LOCKED`, so that workers checking out together get disjoint rows.

use super::{limit, rows, Conn};
use crate::store::{
    features_to_blob, fnv64, now, ApprenticeEvidence, DocStatus, NewUrl, PageId, Result, Work,
};
use postgres::Transaction;
use r2d2_postgres::postgres;
use std::collections::{BTreeMap, HashMap};

/// A URL to enqueue and the fetched page (id, server id) it was found on, if any.
pub(super) type Found<'a> = (Option<(i64, i64)>, &'a NewUrl);

/// A URL's row as enqueueing left it: (id, status code, frontier score or R(d)).
type DocRow = (i64, i64, f64);

/// Where enqueued URLs are: each host's (server id, pages crawled), each URL's row.
pub(super) struct Enqueued<'u> {
    /// Host → (server id, pages crawled).
    servers: HashMap<String, (i64, i64)>,
    /// URL → its row.
    docs: HashMap<&'u str, DocRow>,
}

/// Puts URLs in the frontier (and their links, [`link`]): the seeds' way, in one go.
pub(super) fn enqueue(
    tx: &mut Transaction<'_>,
    found: &[Found<'_>],
    instances: &mut Vec<ApprenticeEvidence>,
) -> Result<()> {
    let at = enqueue_urls(tx, found, &[], &BTreeMap::new())?;
    link(tx, found, &at, instances)
}

/// Puts the URLs of `found` in the frontier in one statement per table, inserting their
/// servers on first sight. The URLs `excluded` (pages recorded under another URL) are left
/// out of the frontier. `crawled` (server id → pages) are pages of this batch not yet counted
/// in their servers' rows: a new URL's priority counts them.
///
/// Locks, in the store's one order: new `server` rows by host, `doc` rows by URL. Rows in
/// flight or fetched are never locked here; a record batch updates its own rows after this
/// (a link to a page another batch is recording waits for that batch, which waits on nothing
/// this one holds).
pub(super) fn enqueue_urls<'u>(
    tx: &mut Transaction<'_>,
    found: &[Found<'u>],
    excluded: &[&str],
    crawled: &BTreeMap<i64, i64>,
) -> Result<Enqueued<'u>> {
    if found.is_empty() {
        return Ok(Enqueued {
            servers: HashMap::new(),
            docs: HashMap::new(),
        });
    }
    let mut servers = servers(tx, found.iter().map(|(_, u)| u.host.as_str()))?;
    for (sid, n) in servers.values_mut() {
        *n += crawled.get(sid).copied().unwrap_or(0);
    }
    let docs = docs(tx, found, &servers, excluded)?;
    Ok(Enqueued { servers, docs })
}

/// Records the links of `found` (enqueued `at`), each (source, target) once, in key order.
/// A link new to the database whose target is already fetched is a training instance for the
/// apprentice (pushed to `instances`).
pub(super) fn link(
    tx: &mut Transaction<'_>,
    found: &[Found<'_>],
    at: &Enqueued<'_>,
    instances: &mut Vec<ApprenticeEvidence>,
) -> Result<()> {
    let (servers, docs) = (&at.servers, &at.docs);
    let mut links = BTreeMap::new();
    for (src, u) in found {
        if let (Some((oid_src, sid_src)), Some((_, anchor))) = (src, &u.via) {
            let (oid_dst, ..) = docs[u.url.as_str()];
            let sid_dst = servers[u.host.as_str()].0;
            links.entry((*oid_src, oid_dst)).or_insert((
                *sid_src,
                sid_dst,
                anchor.as_str(),
                &u.features,
                u.weight,
            ));
        }
    }
    if links.is_empty() {
        return Ok(());
    }
    let (mut src, mut dst, mut ssrc, mut sdst) = (vec![], vec![], vec![], vec![]);
    let (mut anchor, mut features, mut weight) = (vec![], vec![], vec![]);
    for ((s, d), (ss, sd, a, f, w)) in &links {
        src.push(*s);
        dst.push(*d);
        ssrc.push(*ss);
        sdst.push(*sd);
        anchor.push(*a);
        features.push(f.as_deref().map(features_to_blob));
        weight.push(*w);
    }
    let fresh = tx.query(
        "INSERT INTO link(oid_src, oid_dst, sid_src, sid_dst, anchor, features, weight)
         SELECT * FROM unnest($1::int8[], $2::int8[], $3::int8[], $4::int8[], $5::text[],
                              $6::bytea[], $7::float8[])
         ON CONFLICT DO NOTHING RETURNING oid_dst, features",
        &[&src, &dst, &ssrc, &sdst, &anchor, &features, &weight],
    )?;
    let by_oid: HashMap<i64, DocRow> = docs.values().map(|d| (d.0, *d)).collect();
    for r in fresh {
        let (oid_dst, f): (i64, Option<Vec<u8>>) = (r.get(0), r.get(1));
        // The target is already fetched: the critic's verdict is known, train on it now.
        if let (Some(&(_, status, relevance)), Some(f)) = (by_oid.get(&oid_dst), f) {
            if status == DocStatus::Fetched.code() {
                instances.push((crate::store::features_from_blob(&f), relevance));
            }
        }
    }
    Ok(())
}

/// Each host's (server id, pages crawled), inserting servers first seen: one statement, and
/// another for hosts another worker inserted meanwhile (its commit came after this
/// statement's snapshot).
fn servers<'a>(
    tx: &mut Transaction<'_>,
    hosts: impl Iterator<Item = &'a str>,
) -> Result<HashMap<String, (i64, i64)>> {
    let mut hosts: Vec<&str> = hosts.collect();
    hosts.sort_unstable();
    hosts.dedup();
    let rows = tx.query(
        "WITH h AS (SELECT * FROM unnest($1::text[]) AS h(host)),
           ins AS (INSERT INTO server(host) SELECT host FROM h ON CONFLICT DO NOTHING
                   RETURNING host, sid, crawled)
         SELECT host, sid, crawled FROM ins
         UNION ALL SELECT s.host, s.sid, s.crawled FROM server s JOIN h ON s.host = h.host",
        &[&hosts],
    )?;
    let mut out: HashMap<String, (i64, i64)> = (rows.iter())
        .map(|r| (r.get(0), (r.get(1), r.get(2))))
        .collect();
    let rest: Vec<&str> = hosts
        .into_iter()
        .filter(|h| !out.contains_key(*h))
        .collect();
    if !rest.is_empty() {
        let rows = tx.query(
            "SELECT host, sid, crawled FROM server WHERE host = ANY($1)",
            &[&rest],
        )?;
        out.extend(rows.iter().map(|r| (r.get(0), (r.get(1), r.get(2)))));
    }
    Ok(out)
}

/// Inserts the URLs not yet known, raises the score of unvisited ones to their best
/// parent's (the first sighting in the batch gives the depth, the best one the score) and
/// excludes the unvisited ones among `excluded`; returns every URL's row.
fn docs<'u>(
    tx: &mut Transaction<'_>,
    found: &[Found<'u>],
    servers: &HashMap<String, (i64, i64)>,
    excluded: &[&str],
) -> Result<HashMap<&'u str, DocRow>> {
    let mut urls: BTreeMap<&str, &NewUrl> = BTreeMap::new();
    let mut best: HashMap<&str, f64> = HashMap::new();
    for (_, u) in found {
        urls.entry(u.url.as_str()).or_insert(u);
        let b = best.entry(u.url.as_str()).or_insert(u.score);
        *b = b.max(u.score);
    }
    let (mut url, mut sid, mut priority) = (vec![], vec![], vec![]);
    let (mut score, mut depth, mut rnd) = (vec![], vec![], vec![]);
    for (u, n) in &urls {
        let (s, crawled) = servers[n.host.as_str()];
        url.push(*u);
        sid.push(s);
        priority.push(crawled);
        score.push(best[u]);
        depth.push(n.depth);
        rnd.push(tie_breaker(u));
    }
    // New rows are inserted (in URL order); known ones come back as they are, unlocked.
    let rows = tx.query(
        "WITH u AS (SELECT * FROM unnest($1::text[], $2::int8[], $3::int8[], $4::float8[],
                                         $5::int8[], $6::int8[])
                      AS u(url, sid, priority, relevance, depth, rnd)),
           ins AS (INSERT INTO doc(url, sid, priority, relevance, depth, rnd)
                   SELECT * FROM u ON CONFLICT (url) DO NOTHING
                   RETURNING url, oid, status, relevance)
         SELECT url, oid, status, relevance, true FROM ins
         UNION ALL SELECT d.url, d.oid, d.status, d.relevance, false
           FROM doc d JOIN u ON d.url = u.url",
        &[&url, &sid, &priority, &score, &depth, &rnd],
    )?;
    let mut out = HashMap::with_capacity(urls.len());
    let mut known: Vec<(&'u str, DocRow)> = Vec::new();
    let mut take = |r: &postgres::Row, new: bool, out: &mut HashMap<&'u str, DocRow>| {
        let u: String = r.get(0);
        if let Some((k, _)) = urls.get_key_value(u.as_str()) {
            let row = (r.get(1), r.get(2), r.get(3));
            out.insert(*k, row);
            if !new {
                known.push((*k, row));
            }
        }
    };
    for r in &rows {
        take(r, r.get(4), &mut out);
    }
    let rest: Vec<&str> = url
        .iter()
        .copied()
        .filter(|u| !out.contains_key(u))
        .collect();
    if !rest.is_empty() {
        // Inserted by another worker whose commit came after the statement's snapshot.
        for r in tx.query(
            "SELECT url, oid, status, relevance FROM doc WHERE url = ANY($1)",
            &[&rest],
        )? {
            take(&r, false, &mut out);
        }
    }
    let mut raise: BTreeMap<&str, (f64, bool)> = (known.iter())
        .filter(|(u, (_, status, relevance))| *status == 0 && best[u] > *relevance)
        .map(|(u, _)| (*u, (best[u], false)))
        .collect();
    for u in excluded {
        if out.get(*u).is_some_and(|r| r.1 == 0) {
            raise.entry(*u).or_insert((0.0, true)).1 = true;
        }
    }
    raise_or_exclude(tx, &raise)?;
    for (u, _) in raise.iter().filter(|(_, v)| v.1) {
        if let Some(row) = out.get_mut(*u) {
            row.1 = DocStatus::Excluded.code();
        }
    }
    Ok(out)
}

/// Raises unvisited URLs' scores (`url` → (best score, excluded)) and excludes those marked,
/// locking their rows in URL order (the store's lock order); rows that left the frontier
/// meanwhile are left as they are.
fn raise_or_exclude(tx: &mut Transaction<'_>, raise: &BTreeMap<&str, (f64, bool)>) -> Result<()> {
    if raise.is_empty() {
        return Ok(());
    }
    let url: Vec<&str> = raise.keys().copied().collect();
    let score: Vec<f64> = raise.values().map(|v| v.0).collect();
    let excluded: Vec<bool> = raise.values().map(|v| v.1).collect();
    tx.execute(
        "UPDATE doc SET relevance = GREATEST(doc.relevance, u.score),
           status = CASE WHEN u.excluded THEN $4 ELSE doc.status END,
           error = CASE WHEN u.excluded THEN 'redirect-target' ELSE doc.error END
         FROM unnest($1::text[], $2::float8[], $3::bool[]) AS u(url, score, excluded)
         WHERE doc.url = u.url AND doc.status = 0 AND doc.oid IN (
           SELECT oid FROM doc WHERE url = ANY($1) AND status = 0 ORDER BY url FOR NO KEY UPDATE)",
        &[&url, &score, &excluded, &DocStatus::Excluded.code()],
    )?;
    Ok(())
}

/// A pseudo-random tie-breaker from the URL (stable, spreads hosts apart), as SQLite's.
fn tie_breaker(url: &str) -> i64 {
    (fnv64(url) >> 1) as i64
}

/// A checked-out URL from a row of (oid, url, depth, relevance, num_tries).
fn work(r: &postgres::Row, revisit: bool) -> Work {
    Work {
        oid: PageId::from_raw(r.get(0)),
        url: r.get(1),
        depth: r.get(2),
        score: r.get(3),
        tries: r.get(4),
        revisit,
    }
}

/// Maintenance mode: checks out up to `n` fetched pages not fetched for `min_age` seconds,
/// best hubs first, then by relevance, then oldest first; their `fetched_at` moves to now.
pub(super) fn checkout_revisits(c: &mut Conn, n: usize, min_age: f64) -> Result<Vec<Work>> {
    let mut tx = c.transaction()?;
    let picked = tx.query(
        "SELECT d.oid, d.url, d.depth, d.relevance, d.num_tries FROM doc d
         LEFT JOIN hub h ON h.oid = d.oid
         WHERE d.status = 2 AND d.fetched_at < $2
         ORDER BY coalesce(h.score, 0) DESC, d.relevance DESC, d.fetched_at LIMIT $1
         FOR UPDATE OF d SKIP LOCKED",
        &[&limit(n), &(now() - min_age)],
    )?;
    let work: Vec<Work> = picked.iter().map(|r| work(r, true)).collect();
    let oids: Vec<i64> = work.iter().map(|w| w.oid.raw()).collect();
    tx.execute(
        "UPDATE doc SET fetched_at = $2 WHERE oid = ANY($1)",
        &[&oids, &now()],
    )?;
    tx.commit()?;
    Ok(work)
}

/// Returns checked-out rows that were not recorded to the frontier, their tries unspent.
pub(super) fn release(c: &mut Conn, oids: &[PageId]) -> Result<()> {
    let oids: Vec<i64> = oids.iter().map(|o| o.raw()).collect();
    // Locked in URL order, as every transaction locks `doc` rows (see `lease`).
    c.execute(
        "UPDATE doc SET status = $1 WHERE oid IN (
           SELECT oid FROM doc WHERE oid = ANY($2) AND status = $3 ORDER BY url FOR UPDATE)",
        &[
            &DocStatus::Unvisited.code(),
            &oids,
            &DocStatus::InFlight.code(),
        ],
    )?;
    Ok(())
}

/// Puts every failed URL back in the frontier with its tries reset; returns how many.
pub(super) fn retry_failed(c: &mut Conn) -> Result<usize> {
    Ok(rows(c.execute(
        "UPDATE doc SET status = $1, num_tries = 0, error = NULL WHERE status = $2",
        &[&DocStatus::Unvisited.code(), &DocStatus::Failed.code()],
    )?))
}
