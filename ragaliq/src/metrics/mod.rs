//! The metrics: each asks the judge a few questions through a [`Session`]
//! and scores the typed answers with a pure scorer. Every metric that
//! verifies claims goes through the one claim path ([`claims::check`]);
//! samples are asked and voted on by one driver ([`sampling`]); nothing
//! here sees the client, the recorder or the budget.

mod abstention;
mod claims;
mod context;
mod correctness;
mod criteria;
mod custom;
mod decide;
mod faithfulness;
mod relevance;
mod sampling;
mod turns;
mod vocab;

#[cfg(feature = "calibration")]
pub(crate) use claims::Voted;
pub(crate) use claims::rule::Reading;
pub use custom::{CustomAnswer, CustomMetric, CustomScore};
pub(crate) use vocab::{Scoring, Stage, Verification};

use crate::core::{
    Assessed, Awaiting, ClaimCounts, ClaimVerdict, ConfigError, Conversation, Correctness,
    Criteria, Evaluation, JudgeShare, Metric, RagCase, Samples, Uncertain, VerdictWeights,
    clamp_score,
};
use crate::error::{Error, Result};
use crate::session::{Session, Tally};
use crate::stats;
use crate::tasks::History;
use futures_util::future::BoxFuture;
use vocab::{Asker, Plan};

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
#[non_exhaustive]
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
    /// How answer correctness is decided; `None` uses the judge's (the
    /// direct question, unless configured otherwise).
    pub correctness: Option<Correctness>,
    /// What an item the judges are unsure of does to the test; `None` uses
    /// the judge's (`[scoring] uncertain`, by default awaiting a person and
    /// failing meanwhile).
    pub uncertain: Option<Uncertain>,
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

    /// Sets how answer correctness is decided (the direct question, or
    /// claims both ways: F1, precision or recall).
    #[must_use]
    pub fn with_correctness(mut self, correctness: Correctness) -> Self {
        self.correctness = Some(correctness);
        self
    }

    /// Sets what an item the judges are unsure of does to the test.
    ///
    /// ```
    /// use ragaliq::{EvalOptions, Uncertain};
    /// let o = EvalOptions::default().with_uncertain(Uncertain::Pass);
    /// assert_eq!(o.uncertain, Some(Uncertain::Pass));
    /// ```
    #[must_use]
    pub fn with_uncertain(mut self, uncertain: Uncertain) -> Self {
        self.uncertain = Some(uncertain);
        self
    }
}

/// Why `samples` above 1 is refused where verdicts are read from token
/// probabilities.
pub(crate) const SAMPLES_UNDER_PROBABILITIES: &str = "1 here: verdicts are read from the judge's token probabilities, which are the same every time the same question is asked (they do not depend on the temperature or on what was sampled), so every vote would be unanimous and the extra samples would cost and tell nothing. To sample a judge, ask for the word it writes (`strategy = \"word\"`) or the JSON prompts (`strategy = \"json\"`) with `temperature` above 0";

/// What an evaluation measures: a built-in metric, criteria, or a metric
/// of one's own.
#[derive(Clone, Copy)]
pub(crate) enum Subject<'a> {
    Metric(Metric),
    Criteria(&'a Criteria),
    Custom(&'a CustomMetric),
}

impl Subject<'_> {
    fn metric(&self) -> Metric {
        match self {
            Subject::Metric(m) => *m,
            Subject::Criteria(_) => Metric::Criteria,
            Subject::Custom(_) => Metric::Custom,
        }
    }
}

/// The options and the case, checked: configuration errors before any call.
fn check(
    scoring: &Scoring,
    subject: Subject<'_>,
    case: &RagCase,
    options: &EvalOptions,
) -> Result<Plan> {
    case.validate()?;
    if let Subject::Custom(m) = subject {
        m.check()?;
    }
    let metric = subject.metric();
    let invalid = |origin: &str, value: String, expected: &str| -> Error {
        ConfigError::Invalid {
            origin: origin.into(),
            value,
            expected: expected.into(),
        }
        .into()
    };
    let threshold = options.threshold.unwrap_or_else(|| match subject {
        Subject::Custom(m) => m.threshold(),
        _ => scoring.threshold(metric),
    });
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
    let samples = options.samples.unwrap_or(scoring.samples);
    samples
        .check()
        .map_err(|(value, expected)| invalid("samples", value, &expected))?;
    if scoring.reads_probabilities && samples.max() > 1 {
        return Err(invalid(
            "samples",
            samples.to_string(),
            SAMPLES_UNDER_PROBABILITIES,
        ));
    }
    let agreement = options.agreement.unwrap_or(scoring.agreement);
    if !(agreement > 0.5 && agreement <= 1.0) {
        return Err(invalid(
            "agreement",
            agreement.to_string(),
            "a share over 0.5 and up to 1 (0.6: 3 of 5 samples must agree)",
        ));
    }
    if metric.needs_response() {
        match case.response.as_deref() {
            None => {
                return Err(Error::MissingInput {
                    metric,
                    what: "a response to grade: the case has none (set `.response(…)`, or `response:` in a case file)",
                });
            }
            // Nothing said is nothing to grade: an empty answer would
            // otherwise be vacuously faithful, or precise against any
            // reference. A pipeline that answered nothing has failed
            // before any metric could say so.
            Some(r) if r.trim().is_empty() => {
                return Err(Error::MissingInput {
                    metric,
                    what: "a response that says something: the response is empty, and an empty answer has nothing to grade (never a pass: the pipeline answered nothing)",
                });
            }
            Some(_) => {}
        }
    }
    Ok(Plan {
        samples,
        agreement,
        threshold,
        persons: true,
        uncertain: options.uncertain.unwrap_or(scoring.uncertain),
    })
}

