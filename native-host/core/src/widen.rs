//! Where to widen the focus (focused-crawling-1999 §2.1: the user marks topics good, and the
//! crawl's census shows when the good pages keep leading into a topic next to them). Pure: the
//! census in, suggestions out, tested without a database.
//!
//! The census is of the pages the crawl fetched through links from relevant pages (R >= 0.5),
//! by best leaf. Of those that leave the good topics, a sibling of a good topic is suggested when
//! at least [`MIN_SHARE`] (and [`MIN_PAGES`]) are classified under it — a share of where the good
//! pages lead *outside* the good topics, so a crawl that holds its focus well still shows its
//! neighbour; the parent of a good topic when
//! no single sibling is, but the parent's other subtrees together are.

use forager_classifier::{Taxonomy, TopicId, ROOT};
use serde::Serialize;

/// The relevance from which a page counts as relevant, whose links the census follows: the
/// crawl's own threshold of a "high" page ([`crate::crawl::policy::HIGH_RELEVANCE`]). At 0.5 the census
/// of a whole FOLDOC crawl (12,642 pages, networking good) followed the links of 295 pages
/// only (769 at 0.1), too few for a crawl of a few hundred pages to reach [`MIN_PAGES`].
pub const RELEVANT: f64 = crate::crawl::policy::HIGH_RELEVANCE;
/// The least share of the pages linked from relevant pages outside the good topics that a topic
/// must hold to be suggested: a third.
pub const MIN_SHARE: f64 = 1.0 / 3.0;
/// The least number of such pages, so that a handful of pages suggests nothing.
pub const MIN_PAGES: u64 = 10;

/// How a suggested topic stands to a good one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    /// A sibling of a good topic.
    Sibling,
    /// The parent of a good topic.
    Parent,
}

/// A topic the user might mark good, with the census's evidence.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Suggestion {
    /// The topic.
    pub topic: TopicId,
    /// Its path.
    pub path: String,
    /// The good topic it stands next to.
    pub next_to: String,
    /// How it stands to it.
    pub relation: Relation,
    /// Pages linked from relevant pages classified under it (not under a good topic).
    pub pages: u64,
    /// Pages linked from relevant pages outside the good topics.
    pub of: u64,
    /// `pages / of`.
    pub share: f64,
}

/// What the census saw when it suggests nothing: the pages the good pages lead to outside the
/// good topics, and the largest neighbour among them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Looked {
    /// Pages linked from relevant pages outside the good topics.
    pub of: u64,
    /// The sibling (or parent) of a good topic holding most of them, with its pages and share.
    pub best: Option<(String, u64, f64)>,
}

/// The census in short: how many pages it looked at, and the largest neighbour's share.
pub fn looked(tax: &Taxonomy, linked: &[(TopicId, u64)]) -> Looked {
    let of: u64 = (linked.iter())
        .filter(|(c, _)| !tax.is_effectively_good(*c))
        .map(|(_, n)| n)
        .sum();
    let mut best: Option<(String, u64, f64)> = None;
    for good in tax.maximal_good() {
        let Ok(g) = tax.get(good) else { continue };
        for s in tax.children(g.parent) {
            if s == good || tax.is_effectively_good(s) {
                continue;
            }
            let n = under(tax, linked, s);
            if best.as_ref().is_none_or(|b| n > b.1) && n > 0 {
                let share = n as f64 / of.max(1) as f64;
                best = Some((tax.path(s).unwrap_or_default(), n, share));
            }
        }
    }
    Looked { of, best }
}

/// Pages of `linked` (best leaf, pages) classified under `topic` and not under a good topic.
fn under(tax: &Taxonomy, linked: &[(TopicId, u64)], topic: TopicId) -> u64 {
    (linked.iter())
        .filter(|(c, _)| tax.is_ancestor_or_self(topic, *c) && !tax.is_effectively_good(*c))
        .map(|(_, n)| n)
        .sum()
}

