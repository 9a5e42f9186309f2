//! Searching the harvest on PostgreSQL: a `tsvector` per fetched page in `page_search` (title
//! weighted A, text B; GIN-indexed), written in the transaction that records the fetch, so
//! search works during a crawl and after a crash; queries ranked by `ts_rank_cd` combined with
//! R as on SQLite ([`query::best`]), snippets by `ts_headline`, marked as SQLite's; and what
//! is new since a time. The SQLite twin is `store/search.rs` and `store/news.rs`.
//!
//! The user's text is never spliced into SQL: it is parsed into terms of letters and digits
//! ([`query::terms`]), written as a `tsquery` of quoted words, and bound as a parameter.

use crate::store::query::{self, SearchHit, SearchRanking, Term, MARK_END, MARK_START};
use crate::store::{decompress_text, NewsItem, NewsKind, Outcome, Result, NEWS_MIN_RELEVANCE};
use postgres::{Client, Transaction};
use r2d2_postgres::postgres;
use std::borrow::Cow;

/// The bytes of a page's text indexed (and shown in snippets): a `tsvector` holds at most
/// 1 MB, and one made of short distinct words takes up to about three times its text.
pub const MAX_INDEXED_BYTES: usize = 200_000;

/// The bytes of a title indexed.
const MAX_TITLE_BYTES: usize = 4_000;

/// The longest word PostgreSQL indexes, in bytes: a longer query word matches nothing.
const MAX_WORD_BYTES: usize = 2046;

/// `ts_rank_cd`'s weights of D, C, B (text) and A (title) matches: a title match counts four
/// times a text match, as in SQLite's BM25.
const WEIGHTS: &str = "{0.0, 0.0, 0.25, 1.0}";

/// The most matching pages a query ranks here (the newest of them): ranking a page reads its
/// vector and its R, 10-40 µs, so that a word in most pages of a 100k-page crawl is answered
/// well under 100 ms (SQLite, which ranks from its index, takes [`query::RANK_POOL`]). On
/// FOLDOC the combined ranking's P@10 stays above SQLite's (docs/benchmarks.md).
const POOL: i64 = 1_000;

/// The newest pages [`pool`] tests first, to tell how common a query's words are.
const PROBE: i64 = 500;

/// The most pages [`pool`] tests one by one for a pool, at the probe's density: more (a word
/// in fewer than about a seventh of the pages) and the GIN index is asked, which reads about
/// as many table pages then.
const MAX_TESTED: i64 = 10 * POOL;

/// The least `ts_rank_cd` taken the logarithm of.
const MIN_RANK: f64 = 1e-9;

/// The `meta` key telling that every page fetched before the index existed is in it.
const BUILT: &str = "search_index";

/// How `ts_headline` cuts a snippet: one fragment of about 16 words, as SQLite's `snippet()`.
fn headline_options() -> String {
    format!(
        "StartSel={MARK_START}, StopSel={MARK_END}, MaxWords=16, MinWords=8, MaxFragments=1, \
         FragmentDelimiter=…"
    )
}

/// `s` as PostgreSQL indexes it: at most `max` bytes (cut at a character), NUL (which its
/// text cannot hold) as a space.
fn indexable(s: &str, max: usize) -> Cow<'_, str> {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let s = &s[..end];
    if s.contains('\0') {
        Cow::Owned(s.replace('\0', " "))
    } else {
        Cow::Borrowed(s)
    }
}

