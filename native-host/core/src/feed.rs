//! What is new in a crawl as an Atom feed (RFC 4287): new relevant pages and pages changed on a
//! revisit, newest first, for a feed reader to follow a topic the crawl keeps fresh.

use crate::store::{NewsItem, NewsKind, Reader, StoreError};
use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;
use thiserror::Error;

/// Errors of writing a feed.
#[derive(Debug, Error)]
pub enum FeedError {
    /// Reading the crawl database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing the XML failed.
    #[error("writing the feed: {0}")]
    Xml(#[from] std::io::Error),
    /// A `--since` time that is neither RFC 3339 nor Unix seconds.
    #[error("{0:?} is not a time: give RFC 3339 (2026-11-25T18:00:00Z) or Unix seconds")]
    BadTime(String),
}

/// The most entries a feed lists.
pub const MAX_ENTRIES: usize = 1000;

/// Parses a `--since` time: RFC 3339 or Unix seconds.
pub fn parse_time(s: &str) -> Result<f64, FeedError> {
    let s = s.trim();
    if let Ok(t) = s.parse::<f64>() {
        if t.is_finite() {
            return Ok(t);
        }
    }
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|t| t.timestamp_micros() as f64 / 1e6)
        .map_err(|_| FeedError::BadTime(s.chars().take(80).collect()))
}

/// RFC 3339 in UTC of a Unix time, as Atom's dates are written.
fn rfc3339(t: f64) -> String {
    let micros = (t * 1e6) as i64;
    chrono::DateTime::from_timestamp_micros(micros)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Text as XML 1.0 allows it: characters it forbids (most control characters) are dropped;
/// escaping is the writer's.
fn xml_chars(s: &str) -> String {
    s.chars()
        .filter(|&c| {
            matches!(c, '\t' | '\n' | '\r')
                || (c >= ' '
                    && c != '\u{FFFE}'
                    && c != '\u{FFFF}'
                    && !('\u{7F}'..='\u{84}').contains(&c))
        })
        .collect()
}

/// The feed of what is new after `since` (Unix time) in the crawl read by `db`; `id` names the
/// crawl (the feed's permanent id) and `title` is shown by readers.
pub fn atom(
    db: &dyn Reader,
    since: f64,
    id: &str,
    title: &str,
) -> Result<(String, usize), FeedError> {
    let (items, _) = db.news_since(since, MAX_ENTRIES)?;
    let updated = items.iter().map(|i| i.at).fold(since.max(0.0), f64::max);
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("utf-8"), None)))?;
    w.create_element("feed")
        .with_attribute(("xmlns", "http://www.w3.org/2005/Atom"))
        .write_inner_content(|w| {
            text(w, "id", id)?;
            text(w, "title", title)?;
            text(w, "updated", &rfc3339(updated))?;
            w.create_element("author")
                .write_inner_content(|w| text(w, "name", "Forager"))?;
            w.create_element("generator")
                .write_text_content(BytesText::new("Forager"))?;
            for item in &items {
                entry(w, item)?;
            }
            Ok(())
        })?;
    let xml = String::from_utf8(w.into_inner())
        .map_err(|e| FeedError::Xml(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
    Ok((xml, items.len()))
}

/// An element holding text.
fn text(w: &mut Writer<Vec<u8>>, name: &str, value: &str) -> std::io::Result<()> {
    w.create_element(name)
        .write_text_content(BytesText::new(&xml_chars(value)))?;
    Ok(())
}

/// One page's entry.
fn entry(w: &mut Writer<Vec<u8>>, item: &NewsItem) -> std::io::Result<()> {
    let url = xml_chars(&item.url);
    let why = match item.kind {
        NewsKind::New => "New relevant page",
        NewsKind::Changed => "Changed on revisit",
    };
    let leaf = if item.best_leaf.is_empty() {
        String::new()
    } else {
        format!(", {}", item.best_leaf)
    };
    w.create_element("entry").write_inner_content(|w| {
        text(w, "id", &url)?;
        let title = if item.title.trim().is_empty() {
            &item.url
        } else {
            &item.title
        };
        text(w, "title", title)?;
        w.create_element("link")
            .with_attribute(("href", url.as_str()))
            .write_empty()?;
        text(w, "updated", &rfc3339(item.at))?;
        if !item.best_leaf.is_empty() {
            w.create_element("category")
                .with_attribute(("term", xml_chars(&item.best_leaf).as_str()))
                .write_empty()?;
        }
        text(
            w,
            "summary",
            &format!("{why} (relevance {:.2}{leaf})", item.relevance),
        )
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_and_print_as_rfc3339() {
        assert_eq!(parse_time("1700000000").unwrap(), 1_700_000_000.0);
        assert_eq!(parse_time("2023-11-14T22:13:20Z").unwrap(), 1_700_000_000.0);
        assert_eq!(rfc3339(1_700_000_000.0), "2023-11-14T22:13:20Z");
        assert!(parse_time("yesterday")
            .unwrap_err()
            .to_string()
            .contains("RFC 3339"));
        assert_eq!(xml_chars("a\u{0}b\u{1b}c\td"), "abc\td");
    }
}
