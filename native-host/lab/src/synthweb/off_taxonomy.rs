//! Off-taxonomy regions of the generated web: clusters of sites about none of the taxonomy's
//! topics, as most of the real web is for a personal taxonomy.
//!
//! Each region has its own vocabulary, a third of which it shares with one real topic (a
//! horoscope talks of planets and stars, a package index of libraries and HTTP clients), so a
//! closed-world classifier is drawn to that topic. Its pages link mostly to each other, every
//! fifth one is a dense list of the region's pages, and pages all over the web link to its
//! most popular pages: a cluster that a crawl can drift into and that plain HITS ranks high.
//! Its pages carry no label, so they count as off-taxonomy in every measure.

use rand::Rng;

/// The regions: (site stem, vocabulary). Words shared with a real topic are interleaved with
/// the region's own, so that the shared ones are as frequent as the rest.
pub const REGIONS: &[(&str, &str)] = &[
    (
        "packages",
        "package library install function release http version client dependency module \
         changelog server php class vendor method download interface license api composer \
         array namespace string autoload socket semver curl tarball extension mirror \
         maintainer upgrade deprecated patch stable build",
    ),
    (
        "horoscope",
        "horoscope star zodiac planet sign moon aries venus taurus mars gemini jupiter cancer \
         saturn leo sun virgo mercury libra cosmic scorpio sky sagittarius capricorn aquarius \
         pisces fortune destiny psychic tarot compatibility love retrograde birth chart reading \
         energy",
    ),
    (
        "realty",
        "property mortgage house loan apartment rent interest tenant bank landlord listing \
         insurance bedroom tax realtor market neighborhood lease condo investor renovation \
         garage yard buyer seller closing agent credit appraisal deposit broker inspection \
         furnished utilities",
    ),
    (
        "petcare",
        "dog species cat breed puppy mammal kitten vet leash collar grooming immune treat litter \
         kennel adopt shelter toy fur paw bark chew obedience walk vaccine parasite flea tick \
         nutrition insect habitat reptile virus cage aquarium hamster parrot",
    ),
];

/// Pages of a region that the rest of the web links to (its popular head).
pub const POPULAR_HEAD: usize = 30;

/// Chance that a page outside the regions links to a popular region page.
pub const INBOUND: f64 = 0.35;

/// Where one link of a region page goes: an index into the region's page list, or `None` for
/// anywhere on the web. Hubs (every fifth page) list the region nearly exclusively.
pub fn region_link<R: Rng>(rng: &mut R, region_pages: usize, is_hub: bool) -> Option<usize> {
    let stay = if is_hub { 0.95 } else { 0.85 };
    if region_pages == 0 || !rng.random_bool(stay) {
        return None;
    }
    // Half the links go to the popular head: a dense core that HITS rewards.
    let head = POPULAR_HEAD.min(region_pages);
    Some(if rng.random_bool(0.5) {
        rng.random_range(0..head)
    } else {
        rng.random_range(0..region_pages)
    })
}

/// The popular region page a page outside the regions links to, if any: (region, index).
pub fn inbound_link<R: Rng>(rng: &mut R, sizes: &[usize]) -> Option<(usize, usize)> {
    if sizes.is_empty() || !rng.random_bool(INBOUND) {
        return None;
    }
    let r = rng.random_range(0..sizes.len());
    let head = POPULAR_HEAD.min(sizes[r]);
    (head > 0).then(|| (r, rng.random_range(0..head)))
}

/// What a region page is made of.
pub(super) struct RegionPage<'a> {
    /// Host of the page's site.
    pub site: &'a str,
    /// The popular portal its navigation links to.
    pub portal: &'a str,
    /// The region's vocabulary.
    pub own: &'a [&'a str],
    /// The real topics' vocabularies (pages are rarely pure).
    pub vocab: &'a [Vec<&'a str>],
    /// Words every page uses.
    pub common: &'a [&'a str],
    /// URLs of the region's pages, popular head first.
    pub region: &'a [&'a str],
    /// URLs of the pages outside the regions.
    pub elsewhere: &'a [&'a str],
    /// A dense list of the region's pages.
    pub is_hub: bool,
}

/// The HTML of one region page, built like the topical pages so that only words and links
/// tell it apart.
pub(super) fn page_html<R: Rng>(rng: &mut R, p: &RegionPage<'_>) -> String {
    let title = super::zipf(rng, p.own);
    let mut html = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{title} - {}</title></head><body>\
         <div class=\"nav\"><a href=\"/\">Home</a> | <a href=\"{}\">Portal</a> | <a href=\"/about.html\">About</a></div>\
         <h1>{title}</h1>",
        p.site, p.portal
    );
    for _ in 0..3 {
        let n = rng.random_range(25..60);
        let text = super::paragraph(rng, Some(p.own), p.vocab, p.common, n);
        html.push_str(&format!("<p>{text}</p>"));
    }
    html.push_str(if p.is_hub {
        "<h2>Resources</h2><ul>"
    } else {
        "<ul>"
    });
    for _ in 0..if p.is_hub { 25 } else { 6 } {
        let (url, anchor) = match region_link(rng, p.region.len(), p.is_hub) {
            Some(j) => (p.region[j], super::zipf(rng, p.own)),
            None if !p.elsewhere.is_empty() => (
                p.elsewhere[rng.random_range(0..p.elsewhere.len())],
                super::zipf(rng, p.common),
            ),
            None => continue,
        };
        html.push_str(&format!("<li><a href=\"{url}\">{anchor}</a></li>"));
    }
    html.push_str("</ul><div class=\"footer\">Copyright site authors. <a href=\"/\">Home</a></div></body></html>");
    html
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthweb::TOPICS;
    use std::collections::HashSet;

    #[test]
    fn each_region_shares_a_part_of_its_words_with_one_topic_and_is_mostly_its_own() {
        for (name, words) in REGIONS {
            let own: HashSet<&str> = words.split_whitespace().collect();
            let best = TOPICS
                .iter()
                .map(|t| t.2.split_whitespace().filter(|w| own.contains(w)).count())
                .max()
                .unwrap_or(0);
            let share = best as f64 / own.len() as f64;
            assert!(
                (0.15..=0.45).contains(&share),
                "{name}: {best} of {} words shared with one topic",
                own.len()
            );
        }
    }

    #[test]
    fn region_links_stay_mostly_inside_and_favour_the_popular_head() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let (mut inside, mut head) = (0, 0);
        for _ in 0..2000 {
            if let Some(j) = region_link(&mut rng, 400, false) {
                inside += 1;
                head += usize::from(j < POPULAR_HEAD);
            }
        }
        assert!((1600..1800).contains(&inside), "{inside}");
        assert!(head * 2 > inside, "{head} of {inside}");
        assert_eq!(region_link(&mut rng, 0, true), None);
        assert_eq!(inbound_link(&mut rng, &[]), None);
    }

    use rand::SeedableRng;
}
