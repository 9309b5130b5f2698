//! Suite reports: JSON (the schema below), JUnit XML, Markdown and a console
//! table; combining reports from several processes or machines; and
//! run-to-run comparison against a previous JSON report.
//!
//! `report.json`:
//!
//! ```text
//! {
//!   "ragaliq_report": 2,                       // format version
//!   "suite": "tests/rag_cases",
//!   "judge": { "provider": "openai", "model": "gpt-4o-mini" },
//!   "mode": "replay",
//!   "run": "9f1c…",                            // the run's id (NEXTEST_RUN_ID, RAGALIQ_RUN_ID, or the process)
//!   "results": [{                              // one per trial, each counted once
//!     "case": "refund-window", "metric": "faithfulness",
//!     "name": "no-promise" | "recall@5" | absent,   // criteria's name, a retrieval metric's
//!     "outcome": "passed" | "failed" | "awaiting" | "undecided" | "judge_error" | "config_error",
//!     "gated": true | absent,                  // a low score a pass-rate gate allowed
//!     "awaiting": { "low", "high", "items", "meanwhile": "fail" | "pass" } | absent,
//!     "score": 0.5 | null, "threshold": 0.7,
//!     "reasoning": "…", "error": "…" | absent,
//!     "pending_review": true | absent,         // the recording is new or changed and awaits `cargo insta review`
//!     "claims": [{ "claim", "verdict", "evidence", "confidence", "failed", "agreement", "undecided",
//!                  "person": { "verdict", "by", "note", "judge" } | absent, "review_key" }],
//!     "passages": [{ "rank", "relevant", "reason", "person" | absent, "review_key" }],
//!     "retrieval": { "k", "listed", "matched_by": "ids" | "text",       // retrieval metrics only
//!                    "relevant": [{ "id", "grade", "rank" | null }],
//!                    "top": [{ "rank", "id", "grade", "repeat_of" | absent }],
//!                    "repeats": [{ "id", "rank", "first" }] } | absent,
//!     "spread": { "samples", "min", "median", "max", "flips" } | absent,
//!     "turns": [{ "turn", "outcome", "score", "reasoning", "claims", "passages",   // a conversation:
//!                 "awaiting", "history": { "said": [{ "turn", "user", "assistant" }] },  // one per turn
//!                 "retrieval" }] | absent,
//!     "usage": { "calls", "input_tokens", "output_tokens", "replayed", "shared",
//!                "reviewed" },                // verdicts from a person (absent when 0)
//!     "file": "tests/rag_cases/refunds.yaml", "line": 3
//!   }],
//!   "summary": {
//!     "trials", "passed", "failed", "awaiting", "by_person", "undecided", "judge_errors", "config_errors",
//!     "pending_review", "pass_rate",
//!     "metrics": { "faithfulness": { "count", "mean" | absent, "awaiting" | absent }, "recall@5": { … } },
//!                                              // per trial name: the mean of decided scores; trials awaiting a person left out, counted

//!     "usage": { … }, "estimated_cost_usd": 0.0123 | null,
//!     "budget_usd": 5.0 | null, "skipped_calls": 0, "processes": 3
//!   },
//!   "changes": [{ "case", "metric", "baseline", "current", "delta", "regression" }],
//!   "cases": {                                 // what each case graded, for report.html
//!     "refund-window": { "query", "response", "passages": [], "expected_answer", "expected_facts": [],
//!                        "turns": [{ "query", "response", "passages", "expected_answer" }] | absent }
//!   }
//! }
//! ```
//!
//! `report.html`, written beside it, shows the same run as a page: see
//! [`Report::html`].

use super::cases::LoadedCase;
use super::gate_result::{GateResult, GateStatus};
use crate::core::{
    Awaiting, ClaimCounts, ClaimVerdict, Evaluation, JudgeShare, Metric, PassageVerdict, Retrieved,
    Shown, Uncertain, Usage,
};
use crate::core::{Mode, Spread};
use crate::error::Error;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The report format's version: 3 adds `cases` (format 2 reports still
/// read, without them).
pub const FORMAT: u32 = 3;

/// A suite run, as written to `report.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`FORMAT`].
    pub ragaliq_report: u32,
    /// The case folder.
    pub suite: String,
    /// The judge.
    pub judge: JudgeInfo,
    /// The recording mode.
    pub mode: Mode,
    /// The run's id.
    #[serde(default)]
    pub run: String,
    /// One per trial, ordered by case and metric, each counted once.
    pub results: Vec<TrialResult>,
    /// Totals.
    pub summary: Summary,
    /// Score changes against a baseline report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Change>,
    /// What each case of the results graded: its query, response, passages
    /// and expected answer, by case id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cases: BTreeMap<String, CaseText>,
    /// The gates checked over the run ([`check`](super::gates::check)):
    /// empty when none were set, or the run was not whole here (a filtered
    /// run, one process of a nextest run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<GateResult>,
}

/// A case's texts, as the report shows them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseText {
    /// The user's question.
    pub query: String,
    /// The answer graded, when the case has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
    /// The retrieved passages, in rank order.
    #[serde(default)]
    pub passages: Vec<String>,
    /// The reference answer, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_answer: Option<String>,
    /// The expected facts, when given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expected_facts: Vec<String>,
    /// A conversation: each turn's texts, in order (the fields above are
    /// then its last turn's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<TurnText>,
}

/// One turn of a conversation, as the report shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TurnText {
    /// The user's message.
    pub query: String,
    /// The assistant's answer, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
    /// The passages retrieved for the turn, in rank order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passages: Vec<String>,
    /// The turn's reference answer, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_answer: Option<String>,
}

impl CaseText {
    pub(super) fn of(case: &LoadedCase) -> CaseText {
        CaseText {
            query: case.case.query.clone(),
            response: case.case.response.clone(),
            passages: case.case.context.clone(),
            expected_answer: case.case.expected_answer.clone(),
            expected_facts: case.case.expected_facts.clone(),
            turns: case
                .conversation
                .iter()
                .flat_map(|c| &c.turns)
                .map(|t| TurnText {
                    query: t.query.clone(),
                    response: t.response.clone(),
                    passages: t.context.clone(),
                    expected_answer: t.expected_answer.clone(),
                })
                .collect(),
        }
    }
}

