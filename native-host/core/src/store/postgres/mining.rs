//! The mining programs' side of the PostgreSQL store: the taxonomy, the graph the distiller
//! reads and the scores it writes back, the apprentice's evidence, re-judging and re-scoring
//! (the numbers come from `crawl::policy`; the store only persists them).

use super::{limit, rows, Conn};
use crate::distiller::{Edge, Scores};
use crate::store::{
    decompress_text, features_from_blob, now, ApprenticeEvidence, DocStatus, InLink, InLinkReader,
    PageId, PageText, Result, ScoreChange, Verdict,
};
use postgres::types::ToSql;
use postgres::Transaction;
use r2d2_postgres::postgres;
use std::collections::HashMap;

/// Links into fetched pages (`l`, the target `d`): the apprentice's evidence and the
/// distiller's graph.
const INTO_FETCHED: &str = "link l JOIN doc d ON d.oid = l.oid_dst WHERE d.status = 2";

/// Runs `f` in a transaction that writes `doc` rows between record batches, never beside one
/// (the batches' lock: rows updated in two orders at once would deadlock).
fn between_records<T>(
    c: &mut Conn,
    f: impl FnOnce(&mut Transaction<'_>) -> Result<T>,
) -> Result<T> {
    let mut tx = c.transaction()?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1)",
        &[&super::record::RECORD_LOCK],
    )?;
    let out = f(&mut tx)?;
    tx.commit()?;
    Ok(out)
}

/// Updates `doc` rows in `status` from parallel arrays: `set` assigns from `u.<column>`, the
/// arrays are `$1` (oids) and the rest as `columns` names and types them (`$n::type[]`).
fn update_rows(
    c: &mut Conn,
    set: &str,
    columns: &[(&str, &str)],
    status: DocStatus,
    arrays: &[&(dyn ToSql + Sync)],
) -> Result<usize> {
    let (mut casts, mut names) = (vec!["$1::int8[]".to_owned()], vec!["oid".to_owned()]);
    for (i, (name, ty)) in columns.iter().enumerate() {
        casts.push(format!("${}::{ty}[]", i + 2));
        names.push((*name).to_owned());
    }
    let sql = format!(
        "UPDATE doc SET {set} FROM unnest({}) AS u({})
         WHERE doc.oid = u.oid AND doc.status = ${}",
        casts.join(", "),
        names.join(", "),
        columns.len() + 2
    );
    let code = status.code();
    let mut params: Vec<&(dyn ToSql + Sync)> = arrays.to_vec();
    params.push(&code);
    between_records(c, |tx| Ok(rows(tx.execute(sql.as_str(), &params)?)))
}

/// Raises the unvisited targets of the links `l` matching `which` (its parameters from `$2`)
/// to at least `score`; returns how many.
fn raise(c: &mut Conn, which: &str, score: f64, param: &(dyn ToSql + Sync)) -> Result<usize> {
    let sql = format!(
        "UPDATE doc SET relevance = GREATEST(relevance, $1) WHERE status = $3 AND oid IN (
           SELECT l.oid_dst FROM link l WHERE {which})"
    );
    let unvisited = DocStatus::Unvisited.code();
    between_records(c, |tx| {
        Ok(rows(
            tx.execute(sql.as_str(), &[&score, param, &unvisited])?,
        ))
    })
}

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
    // A changed model gets a new version: every worker reloads it.
    super::shared::put_versioned(&mut tx, "model", &model.to_bytes())?;
    Ok(tx.commit()?)
}

