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

/// Puts URLs in the frontier in one statement per table, inserting their servers on first
/// sight, and records the links that led to them. A link new to the database whose target is
/// already fetched is a training instance for the apprentice (pushed to `instances`).
pub(super) fn enqueue(
    tx: &mut Transaction<'_>,
    found: &[Found<'_>],
    instances: &mut Vec<ApprenticeEvidence>,
) -> Result<()> {
    if found.is_empty() {
        return Ok(());
    }
    let servers = servers(tx, found.iter().map(|(_, u)| u.host.as_str()))?;
    let docs = docs(tx, found, &servers)?;
    // Links, each (source, target) once, in key order (a fixed lock order between workers).
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

/// Each host's (server id, pages crawled), inserting servers first seen.
fn servers<'a>(
    tx: &mut Transaction<'_>,
    hosts: impl Iterator<Item = &'a str>,
) -> Result<HashMap<String, (i64, i64)>> {
    let mut hosts: Vec<&str> = hosts.collect();
    hosts.sort_unstable();
    hosts.dedup();
    tx.execute(
        "INSERT INTO server(host) SELECT * FROM unnest($1::text[]) ON CONFLICT DO NOTHING",
        &[&hosts],
    )?;
    let rows = tx.query(
        "SELECT host, sid, crawled FROM server WHERE host = ANY($1)",
        &[&hosts],
    )?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), (r.get(1), r.get(2))))
        .collect())
}

/// Inserts the URLs not yet known and raises the score of unvisited ones to their best
/// parent's (the first sighting in the batch gives the depth, the best one the score); returns
/// every URL's row.
fn docs<'u>(
    tx: &mut Transaction<'_>,
    found: &[Found<'u>],
    servers: &HashMap<String, (i64, i64)>,
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
    let mut out = HashMap::with_capacity(urls.len());
    let written = tx.query(
        "INSERT INTO doc(url, sid, priority, relevance, depth, rnd)
         SELECT * FROM unnest($1::text[], $2::int8[], $3::int8[], $4::float8[], $5::int8[],
                              $6::int8[])
         ON CONFLICT (url) DO UPDATE SET relevance = GREATEST(doc.relevance, excluded.relevance)
           WHERE doc.status = 0 AND excluded.relevance > doc.relevance
         RETURNING url, oid, status, relevance",
        &[&url, &sid, &priority, &score, &depth, &rnd],
    )?;
    for r in &written {
        let u: String = r.get(0);
        if let Some((k, _)) = urls.get_key_value(u.as_str()) {
            out.insert(*k, (r.get(1), r.get(2), r.get(3)));
        }
    }
    let rest: Vec<&str> = url.into_iter().filter(|u| !out.contains_key(u)).collect();
    if !rest.is_empty() {
        for r in tx.query(
            "SELECT url, oid, status, relevance FROM doc WHERE url = ANY($1)",
            &[&rest],
        )? {
            let u: String = r.get(0);
            if let Some((k, _)) = urls.get_key_value(u.as_str()) {
                out.insert(*k, (r.get(1), r.get(2), r.get(3)));
            }
        }
    }
    Ok(out)
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
