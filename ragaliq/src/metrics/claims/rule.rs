//! The one rule that turns what a judge said about a claim into a verdict:
//! the same for every metric (faithfulness, hallucination, context recall,
//! answer correctness, claim checks of one's own) and every way of reading
//! an answer (token probabilities, or the word written, which counts as
//! probability 1 for that word).
//!
//! 1. The claim is **supported** when P(supported) reaches
//!    `claim_threshold` (default
//!    [`DEFAULT_CLAIM_THRESHOLD`](crate::core::DEFAULT_CLAIM_THRESHOLD)).
//! 2. When the judge answered "no" to support (P(supported) under
//!    [`ASK_CONTRADICTION_BELOW`], its own word, whatever the thresholds),
//!    it is asked whether the passages contradict the claim. The claim is
//!    **contradicted** only when the judge's case for contradiction beats
//!    its case for support: P(contradicted) more than `contradiction_ratio`
//!    (default
//!    [`DEFAULT_CONTRADICTION_RATIO`](crate::core::DEFAULT_CONTRADICTION_RATIO))
//!    times P(supported). A
//!    claim the judge calls unsupported but not contradicted has **no
//!    evidence**.
//!
//! Which questions are asked depends on the judge's answers only, never on
//! a threshold: editing `claim_threshold` or `contradiction_ratio` changes
//! how the recorded answers are read, and replays without a new exchange.
//! (A claim the judge said "yes" to is never asked about contradiction;
//! under a ratio of 2 or more it could not be contradicted anyway, since
//! P(contradicted) ≤ 1 ≤ 2 × P(supported).)
//!
//! The defaults were chosen by leave-one-source-out over six public
//! labelled sources (BENCHMARKS.md, "Verdicts that transfer").

use crate::core::Verdict;

/// P(supported) under which the judge is asked whether the claim is
/// contradicted: where it answered "no" itself.
pub(crate) const ASK_CONTRADICTION_BELOW: f64 = 0.5;

/// What the short questions read for one claim.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Reading {
    /// P(supported): from token probabilities, or 1 / 0 from the word.
    pub supported: f64,
    /// P(contradicted), when the judge was asked.
    pub contradicted: Option<f64>,
}

impl Reading {
    /// Whether the contradiction question is asked after this support
    /// answer (see the module).
    pub(crate) fn asks_contradiction(supported: f64) -> bool {
        supported < ASK_CONTRADICTION_BELOW
    }

    /// The verdict, and the judge's probability for it (P(supported) for a
    /// supported claim, P(contradicted) for a contradicted one, 1 −
    /// P(supported) for one with no evidence).
    pub(crate) fn decide(&self, claim_threshold: f64, contradiction_ratio: f64) -> (Verdict, f64) {
        let p = self.supported;
        if p >= claim_threshold {
            return (Verdict::Supported, p);
        }
        match self.contradicted {
            // Strictly more: "no" to both questions (both 0, read from the
            // words) is no evidence, not a contradiction.
            Some(q) if q > contradiction_ratio * p => (Verdict::Contradicted, q),
            _ => (Verdict::NoEvidence, 1.0 - p),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(supported: f64, contradicted: Option<f64>) -> Verdict {
        Reading {
            supported,
            contradicted,
        }
        .decide(0.33, 3.0)
        .0
    }

    #[test]
    fn one_rule_for_probabilities_and_words() {
        // Probabilities.
        assert_eq!(read(0.4, None), Verdict::Supported);
        assert_eq!(read(0.2, Some(0.7)), Verdict::Contradicted);
        assert_eq!(read(0.2, Some(0.5)), Verdict::NoEvidence, "0.5 < 3 × 0.2");
        assert_eq!(
            read(0.1, Some(0.3)),
            Verdict::NoEvidence,
            "not more than 3 × 0.1"
        );
        assert_eq!(
            read(0.01, Some(0.05)),
            Verdict::Contradicted,
            "its case beats support's"
        );
        assert_eq!(
            read(0.2, None),
            Verdict::NoEvidence,
            "not asked: no evidence"
        );
        // The word written: yes is 1, no is 0.
        assert_eq!(read(1.0, None), Verdict::Supported);
        assert_eq!(read(0.0, Some(1.0)), Verdict::Contradicted);
        assert_eq!(read(0.0, Some(0.0)), Verdict::NoEvidence, "no to both");
    }

    #[test]
    fn the_questions_asked_depend_on_the_answer_only() {
        assert!(Reading::asks_contradiction(0.49));
        assert!(!Reading::asks_contradiction(0.5));
        // Whatever the threshold, a claim the judge said yes to (not asked)
        // is never contradicted under a ratio of 2 or more.
        for t in [0.3, 0.6, 0.9] {
            for p in [0.5, 0.7, 0.89] {
                let r = Reading {
                    supported: p,
                    contradicted: Some(1.0),
                };
                assert_ne!(r.decide(t, 2.0).0, Verdict::Contradicted, "{t} {p}");
            }
        }
    }
}