/// The suggestions for a taxonomy with good topics, given the census `linked` of the pages
/// linked from relevant pages (best leaf id, pages); most pages first.
pub fn suggest(tax: &Taxonomy, linked: &[(TopicId, u64)]) -> Vec<Suggestion> {
    let of: u64 = (linked.iter())
        .filter(|(c, _)| !tax.is_effectively_good(*c))
        .map(|(_, n)| n)
        .sum();
    let qualifies = |pages: u64| pages >= MIN_PAGES && pages as f64 >= MIN_SHARE * of as f64;
    let mut out: Vec<Suggestion> = Vec::new();
    for good in tax.maximal_good() {
        let Ok(g) = tax.get(good) else { continue };
        let parent = g.parent;
        let suggestion = |topic: TopicId, relation, pages| Suggestion {
            topic,
            path: tax.path(topic).unwrap_or_default(),
            next_to: tax.path(good).unwrap_or_default(),
            relation,
            pages,
            of,
            share: pages as f64 / of.max(1) as f64,
        };
        let counts: Vec<(TopicId, u64)> = (tax.children(parent).into_iter())
            .filter(|&s| s != good && !tax.is_effectively_good(s))
            .map(|s| (s, under(tax, linked, s)))
            .collect();
        let siblings: Vec<Suggestion> = (counts.iter())
            .filter(|(_, n)| qualifies(*n))
            .map(|&(s, n)| suggestion(s, Relation::Sibling, n))
            .collect();
        let substantial = (counts.iter())
            .filter(|(_, n)| *n >= MIN_PAGES && *n as f64 >= MIN_SHARE / 2.0 * of as f64)
            .count();
        if !siblings.is_empty() {
            out.extend(siblings);
        } else if parent != ROOT && !tax.is_effectively_good(parent) && substantial >= 2 {
            let pages = under(tax, linked, parent);
            if qualifies(pages) {
                out.push(suggestion(parent, Relation::Parent, pages));
            }
        }
    }
    out.sort_by(|a, b| b.pages.cmp(&a.pages).then(a.path.cmp(&b.path)));
    out.dedup_by_key(|s| s.topic);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// /Sci/{Astro, Bio, Chem}, /Leisure/Cooking; Astro good.
    fn taxonomy() -> (Taxonomy, [TopicId; 5]) {
        let mut t = Taxonomy::new("all");
        let sci = t.add(ROOT, "Sci", "").unwrap();
        let astro = t.add(sci, "Astro", "").unwrap();
        let bio = t.add(sci, "Bio", "").unwrap();
        let chem = t.add(sci, "Chem", "").unwrap();
        let leisure = t.add(ROOT, "Leisure", "").unwrap();
        let cooking = t.add(leisure, "Cooking", "").unwrap();
        t.set_good(astro, true).unwrap();
        (t, [astro, bio, chem, cooking, sci])
    }

    #[test]
    fn a_sibling_that_the_good_pages_lead_to_is_suggested() {
        let (t, [astro, bio, chem, cooking, _]) = taxonomy();
        let s = suggest(&t, &[(astro, 60), (bio, 30), (chem, 4), (cooking, 6)]);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(
            (s[0].topic, s[0].relation, s[0].pages, s[0].of),
            (bio, Relation::Sibling, 30, 40)
        );
        assert_eq!(s[0].path, "/Sci/Bio");
        assert_eq!(s[0].next_to, "/Sci/Astro");
        // A topic outside the good topic's family is never suggested, however large.
        assert!(suggest(&t, &[(astro, 10), (cooking, 90)]).is_empty());
        // Too few pages suggest nothing.
        assert!(suggest(&t, &[(astro, 2), (bio, 5)]).is_empty());
    }

    #[test]
    fn the_parent_when_the_siblings_together_are_the_neighbourhood() {
        let (t, [astro, bio, chem, cooking, sci]) = taxonomy();
        let s = suggest(
            &t,
            &[(astro, 60), (bio, 15), (chem, 15), (sci, 0), (cooking, 40)],
        );
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(
            (s[0].topic, s[0].relation, s[0].pages),
            (sci, Relation::Parent, 30)
        );
    }

    #[test]
    fn nothing_without_good_topics() {
        let (mut t, [astro, bio, ..]) = taxonomy();
        t.set_good(astro, false).unwrap();
        assert!(suggest(&t, &[(astro, 50), (bio, 50)]).is_empty());
    }
}
