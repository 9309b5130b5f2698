//! The five evaluators (SPEC §4) and the options they take.

mod claims;
mod context;
mod faithfulness;
mod relevance;

use crate::case::RagCase;
use crate::error::Result;
use crate::evaluation::{Evaluation, Metric, Usage};
use crate::judge::Judge;
use crate::verdict::{VerdictWeights, clamp_score};
use std::sync::Mutex;

/// Per-evaluation overrides of the judge's defaults.
///
/// ```
/// use ragaliq::{EvalOptions, VerdictWeights};
/// let o = EvalOptions::default().with_threshold(0.9).with_weights(VerdictWeights::WEIGHTED);
/// assert_eq!(o.threshold, Some(0.9));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EvalOptions {
    /// Pass threshold in [0, 1]; `None` uses the judge's default for the metric.
    pub threshold: Option<f64>,
    /// Verdict weights for faithfulness; `None` uses the judge's.
    pub weights: Option<VerdictWeights>,
    /// Hallucination's confidence floor; `None` uses the judge's.
    pub confidence_floor: Option<f64>,
}

impl EvalOptions {
    /// Sets the pass threshold.
    #[must_use]
    pub fn with_threshold(mut self, threshold: f64) -> Self {
        self.threshold = Some(threshold);
        self
    }

    /// Sets the verdict weights.
    #[must_use]
    pub fn with_weights(mut self, weights: VerdictWeights) -> Self {
        self.weights = Some(weights);
        self
    }

    /// Sets the confidence floor.
    #[must_use]
    pub fn with_confidence_floor(mut self, floor: f64) -> Self {
        self.confidence_floor = Some(floor);
        self
    }
}

/// Calls and tokens one evaluation caused.
#[derive(Default)]
pub(crate) struct Tally(Mutex<Usage>);

impl Tally {
    pub(crate) fn add(&self, usage: Usage) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) += usage;
    }

    fn total(&self) -> Usage {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// What an evaluator computes; [`evaluate`] adds the threshold and usage.
pub(crate) struct Scored {
    score: f64,
    reasoning: String,
    claims: Vec<crate::evaluation::ClaimVerdict>,
    passages: Vec<crate::evaluation::PassageVerdict>,
}

pub(crate) async fn evaluate(
    judge: &Judge,
    metric: Metric,
    case: &RagCase,
    options: &EvalOptions,
) -> Result<Evaluation> {
    case.validate()?;
    let threshold = options
        .threshold
        .unwrap_or_else(|| judge.scoring().threshold(metric));
    if !(0.0..=1.0).contains(&threshold) {
        return Err(crate::ConfigError::Invalid {
            origin: format!("threshold of {metric}"),
            value: threshold.to_string(),
            expected: "a number from 0 to 1".into(),
        }
        .into());
    }
    let tally = Tally::default();
    let scored = match metric {
        Metric::Faithfulness => faithfulness::faithfulness(judge, case, options, &tally).await?,
        Metric::Hallucination => faithfulness::hallucination(judge, case, options, &tally).await?,
        Metric::Relevance => relevance::relevance(judge, case, &tally).await?,
        Metric::ContextPrecision => context::precision(judge, case, &tally).await?,
        Metric::ContextRecall => context::recall(judge, case, &tally).await?,
    };
    let score = clamp_score(scored.score);
    Ok(Evaluation {
        metric,
        score,
        threshold,
        passed: score >= threshold,
        reasoning: scored.reasoning,
        claims: scored.claims,
        passages: scored.passages,
        usage: tally.total(),
    })
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
