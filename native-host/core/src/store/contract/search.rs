//! Searching the harvest and what is new, through the door's reader: the same pages found,
//! ranked and marked by every back-end's full-text index (SQLite's FTS5, PostgreSQL's
//! `tsvector`), kept up to date by `record` itself.

use super::{co, url, CrawlDb, DocStatus, Outcome};
use crate::store::{fnv64, NewsKind, SearchRanking, StoreError, MARK_END, MARK_START};

/// Pages (url, R, title, text): an antenna tuner kit (the words repeated, R low), a tuner
/// build (R high), coils and cooking.
pub(crate) const PAGES: [(&str, f64, &str, &str); 4] = [
    (
        "http://a.test/",
        0.05,
        "Antenna tuner kit",
        "An antenna tuner antenna tuner matches the antenna to the radio.",
    ),
    (
        "http://b.test/",
        0.9,
        "Building a tuner",
        "How to build an antenna tuner for the shack, with coils.",
    ),
    ("http://c.test/", 0.6, "Coils", "Winding coils by hand."),
    (
        "http://d.test/",
        0.0,
        "Cooking",
        "Nothing about radio here.",
    ),
];

/// Fetches `pages` into `db` in one batch.
fn crawl(db: &mut dyn CrawlDb, pages: &[(&str, f64, &str, &str)]) {
    let seeds: Vec<_> = pages.iter().map(|p| url(p.0, 1.0, None, None)).collect();
    db.add_seeds(&seeds).unwrap();
    let work = co(db, pages.len());
    let batch: Vec<Outcome> = (pages.iter())
        .map(|(u, r, t, x)| Outcome {
            oid: work.iter().find(|w| w.url == *u).unwrap().oid,
            status: DocStatus::Fetched,
            relevance: *r,
            log_relevance: r.ln(),
            title: Some((*t).into()),
            text: Some((*x).into()),
            content_hash: Some(format!("{:x}", fnv64(x))),
            ..Outcome::default()
        })
        .collect();
    db.record(&batch).unwrap();
}

/// The URLs `query` finds in `db`, best first.
fn found(db: &dyn CrawlDb, query: &str, ranking: SearchRanking) -> Vec<String> {
    let hits = db.reader().search(query, 10, ranking).unwrap();
    hits.into_iter().map(|h| h.url).collect()
}

/// Recorded pages are found by their words, stems and a prefix being typed; the text ranking
/// prefers repeated words, the combined one the relevant page; snippets mark the words.
pub fn search_finds_recorded_pages_and_ranks_relevant_ones_higher(db: &mut dyn CrawlDb) {
    crawl(db, &PAGES);
    assert_eq!(
        found(db, "antenna tuner", SearchRanking::TextOnly),
        ["http://a.test/", "http://b.test/"],
        "the text alone prefers the repeated words"
    );
    assert_eq!(
        found(db, "antenna tuner", SearchRanking::Combined),
        ["http://b.test/", "http://a.test/"],
        "R = 0.9 beats R = 0.05"
    );
    let r = db.reader();
    let hits = r
        .search("antenna tuner", 10, SearchRanking::Combined)
        .unwrap();
    let marked = format!("{MARK_START}antenna{MARK_END}");
    assert!(hits[0].snippet.contains(&marked), "{:?}", hits[0].snippet);
    assert_eq!(hits[0].title, "Building a tuner");
    assert_eq!(hits[0].relevance, 0.9);
    assert!(hits[0].fetched_at.is_some());
    drop(r);
    // Stems, and the last word as a prefix while it is typed.
    assert_eq!(found(db, "tuners ", SearchRanking::Combined).len(), 2);
    assert_eq!(found(db, "tune", SearchRanking::Combined).len(), 2);
    assert!(found(db, "tune ", SearchRanking::Combined).is_empty());
    assert!(found(db, "\"tuner coils\"", SearchRanking::Combined).is_empty());
    assert_eq!(
        found(db, "\"antenna tuner\" coils", SearchRanking::Combined),
        ["http://b.test/"]
    );
    // Operators are words; a word as long as any query allows matches nothing.
    assert!(found(db, "radio NOT", SearchRanking::Combined).is_empty());
    assert!(found(db, &"中".repeat(900), SearchRanking::Combined).is_empty());
    assert!(matches!(
        db.reader().search("\"\"", 10, SearchRanking::Combined),
        Err(StoreError::BadQuery(_))
    ));
}