/// Puts fetched pages in the index, replacing what they had, in the caller's transaction (the
/// one recording them): one statement for the whole batch.
pub(super) fn index_pages(tx: &mut Transaction<'_>, pages: &[&Outcome]) -> Result<()> {
    // A page recorded twice in a batch (two revisits) is indexed as last recorded: one
    // statement cannot write a row twice.
    let mut seen = std::collections::HashSet::new();
    let mut pages: Vec<&Outcome> = (pages.iter().rev())
        .filter(|o| seen.insert(o.oid.raw()))
        .copied()
        .collect();
    pages.reverse();
    if pages.is_empty() {
        return Ok(());
    }
    let oids: Vec<i64> = pages.iter().map(|o| o.oid.raw()).collect();
    let titles: Vec<Cow<'_, str>> = (pages.iter())
        .map(|o| indexable(o.title.as_deref().unwrap_or(""), MAX_TITLE_BYTES))
        .collect();
    let texts: Vec<Cow<'_, str>> = (pages.iter())
        .map(|o| indexable(o.text.as_deref().unwrap_or(""), MAX_INDEXED_BYTES))
        .collect();
    let titles: Vec<&str> = titles.iter().map(|t| t.as_ref()).collect();
    let texts: Vec<&str> = texts.iter().map(|t| t.as_ref()).collect();
    tx.execute(
        "INSERT INTO page_search(oid, tsv)
         SELECT o, setweight(to_tsvector('forager', t), 'A')
                   || setweight(to_tsvector('forager', x), 'B')
         FROM unnest($1::int8[], $2::text[], $3::text[]) AS u(o, t, x)
         ON CONFLICT(oid) DO UPDATE SET tsv = excluded.tsv",
        &[&oids, &titles, &texts],
    )?;
    Ok(())
}

/// The `forager` configuration's words folded by `unaccent` before they are stemmed.
const FOLD: &str = "ALTER TEXT SEARCH CONFIGURATION forager
  ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
  WITH unaccent, forager_stem";

/// Makes the `forager` configuration fold diacritics with the `unaccent` extension ("café"
/// finds "cafe" and the reverse, as SQLite's `remove_diacritics`), and takes out of the index
/// the pages indexed without it that have a word it changes (lexemes outside ASCII), for
/// [`build_index`] to index again. Where the extension cannot be made (not installed, or the
/// crawl's role may not create it in this database), says so on stderr at each open and
/// search tells accented words from plain ones.
fn fold_diacritics(c: &mut Client) -> Result<()> {
    let folded = "SELECT 1 FROM pg_ts_config_map m JOIN pg_ts_dict d ON d.oid = m.mapdict
                  WHERE m.mapcfg = 'forager'::regconfig AND d.dictname = 'unaccent' LIMIT 1";
    if c.query_opt(folded, &[])?.is_some() {
        return Ok(());
    }
    let mut tx = c.transaction()?;
    let made = (tx.batch_execute("CREATE EXTENSION IF NOT EXISTS unaccent"))
        .and_then(|()| tx.batch_execute(FOLD));
    if let Err(e) = made {
        eprintln!(
            "forager: search on this crawl tells accented words from plain ones (\"café\" will \
             not find \"cafe\"): a superuser can run CREATE EXTENSION unaccent in this database \
             to fold them ({})",
            super::error::PgError::from(e)
        );
        return Ok(());
    }
    let n = tx.execute(
        "DELETE FROM page_search WHERE tsv::text ~ '[^\\x01-\\x7f]'",
        &[],
    )?;
    if n > 0 {
        tx.execute("DELETE FROM meta WHERE key = $1", &[&BUILT])?;
    }
    tx.commit()?;
    Ok(())
}

/// Puts in the index every fetched page not in it yet (a crawl recorded before the index
/// existed, or before it folded diacritics), a transaction per few hundred pages, with a
/// progress line; once done, it is noted in `meta` and never looked for again. Returns the
/// pages indexed.
pub(super) fn build_index(c: &mut Client) -> Result<usize> {
    fold_diacritics(c)?;
    if (c.query_opt("SELECT 1 FROM meta WHERE key = $1", &[&BUILT])?).is_some() {
        return Ok(0);
    }
    const MISSING: &str =
        "d.status = 2 AND NOT EXISTS (SELECT 1 FROM page_search s WHERE s.oid = d.oid)";
    let total: i64 = c
        .query_one(&format!("SELECT count(*) FROM doc d WHERE {MISSING}"), &[])?
        .get(0);
    let (mut done, mut after) = (0usize, i64::MIN);
    loop {
        let rows = c.query(
            &format!(
                "SELECT d.oid, d.title, d.text FROM doc d WHERE {MISSING} AND d.oid > $1
                 ORDER BY d.oid LIMIT 500"
            ),
            &[&after],
        )?;
        let Some(last) = rows.last() else { break };
        after = last.get(0);
        let pages: Vec<Outcome> = (rows.iter())
            .map(|r| Outcome {
                oid: crate::store::PageId::from_raw(r.get(0)),
                title: r.get(1),
                text: (r.get::<_, Option<Vec<u8>>>(2)).and_then(|b| decompress_text(&b)),
                ..Outcome::default()
            })
            .collect();
        let mut tx = c.transaction()?;
        index_pages(&mut tx, &pages.iter().collect::<Vec<_>>())?;
        tx.commit()?;
        done += pages.len();
        eprintln!("forager: indexing the crawl's pages for search: {done}/{total}");
    }
    c.execute(
        "INSERT INTO meta(key, value) VALUES($1, 'tsvector') ON CONFLICT(key) DO NOTHING",
        &[&BUILT],
    )?;
    Ok(done)
}

