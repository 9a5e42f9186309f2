//! Unicode word segmentation (UAX #29) with an exact fast path for ASCII.
//!
//! Text is cut at points UAX #29 always breaks at (after ASCII whitespace, before an ASCII
//! byte that is not whitespace), and each piece is segmented independently: ASCII pieces by a direct implementation of
//! the rules that apply to ASCII (WB5-WB13b), others by `unicode-segmentation`. Words are the
//! segments holding a letter or digit, exactly as `UnicodeSegmentation::unicode_words` yields.

use unicode_segmentation::UnicodeSegmentation;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Letter,
    Numeric,
    /// `_` (ExtendNumLet).
    Join,
    /// `:` (MidLetter).
    MidLetter,
    /// `,` `;` (MidNum).
    MidNum,
    /// `.` `'` (MidNumLet and Single_Quote).
    MidNumLet,
    Other,
}

fn class(b: u8) -> Class {
    match b {
        b'a'..=b'z' | b'A'..=b'Z' => Class::Letter,
        b'0'..=b'9' => Class::Numeric,
        b'_' => Class::Join,
        b':' => Class::MidLetter,
        b',' | b';' => Class::MidNum,
        b'.' | b'\'' => Class::MidNumLet,
        _ => Class::Other,
    }
}

/// Segments an ASCII string by the UAX #29 rules that can apply to ASCII.
fn ascii_words<'a>(s: &'a str, f: &mut impl FnMut(&'a str)) {
    use Class::*;
    let b = s.as_bytes();
    let n = b.len();
    let mut i = 0;
    while i < n {
        let c0 = class(b[i]);
        if !matches!(c0, Letter | Numeric | Join) {
            i += 1;
            continue;
        }
        let start = i;
        let mut j = i + 1;
        let mut has_alnum = c0 != Join;
        while j < n {
            let (prev, cur) = (class(b[j - 1]), class(b[j]));
            let joins = match (prev, cur) {
                // WB5, WB8, WB9, WB10, WB13a, WB13b
                (Letter | Numeric | Join, Letter | Numeric | Join) => true,
                _ => false,
            };
            if joins {
                has_alnum |= cur != Join;
                j += 1;
                continue;
            }
            // WB6/WB7: letter (MidLetter|MidNumLetQ) letter; WB11/WB12: digit (MidNum|MidNumLetQ) digit.
            if j + 1 < n {
                let next = class(b[j + 1]);
                let mid_letter =
                    prev == Letter && next == Letter && matches!(cur, MidLetter | MidNumLet);
                let mid_num =
                    prev == Numeric && next == Numeric && matches!(cur, MidNum | MidNumLet);
                if mid_letter || mid_num {
                    j += 2;
                    continue;
                }
            }
            break;
        }
        if has_alnum {
            f(&s[start..j]);
        }
        i = j;
    }
}

/// Calls `f` with each word of `text`, in order, as `unicode_words` would yield them.
pub fn for_each_word<'a>(text: &'a str, mut f: impl FnMut(&'a str)) {
    let b = text.as_bytes();
    let mut start = 0;
    let mut ascii = true;
    for p in 0..b.len() {
        let safe_cut = p > start
            && b[p] < 0x80
            && !b[p].is_ascii_whitespace()
            && b[p - 1].is_ascii_whitespace();
        if safe_cut {
            // Both sides of p are ASCII bytes, so p is a char boundary.
            piece(&text[start..p], ascii, &mut f);
            start = p;
            ascii = true;
        }
        ascii &= b[p] < 0x80;
    }
    piece(&text[start..], ascii, &mut f);
}

fn piece<'a>(s: &'a str, ascii: bool, f: &mut impl FnMut(&'a str)) {
    if ascii {
        ascii_words(s, f);
    } else {
        for w in s.unicode_words() {
            f(w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ours(s: &str) -> Vec<&str> {
        let mut v = Vec::new();
        for_each_word(s, |w| v.push(w));
        v
    }

    #[test]
    fn ascii_examples_match_uax29() {
        for s in [
            "isn't it 3.14, or 1,000.5? e.g. a.b.c a_b __ _x 802.11a a:b a.1 1.a x'",
            "http://example.test/a_b?c=1&d=2#frag",
            "tab\tsep\r\nlines  spaces",
        ] {
            let expect: Vec<&str> = s.unicode_words().collect();
            assert_eq!(ours(s), expect, "{s:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn matches_unicode_words_on_ascii(s in "[ab1_.:,;' \t\r\n\"!-]{0,40}") {
            let expect: Vec<&str> = s.unicode_words().collect();
            prop_assert_eq!(ours(&s), expect);
        }

        #[test]
        fn matches_unicode_words_on_mixed_text(
            s in "[ab1_.:' \n\u{e9}\u{301}\u{93e}\u{5d0}\u{5f4}\"\u{30a2}\u{1f600}\u{200d}\u{1f1e6}\u{ff0e}\u{4e00}]{0,30}"
        ) {
            let expect: Vec<&str> = s.unicode_words().collect();
            prop_assert_eq!(ours(&s), expect);
        }
    }
}
