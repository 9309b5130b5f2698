//! The words every metric speaks, beneath the dispatcher that calls them
//! ([`evaluate`](super::evaluate)): the way to a judge ([`Asker`], and the
//! [`Stage`]s of a cascade), how an evaluation samples ([`Plan`]), the
//! judge's defaults ([`Scoring`], [`Verification`]), what a metric computes
//! ([`Scored`], [`Interval`]), and the small readings every metric words
//! the same way ([`yes_no`], [`judge_said`], [`plural`]). The metric files
//! import these from here, never from the dispatcher.

use crate::core::judged::Person;
use crate::core::{
    Bands, ClaimVerdict, Correctness, Metric, PassageVerdict, Samples, Strategy, Uncertain, Unsure,
    VerdictWeights,
};
use crate::error::{Error, Result};
use crate::session::{Session, Tally};
use crate::tasks::History;

/// Defaults the metrics apply when an [`EvalOptions`](super::EvalOptions) leaves them open,
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
    /// Whether every question about a follow-up shows them, or all but
    /// those measured to do better bare (`Task::bare_for_follow_ups`).
    pub follow_up_history: bool,
}

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
            follow_up_history: false,
        }
    }
}

impl Scoring {
    pub(crate) fn threshold(&self, metric: Metric) -> f64 {
        self.thresholds[metric.index()]
    }
}

/// How claims (and passages) are asked about and read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Verification {
    /// Short yes/no questions, or the JSON prompts.
    pub strategy: Strategy,
    /// JSON prompts: claims asked about in one call (1: each claim alone).
    pub batch: usize,
    /// JSON prompts: whether a verdict's evidence must be found in the
    /// passages.
    pub evidence_checked: bool,
    /// Yes/no questions: P(supported) at or above which a claim is supported.
    pub claim_threshold: f64,
    /// Yes/no questions: P(relevant) at or above which a passage is relevant.
    pub passage_threshold: f64,
    /// Yes/no questions: whether a claim the judge answered no to is asked
    /// whether it is contradicted.
    pub contradiction: bool,
    /// Yes/no questions: how many times P(supported) P(contradicted) must
    /// reach for a claim to be contradicted ([`rule`](super::claims::rule)).
    pub contradiction_ratio: f64,
    /// Yes/no questions: passages longer than this are asked about in
    /// chunks (0: never).
    pub chunk_chars: usize,
    /// Claims are the text's sentences (no judge call), not what the
    /// judge extracts.
    pub sentences: bool,
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

/// What a metric computes; [`evaluate`](super::evaluate) adds the threshold, the outcome
/// and the usage.
#[derive(Default)]
pub(crate) struct Scored {
    /// The score the decided verdicts give (with several samples, the vote's).
    pub(super) score: f64,
    pub(super) reasoning: String,
    pub(super) claims: Vec<ClaimVerdict>,
    pub(super) passages: Vec<PassageVerdict>,
    /// The samples split below the required agreement on something that
    /// decides the score: the score is then the median sample's.
    pub(super) undecided: bool,
    /// One score per sample asked (empty when no question was asked).
    pub(super) sample_scores: Vec<f64>,
    /// Claims the judge wrote that were set aside (metrics over claims).
    pub(super) dropped: usize,
    /// Which criteria or metric of one's own.
    pub(super) name: Option<String>,
    /// Answer correctness's two halves.
    pub(super) precision: Option<f64>,
    pub(super) recall: Option<f64>,
    /// A metric decided by one answer: the person's verdict that decided
    /// it, and the key one is kept under.
    pub(super) person: Option<Person>,
    pub(super) review_key: Option<String>,
    /// Answer correctness's direct question: what the judge was shown, and
    /// the expected answer found in the response.
    pub(super) graded: Option<crate::core::Graded>,
    /// Some items await a person: the score with them counted against the
    /// answer and for it, and how many there are.
    pub(super) interval: Option<Interval>,
    /// A metric decided by one answer: why the answer is uncertain.
    pub(super) unsure: Option<Unsure>,
    /// Per judge of the cascade: items asked, items decided.
    pub(super) judges: Vec<(usize, usize)>,
    /// Abstention: whether the passages answer the question.
    pub(super) answerable: Option<crate::core::Answerable>,
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
    pub(super) fn of(awaiting: usize, a: f64, b: f64) -> Option<Interval> {
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
    pub(super) fn by_person(mut person: Person, judge: String, score: f64, about: &str) -> Scored {
        person.judge = judge;
        Scored {
            score,
            reasoning: format!("{person} {about}."),
            sample_scores: vec![score],
            person: Some(person),
            ..Scored::default()
        }
    }

    pub(super) fn vacuous(reasoning: &str) -> Scored {
        Scored {
            score: 1.0,
            reasoning: reasoning.to_owned(),
            ..Scored::default()
        }
    }
}

/// A judge an uncertain item is escalated to (`[[escalate]]`): its session
/// (over the same recording and trial) and its scoring (its own bands and
/// per-item thresholds).
#[derive(Clone)]
pub(crate) struct Stage {
    pub session: Session,
    pub scoring: std::sync::Arc<Scoring>,
}

/// One evaluation's way to a judge: its session, the tally its questions
/// are counted in, its scoring, and the judges after it in the cascade.
#[derive(Clone, Copy)]
pub(crate) struct Asker<'a> {
    pub(super) session: &'a Session,
    pub(super) tally: &'a Tally,
    pub(super) scoring: &'a Scoring,
    /// The judges uncertain items are escalated to, and their tallies;
    /// empty on an asker for a later judge.
    pub(super) escalate: &'a [Stage],
    pub(super) tallies: &'a [Tally],
    /// Which judge this is: 0 for the evaluation's own.
    pub(super) stage: usize,
    /// For a turn of a conversation: which, and what its questions show
    /// of the conversation before it.
    pub(super) history: Option<&'a History>,
}

impl<'a> Asker<'a> {
    /// An asker over one judge, with no cascade (calibration, claim checks
    /// and extraction outside an evaluation).
    pub(super) fn alone(session: &'a Session, tally: &'a Tally, scoring: &'a Scoring) -> Asker<'a> {
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

    pub(super) async fn ask<A: crate::tasks::Ask>(
        &self,
        ask: &A,
        sample: u32,
    ) -> Result<A::Answer> {
        self.session.ask(self.tally, ask, sample).await
    }

    /// Keeps in the recording a decision a rule made with no call in place
    /// of asking `ask` (see [`Session::rule_decided`]).
    pub(super) fn rule_decided<A: crate::tasks::Ask>(
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
    pub(super) fn review<A: crate::tasks::Ask>(
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
pub(super) fn yes_no(person: &Person) -> Result<f64> {
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
pub(super) fn judge_said(p_yes: f64, from_probabilities: bool) -> String {
    if from_probabilities {
        format!("P(yes) {p_yes:.2}")
    } else if p_yes >= 0.5 {
        "yes".to_owned()
    } else {
        "no".to_owned()
    }
}

pub(super) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
