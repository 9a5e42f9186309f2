//! A search of the harvest, whatever the back-end: what a user typed, parsed once into terms
//! (each back-end writes them in its own query language, never splicing the user's text), the
//! results' shape, and how a page's text score combines with its relevance R. Pure: no I/O.

use super::{Result, StoreError};

/// The longest query accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;

/// The most words (and quoted phrases) a query may have.
pub const MAX_QUERY_TERMS: usize = 32;

/// The shortest last word that also matches as a prefix.
pub const MIN_PREFIX: usize = 4;

/// The most matching pages a query ranks: a query matching more ranks the most recently
/// fetched of them (scoring costs a few microseconds a page; this bounds a query's time).
pub const RANK_POOL: i64 = 5_000;

/// The least R the ranking takes the logarithm of: a page judged R = 0 ranks as R = 0.001.
const MIN_R: f64 = 0.001;

/// What opens a matched word in a snippet.
pub const MARK_START: &str = "\u{2}";
/// What closes a matched word in a snippet.
pub const MARK_END: &str = "\u{3}";

/// How search results are ordered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SearchRanking {
    /// The text score plus ln R: the text's evidence and the page's relevance to the good
    /// topics as a prior, added on the log scale (a document prior in query likelihood).
    #[default]
    Combined,
    /// The text score alone (the text's evidence only).
    TextOnly,
}

/// One page found.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SearchHit {
    /// URL.
    pub url: String,
    /// Title ("" when none).
    pub title: String,
    /// Where the words matched, the matched words between [`MARK_START`] and [`MARK_END`].
    pub snippet: String,
    /// R(d).
    pub relevance: f64,
    /// Path of its best leaf ("" when unclassified).
    pub best_leaf: String,
    /// Unix time it was (last) fetched.
    pub fetched_at: Option<f64>,
    /// Its text score on the log scale (BM25 on SQLite, ln of `ts_rank_cd` on PostgreSQL;
    /// higher is better).
    pub text_score: f64,
}

impl SearchHit {
    /// The snippet cut at its marks: even indices are plain text, odd ones matched words.
    pub fn snippet_parts(&self) -> Vec<String> {
        let mut parts = vec![String::new()];
        for c in self.snippet.chars() {
            let marked = parts.len() % 2 == 0;
            match c {
                '\u{2}' if !marked => parts.push(String::new()),
                '\u{3}' if marked => parts.push(String::new()),
                '\u{2}' | '\u{3}' => {}
                c => parts.last_mut().expect("never empty").push(c),
            }
        }
        parts
    }
}

/// One term of a query: a word, or the words of a quoted phrase, all to occur.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// Its words: letters and digits only (nothing any query language reads as syntax).
    pub words: Vec<String>,
    /// Typed between quotes.
    pub phrase: bool,
    /// The last word also matches as a prefix (the user is still typing it).
    pub prefix: bool,
}

/// Why a query cannot be searched for, in words a user can act on.
fn bad(msg: impl Into<String>) -> StoreError {
    StoreError::BadQuery(msg.into())
}

