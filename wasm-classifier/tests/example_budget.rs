//! An example's text is capped before it reaches the model (#28 defect 2): at most
//! `MAX_EXAMPLE_TEXT_BYTES` of a page are read and at most `MAX_EXAMPLE_TERMS` distinct terms
//! kept (its most frequent), so 2 MB pages of unique words cannot grow the model without
//! bound; saving refuses a model over its budget. Here, in the classifier, so WASM and native
//! agree.

use forager_classifier::model::{MAX_EXAMPLE_TERMS, MAX_EXAMPLE_TEXT_BYTES};
use forager_classifier::{Model, ROOT};

/// About `bytes` of words that no other page has, `page` apart.
fn unique_words(page: usize, bytes: usize) -> String {
    let mut s = String::new();
    let mut i = 0usize;
    while s.len() < bytes {
        let mut n = i * 64 + page;
        let mut w = String::from("q");
        while n > 0 {
            w.push((b'a' + (n % 26) as u8) as char);
            n /= 26;
        }
        s.push_str(&w);
        s.push(' ');
        i += 1;
    }
    s
}

#[test]
fn huge_examples_are_capped_in_bytes_and_terms() {
    let mut m = Model::default();
    let t = m.add_topic(ROOT, "Big", "").unwrap();
    let small = m.to_bytes().len();
    // The frequent words come last, past the byte cap: they are not read.
    let mut text = unique_words(0, 2 << 20);
    text.push_str(&" zzzlastword".repeat(50));
    m.add_example(t, "http://a/0", &text).unwrap();
    for i in 1..3 {
        m.mark_not_relevant(&format!("http://b/{i}"), &unique_words(i, 2 << 20))
            .unwrap();
    }
    for e in m.examples() {
        assert!(
            e.tokens as usize <= MAX_EXAMPLE_TERMS,
            "{} tokens",
            e.tokens
        );
    }
    let bytes = m.to_bytes().len() - small;
    // Three examples of at most 10k terms each (about 10 bytes a term and its count).
    assert!(
        bytes < 3 * MAX_EXAMPLE_TERMS * 16,
        "the model grew {bytes} bytes"
    );
    let mut probe = Model::default();
    let pt = probe.add_topic(ROOT, "Probe", "").unwrap();
    probe.add_example(pt, "http://p/", &text).unwrap();
    let vocab = String::from_utf8_lossy(&probe.to_bytes()).contains("zzzlastword");
    assert!(
        !vocab,
        "text past {MAX_EXAMPLE_TEXT_BYTES} bytes is not read"
    );
    // The budget check passes a model of this size.
    assert!(m.to_bytes_within_budget().is_ok());
}

#[test]
fn an_example_keeps_its_most_frequent_terms() {
    let mut text = unique_words(7, 300 << 10);
    text.push_str(&" frequentword".repeat(5));
    let mut m = Model::default();
    let t = m.add_topic(ROOT, "T", "").unwrap();
    m.add_example(t, "http://a/", &text).unwrap();
    let bytes = m.to_bytes();
    assert!(String::from_utf8_lossy(&bytes).contains("frequentword"));
}
