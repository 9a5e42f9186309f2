//! Take-away results of a crawl: its hubs, authorities or fetched pages as CSV or JSON Lines,
//! one row per page with its URL, title, relevance, best leaf and fetch time.

use crate::store::{Ranking, Reader, StoreError};
use serde::Serialize;

/// Which list to export.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum What {
    /// The distiller's hubs, best first.
    Hubs,
    /// The distiller's authorities, best first.
    Authorities,
    /// Every fetched page, in fetch order.
    Pages,
}

/// The file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Comma-separated values with a header row (RFC 4180).
    Csv,
    /// One JSON object per line.
    Jsonl,
}

impl What {
    /// The lists' names as users type them (`--what`).
    pub const NAMES: [&'static str; 3] = ["hubs", "authorities", "pages"];
}

impl std::str::FromStr for What {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "hubs" => Ok(What::Hubs),
            "authorities" => Ok(What::Authorities),
            "pages" => Ok(What::Pages),
            _ => Err(format!(
                "unknown list {s:?} (one of {})",
                What::NAMES.join(", ")
            )),
        }
    }
}

impl Format {
    /// The formats' names as users type them (`--format`).
    pub const NAMES: [&'static str; 2] = ["csv", "jsonl"];
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "csv" => Ok(Format::Csv),
            "jsonl" => Ok(Format::Jsonl),
            _ => Err(format!(
                "unknown format {s:?} (one of {})",
                Format::NAMES.join(", ")
            )),
        }
    }
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The crawl database could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A row could not be written.
    #[error("writing CSV: {0}")]
    Csv(#[from] csv::Error),
}

/// One exported page.
#[derive(Debug, Serialize, PartialEq)]
pub struct Row {
    /// The page's URL.
    pub url: String,
    /// Its title ("" when it has none).
    pub title: String,
    /// R(d), the probability that it is about a good topic.
    pub relevance: f64,
    /// The path of its best leaf topic ("" when unknown).
    pub best_leaf: String,
    /// When it was fetched, in seconds since 1970 (None if never).
    pub fetched_at: Option<f64>,
    /// Its hub or authority score (None for the page list).
    pub score: Option<f64>,
    /// Why it ranks: of its out-links to fetched pages, how many go to pages with R >= 0.5
    /// (None for the page list).
    pub relevant_links: Option<i64>,
    /// Its out-links to fetched pages (None for the page list).
    pub fetched_links: Option<i64>,
}

/// The rows of `what`, best first for hubs and authorities (zero scores left out), in fetch
/// order for pages.
pub fn rows(db: &dyn Reader, what: What) -> Result<Vec<Row>, StoreError> {
    let ranked = |ranking| -> Result<Vec<Row>, StoreError> {
        Ok((db.ranked(ranking, None)?.into_iter())
            .map(|p| Row {
                url: p.url,
                title: p.title,
                relevance: p.relevance,
                best_leaf: p.best_leaf,
                fetched_at: p.fetched_at,
                score: Some(p.score),
                relevant_links: Some(p.relevant_links),
                fetched_links: Some(p.fetched_links),
            })
            .collect())
    };
    match what {
        What::Hubs => ranked(Ranking::Hubs),
        What::Authorities => ranked(Ranking::Authorities),
        What::Pages => Ok((db.fetched_pages()?.into_iter())
            .map(|p| Row {
                url: p.url,
                title: p.title,
                relevance: p.relevance,
                best_leaf: p.best_leaf,
                fetched_at: p.fetched_at,
                score: None,
                relevant_links: None,
                fetched_links: None,
            })
            .collect()),
    }
}

/// A row as a spreadsheet reads it: `fetched_at` as an ISO 8601 UTC time.
#[derive(Serialize)]
struct CsvRow<'a> {
    url: &'a str,
    title: &'a str,
    relevance: f64,
    best_leaf: &'a str,
    fetched_at: Option<String>,
    score: Option<f64>,
    relevant_links: Option<i64>,
    fetched_links: Option<i64>,
}

impl<'a> CsvRow<'a> {
    fn of(r: &'a Row) -> Self {
        CsvRow {
            url: &r.url,
            title: &r.title,
            relevance: r.relevance,
            best_leaf: &r.best_leaf,
            fetched_at: r.fetched_at.and_then(iso_utc),
            score: r.score,
            relevant_links: r.relevant_links,
            fetched_links: r.fetched_links,
        }
    }
}