/// A judge's session and scoring, and the judges it escalates uncertain
/// items to.
#[derive(Clone, Copy)]
pub(crate) struct Judges<'a> {
    pub session: &'a Session,
    pub scoring: &'a Scoring,
    pub escalate: &'a [Stage],
}

// Evaluating a conversation: every turn (or one) as a case read with the
// turns before it, through the same `evaluate_here` as a single case, then
// one evaluation over the turns (`Evaluation::of_turns`).

/// `subject` on `assessed` (a case, a conversation, or one turn of it),
/// asked through the judges, with `options` over their defaults. A
/// conversation's turns are asked at once (each turn's questions depend on
/// its history as given, not on another turn's verdicts); the first turn
/// that could not be evaluated is the error, naming it.
///
/// Boxed here, as are [`verify_claim`] and
/// [`extract_claims`]: the future is made into a
/// trait object inside ragaliq, so the evaluation's state machines (every
/// metric, the session, the client) are compiled once, in this crate,
/// instead of again in every test crate that awaits them (measured in
/// BENCHMARKS.md, "A lean build").
pub(crate) fn evaluate<'a>(
    judges: Judges<'a>,
    subject: Subject<'a>,
    assessed: Assessed<'a>,
    options: &'a EvalOptions,
) -> BoxFuture<'a, Result<Evaluation>> {
    Box::pin(async move {
        match assessed {
            Assessed::Case(case) => evaluate_here(judges, subject, case, options, false).await,
            Assessed::Turn(conversation, n) => {
                turn(judges, subject, conversation, n, options).await
            }
            Assessed::Conversation(conversation) => {
                conversation.validate()?;
                // Every turn runs to its end (in collect mode each queues
                // its questions in the same round), then the first turn
                // that could not be evaluated is the error.
                let turns = futures_util::future::join_all(
                    (1..=conversation.turns.len())
                        .map(|n| turn(judges, subject, conversation, n, options)),
                )
                .await
                .into_iter()
                .collect::<Result<Vec<_>>>()?;
                Ok(Evaluation::of_turns(turns))
            }
        }
    })
}

/// Turn `n` of `conversation`, read with the turns before it.
async fn turn(
    judges: Judges<'_>,
    subject: Subject<'_>,
    conversation: &Conversation,
    n: usize,
    options: &EvalOptions,
) -> Result<Evaluation> {
    let case = conversation.case(n)?;
    let mut evaluation = evaluate_here(judges, subject, &case, options, true)
        .await
        .map_err(|e| match e {
            // A follow-up's case names its turn; a first turn's is named here.
            Error::Case(mut c) => {
                if n == 1 {
                    c.problem = format!("turn 1: {}", c.problem);
                }
                Error::Case(c)
            }
            e => Error::InTurn {
                turn: n,
                source: Box::new(e),
            },
        })?;
    evaluation.question = Some(case.query);
    Ok(evaluation)
}

