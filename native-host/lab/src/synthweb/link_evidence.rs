//! Test webs where link evidence decides (issue #25): the generated web's optional parts that
//! reproduce how the distiller and the apprentice fail on the real web. Each draws from its
//! own generator and adds pages after the rest, so without them the web is unchanged.
//!
//! - a dominant, tightly-knit community ([`SynthConfig::community`]): 240 generic pages on
//!   24 sites (an XML parser, an SQL engine, an image codec...: common words, no topic, no
//!   label), each linking to every other one and to the same 15 popular pages of every topic
//!   (on distinct sites), and linked from every page of the web: the dense block plain HITS
//!   converges onto, its pages tied as hubs (the issue's "ten generic libraries all at
//!   0.144"); 15 is the fewest tried (3, 5, 10, 15, 20) at which plain HITS collapses on
//!   every task;
//! - site hubs ([`SynthConfig::site_hubs`]): the topical hubs link mostly into their own site
//!   (a site's own index of its topical pages) and are listed in `hubs.tsv`;
//! - hidden regions ([`SynthConfig::hidden`]): per topic, sites of relevant pages reachable
//!   only through gateway pages that look irrelevant (common words, no topic) but whose
//!   "Further reading" links carry the topic's words: page relevance cannot find them, link
//!   features can.

use super::{paragraph, zipf, SynthConfig, TOPICS};
use rand::seq::IndexedRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

/// Sites of the dominant community, and pages on each.
pub const COMMUNITY_SITES: usize = 24;
const COMMUNITY_PAGES: usize = 10;
/// Links from each page of the web into the community.
const COMMUNITY_INBOUND: usize = 2;
/// Popular pages per topic that every community page links to.
const COMMUNITY_POPULAR: usize = 15;
/// Share of a topical hub's links that stay on its own site (with site hubs).
pub const SITE_HUB_SHARE: f64 = 0.6;
/// Hidden sites per topic, pages on each, gateways per topic.
const HIDDEN_SITES: usize = 6;
const HIDDEN_PAGES: usize = 40;
const GATEWAYS: usize = 12;
/// Chance that a topical page links to a gateway of its topic.
const GATEWAY_INBOUND: f64 = 0.3;

/// The extra parts' URLs, which the topical pages link into.
#[derive(Default)]
pub(super) struct Extras {
    /// The community's pages.
    pub community: Vec<String>,
    /// The topical pages every community page links to (the first few of each topic).
    pub popular: Vec<String>,
    /// Per topic: its gateways.
    pub gateways: Vec<Vec<String>>,
    /// Per topic: its hidden pages.
    pub hidden: Vec<Vec<String>>,
}

impl Extras {
    /// The URLs of the parts `cfg` asks for.
    pub fn new(cfg: &SynthConfig) -> Extras {
        let mut x = Extras::default();
        if cfg.community {
            for s in 0..COMMUNITY_SITES {
                for p in 0..COMMUNITY_PAGES {
                    x.community.push(format!("http://lib-{s}.test/p{p}.html"));
                }
            }
        }
        if cfg.hidden {
            for (t, (_, title, _)) in TOPICS.iter().enumerate() {
                let stem = title.to_ascii_lowercase();
                x.gateways.push(
                    (0..GATEWAYS)
                        .map(|g| format!("http://gate-{}.test/{stem}-{g}.html", (g + t) % 7))
                        .collect(),
                );
                let mut hidden = Vec::new();
                for s in 0..HIDDEN_SITES {
                    for p in 0..HIDDEN_PAGES {
                        hidden.push(format!("http://deep-{stem}-{s}.test/p{p}.html"));
                    }
                }
                x.hidden.push(hidden);
            }
        }
        x
    }

    /// Picks the popular pages among the web's `(url, topic, site)` pages, if there is a
    /// community: the first few of each topic, on distinct sites.
    pub fn set_popular<'p>(
        &mut self,
        pages: impl Iterator<Item = (&'p str, Option<usize>, usize)>,
    ) {
        if self.community.is_empty() {
            return;
        }
        let mut sites: Vec<Vec<usize>> = vec![Vec::new(); TOPICS.len()];
        for (u, t, site) in pages {
            if let Some(s) = t.and_then(|t| sites.get_mut(t)) {
                if s.len() < COMMUNITY_POPULAR && !s.contains(&site) {
                    s.push(site);
                    self.popular.push(u.to_owned());
                }
            }
        }
    }

