//! [`RetrievalMetric`]: a measure, its cutoff, nDCG's gain and a threshold;
//! evaluated on a case into an [`Evaluation`].

use super::RetrievalError;
use super::ranking::{Gain, Ranking};
use crate::core::{ConfigError, Evaluation, MatchedBy, Metric, RagCase, Usage, clamp_score};
use std::fmt;

/// What a retrieval metric measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Measure {
    /// 1 when a relevant label is within the cutoff, else 0 (averaged
    /// over cases: the hit rate).
    HitRate,
    /// The share of relevant labels within the cutoff.
    Recall,
    /// The share of the cutoff's places holding a relevant label.
    Precision,
    /// 1 / the rank of the first relevant label (averaged: MRR).
    Mrr,
    /// The precision at each relevant label's rank, summed over the
    /// relevant labels and divided by their number (averaged: MAP).
    AveragePrecision,
    /// DCG over the ideal DCG, with graded gains.
    Ndcg,
}

impl Measure {
    /// The name reports use: `hit_rate`, `recall`, `precision`, `mrr`,
    /// `ap`, `ndcg`.
    ///
    /// ```
    /// use ragaliq::retrieval::{Measure, RetrievalMetric};
    /// assert_eq!(Measure::AveragePrecision.name(), "ap");
    /// assert_eq!(RetrievalMetric::new(Measure::Recall, Some(5)).name(), "recall@5");
    /// ```
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Measure::HitRate => "hit_rate",
            Measure::Recall => "recall",
            Measure::Precision => "precision",
            Measure::Mrr => "mrr",
            Measure::AveragePrecision => "ap",
            Measure::Ndcg => "ndcg",
        }
    }
}

/// A retrieval metric: a [`Measure`], its cutoff `k` (`recall@5`; none: the
/// whole list), nDCG's [`Gain`], and the threshold a case must reach.
///
/// Made by [`hit_rate_at`](super::hit_rate_at), [`recall_at`](super::recall_at),
/// [`precision_at`](super::precision_at), [`mrr`](super::mrr),
/// [`average_precision`](super::average_precision), [`ndcg_at`](super::ndcg_at)
/// and their siblings. Without a threshold a metric is *measured*: every
/// case passes and the run's mean is reported (and may be gated, see
/// [`Gates`](crate::config::Gates)).
///
/// ```
/// use ragaliq::RagCase;
/// use ragaliq::retrieval::{ndcg_at, recall_at};
///
/// let case = RagCase::new("What is the refund window?")
///     .id("refund-window")
///     .retrieved_ids(["faq-3", "policy-12", "terms-1"])
///     .relevant_ids(["policy-12", "policy-7"]);
/// let eval = recall_at(3).threshold(0.8).evaluate(&case).unwrap();
/// assert_eq!((eval.score, eval.passed), (0.5, false));
/// assert_eq!(eval.title(), "recall@3");
/// assert!(eval.to_string().contains("relevant IDs missed (1 of 2): policy-7 not retrieved"));
/// assert_eq!(ndcg_at(10).exponential().name(), "ndcg_exp@10");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetrievalMetric {
    measure: Measure,
    k: Option<usize>,
    gain: Gain,
    threshold: Option<f64>,
}

impl RetrievalMetric {
    /// `measure` over the top `k` (`None`: the whole list), linear gain, no
    /// threshold.
    #[must_use]
    pub fn new(measure: Measure, k: Option<usize>) -> RetrievalMetric {
        RetrievalMetric {
            measure,
            k,
            gain: Gain::Linear,
            threshold: None,
        }
    }

    /// The threshold a case must reach to pass (0 to 1).
    #[must_use]
    pub fn threshold(mut self, threshold: f64) -> RetrievalMetric {
        self.threshold = Some(threshold);
        self
    }

    /// nDCG with exponential gain (2^grade − 1) instead of the grade
    /// itself; named `ndcg_exp`. For other measures, which read no grade,
    /// it changes nothing.
    #[must_use]
    pub fn exponential(mut self) -> RetrievalMetric {
        self.gain = Gain::Exponential;
        self
    }

    /// The measure.
    #[must_use]
    pub fn measure(&self) -> Measure {
        self.measure
    }

