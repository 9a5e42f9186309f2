//! The crawl's one door to its database, as a trait: what the watchdog, the workers' records,
//! the mining programs and a crawl's preparation ask of the store. `Store` (one SQLite file)
//! implements it; a server-backed store for crawls spread over machines is the next one.
//! Reports and the browser read through [`super::Reader`].
//!
//! The door holds no focus policy: scores, boosts, the retry cap and the critic's threshold
//! are decided by `crawl::policy` and handed in as numbers. Bulk reads come a page of rows at a
//! time ([`PAGE`] rows, keyed on the last row read), so the trait takes no closures and can be
//! used as `dyn CrawlDb`.

use super::{judge::Verdict, ApprenticeEvidence, NewUrl, Outcome, Reader, Recorded, Result};
use super::{Store, Work};
use crate::distiller::{Edge, Scores};
use std::collections::HashMap;
use std::time::Duration;

/// Rows per page of the door's bulk reads.
pub const PAGE: usize = 2048;

/// A page's id in a crawl database: opaque to the crawl, which compares, hashes and hands it
/// back but never computes with it. Back-ends give it out (SQLite's rowid, a server's key).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PageId(i64);

impl PageId {
    /// The id a back-end stores as `raw`.
    pub fn from_raw(raw: i64) -> Self {
        PageId(raw)
    }

    /// The stored value (for back-ends and reports that join on it).
    pub fn raw(self) -> i64 {
        self.0
    }
}

impl rusqlite::ToSql for PageId {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.0.into())
    }
}

impl rusqlite::types::FromSql for PageId {
    fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        v.as_i64().map(PageId)
    }
}

/// A fetched page's stored main text.
#[derive(Clone, Debug, PartialEq)]
pub struct PageText {
    /// Its id (page on after it).
    pub oid: PageId,
    /// URL.
    pub url: String,
    /// Main text; `None` when the stored text cannot be read.
    pub text: Option<String>,
}

/// A link into a frontier URL: what re-scoring the frontier reads.
#[derive(Clone, Debug, PartialEq)]
pub struct InLink {
    /// The frontier URL's id.
    pub dst: PageId,
    /// Its frontier score now.
    pub dst_score: f64,
    /// The linking page's id.
    pub src: PageId,
    /// The linking page's R(d) when it is fetched.
    pub src_relevance: Option<f64>,
    /// The link's weight (the share of R(src) it passes on).
    pub weight: f64,
    /// The apprentice's features of the link, when recorded.
    pub features: Option<Vec<u32>>,
}

/// A frontier URL's new score, set only while it still holds the score it was read with:
/// (its id, that score, the new one).
pub type ScoreChange = (PageId, f64, f64);

/// The links into frontier URLs, read on a connection of the reader's own: re-scoring the
/// frontier beside the crawl while its door records.
pub trait InLinkReader: Send {
    /// A page of links into frontier URLs, as [`CrawlDb::frontier_in_links`].
    fn frontier_in_links(
        &self,
        after: Option<(PageId, PageId)>,
        limit: usize,
    ) -> Result<Vec<InLink>>;
}