/// Which judge graded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeInfo {
    /// Provider name.
    pub provider: String,
    /// Model.
    pub model: String,
}

/// How a trial ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Score at or above the threshold.
    Passed,
    /// Score below the threshold.
    Failed,
    /// The judge is unsure of items that decide the score, no stronger
    /// judge decided them, and no person has yet: no verdict, so it counts
    /// neither way in a gate or a mean. The trial fails until a person
    /// gives the verdict (`uncertain = "fail"`, the default) or passes
    /// meanwhile (`"pass"`).
    Awaiting,
    /// The judge listed no claim in a response that states something.
    Undecided,
    /// No score: the judge could not answer, its answer could not be used,
    /// or the budget was spent.
    #[serde(alias = "error")]
    JudgeError,
    /// No score: the case or the settings cannot be scored this way.
    ConfigError,
    /// No score: the recording could not serve the trial (replay mode:
    /// missing or stale; or unreadable): a setup problem, and the judge was
    /// not asked.
    RecordingError,
    /// No score yet: collect mode (`cargo ragaliq record --batch`) queued
    /// the trial's questions for a provider's batch API; the next round
    /// scores it.
    Queued,
}

impl Outcome {
    fn label(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Awaiting => "awaiting a person",
            Outcome::Undecided => "undecided",
            Outcome::JudgeError => "judge error",
            Outcome::ConfigError => "configuration error",
            Outcome::RecordingError => "recording error",
            Outcome::Queued => "queued",
        }
    }
}

/// One trial's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrialResult {
    /// Case id.
    pub case: String,
    /// Metric.
    pub metric: Metric,
    /// For criteria, their name (a case may have several).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Outcome.
    pub outcome: Outcome,
    /// The score, when there is one.
    pub score: Option<f64>,
    /// The threshold applied.
    pub threshold: f64,
    /// The reasoning.
    #[serde(default)]
    pub reasoning: String,
    /// The error, for the error outcomes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The case's recording is new or changed and awaits review; the trial
    /// fails until it is accepted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pending_review: bool,
    /// The case marks a bad answer: the trial passes when the score is
    /// below the threshold (`failed`: the answer was caught).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expect_fail: bool,
    /// Its score is on the wrong side of its threshold, and a pass-rate
    /// gate on its metric allowed that: the trial did not fail the test
    /// run; the gate decides ([`Gates`](crate::config::Gates)).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gated: bool,
    /// How many claims got each verdict (the metrics over claims).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<ClaimCounts>,
    /// Per-claim verdicts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<ClaimVerdict>,
    /// Per-passage verdicts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passages: Vec<PassageVerdict>,
    /// With several samples: their spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    /// A retrieval metric: each relevant label and the rank it came at,
    /// the top of the list, repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieval: Option<Retrieved>,
    /// The trial awaits a person: the score with the unsure items counted
    /// each way, and what the trial does meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub awaiting: Option<Awaiting>,
    /// With a cascade of judges: what each decided and cost.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<JudgeShare>,
    /// A conversation: each turn's result (the trial passes when every
    /// turn does; its score is the lowest turn's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<TurnResult>,
    /// Judge usage of this trial.
    pub usage: Usage,
    /// The case file.
    pub file: String,
    /// The case's line.
    pub line: usize,
}

/// One turn of a conversation's trial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TurnResult {
    /// The turn (1 for the first).
    pub turn: usize,
    /// How it ended (`passed`, `failed`, `awaiting`, `undecided`).
    pub outcome: Outcome,
    /// Its score.
    pub score: f64,
    /// Why.
    #[serde(default)]
    pub reasoning: String,
    /// Its claims (the metrics over claims).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<ClaimVerdict>,
    /// Its passages (context precision).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passages: Vec<PassageVerdict>,
    /// Awaiting a person: the score counted each way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub awaiting: Option<Awaiting>,
    /// What the judge was shown of the conversation before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Shown>,
    /// A retrieval metric: its labels and ranks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieval: Option<Retrieved>,
}

/// How an evaluation ended, as a report says it.
fn outcome_of(e: &Evaluation) -> Outcome {
    if e.undecided {
        Outcome::Undecided
    } else if e.awaiting.is_some() {
        Outcome::Awaiting
    } else if e.passed {
        Outcome::Passed
    } else {
        Outcome::Failed
    }
}

impl TrialResult {
    /// What the trial measured, as its name says it: `faithfulness`,
    /// `criteria:<name>`, or a retrieval metric's name (`recall@5`).
    #[must_use]
    pub fn label(&self) -> String {
        label(self.metric, self.name.as_deref())
    }

    pub(super) fn from_evaluation(case: &LoadedCase, e: Evaluation) -> Self {
        TrialResult {
            case: case.id().to_owned(),
            metric: e.metric,
            name: e
                .name
                .clone()
                .filter(|_| matches!(e.metric, Metric::Criteria | Metric::Retrieval)),
            outcome: outcome_of(&e),
            turns: e
                .turns
                .iter()
                .map(|t| TurnResult {
                    turn: t.turn.unwrap_or_default(),
                    outcome: outcome_of(t),
                    score: t.score,
                    reasoning: t.reasoning.clone(),
                    claims: t.claims.clone(),
                    passages: t.passages.clone(),
                    awaiting: t.awaiting,
                    history: t.history.clone(),
                    retrieval: t.retrieval.clone(),
                })
                .collect(),
            score: Some(e.score),
            threshold: e.threshold,
            reasoning: e.reasoning,
            error: None,
            pending_review: false,
            expect_fail: case.expect_fail.contains(&e.metric),
            gated: false,
            counts: e.counts,
            claims: e.claims,
            passages: e.passages,
            spread: e.spread,
            retrieval: e.retrieval,
            awaiting: e.awaiting,
            judges: e.judges,
            usage: e.usage,
            file: case.file.display().to_string(),
            line: case.line,
        }
    }