    /// The cutoff.
    #[must_use]
    pub fn k(&self) -> Option<usize> {
        self.k
    }

    /// nDCG's gain.
    #[must_use]
    pub fn gain(&self) -> Gain {
        self.gain
    }

    /// The threshold given, if any.
    #[must_use]
    pub fn threshold_given(&self) -> Option<f64> {
        self.threshold
    }

    /// The metric's name, as trials and reports say it: `recall@5`, `mrr`,
    /// `ndcg_exp@10`.
    #[must_use]
    pub fn name(&self) -> String {
        let base = match (self.measure, self.gain) {
            (Measure::Ndcg, Gain::Exponential) => "ndcg_exp",
            (m, _) => m.name(),
        };
        match self.k {
            Some(k) => format!("{base}@{k}"),
            None => base.to_owned(),
        }
    }

    /// The metric's value on `ranking`.
    #[must_use]
    pub fn score(&self, ranking: &Ranking) -> f64 {
        let k = self.k;
        match self.measure {
            Measure::HitRate => ranking.hit_rate(k),
            Measure::Recall => ranking.recall(k),
            Measure::Precision => ranking.precision(k),
            Measure::Mrr => ranking.reciprocal_rank(k),
            Measure::AveragePrecision => ranking.average_precision(k),
            Measure::Ndcg => ranking.ndcg(k, self.gain),
        }
    }

    /// The cutoff and threshold, checked: `k` at least 1, the threshold
    /// from 0 to 1.
    pub(crate) fn check(&self) -> Result<f64, ConfigError> {
        if self.k == Some(0) {
            return Err(ConfigError::Invalid {
                origin: format!("the cutoff of {}", self.name()),
                value: "0".into(),
                expected: "a cutoff of at least 1 (or none, for the whole list)".into(),
            });
        }
        let threshold = self.threshold.unwrap_or(0.0);
        if !(0.0..=1.0).contains(&threshold) {
            return Err(ConfigError::Invalid {
                origin: format!("the threshold of {}", self.name()),
                value: threshold.to_string(),
                expected: "a number from 0 to 1".into(),
            });
        }
        Ok(threshold)
    }

    /// The metric on `case`: its score against the threshold, why, and
    /// which relevant labels were found or missed at which ranks. No judge
    /// is asked and nothing is recorded.
    ///
    /// A case that cannot be measured (no relevant label, relevant IDs
    /// with no retrieved IDs, …) is [`RetrievalError::Case`]; a cutoff of
    /// 0 or a threshold outside 0 to 1 is [`RetrievalError::Config`].
    ///
    /// ```
    /// use ragaliq::RagCase;
    /// use ragaliq::retrieval::{mrr, RetrievalError};
    /// let case = RagCase::new("q").retrieved_ids(["x", "a"]).relevant_ids(["a"]);
    /// let eval = mrr().evaluate(&case).unwrap();
    /// assert_eq!((eval.score, eval.passed), (0.5, true), "measured: no threshold");
    /// let unlabelled = RagCase::new("q").retrieved_ids(["a"]);
    /// assert!(matches!(mrr().evaluate(&unlabelled), Err(RetrievalError::Case(_))));
    /// ```
    pub fn evaluate(&self, case: &RagCase) -> Result<Evaluation, RetrievalError> {
        let threshold = self.check()?;
        let ranking = Ranking::of(case)?;
        Ok(self.evaluate_ranking(&ranking, threshold))
    }

    pub(crate) fn evaluate_ranking(&self, ranking: &Ranking, threshold: f64) -> Evaluation {
        let score = clamp_score(self.score(ranking));
        let retrieved = ranking.retrieved(self.k);
        Evaluation {
            metric: Metric::Retrieval,
            name: Some(self.name()),
            score,
            threshold,
            passed: score >= threshold,
            undecided: false,
            reasoning: self.reasoning(ranking, &retrieved),
            claims: Vec::new(),
            passages: Vec::new(),
            counts: None,
            usage: Usage::default(),
            spread: None,
            precision: None,
            recall: None,
            person: None,
            review_key: None,
            graded: None,
            retrieval: Some(retrieved),
            awaiting: None,
            unsure: None,
            judges: Vec::new(),
            turn: None,
            question: None,
            history: None,
            turns: Vec::new(),
            answerable: None,
        }
    }

