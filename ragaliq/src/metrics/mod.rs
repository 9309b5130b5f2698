//! The metrics: each asks the judge a few questions through a [`Session`]
//! and scores the typed answers with a pure scorer. Every metric that
//! verifies claims goes through the one claim path ([`claims::check`]);
//! samples are asked and voted on by one driver ([`sampling`]); nothing
//! here sees the client, the recorder or the budget.

mod abstention;
mod claims;
mod context;
mod conversation;
mod correctness;
mod criteria;
mod custom;
mod decide;
mod faithfulness;
mod relevance;
mod sampling;
mod turns;

pub(crate) use claims::Verification;
#[cfg(feature = "calibration")]
pub(crate) use claims::Voted;
pub(crate) use claims::rule::Reading;
pub(crate) use conversation::evaluate;
pub use custom::{CustomAnswer, CustomMetric, CustomScore};

use crate::core::judged::Person;
use crate::core::{
    Awaiting, Bands, ClaimCounts, ClaimVerdict, ConfigError, Correctness, Criteria, Evaluation,
    JudgeShare, Metric, PassageVerdict, RagCase, Samples, Uncertain, Unsure, VerdictWeights,
    clamp_score,
};
use crate::error::{Error, Result};
use crate::session::{Session, Tally};
use crate::stats;
use crate::tasks::History;
use futures_util::future::BoxFuture;

/// The reasoning of an evaluation left undecided because the judge listed
/// no claim in a response that states something.
/// Why an evaluation is undecided when the judge listed no claim in a text
/// (`response` or `reference`) that states something.
pub(crate) fn no_claims_listed(of: &str) -> String {
    format!(
        "The judge listed no claim in a {of} that states something, even asked again: there is nothing to score it by, so it is undecided (never vacuously {}).",
        if of == "response" {
            "faithful"
        } else {
            "complete"
        }
    )
}

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

/// Defaults the metrics apply when an [`EvalOptions`] leaves them open,
/// and how claims are verified.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Scoring {
    pub thresholds: [f64; Metric::ALL.len()],
    pub weights: VerdictWeights,
    pub confidence_floor: Option<f64>,
    pub samples: Samples,
    pub agreement: f64,
    pub correctness: Correctness,
    /// The form criteria given as plain text take where nothing else says
    /// (calibration, case files without `form`).
    pub criteria_form: crate::core::CriteriaForm,
    pub verification: Verification,
    /// Said in the judge's description when a file's fitted thresholds do
    /// not apply to this judge's model ([`crate::config::Fitted::note`]).
    pub fitted_note: Option<String>,
    /// Verdicts and scores are read from the judge's token probabilities
    /// (short questions, a provider that returns them): asking again gives
    /// the same probability, so several samples are refused.
    pub reads_probabilities: bool,
    /// Where this judge's readings of each kind are uncertain.
    pub bands: Bands,
    /// What an item still uncertain after the last judge does to its test.
    pub uncertain: Uncertain,
    /// Answer correctness decides a found answer with nothing against it
    /// with no call (the found rule).
    pub found_rule: bool,
    /// The earlier turns of a conversation a follow-up's questions show.
    pub window: crate::core::Window,
}

/// Why `samples` above 1 is refused where verdicts are read from token
/// probabilities.
pub(crate) const SAMPLES_UNDER_PROBABILITIES: &str = "1 here: verdicts are read from the judge's token probabilities, which are the same every time the same question is asked (they do not depend on the temperature or on what was sampled), so every vote would be unanimous and the extra samples would cost and tell nothing. To sample a judge, ask for the word it writes (`strategy = \"word\"`) or the JSON prompts (`strategy = \"json\"`) with `temperature` above 0";

impl Default for Scoring {
    fn default() -> Self {
        Scoring {
            thresholds: Metric::ALL.map(Metric::default_threshold),
            weights: VerdictWeights::RATIO,
            confidence_floor: None,
            samples: Samples::default(),
            agreement: crate::core::DEFAULT_AGREEMENT,
            correctness: Correctness::default(),
            criteria_form: crate::core::CriteriaForm::YesNo,
            verification: Verification {
                strategy: crate::core::Strategy::default(),
                batch: crate::core::DEFAULT_VERIFY_BATCH,
                evidence_checked: true,
                claim_threshold: crate::core::DEFAULT_CLAIM_THRESHOLD,
                passage_threshold: crate::core::DEFAULT_PROBABILITY_THRESHOLD,
                contradiction: true,
                contradiction_ratio: crate::core::DEFAULT_CONTRADICTION_RATIO,
                chunk_chars: 0,
                sentences: false,
            },
            fitted_note: None,
            reads_probabilities: false,
            bands: Bands::default(),
            uncertain: Uncertain::default(),
            found_rule: true,
            window: crate::core::Window::DEFAULT,
        }
    }
}