/// The `tsquery` of `terms`: each word quoted (words hold letters and digits only, so nothing
/// in them is `tsquery` syntax), a phrase's words in sequence (`<->`), the last word a prefix
/// (`:*`) while typed, terms all required (`&`). `None` when a word is longer than any indexed
/// word: nothing can match.
fn tsquery(terms: &[Term]) -> Option<String> {
    let mut parts = Vec::with_capacity(terms.len());
    for t in terms {
        if t.words.iter().any(|w| w.len() > MAX_WORD_BYTES) {
            return None;
        }
        let words: Vec<String> = t.words.iter().map(|w| format!("'{w}'")).collect();
        let star = if t.prefix { ":*" } else { "" };
        parts.push(format!("({}{star})", words.join(" <-> ")));
    }
    Some(parts.join(" & "))
}

/// The ids of the newest [`POOL`] pages matching `tsq`, in a transaction that allows no
/// sequential scan, by plans that do not depend on the table's statistics (a crawl being
/// recorded may not be analysed yet). The newest [`PROBE`] pages, tested one by one, tell
/// how common the words are: a word in many pages has its pool among the newest few
/// thousand, tested one by one; a rarer one is looked up in the GIN index, which lists
/// every match without reading a vector, then sorted.
fn pool(tx: &mut Transaction<'_>, tsq: &str) -> Result<Vec<i64>> {
    let newest = |tx: &mut Transaction<'_>, rows: i64| -> Result<Vec<i64>> {
        let ids = tx.query(
            "SELECT r.oid FROM to_tsquery('forager', $1) q,
               LATERAL (SELECT oid, tsv FROM page_search ORDER BY oid DESC LIMIT $2) r
             WHERE r.tsv @@ q ORDER BY r.oid DESC LIMIT $3",
            &[&tsq, &rows, &POOL],
        )?;
        Ok(ids.iter().map(|r| r.get(0)).collect())
    };
    let found = newest(tx, PROBE)?.len() as i64;
    // Pages to test for a pool at the probe's density, half again for its variation.
    let rows = (PROBE * POOL * 3 / 2) / found.max(1);
    if rows <= MAX_TESTED {
        let ids = newest(tx, rows)?;
        if ids.len() as i64 == POOL {
            return Ok(ids);
        }
    }
    tx.batch_execute("SET LOCAL enable_indexscan = off")?;
    let ids = tx.query(
        "SELECT s.oid FROM to_tsquery('forager', $1) q, page_search s
         WHERE s.tsv @@ q ORDER BY s.oid DESC LIMIT $2",
        &[&tsq, &POOL],
    )?;
    tx.batch_execute("SET LOCAL enable_indexscan = on")?;
    Ok(ids.iter().map(|r| r.get(0)).collect())
}

/// A fetched page found, before its snippet: its row and its text.
struct Found {
    hit: SearchHit,
    text: String,
}