/// The crawl database as the crawl uses it (focused-crawling-1999 §4.1): the frontier, the
/// record of each fetch, and the tables the mining programs read and write.
pub trait CrawlDb: Send + 'static {
    // A crawl's preparation.
    /// Replaces the stored taxonomy and examples with the model's.
    fn save_taxonomy(&mut self, model: &forager_classifier::Model) -> Result<()>;
    /// Adds seed URLs to the frontier (ahead of discovered links).
    fn add_seeds(&mut self, seeds: &[NewUrl]) -> Result<()>;
    /// Raises the unvisited out-links of a fetched page to at least `score` ("crawl more
    /// from here"); returns how many.
    fn boost_out_links(&mut self, url: &str, score: f64) -> Result<usize>;
    /// Returns failed and excluded URLs to the frontier; returns how many.
    fn retry_failed(&mut self) -> Result<usize>;
    /// Records the focus mode the crawl runs in (the monitor reads it).
    fn set_mode(&mut self, mode: &str) -> Result<()>;

    // Counts.
    /// The seed URLs (depth 0).
    fn seed_urls(&self) -> Result<Vec<String>>;
    /// Fetched URLs in fetch order.
    fn fetched_urls(&self) -> Result<Vec<String>>;
    /// Number of fetched pages.
    fn fetched(&self) -> Result<i64>;
    /// URLs given up on, failed or excluded.
    fn given_up(&self) -> Result<i64>;
    /// Unvisited URLs in the frontier.
    fn frontier_len(&self) -> Result<i64>;

    // The frontier and the record of fetches.
    /// Checks out for `worker` up to `n` of the best frontier URLs among the hosts it holds
    /// or no live worker holds (claimed as met, so hosts are taken in order of their best
    /// pending URL), marking them in flight; the worker's lease starts or extends to `lease`
    /// from now. One worker alone gets the global best-first order.
    fn checkout(&mut self, worker: &str, n: usize, lease: Duration) -> Result<Vec<Work>>;

    // Host leases: a worker holds hosts; only it checks out their URLs.
    /// Claims for `worker` up to `n` hosts with frontier URLs no live worker holds, in order
    /// of their best pending URL; returns their names.
    fn claim_hosts(&mut self, worker: &str, n: usize, lease: Duration) -> Result<Vec<String>>;
    /// Extends `worker`'s lease to `lease` from now (its heartbeat) and ends others' lapsed
    /// leases; returns how many hosts `worker` holds.
    fn renew(&mut self, worker: &str, lease: Duration) -> Result<usize>;
    /// Gives `hosts` back (dry, or the worker stops): `worker`'s in-flight URLs of them
    /// return to the frontier.
    fn release_hosts(&mut self, worker: &str, hosts: &[String]) -> Result<()>;
    /// Ends lapsed leases: their hosts are free, their in-flight URLs back in the frontier
    /// (fetched pages stay); returns how many URLs came back.
    fn expire_leases(&mut self) -> Result<usize>;
    /// The hosts `worker` holds, by name.
    fn held_hosts(&self, worker: &str) -> Result<Vec<String>>;
    /// Whether any host held under a lease (live, or lapsed and not yet ended) has URLs in the
    /// frontier or in flight: work that may still bring links, or come back to the crawl. It
    /// is answered after every claim begun before it has committed (a process whose frontier
    /// ran dry asks it before it ends).
    fn leased_work_left(&self) -> Result<bool>;
    /// Checks out up to `n` fetched pages older than `min_age` seconds for a revisit.
    fn checkout_revisits(&mut self, n: usize, min_age: f64) -> Result<Vec<Work>>;
    /// Returns checked-out URLs to the frontier unfetched.
    fn release(&mut self, oids: &[PageId]) -> Result<()>;
    /// Records a batch of fetch outcomes (statuses as the policy settled them) in one
    /// transaction.
    fn record(&mut self, batch: &[Outcome]) -> Result<Recorded>;

    // The mining programs.
    /// A page of links into frontier URLs, in (target, source) order after `after` (from the first when `None`).
    fn frontier_in_links(
        &self,
        after: Option<(PageId, PageId)>,
        limit: usize,
    ) -> Result<Vec<InLink>>;
    /// Sets frontier URLs' scores (as the policy re-scored them); returns rows updated.
    fn set_frontier_scores(&mut self, scores: &[(PageId, f64)]) -> Result<usize>;
    /// Sets the new score of each frontier URL that still holds the score it was read with
    /// (a URL raised or fetched since keeps what it has); returns rows updated.
    fn swap_frontier_scores(&mut self, changes: &[ScoreChange]) -> Result<usize>;
    /// A reader of the links into frontier URLs on a connection of its own, or `None` when
    /// the back-end has none (an in-memory database).
    fn in_link_reader(&self) -> Result<Option<Box<dyn InLinkReader>>> {
        Ok(None)
    }
    /// The row ids of those of `urls` that are in the frontier (unvisited), by position.
    fn frontier_ids(&self, urls: &[String]) -> Result<Vec<Option<PageId>>>;
    /// A page of fetched pages' texts, in id order after `after` (from the first when `None`).
    fn fetched_texts(&self, after: Option<PageId>, limit: usize) -> Result<Vec<PageText>>;
    /// Stores fetched pages' new verdicts.
    fn save_verdicts(&mut self, verdicts: &[(PageId, Verdict)]) -> Result<()>;
    /// Every link with features whose target is fetched: (features, target's R(d)).
    fn apprentice_evidence(&self) -> Result<Vec<ApprenticeEvidence>>;
    /// The crawl graph and relevance for the distiller.
    fn graph(&self) -> Result<(Vec<Edge>, HashMap<i64, f64>)>;
    /// Stores a distillation's hub and authority scores.
    fn save_distillation(&mut self, scores: &Scores) -> Result<()>;
    /// Raises the unvisited neighbours of the `top` hubs to at least `score`.
    fn boost_hub_neighbours(&mut self, top: usize, score: f64) -> Result<usize>;
    /// Each host's next allowed request (Unix seconds), remembered across stop and start.
    fn host_slots(&self) -> Result<Vec<(String, f64)>> {
        Ok(Vec::new())
    }
    /// Remembers each host's next allowed request (Unix seconds) for the next start.
    fn save_host_slots(&mut self, _slots: &[(String, f64)]) -> Result<()> {
        Ok(())
    }

    // The read side.
    /// The crawl's questions ([`Reader`]) over this door's own connection.
    fn reader(&self) -> Box<dyn Reader + '_>;

    // A crawl shared by many workers.
    /// What the crawl's workers share ([`super::SharedDb`]: the model's and the apprentice's
    /// versions, the periodic job); `None` on a back-end one process owns.
    fn shared(&mut self) -> Option<&mut dyn super::SharedDb> {
        None
    }
    /// The least time between two requests to one host in this door's crawl: a checkout on a
    /// shared crawl takes URLs of hosts ready now first ([`crate::crawl::policy::claim`]); a
    /// no-op where one process holds every host.
    fn set_politeness(&mut self, _gap: Duration) {}
}

