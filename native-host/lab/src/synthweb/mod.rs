//! A deterministic synthetic topical web: the embedded default of `forager demo` and the
//! project's own test webs (accelerated-focused-crawling-2002 §4 and crawling-the-web-2004 §4
//! describe the structure a realistic test web needs).
//!
//! It has a taxonomy with distinct real-English vocabularies, sites of mixed topics, topical
//! locality of links, navigation templates, popular irrelevant pages that everything links to,
//! hub pages, dead links, a robots.txt-disallowed area, and a calendar spider trap; on request,
//! off-taxonomy regions ([`off_taxonomy`]).

pub mod off_taxonomy;

use crate::miniweb::{MiniWeb, Task};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;
use std::sync::Arc;

/// The demo taxonomy: (path, title, vocabulary). Also the extension's starter taxonomy.
pub const TOPICS: &[(&str, &str, &str)] = &[
    (
        "/Science/Astronomy",
        "Astronomy",
        "telescope orbit planet star galaxy nebula comet asteroid eclipse observatory astronomer \
      lunar solar jupiter saturn mars venus mercury constellation cosmos supernova meteor \
      spectrum redshift parallax aperture eyepiece refractor reflector magnitude celestial \
      equinox zenith horizon crater moon sky universe cosmic dwarf binary cluster quasar pulsar",
    ),
    (
        "/Science/Biology",
        "Biology",
        "cell gene protein organism species evolution enzyme membrane chromosome dna rna mutation \
      bacteria virus tissue organ photosynthesis ecology habitat predator mitochondria nucleus \
      genome molecule embryo fossil taxonomy mammal reptile insect plant fungus microbe \
      metabolism hormone neuron immune antibody biodiversity population inherit trait",
    ),
    (
        "/Computing/Networking",
        "Networking",
        "router packet protocol ethernet tcp ip address subnet bandwidth latency switch firewall \
      gateway dns server client socket wireless lan wan topology routing congestion frame \
      header port http modem fiber link layer broadcast multicast ping traceroute vpn proxy \
      throughput handshake datagram checksum",
    ),
    (
        "/Computing/Programming",
        "Programming",
        "compiler function variable loop recursion syntax debugger library algorithm array \
      pointer class object method inheritance interface module type closure iterator string \
      integer boolean exception thread stack heap parser interpreter lambda refactor \
      repository commit test bug source code runtime generic template",
    ),
    (
        "/Leisure/Cooking",
        "Cooking",
        "recipe oven flour butter sugar salt pepper garlic onion sauce bake roast boil simmer \
      knife pan skillet dough bread cake soup stew spice herb olive vinegar chicken beef \
      vegetable tomato potato cheese cream egg dessert kitchen chef taste dinner breakfast",
    ),
    (
        "/Leisure/Gardening",
        "Gardening",
        "garden soil seed compost mulch prune shrub flower rose tulip bulb perennial annual \
      lawn hedge weed fertilizer watering greenhouse seedling harvest orchard vegetable \
      trowel spade hoe rake blossom bloom pest aphid hose border bed trellis vine potting",
    ),
    (
        "/Leisure/Sports",
        "Sports",
        "football soccer tennis basketball baseball goal match team player coach league season \
      tournament championship score referee stadium racket ball court pitch sprint marathon \
      athlete medal olympic training fitness defender striker goalkeeper inning serve dribble",
    ),
    (
        "/Business/Finance",
        "Finance",
        "stock bond market investor dividend interest loan bank credit debt equity portfolio \
      inflation currency exchange asset liability revenue profit loss budget tax audit \
      accounting capital fund trading broker share valuation mortgage insurance pension",
    ),
];

/// Words every page uses regardless of topic.
const COMMON: &str = "page site information new first people time year way day good \
    great little small large long high old different important public able early young \
    world life hand part place case week company system program question work government \
    number night point home water room area money story fact month lot right study book \
    eye job word business issue side kind head house service friend father power hour game \
    line end member law car city community name president team minute idea kid body \
    back parent face others level office door health person art war history party result \
    change morning reason research girl guy moment air teacher force education";

