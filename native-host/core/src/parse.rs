//! HTML parsing for the crawler and the classifier: title, visible text, outlinks, and the
//! DOM leaf sequence around each link that the apprentice learns from.
//!
//! Visible text follows one rule shared with the extension's `visibleText()`: the text nodes of
//! the document outside `head`, `script`, `style`, `noscript` and `template`, joined by single
//! spaces. The same rule on both sides gives the same tokens for the same page. The classifier
//! reads the page's *main* text: the visible text outside navigation boilerplate (see
//! [`is_boilerplate`]; an element holding `main` or `article` never is), or all of it when
//! nothing else is left. Site menus, "random entries" and
//! footers say little about the page's topic (on FOLDOC dropping them raised leaf accuracy by
//! 2.4 points); the apprentice still sees them, as DOM leaves.
//!
//! DOM leaves (accelerated-focused-crawling-2002 §2.2.1) are numbered left to right over the
//! same visible part: every non-blank text node, and every element without children (an
//! `<img>`, a `<br>`), which is a leaf without text.

mod depth;

pub use depth::{cap_depth, MAX_DEPTH, MAX_TAGS};

/// Most outlinks kept of one page (its first, in document order).
pub const MAX_LINKS: usize = 20_000;
use ego_tree::NodeRef;
use scraper::{Html, Node, Selector};
use std::collections::HashSet;
use std::sync::LazyLock;

/// Elements whose text is never shown to a reader.
const HIDDEN: &[&str] = &["head", "script", "style", "noscript", "template"];

/// Elements that hold a page's navigation and furniture rather than its content.
const BOILERPLATE_TAGS: &[&str] = &["nav", "footer", "aside"];
/// ARIA landmark roles of the same.
const BOILERPLATE_ROLES: &[&str] = &["navigation", "banner", "contentinfo", "complementary"];
/// Words of an `id` or `class` (split at `-`, `_` and spaces) that mark the same.
const BOILERPLATE_WORDS: &[&str] = &[
    "nav",
    "navbar",
    "navigation",
    "menu",
    "footer",
    "sidebar",
    "breadcrumb",
    "breadcrumbs",
];

/// Whether an element is marked as navigation boilerplate: a `nav`, `footer` or `aside`, a
/// navigation/banner/contentinfo/complementary landmark role, or an `id` or `class` word such as
/// `nav`, `menu`, `footer` or `sidebar` (case-insensitive).
pub fn is_boilerplate(e: &scraper::node::Element) -> bool {
    let has_word = |v: &str, set: &[&str]| {
        v.split(|c: char| c == '-' || c == '_' || c.is_ascii_whitespace())
            .any(|w| set.iter().any(|s| w.eq_ignore_ascii_case(s)))
    };
    BOILERPLATE_TAGS.contains(&e.name())
        || e.attr("role")
            .is_some_and(|r| has_word(r, BOILERPLATE_ROLES))
        || e.attr("id").is_some_and(|v| has_word(v, BOILERPLATE_WORDS))
        || e.attr("class")
            .is_some_and(|v| has_word(v, BOILERPLATE_WORDS))
}

/// Whether an element is the page's main content (`main`, `article`, `role=main`).
fn is_main_content(e: &scraper::node::Element) -> bool {
    matches!(e.name(), "main" | "article")
        || e.attr("role").is_some_and(|r| {
            r.split_ascii_whitespace()
                .any(|w| w.eq_ignore_ascii_case("main"))
        })
}

/// The main-content elements and all their ancestors: a wrapper such as
/// `<div class="content-sidebar-wrap">` that holds the main content is not boilerplate.
/// One pass, linear even on hostile nesting (the walk up stops at a node already marked).
/// Main content inside hidden elements (`template`, `noscript`, ...) does not count, as in the
/// browser, where a template's content is not part of the document.
fn main_content_holders(doc: &Html) -> HashSet<ego_tree::NodeId> {
    let mut mains = Vec::new();
    let mut stack = vec![doc.tree.root()];
    while let Some(node) = stack.pop() {
        if let Some(e) = node.value().as_element() {
            if HIDDEN.contains(&e.name()) {
                continue;
            }
            if is_main_content(e) {
                mains.push(node);
            }
        }
        stack.extend(node.children());
    }
    let mut holders = HashSet::new();
    for node in mains {
        let mut at = Some(node);
        while let Some(n) = at {
            if !holders.insert(n.id()) {
                break;
            }
            at = n.parent();
        }
    }
    holders
}

