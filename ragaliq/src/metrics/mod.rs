//! The five evaluators and the options they take.

mod claims;
mod context;
mod faithfulness;
mod relevance;
mod sampling;

pub use claims::MAX_REASKS;
pub use sampling::{AUTO_BAND, Agreement, DEFAULT_AGREEMENT, Samples, Spread};

use crate::case::RagCase;
use crate::error::{ConfigError, Error, Result};
use crate::evaluation::{Evaluation, Metric, Usage};
use crate::judge::Judge;
use crate::verdict::{VerdictWeights, clamp_score};
use std::sync::Mutex;

/// Per-evaluation overrides of the judge's defaults.
///
/// ```
/// use ragaliq::{EvalOptions, Samples, VerdictWeights};
/// let o = EvalOptions::default()
///     .with_threshold(0.9)
///     .with_weights(VerdictWeights::WEIGHTED)
///     .with_samples(Samples::Fixed(5));
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
    /// How many times each question is asked; `None` uses the judge's.
    pub samples: Option<Samples>,
    /// The share of samples that must agree; `None` uses the judge's.
    pub agreement: Option<f64>,
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

    /// Sets how many times each question is asked.
    #[must_use]
    pub fn with_samples(mut self, samples: Samples) -> Self {
        self.samples = Some(samples);
        self
    }

    /// Sets the share of samples that must agree.
    #[must_use]
    pub fn with_agreement(mut self, agreement: f64) -> Self {
        self.agreement = Some(agreement);
        self
    }
}

/// Calls and tokens one evaluation caused.
#[derive(Default)]
pub(crate) struct Tally(Mutex<Usage>);

impl Tally {
    pub(crate) fn add(&self, usage: Usage) {
        *crate::sync::lock(&self.0) += usage;
    }

    pub(crate) fn total(&self) -> Usage {
        *crate::sync::lock(&self.0)
    }
}

/// How an evaluation samples: how many, the agreement it needs, and the
/// threshold that [`Samples::Auto`] looks at.
pub(crate) struct Plan {
    pub samples: Samples,
    pub agreement: f64,
    pub threshold: f64,
}

/// What an evaluator computes; [`evaluate`] adds the threshold and usage.
#[derive(Default)]
pub(crate) struct Scored {
    score: f64,
    reasoning: String,
    claims: Vec<crate::evaluation::ClaimVerdict>,
    passages: Vec<crate::evaluation::PassageVerdict>,
    undecided: bool,
    /// One score per sample asked (empty when no question was asked).
    sample_scores: Vec<f64>,
}

impl Scored {
    fn vacuous(reasoning: &str) -> Scored {
        Scored {
            score: 1.0,
            reasoning: reasoning.to_owned(),
            ..Scored::default()
        }
    }
}

fn sampling_median(scores: &[f64]) -> f64 {
    let mut sorted = scores.to_vec();
    sorted.sort_by(f64::total_cmp);
    sampling::median(&sorted)
}

/// The options and the case, checked: configuration errors before any call.
fn check(judge: &Judge, metric: Metric, case: &RagCase, options: &EvalOptions) -> Result<Plan> {
    case.validate()?;
    let invalid = |origin: &str, value: String, expected: &str| -> Error {
        ConfigError::Invalid {
            origin: origin.into(),
            value,
            expected: expected.into(),
        }
        .into()
    };
    let threshold = options
        .threshold
        .unwrap_or_else(|| judge.scoring().threshold(metric));
    if !(0.0..=1.0).contains(&threshold) {
        return Err(invalid(
            "threshold",
            threshold.to_string(),
            "a number from 0 to 1",
        ));
    }
    if let Some(floor) = options.confidence_floor
        && !(0.0..=1.0).contains(&floor)
    {
        return Err(invalid(
            "confidence_floor",
            floor.to_string(),
            "a number from 0 to 1",
        ));
    }
    if let Some(w) = options.weights
        && !w.is_finite()
    {
        return Err(invalid("weights", format!("{w:?}"), "finite numbers"));
    }
    let samples = options.samples.unwrap_or(judge.scoring().samples);
    samples
        .check()
        .map_err(|(value, expected)| invalid("samples", value, &expected))?;
    let agreement = options.agreement.unwrap_or(judge.scoring().agreement);
    if !(agreement > 0.5 && agreement <= 1.0) {
        return Err(invalid(
            "agreement",
            agreement.to_string(),
            "a share over 0.5 and up to 1 (0.6: 3 of 5 samples must agree)",
        ));
    }
    if metric.needs_response() && case.response.is_none() {
        return Err(Error::MissingInput {
            metric,
            what: "a response to grade: the case has none (set `.response(…)`, or `response: \"\"` in a case file to grade an empty answer)",
        });
    }
    Ok(Plan {
        samples,
        agreement,
        threshold,
    })
}

pub(crate) async fn evaluate(
    judge: &Judge,
    metric: Metric,
    case: &RagCase,
    options: &EvalOptions,
) -> Result<Evaluation> {
    let plan = check(judge, metric, case, options)?;
    let tally = Tally::default();
    let scored = match metric {
        Metric::Faithfulness => {
            faithfulness::faithfulness(judge, case, options, &plan, &tally).await?
        }
        Metric::Hallucination => {
            faithfulness::hallucination(judge, case, options, &plan, &tally).await?
        }
        Metric::Relevance => relevance::relevance(judge, case, &plan, &tally).await?,
        Metric::ContextPrecision => context::precision(judge, case, &plan, &tally).await?,
        Metric::ContextRecall => context::recall(judge, case, &plan, &tally).await?,
    };
    let score = clamp_score(scored.score);
    let passed = !scored.undecided && score >= plan.threshold;
    let spread = (scored.sample_scores.len() > 1).then(|| {
        let scores: Vec<f64> = scored
            .sample_scores
            .iter()
            .map(|s| clamp_score(*s))
            .collect();
        Spread::of(&scores, plan.threshold, passed)
    });
    Ok(Evaluation {
        metric,
        score,
        threshold: plan.threshold,
        passed,
        undecided: scored.undecided,
        reasoning: scored.reasoning,
        claims: scored.claims,
        passages: scored.passages,
        usage: tally.total(),
        spread,
    })
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Verdicts on labelled `claims` against `passages`, voted over the
/// judge's samples (for [`crate::calibration`]): one batched call per
/// sample, through the judge's recorder like any evaluation. `Auto` asks
/// its cap: calibration has no threshold to sample near.
pub(crate) async fn verify_labelled(
    judge: &Judge,
    claims: &[String],
    passages: &[String],
    samples: Samples,
) -> Result<(Vec<claims::Voted>, Usage)> {
    let plan = Plan {
        samples: Samples::Fixed(samples.max()),
        agreement: judge.scoring().agreement,
        threshold: 0.5,
    };
    let tally = Tally::default();
    let (voted, _) = claims::verify_voted(judge, claims, passages, &plan, &tally, |_| 0.0).await?;
    Ok((voted, tally.total()))
}
