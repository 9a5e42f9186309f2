//! A generated web that needs no disk: each page is made on request from its URL, the same
//! every time (its generator is seeded by the URL), so a crawl of millions of pages costs the
//! server no memory. Sites belong to the demo taxonomy's topics and write in their
//! vocabularies ([`super::TOPICS`]), so the classifier has work; links keep topical locality,
//! and most lead to pages no link named before, so the frontier grows about seven URLs for
//! each page fetched (the million-page bench's web).
//!
//! Hosts are `<topic><k>.gen.test` (`networking12.gen.test`), pages `/` and `/p<n>.html`.

use super::{paragraph, words, zipf, COMMON, TOPICS};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write;

/// Pages a site can have (`/p0.html` to `/p1048575.html`).
pub const PAGES_PER_SITE: u64 = 1 << 20;

/// Links on every page but a site's home page.
pub const LINKS_PER_PAGE: usize = 10;

/// Of a page's links, those to the few pages every page of its site names (home, the site's
/// first pages): they recur.
const NAV_LINKS: usize = 2;

/// The site's pages its navigation names (`/p0.html` to `/p19.html`), its home page's links.
const NAV_PAGES: u64 = 20;

/// The host-name suffix of every site.
const SUFFIX: &str = ".gen.test";

/// A procedural web: `sites_per_topic` sites for each topic of [`TOPICS`].
#[derive(Clone, Debug)]
pub struct ProceduralWeb {
    /// Seed: the same seed makes the same web.
    pub seed: u64,
    /// Sites of each topic.
    pub sites_per_topic: usize,
    vocab: Vec<Vec<&'static str>>,
    common: Vec<&'static str>,
}

impl ProceduralWeb {
    /// The web of `seed` with `sites_per_topic` sites of each topic.
    pub fn new(seed: u64, sites_per_topic: usize) -> Self {
        ProceduralWeb {
            seed,
            sites_per_topic: sites_per_topic.max(1),
            vocab: TOPICS.iter().map(|t| words(t.2)).collect(),
            common: words(COMMON),
        }
    }

    /// The host of site `k` of topic `t`.
    pub fn host(&self, t: usize, k: usize) -> String {
        format!("{}{k}{SUFFIX}", TOPICS[t].1.to_ascii_lowercase())
    }

    /// The topic of `host`, if the web has that host.
    pub fn topic_of_host(&self, host: &str) -> Option<usize> {
        let name = host.strip_suffix(SUFFIX)?;
        let digits = name.find(|c: char| c.is_ascii_digit())?;
        let (slug, k) = name.split_at(digits);
        let k: usize = k.parse().ok().filter(|&k| k < self.sites_per_topic)?;
        let canonical = TOPICS.iter().position(|t| t.1.eq_ignore_ascii_case(slug))?;
        // One spelling per host: no leading zeros, no upper case.
        (self.host(canonical, k) == host).then_some(canonical)
    }

    /// Home pages of the first `n` sites of the topic at `path` (say `/Computing/Networking`).
    pub fn seeds(&self, path: &str, n: usize) -> Vec<String> {
        let Some(t) = TOPICS.iter().position(|x| x.0 == path) else {
            return Vec::new();
        };
        (0..n.min(self.sites_per_topic))
            .map(|k| format!("http://{}/", self.host(t, k)))
            .collect()
    }

    /// The page at `host` and `path`, or None (404; None also for a host the web lacks).
    pub fn page(&self, host: &str, path: &str) -> Option<String> {
        let site_topic = self.topic_of_host(host)?;
        let n = page_number(path)?;
        let url = format!("http://{host}{path}");
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed ^ forager_core::store::fnv64(&url));
        Some(match n {
            None => self.home(host, site_topic, &mut rng),
            Some(n) => self.article(host, site_topic, n, &mut rng),
        })
    }

    /// A site's home page: its navigation pages, a paragraph of its topic.
    fn home(&self, host: &str, t: usize, rng: &mut ChaCha8Rng) -> String {
        let mut html = head(host, TOPICS[t].1);
        let p = paragraph(rng, Some(&self.vocab[t]), &self.vocab, &self.common, 40);
        let _ = write!(html, "<p>{p}</p><ul>");
        for i in 0..NAV_PAGES {
            let a = zipf(rng, &self.vocab[t]);
            let _ = write!(html, "<li><a href=\"/p{i}.html\">{a}</a></li>");
        }
        html.push_str("</ul></body></html>");
        html
    }

    /// Page `n` of a site of topic `site_topic`: mostly of that topic, some of another.
    fn article(&self, host: &str, site_topic: usize, n: u64, rng: &mut ChaCha8Rng) -> String {
        let t = if rng.random_bool(0.7) {
            site_topic
        } else {
            rng.random_range(0..TOPICS.len())
        };
        let title = zipf(rng, &self.vocab[t]);
        let mut html = head(host, title);
        let _ = write!(
            html,
            "<div class=\"nav\"><a href=\"/\">Home</a></div><h1>{title} {n}</h1>"
        );
        for _ in 0..3 {
            let len = rng.random_range(25..60);
            let p = paragraph(rng, Some(&self.vocab[t]), &self.vocab, &self.common, len);
            let _ = write!(html, "<p>{p}</p>");
        }
        html.push_str("<ul>");
        for i in 0..LINKS_PER_PAGE - 1 {
            let (url, target_topic) = if i + 1 < NAV_LINKS {
                let p = rng.random_range(0..NAV_PAGES);
                (format!("/p{p}.html"), site_topic)
            } else {
                self.content_link(host, t, rng)
            };
            let a = zipf(rng, &self.vocab[target_topic]);
            let _ = write!(html, "<li><a href=\"{url}\">{a}</a></li>");
        }
        html.push_str("</ul></body></html>");
        html
    }

    /// A link in a page's text: half stay on the site, the rest go to another site of the
    /// page's topic (topical locality) or, one in three, of any topic; to a page chosen from
    /// the site's whole range, so most were never named before.
    fn content_link(&self, host: &str, t: usize, rng: &mut ChaCha8Rng) -> (String, usize) {
        let p = rng.random_range(NAV_PAGES..PAGES_PER_SITE);
        if rng.random_bool(0.5) {
            let own = self.topic_of_host(host).unwrap_or(t);
            return (format!("/p{p}.html"), own);
        }
        let to = if rng.random_bool(2.0 / 3.0) {
            t
        } else {
            rng.random_range(0..TOPICS.len())
        };
        let k = rng.random_range(0..self.sites_per_topic);
        (format!("http://{}/p{p}.html", self.host(to, k)), to)
    }
}

