//! Generating the synthetic web: the sites and their pages, each page's HTML, the site
//! indexes and portals, the examples and the tasks. Two generators drive it (the web's and
//! the off-taxonomy regions'), consumed in a fixed order so a seed always gives the same web.

use super::link_evidence::{self, Extras};
use super::{
    add_regions, off_taxonomy, paragraph, words, zipf, PageSpec, SynthConfig, SynthWeb, TOPICS,
};
use crate::miniweb::{MiniWeb, Task};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;
use std::sync::Arc;

/// Generates the web for `cfg`.
pub(super) fn web(cfg: &SynthConfig) -> SynthWeb {
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let (mut site_names, mut pages) = layout(cfg, &mut rng);
    let n_normal = pages.len();
    // Regions draw from their own generator, so that without them the web is unchanged.
    let mut orng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x0ff7_a8e0);
    let regions = add_regions(cfg, &mut orng, &mut site_names, &mut pages);
    // So do the parts where link evidence decides.
    let mut xrng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x11ce_0025);
    let mut extras = Extras::new(cfg);
    extras.set_popular(
        pages[..n_normal]
            .iter()
            .map(|p| (p.url.as_str(), p.topic, p.site)),
    );
    let cx = Context::new(cfg, &site_names, &pages, n_normal, &regions, &extras);
    let mut files = BTreeMap::new();
    let mut labels = HashMap::new();
    let mut off_tax = BTreeMap::new();
    for (i, pg) in pages.iter().enumerate() {
        if let Some(r) = pg.region {
            files.insert(pg.url.clone(), cx.region_page(i, r, &mut orng));
            off_tax.insert(pg.url.clone(), off_taxonomy::REGIONS[r].0.to_owned());
            continue;
        }
        let html = cx.topical_page(i, &mut rng, &mut orng, &mut xrng);
        files.insert(pg.url.clone(), html);
        if let Some(t) = pg.topic {
            labels.insert(pg.url.clone(), vec![TOPICS[t].0.to_owned()]);
        }
    }
    link_evidence::pages(
        &extras,
        &cx.vocab,
        &cx.common,
        &mut xrng,
        &mut files,
        &mut labels,
    );
    cx.site_files(&mut files);
    cx.portals(&mut rng, &mut files);
    let (examples, tasks) = cx.examples_and_tasks();
    let files_arc = Arc::new(files.clone());
    let mut web = MiniWeb::in_memory(files_arc, topic_tree(), examples, labels, tasks);
    if cfg.site_hubs || cfg.community || cfg.hidden {
        // The topical hubs, known as such (hubs.tsv).
        web.hubs = (pages[..n_normal].iter().enumerate())
            .filter(|(i, p)| p.topic.is_some() && i.is_multiple_of(10))
            .filter_map(|(_, p)| Some((TOPICS[p.topic?].0.to_owned(), p.url.clone())))
            .collect();
    }
    SynthWeb {
        web,
        files,
        off_taxonomy: off_tax,
    }
}

/// Sites (a main topic each, a few untopical ones) and their pages, which mix topics.
fn layout(cfg: &SynthConfig, rng: &mut ChaCha8Rng) -> (Vec<String>, Vec<PageSpec>) {
    let nt = TOPICS.len();
    let mut site_names = Vec::new();
    let mut site_topic = Vec::new();
    for s in 0..cfg.sites {
        let t = if s % 10 == 9 { None } else { Some(s % nt) };
        let stem = t.map_or("misc", |t| TOPICS[t].1);
        site_names.push(format!("{}-{}.test", stem.to_ascii_lowercase(), s));
        site_topic.push(t);
    }
    let mut pages: Vec<PageSpec> = Vec::new();
    for s in 0..cfg.sites {
        for p in 0..cfg.pages_per_site {
            let topic = match site_topic[s] {
                Some(t) if rng.random_bool(0.7) => Some(t),
                _ if rng.random_bool(0.5) => Some(rng.random_range(0..nt)),
                _ => None,
            };
            let dir = if p % 20 == 19 && s % 7 == 3 {
                "private/"
            } else {
                ""
            };
            pages.push(PageSpec {
                url: format!("http://{}/{dir}p{p}.html", site_names[s]),
                topic,
                site: s,
                region: None,
            });
        }
    }
    (site_names, pages)
}

