//! Building a model from examples: a mini-web's topics.tsv/examples.tsv, or a bookmarks export.

use crate::bookmarks::{self, Bookmark};
use crate::miniweb::{MiniWeb, MiniWebError};
use forager_classifier::{Model, Taxonomy, TextOptions, TrainOptions};
use forager_core::fetch::Fetcher;
use forager_core::parse::page_text;

/// A problem met while training that did not stop it (a missing page, a failed fetch).
#[derive(Clone, Debug)]
pub struct Skipped {
    /// The example URL.
    pub url: String,
    /// Why it was skipped.
    pub reason: String,
}

/// Trains on a mini-web's taxonomy and examples; pages are read from `WEB/sites/`.
pub fn from_miniweb(
    web: &MiniWeb,
    text: TextOptions,
    train: TrainOptions,
) -> Result<(Model, Vec<Skipped>), MiniWebError> {
    let mut model = Model::new(Taxonomy::new("Topics"), text, train);
    for (path, title) in &web.topics {
        model
            .ensure_topic(path, title)
            .map_err(|e| MiniWebError::Format {
                path: web.root.join("topics.tsv"),
                line: 0,
                msg: e.to_string(),
            })?;
    }
    let mut skipped = Vec::new();
    for (path, url) in &web.examples {
        let added = web
            .read_page(url)
            .map_err(|e| e.to_string())
            .and_then(|html| {
                let topic = model.taxonomy().find(path).map_err(|e| e.to_string())?;
                model
                    .add_example(topic, url, &page_text(&html).text)
                    .map_err(|e| e.to_string())
            });
        if let Err(reason) = added {
            skipped.push(Skipped {
                url: url.clone(),
                reason,
            });
        }
    }
    Ok((model, skipped))
}

/// Where bookmark pages come from.
pub enum PageSource<'a> {
    /// Read pages from a mini-web on disk.
    MiniWeb(&'a MiniWeb),
    /// Fetch pages over HTTP.
    Fetch(&'a Fetcher),
}

/// Trains on a bookmarks export: each folder a topic, each bookmark an example of its folder.
/// Bookmarks outside any folder, non-HTTP ones and unreachable pages are skipped and reported.
pub async fn from_bookmarks(
    html: &str,
    source: PageSource<'_>,
    text: TextOptions,
    train: TrainOptions,
) -> (Model, Vec<Skipped>) {
    let mut model = Model::new(Taxonomy::new("Bookmarks"), text, train);
    let mut skipped = Vec::new();
    for Bookmark { folders, url, .. } in bookmarks::parse(html) {
        let skip = |reason: &str| Skipped {
            url: url.clone(),
            reason: reason.to_owned(),
        };
        if folders.is_empty() {
            skipped.push(skip("not in a folder"));
            continue;
        }
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            skipped.push(skip("not an http(s) URL"));
            continue;
        }
        let page = match &source {
            PageSource::MiniWeb(w) => w.read_page(&url).map_err(|e| e.to_string()),
            PageSource::Fetch(f) => match f.get(&url).await {
                Ok(r) if r.status == 200 && r.is_html() => Ok(r.text()),
                Ok(r) => Err(format!("HTTP {} {:?}", r.status, r.content_type)),
                Err(e) => Err(e.to_string()),
            },
        };
        let path = format!("/{}", folders.join("/"));
        let result = page.and_then(|html| {
            let topic = model.ensure_topic(&path, "").map_err(|e| e.to_string())?;
            model
                .add_example(topic, &url, &page_text(&html).text)
                .map_err(|e| e.to_string())
        });
        if let Err(reason) = result {
            skipped.push(skip(&reason));
        }
    }
    (model, skipped)
}