/// A changed revisit replaces the page's entry in the index, and is news; a relevant first
/// fetch is news, an irrelevant one is not.
pub fn a_changed_revisit_replaces_the_index_entry_and_is_news(db: &mut dyn CrawlDb) {
    crawl(db, &PAGES[..3]);
    let r = db.reader();
    let (news, n) = r.news_since(0.0, 10).unwrap();
    let mut urls: Vec<&str> = news.iter().map(|i| i.url.as_str()).collect();
    urls.sort();
    assert_eq!((urls, n), (vec!["http://b.test/", "http://c.test/"], 2));
    assert!(news.iter().all(|i| i.kind == NewsKind::New));
    let since = news.iter().map(|i| i.at).fold(0.0, f64::max);
    assert_eq!(r.news_since(since, 10).unwrap().1, 0);
    drop(r);
    let a = (db.reader().fetched_texts(None, 10).unwrap())
        .into_iter()
        .find(|p| p.url == PAGES[0].0)
        .unwrap()
        .oid;
    std::thread::sleep(std::time::Duration::from_millis(20));
    // Revisited twice in one batch: the last one recorded is what the index holds.
    let revisit = |text: &str, hash: &str| Outcome {
        oid: a,
        status: DocStatus::Fetched,
        relevance: 0.05,
        title: Some("Balun".into()),
        text: Some(text.into()),
        content_hash: Some(hash.into()),
        revisit: true,
        ..Outcome::default()
    };
    db.record(&[
        revisit("A balun for the feed line.", "changed"),
        revisit("A balun between coax and dipole.", "changed again"),
    ])
    .unwrap();
    assert!(found(db, "feed", SearchRanking::Combined).is_empty());
    assert_eq!(
        found(db, "antenna", SearchRanking::Combined),
        ["http://b.test/"],
        "the old words are gone"
    );
    assert_eq!(
        found(db, "dipole", SearchRanking::Combined),
        ["http://a.test/"]
    );
    let (news, n) = db.reader().news_since(since, 10).unwrap();
    assert_eq!(n, 1);
    assert_eq!(
        (news[0].url.as_str(), news[0].kind),
        ("http://a.test/", NewsKind::Changed)
    );
    assert_eq!(db.reader().news_since(since, 0).unwrap(), (Vec::new(), 1));
}

/// Diacritics do not matter to a search: "café" finds "cafe" and the reverse, as does a word
/// being typed, and the snippet marks the word as the page spells it.
pub fn accents_do_not_matter_to_search(db: &mut dyn CrawlDb) {
    crawl(
        db,
        &[
            (
                "http://e.test/",
                0.5,
                "Café crème",
                "Le café de la gare: naïve art on the façade.",
            ),
            (
                "http://f.test/",
                0.6,
                "Cafe",
                "A cafe with naive art on its facade.",
            ),
            ("http://g.test/", 0.7, "Tea", "A tea room."),
        ],
    );
    for q in ["café ", "cafe ", "CAFÉ ", "naïve art", "facade ", "façad"] {
        let mut urls = found(db, q, SearchRanking::Combined);
        urls.sort();
        assert_eq!(urls, ["http://e.test/", "http://f.test/"], "{q:?}");
    }
    let hits = (db.reader().search("cafe gare", 10, SearchRanking::Combined)).unwrap();
    assert_eq!(hits.len(), 1);
    let marked = format!("{MARK_START}café{MARK_END}");
    assert!(hits[0].snippet.contains(&marked), "{:?}", hits[0].snippet);
}