impl CrawlDb for Store {
    fn save_taxonomy(&mut self, model: &forager_classifier::Model) -> Result<()> {
        Store::save_taxonomy(self, model)
    }
    fn add_seeds(&mut self, seeds: &[NewUrl]) -> Result<()> {
        Store::add_seeds(self, seeds)
    }
    fn boost_out_links(&mut self, url: &str, score: f64) -> Result<usize> {
        Store::boost_out_links(self, url, score)
    }
    fn retry_failed(&mut self) -> Result<usize> {
        Store::retry_failed(self)
    }
    fn set_mode(&mut self, mode: &str) -> Result<()> {
        self.set_meta("mode", mode)
    }
    fn seed_urls(&self) -> Result<Vec<String>> {
        Store::seed_urls(self)
    }
    fn fetched_urls(&self) -> Result<Vec<String>> {
        Store::fetched_urls(self)
    }
    fn fetched(&self) -> Result<i64> {
        Store::fetched(self)
    }
    fn given_up(&self) -> Result<i64> {
        Store::given_up(self)
    }
    fn frontier_len(&self) -> Result<i64> {
        Store::frontier_len(self)
    }
    fn checkout(&mut self, worker: &str, n: usize, lease: Duration) -> Result<Vec<Work>> {
        Store::checkout_leased(self, worker, n, lease)
    }
    fn claim_hosts(&mut self, worker: &str, n: usize, lease: Duration) -> Result<Vec<String>> {
        Store::claim_hosts(self, worker, n, lease)
    }
    fn renew(&mut self, worker: &str, lease: Duration) -> Result<usize> {
        Store::renew(self, worker, lease)
    }
    fn release_hosts(&mut self, worker: &str, hosts: &[String]) -> Result<()> {
        Store::release_hosts(self, worker, hosts)
    }
    fn expire_leases(&mut self) -> Result<usize> {
        Store::expire_leases(self)
    }
    fn held_hosts(&self, worker: &str) -> Result<Vec<String>> {
        Store::held_hosts(self, worker)
    }
    fn leased_work_left(&self) -> Result<bool> {
        Store::leased_work_left(self)
    }
    fn checkout_revisits(&mut self, n: usize, min_age: f64) -> Result<Vec<Work>> {
        Store::checkout_revisits(self, n, min_age)
    }
    fn release(&mut self, oids: &[PageId]) -> Result<()> {
        Store::release(self, oids)
    }
    fn record(&mut self, batch: &[Outcome]) -> Result<Recorded> {
        Store::record(self, batch)
    }
    fn frontier_in_links(
        &self,
        after: Option<(PageId, PageId)>,
        limit: usize,
    ) -> Result<Vec<InLink>> {
        Store::frontier_in_links(self, after, limit)
    }
    fn set_frontier_scores(&mut self, scores: &[(PageId, f64)]) -> Result<usize> {
        Store::set_frontier_scores(self, scores)
    }
    fn swap_frontier_scores(&mut self, changes: &[ScoreChange]) -> Result<usize> {
        Store::swap_frontier_scores(self, changes)
    }
    fn in_link_reader(&self) -> Result<Option<Box<dyn InLinkReader>>> {
        Store::in_link_reader(self)
    }
    fn frontier_ids(&self, urls: &[String]) -> Result<Vec<Option<PageId>>> {
        Store::frontier_ids(self, urls)
    }
    fn fetched_texts(&self, after: Option<PageId>, limit: usize) -> Result<Vec<PageText>> {
        Store::fetched_texts(self, after, limit)
    }
    fn save_verdicts(&mut self, verdicts: &[(PageId, Verdict)]) -> Result<()> {
        Store::save_verdicts(self, verdicts)
    }
    fn apprentice_evidence(&self) -> Result<Vec<ApprenticeEvidence>> {
        Store::apprentice_evidence(self)
    }
    fn graph(&self) -> Result<(Vec<Edge>, HashMap<i64, f64>)> {
        Store::graph(self)
    }
    fn save_distillation(&mut self, scores: &Scores) -> Result<()> {
        Store::save_distillation(self, scores)
    }
    fn boost_hub_neighbours(&mut self, top: usize, score: f64) -> Result<usize> {
        Store::boost_hub_neighbours(self, top, score)
    }
    fn host_slots(&self) -> Result<Vec<(String, f64)>> {
        Store::host_slots(self)
    }
    fn save_host_slots(&mut self, slots: &[(String, f64)]) -> Result<()> {
        Store::save_host_slots(self, slots)
    }
    fn reader(&self) -> Box<dyn Reader + '_> {
        Box::new(self.read())
    }
}