/// A page of links into frontier URLs, in (target, source) order after `after`. `d.oid >= $1`
/// (implied by the key) bounds the merge join's walk of `doc` too: without it each page read
/// `doc` from its first row (a page at row 12,000 of FOLDOC: 16.8 ms, with it 5.1 ms).
pub(super) fn frontier_in_links(
    c: &mut Conn,
    after: Option<(PageId, PageId)>,
    n: usize,
) -> Result<Vec<InLink>> {
    let (d, s) = after.map_or((i64::MIN, i64::MIN), |(d, s)| (d.raw(), s.raw()));
    let rows = c.query(
        "SELECT l.oid_dst, d.relevance, l.oid_src, s.status, s.relevance, l.weight, l.features
         FROM link l JOIN doc d ON d.oid = l.oid_dst JOIN doc s ON s.oid = l.oid_src
         WHERE (l.oid_dst, l.oid_src) > ($1, $2) AND d.oid >= $1 AND d.status = $3
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
    update_rows(
        c,
        "relevance = u.score",
        &[("score", "float8")],
        DocStatus::Unvisited,
        &[&oids, &s],
    )
}

/// Sets each change's new score where its unvisited URL still holds the score it was read
/// with (one statement); returns rows updated.
pub(super) fn swap_frontier_scores(c: &mut Conn, changes: &[ScoreChange]) -> Result<usize> {
    let mut cols: (Vec<i64>, Vec<f64>, Vec<f64>) = Default::default();
    for (oid, old, new) in changes {
        cols.0.push(oid.raw());
        cols.1.push(*old);
        cols.2.push(*new);
    }
    let code = DocStatus::Unvisited.code();
    between_records(c, |tx| {
        Ok(rows(tx.execute(
            "UPDATE doc SET relevance = u.new
             FROM unnest($1::int8[], $2::float8[], $3::float8[]) AS u(oid, old, new)
             WHERE doc.oid = u.oid AND doc.status = $4 AND doc.relevance = u.old",
            &[&cols.0, &cols.1, &cols.2, &code],
        )?))
    })
}

/// The links into frontier URLs, read through another handle on the door's pool.
pub(super) struct LinkReader(pub(super) super::PgStore);

impl InLinkReader for LinkReader {
    fn frontier_in_links(
        &self,
        after: Option<(PageId, PageId)>,
        limit: usize,
    ) -> Result<Vec<InLink>> {
        self.0.with(|c| frontier_in_links(c, after, limit))
    }
}

/// The row ids of those of `urls` that are unvisited, by position.
pub(super) fn frontier_ids(c: &mut Conn, urls: &[String]) -> Result<Vec<Option<PageId>>> {
    let rows = c.query(
        "SELECT url, oid FROM doc WHERE url = ANY($1) AND status = $2",
        &[&urls, &DocStatus::Unvisited.code()],
    )?;
    let ids: std::collections::HashMap<String, i64> =
        rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    Ok((urls.iter())
        .map(|u| ids.get(u).copied().map(PageId::from_raw))
        .collect())
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
    update_rows(
        c,
        "relevance = u.r, log_relevance = u.log_r, cid = u.cid",
        &[("r", "float8"), ("log_r", "float8"), ("cid", "int8")],
        DocStatus::Fetched,
        &[&oids, &r, &log_r, &cid],
    )?;
    Ok(())
}

/// Every link with features whose target is fetched: (features, target's R(d)).
pub(super) fn apprentice_evidence(c: &mut Conn) -> Result<Vec<ApprenticeEvidence>> {
    let rows = c.query(
        &format!("SELECT l.features, d.relevance FROM {INTO_FETCHED} AND l.features IS NOT NULL"),
        &[],
    )?;
    Ok(rows
        .iter()
        .map(|r| (features_from_blob(r.get(0)), r.get(1)))
        .collect())
}

/// Links recorded since the snapshot `$1` (its xmin `$2`) into pages fetched now, and links
/// recorded before it into pages fetched since (`link.xid`, `doc.fetched_xid`: migration V6).
const EVIDENCE_SINCE: &str = "
    SELECT l.features, d.relevance FROM link l JOIN doc d ON d.oid = l.oid_dst
    WHERE d.status = 2 AND l.features IS NOT NULL AND l.xid >= $2
      AND NOT pg_visible_in_snapshot(l.xid::text::xid8, $1::text::pg_snapshot)
    UNION ALL
    SELECT l.features, d.relevance FROM doc d JOIN link l ON l.oid_dst = d.oid
    WHERE d.status = 2 AND l.features IS NOT NULL AND d.fetched_xid >= $2
      AND NOT pg_visible_in_snapshot(d.fetched_xid::text::xid8, $1::text::pg_snapshot)
      AND (l.xid IS NULL OR l.xid < $2
           OR pg_visible_in_snapshot(l.xid::text::xid8, $1::text::pg_snapshot))";

/// The evidence that appeared since the snapshot `since` (all of it for `None`), read in one
/// snapshot, and that snapshot (the next read's mark).
pub(super) fn evidence_since(
    c: &mut Conn,
    since: Option<&str>,
) -> Result<(Vec<ApprenticeEvidence>, String)> {
    let mut tx = (c.build_transaction())
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?;
    let mark: String = tx
        .query_one("SELECT pg_current_snapshot()::text", &[])?
        .get(0);
    let rows = match since {
        None => tx.query(
            &format!(
                "SELECT l.features, d.relevance FROM {INTO_FETCHED} AND l.features IS NOT NULL"
            ),
            &[],
        )?,
        Some(prev) => {
            let xmin: i64 = tx
                .query_one(
                    "SELECT pg_snapshot_xmin($1::text::pg_snapshot)::text::int8",
                    &[&prev],
                )?
                .get(0);
            tx.query(EVIDENCE_SINCE, &[&prev, &xmin])?
        }
    };
    tx.commit()?;
    let evidence = (rows.iter())
        .map(|r| (features_from_blob(r.get(0)), r.get(1)))
        .collect();
    Ok((evidence, mark))
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
            &format!("SELECT l.oid_src, l.oid_dst, l.sid_src, l.sid_dst FROM {INTO_FETCHED}"),
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
    let hubs = "l.sid_src <> l.sid_dst
        AND l.oid_src IN (SELECT oid FROM hub ORDER BY score DESC LIMIT $2)";
    raise(c, hubs, score, &limit(top))
}

/// "Crawl more from here": the unvisited out-links of the fetched page `url` get at least
/// `score`; returns how many.
pub(super) fn boost_out_links(c: &mut Conn, url: &str, score: f64) -> Result<usize> {
    let from_page = "l.oid_src = (SELECT oid FROM doc WHERE url = $2 AND status = 2)";
    raise(c, from_page, score, &url)
}
