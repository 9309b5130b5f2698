//! A retrieval metric over a labelled set: its mean (the hit rate, MRR,
//! MAP, mean recall@k …) against a threshold, with the cases that pulled
//! it down.

use super::{RetrievalError, RetrievalMetric};
use crate::core::{CaseError, Evaluation, RagCase};
use std::fmt;

/// A retrieval metric's mean over a set of cases, and each case's
/// evaluation ([`RetrievalMetric::mean`]).
///
/// ```
/// use ragaliq::RagCase;
/// use ragaliq::retrieval::hit_rate_at;
///
/// let cases = [
///     RagCase::new("q1").id("a").retrieved_ids(["d1", "d2"]).relevant_ids(["d1"]),
///     RagCase::new("q2").id("b").retrieved_ids(["d3", "d4"]).relevant_ids(["d9"]),
/// ];
/// let mean = hit_rate_at(2).threshold(0.9).mean(&cases).unwrap();
/// assert_eq!((mean.score, mean.passed), (0.5, false));
/// assert!(mean.to_string().contains("`b` 0.00: missed d9 (not retrieved)"));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Mean {
    /// The metric's name (`recall@5`).
    pub metric: String,
    /// The mean of the cases' scores, in [0, 1].
    pub score: f64,
    /// The threshold the mean must reach.
    pub threshold: f64,
    /// `score >= threshold`.
    pub passed: bool,
    /// Each case's evaluation, in the set's order.
    pub cases: Vec<Evaluation>,
    /// Each case's id, in the set's order (`None` for a case without one).
    pub ids: Vec<Option<String>>,
}

impl RetrievalMetric {
    /// The metric's mean over `cases` against its threshold (0 unless
    /// given). Each case is measured as [`evaluate`](Self::evaluate) does;
    /// the first that cannot be is the error, naming it. An empty set is an
    /// error too: a mean over nothing is no score.
    pub fn mean(&self, cases: &[RagCase]) -> Result<Mean, RetrievalError> {
        let threshold = self.check()?;
        if cases.is_empty() {
            return Err(CaseError {
                id: None,
                problem: format!(
                    "no cases: the mean {} of an empty set is no score",
                    self.name()
                ),
            }
            .into());
        }
        let evaluations = cases
            .iter()
            .map(|c| self.evaluate(c))
            .collect::<Result<Vec<_>, _>>()?;
        let score = evaluations.iter().map(|e| e.score).sum::<f64>() / evaluations.len() as f64;
        let score = crate::core::clamp_score(score);
        Ok(Mean {
            metric: self.name(),
            score,
            threshold,
            passed: score >= threshold,
            cases: evaluations,
            ids: cases.iter().map(|c| c.id.clone()).collect(),
        })
    }
}

/// How many of the lowest-scoring cases a message lists.
const LOWEST: usize = 5;

impl fmt::Display for Mean {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (rel, outcome) = if self.passed {
            (">=", "passed")
        } else {
            ("<", "FAILED")
        };
        writeln!(
            f,
            "mean {} over {} cases: {:.2} {rel} threshold {:.2} ({outcome})",
            self.metric,
            self.cases.len(),
            self.score,
            self.threshold
        )?;
        let mut lowest: Vec<(usize, &Evaluation)> = self
            .cases
            .iter()
            .enumerate()
            .filter(|(_, e)| e.score < 1.0)
            .collect();
        // Lowest first; the set's order among equals.
        lowest.sort_by(|(i, a), (j, b)| a.score.total_cmp(&b.score).then(i.cmp(j)));
        if !lowest.is_empty() {
            writeln!(
                f,
                "  {} below 1 ({} shown, lowest first):",
                if lowest.len() == 1 {
                    "1 case".to_owned()
                } else {
                    format!("{} cases", lowest.len())
                },
                lowest.len().min(LOWEST)
            )?;
        }
        for (i, e) in lowest.iter().take(LOWEST) {
            let name = match self.ids.get(*i) {
                Some(Some(id)) => format!("`{id}`"),
                _ => format!("case {} of the set", i + 1),
            };
            write!(f, "    {name} {:.2}", e.score)?;
            if let Some(seen) = &e.retrieval {
                let missed: Vec<String> = seen
                    .by_rank()
                    .into_iter()
                    .filter_map(|r| match r.rank {
                        Some(rank) if seen.within(rank) => None,
                        Some(rank) => Some(format!("{} (rank {rank})", seen.name(r))),
                        None => Some(format!("{} (not retrieved)", seen.name(r))),
                    })
                    .collect();
                if !missed.is_empty() {
                    write!(f, ": missed {}", missed.join(", "))?;
                }
            }
            writeln!(f)?;
        }
        write!(f, "  no judge: computed from the cases' labels")
    }
}