/// The demo taxonomy's topic tree: the root, the top-level topics, the leaves.
fn topic_tree() -> Vec<(String, String)> {
    let mut topics = vec![("/".to_owned(), "Demo topics".to_owned())];
    for (p, title, _) in TOPICS {
        let top = p.rsplit_once('/').map_or("", |x| x.0);
        if !topics.iter().any(|(x, _)| x == top) {
            topics.push((top.to_owned(), top.trim_start_matches('/').to_owned()));
        }
        topics.push(((*p).to_owned(), (*title).to_owned()));
    }
    topics
}

/// What every page's HTML draws on.
struct Context<'a> {
    cfg: &'a SynthConfig,
    site_names: &'a [String],
    pages: &'a [PageSpec],
    /// Pages before the off-taxonomy regions'.
    n_normal: usize,
    vocab: Vec<Vec<&'static str>>,
    common: Vec<&'static str>,
    by_topic: Vec<Vec<usize>>,
    /// Popular irrelevant pages everything links to.
    popular: Vec<String>,
    region_vocab: Vec<Vec<&'static str>>,
    region_urls: Vec<Vec<&'a str>>,
    region_sizes: Vec<usize>,
    normal_urls: Vec<&'a str>,
    extras: &'a Extras,
}

impl<'a> Context<'a> {
    fn new(
        cfg: &'a SynthConfig,
        site_names: &'a [String],
        pages: &'a [PageSpec],
        n_normal: usize,
        regions: &[Vec<usize>],
        extras: &'a Extras,
    ) -> Self {
        let nt = TOPICS.len();
        Context {
            cfg,
            site_names,
            pages,
            n_normal,
            vocab: TOPICS.iter().map(|t| words(t.2)).collect(),
            common: words(super::COMMON),
            by_topic: (0..nt)
                .map(|t| {
                    (0..pages.len())
                        .filter(|&i| pages[i].topic == Some(t))
                        .collect()
                })
                .collect(),
            popular: (0..4).map(|i| format!("http://portal-{i}.test/")).collect(),
            region_vocab: (off_taxonomy::REGIONS.iter()).map(|r| words(r.1)).collect(),
            region_urls: (regions.iter())
                .map(|r| r.iter().map(|&i| pages[i].url.as_str()).collect())
                .collect(),
            region_sizes: regions.iter().map(Vec::len).collect(),
            normal_urls: pages[..n_normal].iter().map(|p| p.url.as_str()).collect(),
            extras,
        }
    }

    /// Page `i` of off-taxonomy region `r`.
    fn region_page(&self, i: usize, r: usize, orng: &mut ChaCha8Rng) -> String {
        let spec = off_taxonomy::RegionPage {
            site: &self.site_names[self.pages[i].site],
            portal: &self.popular[i % self.popular.len()],
            own: &self.region_vocab[r],
            vocab: &self.vocab,
            common: &self.common,
            region: &self.region_urls[r],
            elsewhere: &self.normal_urls,
            is_hub: i.is_multiple_of(5),
        };
        off_taxonomy::page_html(orng, &spec)
    }