    /// Why the score is what it is, in the measure's own terms.
    fn reasoning(&self, ranking: &Ranking, seen: &crate::core::Retrieved) -> String {
        let noun = match seen.matched_by {
            MatchedBy::Ids => "ID",
            MatchedBy::Text => "passage",
        };
        let plural = |n: usize, word: &str| {
            if n == 1 {
                format!("{n} {word}")
            } else {
                format!("{n} {word}s")
            }
        };
        let scope = seen.scope();
        let within: Vec<usize> = seen
            .relevant
            .iter()
            .filter_map(|r| r.rank.filter(|rank| seen.within(*rank)))
            .collect();
        let m = seen.relevant.len();
        let first = within.iter().min().copied();
        match self.measure {
            Measure::HitRate => match (first, m) {
                (Some(rank), _) => {
                    format!("A hit: a relevant {noun} at rank {rank}, within {scope}.")
                }
                (None, 1) => format!("No hit: the relevant {noun} is not within {scope}."),
                (None, _) => format!("No hit: none of the {m} relevant {noun}s within {scope}."),
            },
            Measure::Recall => format!(
                "{} of {} within {scope}.",
                within.len(),
                plural(m, &format!("relevant {noun}"))
            ),
            Measure::Precision => {
                let places = self.k.unwrap_or(seen.listed);
                if places == 0 {
                    return "Nothing was retrieved: no place holds a relevant one.".into();
                }
                let mut out = format!(
                    "{} of the {} in {scope} hold a relevant {noun}",
                    within.len(),
                    plural(places, "place")
                );
                if places > seen.listed {
                    out.push_str(&format!(
                        " (only {} retrieved: an empty place counts as not relevant)",
                        seen.listed
                    ));
                }
                if seen.repeats.iter().any(|r| seen.within(r.rank)) {
                    out.push_str("; a repeat takes a place and earns nothing");
                }
                out.push('.');
                out
            }
            Measure::Mrr => match first {
                Some(rank) => format!("The first relevant {noun} is at rank {rank}: 1/{rank}."),
                None => format!("No relevant {noun} within {scope}: 0."),
            },
            Measure::AveragePrecision => {
                let at: Vec<String> = ranking
                    .precisions(self.k)
                    .iter()
                    .map(|(rank, p)| format!("{p:.2} at rank {rank}"))
                    .collect();
                if at.is_empty() {
                    format!("No relevant {noun} within {scope}: 0.")
                } else {
                    let sum: f64 = ranking.precisions(self.k).iter().map(|(_, p)| p).sum();
                    format!(
                        "Precision at each relevant {noun} within {scope}: {}; their sum {sum:.2} over the {}.",
                        at.join(", "),
                        plural(m, &format!("relevant {noun}"))
                    )
                }
            }
            Measure::Ndcg => {
                let (dcg, ideal, scale) = ranking.dcg_pair(self.k, self.gain);
                let formula = match self.gain {
                    Gain::Linear => "gain = grade",
                    Gain::Exponential => "gain = 2^grade − 1",
                };
                // Huge grades: both figures shown divided by the same
                // power of two, which is how they were summed.
                let times = if scale == 0 {
                    String::new()
                } else {
                    format!(" × 2^{scale}")
                };
                format!(
                    "DCG {dcg:.3}{times} of an ideal {ideal:.3}{times} within {scope} ({formula}, over log2(rank + 1))."
                )
            }
        }
    }
}

