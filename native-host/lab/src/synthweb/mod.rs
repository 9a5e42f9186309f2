//! A deterministic synthetic topical web: the embedded default of `forager demo` and the
//! project's own test webs (accelerated-focused-crawling-2002 §4 and crawling-the-web-2004 §4
//! describe the structure a realistic test web needs).
//!
//! It has a taxonomy with distinct real-English vocabularies, sites of mixed topics, topical
//! locality of links, navigation templates, popular irrelevant pages that everything links to,
//! hub pages, dead links, a robots.txt-disallowed area, and a calendar spider trap; on request,
//! off-taxonomy regions ([`off_taxonomy`]).

mod generate;
pub mod link_evidence;
pub mod off_taxonomy;
pub mod procedural;

use crate::miniweb::MiniWeb;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

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
    /// Plant a natural neighbour of the first topic: a page about it that links off its topic
    /// links, four times in five, to a page of its sibling (Astronomy's Biology), so a crawl
    /// of the first topic keeps meeting the second (where to widen the focus).
    pub neighbour: bool,
    /// Off-taxonomy regions (up to [`off_taxonomy::REGIONS`]), each of `sites / 10` sites
    /// about none of the topics; 0 leaves the web as it was, byte for byte.
    pub off_taxonomy: usize,
    /// A dominant, tightly-knit community of generic pages that captures plain HITS
    /// ([`link_evidence`]).
    pub community: bool,
    /// Topical hubs link mostly into their own site; hubs are listed in `hubs.tsv`.
    pub site_hubs: bool,
    /// Relevant regions reachable only through pages that look irrelevant.
    pub hidden: bool,
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
            neighbour: false,
            off_taxonomy: 0,
            community: false,
            site_hubs: false,
            hidden: false,
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
        generate::web(cfg)
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
        if !self.web.hubs.is_empty() {
            let rows = (self.web.hubs.iter()).map(|(t, u)| format!("{t}\t{u}"));
            std::fs::write(dir.join("hubs.tsv"), tsv(rows.collect()))?;
        }
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