/// `subject` on `case`; `in_conversation` when the case is a turn of a
/// conversation (its questions then say which, even the first turn's,
/// whose questions are a single case's word for word).
pub(crate) async fn evaluate_here(
    judges: Judges<'_>,
    subject: Subject<'_>,
    case: &RagCase,
    options: &EvalOptions,
    in_conversation: bool,
) -> Result<Evaluation> {
    let Judges {
        session,
        scoring,
        escalate,
    } = judges;
    let plan = check(scoring, subject, case, options)?;
    let tally = Tally::default();
    let tallies: Vec<Tally> = escalate.iter().map(|_| Tally::default()).collect();
    let history = (in_conversation || !case.history.is_empty()).then(|| History {
        conversation: case.id.clone(),
        turn: case.turn_number(),
        shown: scoring.window.shown(&case.history),
        every_question: scoring.follow_up_history,
    });
    let ask = Asker {
        session,
        tally: &tally,
        scoring,
        escalate,
        tallies: &tallies,
        stage: 0,
        history: history.as_ref(),
    };
    let how = scoring.verification;
    let metric = subject.metric();
    let scored = match subject {
        Subject::Metric(Metric::Faithfulness) => {
            let weights = options.weights.unwrap_or(scoring.weights);
            faithfulness::faithfulness(&ask, how, case, weights, &plan).await?
        }
        Subject::Metric(Metric::Hallucination) => {
            let floor = options.confidence_floor.or(scoring.confidence_floor);
            faithfulness::hallucination(&ask, how, case, floor, &plan).await?
        }
        Subject::Metric(Metric::Relevance) => relevance::relevance(&ask, case, &plan).await?,
        Subject::Metric(Metric::ContextPrecision) => context::precision(&ask, case, &plan).await?,
        Subject::Metric(Metric::ContextRecall) => context::recall(&ask, case, &plan).await?,
        Subject::Metric(Metric::Correctness) => {
            let measure = options.correctness.unwrap_or(scoring.correctness);
            correctness::correctness(&ask, how, case, measure, &plan).await?
        }
        Subject::Criteria(c) => criteria::criteria(&ask, c, case, &plan).await?,
        Subject::Custom(m) => custom::custom(&ask, m, case, &plan).await?,
        Subject::Metric(Metric::Abstention) => abstention::abstention(&ask, case, &plan).await?,
        Subject::Metric(Metric::Consistency) => turns::consistency(&ask, case, &plan).await?,
        Subject::Metric(Metric::Retention) => turns::retention(&ask, case, &plan).await?,
        Subject::Metric(Metric::Criteria) => {
            return Err(Error::MissingInput {
                metric,
                what: "the criteria: use `Judge::criteria(&case, \"…\")` or `assert_judged!`",
            });
        }
        Subject::Metric(Metric::Retrieval) => {
            return Err(Error::MissingInput {
                metric,
                what: "a measure and no judge: retrieval is computed from the case's labels, with `ragaliq::retrieval` (`recall_at(5).evaluate(&case)`) or `assert_retrieved!`",
            });
        }
        Subject::Metric(_) => {
            return Err(Error::MissingInput {
                metric,
                what: "the metric's definition: use `Judge::custom(&metric, &case)`",
            });
        }
    };
    // A split vote's score is the median sample's: the decided verdicts'
    // score would pretend the judge made up its mind.
    let score = clamp_score(if scored.undecided {
        stats::median(&scored.sample_scores)
    } else {
        scored.score
    });
    // Counted with its uncertain items each way, the score may still fall
    // on one side of the threshold: then the test is decided whatever a
    // person would say of them. Otherwise it awaits a person.
    let awaiting = scored
        .interval
        .filter(|i| i.low < plan.threshold && i.high >= plan.threshold)
        .map(|i| Awaiting {
            low: clamp_score(i.low),
            high: clamp_score(i.high),
            items: i.items,
            meanwhile: plan.uncertain,
        });
    let passed = match awaiting {
        Some(_) => plan.uncertain == Uncertain::Pass,
        None => !scored.undecided && score >= plan.threshold,
    };
    let spread = (scored.sample_scores.len() > 1).then(|| {
        let scores: Vec<f64> = scored
            .sample_scores
            .iter()
            .map(|s| clamp_score(*s))
            .collect();
        stats::spread(&scores, plan.threshold, passed)
    });
    // The direct question checks no claim: no claim counts to show.
    let counts = (metric.verifies_claims() && scored.graded.is_none())
        .then(|| ClaimCounts::of(&scored.claims, scored.dropped));
    let mut usage = tally.total();
    for t in &tallies {
        usage += t.total();
    }
    let judges = if escalate.is_empty() {
        Vec::new()
    } else {
        (0..ask.judges())
            .map(|k| {
                let (asked, decided) = scored.judges.get(k).copied().unwrap_or_default();
                JudgeShare {
                    model: ask.at(k).model().to_owned(),
                    asked,
                    decided,
                    usage: if k == 0 {
                        tally.total()
                    } else {
                        tallies[k - 1].total()
                    },
                }
            })
            .collect()
    };
    Ok(Evaluation {
        metric,
        name: scored.name,
        score,
        threshold: plan.threshold,
        passed,
        undecided: scored.undecided,
        reasoning: scored.reasoning,
        counts,
        claims: scored.claims,
        passages: scored.passages,
        usage,
        spread,
        precision: scored.precision,
        recall: scored.recall,
        person: scored.person,
        review_key: scored.review_key,
        graded: scored.graded,
        retrieval: None,
        awaiting,
        unsure: scored.unsure,
        judges,
        turn: history.as_ref().map(|h| h.turn),
        question: None,
        // What the judge was shown: the earlier turns where a question of
        // this evaluation showed them (questions asked bare, as relevance's
        // are by default, and rules that ask nothing show nothing).
        history: history
            .filter(|_| tally.showed_history() || tallies.iter().any(Tally::showed_history))
            .map(|h| h.shown)
            .filter(|s| !s.is_empty()),
        turns: Vec::new(),
        answerable: scored.answerable,
    })
}

