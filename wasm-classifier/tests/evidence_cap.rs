//! Length-aware posteriors (#13): with an evidence cap a long page's words count as at most
//! that many occurrences, so naive Bayes is no longer sure of anything on the strength of
//! length alone; the best leaf does not change, and without a cap nothing changes at all.

use forager_classifier::{Model, Scratch, ROOT};

fn model() -> Model {
    let mut m = Model::default();
    let a = m.add_topic(ROOT, "Sky", "").unwrap();
    let b = m.add_topic(ROOT, "Garden", "").unwrap();
    m.add_example(
        a,
        "http://a/1",
        "telescope orbit nebula comet galaxy star planet",
    )
    .unwrap();
    m.add_example(a, "http://a/2", "telescope star planet eyepiece orbit")
        .unwrap();
    m.add_example(
        b,
        "http://b/1",
        "compost seedling pruning mulch soil tomato",
    )
    .unwrap();
    m.add_example(b, "http://b/2", "soil mulch weeding flowerbed compost")
        .unwrap();
    m.set_good(a, true).unwrap();
    m
}

#[test]
fn a_capped_classifier_is_less_sure_of_long_pages_and_keeps_its_best_leaf() {
    let mut m = model();
    let default = m.classifier();
    let plain = std::sync::Arc::new((*default).clone().with_evidence_cap(None));
    let capped = (*plain).clone().with_evidence_cap(Some(5.0));
    let uncapped = (*plain).clone().with_evidence_cap(None);
    let tens = (*plain)
        .clone()
        .with_evidence_cap(Some(forager_classifier::classify::DEFAULT_EVIDENCE_CAP));
    let long = "telescope soil star compost telescope star ".repeat(40);
    let mut s = Scratch::new();
    let (p, c, u) = (
        plain.classify(&long, &mut s),
        capped.classify(&long, &mut s),
        uncapped.classify(&long, &mut s),
    );
    assert_eq!(p, u, "no cap: the same verdict, bit for bit");
    assert_eq!(p.best_leaf, c.best_leaf);
    assert!(p.relevance > 0.999, "{}", p.relevance);
    assert!(
        c.relevance < p.relevance && c.relevance > 0.5,
        "{}",
        c.relevance
    );
    // A page shorter than the cap is scored as before.
    let short = "telescope star";
    assert_eq!(
        plain.classify(short, &mut s),
        capped.classify(short, &mut s)
    );
    // Every classifier starts with the default cap.
    assert_eq!(
        default.classify(&long, &mut s),
        tens.classify(&long, &mut s)
    );
    assert_ne!(default.classify(&long, &mut s), p);
    // Nonsense caps are no cap.
    let nan = (*plain).clone().with_evidence_cap(Some(f64::NAN));
    assert_eq!(nan.classify(&long, &mut s), p);
}
