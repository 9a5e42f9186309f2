//! Reference crawls (crawling-the-web-2004 §4.1): crawls simulated on a mini-web's link graph
//! with its ground truth, the yardsticks a real crawl is measured against.
//!
//! `bfs` and `oracle` are the reference crawls the issues quote. The two soft-focus references
//! keep soft focus's rule (a URL inherits the best score of the pages linking to it) but
//! replace the classifier: `soft-perfect` by the true topic of the page (links in navigation
//! templates get a fraction of it, as in the crawler), `soft-clairvoyant` by the true share of
//! relevant pages among the page's unvisited content links, and among its template links —
//! the most a score of the page can tell about its links. Between them they show how far soft
//! focus can go on a web with a perfect classifier, and with a score no classifier of the
//! page's topic gives. The graph is explored under the crawler's rules (robots.txt, nofollow,
//! trap guards, caps), so the simulations fetch only what a real crawl may fetch.

use crate::miniweb::{MiniWeb, Task};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, VecDeque};

/// A simulated reference crawl.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference {
    /// Breadth-first from the seeds.
    Bfs,
    /// Best-first knowing every page's true topic: relevant URLs first, first found first.
    Oracle,
    /// Soft focus with a perfect classifier: R(page) is 1 when the page is relevant, else 0.
    SoftPerfect,
    /// Soft focus where a page passes its content links the true share of relevant pages among
    /// its unvisited content links, and its template links the same share among those.
    SoftClairvoyant,
}

impl Reference {
    /// Every reference, in report order.
    pub const ALL: [Reference; 4] = [
        Reference::Bfs,
        Reference::Oracle,
        Reference::SoftPerfect,
        Reference::SoftClairvoyant,
    ];

    /// Its name in bench reports (the `sim:` prefix keeps it apart from real crawls).
    pub fn name(self) -> &'static str {
        match self {
            Reference::Bfs => "sim:bfs",
            Reference::Oracle => "sim:oracle",
            Reference::SoftPerfect => "sim:soft-perfect",
            Reference::SoftClairvoyant => "sim:soft-clairvoyant",
        }
    }
}

/// The link graph of the part of a mini-web reachable from some seeds, as a crawler sees it.
#[derive(Debug, Default)]
pub struct LinkGraph {
    urls: Vec<String>,
    ids: HashMap<String, u32>,
    /// Per page the web serves: its followable out-links (target, in a navigation template),
    /// each target once; `None` for URLs the web does not serve.
    out: Vec<Option<Vec<(u32, bool)>>>,
}

impl LinkGraph {
    /// Reads and parses every page reachable from `seeds` with the crawler's own rules: robots.txt,
    /// nofollow, the trap guards and the per-host and per-page caps of a default crawl.
    pub fn explore(web: &MiniWeb, seeds: &[String]) -> Self {
        let limits = forager_core::crawl::CrawlConfig::default();
        let mut g = LinkGraph::default();
        let mut queue = VecDeque::new();
        let mut robots: HashMap<String, Option<texting_robots::Robot>> = HashMap::new();
        let mut per_host: HashMap<String, u64> = HashMap::new();
        let id_of = |g: &mut LinkGraph, url: String, queue: &mut VecDeque<u32>| -> u32 {
            if let Some(&id) = g.ids.get(&url) {
                return id;
            }
            let id = g.urls.len() as u32;
            g.ids.insert(url.clone(), id);
            g.urls.push(url);
            g.out.push(None);
            queue.push_back(id);
            id
        };
        for s in seeds {
            if let Ok(u) = forager_core::canon::parse(s) {
                id_of(&mut g, u.to_string(), &mut queue);
            }
        }
        while let Some(id) = queue.pop_front() {
            let Ok(base) = url::Url::parse(&g.urls[id as usize]) else {
                continue;
            };
            let origin = base.origin().ascii_serialization();
            let rules = robots.entry(origin.clone()).or_insert_with(|| {
                let txt = web.read_page(&format!("{origin}/robots.txt")).ok()?;
                texting_robots::Robot::new(forager_core::robots::AGENT, txt.as_bytes()).ok()
            });
            let crawled = per_host.entry(origin).or_default();
            if rules.as_ref().is_some_and(|r| !r.allowed(base.as_str()))
                || *crawled >= limits.max_pages_per_host
            {
                continue;
            }
            let Ok(html) = web.read_page(base.as_str()) else {
                continue;
            };
            *crawled += 1;
            let page = forager_core::parse::parse_page(&html, &base);
            let mut links: Vec<(u32, bool)> = Vec::new();
            if !page.meta_nofollow {
                let followed = (page.links.into_iter())
                    .take(limits.max_links_per_page)
                    .filter(|l| !l.nofollow)
                    .filter(|l| forager_core::canon::check_traps(&l.url, &limits.traps).is_ok());
                for l in followed {
                    let target = id_of(&mut g, l.url.to_string(), &mut queue);
                    if target != id && !links.iter().any(|&(t, _)| t == target) {
                        links.push((target, l.boilerplate));
                    }
                }
            }
            g.out[id as usize] = Some(links);
        }
        g
    }