/// Parses what a user typed into terms: words and "quoted phrases", all required; any other
/// character (operators, punctuation, control characters) only separates words, and an
/// unbalanced quote closes at the end. The last word (of [`MIN_PREFIX`] letters or more) also
/// matches as a prefix unless the text ends in a space, for results as one types.
pub fn terms(user: &str) -> Result<Vec<Term>> {
    if user.chars().count() > MAX_QUERY_CHARS {
        return Err(bad(format!(
            "the query is longer than {MAX_QUERY_CHARS} characters; search for a few words"
        )));
    }
    let mut terms: Vec<Term> = Vec::new();
    let mut cur = String::new();
    let mut in_phrase = false;
    let flush = |cur: &mut String, phrase: bool, terms: &mut Vec<Term>| {
        let words: Vec<String> = (cur.split(|c: char| !c.is_alphanumeric()))
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect();
        if !words.is_empty() {
            terms.push(Term {
                words,
                phrase,
                prefix: false,
            });
        }
        cur.clear();
    };
    for c in user.chars() {
        if c == '"' {
            flush(&mut cur, in_phrase, &mut terms);
            in_phrase = !in_phrase;
        } else if !in_phrase && (c.is_whitespace() || c.is_control()) {
            flush(&mut cur, false, &mut terms);
        } else {
            cur.push(if c.is_control() { ' ' } else { c });
        }
    }
    flush(&mut cur, in_phrase, &mut terms);
    if terms.is_empty() {
        return Err(bad("type a word to search for"));
    }
    if terms.len() > MAX_QUERY_TERMS {
        return Err(bad(format!(
            "the query has {} words; search for at most {MAX_QUERY_TERMS}",
            terms.len()
        )));
    }
    let typing = !user.ends_with(|c: char| c.is_whitespace() || c == '"');
    let last = terms.last_mut().expect("not empty");
    // A shorter prefix expands to too many words to be quick on a large crawl.
    last.prefix = typing && !last.phrase && last.words.join(" ").chars().count() >= MIN_PREFIX;
    Ok(terms)
}

/// A page's score in `ranking`: its text score (on the log scale) plus ln R for the combined
/// ranking, R taken as at least [`MIN_R`].
pub fn score(text_score: f64, relevance: f64, ranking: SearchRanking) -> f64 {
    match ranking {
        SearchRanking::Combined => text_score + relevance.max(MIN_R).ln(),
        SearchRanking::TextOnly => text_score,
    }
}

/// The best `limit` of `scored` pages (id, text score, R) in `ranking`, best first, ties to
/// the newer (higher) id: (id, text score).
pub fn best(
    scored: impl IntoIterator<Item = (i64, f64, f64)>,
    ranking: SearchRanking,
    limit: usize,
) -> Vec<(i64, f64)> {
    let mut all: Vec<(f64, i64, f64)> = (scored.into_iter())
        .map(|(id, text, r)| (score(text, r, ranking), id, text))
        .collect();
    all.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
    all.truncate(limit);
    all.into_iter().map(|(_, id, text)| (id, text)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(t: &Term) -> String {
        t.words.join(" ")
    }

    #[test]
    fn what_a_user_types_becomes_terms_of_words_only() {
        let t = terms("\"ip address\" NOT a* (b) c:d tune").unwrap();
        let shown: Vec<String> = t.iter().map(words).collect();
        assert_eq!(shown, ["ip address", "NOT", "a", "b", "c d", "tune"]);
        assert!(t[0].phrase && !t[1].phrase);
        assert!(t[5].prefix, "the last word, still being typed");
        assert!(!terms("tune ").unwrap()[0].prefix, "ended by a space");
        assert!(!terms("tun").unwrap()[0].prefix, "too short");
        assert!(!terms("\"tune").unwrap()[0].prefix, "a phrase");
        assert!(terms("x\u{0}y").unwrap().len() == 2);
        assert!(matches!(terms(" \"\" * ()"), Err(StoreError::BadQuery(_))));
        assert!(terms(&"a".repeat(1001)).is_err());
        assert!(terms(&"w ".repeat(33)).is_err());
    }

    #[test]
    fn the_combined_ranking_adds_ln_r_to_the_text_score() {
        // Equal text: R decides; R = 0 counts as 0.001, not minus infinity.
        let pages = [(1, 2.0, 0.05), (2, 2.0, 0.9), (3, 2.5, 0.0)];
        assert_eq!(
            best(pages, SearchRanking::Combined, 10),
            [(2, 2.0), (1, 2.0), (3, 2.5)]
        );
        assert_eq!(
            best(pages, SearchRanking::TextOnly, 2),
            [(3, 2.5), (2, 2.0)],
            "text alone; the tie goes to the newer page"
        );
        assert!((score(1.0, 0.0, SearchRanking::Combined) - (1.0 + 0.001f64.ln())).abs() < 1e-12);
    }
}
