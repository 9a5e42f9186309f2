//! Text pipeline: Unicode word segmentation, case folding, stopwords and optional stemming.
//!
//! The same code runs natively and in WebAssembly, so a page yields the same tokens in the
//! crawl host and in the browser. HTML-to-text extraction lives with the callers (scraper in
//! the host, the page's own DOM in the extension); this module starts from plain text.

use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

/// Longest token kept, in bytes; longer "words" are usually identifiers, hashes or garbage.
pub const MAX_TOKEN_BYTES: usize = 40;

/// Options of the text pipeline, stored in the model so every reader tokenizes alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextOptions {
    /// Reduce words to their Snowball (Porter 2) English stem.
    pub stem: bool,
    /// Drop common English function words (NLTK's list).
    pub stopwords: bool,
    /// Shortest token kept, in characters.
    pub min_chars: u8,
}

impl Default for TextOptions {
    fn default() -> Self {
        TextOptions {
            stem: false,
            stopwords: true,
            min_chars: 2,
        }
    }
}

/// A tokenizer configured by [`TextOptions`]; cheap to clone, safe to share between threads.
pub struct Tokenizer {
    options: TextOptions,
    stopwords: FxHashSet<&'static str>,
    stemmer: Option<Stemmer>,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("options", &self.options)
            .finish()
    }
}

impl Clone for Tokenizer {
    fn clone(&self) -> Self {
        Tokenizer::new(self.options)
    }
}

impl Tokenizer {
    /// Builds a tokenizer for the given options.
    pub fn new(options: TextOptions) -> Self {
        let stopwords = if options.stopwords {
            stop_words::get("en").iter().copied().collect()
        } else {
            FxHashSet::default()
        };
        let stemmer = options.stem.then(|| Stemmer::create(Algorithm::English));
        Tokenizer {
            options,
            stopwords,
            stemmer,
        }
    }

    /// The options this tokenizer was built with.
    pub fn options(&self) -> TextOptions {
        self.options
    }

    /// Calls `f` with each lower-cased word of `text` that has a letter, before stopwords and
    /// stemming; the shared first stage of [`Tokenizer::for_each_token`] and the classifier's
    /// cached fast path.
    pub fn for_each_word(&self, text: &str, mut f: impl FnMut(&str)) {
        let mut buf = String::new();
        crate::segment::for_each_word(text, |word| {
            if word.len() > MAX_TOKEN_BYTES * 4 {
                return;
            }
            buf.clear();
            if word.is_ascii() {
                if !word.bytes().any(|b| b.is_ascii_alphabetic()) {
                    return;
                }
                buf.push_str(word);
                buf.make_ascii_lowercase();
            } else {
                if !word.chars().any(char::is_alphabetic) {
                    return;
                }
                for c in word.chars() {
                    buf.extend(c.to_lowercase());
                }
            }
            f(&buf);
        });
    }

    /// Maps one lower-cased word to its token, or `None` when the pipeline drops it.
    pub fn normalize(&self, word: &str) -> Option<String> {
        self.normalized(word).map(std::borrow::Cow::into_owned)
    }

    /// [`Tokenizer::normalize`] without copying the word when it is its own token.
    fn normalized<'w>(&self, word: &'w str) -> Option<std::borrow::Cow<'w, str>> {
        if self.stopwords.contains(word) {
            return None;
        }
        let token = match &self.stemmer {
            Some(s) => s.stem(word),
            None => std::borrow::Cow::Borrowed(word),
        };
        let chars = token.chars().count();
        if chars < usize::from(self.options.min_chars) || token.len() > MAX_TOKEN_BYTES {
            return None;
        }
        Some(token)
    }

    /// Calls `f` with each token of `text` in order.
    pub fn for_each_token(&self, text: &str, mut f: impl FnMut(&str)) {
        self.for_each_word(text, |w| {
            if let Some(t) = self.normalized(w) {
                f(&t);
            }
        });
    }

    /// The tokens of `text` in order; mostly for tests and for comparing native with WASM.
    pub fn tokens(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.for_each_token(text, |t| out.push(t.to_owned()));
        out
    }

    /// Token counts of `text`, sorted by token for deterministic output.
    pub fn counts(&self, text: &str) -> Vec<(String, u32)> {
        let mut map: FxHashMap<String, u32> = FxHashMap::default();
        self.for_each_token(text, |t| {
            if let Some(c) = map.get_mut(t) {
                *c += 1;
            } else {
                map.insert(t.to_owned(), 1);
            }
        });
        let mut v: Vec<(String, u32)> = map.into_iter().collect();
        v.sort_unstable();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_folds_and_drops_stopwords() {
        let t = Tokenizer::new(TextOptions {
            stem: false,
            ..TextOptions::default()
        });
        assert_eq!(
            t.tokens("The Quick brown FOX isn't 42 jumping over 802.11a Straße"),
            vec!["quick", "brown", "fox", "jumping", "802.11a", "straße"]
        );
    }

    #[test]
    fn stems_when_asked() {
        let t = Tokenizer::new(TextOptions {
            stem: true,
            ..TextOptions::default()
        });
        assert_eq!(
            t.tokens("networks networking protocols"),
            vec!["network", "network", "protocol"]
        );
    }

    #[test]
    fn counts_are_sorted_and_summed() {
        let t = Tokenizer::new(TextOptions::default());
        assert_eq!(
            t.counts("zebra apple zebra"),
            vec![("apple".to_string(), 1), ("zebra".to_string(), 2)]
        );
    }

    #[test]
    fn drops_overlong_and_short_tokens() {
        let t = Tokenizer::new(TextOptions::default());
        let long = "x".repeat(200);
        assert!(t.tokens(&format!("a {long} b")).is_empty());
    }
}