    /// The extra links of a page of topic `t` (its body's list).
    pub fn links_of(&self, t: Option<usize>, xrng: &mut ChaCha8Rng) -> Vec<(String, String)> {
        let mut links = Vec::new();
        for _ in 0..COMMUNITY_INBOUND {
            // Every page, topical or not, links into the community (no draws without one).
            if let Some(u) = self.community.choose(xrng) {
                links.push((u.clone(), "library".to_owned()));
            }
        }
        if let Some(gates) = t.and_then(|t| self.gateways.get(t)) {
            if xrng.random_bool(GATEWAY_INBOUND) {
                if let Some(u) = gates.choose(xrng) {
                    links.push((u.clone(), "more".to_owned()));
                }
            }
        }
        links
    }
}

/// Writes the extra parts' pages into `files` and their labels into `labels`.
pub(super) fn pages(
    x: &Extras,
    vocab: &[Vec<&'static str>],
    common: &[&'static str],
    xrng: &mut ChaCha8Rng,
    files: &mut BTreeMap<String, String>,
    labels: &mut HashMap<String, Vec<String>>,
) {
    let page = |title: &str, body: &str, links: &[(String, String)], heading: &str| {
        let mut html = format!(
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
             <body><h1>{title}</h1>{body}<h2>{heading}</h2><ul>"
        );
        for (u, a) in links {
            let _ = write!(html, "<li><a href=\"{u}\">{a}</a></li>");
        }
        html.push_str("</ul></body></html>");
        html
    };
    // The community: generic pages (common words, no topic) each linking to every other one
    // and to the popular pages of every topic: a dense block that plain HITS converges onto.
    for u in &x.community {
        let body: String = (0..3)
            .map(|_| format!("<p>{}</p>", paragraph(xrng, None, vocab, common, 40)))
            .collect();
        let links: Vec<(String, String)> = (x.community.iter().filter(|v| *v != u))
            .chain(&x.popular)
            .map(|v| (v.clone(), zipf(xrng, common).to_owned()))
            .collect();
        files.insert(u.clone(), page("library", &body, &links, "Related"));
    }
    for (t, gates) in x.gateways.iter().enumerate() {
        let hidden = &x.hidden[t];
        // Gateways: text with no topic, and links into the hidden pages with topic anchors.
        for g in gates {
            let body = format!("<p>{}</p>", paragraph(xrng, None, vocab, common, 80));
            let links = topical_links(xrng, hidden, &vocab[t], 12, None);
            files.insert(g.clone(), page("notes", &body, &links, "Further reading"));
        }
        // Hidden pages: topical, linking among themselves.
        for h in hidden {
            let body: String = (0..3)
                .map(|_| {
                    let n = xrng.random_range(25..60);
                    format!(
                        "<p>{}</p>",
                        paragraph(xrng, Some(&vocab[t]), vocab, common, n)
                    )
                })
                .collect();
            let links = topical_links(xrng, hidden, &vocab[t], 6, Some(h));
            let title = zipf(xrng, &vocab[t]);
            files.insert(h.clone(), page(title, &body, &links, "See also"));
            labels.insert(h.clone(), vec![TOPICS[t].0.to_owned()]);
        }
    }
    // Index pages and robots.txt of the extra sites.
    let mut hosts: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for u in x
        .community
        .iter()
        .chain(x.gateways.iter().flatten())
        .chain(x.hidden.iter().flatten())
    {
        if let Some(h) = url::Url::parse(u)
            .ok()
            .and_then(|v| v.host_str().map(str::to_owned))
        {
            hosts.entry(h).or_default().push(u.clone());
        }
    }
    for (h, urls) in hosts {
        files.insert(
            format!("http://{h}/robots.txt"),
            "User-agent: *\nDisallow:\n".into(),
        );
        let links: Vec<(String, String)> = urls.iter().map(|u| (u.clone(), u.clone())).collect();
        files
            .entry(format!("http://{h}/"))
            .or_insert_with(|| page(&h, "", &links, "Pages"));
    }
}

/// `n` links to random pages of `among` (but `not`), anchored with words of `vocab`.
fn topical_links(
    xrng: &mut ChaCha8Rng,
    among: &[String],
    vocab: &[&'static str],
    n: usize,
    not: Option<&String>,
) -> Vec<(String, String)> {
    let mut links = Vec::new();
    for _ in 0..n {
        let Some(u) = among.choose(xrng) else { break };
        let anchor = zipf(xrng, vocab).to_owned();
        if Some(u) != not {
            links.push((u.clone(), anchor));
        }
    }
    links
}
