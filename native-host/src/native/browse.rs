//! Browse with Forager, the host's side: the apprentice the browser scores the links of the
//! page being read with, and the links the user queues from it for the crawl.

use super::*;
use crate::store::NewUrl;
use crate::widen;

/// The most URLs one `queue_links` takes (a page's "best next links" are a handful).
pub(super) const MAX_QUEUED: usize = 1000;
/// Batches of queued URLs waiting for the running crawl to take them.
pub(super) const QUEUE_DEPTH: usize = 16;

/// The most example pages shown as a suggestion's evidence.
const EVIDENCE: usize = 3;

impl Session {
    /// Where the census suggests widening the focus, with example pages (none before a crawl).
    pub(super) fn suggestions(&self) -> Result<Reply, Refusal> {
        if !self.paths.has_crawl() {
            return Ok(Reply::Suggestions {
                suggestions: Vec::new(),
                looked: None,
            });
        }
        let tax = self.model.taxonomy();
        let (suggestions, looked) = off_the_runtime(|| -> Result<_, crate::store::StoreError> {
            let ro = read_only(&self.paths)?;
            let census = ro.linked_census(widen::RELEVANT)?;
            let linked: Vec<(TopicId, u64)> = (census.into_iter())
                .filter_map(|(c, n)| Some((TopicId::try_from(c).ok()?, n)))
                .collect();
            let looked = widen::looked(tax, &linked);
            let mut out = Vec::new();
            for s in widen::suggest(tax, &linked) {
                let mut examples = Vec::new();
                for (c, _) in linked
                    .iter()
                    .filter(|(c, _)| tax.is_ancestor_or_self(s.topic, *c))
                {
                    let room = EVIDENCE.saturating_sub(examples.len());
                    if room == 0 {
                        break;
                    }
                    for (url, title) in ro.linked_examples(widen::RELEVANT, i64::from(*c), room)? {
                        examples.push(ExampleLink { url, title });
                    }
                }
                out.push(SuggestionView {
                    suggestion: s,
                    examples,
                });
            }
            Ok((out, looked))
        })?;
        Ok(Reply::Suggestions {
            suggestions,
            looked: Some(looked),
        })
    }

    /// One chunk of the apprentice trained on the crawl's instances, as bytes; it is built at
    /// offset 0 and kept for the chunks that follow.
    pub(super) fn get_apprentice(&mut self, offset: u64) -> Result<Reply, Refusal> {
        if offset == 0 || self.apprentice.is_none() {
            if !self.paths.has_crawl() {
                return Err(Refusal::Missing(
                    "no crawl yet: the apprentice learns from a crawl's links".into(),
                ));
            }
            let bytes = off_the_runtime(|| -> Result<Vec<u8>, crate::store::StoreError> {
                Ok(read_only(&self.paths)?.trained_apprentice()?.to_bytes())
            })?;
            self.apprentice = Some(bytes);
        }
        chunk(
            self.apprentice.as_deref().unwrap_or_default(),
            offset,
            "apprentice",
        )
    }

    /// Puts `urls` at the head of the frontier: through the running crawl when there is one,
    /// else straight into the crawl database for the next start.
    pub(super) fn queue_links(&mut self, urls: &[String]) -> Result<Reply, Refusal> {
        if urls.is_empty() || urls.len() > MAX_QUEUED {
            return Err(Refusal::Invalid(format!(
                "queue from 1 to {MAX_QUEUED} links (got {})",
                urls.len()
            )));
        }
        let canon = urls
            .iter()
            .map(|s| crate::canon::seed(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Refusal::Invalid(clip(&e, 300)))?;
        let fates = self.fates(urls, &canon)?;
        // Links of a web page: at the head of the frontier, never trusted as seeds. A page
        // fetched or given up on already is not queued again (the reply says which).
        let seeds: Vec<NewUrl> = (canon.iter().zip(&fates))
            .filter(|(_, f)| f.fate == "queued")
            .map(|(u, _)| NewUrl::queued(u))
            .collect();
        if seeds.is_empty() {
            return Ok(Reply::Queued {
                queued: 0,
                running: self.crawl_running(),
                fates,
                status: self.status(),
            });
        }
        let queued = seeds.len();
        let running = match self.crawl.as_ref().filter(|_| self.crawl_running()) {
            Some(c) => {
                c.queue.try_send(seeds).map_err(|_| {
                    Refusal::Busy("the crawl has not taken the last links yet; try again".into())
                })?;
                true
            }
            None => {
                std::fs::create_dir_all(&self.paths.dir)
                    .map_err(|e| Refusal::Failed(format!("{}: {e}", self.paths.dir.display())))?;
                let mut store = crate::store::open(&locator(&self.paths))?;
                off_the_runtime(|| store.add_seeds(&seeds))?;
                false
            }
        };
        Ok(Reply::Queued {
            queued,
            running,
            fates,
            status: self.status(),
        })
    }

    /// What the crawl did with each URL so far; URLs that do not parse are "refused".
    pub(super) fn link_fates(&self, urls: &[String]) -> Result<Reply, Refusal> {
        if urls.len() > MAX_QUEUED {
            return Err(Refusal::Invalid(format!(
                "ask about at most {MAX_QUEUED} links (got {})",
                urls.len()
            )));
        }
        let (ok, canon): (Vec<String>, Vec<url::Url>) = (urls.iter())
            .filter_map(|s| Some((s.clone(), crate::canon::seed(s).ok()?)))
            .unzip();
        let mut fates = self.fates(&ok, &canon)?;
        for f in &mut fates {
            if f.fate == "queued" {
                f.fate = "new";
                f.why = "not fetched yet".into();
            }
        }
        Ok(Reply::LinkFates { fates })
    }

    /// What queueing each URL does: "queued", or "fetched" / "failed" when the crawl has been
    /// there already (with why, in words).
    fn fates(&self, urls: &[String], canon: &[url::Url]) -> Result<Vec<QueueFate>, Refusal> {
        let known = if self.paths.has_crawl() {
            off_the_runtime(|| -> Result<Vec<_>, crate::store::StoreError> {
                let ro = read_only(&self.paths)?;
                let db = &*ro;
                canon.iter().map(|u| db.fate_of(u.as_str())).collect()
            })?
        } else {
            vec![None; canon.len()]
        };
        Ok((urls.iter().zip(known))
            .map(|(url, k)| {
                let (fate, why) = match k {
                    Some((crate::store::DocStatus::Fetched, _)) => {
                        ("fetched", "already fetched: not queued again".to_owned())
                    }
                    Some((
                        crate::store::DocStatus::Failed | crate::store::DocStatus::Excluded,
                        e,
                    )) => (
                        "failed",
                        format!(
                            "tried before and given up ({}): not queued again",
                            crate::crawl::words::failure_in_words(e.as_deref().unwrap_or("?"))
                        ),
                    ),
                    _ => ("queued", "queued: the crawl fetches it first".to_owned()),
                };
                QueueFate {
                    url: url.clone(),
                    fate,
                    why,
                }
            })
            .collect())
    }
}