impl Scoring {
    pub(crate) fn threshold(&self, metric: Metric) -> f64 {
        self.thresholds[metric.index()]
    }
}

/// How an evaluation samples: how many, the agreement it needs, and the
/// threshold that [`Samples::Auto`] looks at.
pub(crate) struct Plan {
    pub samples: Samples,
    pub agreement: f64,
    pub threshold: f64,
    /// Whether a person's verdict in the recording decides in place of the
    /// judge's reading: in every evaluation, never in calibration (which
    /// measures the judge).
    pub persons: bool,
    /// What an item still uncertain after the last judge does.
    pub uncertain: Uncertain,
}

/// What a metric computes; [`evaluate`] adds the threshold, the outcome
/// and the usage.
#[derive(Default)]
pub(crate) struct Scored {
    /// The score the decided verdicts give (with several samples, the vote's).
    score: f64,
    reasoning: String,
    claims: Vec<ClaimVerdict>,
    passages: Vec<PassageVerdict>,
    /// The samples split below the required agreement on something that
    /// decides the score: the score is then the median sample's.
    undecided: bool,
    /// One score per sample asked (empty when no question was asked).
    sample_scores: Vec<f64>,
    /// Claims the judge wrote that were set aside (metrics over claims).
    dropped: usize,
    /// Which criteria or metric of one's own.
    name: Option<String>,
    /// Answer correctness's two halves.
    precision: Option<f64>,
    recall: Option<f64>,
    /// A metric decided by one answer: the person's verdict that decided
    /// it, and the key one is kept under.
    person: Option<Person>,
    review_key: Option<String>,
    /// Answer correctness's direct question: what the judge was shown, and
    /// the expected answer found in the response.
    graded: Option<crate::core::Graded>,
    /// Some items await a person: the score with them counted against the
    /// answer and for it, and how many there are.
    interval: Option<Interval>,
    /// A metric decided by one answer: why the answer is uncertain.
    unsure: Option<Unsure>,
    /// Per judge of the cascade: items asked, items decided.
    judges: Vec<(usize, usize)>,
    /// Abstention: whether the passages answer the question.
    answerable: Option<crate::core::Answerable>,
}

/// A score counted with its uncertain items each way.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Interval {
    pub low: f64,
    pub high: f64,
    pub items: usize,
}

impl Interval {
    /// The interval of a score whose items `awaiting` of are uncertain:
    /// `low` and `high` the scores with them counted each way (in either
    /// order); `None` when no item is uncertain.
    fn of(awaiting: usize, a: f64, b: f64) -> Option<Interval> {
        (awaiting > 0).then(|| Interval {
            low: a.min(b),
            high: a.max(b),
            items: awaiting,
        })
    }
}

impl Scored {
    /// A metric decided by one answer, decided by a person's verdict: the
    /// score their word gives (`score`), the judge's own reading in the
    /// message (`judge`), what the answer is about (`about`: "to whether
    /// the response answers the question").
    fn by_person(mut person: Person, judge: String, score: f64, about: &str) -> Scored {
        person.judge = judge;
        Scored {
            score,
            reasoning: format!("{person} {about}."),
            sample_scores: vec![score],
            person: Some(person),
            ..Scored::default()
        }
    }

    fn vacuous(reasoning: &str) -> Scored {
        Scored {
            score: 1.0,
            reasoning: reasoning.to_owned(),
            ..Scored::default()
        }
    }

    /// The judge listed no claim in a text that states something, even
    /// asked again: undecided, with its own reason, and what the judge
    /// wrote that was not the text's, listed and counted.
    fn no_claims_listed(extracted: &crate::tasks::Extracted) -> Scored {
        Scored {
            score: 0.0,
            reasoning: format!(
                "{}{}",
                no_claims_listed(extracted.of),
                claims::dropped(extracted)
            ),
            undecided: true,
            sample_scores: vec![0.0],
            dropped: extracted.dropped.len(),
            ..Scored::default()
        }
    }
}

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