impl fmt::Display for RetrievalMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::core::RagCase;

    fn case() -> RagCase {
        RagCase::new("q")
            .id("c")
            .retrieved_ids(["x", "a", "a", "y", "b", "z"])
            .relevant_ids(["a", "b", "c"])
    }

    #[test]
    fn names_say_the_measure_cutoff_and_gain() {
        let names: Vec<String> = [
            hit_rate_at(3),
            hit_rate(),
            recall_at(5),
            precision_at(10),
            mrr(),
            mrr_at(10),
            average_precision(),
            average_precision_at(10),
            ndcg(),
            ndcg_at(10).exponential(),
        ]
        .iter()
        .map(RetrievalMetric::name)
        .collect();
        assert_eq!(
            names,
            [
                "hit_rate@3",
                "hit_rate",
                "recall@5",
                "precision@10",
                "mrr",
                "mrr@10",
                "ap",
                "ap@10",
                "ndcg",
                "ndcg_exp@10"
            ]
        );
    }

    #[test]
    fn a_failure_names_what_was_missed_and_where_it_came() {
        let eval = recall_at(4).threshold(0.8).evaluate(&case()).unwrap();
        assert_eq!(eval.score, 1.0 / 3.0);
        assert_eq!(
            eval.to_string(),
            "recall@4: 0.33 < threshold 0.80 (FAILED)\n  reasoning: 1 of 3 relevant IDs within the top 4.\n  relevant IDs found: a at rank 2\n  relevant IDs missed (2 of 3): b at rank 5, below the top 4; c not retrieved\n  repeated: a again at rank 3 (counted once, at rank 2)\n  top 4 of 6 retrieved (✓ relevant): 1 x · 2 a ✓ · 3 a (repeats rank 2) · 4 y\n  no judge: computed from the case's labels"
        );
    }

    #[test]
    fn reasoning_in_each_measures_terms() {
        let why = |m: RetrievalMetric| m.evaluate(&case()).unwrap().reasoning;
        assert_eq!(
            why(hit_rate_at(1)),
            "No hit: none of the 3 relevant IDs within the top 1."
        );
        assert_eq!(why(mrr()), "The first relevant ID is at rank 2: 1/2.");
        assert_eq!(
            why(precision_at(8)),
            "2 of the 8 places in the top 8 hold a relevant ID (only 6 retrieved: an empty place counts as not relevant); a repeat takes a place and earns nothing."
        );
        assert_eq!(
            why(average_precision()),
            "Precision at each relevant ID within the 6 retrieved: 0.50 at rank 2, 0.40 at rank 5; their sum 0.90 over the 3 relevant IDs."
        );
        assert!(why(ndcg_at(3)).starts_with("DCG 0.631 of an ideal 2.131 within the top 3"));
    }

    #[test]
    fn a_cutoff_of_zero_and_a_threshold_out_of_range_are_configuration_errors() {
        let e = recall_at(0).evaluate(&case()).unwrap_err();
        assert!(matches!(e, RetrievalError::Config(_)));
        assert!(
            e.to_string()
                .starts_with("the cutoff of recall@0 = \"0\" is invalid"),
            "{e}"
        );
        let e = mrr().threshold(1.5).evaluate(&case()).unwrap_err();
        assert!(e.to_string().contains("the threshold of mrr"), "{e}");
    }

    #[test]
    fn every_score_is_in_range_on_arbitrary_lists() {
        // Lists over a small alphabet: repeats, misses and k beyond the list.
        let letters = ["a", "b", "c", "d", "e"];
        let mut seed = 7u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..2000 {
            let list: Vec<&str> = (0..next(8)).map(|_| letters[next(5)]).collect();
            let mut grades: Vec<(&str, f64)> = Vec::new();
            for l in letters {
                if next(2) == 0 {
                    grades.push((l, next(4) as f64));
                }
            }
            if grades.is_empty() {
                grades.push(("e", 1.0));
            } else if grades.iter().all(|(_, g)| *g == 0.0) {
                grades[0].1 = 1.0;
            }
            let case = RagCase::new("q")
                .retrieved_ids(list)
                .graded_relevance(grades);
            let ranking = Ranking::of(&case).unwrap();
            for k in [None, Some(1), Some(3), Some(10)] {
                for m in Measure::ALL {
                    for gain in [Gain::Linear, Gain::Exponential] {
                        let mut metric = RetrievalMetric::new(m, k);
                        if gain == Gain::Exponential {
                            metric = metric.exponential();
                        }
                        let s = metric.score(&ranking);
                        assert!(
                            (0.0..=1.0 + 1e-12).contains(&s),
                            "{metric} = {s} on {case:?}"
                        );
                    }
                }
            }
        }
    }
}