    pub(super) fn from_error(
        case: &LoadedCase,
        metric: Metric,
        name: Option<String>,
        threshold: f64,
        error: &Error,
    ) -> Self {
        TrialResult {
            case: case.id().to_owned(),
            metric,
            name,
            outcome: if error.is_configuration() {
                Outcome::ConfigError
            } else if error.is_recording() {
                Outcome::RecordingError
            } else if error.is_queued() {
                Outcome::Queued
            } else {
                Outcome::JudgeError
            },
            score: None,
            threshold,
            reasoning: String::new(),
            error: Some(error.to_string()),
            pending_review: false,
            expect_fail: case.expect_fail.contains(&metric),
            gated: false,
            counts: None,
            claims: Vec::new(),
            passages: Vec::new(),
            spread: None,
            retrieval: None,
            awaiting: None,
            judges: Vec::new(),
            turns: Vec::new(),
            usage: Usage::default(),
            file: case.file.display().to_string(),
            line: case.line,
        }
    }

    /// Whether the trial passed: the score on the expected side of the
    /// threshold (above it; below it for a bad answer that must be caught),
    /// and nothing awaiting review.
    #[must_use]
    pub fn passed(&self) -> bool {
        if self.outcome == Outcome::Awaiting {
            return self.passes_while_awaiting() && !self.pending_review;
        }
        let expected = if self.expect_fail {
            Outcome::Failed
        } else {
            Outcome::Passed
        };
        self.outcome == expected && !self.pending_review
    }

    /// Whether the trial awaits a person and passes meanwhile
    /// (`uncertain = "pass"`).
    #[must_use]
    pub fn passes_while_awaiting(&self) -> bool {
        self.outcome == Outcome::Awaiting
            && self
                .awaiting
                .is_some_and(|a| a.meanwhile == Uncertain::Pass)
    }

    /// Whether a person's verdict kept in the recording decided part of it.
    #[must_use]
    pub fn by_person(&self) -> bool {
        self.usage.reviewed > 0
    }

    /// The score a mean counts (report.json's means, `min_mean`,
    /// `max_drop`): the trial's score, except while it awaits a person.
    /// An awaiting trial's score is one reading inside an interval that
    /// straddles its threshold, not a decided figure: it counts neither
    /// way, as it does for a pass rate.
    pub(crate) fn decided_score(&self) -> Option<f64> {
        match self.outcome {
            Outcome::Awaiting => None,
            Outcome::Passed
            | Outcome::Failed
            | Outcome::Undecided
            | Outcome::JudgeError
            | Outcome::ConfigError
            | Outcome::RecordingError
            | Outcome::Queued => self.score,
        }
    }
}

/// Totals of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Trials that ran.
    pub trials: usize,
    /// Passed, decided (not awaiting a person).
    pub passed: usize,
    /// Failed on the score: too low, or (for a bad answer that must be
    /// caught) not low enough.
    pub failed: usize,
    /// Awaiting a person's verdict: counted apart from `passed` and
    /// `failed` (their trials fail until the verdict is given, or pass
    /// meanwhile under `uncertain = "pass"`; both counted here).
    #[serde(default)]
    pub awaiting: usize,
    /// Decided in part by a person's verdict kept in the recording.
    #[serde(default)]
    pub by_person: usize,
    /// The judge disagreed with itself.
    #[serde(default)]
    pub undecided: usize,
    /// The judge could not score.
    #[serde(default, alias = "errors")]
    pub judge_errors: usize,
    /// The case or settings could not be scored this way.
    #[serde(default)]
    pub config_errors: usize,
    /// A recording could not serve the trial (a setup problem).
    #[serde(default)]
    pub recording_errors: usize,
    /// Trials whose questions collect mode queued for a batch (no score yet).
    #[serde(default)]
    pub queued: usize,
    /// Trials whose recording awaits review.
    #[serde(default)]
    pub pending_review: usize,
    /// Failed trials a pass-rate gate allowed (counted in `failed` too).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub gated: usize,
    /// passed / trials, rounded to 4 places (0 when nothing ran).
    pub pass_rate: f64,
    /// Per metric, as trials name it (`faithfulness`, `criteria:<name>`,
    /// `recall@5`): how many scores and their mean (rounded to 4 places),
    /// trials awaiting a person left out of it and counted.
    pub metrics: BTreeMap<String, MetricSummary>,
    /// Calls, tokens and replayed answers of the whole run.
    pub usage: Usage,
    /// Estimated dollars spent on live calls, when the model's price is known.
    pub estimated_cost_usd: Option<f64>,
    /// The budget, if one was set.
    pub budget_usd: Option<f64>,
    /// Live calls skipped because the budget was spent.
    pub skipped_calls: u64,
    /// Test processes whose results this report combines.
    #[serde(default = "one")]
    pub processes: usize,
    /// The pipeline under test's own model calls (a suite given a
    /// pipeline): live calls, replayed ones and their tokens, counted
    /// apart from the judge's `usage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<Usage>,
    /// Estimated dollars the pipeline's live calls cost, when every model
    /// it called has a price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline_cost_usd: Option<f64>,
}

fn one() -> usize {
    1
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One metric's scores over the run: the mean of its decided scores, and
/// how many trials awaiting a person were left out of it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricSummary {
    /// Scores counted.
    pub count: usize,
    /// Their mean; absent when no trial of the metric has a decided score
    /// (every one awaits a person, or has no score).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    /// Trials awaiting a person's verdict, left out of the mean (their
    /// score is an interval on both sides of the threshold).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub awaiting: usize,
}

/// What a trial measured, as its name says it: the metric,
/// `criteria:<name>`, or a retrieval metric's own name (`recall@5`).
pub(crate) fn label(metric: Metric, name: Option<&str>) -> String {
    match (metric, name) {
        (Metric::Retrieval, Some(name)) => name.to_owned(),
        (_, Some(name)) => format!("{metric}:{name}"),
        (_, None) => metric.to_string(),
    }
}

