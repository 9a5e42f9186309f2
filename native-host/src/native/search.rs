//! The `search` and `whats_new` requests: the crawl's pages found by their words, and what is
//! new since the user last looked, read from the crawl database beside a running crawl.

use super::*;
use crate::store::{NewsItem, SearchRanking};

/// The most hits one `search` reply carries.
pub(super) const MAX_HITS: u64 = 50;

/// The most pages one `whats_new` reply lists (the count covers all).
pub(super) const MAX_NEWS: u64 = 200;

/// A page found (`SearchHit` in protocol.js).
#[derive(Clone, Debug, serde::Serialize)]
pub struct HitView {
    /// URL.
    pub url: String,
    /// Title ("" when none).
    pub title: String,
    /// The snippet: even items plain text, odd items the matched words.
    pub snippet: Vec<String>,
    /// R(d).
    pub relevance: f64,
    /// Path of its best leaf.
    pub best_leaf: String,
}

/// Opens the host's crawl database for reading, upgraded to this build's schema first (a
/// database made before search is indexed once); `None` when there is no crawl yet.
fn readable(paths: &HostPaths) -> Result<Option<Box<dyn Reader + Send>>, Refusal> {
    if !paths.has_crawl() {
        return Ok(None);
    }
    let at = paths.locator();
    off_the_runtime(|| crate::store::upgrade(&at))?;
    Ok(Some(read_only(paths)?))
}

/// The crawl's pages matching `query`, best first (BM25 with R); a query that cannot be
/// searched for is refused in plain words.
pub(super) fn search(paths: &HostPaths, query: &str, most: u64) -> Result<Reply, Refusal> {
    // The query's own checks say what is wrong with it; this only bounds the work.
    session::limit("query", query, 64 * 1024)?;
    let Some(ro) = readable(paths)? else {
        return Ok(Reply::Search { hits: Vec::new() });
    };
    let found = off_the_runtime(|| {
        ro.search(
            query,
            most.clamp(1, MAX_HITS) as usize,
            SearchRanking::Combined,
        )
    });
    let hits = match found {
        Ok(h) => h,
        Err(crate::store::StoreError::BadQuery(why)) => return Err(Refusal::Invalid(why)),
        Err(e) => return Err(e.into()),
    };
    Ok(Reply::Search {
        hits: (hits.iter())
            .map(|h| HitView {
                url: h.url.clone(),
                title: h.title.clone(),
                snippet: h.snippet_parts(),
                relevance: h.relevance,
                best_leaf: h.best_leaf.clone(),
            })
            .collect(),
    })
}

/// What is new since `since` (Unix seconds): relevant pages first fetched and pages changed
/// on a revisit, newest first, with their count and the host's time now.
pub(super) fn whats_new(paths: &HostPaths, since: f64, limit: u64) -> Result<Reply, Refusal> {
    if !since.is_finite() {
        return Err(Refusal::Invalid(
            "\"since\" must be a time in seconds".into(),
        ));
    }
    let now = crate::store::now();
    let Some(ro) = readable(paths)? else {
        return Ok(Reply::WhatsNew {
            now,
            count: 0,
            pages: Vec::new(),
        });
    };
    let (pages, count): (Vec<NewsItem>, i64) =
        off_the_runtime(|| ro.news_since(since, limit.min(MAX_NEWS) as usize))?;
    Ok(Reply::WhatsNew { now, count, pages })
}