/// `/` → Some(None); `/p<n>.html` (n in range, no leading zero) → Some(Some(n)); else None.
fn page_number(path: &str) -> Option<Option<u64>> {
    if path == "/" {
        return Some(None);
    }
    let digits = path.strip_prefix("/p")?.strip_suffix(".html")?;
    let n: u64 = digits.parse().ok().filter(|&n| n < PAGES_PER_SITE)?;
    (n.to_string() == digits).then_some(Some(n))
}

fn head(host: &str, title: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{title} - {host}</title></head><body>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(html: &str) -> Vec<&str> {
        html.split("href=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next())
            .collect()
    }

    #[test]
    fn the_same_url_makes_the_same_page_and_another_url_another() {
        let web = ProceduralWeb::new(7, 100);
        let host = web.host(2, 13);
        assert_eq!(host, "networking13.gen.test");
        let a = web.page(&host, "/p4242.html").unwrap();
        assert_eq!(
            a,
            ProceduralWeb::new(7, 100)
                .page(&host, "/p4242.html")
                .unwrap()
        );
        assert_ne!(a, web.page(&host, "/p4243.html").unwrap());
        assert_ne!(
            a,
            ProceduralWeb::new(8, 100)
                .page(&host, "/p4242.html")
                .unwrap()
        );
        assert!(a.contains("<title>"));
    }

    #[test]
    fn unknown_hosts_and_paths_have_no_page() {
        let web = ProceduralWeb::new(7, 100);
        for (h, p) in [
            ("networking100.gen.test", "/"),
            ("networking013.gen.test", "/"),
            ("Networking13.gen.test", "/"),
            ("plumbing1.gen.test", "/"),
            ("networking1.example", "/"),
            ("networking1.gen.test", "/p01.html"),
            ("networking1.gen.test", "/p1048576.html"),
            ("networking1.gen.test", "/robots.txt"),
        ] {
            assert!(web.page(h, p).is_none(), "{h}{p}");
        }
        assert!(web
            .page("networking99.gen.test", "/p1048575.html")
            .is_some());
    }

    #[test]
    fn pages_have_ten_links_to_pages_of_the_web_most_of_them_new() {
        let web = ProceduralWeb::new(1, 500);
        let host = web.host(2, 0);
        let home = web.page(&host, "/").unwrap();
        assert_eq!(links(&home).len(), NAV_PAGES as usize);
        let mut seen = std::collections::HashSet::new();
        let mut total = 0;
        let mut on_topic = 0;
        for n in 0..200 {
            let html = web.page(&host, &format!("/p{n}.html")).unwrap();
            let ls = links(&html);
            assert_eq!(ls.len(), LINKS_PER_PAGE, "{html}");
            for l in ls {
                let abs = url::Url::parse(&format!("http://{host}/"))
                    .unwrap()
                    .join(l)
                    .unwrap();
                let h = abs.host_str().unwrap();
                let t = web.topic_of_host(h).expect("a host of the web");
                assert!(web.page(h, abs.path()).is_some(), "{abs}");
                on_topic += usize::from(t == 2);
                total += 1;
                seen.insert(abs.to_string());
            }
        }
        // Most links are new (the frontier grows), most stay on topic (locality).
        assert!(seen.len() * 10 > total * 7, "{} of {total}", seen.len());
        assert!(on_topic * 2 > total, "{on_topic} of {total}");
    }

    #[test]
    fn seeds_are_home_pages_of_the_topics_sites() {
        let web = ProceduralWeb::new(1, 3);
        let s = web.seeds("/Computing/Networking", 5);
        assert_eq!(s.len(), 3);
        assert_eq!(s[0], "http://networking0.gen.test/");
        assert!(web.seeds("/No/Such", 5).is_empty());
    }
}
