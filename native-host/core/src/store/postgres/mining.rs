//! The mining programs' side of the PostgreSQL store: the taxonomy, the graph the distiller
//! reads and the scores it writes back, the apprentice's evidence, re-judging and re-scoring
//! (the numbers come from `crawl::policy`; the store only persists them).

use super::{limit, rows, Conn};
use crate::distiller::{Edge, Scores};
use crate::store::{
    decompress_text, features_from_blob, now, ApprenticeEvidence, DocStatus, InLink, PageId,
    PageText, Result, Verdict,
};
use std::collections::HashMap;

/// The advisory lock key of saving the model ("taxo").
const TAXONOMY_LOCK: i64 = 0x7461_786f;

/// Replaces the stored taxonomy and examples with the model's, and stores the model.
pub(super) fn save_taxonomy(c: &mut Conn, model: &forager_classifier::Model) -> Result<()> {
    let mut tx = c.transaction()?;
    // Workers starting together each save the model: one at a time, or both would delete
    // before either inserts and the second insert would collide with the first.
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&TAXONOMY_LOCK])?;
    tx.execute("DELETE FROM taxonomy", &[])?;
    tx.execute("DELETE FROM example", &[])?;
    let (mut kcid, mut pcid, mut name, mut path, mut good) =
        (vec![], vec![], vec![], vec![], vec![]);
    for t in model.topics() {
        kcid.push(i64::from(t.id));
        pcid.push(i64::from(t.parent));
        name.push(t.title);
        path.push(t.path);
        good.push(i64::from(t.good));
    }
    tx.execute(
        "INSERT INTO taxonomy(kcid, pcid, kcname, path, good)
         SELECT * FROM unnest($1::int8[], $2::int8[], $3::text[], $4::text[], $5::int8[])",
        &[&kcid, &pcid, &name, &path, &good],
    )?;
    let mut examples: HashMap<String, i64> = HashMap::new();
    for e in model.examples() {
        let topic = model.taxonomy().find(&e.topic).unwrap_or(0);
        examples.insert(e.url.clone(), i64::from(topic));
    }
    let (urls, topics): (Vec<String>, Vec<i64>) = examples.into_iter().unzip();
    tx.execute(
        "INSERT INTO example(url, kcid) SELECT * FROM unnest($1::text[], $2::int8[])",
        &[&urls, &topics],
    )?;
    tx.execute(
        "INSERT INTO meta(key, blob) VALUES('model', $1)
         ON CONFLICT(key) DO UPDATE SET blob = excluded.blob",
        &[&model.to_bytes()],
    )?;
    Ok(tx.commit()?)
}

/// A page of links into frontier URLs, in (target, source) order after `after`.
pub(super) fn frontier_in_links(
    c: &mut Conn,
    after: Option<(PageId, PageId)>,
    n: usize,
) -> Result<Vec<InLink>> {
    let (d, s) = after.map_or((i64::MIN, i64::MIN), |(d, s)| (d.raw(), s.raw()));
    let rows = c.query(
        "SELECT l.oid_dst, d.relevance, l.oid_src, s.status, s.relevance, l.weight, l.features
         FROM link l JOIN doc d ON d.oid = l.oid_dst JOIN doc s ON s.oid = l.oid_src
         WHERE (l.oid_dst, l.oid_src) > ($1, $2) AND d.status = $3
         ORDER BY l.oid_dst, l.oid_src LIMIT $4",
        &[&d, &s, &DocStatus::Unvisited.code(), &limit(n)],
    )?;
    Ok(rows
        .iter()
        .map(|r| {
            let fetched = r.get::<_, i64>(3) == DocStatus::Fetched.code();
            let features: Option<Vec<u8>> = r.get(6);
            InLink {
                dst: PageId::from_raw(r.get(0)),
                dst_score: r.get(1),
                src: PageId::from_raw(r.get(2)),
                src_relevance: fetched.then(|| r.get(4)),
                weight: r.get(5),
                features: features.map(|b| features_from_blob(&b)),
            }
        })
        .collect())
}

/// Sets the frontier scores of unvisited URLs; returns rows updated.
pub(super) fn set_frontier_scores(c: &mut Conn, scores: &[(PageId, f64)]) -> Result<usize> {
    let (oids, s): (Vec<i64>, Vec<f64>) = scores.iter().map(|(o, s)| (o.raw(), *s)).unzip();
    Ok(rows(c.execute(
        "UPDATE doc SET relevance = u.score
         FROM unnest($1::int8[], $2::float8[]) AS u(oid, score)
         WHERE doc.oid = u.oid AND doc.status = $3",
        &[&oids, &s, &DocStatus::Unvisited.code()],
    )?))
}