    /// URLs reached (served or not).
    pub fn len(&self) -> usize {
        self.urls.len()
    }

    /// True when no URL was reached.
    pub fn is_empty(&self) -> bool {
        self.urls.is_empty()
    }

    /// The URL of node `id`.
    pub fn url(&self, id: u32) -> &str {
        &self.urls[id as usize]
    }

    /// The node of `url` (canonicalised first), if it was reached.
    pub fn id(&self, url: &str) -> Option<u32> {
        let u = forager_core::canon::parse(url).ok()?;
        self.ids.get(u.as_str()).copied()
    }
}

/// A frontier entry: higher score first, then first queued first.
#[derive(Debug, PartialEq)]
struct Entry {
    score: f64,
    seq: u64,
    node: u32,
}

impl Eq for Entry {}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.score.total_cmp(&other.score)).then_with(|| other.seq.cmp(&self.seq))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Simulates `policy` on `graph` from `seeds` for up to `pages` fetches of pages the web
/// serves; `relevant[id]` is node `id`'s ground truth. Returns the nodes fetched, in order.
pub fn simulate(
    graph: &LinkGraph,
    seeds: &[u32],
    relevant: &[bool],
    policy: Reference,
    pages: usize,
    template_weight: f64,
) -> Vec<u32> {
    let n = graph.len();
    let mut best = vec![f64::NEG_INFINITY; n];
    let mut fetched = vec![false; n];
    let mut heap = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |heap: &mut BinaryHeap<Entry>, best: &mut [f64], node: u32, score: f64| {
        if score > best[node as usize] {
            best[node as usize] = score;
            seq += 1;
            heap.push(Entry { score, seq, node });
        }
    };
    for &s in seeds {
        push(&mut heap, &mut best, s, 1.0);
    }
    let is_relevant = |id: u32| relevant.get(id as usize).copied().unwrap_or(false);
    let mut order = Vec::new();
    while order.len() < pages {
        let Some(e) = heap.pop() else { break };
        let u = e.node as usize;
        if fetched[u] || e.score < best[u] {
            continue;
        }
        fetched[u] = true;
        let Some(links) = &graph.out[u] else { continue };
        order.push(e.node);
        // The true share of relevant pages among the page's unvisited content links, and
        // among its unvisited template links.
        let share = |template: bool| {
            let (mut open, mut good) = (0usize, 0usize);
            for &(t, _) in links.iter().filter(|&&(_, tl)| tl == template) {
                if !fetched[t as usize] && graph.out[t as usize].is_some() {
                    open += 1;
                    good += usize::from(is_relevant(t));
                }
            }
            good as f64 / open.max(1) as f64
        };
        let (content_share, template_share) = match policy {
            Reference::SoftClairvoyant => (share(false), share(true)),
            _ => (0.0, 0.0),
        };
        let r = f64::from(u8::from(is_relevant(e.node)));
        for &(t, template) in links {
            if fetched[t as usize] {
                continue;
            }
            let score = match policy {
                Reference::Bfs => 0.0,
                Reference::Oracle => f64::from(u8::from(is_relevant(t))),
                Reference::SoftPerfect if template => r * template_weight,
                Reference::SoftPerfect => r,
                Reference::SoftClairvoyant if template => template_share,
                Reference::SoftClairvoyant => content_share,
            };
            push(&mut heap, &mut best, t, score);
        }
    }
    order
}

/// Every reference crawl of `task` for `pages` fetches: (reference, fetched URLs with their
/// ground truth as R, so harvest by "classifier" is the perfect classifier's).
pub fn crawls(
    web: &MiniWeb,
    task: &Task,
    pages: usize,
    template_weight: f64,
) -> Vec<(Reference, Vec<(String, f64)>)> {
    let graph = LinkGraph::explore(web, &task.seeds);
    crawls_on(&graph, web, task, pages, template_weight)
}

/// [`crawls`] on a graph already explored from (at least) the task's seeds.
pub fn crawls_on(
    graph: &LinkGraph,
    web: &MiniWeb,
    task: &Task,
    pages: usize,
    template_weight: f64,
) -> Vec<(Reference, Vec<(String, f64)>)> {
    let (seeds, relevant) = truth(graph, web, task);
    (Reference::ALL.iter())
        .map(|&policy| {
            let order = simulate(graph, &seeds, &relevant, policy, pages, template_weight);
            (policy, with_truth(graph, &relevant, order))
        })
        .collect()
}