/// The fetched pages matching `user` (as typed), best first, at most `limit`.
pub(super) fn search(
    c: &mut Client,
    user: &str,
    limit: usize,
    ranking: SearchRanking,
) -> Result<Vec<SearchHit>> {
    let Some(tsq) = tsquery(&query::terms(user)?) else {
        return Ok(Vec::new());
    };
    let mut tx = c.transaction()?;
    // The planner prices `@@` as a cheap operator, unaware that testing a row decompresses
    // the page's vector: left alone it tests every row of a 100k-page crawl (a sequential
    // scan, ~100 ms) for a word in a fifth of the pages. So it is told: no sequential scans.
    tx.batch_execute("SET LOCAL enable_seqscan = off")?;
    let ids = pool(&mut tx, &tsq)?;
    let rows = tx.query(
        &format!(
            "SELECT s.oid, ts_rank_cd('{WEIGHTS}', s.tsv, q, 1)::float8, d.relevance
             FROM to_tsquery('forager', $1) q, page_search s JOIN doc d ON d.oid = s.oid
             WHERE s.oid = ANY($2) AND d.status = 2"
        ),
        &[&tsq, &ids],
    )?;
    tx.commit()?;
    let scored: Vec<(i64, f64, f64)> = (rows.iter())
        .map(|r| (r.get(0), r.get::<_, f64>(1).max(MIN_RANK).ln(), r.get(2)))
        .collect();
    let top = query::best(scored, ranking, limit.min(1000));
    let oids: Vec<i64> = top.iter().map(|t| t.0).collect();
    let mut found: Vec<(i64, Found)> = (c
        .query(
            "SELECT d.oid, d.url, coalesce(d.title, ''), d.relevance, coalesce(t.path, ''),
           d.fetched_at, d.text
         FROM doc d LEFT JOIN taxonomy t ON t.kcid = d.cid WHERE d.oid = ANY($1)",
            &[&oids],
        )?
        .iter())
    .map(|r| {
        let text = (r.get::<_, Option<Vec<u8>>>(6))
            .and_then(|b| decompress_text(&b))
            .unwrap_or_default();
        let hit = SearchHit {
            url: r.get(1),
            title: r.get(2),
            relevance: r.get(3),
            best_leaf: r.get(4),
            fetched_at: r.get(5),
            snippet: String::new(),
            text_score: 0.0,
        };
        (r.get(0), Found { hit, text })
    })
    .collect();
    let mut hits = Vec::with_capacity(top.len());
    let mut texts = Vec::with_capacity(top.len());
    for (oid, text_score) in top {
        if let Some(i) = found.iter().position(|f| f.0 == oid) {
            let Found { mut hit, text } = found.swap_remove(i).1;
            hit.text_score = text_score;
            texts.push(indexable(&text, MAX_INDEXED_BYTES).into_owned());
            hits.push(hit);
        }
    }
    let snippets = c.query(
        "SELECT ts_headline('forager', u.x, to_tsquery('forager', $1), $2)
         FROM unnest($3::text[]) WITH ORDINALITY AS u(x, i) ORDER BY u.i",
        &[&tsq, &headline_options(), &texts],
    )?;
    for (hit, row) in hits.iter_mut().zip(snippets.iter()) {
        hit.snippet = row.get(0);
    }
    Ok(hits)
}

/// The news after `$1` (R at least `$2`): relevant pages first fetched, and changed pages.
const NEWS: &str = "d.status = 2 AND ((d.relevance >= $2 AND d.first_fetched_at > $1)
  OR d.changed_at > $1)";

/// Relevant pages first fetched after `since` and pages changed after `since` (Unix times),
/// newest first, at most `limit`; and how many there are in all.
pub(super) fn news_since(c: &mut Client, since: f64, limit: usize) -> Result<(Vec<NewsItem>, i64)> {
    let rows = c.query(
        &format!(
            "SELECT d.url, coalesce(d.title, ''), d.relevance, coalesce(t.path, ''),
               coalesce(d.changed_at > $1, false),
               greatest(coalesce(d.changed_at, 0), coalesce(d.first_fetched_at, 0)) AS at,
               count(*) OVER ()
             FROM doc d LEFT JOIN taxonomy t ON t.kcid = d.cid WHERE {NEWS}
             ORDER BY at DESC LIMIT $3"
        ),
        &[&since, &NEWS_MIN_RELEVANCE, &super::limit(limit)],
    )?;
    let count = match rows.first() {
        Some(r) => r.get(6),
        None if limit == 0 => {
            let sql = format!("SELECT count(*) FROM doc d WHERE {NEWS}");
            c.query_one(&sql, &[&since, &NEWS_MIN_RELEVANCE])?.get(0)
        }
        None => 0,
    };
    let items = (rows.iter())
        .map(|r| NewsItem {
            url: r.get(0),
            title: r.get(1),
            relevance: r.get(2),
            best_leaf: r.get(3),
            kind: if r.get(4) {
                NewsKind::Changed
            } else {
                NewsKind::New
            },
            at: r.get(5),
        })
        .collect();
    Ok((items, count))
}