    /// Page `i` of the topical web: a navigation template, paragraphs, and a list of links
    /// (a hub's long one), with the planted pattern when asked.
    fn topical_page(
        &self,
        i: usize,
        rng: &mut ChaCha8Rng,
        orng: &mut ChaCha8Rng,
        xrng: &mut ChaCha8Rng,
    ) -> String {
        let pg = &self.pages[i];
        let site = &self.site_names[pg.site];
        let topic_words = pg.topic.map(|t| self.vocab[t].as_slice());
        let title_word = pg.topic.map_or("notes", |t| zipf(rng, &self.vocab[t]));
        let mut html = String::new();
        let _ = write!(
            html,
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{title_word} - {site}</title></head><body>\
             <div class=\"nav\"><a href=\"/\">Home</a> | <a href=\"{}\">Portal</a> | <a href=\"/about.html\">About</a></div>\
             <h1>{title_word}</h1>",
            self.popular[i % self.popular.len()]
        );
        // Hub pages: every 10th topical page lists many pages of its topic on other sites.
        let is_hub = pg.topic.is_some() && i.is_multiple_of(10);
        for _ in 0..3 {
            let n = rng.random_range(25..60);
            let p = paragraph(rng, topic_words, &self.vocab, &self.common, n);
            let _ = write!(html, "<p>{p}</p>");
        }
        let mut links = self.links(i, is_hub, rng, xrng);
        if self.cfg.planted {
            html.push_str("<h2>Recommended reading</h2><ul>");
            for _ in 0..3 {
                let j = *self.by_topic[0].choose(rng).unwrap_or(&i);
                let a = zipf(rng, &self.common);
                let _ = write!(html, "<li><a href=\"{}\">{a}</a></li>", self.pages[j].url);
            }
            html.push_str("</ul><h2>Elsewhere</h2>");
        }
        links.extend(self.odd_links(i, site, rng, orng));
        links.extend(self.extras.links_of(pg.topic, xrng));
        html.push_str(if is_hub {
            "<h2>Resources</h2><ul>"
        } else {
            "<ul>"
        });
        for (u, a) in &links {
            let _ = write!(html, "<li><a href=\"{u}\">{a}</a></li>");
        }
        html.push_str("</ul><div class=\"footer\">Copyright site authors. <a href=\"/\">Home</a></div></body></html>");
        html
    }

    /// Page `i`'s links to other pages, with topical locality: most stay on topic.
    fn links(
        &self,
        i: usize,
        is_hub: bool,
        rng: &mut ChaCha8Rng,
        xrng: &mut ChaCha8Rng,
    ) -> Vec<(String, String)> {
        let mut links = Vec::new();
        let nlinks = if is_hub { 25 } else { 6 };
        for _ in 0..nlinks {
            let j = match self.pages[i].topic {
                Some(t)
                    if !self.cfg.planted && rng.random_bool(if is_hub { 0.95 } else { 0.6 }) =>
                {
                    *self.by_topic[t].choose(rng).unwrap_or(&i)
                }
                // The planted neighbour: the first topic's off-topic links go to its sibling.
                Some(0) if self.cfg.neighbour && rng.random_bool(0.8) => {
                    *self.by_topic[1].choose(rng).unwrap_or(&i)
                }
                _ => rng.random_range(0..self.n_normal),
            };
            let j = self.site_hub_target(i, is_hub, xrng).unwrap_or(j);
            if j == i {
                continue;
            }
            let anchor = match self.pages[j].topic {
                Some(t) if !self.cfg.planted => zipf(rng, &self.vocab[t]),
                _ => zipf(rng, &self.common),
            }
            .to_owned();
            links.push((self.pages[j].url.clone(), anchor));
        }
        links
    }

    /// With site hubs, a topical hub's link goes, [`link_evidence::SITE_HUB_SHARE`] of the
    /// time, to a page of its topic on its own site.
    fn site_hub_target(&self, i: usize, is_hub: bool, xrng: &mut ChaCha8Rng) -> Option<usize> {
        let t = self.pages[i].topic?;
        if !self.cfg.site_hubs || !is_hub || !xrng.random_bool(link_evidence::SITE_HUB_SHARE) {
            return None;
        }
        let site = self.pages[i].site;
        let own: Vec<usize> = (self.by_topic[t].iter().copied())
            .filter(|&k| self.pages[k].site == site && k != i)
            .collect();
        own.choose(xrng).copied()
    }

