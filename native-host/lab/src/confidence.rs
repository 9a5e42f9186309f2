//! The classifier's confidence on a crawl, for the report: which fetched pages it can place in
//! the user's taxonomy and which it cannot (about none of the topics, or no leaf it is at
//! least even odds on), in fetch order, so a user sees when a crawl has drifted into pages it
//! cannot place. The open world is learned from the crawl's own pages by the method and sample
//! an open-world crawl uses (the spy technique), so the measure does not depend on how the
//! crawl ran.

use forager_classifier::{BackgroundOptions, Model, Scratch};
use forager_core::store::{Reader, StoreError, TextSample};
use std::collections::HashMap;

/// Pages per point of the by-fetch-order series.
const WINDOW: usize = 100;

/// How sure the classifier is of a crawl's pages.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Confidence {
    /// Fetched pages with text, judged.
    pub pages: usize,
    /// Of those, the pages it cannot place.
    pub unplaced: usize,
    /// Pages in the background learned from the crawl (0: it stayed a closed world).
    pub background: usize,
    /// Share of pages it cannot place per `WINDOW` pages in fetch order: (pages fetched at
    /// the window's end, share).
    pub by_fetch_order: Vec<(i64, f64)>,
    /// Per fetched page, in fetch order: whether it could be placed (`None`: no text).
    #[serde(skip)]
    pub placed: Vec<Option<bool>>,
}

/// The confidence of the crawl's own model on its fetched pages; `None` when the database
/// holds no readable model.
pub fn confidence(db: &dyn Reader) -> Result<Option<Confidence>, StoreError> {
    let Some(mut model) = db.model_bytes()?.and_then(|b| Model::from_bytes(&b).ok()) else {
        return Ok(None);
    };
    let order: HashMap<String, usize> = (db.fetched_pages()?.into_iter().enumerate())
        .map(|(i, p)| (p.url, i))
        .collect();
    let opts = BackgroundOptions::default();
    let background = match model.learn_background(sample(db, opts.max_docs)?, &opts) {
        Ok(report) => report.background,
        Err(_) => 0, // too few pages or examples: the closed world stays
    };
    let classifier = model.classifier();
    let mut scratch = Scratch::new();
    let mut placed = vec![None; order.len()];
    db.each_fetched_text::<StoreError>(|url, text| {
        if let Some(&i) = order.get(url) {
            let v = classifier.classify(text, &mut scratch);
            let sure = v.path.last().is_some_and(|leaf| leaf.p >= 0.5);
            placed[i] = Some(sure && !v.none);
        }
        Ok(())
    })?;
    let judged: Vec<bool> = placed.iter().flatten().copied().collect();
    let by_fetch_order = (judged.chunks(WINDOW).enumerate())
        .map(|(k, w)| {
            let n = (k * WINDOW + w.len()) as i64;
            (n, w.iter().filter(|p| !**p).count() as f64 / w.len() as f64)
        })
        .collect();
    Ok(Some(Confidence {
        pages: judged.len(),
        unplaced: judged.iter().filter(|p| !**p).count(),
        background,
        by_fetch_order,
        placed,
    }))
}

/// The sample an open-world crawl learns its background from ([`TextSample`]).
fn sample(db: &dyn Reader, max: usize) -> Result<Vec<(String, String)>, StoreError> {
    let mut sample = TextSample::new(max);
    db.each_fetched_text::<StoreError>(|url, text| {
        sample.offer(url, text);
        Ok(())
    })?;
    Ok(sample.into_pages())
}
