use super::*;

fn parent(relevance: f64, weight: f64, expands: bool) -> ParentVerdict {
    ParentVerdict {
        relevance,
        weight,
        expands,
    }
}

fn failed(retry: bool) -> Outcome {
    Outcome {
        status: DocStatus::Failed,
        retry,
        ..Outcome::default()
    }
}

#[test]
fn the_critic_calls_high_from_the_threshold_up() {
    assert!(instance(vec![1], HIGH_RELEVANCE).1);
    assert!(!instance(vec![1], HIGH_RELEVANCE * 0.99).1);
    assert_eq!(instance(vec![7, 8], 0.9).0, vec![7, 8]);
}

#[test]
fn a_retryable_failure_returns_until_the_cap_then_stays_failed() {
    let mut attempts = Vec::new();
    for tries in 0..MAX_TRIES + 1 {
        let mut o = failed(true);
        retry_or_give_up(&mut o, tries);
        attempts.push(o.status);
    }
    let back = attempts.iter().filter(|s| **s == DocStatus::Unvisited);
    assert_eq!(back.count() as i64, MAX_TRIES - 1, "{attempts:?}");
    assert_eq!(attempts.last(), Some(&DocStatus::Failed));
    let mut final_failure = failed(false);
    retry_or_give_up(&mut final_failure, 0);
    assert_eq!(final_failure.status, DocStatus::Failed);
    let mut revisit = failed(true);
    revisit.revisit = true;
    retry_or_give_up(&mut revisit, 0);
    assert_eq!(
        revisit.status,
        DocStatus::Failed,
        "a revisit never re-enters the frontier"
    );
}

#[test]
fn soft_focus_rescoring_takes_the_best_parent_times_its_weight() {
    let parents = [
        parent(0.2, 1.0, true),
        parent(0.9, 0.5, false),
        parent(0.3, 1.0, false),
    ];
    assert_eq!(rescored(Mode::Soft, 0.1, &parents), Some(0.45));
    // It may lower a score: the parents were judged again.
    assert_eq!(rescored(Mode::Soft, 0.99, &parents), Some(0.45));
}

#[test]
fn hard_focus_rescoring_counts_only_parents_it_would_expand() {
    let parents = [parent(0.2, 1.0, true), parent(0.9, 1.0, false)];
    assert_eq!(rescored(Mode::Hard, 0.9, &parents), Some(0.2));
    let off_topic = [parent(0.9, 1.0, false)];
    assert_eq!(rescored(Mode::Hard, 0.9, &off_topic), Some(0.0));
}

#[test]
fn rescoring_leaves_boosts_orphans_and_other_orders_alone() {
    let parents = [parent(0.5, 1.0, true)];
    assert_eq!(rescored(Mode::Soft, BOOST, &parents), None);
    assert_eq!(rescored(Mode::Soft, 0.3, &[]), None);
    assert_eq!(rescored(Mode::Bfs, -3.0, &parents), None);
    assert_eq!(rescored(Mode::Shark, 0.3, &parents), None);
}

#[test]
fn the_apprentice_rescores_with_its_best_link() {
    let b = |relevance| Inherited {
        relevance,
        weight: 1.0,
    };
    let links: [(&[u32], Inherited); 3] = [(&[1], b(0.5)), (&[1, 2, 3], b(0.0)), (&[1, 2], b(0.2))];
    let p = |f: &[u32], base: Inherited| f.len() as f64 / 10.0 + base.soft();
    assert_eq!(apprentice_rescored(links, p), Some(0.6));
    assert_eq!(apprentice_rescored(std::iter::empty(), p), None);
}

#[test]
fn a_boost_outranks_any_relevance_and_combining_keeps_the_best() {
    assert_eq!(
        combine(1.0, BOOST),
        BOOST,
        "a boost outranks the highest relevance"
    );
    assert_eq!(combine(0.2, BOOST), BOOST);
    assert_eq!(combine(0.7, 0.2), 0.7);
}

#[test]
fn the_apprentice_learns_high_and_low_from_target_relevance() {
    let evidence = (0..20).flat_map(|_| [(vec![1, 2], 0.9), (vec![3, 4], 0.0)]);
    let ap = trained_apprentice(evidence);
    assert!(ap.is_trained());
    assert!(ap.p_high(&[1, 2]) > 0.5, "{}", ap.p_high(&[1, 2]));
    assert!(ap.p_high(&[3, 4]) < 0.5, "{}", ap.p_high(&[3, 4]));
}

/// An apprentice whose evidence says feature 1's links lead to relevant pages (Pr(high) > .9).
fn keen_on_feature_1() -> Apprentice {
    let mut a = Apprentice::new();
    for _ in 0..50 {
        a.add(&[1], true);
        a.add(&[2], false);
    }
    a.set_trust(0.8);
    a
}

#[test]
fn the_template_weight_holds_for_the_apprentice_as_for_the_parent() {
    let a = keen_on_feature_1();
    let text = Inherited {
        relevance: 0.2,
        weight: 1.0,
    };
    let template = Inherited {
        relevance: 0.9,
        weight: 0.1,
    };
    assert!((text.soft() - 0.2).abs() < 1e-12 && (template.soft() - 0.09).abs() < 1e-12);
    // A link in the text: the blend, as before.
    assert_eq!(guided(&a, &[1], text), a.blend(&[1], 0.2));
    // A template link passes on the template weight's share of the blend with R(parent)...
    let t = guided(&a, &[1], template);
    assert!((t - 0.1 * a.blend(&[1], 0.9)).abs() < 1e-12);
    // ...so however keen the apprentice, a template link scores at most the template weight,
    // where the same keenness on a link in the text scores near 1.
    assert!(a.p_high(&[1]) > 0.9 && a.p_high(&[2]) < 0.1);
    assert!(t <= template.weight + 1e-12, "{t}");
    assert!(guided(&a, &[1], text) > 0.7, "{}", guided(&a, &[1], text));
    // An unmeasured apprentice (trust 1) and no apprentice's evidence at all (trust 0).
    let mut b = keen_on_feature_1();
    b.set_trust(0.0);
    assert!((guided(&b, &[1], template) - template.soft()).abs() < 1e-12);
}
