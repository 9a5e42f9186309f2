//! The open world: a page about none of the user's topics gets low relevance once the model
//! has a background, learned from the user's "not relevant" marks or from unlabelled pages.

use forager_classifier::{
    BackgroundMethod, BackgroundOptions, Model, Scratch, Taxonomy, TextOptions, TopicId,
    TrainOptions, BACKGROUND_PATH, ROOT,
};

const SKY: &[&str] = &[
    "telescope",
    "orbit",
    "nebula",
    "comet",
    "galaxy",
    "eyepiece",
    "planet",
    "star",
];
const GARDEN: &[&str] = &[
    "compost",
    "seedling",
    "pruning",
    "mulch",
    "tomato",
    "flowerbed",
    "soil",
    "weeding",
];
/// Off-taxonomy pages: software libraries, sharing a few words with both topics.
const CODE: &[&str] = &[
    "function", "library", "array", "package", "install", "release", "api", "method",
];

/// A page of `n` words drawn deterministically from `main`, with a few from `mix`.
fn page(main: &[&str], mix: &[&str], seed: usize, n: usize) -> String {
    (0..n)
        .map(|i| {
            let k = seed.wrapping_mul(31).wrapping_add(i * 17);
            if i % 7 == 3 {
                mix[k % mix.len()]
            } else {
                main[k % main.len()]
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn model() -> (Model, TopicId, TopicId) {
    let mut tax = Taxonomy::new("root");
    let sky = tax.add(ROOT, "Astronomy", "").unwrap();
    let garden = tax.add(ROOT, "Gardening", "").unwrap();
    let mut m = Model::new(tax, TextOptions::default(), TrainOptions::default());
    for i in 0..20 {
        let sky_page = page(SKY, GARDEN, i, 60);
        m.add_example(sky, &format!("http://sky.test/{i}"), &sky_page)
            .unwrap();
        let garden_page = page(GARDEN, SKY, i, 60);
        m.add_example(garden, &format!("http://garden.test/{i}"), &garden_page)
            .unwrap();
    }
    m.set_good(sky, true).unwrap();
    (m, sky, garden)
}

/// An off-taxonomy page that leans on one astronomy word, as library docs named after stars do.
fn code_page(seed: usize) -> String {
    format!("{} star", page(CODE, SKY, seed, 200))
}

#[test]
fn closed_world_is_sure_of_the_wrong_topic_and_a_mark_fixes_it() {
    let (mut m, _, _) = model();
    let mut s = Scratch::new();
    let v = m.classifier().classify(&code_page(1), &mut s);
    assert!(v.relevance > 0.5, "closed world: R = {}", v.relevance);
    assert!(!v.none);
    assert_eq!(v.background, 0.0);

    for i in 0..5 {
        m.mark_not_relevant(&format!("http://lib.test/{i}"), &code_page(100 + i))
            .unwrap();
    }
    assert_eq!(m.background_counts(), (5, 0));
    assert!(m.is_marked_not_relevant("http://lib.test/3"));
    assert!(!m.is_marked_not_relevant("http://lib.test/9"));
    let marked = m.classifier().classify(&page(SKY, GARDEN, 98, 80), &mut s);
    assert!(marked.relevance > 0.9, "{marked:?}");
    let marked = marked.marked_not_relevant();
    assert!(marked.none && marked.relevance == 0.0 && !marked.hard_focus);
    let v = m.classifier().classify(&code_page(7), &mut s);
    assert!(v.none, "{v:?}");
    assert!(v.relevance < 0.1, "R = {}", v.relevance);
    assert!(!v.hard_focus);
    assert!(v.background > 0.9);
    // Pages of the topics keep their relevance.
    let v = m.classifier().classify(&page(SKY, GARDEN, 99, 80), &mut s);
    assert!(v.relevance > 0.9 && !v.none, "{v:?}");

    // Marks travel with the bytes, as version 3, and can be undone.
    let bytes = m.to_bytes();
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 3);
    let mut back = Model::from_bytes(&bytes).unwrap();
    assert_eq!(back.to_bytes(), bytes);
    assert_eq!(back.not_relevant_urls().len(), 5);
    assert!(back.examples().iter().any(|e| e.topic == BACKGROUND_PATH));
    for u in back.not_relevant_urls() {
        back.remove_example(&u).unwrap();
    }
    let v = back.classifier().classify(&code_page(7), &mut s);
    assert!(v.relevance > 0.5 && v.background == 0.0);
    assert_eq!(u16::from_le_bytes([back.to_bytes()[8], 0]), 1);
}

#[test]
fn learns_the_background_from_unlabelled_pages_and_keeps_the_topics() {
    let (mut m, _, _) = model();
    // A crawl's neighbourhood: on-topic pages and a larger off-taxonomy cluster.
    let mut docs = Vec::new();
    for i in 0..40 {
        docs.push((
            format!("http://sky2.test/{i}"),
            page(SKY, GARDEN, 1000 + i, 70),
        ));
    }
    for i in 0..120 {
        docs.push((format!("http://lib.test/{i}"), code_page(2000 + i)));
    }
    let r = m
        .learn_background(docs, &BackgroundOptions::default())
        .unwrap();
    assert_eq!(r.unlabelled, 160);
    assert!(r.spies >= 1);
    let (marked, sampled) = m.background_counts();
    assert_eq!(marked, 0);
    assert_eq!(sampled, r.background);
    let bg: Vec<String> = m
        .examples()
        .into_iter()
        .filter(|e| e.topic == BACKGROUND_PATH)
        .map(|e| e.url)
        .collect();
    let wrong = bg.iter().filter(|u| u.contains("sky2")).count();
    let right = bg.iter().filter(|u| u.contains("lib.test")).count();
    assert!(right >= 100, "{right} of 120 off-taxonomy pages learned");
    assert!(wrong <= 4, "{wrong} on-topic pages taken for background");
    // Spies are back as ordinary examples.
    assert_eq!(m.example_count(), 40 + r.background);

    let mut s = Scratch::new();
    let c = m.classifier();
    let fresh_code = c.classify(&code_page(9999), &mut s);
    assert!(
        fresh_code.none && fresh_code.relevance < 0.5,
        "{fresh_code:?}"
    );
    let fresh_sky = c.classify(&page(SKY, GARDEN, 4242, 70), &mut s);
    assert!(
        !fresh_sky.none && fresh_sky.relevance > 0.9,
        "{fresh_sky:?}"
    );

    // A second round replaces the sample; forgetting it keeps the user's marks.
    m.mark_not_relevant("http://x.test/", &code_page(5))
        .unwrap();
    assert_eq!(m.forget_background_sample(), r.background);
    assert_eq!(m.background_counts(), (1, 0));
}

#[test]
fn hard_em_lets_on_topic_pages_leave_a_background_that_starts_as_everything() {
    let (mut m, _, _) = model();
    let mut docs = Vec::new();
    for i in 0..40 {
        docs.push((
            format!("http://sky2.test/{i}"),
            page(SKY, GARDEN, 1000 + i, 70),
        ));
    }
    for i in 0..120 {
        docs.push((format!("http://lib.test/{i}"), code_page(2000 + i)));
    }
    let opts = BackgroundOptions {
        method: BackgroundMethod::Em { rounds: 4 },
        ..BackgroundOptions::default()
    };
    let r = m.learn_background(docs, &opts).unwrap();
    let bg: Vec<String> = (m.examples().into_iter())
        .filter(|e| e.topic == BACKGROUND_PATH)
        .map(|e| e.url)
        .collect();
    assert_eq!(bg.len(), r.background);
    let wrong = bg.iter().filter(|u| u.contains("sky2")).count();
    let right = bg.iter().filter(|u| u.contains("lib.test")).count();
    assert_eq!(wrong, 0, "on-topic pages left in the background");
    assert_eq!(right, 120);
    let fresh_sky = m
        .classifier()
        .classify(&page(SKY, GARDEN, 4242, 70), &mut Scratch::new());
    assert!(
        !fresh_sky.none && fresh_sky.relevance > 0.9,
        "{fresh_sky:?}"
    );
}

#[test]
fn too_few_unlabelled_pages_learn_nothing() {
    let (mut m, _, _) = model();
    let docs = (0..5).map(|i| (format!("http://lib.test/{i}"), code_page(i)));
    let r = m
        .learn_background(docs, &BackgroundOptions::default())
        .unwrap();
    assert_eq!((r.unlabelled, r.background), (5, 0));
    assert_eq!(m.background_counts(), (0, 0));
    assert_eq!(m.example_count(), 40);
}

#[test]
fn native_and_counts_paths_agree() {
    let (mut m, _, _) = model();
    m.mark_not_relevant("http://lib.test/a", &code_page(3))
        .unwrap();
    let c = m.classifier();
    let text = page(SKY, CODE, 77, 90);
    let counts = m.tokenizer().counts(&text);
    let pairs: Vec<(&str, u32)> = counts.iter().map(|(t, n)| (t.as_str(), *n)).collect();
    let mut s = Scratch::new();
    let a = c.log_probs(&text, &mut s);
    let b = c.log_probs_counts(&pairs, &mut s);
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() < 1e-9 || (x.is_infinite() && y.is_infinite()));
    }
}