static TITLE: LazyLock<Selector> =
    LazyLock::new(|| Selector::parse("title").unwrap_or_else(|_| unreachable!()));
static BASE: LazyLock<Selector> =
    LazyLock::new(|| Selector::parse("base[href]").unwrap_or_else(|_| unreachable!()));
static META_ROBOTS: LazyLock<Selector> =
    LazyLock::new(|| Selector::parse("meta[name][content]").unwrap_or_else(|_| unreachable!()));

/// What the classifier needs from one page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageText {
    /// The `<title>`, whitespace-collapsed.
    pub title: String,
    /// Main text for the classifier: visible text outside boilerplate (or all visible text
    /// when that is empty), whitespace-collapsed.
    pub text: String,
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
    /// The anchor's own leaves are `leaves[start..end]` (empty when it has none).
    pub leaf_range: (usize, usize),
    /// The link sits in navigation boilerplate (site templates, footers) of a page that has
    /// main content, so it says little about the page's topic.
    pub boilerplate: bool,
}

impl OutLink {
    /// The link as the link scorer takes it ([`forager_classifier::links::score_links`]).
    pub fn span(&self) -> forager_classifier::links::LinkSpan {
        forager_classifier::links::LinkSpan {
            start: self.leaf_range.0,
            end: self.leaf_range.1,
            anchor: self.anchor.clone(),
            boilerplate: self.boilerplate,
        }
    }
}

/// Everything the crawler takes from one HTML page.
#[derive(Clone, Debug, Default)]
pub struct ParsedPage {
    /// Title and visible text.
    pub text: PageText,
    /// Outlinks in document order (unsupported and unparsable hrefs dropped).
    pub links: Vec<OutLink>,
    /// DOM leaves in document order: collapsed text, or "" for a leaf element.
    pub leaves: Vec<String>,
    /// `<meta name="robots" content="nofollow">`.
    pub meta_nofollow: bool,
    /// `<meta name="robots" content="noindex">`.
    pub meta_noindex: bool,
}

/// Whitespace for collapsing text: Unicode White_Space plus U+FEFF, the same set as the
/// extension's `/[\s\u0085]+/` (JavaScript's `\s` has U+FEFF but not U+0085).
fn is_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{FEFF}'
}

/// Appends `s` to `out` with runs of whitespace collapsed to one space.
fn push_collapsed(out: &mut String, s: &str) {
    for word in s.split(is_space).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
}

/// A link element met during the walk, with its leaf range.
struct RawLink<'a> {
    el: &'a scraper::node::Element,
    start: usize,
    end: usize,
    boilerplate: bool,
}

/// One depth-first walk: main text, leaves, and the link elements with their leaf ranges.
fn walk(doc: &Html) -> (String, Vec<String>, Vec<RawLink<'_>>) {
    enum Visit<'a> {
        Enter(NodeRef<'a, Node>),
        Exit(usize),
        ExitBoilerplate,
    }
    let (mut text, mut leaves, mut links) = (String::new(), Vec::new(), Vec::new());
    // All visible text, the fallback when the page is nothing but boilerplate.
    let mut all = String::new();
    let mut boilerplate_depth = 0usize;
    let holders = main_content_holders(doc);
    let mut stack = vec![Visit::Enter(doc.tree.root())];
    while let Some(v) = stack.pop() {
        let node = match v {
            Visit::Exit(i) => {
                let l: &mut RawLink<'_> = &mut links[i];
                l.end = leaves.len();
                continue;
            }
            Visit::ExitBoilerplate => {
                boilerplate_depth -= 1;
                continue;
            }
            Visit::Enter(n) => n,
        };
        match node.value() {
            Node::Element(e) if HIDDEN.contains(&e.name()) => continue,
            Node::Element(e) => {
                if node.has_children() && is_boilerplate(e) && !holders.contains(&node.id()) {
                    boilerplate_depth += 1;
                    stack.push(Visit::ExitBoilerplate);
                }
                if matches!(e.name(), "a" | "area") && e.attr("href").is_some() {
                    links.push(RawLink {
                        el: e,
                        start: leaves.len(),
                        end: leaves.len(),
                        boilerplate: boilerplate_depth > 0,
                    });
                    stack.push(Visit::Exit(links.len() - 1));
                }
                if !node.has_children() {
                    // A leaf without text (an <img>, a <br>, an empty anchor).
                    leaves.push(String::new());
                    continue;
                }
            }
            Node::Text(t) => {
                let mut leaf = String::new();
                push_collapsed(&mut leaf, t);
                if !leaf.is_empty() {
                    push_collapsed(&mut all, &leaf);
                    if boilerplate_depth == 0 {
                        push_collapsed(&mut text, &leaf);
                    }
                    leaves.push(leaf);
                }
                continue;
            }
            _ => {}
        }
        let at = stack.len();
        stack.extend(node.children().map(Visit::Enter));
        stack[at..].reverse();
    }
    if text.is_empty() {
        // Nothing but boilerplate: all of it is the page's content.
        text = all;
        links.iter_mut().for_each(|l| l.boilerplate = false);
    }
    (text, leaves, links)
}