/// Knobs of the generator.
#[derive(Clone, Debug)]
pub struct SynthConfig {
    /// Random seed; the same seed gives the same web, byte for byte.
    pub seed: u64,
    /// Number of sites.
    pub sites: usize,
    /// Pages per site.
    pub pages_per_site: usize,
    /// Training examples per leaf topic.
    pub examples_per_topic: usize,
    /// Seeds per task.
    pub seeds_per_task: usize,
    /// Plant the apprentice's test pattern: every page has a "Recommended reading" list whose
    /// links lead to pages of the first topic, and its other links go anywhere; all anchors
    /// are neutral words, so only the heading tells the two lists apart.
    pub planted: bool,
    /// Off-taxonomy regions (up to [`off_taxonomy::REGIONS`]), each of `sites / 10` sites
    /// about none of the topics; 0 leaves the web as it was, byte for byte.
    pub off_taxonomy: usize,
}

impl Default for SynthConfig {
    fn default() -> Self {
        SynthConfig {
            seed: 42,
            sites: 100,
            pages_per_site: 40,
            examples_per_topic: 12,
            seeds_per_task: 5,
            planted: false,
            off_taxonomy: 0,
        }
    }
}

/// A generated web held in memory.
#[derive(Clone, Debug)]
pub struct SynthWeb {
    /// URL → file body (pages, index pages, robots.txt).
    pub files: BTreeMap<String, String>,
    /// The web's topics, examples, labels and tasks, as a mini-web.
    pub web: MiniWeb,
    /// URL → region of every page in an off-taxonomy region (these pages have no label).
    pub off_taxonomy: BTreeMap<String, String>,
}

struct PageSpec {
    url: String,
    topic: Option<usize>,
    site: usize,
    region: Option<usize>,
}

fn words(list: &str) -> Vec<&str> {
    list.split_whitespace().collect()
}

/// Zipf-like pick: low indices much more often than high ones.
fn zipf<'a, R: Rng>(rng: &mut R, v: &[&'a str]) -> &'a str {
    let u: f64 = rng.random();
    let i = ((v.len() as f64).powf(u) - 1.0) as usize;
    v[i.min(v.len() - 1)]
}

/// A paragraph: a quarter of the words from the page's topic, some from another topic (pages
/// are rarely pure), the rest common words.
fn paragraph<R: Rng>(
    rng: &mut R,
    topic: Option<&[&str]>,
    vocab: &[Vec<&str>],
    common: &[&str],
    n: usize,
) -> String {
    let mut s = String::new();
    for i in 0..n {
        let u: f64 = rng.random();
        let w = match topic {
            Some(t) if u < 0.25 => zipf(rng, t),
            _ if u < 0.33 => {
                let other = rng.random_range(0..vocab.len());
                zipf(rng, &vocab[other])
            }
            _ => zipf(rng, common),
        };
        if i > 0 {
            s.push(' ');
        }
        s.push_str(w);
    }
    s
}

/// Appends the off-taxonomy regions' sites and pages; returns each region's page indices,
/// shuffled so that its popular head spreads over its sites.
fn add_regions(
    cfg: &SynthConfig,
    rng: &mut ChaCha8Rng,
    site_names: &mut Vec<String>,
    pages: &mut Vec<PageSpec>,
) -> Vec<Vec<usize>> {
    use rand::seq::SliceRandom;
    let n = cfg.off_taxonomy.min(off_taxonomy::REGIONS.len());
    let mut regions = vec![Vec::new(); n];
    for (r, list) in regions.iter_mut().enumerate() {
        for k in 0..(cfg.sites / 10).max(1) {
            let s = site_names.len();
            site_names.push(format!("{}-{k}.test", off_taxonomy::REGIONS[r].0));
            for p in 0..cfg.pages_per_site {
                list.push(pages.len());
                pages.push(PageSpec {
                    url: format!("http://{}/p{p}.html", site_names[s]),
                    topic: None,
                    site: s,
                    region: Some(r),
                });
            }
        }
        list.shuffle(rng);
    }
    regions
}

