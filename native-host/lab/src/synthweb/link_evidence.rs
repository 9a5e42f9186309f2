//! Test webs where link evidence decides (issue #25): the generated web's optional parts that
//! reproduce how the distiller and the apprentice fail on the real web. Each draws from its
//! own generator and adds pages after the rest, so without them the web is unchanged.
//!
//! - a dominant, tightly-knit community ([`SynthConfig::community`]): per topic, 30 pages on
//!   24 sites that read like the topic's pages but are about none (no label: the "generic
//!   libraries" a classifier takes for topical pages), all linking to each other and linked
//!   from the topic's pages: the dense block plain HITS converges onto;
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

/// Sites of the dominant community, and pages on each (page k reads like topic k mod 8).
pub const COMMUNITY_SITES: usize = 24;
const COMMUNITY_PAGES: usize = 10;
/// Links from each topical page into the community.
const COMMUNITY_INBOUND: usize = 2;
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

    /// The extra links of a topical page of topic `t` (its body's list).
    pub fn links_of(&self, t: Option<usize>, xrng: &mut ChaCha8Rng) -> Vec<(String, String)> {
        let mut links = Vec::new();
        let nt = TOPICS.len();
        for _ in 0..COMMUNITY_INBOUND {
            // Into the community pages that read like this page's topic.
            let n = self.community.len() / nt;
            if let (Some(t), true) = (t, n > 0) {
                let k = xrng.random_range(0..n) * nt + t;
                links.push((self.community[k].clone(), "library".to_owned()));
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
    // The community: page k reads like topic k mod 8 (a classifier finds it relevant to that
    // topic; it has no label) and links to every other community page of that topic, most
    // of them on other sites: a dense block that plain HITS converges onto.
    let nt = vocab.len();
    for (k, u) in x.community.iter().enumerate() {
        let t = k % nt;
        // One paragraph of three on the topic: generic pages that touch on it.
        let body: String = [Some(vocab[t].as_slice()), None, None]
            .iter()
            .map(|&v| format!("<p>{}</p>", paragraph(xrng, v, vocab, common, 40)))
            .collect();
        let links: Vec<(String, String)> = (x.community.iter().enumerate())
            .filter(|(j, v)| j % nt == t && *v != u)
            .map(|(_, v)| (v.clone(), zipf(xrng, &vocab[t]).to_owned()))
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