/// A page of fetched pages with stored text, in id order after `after`.
pub(super) fn fetched_texts(
    c: &mut Conn,
    after: Option<PageId>,
    n: usize,
) -> Result<Vec<PageText>> {
    let rows = c.query(
        "SELECT oid, url, text FROM doc WHERE oid > $1 AND status = $2 AND text IS NOT NULL
         ORDER BY oid LIMIT $3",
        &[
            &after.map_or(i64::MIN, PageId::raw),
            &DocStatus::Fetched.code(),
            &limit(n),
        ],
    )?;
    Ok(rows
        .iter()
        .map(|r| PageText {
            oid: PageId::from_raw(r.get(0)),
            url: r.get(1),
            text: decompress_text(r.get(2)),
        })
        .collect())
}

/// Stores new verdicts of fetched pages.
pub(super) fn save_verdicts(c: &mut Conn, verdicts: &[(PageId, Verdict)]) -> Result<()> {
    let oids: Vec<i64> = verdicts.iter().map(|(o, _)| o.raw()).collect();
    let r: Vec<f64> = verdicts.iter().map(|(_, v)| v.0).collect();
    let log_r: Vec<f64> = verdicts.iter().map(|(_, v)| v.1).collect();
    let cid: Vec<i64> = verdicts.iter().map(|(_, v)| v.2).collect();
    c.execute(
        "UPDATE doc SET relevance = v.r, log_relevance = v.log_r, cid = v.cid
         FROM unnest($1::int8[], $2::float8[], $3::float8[], $4::int8[]) AS v(oid, r, log_r, cid)
         WHERE doc.oid = v.oid AND doc.status = $5",
        &[&oids, &r, &log_r, &cid, &DocStatus::Fetched.code()],
    )?;
    Ok(())
}

/// Every link with features whose target is fetched: (features, target's R(d)).
pub(super) fn apprentice_evidence(c: &mut Conn) -> Result<Vec<ApprenticeEvidence>> {
    let rows = c.query(
        "SELECT l.features, d.relevance FROM link l JOIN doc d ON d.oid = l.oid_dst
         WHERE d.status = 2 AND l.features IS NOT NULL",
        &[],
    )?;
    Ok(rows
        .iter()
        .map(|r| (features_from_blob(r.get(0)), r.get(1)))
        .collect())
}

/// The crawl graph for the distiller: links into fetched pages, and R of every fetched page.
pub(super) fn graph(c: &mut Conn) -> Result<(Vec<Edge>, HashMap<i64, f64>)> {
    let rel = c
        .query("SELECT oid, relevance FROM doc WHERE status = 2", &[])?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let edges = c
        .query(
            "SELECT l.oid_src, l.oid_dst, l.sid_src, l.sid_dst FROM link l
             JOIN doc d ON d.oid = l.oid_dst WHERE d.status = 2",
            &[],
        )?
        .iter()
        .map(|r| Edge {
            src: r.get(0),
            dst: r.get(1),
            src_site: r.get(2),
            dst_site: r.get(3),
        })
        .collect();
    Ok((edges, rel))
}

/// Replaces the stored hub and authority scores with a new distillation.
pub(super) fn save_distillation(c: &mut Conn, s: &Scores) -> Result<()> {
    let mut tx = c.transaction()?;
    let at = now();
    for (table, scores) in [("hub", &s.hubs), ("auth", &s.authorities)] {
        let (oids, score): (Vec<i64>, Vec<f64>) = scores.iter().map(|(o, v)| (*o, *v)).unzip();
        tx.execute(&format!("DELETE FROM {table}"), &[])?;
        tx.execute(
            &format!(
                "INSERT INTO {table}(oid, score, run_at)
                 SELECT u.oid, u.score, $3 FROM unnest($1::int8[], $2::float8[]) AS u(oid, score)
                 ON CONFLICT (oid) DO UPDATE SET score = excluded.score"
            ),
            &[&oids, &score, &at],
        )?;
    }
    tx.execute(
        "INSERT INTO meta(key, value) VALUES('distilled_at', $1)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        &[&at.to_string()],
    )?;
    Ok(tx.commit()?)
}

/// The distiller's feedback: unvisited out-neighbours on other servers of the `top` best hubs
/// get at least `score`; returns how many.
pub(super) fn boost_hub_neighbours(c: &mut Conn, top: usize, score: f64) -> Result<usize> {
    Ok(rows(c.execute(
        "UPDATE doc SET relevance = GREATEST(relevance, $2) WHERE status = 0 AND oid IN (
           SELECT l.oid_dst FROM link l
           WHERE l.sid_src <> l.sid_dst
             AND l.oid_src IN (SELECT oid FROM hub ORDER BY score DESC LIMIT $1))",
        &[&limit(top), &score],
    )?))
}

/// "Crawl more from here": the unvisited out-links of the fetched page `url` get at least
/// `score`; returns how many.
pub(super) fn boost_out_links(c: &mut Conn, url: &str, score: f64) -> Result<usize> {
    Ok(rows(c.execute(
        "UPDATE doc SET relevance = GREATEST(relevance, $2) WHERE status = 0 AND oid IN (
           SELECT l.oid_dst FROM link l
           WHERE l.oid_src = (SELECT oid FROM doc WHERE url = $1 AND status = 2))",
        &[&url, &score],
    )?))
}
