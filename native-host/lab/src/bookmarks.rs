//! Import of a browser bookmarks export (the Netscape bookmark file every browser writes):
//! folders become topics, bookmarks become examples of their folder.

use scraper::{ElementRef, Html};

/// One bookmark with the folder path it sits in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bookmark {
    /// Folder names from the outermost down.
    pub folders: Vec<String>,
    /// The bookmark's URL.
    pub url: String,
    /// The bookmark's title.
    pub title: String,
}

/// Turns a folder name into a topic path segment (no `/`, trimmed, never empty).
pub fn segment(name: &str) -> String {
    let s: String = name
        .trim()
        .chars()
        .map(|c| if c == '/' || c.is_control() { '_' } else { c })
        .take(100)
        .collect();
    if s.is_empty() {
        "Untitled".into()
    } else {
        s
    }
}

fn text_of(e: ElementRef<'_>) -> String {
    e.text()
        .collect::<Vec<_>>()
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Parses a bookmarks export. Markup is repaired by html5ever; a `<DL>` belongs to the folder
/// whose `<H3>` most recently preceded it at the same level, as browsers write them.
pub fn parse(html: &str) -> Vec<Bookmark> {
    let doc = Html::parse_document(&forager_core::parse::cap_depth(html));
    let mut out = Vec::new();
    walk(doc.root_element(), &mut Vec::new(), &mut out);
    out
}

fn walk(el: ElementRef<'_>, folders: &mut Vec<String>, out: &mut Vec<Bookmark>) {
    // The folder named by the latest H3 seen among these children, for the DL that follows.
    let mut pending: Option<String> = None;
    for child in el.children().filter_map(ElementRef::wrap) {
        match child.value().name() {
            "h3" => pending = Some(segment(&text_of(child))),
            "a" => {
                if let Some(href) = child.value().attr("href") {
                    out.push(Bookmark {
                        folders: folders.clone(),
                        url: href.trim().to_owned(),
                        title: text_of(child),
                    });
                }
            }
            "dl" => {
                let named = pending.take();
                if let Some(n) = &named {
                    folders.push(n.clone());
                }
                walk(child, folders, out);
                if named.is_some() {
                    folders.pop();
                }
            }
            _ => walk(child, folders, out),
        }
        if child.value().name() == "dt" {
            // A DT holding an H3 names the DL nested in it or the one right after it.
            if let Some(h3) = child
                .children()
                .filter_map(ElementRef::wrap)
                .find(|c| c.value().name() == "h3")
            {
                let has_dl = child
                    .children()
                    .filter_map(ElementRef::wrap)
                    .any(|c| c.value().name() == "dl");
                if !has_dl {
                    pending = Some(segment(&text_of(h3)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXPORT: &str = r#"<!DOCTYPE NETSCAPE-Bookmark-file-1>
<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">
<TITLE>Bookmarks</TITLE>
<H1>Bookmarks</H1>
<DL><p>
    <DT><H3 ADD_DATE="1">Astronomy</H3>
    <DL><p>
        <DT><A HREF="http://a.test/telescopes.html">Telescopes</A>
        <DT><H3>Deep sky / nebulae</H3>
        <DL><p>
            <DT><A HREF="http://b.test/m42.html">M42</A>
        </DL><p>
    </DL><p>
    <DT><A HREF="http://c.test/">Loose</A>
    <DT><H3>Cooking</H3>
    <DL><p>
        <DT><A HREF="http://d.test/bread.html">Bread</A>
    </DL><p>
</DL><p>"#;

    #[test]
    fn folders_become_paths() {
        let b = parse(EXPORT);
        let got: Vec<(String, &str)> = b
            .iter()
            .map(|b| (b.folders.join("/"), b.url.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("Astronomy".to_string(), "http://a.test/telescopes.html"),
                (
                    "Astronomy/Deep sky _ nebulae".to_string(),
                    "http://b.test/m42.html"
                ),
                (String::new(), "http://c.test/"),
                ("Cooking".to_string(), "http://d.test/bread.html"),
            ]
        );
        assert_eq!(b[1].title, "M42");
    }
}
