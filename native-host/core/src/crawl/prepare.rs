//! One way to prepare a crawl, shared by the command line, the browser's host and the bench:
//! the model's taxonomy goes into the database, the seeds and the pages to "crawl more from"
//! into the frontier, and failed URLs get another try when asked.

use crate::store::{CrawlDb, NewUrl, StoreError};

/// What a crawl starts from.
#[derive(Clone, Debug, Default)]
pub struct Start {
    /// Seed URLs (canonical).
    pub seeds: Vec<url::Url>,
    /// Fetched pages whose unvisited links go to the head of the frontier; a page not fetched
    /// yet (or with nothing left to follow) becomes a seed instead.
    pub more_from: Vec<url::Url>,
    /// Put failed and excluded URLs back in the frontier first.
    pub retry_failed: bool,
}

/// What preparing did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prepared {
    /// Seeds added (the given ones and the "more from" pages that became seeds).
    pub seeds: usize,
    /// Links queued first from the "more from" pages.
    pub queued: usize,
    /// Failed URLs put back in the frontier.
    pub retried: usize,
    /// Pages fetched before this start (page budgets count from here).
    pub fetched: u64,
    /// URLs in the frontier now.
    pub frontier: i64,
}

/// Prepares `store` for a crawl with `model` from `start`.
pub fn prepare(
    store: &mut impl CrawlDb,
    model: &forager_classifier::Model,
    start: &Start,
) -> Result<Prepared, StoreError> {
    store.save_taxonomy(model)?;
    let mut seeds: Vec<NewUrl> = start.seeds.iter().map(NewUrl::seed).collect();
    let mut queued = 0;
    for u in &start.more_from {
        let n = store.boost_out_links(u.as_str(), super::policy::BOOST)?;
        if n == 0 {
            // A page the user read, not a seed they typed: never trusted as one.
            seeds.push(NewUrl::queued(u));
        }
        queued += n;
    }
    store.add_seeds(&seeds)?;
    let retried = if start.retry_failed {
        store.retry_failed()?
    } else {
        0
    };
    Ok(Prepared {
        seeds: seeds.len(),
        queued,
        retried,
        fetched: u64::try_from(store.fetched()?).unwrap_or(0),
        frontier: store.frontier_len()?,
    })
}
