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
    let doc = Html::parse_document(html);
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