/// One reference crawl of `task` on an explored graph: fetched URLs with their ground truth.
pub fn crawl_on(
    graph: &LinkGraph,
    web: &MiniWeb,
    task: &Task,
    policy: Reference,
    pages: usize,
    template_weight: f64,
) -> Vec<(String, f64)> {
    let (seeds, relevant) = truth(graph, web, task);
    let order = simulate(graph, &seeds, &relevant, policy, pages, template_weight);
    with_truth(graph, &relevant, order)
}

/// The task's seed nodes and every node's ground truth.
fn truth(graph: &LinkGraph, web: &MiniWeb, task: &Task) -> (Vec<u32>, Vec<bool>) {
    let seeds = task.seeds.iter().filter_map(|s| graph.id(s)).collect();
    let relevant = (0..graph.len() as u32)
        .map(|id| web.is_relevant(graph.url(id), &task.good))
        .collect();
    (seeds, relevant)
}

/// Fetched nodes as (URL, 1 when relevant else 0), the shape the bench's measures take.
fn with_truth(graph: &LinkGraph, relevant: &[bool], order: Vec<u32>) -> Vec<(String, f64)> {
    (order.into_iter())
        .map(|id| {
            let r = f64::from(u8::from(relevant[id as usize]));
            (graph.url(id).to_owned(), r)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    /// A page with content links and navigation-template links.
    fn page(content: &[&str], nav: &[&str]) -> String {
        let a = |hs: &[&str]| -> String {
            hs.iter()
                .map(|h| format!("<a href=\"{h}\">{h}</a> "))
                .collect()
        };
        format!(
            "<html><body><nav>{}</nav><main><p>Some words about the topic. {}</p></main></body></html>",
            a(nav),
            a(content)
        )
    }

    /// s → a, b; a → c, d and a missing page; b → d, e; s's template links to t; robots.txt
    /// disallows e. Relevant: s, b, c, d, t.
    fn web() -> (MiniWeb, Task) {
        let h = |p: &str| format!("http://w.test/{p}.html");
        let mut files = BTreeMap::new();
        files.insert(h("s"), page(&[&h("a"), &h("b")], &[&h("t")]));
        files.insert(h("a"), page(&[&h("c"), &h("missing"), &h("d")], &[]));
        files.insert(
            "http://w.test/robots.txt".into(),
            "User-agent: *\nDisallow: /e.html\n".into(),
        );
        files.insert(h("b"), page(&[&h("d"), &h("e")], &[]));
        for p in ["c", "d", "e", "t"] {
            files.insert(h(p), page(&[], &[]));
        }
        let labels = ["s", "b", "c", "d", "t"]
            .iter()
            .map(|p| (h(p), vec!["/Good".to_owned()]))
            .collect();
        let task = Task {
            name: "t".into(),
            good: vec!["/Good".into()],
            seeds: vec![h("s")],
            targets: vec![],
        };
        let web = MiniWeb::in_memory(Arc::new(files), vec![], vec![], labels, vec![task.clone()]);
        (web, task)
    }

    fn order(policy: Reference, template_weight: f64) -> Vec<String> {
        let (web, task) = web();
        let runs = crawls(&web, &task, 100, template_weight);
        let (_, fetched) = runs.into_iter().find(|(p, _)| *p == policy).unwrap();
        (fetched.into_iter())
            .map(|(u, _)| u.trim_start_matches("http://w.test/").replace(".html", ""))
            .collect()
    }

    #[test]
    fn each_reference_follows_its_own_rule() {
        use Reference::*;
        let cases = [
            // First found, first fetched; neither the missing page nor the disallowed e is a
            // fetch.
            (Bfs, 0.1, "s t a b c d"),
            // Relevant URLs first, however they were found.
            (Oracle, 0.1, "s t b d a c"),
            // The links of relevant pages first; the template link gets a tenth; d, queued at
            // a's 0, rises to b's 1 and is fetched once.
            (SoftPerfect, 0.1, "s a b d t c"),
            // With template links weighted like the rest, t ranks with a and b.
            (SoftPerfect, 1.0, "s t a b d c"),
            // Shares: s's template link 1, its content links 1/2; a's served links 1 (c, d).
            (SoftClairvoyant, 0.1, "s t a c d b"),
        ];
        for (policy, template_weight, expected) in cases {
            let got = order(policy, template_weight).join(" ");
            assert_eq!(
                got, expected,
                "{policy:?} with template weight {template_weight}"
            );
        }
    }

    #[test]
    fn every_reference_keeps_the_budget_and_fetches_once() {
        let (web, task) = web();
        for (policy, fetched) in crawls(&web, &task, 100, 0.1) {
            let urls: std::collections::HashSet<_> = fetched.iter().map(|(u, _)| u).collect();
            assert_eq!(urls.len(), fetched.len(), "{policy:?} fetched a URL twice");
            assert_eq!(fetched.len(), 6, "{policy:?}: six pages may be fetched");
        }
        for (policy, fetched) in crawls(&web, &task, 3, 0.1) {
            assert_eq!(fetched.len(), 3, "{policy:?}");
        }
    }
}