#[cfg(feature = "calibration")]
/// Verdicts on labelled `claims` against `passages`, voted over `samples`
/// (for [calibration](crate::calibration())): one batched call per sample, through the
/// session's recording like any evaluation. `Auto` asks its cap:
/// calibration has no threshold to sample near.
pub(crate) async fn verify_labelled(
    session: &Session,
    scoring: &Scoring,
    claims: &[String],
    passages: &[String],
) -> Result<(Vec<Voted>, crate::core::Usage)> {
    let plan = Plan {
        samples: Samples::Fixed(scoring.samples.max()),
        agreement: scoring.agreement,
        threshold: 0.5,
        persons: false,
        // Calibration reads the verdict at the threshold and, beside it,
        // whether the judge's band leaves the claim uncertain.
        uncertain: Uncertain::Fail,
    };
    let tally = Tally::default();
    let ask = Asker::alone(session, &tally, scoring);
    let mut checked = claims::check(&ask, claims, passages, &plan, |_| 0.0).await?;
    // A claim read inside the band is read at the threshold here: the
    // all-items agreement counts it, and calibration's own `by the band`
    // line reads the band from the probability. Only a split vote or an
    // ungrounded verdict stays undecided.
    for v in &mut checked.voted {
        if v.unsure
            .as_ref()
            .is_some_and(|u| u.why == crate::core::UnsureWhy::InBand)
        {
            v.undecided = false;
        }
    }
    Ok((checked.voted, tally.total()))
}

/// One claim checked against `passages` through the claim path, as a
/// [`ClaimVerdict`] (for [`Judge::verify_claim`](crate::Judge::verify_claim)).
/// Boxed, as [`evaluate`] says why.
pub(crate) fn verify_claim<'a>(
    session: &'a Session,
    scoring: &'a Scoring,
    claim: &'a str,
    passages: &'a [String],
) -> BoxFuture<'a, Result<ClaimVerdict>> {
    Box::pin(verify_claim_here(session, scoring, claim, passages))
}

async fn verify_claim_here(
    session: &Session,
    scoring: &Scoring,
    claim: &str,
    passages: &[String],
) -> Result<ClaimVerdict> {
    let plan = Plan {
        samples: scoring.samples,
        agreement: scoring.agreement,
        threshold: 0.5,
        persons: true,
        uncertain: scoring.uncertain,
    };
    let tally = Tally::default();
    let ask = Asker::alone(session, &tally, scoring);
    let claims = [claim.to_owned()];
    let checked = claims::check(&ask, &claims, passages, &plan, |set| {
        VerdictWeights::RATIO.score(set.iter().map(|v| v.verdict))
    })
    .await?;
    let mut details = claims::details(&claims, checked.voted, |v| {
        v.verdict != crate::core::Verdict::Supported
    });
    Ok(details.remove(0))
}

/// The claims of `text` (a response, or an expected answer), as the
/// metrics take them: extracted by the judge (once per text, memoised) or,
/// with `sentences`, its sentences. Claims the judge wrote that are not in
/// the text are left out. Boxed, as [`evaluate`] says why.
pub(crate) fn extract_claims<'a>(
    session: &'a Session,
    scoring: &'a Scoring,
    query: &'a str,
    text: &'a str,
) -> BoxFuture<'a, Result<(Vec<String>, crate::core::Usage)>> {
    Box::pin(extract_claims_here(session, scoring, query, text))
}

async fn extract_claims_here(
    session: &Session,
    scoring: &Scoring,
    query: &str,
    text: &str,
) -> Result<(Vec<String>, crate::core::Usage)> {
    let tally = Tally::default();
    let ask = Asker::alone(session, &tally, scoring);
    let extracted = claims::extract(&ask, scoring.verification, query, text, "response").await?;
    Ok((extracted.claims, tally.total()))
}