/// A judge an uncertain item is escalated to (`[[escalate]]`): its session
/// (over the same recording and trial) and its scoring (its own bands and
/// per-item thresholds).
#[derive(Clone)]
pub(crate) struct Stage {
    pub session: Session,
    pub scoring: std::sync::Arc<Scoring>,
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
        history: history.map(|h| h.shown).filter(|s| !s.is_empty()),
        turns: Vec::new(),
        answerable: scored.answerable,
    })
}

/// One evaluation's way to a judge: its session, the tally its questions
/// are counted in, its scoring, and the judges after it in the cascade.
#[derive(Clone, Copy)]
pub(crate) struct Asker<'a> {
    session: &'a Session,
    tally: &'a Tally,
    scoring: &'a Scoring,
    /// The judges uncertain items are escalated to, and their tallies;
    /// empty on an asker for a later judge.
    escalate: &'a [Stage],
    tallies: &'a [Tally],
    /// Which judge this is: 0 for the evaluation's own.
    stage: usize,
    /// For a turn of a conversation: which, and what its questions show
    /// of the conversation before it.
    history: Option<&'a History>,
}

impl<'a> Asker<'a> {
    /// An asker over one judge, with no cascade (calibration, claim checks
    /// and extraction outside an evaluation).
    fn alone(session: &'a Session, tally: &'a Tally, scoring: &'a Scoring) -> Asker<'a> {
        Asker {
            session,
            tally,
            scoring,
            escalate: &[],
            tallies: &[],
            stage: 0,
            history: None,
        }
    }

    /// For a turn of a conversation: which turn, and what its questions
    /// show of the conversation before it.
    pub(super) fn history(&self) -> Option<&'a History> {
        self.history
    }

    /// How many judges the cascade has, this one included.
    pub(super) fn judges(&self) -> usize {
        1 + self.escalate.len()
    }

    /// The asker for judge `stage` of the cascade (0: this one).
    pub(super) fn at(&self, stage: usize) -> Asker<'a> {
        if stage == 0 {
            return *self;
        }
        let next = &self.escalate[stage - 1];
        Asker {
            session: &next.session,
            tally: &self.tallies[stage - 1],
            scoring: &next.scoring,
            escalate: &[],
            tallies: &[],
            stage,
            history: self.history,
        }
    }

    /// The judge's scoring: its bands, its per-item thresholds.
    pub(super) fn scoring(&self) -> &'a Scoring {
        self.scoring
    }

    /// The judge's model, as messages name it.
    pub(super) fn model(&self) -> &'a str {
        &self.session.asking().model
    }

    /// Which judge of the cascade this is (0: the evaluation's own).
    pub(super) fn stage(&self) -> usize {
        self.stage
    }

    async fn ask<A: crate::tasks::Ask>(&self, ask: &A, sample: u32) -> Result<A::Answer> {
        self.session.ask(self.tally, ask, sample).await
    }

    /// Keeps in the recording a decision a rule made with no call in place
    /// of asking `ask` (see [`Session::rule_decided`]).
    fn rule_decided<A: crate::tasks::Ask>(
        &self,
        ask: &A,
        task: &str,
        rule: &str,
        version: &str,
        reply: &serde_json::Value,
    ) {
        self.session.rule_decided(ask, task, rule, version, reply);
    }

    /// The key of what item `item` of `ask` judged, and, when `persons`,
    /// the person's verdict on it the recording holds (see
    /// [`Session::reviewed`]). Asks the judge nothing.
    fn review<A: crate::tasks::Ask>(
        &self,
        ask: &A,
        item: usize,
        persons: bool,
    ) -> Result<(Option<String>, Option<Person>)> {
        if persons {
            return self.session.reviewed(self.tally, ask, item);
        }
        let key = crate::core::judged::items(&ask.task_name(), &ask.subject())
            .into_iter()
            .find(|j| j.item == item)
            .map(|j| j.key);
        Ok((key, None))
    }
}

/// A person's yes or no as a score (1 or 0); an error for any other word.
fn yes_no(person: &Person) -> Result<f64> {
    match person.verdict.as_str() {
        "yes" => Ok(1.0),
        "no" => Ok(0.0),
        other => Err(Error::Reviewed {
            problem: format!("`{other}` on a yes/no question: give yes or no"),
        }),
    }
}

/// The judge's own reading of a yes/no answer, for a message beside a
/// person's verdict: `P(yes) 0.31`, or the word it wrote.
fn judge_said(p_yes: f64, from_probabilities: bool) -> String {
    if from_probabilities {
        format!("P(yes) {p_yes:.2}")
    } else if p_yes >= 0.5 {
        "yes".to_owned()
    } else {
        "no".to_owned()
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
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