impl SynthWeb {
    /// Generates the web for `cfg`.
    pub fn generate(cfg: &SynthConfig) -> SynthWeb {
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        let vocab: Vec<Vec<&str>> = TOPICS.iter().map(|t| words(t.2)).collect();
        let common = words(COMMON);
        let nt = TOPICS.len();
        // Sites: a main topic each, a few untopical ones; their pages mix topics.
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
        let n_normal = pages.len();
        // Regions draw from their own generator, so that without them the web is unchanged.
        let mut orng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x0ff7_a8e0);
        let regions = add_regions(cfg, &mut orng, &mut site_names, &mut pages);
        let region_vocab: Vec<Vec<&str>> =
            (off_taxonomy::REGIONS.iter()).map(|r| words(r.1)).collect();
        let region_urls: Vec<Vec<&str>> = (regions.iter())
            .map(|r| r.iter().map(|&i| pages[i].url.as_str()).collect())
            .collect();
        let region_sizes: Vec<usize> = regions.iter().map(Vec::len).collect();
        let normal_urls: Vec<&str> = pages[..n_normal].iter().map(|p| p.url.as_str()).collect();
        let mut off_tax = BTreeMap::new();
        let by_topic: Vec<Vec<usize>> = (0..nt)
            .map(|t| {
                (0..pages.len())
                    .filter(|&i| pages[i].topic == Some(t))
                    .collect()
            })
            .collect();
        let popular: Vec<String> = (0..4).map(|i| format!("http://portal-{i}.test/")).collect();
        let mut files = BTreeMap::new();
        let mut labels = HashMap::new();
        for (i, pg) in pages.iter().enumerate() {
            let site = &site_names[pg.site];
            if let Some(r) = pg.region {
                let spec = off_taxonomy::RegionPage {
                    site,
                    portal: &popular[i % popular.len()],
                    own: &region_vocab[r],
                    vocab: &vocab,
                    common: &common,
                    region: &region_urls[r],
                    elsewhere: &normal_urls,
                    is_hub: i % 5 == 0,
                };
                files.insert(pg.url.clone(), off_taxonomy::page_html(&mut orng, &spec));
                off_tax.insert(pg.url.clone(), off_taxonomy::REGIONS[r].0.to_owned());
                continue;
            }
            let topic_words = pg.topic.map(|t| vocab[t].as_slice());
            let title_word = pg.topic.map_or("notes", |t| zipf(&mut rng, &vocab[t]));
            let mut html = String::new();
            let _ = write!(
                html,
                "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{title_word} - {site}</title></head><body>\
                 <div class=\"nav\"><a href=\"/\">Home</a> | <a href=\"{}\">Portal</a> | <a href=\"/about.html\">About</a></div>\
                 <h1>{title_word}</h1>",
                popular[i % popular.len()]
            );
            // Hub pages: every 10th topical page lists many pages of its topic on other sites.
            let is_hub = pg.topic.is_some() && i % 10 == 0;
            for _ in 0..3 {
                let n = rng.random_range(25..60);
                let _ = write!(
                    html,
                    "<p>{}</p>",
                    paragraph(&mut rng, topic_words, &vocab, &common, n)
                );
            }
            let mut links: Vec<(String, String)> = Vec::new();
            let nlinks = if is_hub { 25 } else { 6 };
            for _ in 0..nlinks {
                let j = match pg.topic {
                    // Topical locality: most links stay on topic.
                    Some(t) if !cfg.planted && rng.random_bool(if is_hub { 0.95 } else { 0.6 }) => {
                        *by_topic[t].choose(&mut rng).unwrap_or(&i)
                    }
                    _ => rng.random_range(0..n_normal),
                };
                if j == i {
                    continue;
                }
                let anchor = match pages[j].topic {
                    Some(t) if !cfg.planted => zipf(&mut rng, &vocab[t]),
                    _ => zipf(&mut rng, &common),
                }
                .to_owned();
                links.push((pages[j].url.clone(), anchor));
            }
            if cfg.planted {
                html.push_str("<h2>Recommended reading</h2><ul>");
                for _ in 0..3 {
                    let j = *by_topic[0].choose(&mut rng).unwrap_or(&i);
                    let a = zipf(&mut rng, &common);
                    let _ = write!(html, "<li><a href=\"{}\">{a}</a></li>", pages[j].url);
                }
                html.push_str("</ul><h2>Elsewhere</h2>");
            }
            if let Some((r, k)) = off_taxonomy::inbound_link(&mut orng, &region_sizes) {
                let anchor = zipf(&mut orng, &region_vocab[r]);
                links.push((region_urls[r][k].to_owned(), anchor.to_owned()));
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
            html.push_str(if is_hub {
                "<h2>Resources</h2><ul>"
            } else {
                "<ul>"
            });
            for (u, a) in &links {
                let _ = write!(html, "<li><a href=\"{u}\">{a}</a></li>");
            }
            html.push_str("</ul><div class=\"footer\">Copyright site authors. <a href=\"/\">Home</a></div></body></html>");
            files.insert(pg.url.clone(), html);
            if let Some(t) = pg.topic {
                labels.insert(pg.url.clone(), vec![TOPICS[t].0.to_owned()]);
            }
        }
        for (s, name) in site_names.iter().enumerate() {
            let mut idx = format!(
                "<!DOCTYPE html><html><head><title>{name}</title></head><body><h1>{name}</h1><ul>"
            );
            for pg in pages.iter().filter(|p| p.site == s) {
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
        for (i, p) in popular.iter().enumerate() {
            let mut html = format!("<!DOCTYPE html><html><head><title>Portal {i}</title></head><body><h1>Welcome to the portal</h1><p>{}</p><ul>", paragraph(&mut rng, None, &vocab, &common, 80));
            for name in site_names[..cfg.sites].iter().step_by(7) {
                let _ = write!(html, "<li><a href=\"http://{name}/\">{name}</a></li>");
            }
            html.push_str("</ul></body></html>");
            files.insert(p.clone(), html);
        }
        // Examples and tasks come from disjoint slices of each topic's pages.
        let mut examples = Vec::new();
        let mut tasks = Vec::new();
        for (t, list) in by_topic.iter().enumerate() {
            let public: Vec<usize> = list
                .iter()
                .copied()
                .filter(|&i| !pages[i].url.contains("/private/"))
                .collect();
            let ex: Vec<usize> = public
                .iter()
                .step_by(3)
                .take(cfg.examples_per_topic)
                .copied()
                .collect();
            for &i in &ex {
                examples.push((TOPICS[t].0.to_owned(), pages[i].url.clone()));
            }
            let rest: Vec<usize> = public.iter().copied().filter(|i| !ex.contains(i)).collect();
            let seeds: Vec<String> = rest
                .iter()
                .take(cfg.seeds_per_task)
                .map(|&i| pages[i].url.clone())
                .collect();
            let targets = rest
                .iter()
                .skip(cfg.seeds_per_task)
                .step_by(2)
                .map(|&i| pages[i].url.clone())
                .collect();
            tasks.push(Task {
                name: TOPICS[t].1.to_ascii_lowercase(),
                good: vec![TOPICS[t].0.to_owned()],
                seeds,
                targets,
            });
        }
        let mut topics = vec![("/".to_owned(), "Demo topics".to_owned())];
        for (p, title, _) in TOPICS {
            let top = p.rsplit_once('/').map_or("", |x| x.0);
            if !topics.iter().any(|(x, _)| x == top) {
                topics.push((top.to_owned(), top.trim_start_matches('/').to_owned()));
            }
            topics.push(((*p).to_owned(), (*title).to_owned()));
        }
        let files_arc = Arc::new(files.clone());
        SynthWeb {
            web: MiniWeb::in_memory(files_arc, topics, examples, labels, tasks),
            files,
            off_taxonomy: off_tax,
        }
    }

    /// Writes the web to `dir` in the mini-web format (shared/miniweb/FORMAT.md).
    pub fn write_to(&self, dir: &std::path::Path) -> std::io::Result<()> {
        let sites = dir.join("sites");
        for (url, body) in &self.files {
            if let Some(path) = crate::miniweb::file_for(&sites, url) {
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(path, body)?;
            }
        }
        let tsv = |rows: Vec<String>| rows.join("\n") + "\n";
        std::fs::write(
            dir.join("topics.tsv"),
            tsv(self
                .web
                .topics
                .iter()
                .map(|(a, b)| format!("{a}\t{b}"))
                .collect()),
        )?;
        std::fs::write(
            dir.join("examples.tsv"),
            tsv(self
                .web
                .examples
                .iter()
                .map(|(a, b)| format!("{a}\t{b}"))
                .collect()),
        )?;
        let mut labels: Vec<String> = self
            .web
            .labels
            .iter()
            .map(|(u, l)| format!("{u}\t{}", l.join("|")))
            .collect();
        labels.sort();
        std::fs::write(dir.join("labels.tsv"), tsv(labels))?;
        if !self.off_taxonomy.is_empty() {
            // Not part of the mini-web format: which unlabelled pages are in a region, and which.
            let rows = (self.off_taxonomy.iter()).map(|(u, r)| format!("{u}\t{r}"));
            std::fs::write(dir.join("off_taxonomy.tsv"), tsv(rows.collect()))?;
        }
        let tasks: Vec<serde_json::Value> = self
            .web
            .tasks
            .iter()
            .map(|t| serde_json::json!({"name": t.name, "good": t.good, "seeds": t.seeds, "targets": t.targets}))
            .collect();
        std::fs::write(
            dir.join("tasks.json"),
            serde_json::to_string_pretty(&tasks).unwrap_or_default(),
        )?;
        Ok(())
    }
}
