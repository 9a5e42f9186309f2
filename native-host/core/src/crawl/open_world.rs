//! The crawl's open world: at a schedule of fetched-page counts, the background ("none of the
//! topics") is learned afresh from the crawl's own pages with the spy technique, fetched pages
//! are re-judged with the new classifier and the frontier re-scored from them.

use super::rescore::{rejudge, sample_texts};
use super::{blocking, CrawlError, Judge, Mode, OpenWorldConfig};
use crate::store::CrawlDb;
use forager_classifier::BackgroundReport;
use std::collections::HashSet;
use std::sync::Arc;

/// When and from what the crawl learns its background.
pub(super) struct Learner {
    config: Option<OpenWorldConfig>,
    mode: Mode,
    next: u64,
}

impl Learner {
    /// A learner for `config`; only soft and hard focus use relevance to order the frontier.
    pub(super) fn new(config: Option<OpenWorldConfig>, mode: Mode) -> Self {
        let config = config.filter(|_| matches!(mode, Mode::Soft | Mode::Hard));
        let next = config.as_ref().map_or(u64::MAX, |c| c.first.max(1));
        Learner { config, mode, next }
    }

    /// True when the crawl has fetched enough pages for the next round.
    pub(super) fn due(&self, fetched: u64) -> bool {
        self.config.is_some() && fetched >= self.next
    }

    /// Learns the background from the crawl's fetched pages, re-judges them and (when
    /// `frontier`) re-scores the frontier; returns the new judge (with the user's `marked`).
    pub(super) async fn learn(
        &mut self,
        store: &mut Option<impl CrawlDb>,
        marked: Arc<HashSet<String>>,
        frontier: bool,
    ) -> Result<(Judge, BackgroundReport), CrawlError> {
        let Some(cfg) = self.config.clone() else {
            return Err(CrawlError::Background("open world is off".into()));
        };
        let mode = self.mode;
        blocking(store, move |s| {
            let fetched = s.fetched()?.max(0) as u64;
            let mut model = cfg.model;
            let docs = sample_texts(s, cfg.options.max_docs)?;
            let report = model
                .learn_background(docs, &cfg.options)
                .map_err(|e| CrawlError::Background(e.to_string()))?;
            let judge = Judge {
                classifier: model.classifier(),
                not_relevant: marked,
            };
            rejudge(s, &judge, mode, frontier)?;
            Ok::<_, CrawlError>((judge, report, fetched))
        })
        .await
        .map(|(c, report, fetched)| {
            self.next = fetched.saturating_mul(2).max(self.next + 1);
            (c, report)
        })
    }
}
