//! Fuzz targets on stable Rust: proptest feeds arbitrary input to every parser that sees
//! network or browser data. (cargo-fuzz needs a nightly toolchain, which cannot be installed
//! on these machines.) CI runs the default number of cases; a long run is
//! `PROPTEST_CASES=200000 cargo test --release -p forager --test fuzz`.

use forager::canon;
use forager::framing;
use forager::parse::parse_page;
use proptest::prelude::*;

/// Strings that look like URLs and hrefs, and plain noise.
fn url_like() -> impl Strategy<Value = String> {
    prop_oneof![
        "(https?|ftp|javascript|mailto|HTTP)://[a-zA-Z0-9.\\-:@%\\[\\]]{0,30}(/[a-zA-Z0-9.%~_\\-?#=&;/\\\\]{0,40})?",
        "[./a-z%0-9?#&=:]{0,40}",
        any::<String>(),
    ]
}

/// Tag soup: fragments of markup in random order.
fn html_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<a href=\"".to_string()),
        Just("\">".to_string()),
        Just("</a>".to_string()),
        Just("<base href=/x/>".to_string()),
        Just("<meta name=robots content=nofollow>".to_string()),
        Just("<script>".to_string()),
        Just("<div>".to_string()),
        Just("</div>".to_string()),
        Just("<!--".to_string()),
        Just("<img>".to_string()),
        Just("<nav>".to_string()),
        Just("</nav>".to_string()),
        Just("<div class=\"site-menu\">".to_string()),
        Just("<main>".to_string()),
        Just("</main>".to_string()),
        Just("<footer>".to_string()),
        Just("<article>".to_string()),
        Just("<div role=main>".to_string()),
        Just("<div id=\"side_bar menu\">".to_string()),
        Just("<template>".to_string()),
        Just("<noscript>".to_string()),
        Just("\u{feff}\u{85}".to_string()),
        "[a-z /.#?<>=\"']{0,12}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

/// 512 cases per target, or `PROPTEST_CASES` for a long run.
fn config() -> ProptestConfig {
    let mut c = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        c.cases = 512;
    }
    c
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn canonical_urls_are_stable(base in url_like(), href in url_like()) {
        if let Ok(b) = canon::parse(&base) {
            if let Ok(u) = canon::resolve(&b, &href) {
                prop_assert!(matches!(u.scheme(), "http" | "https"));
                // Canonicalisation is idempotent.
                let again = canon::parse(u.as_str()).unwrap();
                prop_assert_eq!(again.as_str(), u.as_str());
                let _ = canon::check_traps(&u, &canon::TrapLimits::default());
            }
        }
    }

    #[test]
    fn any_html_parses_with_consistent_leaves(html in html_like()) {
        let base = url::Url::parse("http://fuzz.test/a/b.html").unwrap();
        let p = parse_page(&html, &base);
        for l in &p.links {
            prop_assert!(l.leaf_range.0 <= l.leaf_range.1 && l.leaf_range.1 <= p.leaves.len());
            prop_assert!(matches!(l.url.scheme(), "http" | "https"));
        }
        // The main text is drawn from the leaves (boilerplate leaves left out): every word of it
        // is a word of some leaf, as often at most.
        let mut words: std::collections::HashMap<&str, i64> = Default::default();
        for w in p.leaves.iter().flat_map(|l| l.split(' ')) {
            *words.entry(w).or_default() += 1;
        }
        for w in p.text.text.split(' ').filter(|w| !w.is_empty()) {
            let n = words.entry(w).or_default();
            *n -= 1;
            prop_assert!(*n >= 0, "{:?} is not from the leaves", w);
        }
        // Without any boilerplate marker, the main text is every text leaf, in order.
        let lower = html.to_lowercase();
        let marked = ["nav", "footer", "aside", "menu", "sidebar", "breadcrumb", "role", "banner"]
            .iter()
            .any(|m| lower.contains(m));
        if !marked {
            let all: Vec<&str> = p.leaves.iter().map(String::as_str).filter(|l| !l.is_empty()).collect();
            prop_assert_eq!(&p.text.text, &all.join(" "));
        }
    }

    #[test]
    fn any_bytes_decode_as_html(body in prop::collection::vec(any::<u8>(), 0..400), ct in any::<Option<String>>()) {
        let text = forager::fetch::decode_html(&body, ct.as_deref());
        let _ = forager::parse::page_text(&text);
    }

    #[test]
    fn any_robots_txt_is_handled(body in prop::collection::vec(any::<u8>(), 0..600), path in "[/a-z%]{0,20}") {
        if let Ok(r) = texting_robots::Robot::new("Forager", &body) {
            let _ = r.allowed(&format!("http://fuzz.test{path}"));
        }
    }

    #[test]
    fn any_byte_stream_frames_without_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let mut r = &bytes[..];
        // Each call consumes input or ends; the loop always terminates.
        for _ in 0..bytes.len() + 2 {
            match framing::read_frame(&mut r) {
                Ok(Some(_)) => continue,
                Ok(None) | Err(_) => break,
            }
        }
    }

    #[test]
    fn generated_trap_urls_never_panic(u in url_like()) {
        let _ = forager::miniweb::trap_page(&u);
        let _ = forager::miniweb::file_for(std::path::Path::new("/w/sites"), &u);
    }
}

/// Inputs found by fuzzing, kept as regressions.
#[test]
fn regressions() {
    let base = url::Url::parse("http://fuzz.test/").unwrap();
    // An anchor without content was lost; it is a link with an empty leaf of its own.
    let p = parse_page("<a href=/x>", &base);
    assert_eq!(p.links.len(), 1);
    assert_eq!(p.links[0].leaf_range, (0, 1));
    // A length prefix of zero is an empty, valid frame.
    let mut r = &[0u8, 0, 0, 0][..];
    assert!(matches!(
        framing::read_frame(&mut r),
        Ok(Some(framing::Frame::Message(v))) if v.is_empty()
    ));
}
