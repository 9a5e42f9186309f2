//! A cap on element nesting, as browsers have (Blink attaches elements past depth 512 as
//! siblings). html5ever's tree builder spends time in the square of the depth on deeply
//! nested markup (a 2 MB page of nested `<div>`s held a core for minutes), so before parsing,
//! one linear scan estimates the depth and, only when it is past the cap, drops the tags that
//! would nest deeper. Text and links survive: only the tags themselves are cut out, and
//! `<a>` tags are kept.

/// Deepest nesting kept (Blink's limit).
pub const MAX_DEPTH: usize = 512;
/// Most tags (start and end) of a page kept: past them tags are cut and only text remains.
/// An ordinary page has a few thousand; a hostile 2 MB page can have 700,000, each a DOM node
/// (about 140 MB parsed), and html5ever's work on each grows with the depth, so this bounds
/// both the memory and the time of one parse.
pub const MAX_TAGS: usize = 100_000;

/// Elements that never have content, so never nest.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];
/// Elements whose end tag is optional: counting them would overstate the depth of ordinary
/// pages with unclosed paragraphs and list items.
const OPTIONAL_END: &[&str] = &[
    "p", "li", "dt", "dd", "option", "tr", "td", "th", "tbody", "thead", "tfoot",
];
/// Formatting elements (HTML's "active formatting elements", `a` aside): the parser copies
/// every unclosed one around each later run of text, so thousands of them left open (with
/// distinct attributes, which defeat the spec's limit of three alike) cost the square of
/// their number in time and DOM nodes.
const FORMATTING: &[&str] = &[
    "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u",
];
/// Most formatting elements left open at once; further ones are cut (their text stays).
pub const MAX_OPEN_FORMATTING: usize = 8;
/// Elements whose content is raw text: no tags inside.
const RAW: &[&str] = &[
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed",
];

/// One tag found by the scan.
struct Tag<'a> {
    /// Byte range of the whole tag, `<` to `>`.
    start: usize,
    end: usize,
    name: &'a str,
    closing: bool,
    self_closing: bool,
}

/// The next tag at or after `from`, skipping comments and doctypes.
fn next_tag(html: &str, mut from: usize) -> Option<Tag<'_>> {
    let b = html.as_bytes();
    loop {
        let lt = from + memchr(b'<', &b[from..])?;
        let rest = &html[lt..];
        if let Some(body) = rest.strip_prefix("<!--") {
            from = lt + 4 + body.find("-->").map_or(body.len(), |i| i + 3);
            continue;
        }
        let closing = rest.as_bytes().get(1) == Some(&b'/');
        let name_at = lt + 1 + usize::from(closing);
        let name_len = b[name_at.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric())
            .count();
        if name_len == 0 || !b[name_at].is_ascii_alphabetic() {
            from = lt + 1;
            continue;
        }
        // The tag ends at the first '>' outside quotes.
        let mut quote = None;
        let mut end = None;
        for (i, &c) in b[name_at + name_len..].iter().enumerate() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, b'"' | b'\'') => quote = Some(c),
                (None, b'>') => {
                    end = Some(name_at + name_len + i + 1);
                    break;
                }
                _ => {}
            }
        }
        let end = end?;
        return Some(Tag {
            start: lt,
            end,
            name: &html[name_at..name_at + name_len],
            closing,
            self_closing: b[end - 2] == b'/',
        });
    }
}

/// Where the end tag `</name` next starts at or after `from` (any case), or the end.
fn find_close(html: &str, mut from: usize, name: &str) -> usize {
    let b = html.as_bytes();
    while let Some(i) = memchr(b'<', &b[from..]) {
        let at = from + i;
        let tail = &b[at + 1..];
        if tail.first() == Some(&b'/')
            && tail.len() > name.len()
            && tail[1..=name.len()].eq_ignore_ascii_case(name.as_bytes())
        {
            return at;
        }
        from = at + 1;
    }
    html.len()
}

fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&c| c == needle)
}

fn is(list: &[&str], name: &str) -> bool {
    list.iter().any(|n| n.eq_ignore_ascii_case(name))
}

/// The tags that nest past `max`, or come after the first `max_tags`: (byte ranges to cut,
/// deepest depth seen).
fn too_deep(html: &str, max: usize, max_tags: usize) -> (Vec<(usize, usize)>, usize) {
    let mut cut = Vec::new();
    let (mut depth, mut deepest, mut at) = (0usize, 0usize, 0usize);
    // End tags of elements whose start tag was cut, by depth reached, so they are cut too.
    let mut over = 0usize;
    let mut tags = 0usize;
    // Formatting elements open, and end tags still to cut of the ones cut.
    let (mut formatting, mut formatting_over) = (0usize, 0usize);
    while let Some(t) = next_tag(html, at) {
        at = t.end;
        tags += 1;
        if is(FORMATTING, t.name) && !t.self_closing {
            let cut_it = if t.closing && formatting_over > 0 {
                formatting_over -= 1;
                true
            } else if t.closing {
                formatting = formatting.saturating_sub(1);
                false
            } else if formatting >= MAX_OPEN_FORMATTING {
                formatting_over += 1;
                true
            } else {
                formatting += 1;
                false
            };
            if cut_it {
                cut.push((t.start, t.end));
                continue;
            }
        }
        if tags > max_tags {
            // Past the cap every tag goes; a raw-text element goes whole (its script or
            // style would otherwise become text).
            let end = if !t.closing && is(RAW, t.name) {
                let close = find_close(html, at, t.name);
                next_tag(html, close).map_or(html.len(), |c| c.end)
            } else {
                t.end
            };
            cut.push((t.start, end));
            at = end;
            continue;
        }
        let counts = !is(VOID, t.name) && !is(OPTIONAL_END, t.name) && !t.self_closing;
        if !t.closing && is(RAW, t.name) {
            // Skip the raw text up to the matching end tag.
            at = find_close(html, at, t.name);
            continue;
        }
        if !counts || t.name.eq_ignore_ascii_case("a") {
            continue;
        }
        if t.closing {
            if over > 0 {
                over -= 1;
                cut.push((t.start, t.end));
            } else {
                depth = depth.saturating_sub(1);
            }
        } else if depth >= max {
            over += 1;
            cut.push((t.start, t.end));
        } else {
            depth += 1;
            deepest = deepest.max(depth);
        }
    }
    (cut, deepest.max(depth + over))
}

