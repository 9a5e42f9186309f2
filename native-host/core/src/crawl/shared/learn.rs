//! The shared job's apprentice, learned incrementally: each run adds only the link evidence
//! that appeared since the last one ([`SharedDb::evidence_since`]) to the apprentice it
//! published, so a run's cost follows the crawl's growth since the last run, not its size.
//! Naive Bayes counts do not depend on the order instances come in, so the counts are those of
//! a full re-read of the same evidence. Its trust (the critic's weight) is the skill of its
//! predictions of the last [`TRUST_WINDOW`] instances, each predicted before it was learned.
//! A full re-read happens when there is nothing to build on: the first run, a crawl copied
//! from elsewhere, an apprentice published by another run than the one remembered, or pages
//! re-judged since (their relevance is the instances' label).

use crate::crawl::policy;
use crate::store::{ApprenticeEvidence, SharedDb, StoreError};
use forager_classifier::apprentice::{skill, Apprentice};

/// Most held-out predictions the critic weighs when the job trains the apprentice.
pub const TRUST_WINDOW: usize = 20_000;

/// The job state key of what the apprentice learned.
const LEARNED: &str = "apprentice";

/// What the job's apprentice learned so far, as kept on the server.
#[derive(Debug, PartialEq)]
struct Learned {
    /// The mark of the last evidence read.
    mark: String,
    /// The labels it learned under (which re-judging of the pages).
    labels: String,
    /// The version of the apprentice it published.
    published: i64,
    /// Its last held-out predictions (Pr(high), whether high), oldest first.
    heldout: Vec<(f32, bool)>,
}

impl Learned {
    /// A JSON line (mark, labels, version), then 5 bytes per prediction.
    fn to_bytes(&self) -> Vec<u8> {
        let head = serde_json::json!([self.mark, self.labels, self.published]);
        let mut b = head.to_string().into_bytes();
        b.push(b'\n');
        for (p, high) in &self.heldout {
            b.extend(p.to_le_bytes());
            b.push(u8::from(*high));
        }
        b
    }

    /// Reads [`Learned::to_bytes`]; `None` when unreadable (the job then re-reads all).
    fn from_bytes(b: &[u8]) -> Option<Learned> {
        let nl = b.iter().position(|c| *c == b'\n')?;
        let (mark, labels, published): (String, String, i64) =
            serde_json::from_slice(&b[..nl]).ok()?;
        let body = &b[nl + 1..];
        if !body.len().is_multiple_of(5) {
            return None;
        }
        let heldout = (body.chunks_exact(5))
            .map(|c| (f32::from_le_bytes([c[0], c[1], c[2], c[3]]), c[4] != 0))
            .collect();
        Some(Learned {
            mark,
            labels,
            published,
            heldout,
        })
    }
}

/// What one training did.
#[derive(Debug)]
pub struct Trained {
    /// The apprentice, with its trust.
    pub apprentice: Apprentice,
    /// Instances read and learned in this run.
    pub read: usize,
    /// Whether it built on the published apprentice (false: a full re-read).
    pub incremental: bool,
    state: Learned,
}

/// The apprentice with the evidence that appeared since the last training added (all of it
/// when there is nothing to build on); `labels` names the pages' current judging.
pub fn learn(db: &dyn SharedDb, labels: &str) -> Result<Trained, StoreError> {
    let before = (db.job_state(LEARNED)?)
        .and_then(|b| Learned::from_bytes(&b))
        .filter(|l| l.labels == labels);
    let base = match before {
        Some(l) => (db.apprentice_since(-1)?)
            .filter(|v| v.version == l.published)
            .map(|v| (v.value, l)),
        None => None,
    };
    let incremental = base.is_some();
    let (mut ap, since, mut heldout) = match base {
        Some((ap, l)) => (ap, Some(l.mark), l.heldout),
        None => (Apprentice::new(), None, Vec::new()),
    };
    let (evidence, mark) = db.evidence_since(since.as_deref())?;
    let read = evidence.len();
    learn_prequentially(&mut ap, evidence, &mut heldout);
    Ok(Trained {
        apprentice: ap,
        read,
        incremental,
        state: Learned {
            mark,
            labels: labels.to_owned(),
            published: -1,
            heldout,
        },
    })
}

/// Remembers `t` as published under `version`: the next training builds on it.
pub fn remember(db: &mut dyn SharedDb, mut t: Trained, version: i64) -> Result<(), StoreError> {
    t.state.published = version;
    db.set_job_state(LEARNED, &t.state.to_bytes())
}

/// Adds `evidence` to `ap`, predicting each of the last [`TRUST_WINDOW`] before learning it
/// (appended to `heldout`, which keeps the last `TRUST_WINDOW`), and sets its trust from
/// those predictions when they have both outcomes.
fn learn_prequentially(
    ap: &mut Apprentice,
    evidence: Vec<ApprenticeEvidence>,
    heldout: &mut Vec<(f32, bool)>,
) {
    let start = evidence.len().saturating_sub(TRUST_WINDOW);
    for (i, (f, r)) in evidence.into_iter().enumerate() {
        let high = policy::high(r);
        if i >= start && ap.is_trained() {
            heldout.push((ap.p_high(&f) as f32, high));
        }
        ap.add(&f, high);
    }
    let cut = heldout.len().saturating_sub(TRUST_WINDOW);
    heldout.drain(..cut);
    let pairs = heldout.iter().map(|(p, h)| (f64::from(*p), *h)).collect();
    if let Some(s) = skill(pairs) {
        ap.set_trust(s);
    }
}

/// An apprentice trained on `evidence`, its trust the skill of its predictions of the last
/// instances before it learned each (the critic, as the crawl loop measures it).
pub fn trained_with_trust(evidence: Vec<ApprenticeEvidence>) -> Apprentice {
    let mut ap = Apprentice::new();
    learn_prequentially(&mut ap, evidence, &mut Vec::new());
    ap
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_learned_state_reads_back_and_garbage_reads_as_none() {
        let l = Learned {
            mark: "10:12:10,11".into(),
            labels: "3|x".into(),
            published: 7,
            heldout: vec![(0.25, true), (0.75, false)],
        };
        assert_eq!(Learned::from_bytes(&l.to_bytes()), Some(l));
        assert_eq!(Learned::from_bytes(b"[1,2]\n"), None);
        assert_eq!(Learned::from_bytes(b"[\"a\",\"b\",1]\nxyz"), None);
    }

    #[test]
    fn learning_in_two_parts_counts_as_learning_at_once_and_keeps_a_bounded_window() {
        let ev = |n: usize, off: u32| -> Vec<ApprenticeEvidence> {
            (0..n as u32)
                .map(|i| {
                    (
                        vec![i % 7 + off, i % 3 + 100],
                        if i % 4 == 0 { 0.9 } else { 0.01 },
                    )
                })
                .collect()
        };
        let mut all = ev(300, 0);
        all.extend(ev(200, 50));
        let whole = trained_with_trust(all);
        let (mut ap, mut held) = (Apprentice::new(), Vec::new());
        learn_prequentially(&mut ap, ev(300, 0), &mut held);
        learn_prequentially(&mut ap, ev(200, 50), &mut held);
        assert_eq!(ap.to_bytes(), whole.to_bytes());
        assert!(
            held.len() <= TRUST_WINDOW && held.len() >= 490,
            "{}",
            held.len()
        );
        assert!(ap.measured_trust().is_some());
    }
}