/// Bytes the search index takes (its table and GIN index), and the whole database's bytes.
pub(super) fn index_bytes(c: &mut Client) -> Result<(i64, i64)> {
    let r = c.query_one(
        "SELECT pg_total_relation_size('page_search'), pg_database_size(current_database())",
        &[],
    )?;
    Ok((r.get(0), r.get(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_become_a_tsquery_of_quoted_words() {
        let t = query::terms("\"ip address\" NOT it's tune").unwrap();
        assert_eq!(
            tsquery(&t).unwrap(),
            "('ip' <-> 'address') & ('NOT') & ('it' <-> 's') & ('tune':*)"
        );
        let long = "中".repeat(1000);
        assert_eq!(tsquery(&query::terms(&long).unwrap()), None);
    }

    /// The URLs `q` finds in `db`.
    fn found(db: &super::super::PgStore, q: &str) -> Vec<String> {
        use crate::store::Reader as _;
        let hits = db.search(q, 10, SearchRanking::Combined).unwrap();
        hits.into_iter().map(|h| h.url).collect()
    }

    #[test]
    fn a_role_that_may_not_create_unaccent_searches_accents_as_typed_until_it_is_made() {
        use crate::store::contract::{fetched, url};
        use crate::store::postgres::{testing, PgStore};
        use crate::store::{CrawlDb as _, LEASE};
        let Some(server) = testing::server() else {
            return;
        };
        let db = testing::TestDb::create(&server, "no-unaccent");
        let role = format!("forager_plain_{}", std::process::id());
        let admin = |sql: &str| {
            let mut c = Client::connect(db.url(), postgres::NoTls).unwrap();
            c.batch_execute(sql).unwrap();
        };
        // It may create tables in the schema, but not extensions in the database.
        admin(&format!(
            "CREATE ROLE {role} LOGIN; GRANT CREATE ON SCHEMA public TO {role}"
        ));
        let mut as_role = url::Url::parse(db.url()).unwrap();
        as_role.set_username(&role).unwrap();
        let mut st = PgStore::open(as_role.as_str()).expect("opens without unaccent");
        st.add_seeds(&[url("http://e.test/", 1.0, None, None)])
            .unwrap();
        let work = st.checkout("w", 1, LEASE).unwrap();
        let mut page = fetched(work[0].oid, 0.5, "Un café près de la gare.", Vec::new());
        page.title = Some("Café".into());
        st.record(&[page]).unwrap();
        assert_eq!(found(&st, "café "), ["http://e.test/"]);
        assert!(found(&st, "cafe ").is_empty(), "accents as typed");
        drop(st);
        // Opened by a role that may make it: the page is indexed again, folded.
        let st = PgStore::open(db.url()).unwrap();
        assert_eq!(found(&st, "cafe "), ["http://e.test/"]);
        assert_eq!(found(&st, "café "), ["http://e.test/"]);
        assert_eq!(found(&st, "gare "), ["http://e.test/"]);
        drop(st);
        drop(db);
        let mut c = Client::connect(&server, postgres::NoTls).unwrap();
        c.batch_execute(&format!("DROP ROLE {role}")).unwrap();
    }

    #[test]
    fn text_is_cut_at_a_character_and_loses_its_nuls() {
        assert_eq!(indexable("aé", 2), "a");
        assert_eq!(indexable("a\0b", 10), "a b");
        assert!(matches!(indexable("abc", 10), Cow::Borrowed("abc")));
    }
}
