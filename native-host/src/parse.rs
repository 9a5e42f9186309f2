//! HTML parsing for the crawler and the classifier: title and visible text.
//!
//! Visible text follows one rule shared with the extension's `visibleText()`: the text nodes of
//! the document outside `head`, `script`, `style`, `noscript` and `template`, joined by single
//! spaces. The same rule on both sides gives the same tokens for the same page.

use scraper::{Html, Node, Selector};
use std::sync::LazyLock;

static TITLE: LazyLock<Selector> =
    LazyLock::new(|| Selector::parse("title").unwrap_or_else(|_| unreachable!()));

/// Elements whose text is never shown to a reader.
const HIDDEN: &[&str] = &["head", "script", "style", "noscript", "template"];

/// What the classifier needs from one page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageText {
    /// The `<title>`, whitespace-collapsed.
    pub title: String,
    /// Visible text, whitespace-collapsed.
    pub text: String,
}

/// Appends `s` to `out` with runs of whitespace collapsed to one space.
fn push_collapsed(out: &mut String, s: &str) {
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
}

/// Extracts the title and visible text of an HTML document (any input parses; html5ever
/// repairs malformed markup the way browsers do).
pub fn page_text(html: &str) -> PageText {
    doc_text(&Html::parse_document(html))
}

/// Title and visible text of an already parsed document.
fn doc_text(doc: &Html) -> PageText {
    let mut out = PageText::default();
    if let Some(t) = doc.select(&TITLE).next() {
        push_collapsed(&mut out.title, &t.text().collect::<String>());
    }
    let mut stack = vec![doc.tree.root()];
    // Depth-first, children in document order; a stack of iterators would be deeper than needed.
    while let Some(node) = stack.pop() {
        match node.value() {
            Node::Element(e) if HIDDEN.contains(&e.name()) => continue,
            Node::Text(t) => {
                push_collapsed(&mut out.text, t);
                continue;
            }
            _ => {}
        }
        let children: Vec<_> = node.children().collect();
        stack.extend(children.into_iter().rev());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_hidden_elements_and_collapses_space() {
        let p = page_text(
            "<html><head><title> Hi  there</title><style>x{}</style></head>\
             <body><p>One\n two</p><script>var a;</script><noscript>no</noscript>three</body></html>",
        );
        assert_eq!(p.title, "Hi there");
        assert_eq!(p.text, "One two three");
    }

    #[test]
    fn malformed_html_still_yields_text() {
        let p = page_text("<p>unclosed <b>bold <i>both</p></div></span>tail");
        assert_eq!(p.text, "unclosed bold both tail");
    }
}

/// An outlink of a page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutLink {
    /// The `href` resolved against the page (or its `<base href>`), canonical.
    pub url: url::Url,
    /// The anchor text, whitespace-collapsed.
    pub anchor: String,
    /// `rel="nofollow"` on the link.
    pub nofollow: bool,
}

/// Everything the crawler takes from one HTML page.
#[derive(Clone, Debug, Default)]
pub struct ParsedPage {
    /// Title and visible text.
    pub text: PageText,
    /// Outlinks in document order (unsupported and unparsable hrefs dropped).
    pub links: Vec<OutLink>,
    /// `<meta name="robots" content="nofollow">`.
    pub meta_nofollow: bool,
    /// `<meta name="robots" content="noindex">`.
    pub meta_noindex: bool,
}

static LINKS: LazyLock<Selector> =
    LazyLock::new(|| Selector::parse("a[href], area[href]").unwrap_or_else(|_| unreachable!()));
static BASE: LazyLock<Selector> =
    LazyLock::new(|| Selector::parse("base[href]").unwrap_or_else(|_| unreachable!()));
static META_ROBOTS: LazyLock<Selector> =
    LazyLock::new(|| Selector::parse("meta[name][content]").unwrap_or_else(|_| unreachable!()));

/// Parses a fetched page: text, outlinks resolved against `<base href>` or `page_url`, and the
/// robots meta directives.
pub fn parse_page(html: &str, page_url: &url::Url) -> ParsedPage {
    let doc = Html::parse_document(html);
    let mut out = ParsedPage {
        text: doc_text(&doc),
        ..ParsedPage::default()
    };
    for m in doc.select(&META_ROBOTS) {
        let name = m.value().attr("name").unwrap_or("").to_ascii_lowercase();
        if name == "robots" {
            let content = m.value().attr("content").unwrap_or("").to_ascii_lowercase();
            out.meta_nofollow |= content.contains("nofollow") || content.contains("none");
            out.meta_noindex |= content.contains("noindex") || content.contains("none");
        }
    }
    let base = doc
        .select(&BASE)
        .next()
        .and_then(|b| page_url.join(b.value().attr("href")?).ok())
        .unwrap_or_else(|| page_url.clone());
    for a in doc.select(&LINKS) {
        let Some(href) = a.value().attr("href") else {
            continue;
        };
        let Ok(url) = crate::canon::resolve(&base, href) else {
            continue;
        };
        let rel = a.value().attr("rel").unwrap_or("").to_ascii_lowercase();
        let mut anchor = String::new();
        push_collapsed(&mut anchor, &a.text().collect::<Vec<_>>().join(" "));
        out.links.push(OutLink {
            url,
            anchor,
            nofollow: rel.split_whitespace().any(|r| r == "nofollow"),
        });
    }
    out
}

#[cfg(test)]
mod link_tests {
    use super::*;

    #[test]
    fn links_base_and_robots_meta() {
        let page = url::Url::parse("http://a.test/dir/p.html").unwrap();
        let p = parse_page(
            r#"<html><head><base href="http://b.test/x/"><meta name="ROBOTS" content="NoIndex"></head>
            <body><a href="y.html#f">Why <b>me</b></a> <a rel="nofollow" href="/z">z</a>
            <a href="mailto:x@y">mail</a><a href="javascript:void(0)">js</a></body></html>"#,
            &page,
        );
        assert_eq!(p.links.len(), 2);
        assert_eq!(p.links[0].url.as_str(), "http://b.test/x/y.html");
        assert_eq!(p.links[0].anchor, "Why me");
        assert!(p.links[1].nofollow);
        assert!(p.meta_noindex && !p.meta_nofollow);
    }
}
