//! The crawl's one door to its database, as a trait: what the watchdog, the workers' records,
//! the mining programs and a crawl's preparation ask of the store. `Store` (one SQLite file)
//! implements it; a server-backed store for crawls spread over machines is the next one.
//! Reports and the browser read through [`super::Reader`].

use super::{judge::Verdict, Instance, NewUrl, Outcome, Recorded, Result, Store, Work};
use crate::distiller::{Edge, Scores};
use forager_classifier::apprentice::Apprentice;
use std::collections::HashMap;

/// The crawl database as the crawl uses it (focused-crawling-1999 §4.1): the frontier, the
/// record of each fetch, and the tables the mining programs read and write.
pub trait CrawlDb: Send + 'static {
    // A crawl's preparation.
    /// Replaces the stored taxonomy and examples with the model's.
    fn save_taxonomy(&mut self, model: &forager_classifier::Model) -> Result<()>;
    /// Adds seed URLs to the frontier (ahead of discovered links).
    fn add_seeds(&mut self, seeds: &[NewUrl]) -> Result<()>;
    /// Puts the unvisited out-links of a fetched page at the head of the frontier ("crawl
    /// more from here"); returns how many were queued.
    fn boost_out_links(&mut self, url: &str) -> Result<usize>;
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
    /// Checks out up to `n` of the best frontier URLs for fetching.
    fn checkout(&mut self, n: usize) -> Result<Vec<Work>>;
    /// Checks out up to `n` fetched pages older than `min_age` seconds for a revisit.
    fn checkout_revisits(&mut self, n: usize, min_age: f64) -> Result<Vec<Work>>;
    /// Returns checked-out URLs to the frontier unfetched.
    fn release(&mut self, oids: &[i64]) -> Result<()>;
    /// Records a batch of fetch outcomes in one transaction.
    fn record(&mut self, batch: &[Outcome]) -> Result<Recorded>;

    // The mining programs.
    /// Re-scores the frontier by `score` over the stored features of links into each URL
    /// (with the link's soft-focus score: R(parent) × its weight).
    fn rescore_frontier(&mut self, score: impl Fn(&[u32], f64) -> f64) -> Result<usize>;
    /// Re-judges fetched pages by `judge` and, when `frontier`, re-scores the frontier.
    fn rejudge(
        &mut self,
        judge: impl FnMut(&str, &str) -> Verdict,
        frontier: bool,
    ) -> Result<(usize, usize)>;
    /// Calls `f` with the URL and main text of every fetched page.
    fn for_each_fetched_text(&self, f: impl FnMut(&str, &str)) -> Result<()>;
    /// The apprentice trained on every instance recorded so far (resuming a crawl).
    fn trained_apprentice(&self) -> Result<Apprentice>;
    /// Every apprentice instance recorded so far.
    fn all_instances(&self) -> Result<Vec<Instance>>;
    /// The crawl graph and relevance for the distiller.
    fn graph(&self) -> Result<(Vec<Edge>, HashMap<i64, f64>)>;
    /// Stores a distillation's hub and authority scores.
    fn save_distillation(&mut self, scores: &Scores) -> Result<()>;
    /// Raises the unvisited neighbours of the `top` hubs in the frontier.
    fn boost_hub_neighbours(&mut self, top: usize) -> Result<usize>;
    /// Each host's next allowed request (Unix seconds), remembered across stop and start.
    fn host_slots(&self) -> Result<Vec<(String, f64)>> {
        Ok(Vec::new())
    }
    /// Remembers each host's next allowed request (Unix seconds) for the next start.
    fn save_host_slots(&mut self, _slots: &[(String, f64)]) -> Result<()> {
        Ok(())
    }
}

impl CrawlDb for Store {
    fn save_taxonomy(&mut self, model: &forager_classifier::Model) -> Result<()> {
        Store::save_taxonomy(self, model)
    }
    fn add_seeds(&mut self, seeds: &[NewUrl]) -> Result<()> {
        Store::add_seeds(self, seeds)
    }
    fn boost_out_links(&mut self, url: &str) -> Result<usize> {
        Store::boost_out_links(self, url)
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
    fn checkout(&mut self, n: usize) -> Result<Vec<Work>> {
        Store::checkout(self, n)
    }
    fn checkout_revisits(&mut self, n: usize, min_age: f64) -> Result<Vec<Work>> {
        Store::checkout_revisits(self, n, min_age)
    }
    fn release(&mut self, oids: &[i64]) -> Result<()> {
        Store::release(self, oids)
    }
    fn record(&mut self, batch: &[Outcome]) -> Result<Recorded> {
        Store::record(self, batch)
    }
    fn rescore_frontier(&mut self, score: impl Fn(&[u32], f64) -> f64) -> Result<usize> {
        Store::rescore_frontier(self, score)
    }
    fn rejudge(
        &mut self,
        judge: impl FnMut(&str, &str) -> Verdict,
        frontier: bool,
    ) -> Result<(usize, usize)> {
        Store::rejudge(self, judge, frontier)
    }
    fn for_each_fetched_text(&self, f: impl FnMut(&str, &str)) -> Result<()> {
        Store::for_each_fetched_text(self, f)
    }
    fn trained_apprentice(&self) -> Result<Apprentice> {
        Store::trained_apprentice(self)
    }
    fn all_instances(&self) -> Result<Vec<Instance>> {
        Store::all_instances(self)
    }
    fn graph(&self) -> Result<(Vec<Edge>, HashMap<i64, f64>)> {
        Store::graph(self)
    }
    fn save_distillation(&mut self, scores: &Scores) -> Result<()> {
        Store::save_distillation(self, scores)
    }
    fn boost_hub_neighbours(&mut self, top: usize) -> Result<usize> {
        Store::boost_hub_neighbours(self, top)
    }
    fn host_slots(&self) -> Result<Vec<(String, f64)>> {
        Store::host_slots(self)
    }
    fn save_host_slots(&mut self, slots: &[(String, f64)]) -> Result<()> {
        Store::save_host_slots(self, slots)
    }
}
