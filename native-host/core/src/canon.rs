//! Canonical URLs and spider-trap guards (crawling-the-web-2004 §2.4, §2.5).
//!
//! Canonical form: http(s) only; scheme and host lower-cased and default ports dropped (the
//! `url` crate's WHATWG parsing); dot segments resolved; fragment dropped; percent-escapes of
//! unreserved characters decoded and hex digits upper-cased; an empty path becomes `/`; a final
//! `index.html`/`index.htm` is dropped so `/dir/` and `/dir/index.html` are one page.

use url::Url;

/// Limits that keep a crawl out of traps; every limit is reported when it fires.
#[derive(Clone, Debug)]
pub struct TrapLimits {
    /// Longest URL accepted, in bytes.
    pub max_url_len: usize,
    /// Most path segments accepted.
    pub max_path_depth: usize,
    /// Most times one path segment may repeat in a path (`/a/b/a/b/a/...`).
    pub max_segment_repeats: usize,
}

impl Default for TrapLimits {
    fn default() -> Self {
        TrapLimits {
            max_url_len: 512,
            max_path_depth: 12,
            max_segment_repeats: 2,
        }
    }
}

/// Why a link was not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reject {
    /// Not parseable, or not http/https.
    Unsupported,
    /// Longer than `max_url_len`.
    TooLong,
    /// Deeper than `max_path_depth`.
    TooDeep,
    /// A segment repeats more than `max_segment_repeats` times.
    RepeatedSegments,
}

impl Reject {
    /// A short stable name for reports.
    pub fn kind(self) -> &'static str {
        match self {
            Reject::Unsupported => "unsupported-url",
            Reject::TooLong => "trap-url-length",
            Reject::TooDeep => "trap-path-depth",
            Reject::RepeatedSegments => "trap-path-repetition",
        }
    }
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Decodes escapes of unreserved characters and upper-cases the hex of the others.
fn normalize_escapes(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = &s[i + 1..i + 3];
            if let Ok(v) = u8::from_str_radix(hex, 16) {
                if is_unreserved(v) {
                    out.push(v as char);
                } else {
                    out.push('%');
                    out.push_str(&hex.to_ascii_uppercase());
                }
                i += 3;
                continue;
            }
        }
        out.push(b[i] as char);
        i += 1;
    }
    out
}

/// Resolves `href` against `base` and returns its canonical form.
pub fn resolve(base: &Url, href: &str) -> Result<Url, Reject> {
    let u = base.join(href.trim()).map_err(|_| Reject::Unsupported)?;
    canonical(u)
}

/// Parses and canonicalizes an absolute URL.
pub fn parse(url: &str) -> Result<Url, Reject> {
    canonical(Url::parse(url.trim()).map_err(|_| Reject::Unsupported)?)
}

fn canonical(mut u: Url) -> Result<Url, Reject> {
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none_or(str::is_empty) {
        return Err(Reject::Unsupported);
    }
    u.set_fragment(None);
    let _ = u.set_username("");
    let _ = u.set_password(None);
    // The path is ASCII after WHATWG serialization, so byte-wise escapes are safe.
    let mut path = normalize_escapes(u.path());
    for index in ["index.html", "index.htm"] {
        if path.ends_with(&format!("/{index}")) {
            path.truncate(path.len() - index.len());
        }
    }
    u.set_path(&path);
    if let Some(q) = u.query() {
        let q = normalize_escapes(q);
        u.set_query(if q.is_empty() { None } else { Some(&q) });
    }
    Ok(u)
}

/// Longest seed URL accepted, in bytes (what servers and sitemaps commonly allow).
pub const MAX_SEED_LEN: usize = 2048;

/// A seed URL the user gave, canonical, or why it cannot be one.
pub fn seed(s: &str) -> Result<Url, String> {
    if s.len() > MAX_SEED_LEN {
        return Err(format!(
            "seed URL of {} bytes is longer than {MAX_SEED_LEN}",
            s.len()
        ));
    }
    parse(s).map_err(|_| format!("not an http(s) URL: {s:?}"))
}

/// Checks a canonical URL against the trap limits.
pub fn check_traps(u: &Url, limits: &TrapLimits) -> Result<(), Reject> {
    if u.as_str().len() > limits.max_url_len {
        return Err(Reject::TooLong);
    }
    let segs: Vec<&str> = u.path().split('/').filter(|s| !s.is_empty()).collect();
    if segs.len() > limits.max_path_depth {
        return Err(Reject::TooDeep);
    }
    let mut counts = std::collections::HashMap::new();
    for s in &segs {
        let c = counts.entry(*s).or_insert(0usize);
        *c += 1;
        if *c > limits.max_segment_repeats {
            return Err(Reject::RepeatedSegments);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> String {
        parse(s)
            .map(|u| u.to_string())
            .unwrap_or_else(|e| e.kind().into())
    }

    #[test]
    fn canonical_forms() {
        assert_eq!(
            c("HTTP://Example.TEST:80/a/./b/../c.html#frag"),
            "http://example.test/a/c.html"
        );
        assert_eq!(c("http://example.test"), "http://example.test/");
        assert_eq!(c("https://example.test:443/x"), "https://example.test/x");
        assert_eq!(
            c("http://example.test:8080/x"),
            "http://example.test:8080/x"
        );
        assert_eq!(
            c("http://example.test/%7euser/%41b%2f"),
            "http://example.test/~user/Ab%2F"
        );
        assert_eq!(
            c("http://example.test/dir/index.html"),
            "http://example.test/dir/"
        );
        assert_eq!(c("http://u:p@example.test/"), "http://example.test/");
        assert_eq!(c("http://example.test/?"), "http://example.test/");
        assert_eq!(c("mailto:someone@example.test"), "unsupported-url");
        assert_eq!(c("ftp://example.test/x"), "unsupported-url");
        assert_eq!(c("javascript:alert(1)"), "unsupported-url");
    }

    #[test]
    fn relative_links_resolve() {
        let base = parse("http://a.test/dir/page.html").unwrap();
        assert_eq!(
            resolve(&base, "../x.html").unwrap().as_str(),
            "http://a.test/x.html"
        );
        assert_eq!(
            resolve(&base, "//B.test/y").unwrap().as_str(),
            "http://b.test/y"
        );
        assert_eq!(
            resolve(&base, "#top").unwrap().as_str(),
            "http://a.test/dir/page.html"
        );
    }

    #[test]
    fn traps_are_caught() {
        let l = TrapLimits::default();
        let ok = parse("http://a.test/calendar/2024/01").unwrap();
        assert!(check_traps(&ok, &l).is_ok());
        let rep = parse("http://a.test/d/x/d/y/d/e").unwrap();
        assert_eq!(check_traps(&rep, &l), Err(Reject::RepeatedSegments));
        let deep2: String = (0..20).map(|i| format!("s{i}/")).collect();
        let deep2 = parse(&format!("http://a.test/{deep2}")).unwrap();
        assert_eq!(check_traps(&deep2, &l), Err(Reject::TooDeep));
        let long = parse(&format!("http://a.test/{}", "q".repeat(600))).unwrap();
        assert_eq!(check_traps(&long, &l), Err(Reject::TooLong));
    }
}