/// `html` with the tags past depth `MAX_DEPTH` cut out; borrowed unchanged when none are.
pub fn cap_depth(html: &str) -> std::borrow::Cow<'_, str> {
    let (cut, _) = too_deep(html, MAX_DEPTH, MAX_TAGS);
    if cut.is_empty() {
        return std::borrow::Cow::Borrowed(html);
    }
    let mut out = String::with_capacity(html.len());
    let mut from = 0;
    for (s, e) in cut {
        out.push_str(&html[from..s]);
        from = e;
    }
    out.push_str(&html[from..]);
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_pages_are_untouched() {
        let html = "<html><body><p>one<p>two<ul><li>a<li>b</ul><br><img src=x>\
                    <script>if (a<b) { x = '<div>'; }</script><!-- <div> --></body></html>";
        assert!(matches!(cap_depth(html), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn deep_nesting_is_cut_at_the_cap_keeping_text_and_links() {
        let n = 5_000;
        let html = format!(
            "<html><body>{}<a href=\"/deep\">deep link</a> words{}</body></html>",
            "<div class=\"x>y\">".repeat(n),
            "</div>".repeat(n)
        );
        let (_, deepest) = too_deep(&html, usize::MAX, usize::MAX);
        assert_eq!(deepest, n + 2);
        let capped = cap_depth(&html);
        let (cut, deepest) = too_deep(&capped, MAX_DEPTH, MAX_TAGS);
        assert!(cut.is_empty());
        assert!(deepest <= MAX_DEPTH, "{deepest}");
        assert!(capped.contains("<a href=\"/deep\">deep link</a> words"));
        assert_eq!(capped.matches("<div").count(), MAX_DEPTH - 2);
        assert_eq!(capped.matches("</div>").count(), MAX_DEPTH - 2);
    }

    #[test]
    fn tags_past_the_cap_are_cut_keeping_text() {
        let html = format!(
            "<table>{}<script>var x = '<b>';</script>tail words",
            "<a>x".repeat(MAX_TAGS + 10)
        );
        let capped = cap_depth(&html);
        assert_eq!(capped.matches("<a>").count(), MAX_TAGS - 1);
        assert!(
            !capped.contains("var x"),
            "a script past the cap goes whole"
        );
        assert!(capped.ends_with("tail words"));
        assert_eq!(capped.matches('x').count(), MAX_TAGS + 10, "the text stays");
    }

    #[test]
    fn formatting_elements_left_open_are_capped() {
        let html: String = (0..1000)
            .map(|i| format!("<p><b class=c{i}>x{i}"))
            .collect();
        let capped = cap_depth(&html);
        assert_eq!(capped.matches("<b ").count(), MAX_OPEN_FORMATTING);
        assert_eq!(capped.matches("<p>").count(), 1000);
        let closed: String = (0..1000)
            .map(|i| format!("<p><b class=c{i}>x</b>"))
            .collect();
        assert!(matches!(cap_depth(&closed), std::borrow::Cow::Borrowed(_)));
    }

    /// Six hostile 2 MB shapes parse to bounded pages (#28 defect 3): at most `MAX_TAGS`
    /// leaves' worth of elements, `MAX_LINKS` links (the time is in the hostile_pages bench).
    #[test]
    fn hostile_shapes_parse_to_bounded_pages() {
        let fill = |head: &str, unit: &dyn Fn(usize) -> String| {
            let mut s = String::from(head);
            let mut i = 0;
            while s.len() < 2 << 20 {
                s.push_str(&unit(i));
                i += 1;
            }
            s
        };
        let shapes = [
            fill("<table>", &|_| "<a>".into()),
            fill("", &|_| "<ol><li><p>".into()),
            fill(&"<div>".repeat(600), &|_| "<dd>".into()),
            fill("", &|i| format!("<p><b class=c{i}>x")),
            fill("<body>", &|i| format!("<a href=\"/x{i}\">w{i}</a> ")),
        ];
        let base = url::Url::parse("http://h.test/").unwrap();
        for html in &shapes {
            let page = crate::parse::parse_page(html, &base);
            assert!(
                page.leaves.len() <= MAX_TAGS,
                "{} leaves",
                page.leaves.len()
            );
            assert!(page.links.len() <= crate::parse::MAX_LINKS);
            let doc = scraper::Html::parse_document(&cap_depth(html));
            let nodes = doc.tree.nodes().count();
            // Tags, plus a copy of each open formatting element around each run of text.
            assert!(
                nodes <= (MAX_OPEN_FORMATTING / 2 + 2) * MAX_TAGS,
                "{nodes} DOM nodes"
            );
        }
    }

    #[test]
    fn unclosed_tags_and_junk_do_not_panic() {
        for html in [
            "<div",
            "<",
            "</",
            "<a href='x",
            "<!--",
            "<div>\u{e9}<\u{e9}>",
            "<1><b/>",
        ] {
            let _ = cap_depth(html);
        }
    }
}