/// Seconds since 1970 as ISO 8601 UTC, to the millisecond ("2026-11-25T19:34:37.120Z").
fn iso_utc(secs: f64) -> Option<String> {
    let ms = (secs * 1000.0).round();
    (ms.is_finite() && ms.abs() < 1e15).then_some(())?;
    let t = chrono::DateTime::from_timestamp_millis(ms as i64)?;
    Some(t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

/// `rows` written in `format`.
pub fn export(db: &dyn Reader, what: What, format: Format) -> Result<String, ExportError> {
    let rows = rows(db, what)?;
    match format {
        Format::Jsonl => Ok(rows
            .iter()
            .filter_map(|r| serde_json::to_string(r).ok())
            .map(|l| l + "\n")
            .collect()),
        Format::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            if rows.is_empty() {
                w.write_record([
                    "url",
                    "title",
                    "relevance",
                    "best_leaf",
                    "fetched_at",
                    "score",
                    "relevant_links",
                    "fetched_links",
                ])?;
            }
            for r in &rows {
                w.serialize(CsvRow::of(r))?;
            }
            let bytes = w
                .into_inner()
                .map_err(|e| csv::Error::from(e.into_error()))?;
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SqliteReader;
    use rusqlite::Connection;

    fn db() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE doc(oid INTEGER PRIMARY KEY, url TEXT, title TEXT, relevance REAL,
               cid INTEGER, status INTEGER, fetched_at REAL, fetch_seq INTEGER);
             CREATE TABLE taxonomy(kcid INTEGER PRIMARY KEY, path TEXT);
             CREATE TABLE hub(oid INTEGER, score REAL);
             CREATE TABLE auth(oid INTEGER, score REAL);
             CREATE TABLE link(oid_src INTEGER, oid_dst INTEGER);
             INSERT INTO link VALUES (1, 2), (1, 3), (1, 1), (2, 1);
             INSERT INTO taxonomy VALUES (3, '/Science/Astronomy');
             INSERT INTO doc VALUES (1, 'http://a.test/', 'Stars, \"big\" ones', 0.9, 3, 2, 100.5, 2),
                                    (2, 'http://b.test/', NULL, 0.1, NULL, 2, 99.0, 1),
                                    (3, 'http://c.test/', NULL, 0, NULL, 0, NULL, NULL);
             INSERT INTO hub VALUES (2, 0.25), (1, 0.75), (3, 0);",
        )
        .unwrap();
        c
    }

    #[test]
    fn csv_quotes_titles_and_a_reader_gets_the_rows_back() {
        let text = export(&SqliteReader::over(db()), What::Hubs, Format::Csv).unwrap();
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = r.headers().unwrap().iter().map(str::to_owned).collect();
        assert_eq!(
            header,
            [
                "url",
                "title",
                "relevance",
                "best_leaf",
                "fetched_at",
                "score",
                "relevant_links",
                "fetched_links"
            ]
        );
        let recs: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(recs.len(), 2, "zero scores left out: {text}");
        assert_eq!(&recs[0][0], "http://a.test/");
        assert_eq!(&recs[0][1], "Stars, \"big\" ones");
        assert_eq!(&recs[0][3], "/Science/Astronomy");
        assert_eq!(&recs[1][5], "0.25");
        // Hub 1 links to 2 (fetched, R = .1), to 3 (not fetched) and to itself: 0 of 1; hub 2
        // links to 1 (fetched, R = .9): 1 of 1.
        assert_eq!((&recs[0][6], &recs[0][7]), ("0", "1"));
        assert_eq!((&recs[1][6], &recs[1][7]), ("1", "1"));
    }

    #[test]
    fn csv_times_are_iso_8601_utc() {
        assert_eq!(iso_utc(100.5).as_deref(), Some("1970-01-01T00:01:40.500Z"));
        assert_eq!(iso_utc(f64::NAN), None);
        let text = export(&SqliteReader::over(db()), What::Pages, Format::Csv).unwrap();
        assert!(text.contains(",1970-01-01T00:01:40.500Z,"), "{text}");
    }

    #[test]
    fn jsonl_lists_fetched_pages_in_fetch_order() {
        let text = export(&SqliteReader::over(db()), What::Pages, Format::Jsonl).unwrap();
        let lines: Vec<serde_json::Value> = (text.lines())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["url"], "http://b.test/");
        assert_eq!(lines[1]["best_leaf"], "/Science/Astronomy");
        assert_eq!(lines[1]["fetched_at"], 100.5);
        assert!(lines[0]["score"].is_null());
        let empty = export(&SqliteReader::over(db()), What::Authorities, Format::Csv).unwrap();
        assert_eq!(
            empty.trim(),
            "url,title,relevance,best_leaf,fetched_at,score,relevant_links,fetched_links"
        );
    }
}