/// A score that changed against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Case id.
    pub case: String,
    /// Metric.
    pub metric: Metric,
    /// For criteria, their name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The baseline's score.
    pub baseline: f64,
    /// This run's score.
    pub current: f64,
    /// current - baseline.
    pub delta: f64,
    /// Worse by more than the tolerance.
    pub regression: bool,
}

/// What a process spent, for the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spending {
    /// Calls, tokens, replayed answers.
    pub usage: Usage,
    /// Estimated dollars, when the price is known.
    pub cost_usd: Option<f64>,
    /// The budget, if one was set.
    pub budget_usd: Option<f64>,
    /// Live calls the budget stopped.
    pub skipped_calls: u64,
    /// The pipeline under test's own calls, when the suite has a pipeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<PipelineSpending>,
}

/// What the pipeline under test's own model calls spent in a process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PipelineSpending {
    /// Live calls, replayed calls, tokens.
    pub usage: Usage,
    /// Estimated dollars of the live calls, when every model's price is known.
    pub cost_usd: Option<f64>,
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl Report {
    /// A report of `results`, with the spending of `processes` processes.
    #[must_use]
    pub fn new(
        suite: &str,
        judge: JudgeInfo,
        mode: Mode,
        run: &str,
        mut results: Vec<TrialResult>,
        spending: &[Spending],
    ) -> Report {
        results.sort_by(|a, b| {
            (a.case.as_str(), a.metric, &a.name).cmp(&(b.case.as_str(), b.metric, &b.name))
        });
        let count = |o: Outcome| results.iter().filter(|r| r.outcome == o).count();
        let wrong_side = results
            .iter()
            .filter(|r| {
                matches!(r.outcome, Outcome::Passed | Outcome::Failed)
                    && !r.passed()
                    && !r.pending_review
            })
            .count();
        let passed = results
            .iter()
            .filter(|r| r.passed() && r.outcome != Outcome::Awaiting)
            .count();
        // (scores counted, their sum, trials awaiting a person left out)
        let mut metrics: BTreeMap<String, (usize, f64, usize)> = BTreeMap::new();
        for r in &results {
            if let Some(s) = r.decided_score() {
                let e = metrics.entry(r.label()).or_default();
                e.0 += 1;
                e.1 += s;
            } else if r.outcome == Outcome::Awaiting {
                metrics.entry(r.label()).or_default().2 += 1;
            }
        }
        let mut usage = Usage::default();
        for s in spending {
            usage += s.usage;
        }
        let costs: Vec<f64> = spending.iter().filter_map(|s| s.cost_usd).collect();
        let apps: Vec<PipelineSpending> = spending.iter().filter_map(|s| s.pipeline).collect();
        let mut app_usage = Usage::default();
        for a in &apps {
            app_usage += a.usage;
        }
        let app_costs: Vec<f64> = apps.iter().filter_map(|a| a.cost_usd).collect();
        let summary = Summary {
            trials: results.len(),
            passed,
            failed: wrong_side,
            awaiting: count(Outcome::Awaiting),
            by_person: results.iter().filter(|r| r.by_person()).count(),
            undecided: count(Outcome::Undecided),
            judge_errors: count(Outcome::JudgeError),
            config_errors: count(Outcome::ConfigError),
            recording_errors: count(Outcome::RecordingError),
            queued: count(Outcome::Queued),
            pending_review: results.iter().filter(|r| r.pending_review).count(),
            gated: results.iter().filter(|r| r.gated).count(),
            pass_rate: if results.is_empty() {
                0.0
            } else {
                round4(passed as f64 / results.len() as f64)
            },
            metrics: metrics
                .into_iter()
                .map(|(m, (n, sum, awaiting))| {
                    (
                        m,
                        MetricSummary {
                            count: n,
                            mean: (n > 0).then(|| round4(sum / n as f64)),
                            awaiting,
                        },
                    )
                })
                .collect(),
            usage,
            estimated_cost_usd: (costs.len() == spending.len() && !costs.is_empty())
                .then(|| costs.iter().sum()),
            budget_usd: spending.iter().find_map(|s| s.budget_usd),
            skipped_calls: spending.iter().map(|s| s.skipped_calls).sum(),
            processes: spending.len().max(1),
            pipeline: (!apps.is_empty()).then_some(app_usage),
            pipeline_cost_usd: (!apps.is_empty() && app_costs.len() == apps.len())
                .then(|| app_costs.iter().sum()),
        };
        Report {
            ragaliq_report: FORMAT,
            suite: suite.to_owned(),
            judge,
            mode,
            run: run.to_owned(),
            results,
            summary,
            changes: Vec::new(),
            cases: BTreeMap::new(),
            gates: Vec::new(),
        }
    }

    /// Adds the texts of the cases of `texts` that have results here.
    pub(super) fn with_cases(mut self, texts: &BTreeMap<String, CaseText>) -> Report {
        for r in &self.results {
            if let Some(text) = texts.get(&r.case) {
                self.cases
                    .entry(r.case.clone())
                    .or_insert_with(|| text.clone());
            }
        }
        self
    }

    /// Reads a `report.json`.
    pub fn read(path: &Path) -> Result<Report, String> {
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("cannot read the report: {e}"))?;
        serde_json::from_str(&text).map_err(|e| format!("not a ragaliq report: {e}"))
    }

    /// Records score changes against `baseline`; returns how many are
    /// regressions beyond `tolerance` (none are counted without a tolerance).
    pub fn compare(&mut self, baseline: &Report, tolerance: Option<f64>) -> usize {
        let before: BTreeMap<(&str, String), f64> = baseline
            .results
            .iter()
            .filter_map(|r| r.decided_score().map(|s| ((r.case.as_str(), r.label()), s)))
            .collect();
        // Decided scores only: one awaiting a person is no figure to
        // compare (a person's verdict may still move it either way).
        self.changes = self
            .results
            .iter()
            .filter_map(|r| {
                let current = r.decided_score()?;
                let previous = *before.get(&(r.case.as_str(), r.label()))?;
                let delta = current - previous;
                (delta.abs() > 1e-9).then(|| Change {
                    case: r.case.clone(),
                    metric: r.metric,
                    name: r.name.clone(),
                    baseline: previous,
                    current,
                    delta: round4(delta),
                    regression: tolerance.is_some_and(|t| delta < -t),
                })
            })
            .collect();
        self.changes.iter().filter(|c| c.regression).count()
    }

    /// The one-line totals: "32 trials: 31 passed, 1 failed; judge: …".
    #[must_use]
    pub fn totals_line(&self) -> String {
        let s = &self.summary;
        let mut parts = vec![
            format!("{} passed", s.passed),
            if s.gated > 0 {
                format!("{} failed ({} allowed by a gate)", s.failed, s.gated)
            } else {
                format!("{} failed", s.failed)
            },
        ];
        if s.awaiting > 0 {
            parts.push(format!("{} awaiting a person", s.awaiting));
        }
        if s.by_person > 0 {
            parts.push(format!("{} decided with a person's verdict", s.by_person));
        }
        if s.undecided > 0 {
            parts.push(format!("{} undecided", s.undecided));
        }
        parts.push(plural(s.judge_errors, "judge error", "judge errors"));
        parts.push(plural(
            s.config_errors,
            "configuration error",
            "configuration errors",
        ));
        if s.recording_errors > 0 {
            parts.push(plural(
                s.recording_errors,
                "recording error",
                "recording errors",
            ));
        }
        if s.queued > 0 {
            parts.push(format!("{} queued for the batch", s.queued));
        }
        if s.pending_review > 0 {
            parts.push(format!("{} awaiting review", s.pending_review));
        }
        let persons = if s.usage.reviewed > 0 {
            format!(
                ", {} from a person",
                plural(s.usage.reviewed as usize, "verdict", "verdicts")
            )
        } else {
            String::new()
        };
        let mut line = format!(
            "{}: {}; judge: {}, {} tokens, {} replayed{persons}; estimated cost: {}",
            plural(s.trials, "trial", "trials"),
            parts.join(", "),
            plural(s.usage.calls as usize, "call", "calls"),
            s.usage.total_tokens(),
            plural(s.usage.replayed as usize, "answer", "answers"),
            s.estimated_cost_usd.map_or_else(
                || "unknown (no price for the model)".to_owned(),
                |c| format!("${c:.4}")
            )
        );
        if let Some(app) = &s.pipeline {
            let _ = write!(
                line,
                "; pipeline under test: {}, {} tokens, {} replayed, estimated cost: {}",
                plural(app.calls as usize, "call", "calls"),
                app.total_tokens(),
                plural(app.replayed as usize, "call", "calls"),
                s.pipeline_cost_usd.map_or_else(
                    || "unknown (no price for its model)".to_owned(),
                    |c| format!("${c:.4}")
                )
            );
        }
        line
    }

    /// The case × metric table printed after the trials.
    #[must_use]
    pub fn console_table(&self) -> String {
        let metrics: Vec<(Metric, Option<String>)> = {
            let mut m: Vec<(Metric, Option<String>)> = self
                .results
                .iter()
                .map(|r| (r.metric, r.name.clone()))
                .collect();
            m.sort();
            m.dedup();
            m
        };
        let mut cases: Vec<&str> = self.results.iter().map(|r| r.case.as_str()).collect();
        cases.dedup();
        let width = cases.iter().map(|c| c.len()).max().unwrap_or(4).max(4);
        let mut out = format!("{:width$}", "case");
        for (m, name) in &metrics {
            let _ = write!(out, "  {:>17}", label(*m, name.as_deref()));
        }
        out.push('\n');
        for case in &cases {
            let _ = write!(out, "{case:width$}");
            for (m, name) in &metrics {
                let cell = self
                    .results
                    .iter()
                    .find(|r| r.case == *case && r.metric == *m && r.name == *name)
                    .map_or_else(
                        || "-".to_owned(),
                        |r| match (r.outcome, r.score) {
                            (_, Some(s)) if r.pending_review => format!("{s:.2} ?"),
                            (Outcome::Failed, Some(s)) if r.passed() => format!("{s:.2} caught"),
                            (Outcome::Passed, Some(s)) if r.passed() => format!("{s:.2}  "),
                            (Outcome::Passed | Outcome::Failed, Some(s)) if r.gated => {
                                format!("{s:.2} ✗ gate")
                            }
                            (Outcome::Passed | Outcome::Failed, Some(s)) => format!("{s:.2} ✗"),
                            (Outcome::Undecided, Some(s)) => format!("{s:.2} ~"),
                            // No one score: the interval it may still take.
                            (Outcome::Awaiting, s) => match (r.awaiting, s) {
                                (Some(a), _) => format!("{:.2}–{:.2} person?", a.low, a.high),
                                (None, Some(s)) => format!("{s:.2} person?"),
                                (None, None) => "person?".to_owned(),
                            },
                            (Outcome::ConfigError, _) => "config ✗".to_owned(),
                            (Outcome::RecordingError, _) => "unrecorded ✗".to_owned(),
                            (Outcome::Queued, _) => "queued …".to_owned(),
                            _ => "error ✗".to_owned(),
                        },
                    );
                let _ = write!(out, "  {cell:>17}");
            }
            out.push('\n');
        }
        out.push_str(&self.totals_line());
        if self.results.iter().any(|r| r.expect_fail) {
            out.push_str("\ncaught = a bad answer scored below its threshold, as its case expects");
        }
        if self.summary.pending_review > 0 {
            out.push_str("\n? = the recording is new or changed: run `cargo insta review`");
        }
        if self.summary.gated > 0 {
            out.push_str(
                "\n✗ gate = below its threshold, allowed by a pass-rate gate on its metric",
            );
        }
        if self.summary.awaiting > 0 {
            out.push_str(
                "\nperson? = the judge is unsure: give the verdict with `cargo ragaliq review`",
            );
        }
        for c in &self.changes {
            let _ = write!(
                out,
                "\n{} {}::{}: {:.2} → {:.2} ({:+.2})",
                if c.delta > 0.0 {
                    "better"
                } else if c.regression {
                    "REGRESSED"
                } else {
                    "worse"
                },
                c.case,
                label(c.metric, c.name.as_deref()),
                c.baseline,
                c.current,
                c.delta
            );
        }
        for g in &self.gates {
            let _ = write!(out, "\n{}", g.message);
        }
        out
    }

    /// `gates: 2 passed, 1 failed, 1 not checked`: how the run's gates came
    /// out (`None` when none was checked).
    #[must_use]
    pub fn gates_line(&self) -> Option<String> {
        if self.gates.is_empty() {
            return None;
        }
        let n = |status: GateStatus| self.gates.iter().filter(|g| g.status == status).count();
        let mut line = format!(
            "gates: {} passed, {} failed",
            n(GateStatus::Passed),
            n(GateStatus::Failed)
        );
        if n(GateStatus::NotChecked) > 0 {
            line.push_str(&format!(", {} not checked", n(GateStatus::NotChecked)));
        }
        Some(line)
    }

    /// Whether any gate checked over the run failed.
    #[must_use]
    pub fn gates_failed(&self) -> bool {
        self.gates.iter().any(GateResult::failed)
    }

    /// The Markdown summary (also written to `GITHUB_STEP_SUMMARY`).
    #[must_use]
    pub fn markdown(&self) -> String {
        let s = &self.summary;
        let mut out = format!(
            "## ragaliq: {} of {} passed\n\n{}\n\nJudge `{}:{}`, mode `{}`{}.\n\n| case | metric | score | threshold | result |\n| --- | --- | --- | --- | --- |\n",
            s.passed,
            plural(s.trials, "trial", "trials"),
            self.totals_line(),
            self.judge.provider,
            self.judge.model,
            self.mode.name(),
            if s.processes > 1 {
                format!(", {} test processes", s.processes)
            } else {
                String::new()
            },
        );
        for r in &self.results {
            let persons = match r.usage.reviewed {
                0 => String::new(),
                n => format!(
                    " (by {} from a person)",
                    plural(n as usize, "verdict", "verdicts")
                ),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.2} | {}{persons} |",
                r.case,
                r.label(),
                match (r.awaiting, r.score) {
                    // Awaiting a person: the interval, not one score.
                    (Some(a), _) if r.outcome == Outcome::Awaiting =>
                        format!("{:.2}–{:.2}", a.low, a.high),
                    (_, Some(s)) => format!("{s:.2}"),
                    (_, None) => "—".to_owned(),
                },
                r.threshold,
                match (r.outcome, r.pending_review) {
                    (_, true) => "🔍 awaits review",
                    (Outcome::Passed | Outcome::Failed, _) if r.gated => {
                        "❌ failed (allowed by a pass-rate gate)"
                    }
                    (Outcome::Passed, _) if r.passed() => "✅ passed",
                    (Outcome::Failed, _) if r.passed() => "✅ caught (a bad answer)",
                    (Outcome::Passed, _) => "❌ not caught (a bad answer passed)",
                    (Outcome::Failed, _) => "❌ failed",
                    (Outcome::Awaiting, _) if r.passed() =>
                        "⚖ awaiting a person (passes meanwhile)",
                    (Outcome::Awaiting, _) => "⚖ awaiting a person",
                    (Outcome::Undecided, _) => "⚖️ undecided",
                    (Outcome::JudgeError, _) => "⚠️ judge error",
                    (Outcome::ConfigError, _) => "⚠️ configuration error",
                    (Outcome::RecordingError, _) => "⚠️ recording error",
                    (Outcome::Queued, _) => "⏳ queued for the batch",
                }
            );
        }
        if !self.changes.is_empty() {
            out.push_str(
                "\n| case | metric | baseline | now | change |\n| --- | --- | --- | --- | --- |\n",
            );
            for c in &self.changes {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.2} | {:.2} | {:+.2}{} |",
                    c.case,
                    label(c.metric, c.name.as_deref()),
                    c.baseline,
                    c.current,
                    c.delta,
                    if c.regression { " ❌" } else { "" }
                );
            }
        }
        if !self.gates.is_empty() {
            out.push_str("\n### Gates\n\n");
            for g in &self.gates {
                let mark = match g.status {
                    GateStatus::Passed => "✅",
                    GateStatus::Failed => "❌",
                    GateStatus::NotChecked => "➖",
                };
                let _ = writeln!(out, "- {mark} {}", g.message);
            }
        }
        out
    }

    /// The JUnit XML report: one `<testcase>` per trial, named `case::metric`.
    #[must_use]
    pub fn junit(&self) -> String {
        use super::junit::{Case, Status, document};
        let cases: Vec<Case<'_>> = self
            .results
            .iter()
            .map(|r| {
                let awaiting = r.awaiting.map(|a| {
                    format!(
                        "{} awaiting a person: the judge is unsure; counted each way the score is {:.2} to {:.2}, on both sides of the threshold {:.2} (give the verdict with `cargo ragaliq review`)",
                        r.label(),
                        a.low,
                        a.high,
                        r.threshold
                    )
                });
                let status = if r.passes_while_awaiting() && !r.pending_review {
                    Status::Skipped {
                        message: awaiting.unwrap_or_default(),
                    }
                } else if r.passed() {
                    Status::Passed
                } else if r.gated {
                    // The run's verdict is the gate's (below): a trial it
                    // allowed is no failure of the run.
                    Status::Allowed {
                        text: format!(
                            "{} {:.2} below threshold {:.2}, allowed by a pass-rate gate on {}\n{}",
                            r.label(),
                            r.score.unwrap_or_default(),
                            r.threshold,
                            r.label(),
                            r.reasoning
                        ),
                    }
                } else {
                    let message = match (&r.error, r.score) {
                        (Some(e), _) => format!("{}: {e}", r.outcome.label()),
                        (None, _) if awaiting.is_some() => awaiting.unwrap_or_default(),
                        (None, Some(score)) if r.pending_review && r.outcome == Outcome::Passed => {
                            format!("{}: {score:.2}; the recording awaits review", r.label())
                        }
                        (None, Some(score)) if r.expect_fail && r.outcome == Outcome::Passed => {
                            format!(
                                "{}: a bad answer was not caught: {score:.2} >= threshold {:.2}",
                                r.label(),
                                r.threshold
                            )
                        }
                        (None, Some(score)) => format!(
                            "{} {}: {score:.2} against threshold {:.2}",
                            r.label(),
                            r.outcome.label(),
                            r.threshold
                        ),
                        (None, None) => r.label(),
                    };
                    let mut text = r.reasoning.clone();
                    if let Some(seen) = &r.retrieval {
                        text.push('\n');
                        text.push_str(seen.to_string().trim_end());
                    }
                    match r.outcome {
                        Outcome::JudgeError
                        | Outcome::ConfigError
                        | Outcome::RecordingError
                        | Outcome::Queued => Status::Error { message, text },
                        _ => Status::Failure { message, text },
                    }
                };
                Case {
                    name: format!("{}::{}", r.case, r.label()),
                    classname: r.case.as_str(),
                    status,
                }
            })
            .chain(self.gates.iter().map(|g| Case {
                name: format!("gates::{}:{}", g.gate.name(), g.metric),
                classname: "gates",
                status: match g.status {
                    GateStatus::Failed => Status::Failure {
                        message: g.message.clone(),
                        text: g.cases.join("\n"),
                    },
                    GateStatus::Passed => Status::Passed,
                    GateStatus::NotChecked => Status::Allowed {
                        text: g.message.clone(),
                    },
                },
            }))
            .collect();
        document("ragaliq", &self.suite, &cases)
    }

    /// Writes `report.json`, `junit.xml`, `summary.md` and `report.html`
    /// into `dir`, each atomically.
    pub fn write_all(&self, dir: &Path) -> Result<(), (PathBuf, String)> {
        std::fs::create_dir_all(dir).map_err(|e| (dir.to_owned(), e.to_string()))?;
        let json = serde_json::to_string_pretty(self)
            .map_err(|e| (dir.join("report.json"), e.to_string()))?;
        let junit = self.junit();
        for (name, text) in [
            ("report.json", json),
            ("junit.xml", junit),
            ("summary.md", self.markdown()),
            ("report.html", self.html()),
        ] {
            let path = dir.join(name);
            crate::run::write_atomic(&path, text.as_bytes()).map_err(|e| (path, e.to_string()))?;
        }
        Ok(())
    }

    /// Puts the Markdown summary into `path` (GitHub's step summary): one
    /// section per run and suite, replaced when the run writes it again, so
    /// the processes of a run add one table, not one each.
    pub fn write_step_summary(&self, path: &Path) -> Result<(), (PathBuf, String)> {
        let err = |e: std::io::Error| (path.to_owned(), e.to_string());
        let _guard =
            crate::run::lock::exclusive(path).map_err(|e| (path.to_owned(), e.to_string()))?;
        let current = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(err(e)),
        };
        let begin = format!("<!-- ragaliq {} {} -->\n", self.run, self.suite);
        let end = format!("<!-- /ragaliq {} {} -->\n", self.run, self.suite);
        let section = format!("{begin}{}\n{end}", self.markdown());
        let updated = match (current.find(&begin), current.find(&end)) {
            (Some(a), Some(b)) if a < b => {
                format!("{}{section}{}", &current[..a], &current[b + end.len()..])
            }
            _ => format!("{current}{section}"),
        };
        crate::run::write_atomic(path, updated.as_bytes()).map_err(err)
    }

    /// Combines reports of one suite run on several machines or shards: every
    /// trial counted once (a trial reported twice keeps its later report,
    /// and the duplicates are returned), spending added up.
    pub fn combine(reports: Vec<Report>) -> Result<(Report, Vec<String>), String> {
        let first = reports.first().ok_or("no report to combine")?;
        let (suite, judge, mode, run) = (
            first.suite.clone(),
            first.judge.clone(),
            first.mode,
            first.run.clone(),
        );
        let mut trials: BTreeMap<(String, String), TrialResult> = BTreeMap::new();
        let mut duplicates = Vec::new();
        let mut spending = Vec::new();
        let mut processes = 0;
        let mut cases = BTreeMap::new();
        for report in reports {
            cases.extend(report.cases);
            for r in report.results {
                let key = (r.case.clone(), r.label());
                if trials.insert(key, r.clone()).is_some() {
                    duplicates.push(format!("{}::{}", r.case, r.label()));
                }
            }
            let s = &report.summary;
            processes += s.processes.max(1);
            spending.push(Spending {
                usage: s.usage,
                cost_usd: s.estimated_cost_usd,
                budget_usd: s.budget_usd,
                skipped_calls: s.skipped_calls,
                pipeline: s.pipeline.map(|usage| PipelineSpending {
                    usage,
                    cost_usd: s.pipeline_cost_usd,
                }),
            });
        }
        let mut report = Report::new(
            &suite,
            judge,
            mode,
            &run,
            trials.into_values().collect(),
            &spending,
        );
        report.summary.processes = processes;
        report.cases = cases;
        Ok((report, duplicates))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(case: &str, metric: Metric, outcome: Outcome, score: Option<f64>) -> TrialResult {
        TrialResult {
            case: case.into(),
            metric,
            name: None,
            outcome,
            score,
            threshold: 0.7,
            reasoning: String::new(),
            error: None,
            pending_review: false,
            expect_fail: false,
            gated: false,
            counts: None,
            claims: vec![],
            passages: vec![],
            spread: None,
            retrieval: None,
            awaiting: None,
            judges: Vec::new(),
            turns: Vec::new(),
            usage: Usage::default(),
            file: "cases.yaml".into(),
            line: 1,
        }
    }

    fn info() -> JudgeInfo {
        JudgeInfo {
            provider: "p".into(),
            model: "m".into(),
        }
    }

    #[test]
    fn means_are_rounded_and_counts_pluralised() {
        let r = Report::new(
            "s",
            info(),
            Mode::Replay,
            "run",
            vec![
                result("a", Metric::Relevance, Outcome::Passed, Some(0.69)),
                result("b", Metric::Relevance, Outcome::Passed, Some(0.69)),
                result("c", Metric::Relevance, Outcome::Passed, Some(0.69)),
            ],
            &[Spending::default()],
        );
        assert_eq!(r.summary.metrics["relevance"].mean, Some(0.69));
        let one = Report::new(
            "s",
            info(),
            Mode::Replay,
            "run",
            vec![result("a", Metric::Relevance, Outcome::Passed, Some(1.0))],
            &[Spending::default()],
        );
        assert!(
            one.totals_line().starts_with("1 trial: 1 passed"),
            "{}",
            one.totals_line()
        );
        assert!(
            one.markdown().contains("mode `replay`"),
            "{}",
            one.markdown()
        );
        assert!(
            one.markdown()
                .starts_with("## ragaliq: 1 of 1 trial passed")
        );
    }

    /// An awaiting trial's score is one reading inside its interval: the
    /// reports show the interval, and no mean counts it.
    #[test]
    fn awaiting_trials_show_their_interval_and_stay_out_of_means() {
        let mut waiting = result("a", Metric::Correctness, Outcome::Awaiting, Some(0.95));
        waiting.awaiting = Some(Awaiting {
            low: 0.0,
            high: 1.0,
            items: 1,
            meanwhile: Uncertain::Pass,
        });
        let r = Report::new(
            "s",
            info(),
            Mode::Replay,
            "run",
            vec![
                waiting,
                result("b", Metric::Correctness, Outcome::Passed, Some(0.8)),
            ],
            &[Spending::default()],
        );
        let m = r.summary.metrics["correctness"];
        assert_eq!((m.count, m.mean, m.awaiting), (1, Some(0.8), 1));
        let json = serde_json::to_string(&r.summary.metrics).unwrap();
        assert_eq!(
            json,
            r#"{"correctness":{"count":1,"mean":0.8,"awaiting":1}}"#
        );
        assert!(
            r.markdown().contains(
                "| a | correctness | 0.00–1.00 | 0.70 | ⚖ awaiting a person (passes meanwhile) |"
            ),
            "{}",
            r.markdown()
        );
        assert!(
            r.console_table().contains("0.00–1.00 person?"),
            "{}",
            r.console_table()
        );
        // Nothing decided: no mean at all, never a made-up one.
        let mut only = r.clone();
        only.results.remove(1);
        let only = Report::new(
            "s",
            info(),
            Mode::Replay,
            "run",
            only.results,
            &[Spending::default()],
        );
        let m = only.summary.metrics["correctness"];
        assert_eq!((m.count, m.mean, m.awaiting), (0, None, 1));
        assert_eq!(
            serde_json::to_string(&only.summary.metrics).unwrap(),
            r#"{"correctness":{"count":0,"awaiting":1}}"#
        );
    }

    #[test]
    fn verdicts_from_a_person_are_counted_in_every_report() {
        let mut by_person = result("a", Metric::Faithfulness, Outcome::Passed, Some(1.0));
        by_person.usage.reviewed = 1;
        let r = Report::new(
            "s",
            info(),
            Mode::Replay,
            "run",
            vec![
                by_person,
                result("b", Metric::Faithfulness, Outcome::Passed, Some(1.0)),
            ],
            &[Spending {
                usage: Usage {
                    replayed: 4,
                    reviewed: 1,
                    ..Usage::default()
                },
                ..Spending::default()
            }],
        );
        assert!(
            r.totals_line()
                .contains("4 answers replayed, 1 verdict from a person;"),
            "{}",
            r.totals_line()
        );
        let md = r.markdown();
        assert!(
            md.contains(
                "| a | faithfulness | 1.00 | 0.70 | ✅ passed (by 1 verdict from a person) |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| b | faithfulness | 1.00 | 0.70 | ✅ passed |"),
            "{md}"
        );
        assert!(r.html().contains("verdicts from a person"));
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains("\"reviewed\":1"), "{json}");
        // None: not a word of it.
        let none = Report::new(
            "s",
            info(),
            Mode::Replay,
            "run",
            vec![result(
                "b",
                Metric::Faithfulness,
                Outcome::Passed,
                Some(1.0),
            )],
            &[Spending::default()],
        );
        assert!(!none.totals_line().contains("person"));
        assert!(!none.html().contains("from a person"));
        assert!(!serde_json::to_string(&none).unwrap().contains("reviewed"));
    }

    #[test]
    fn combining_counts_each_trial_once() {
        let part = |cases: &[&str]| {
            Report::new(
                "s",
                info(),
                Mode::Replay,
                "run",
                cases
                    .iter()
                    .map(|c| result(c, Metric::Faithfulness, Outcome::Passed, Some(1.0)))
                    .collect(),
                &[Spending {
                    usage: Usage {
                        replayed: cases.len() as u64,
                        ..Usage::default()
                    },
                    ..Spending::default()
                }],
            )
        };
        let (r, dups) =
            Report::combine(vec![part(&["a", "b"]), part(&["c"]), part(&["c"])]).unwrap();
        assert_eq!(r.summary.trials, 3);
        assert_eq!(dups, ["c::faithfulness"]);
        assert_eq!(r.summary.usage.replayed, 4);
    }

    #[test]
    fn the_step_summary_gets_one_section_per_run() {
        let path = std::env::temp_dir().join(format!("ragaliq-step-{}.md", std::process::id()));
        std::fs::write(&path, "# earlier step output\n").unwrap();
        let mut r = Report::new(
            "s",
            info(),
            Mode::Replay,
            "run-1",
            vec![],
            &[Spending::default()],
        );
        r.write_step_summary(&path).unwrap();
        r.results
            .push(result("a", Metric::Relevance, Outcome::Failed, Some(0.1)));
        r.write_step_summary(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# earlier step output\n"));
        assert_eq!(text.matches("## ragaliq").count(), 1, "{text}");
        assert!(text.contains("| a | relevance |"), "{text}");
        let _ = std::fs::remove_file(&path);
    }
}