    /// The links a real web has besides: into an off-taxonomy region, to missing pages and
    /// dead hosts, and into the calendar spider trap.
    fn odd_links(
        &self,
        i: usize,
        site: &str,
        rng: &mut ChaCha8Rng,
        orng: &mut ChaCha8Rng,
    ) -> Vec<(String, String)> {
        let mut links = Vec::new();
        if let Some((r, k)) = off_taxonomy::inbound_link(orng, &self.region_sizes) {
            let anchor = zipf(orng, &self.region_vocab[r]);
            links.push((self.region_urls[r][k].to_owned(), anchor.to_owned()));
        }
        if rng.random_bool(0.15) {
            links.push((format!("http://{site}/missing-{i}.html"), "old page".into()));
        }
        if rng.random_bool(0.1) {
            links.push((format!("http://dead-host-{i}.test/"), "gone".into()));
        }
        if i % 50 == 7 {
            links.push((
                "http://events-calendar.test/calendar/2024/1".into(),
                "events".into(),
            ));
        }
        links
    }

    /// Each site's index, about page and robots.txt (which disallows `/private/`).
    fn site_files(&self, files: &mut BTreeMap<String, String>) {
        for (s, name) in self.site_names.iter().enumerate() {
            let mut idx = format!(
                "<!DOCTYPE html><html><head><title>{name}</title></head><body><h1>{name}</h1><ul>"
            );
            for pg in self.pages.iter().filter(|p| p.site == s) {
                let _ = write!(idx, "<li><a href=\"{}\">{}</a></li>", pg.url, pg.url);
            }
            idx.push_str("</ul></body></html>");
            files.insert(format!("http://{name}/"), idx);
            files.insert(
                format!("http://{name}/about.html"),
                format!("<html><head><title>About</title></head><body><p>About {name}: a site about many things.</p></body></html>"),
            );
            files.insert(
                format!("http://{name}/robots.txt"),
                "User-agent: *\nDisallow: /private/\n".into(),
            );
        }
    }

    /// The popular portals, linking to every seventh topical site.
    fn portals(&self, rng: &mut ChaCha8Rng, files: &mut BTreeMap<String, String>) {
        for (i, p) in self.popular.iter().enumerate() {
            let mut html = format!("<!DOCTYPE html><html><head><title>Portal {i}</title></head><body><h1>Welcome to the portal</h1><p>{}</p><ul>", paragraph(rng, None, &self.vocab, &self.common, 80));
            for name in self.site_names[..self.cfg.sites].iter().step_by(7) {
                let _ = write!(html, "<li><a href=\"http://{name}/\">{name}</a></li>");
            }
            html.push_str("</ul></body></html>");
            files.insert(p.clone(), html);
        }
    }

    /// Examples and tasks, from disjoint slices of each topic's public pages.
    fn examples_and_tasks(&self) -> (Vec<(String, String)>, Vec<Task>) {
        let pages = self.pages;
        let mut examples = Vec::new();
        let mut tasks = Vec::new();
        for (t, list) in self.by_topic.iter().enumerate() {
            let public: Vec<usize> = (list.iter().copied())
                .filter(|&i| !pages[i].url.contains("/private/"))
                .collect();
            let ex: Vec<usize> = (public.iter().step_by(3))
                .take(self.cfg.examples_per_topic)
                .copied()
                .collect();
            for &i in &ex {
                examples.push((TOPICS[t].0.to_owned(), pages[i].url.clone()));
            }
            let rest: Vec<usize> = public.iter().copied().filter(|i| !ex.contains(i)).collect();
            let seeds: Vec<String> = (rest.iter().take(self.cfg.seeds_per_task))
                .map(|&i| pages[i].url.clone())
                .collect();
            let targets = (rest.iter().skip(self.cfg.seeds_per_task).step_by(2))
                .map(|&i| pages[i].url.clone())
                .collect();
            tasks.push(Task {
                name: TOPICS[t].1.to_ascii_lowercase(),
                good: vec![TOPICS[t].0.to_owned()],
                seeds,
                targets,
            });
        }
        (examples, tasks)
    }
}