/// Longest title kept, in characters: titles are shown and stored, never megabytes.
pub const MAX_TITLE: usize = 500;

fn title(doc: &Html) -> String {
    let mut t = String::new();
    if let Some(e) = doc.select(&TITLE).next() {
        let mut raw = String::new();
        for piece in e.text() {
            raw.push_str(piece);
            if raw.len() > MAX_TITLE * 8 {
                break;
            }
        }
        push_collapsed(&mut t, &raw);
    }
    match t.char_indices().nth(MAX_TITLE) {
        Some((i, _)) => t[..i].to_owned(),
        None => t,
    }
}

/// Extracts the title and visible text of an HTML document (any input parses; html5ever
/// repairs malformed markup the way browsers do).
pub fn page_text(html: &str) -> PageText {
    let doc = Html::parse_document(&cap_depth(html));
    PageText {
        title: title(&doc),
        text: walk(&doc).0,
    }
}

/// Parses a fetched page: text, leaves, outlinks resolved against `<base href>` or
/// `page_url`, and the robots meta directives.
pub fn parse_page(html: &str, page_url: &url::Url) -> ParsedPage {
    let doc = Html::parse_document(&cap_depth(html));
    let (text, leaves, raw) = walk(&doc);
    let mut out = ParsedPage {
        text: PageText {
            title: title(&doc),
            text,
        },
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
    for l in raw {
        if out.links.len() >= MAX_LINKS {
            break;
        }
        let Some(href) = l.el.attr("href") else {
            continue;
        };
        let Ok(url) = crate::canon::resolve(&base, href) else {
            continue;
        };
        let rel = l.el.attr("rel").unwrap_or("").to_ascii_lowercase();
        let mut anchor = String::new();
        for leaf in &leaves[l.start..l.end] {
            push_collapsed(&mut anchor, leaf);
        }
        out.links.push(OutLink {
            url,
            anchor,
            nofollow: rel.split_whitespace().any(|r| r == "nofollow"),
            leaf_range: (l.start, l.end),
            boilerplate: l.boilerplate,
        });
    }
    out.leaves = leaves;
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
        let long = format!("<title>{}</title><p>x</p>", "é".repeat(1_500_000));
        assert_eq!(page_text(&long).title.chars().count(), MAX_TITLE);
        assert_eq!(p.text, "One two three");
    }

    #[test]
    fn main_text_skips_navigation_boilerplate() {
        let p = page_text(
            r#"<body><div id="nav"><a href="/">Home</a> menu</div><nav>Sections</nav>
            <ul class="site-menu"><li>Links</li></ul><div role="navigation">Jump</div>
            <div id="content"><h1>Router</h1><p>forwards <b>packets</b></p>
            <aside>See also</aside><div class="navigator">kept</div></div>
            <div id="page_footer">Copyright</div><footer>Contact</footer></body>"#,
        );
        assert_eq!(p.text, "Router forwards packets kept");
        // A layout wrapper named after the sidebar that holds the main content is not boilerplate.
        let w = page_text(
            r#"<div class="content-sidebar-wrap"><main><p>Body text</p></main>
            <aside class="sidebar">Widgets</aside></div><div id="footer">Legal</div>"#,
        );
        assert_eq!(w.text, "Body text");
        // Deeply nested boilerplate around the main content: none of it is boilerplate.
        // (400 deep: Chromium re-parents nodes past 512 levels, html5ever does not.)
        let deep = format!(
            "{}<main>x</main>{}<div class=nav>y</div>",
            "<div class=nav>".repeat(400),
            "</div>".repeat(400)
        );
        assert_eq!(page_text(&deep).text, "x");
        // Main content hidden in a template or noscript does not save its wrapper; an empty
        // boilerplate element changes nothing; role=main and article count as main content.
        let cases = [
            (
                "<div class=\"sidebar\">Widgets<template><main></main></template></div><p>Body</p>",
                "Body",
            ),
            (
                "<div class=\"sidebar\">Widgets<noscript><article>a</article></noscript></div><p>Body</p>",
                "Body",
            ),
            ("<div class=nav></div><p>x</p>", "x"),
            ("<div id=menu><div role=main>m</div></div><nav>n</nav>", "m"),
            ("<div class=\"nav\"><article>a</article></div><footer>f</footer>", "a"),
            // U+FEFF and U+0085 are whitespace on both sides: a stray BOM is no main text.
            ("<nav>Home</nav>\u{FEFF}", "Home"),
            ("<p>a\u{85}b\u{FEFF}c</p>", "a b c"),
        ];
        for (html, want) in cases {
            assert_eq!(page_text(html).text, want, "{html}");
        }
        // A page of nothing but navigation keeps all its text.
        let q = page_text(r#"<nav><a href="/a">Alpha</a> <a href="/b">Beta</a></nav>"#);
        assert_eq!(q.text, "Alpha Beta");
        // The leaves, which the apprentice reads, still include the boilerplate.
        let page = url::Url::parse("http://a.test/").unwrap();
        let r = parse_page(r#"<nav><a href="/a">Alpha</a></nav><p>Body</p>"#, &page);
        assert_eq!(r.leaves, vec!["Alpha", "Body"]);
        assert_eq!(r.text.text, "Body");
    }

    #[test]
    fn malformed_html_still_yields_text() {
        let p = page_text("<p>unclosed <b>bold <i>both</p></div></span>tail");
        assert_eq!(p.text, "unclosed bold both tail");
    }

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

    #[test]
    fn links_in_boilerplate_are_marked() {
        let page = url::Url::parse("http://a.test/").unwrap();
        let p = parse_page(
            r#"<div id="nav"><a href="/home">Home</a></div>
            <main><p>Text with <a href="/topic">a link</a>.</p><nav><a href="/n">n</a></nav></main>
            <footer><a href="/about">About</a></footer>"#,
            &page,
        );
        let marks: Vec<(&str, bool)> = p
            .links
            .iter()
            .map(|l| (l.url.path(), l.boilerplate))
            .collect();
        assert_eq!(
            marks,
            vec![
                ("/home", true),
                ("/topic", false),
                ("/n", true),
                ("/about", true)
            ]
        );
        // A page that is nothing but boilerplate has no template links: it is all content.
        let q = parse_page(r#"<nav><p>Links: <a href="/x">x</a></p></nav>"#, &page);
        assert!(!q.links[0].boilerplate);
    }

    /// The example of the paper's Fig. 3: a list item holding text, a link with nested
    /// elements, and text; leaves are numbered left to right, empty leaves included.
    #[test]
    fn dom_leaves_are_numbered_like_fig_3() {
        let page = url::Url::parse("http://a.test/").unwrap();
        let p = parse_page(
            r#"<ul><li>first</li><li><tt>code</tt> before
               <a href="/v">anchor <em>text <font>deep</font></em></a> after<br></li>
               <li>third</li><li>fourth</li></ul>"#,
            &page,
        );
        assert_eq!(
            p.leaves,
            vec![
                "first", "code", "before", "anchor", "text", "deep", "after", "", "third", "fourth"
            ]
        );
        let l = &p.links[0];
        assert_eq!(l.leaf_range, (3, 6));
        assert_eq!(l.anchor, "anchor text deep");
        // An image link has an empty leaf of its own.
        let q = parse_page(r#"<p>x <a href="/i"><img src="i.png"></a> y</p>"#, &page);
        assert_eq!(q.leaves, vec!["x", "", "y"]);
        assert_eq!(q.links[0].leaf_range, (1, 2));
    }
}