/// A boxed door is a door: the crawl runs on whatever back-end [`super::open`] chose.
impl<T: CrawlDb + ?Sized> CrawlDb for Box<T> {
    fn save_taxonomy(&mut self, model: &forager_classifier::Model) -> Result<()> {
        (**self).save_taxonomy(model)
    }
    fn add_seeds(&mut self, seeds: &[NewUrl]) -> Result<()> {
        (**self).add_seeds(seeds)
    }
    fn boost_out_links(&mut self, url: &str, score: f64) -> Result<usize> {
        (**self).boost_out_links(url, score)
    }
    fn retry_failed(&mut self) -> Result<usize> {
        (**self).retry_failed()
    }
    fn set_mode(&mut self, mode: &str) -> Result<()> {
        (**self).set_mode(mode)
    }
    fn seed_urls(&self) -> Result<Vec<String>> {
        (**self).seed_urls()
    }
    fn fetched_urls(&self) -> Result<Vec<String>> {
        (**self).fetched_urls()
    }
    fn fetched(&self) -> Result<i64> {
        (**self).fetched()
    }
    fn given_up(&self) -> Result<i64> {
        (**self).given_up()
    }
    fn frontier_len(&self) -> Result<i64> {
        (**self).frontier_len()
    }
    fn checkout(&mut self, worker: &str, n: usize, lease: Duration) -> Result<Vec<Work>> {
        (**self).checkout(worker, n, lease)
    }
    fn claim_hosts(&mut self, worker: &str, n: usize, lease: Duration) -> Result<Vec<String>> {
        (**self).claim_hosts(worker, n, lease)
    }
    fn renew(&mut self, worker: &str, lease: Duration) -> Result<usize> {
        (**self).renew(worker, lease)
    }
    fn release_hosts(&mut self, worker: &str, hosts: &[String]) -> Result<()> {
        (**self).release_hosts(worker, hosts)
    }
    fn expire_leases(&mut self) -> Result<usize> {
        (**self).expire_leases()
    }
    fn held_hosts(&self, worker: &str) -> Result<Vec<String>> {
        (**self).held_hosts(worker)
    }
    fn leased_work_left(&self) -> Result<bool> {
        (**self).leased_work_left()
    }
    fn checkout_revisits(&mut self, n: usize, min_age: f64) -> Result<Vec<Work>> {
        (**self).checkout_revisits(n, min_age)
    }
    fn release(&mut self, oids: &[PageId]) -> Result<()> {
        (**self).release(oids)
    }
    fn record(&mut self, batch: &[Outcome]) -> Result<Recorded> {
        (**self).record(batch)
    }
    fn frontier_in_links(
        &self,
        after: Option<(PageId, PageId)>,
        limit: usize,
    ) -> Result<Vec<InLink>> {
        (**self).frontier_in_links(after, limit)
    }
    fn set_frontier_scores(&mut self, scores: &[(PageId, f64)]) -> Result<usize> {
        (**self).set_frontier_scores(scores)
    }
    fn swap_frontier_scores(&mut self, changes: &[ScoreChange]) -> Result<usize> {
        (**self).swap_frontier_scores(changes)
    }
    fn in_link_reader(&self) -> Result<Option<Box<dyn InLinkReader>>> {
        (**self).in_link_reader()
    }
    fn frontier_ids(&self, urls: &[String]) -> Result<Vec<Option<PageId>>> {
        (**self).frontier_ids(urls)
    }
    fn fetched_texts(&self, after: Option<PageId>, limit: usize) -> Result<Vec<PageText>> {
        (**self).fetched_texts(after, limit)
    }
    fn save_verdicts(&mut self, verdicts: &[(PageId, Verdict)]) -> Result<()> {
        (**self).save_verdicts(verdicts)
    }
    fn apprentice_evidence(&self) -> Result<Vec<ApprenticeEvidence>> {
        (**self).apprentice_evidence()
    }
    fn graph(&self) -> Result<(Vec<Edge>, HashMap<i64, f64>)> {
        (**self).graph()
    }
    fn save_distillation(&mut self, scores: &Scores) -> Result<()> {
        (**self).save_distillation(scores)
    }
    fn boost_hub_neighbours(&mut self, top: usize, score: f64) -> Result<usize> {
        (**self).boost_hub_neighbours(top, score)
    }
    fn host_slots(&self) -> Result<Vec<(String, f64)>> {
        (**self).host_slots()
    }
    fn save_host_slots(&mut self, slots: &[(String, f64)]) -> Result<()> {
        (**self).save_host_slots(slots)
    }
    fn reader(&self) -> Box<dyn Reader + '_> {
        (**self).reader()
    }
    fn shared(&mut self) -> Option<&mut dyn super::SharedDb> {
        (**self).shared()
    }
    fn set_politeness(&mut self, gap: Duration) {
        (**self).set_politeness(gap)
    }
}
