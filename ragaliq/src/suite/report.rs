//! Suite reports: JSON (the schema below), JUnit XML, Markdown and a console
//! table, and run-to-run comparison against a previous JSON report.
//!
//! `report.json`:
//!
//! ```text
//! {
//!   "ragaliq_report": 1,                       // format version
//!   "suite": "tests/rag_cases",
//!   "judge": { "provider": "openai", "model": "gpt-4o-mini" },
//!   "mode": "replay",
//!   "results": [{                              // one per trial that ran
//!     "case": "refund-window", "metric": "faithfulness",
//!     "outcome": "passed" | "failed" | "error",
//!     "score": 0.5 | null, "threshold": 0.7,
//!     "reasoning": "…", "error": "…" | absent,
//!     "claims": [{ "claim", "verdict", "evidence", "confidence", "failed" }],
//!     "passages": [{ "rank", "relevant", "reason" }],
//!     "usage": { "calls", "input_tokens", "output_tokens", "replayed" },
//!     "file": "tests/rag_cases/refunds.yaml", "line": 3
//!   }],
//!   "summary": {
//!     "trials", "passed", "failed", "errors", "pass_rate",
//!     "metrics": { "faithfulness": { "count", "mean" } },
//!     "usage": { … }, "estimated_cost_usd": 0.0123 | null,
//!     "budget_usd": 5.0 | null, "skipped_calls": 0
//!   },
//!   "changes": [{ "case", "metric", "baseline", "current", "delta", "regression" }]
//! }
//! ```

use super::cases::LoadedCase;
use crate::config::Mode;
use crate::error::Error;
use crate::evaluation::{ClaimVerdict, Evaluation, Metric, PassageVerdict, Usage};
use crate::judge::Judge;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The report format's version.
pub const FORMAT: u32 = 1;

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
    /// One per trial that ran, ordered by case and metric.
    pub results: Vec<TrialResult>,
    /// Totals.
    pub summary: Summary,
    /// Score changes against a baseline report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Change>,
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Score at or above the threshold.
    Passed,
    /// Score below the threshold.
    Failed,
    /// No score: the judge failed, the budget was spent, or the case lacks what the metric needs.
    Error,
}

/// One trial's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrialResult {
    /// Case id.
    pub case: String,
    /// Metric.
    pub metric: Metric,
    /// Outcome.
    pub outcome: Outcome,
    /// The score, when there is one.
    pub score: Option<f64>,
    /// The threshold applied.
    pub threshold: f64,
    /// The reasoning.
    #[serde(default)]
    pub reasoning: String,
    /// The error, for [`Outcome::Error`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Per-claim verdicts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<ClaimVerdict>,
    /// Per-passage verdicts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passages: Vec<PassageVerdict>,
    /// Judge usage of this trial.
    pub usage: Usage,
    /// The case file.
    pub file: String,
    /// The case's line.
    pub line: usize,
}

impl TrialResult {
    pub(super) fn from_evaluation(case: &LoadedCase, e: Evaluation) -> Self {
        TrialResult {
            case: case.id().to_owned(),
            metric: e.metric,
            outcome: if e.passed {
                Outcome::Passed
            } else {
                Outcome::Failed
            },
            score: Some(e.score),
            threshold: e.threshold,
            reasoning: e.reasoning,
            error: None,
            claims: e.claims,
            passages: e.passages,
            usage: e.usage,
            file: case.file.display().to_string(),
            line: case.line,
        }
    }

    pub(super) fn from_error(
        case: &LoadedCase,
        metric: Metric,
        threshold: f64,
        error: &Error,
    ) -> Self {
        TrialResult {
            case: case.id().to_owned(),
            metric,
            outcome: Outcome::Error,
            score: None,
            threshold,
            reasoning: String::new(),
            error: Some(error.to_string()),
            claims: Vec::new(),
            passages: Vec::new(),
            usage: Usage::default(),
            file: case.file.display().to_string(),
            line: case.line,
        }
    }
}

/// Totals of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Trials that ran.
    pub trials: usize,
    /// Passed.
    pub passed: usize,
    /// Failed (low score).
    pub failed: usize,
    /// Errors (no score).
    pub errors: usize,
    /// passed / trials (0 when nothing ran).
    pub pass_rate: f64,
    /// Per metric: how many scores and their mean.
    pub metrics: BTreeMap<Metric, MetricSummary>,
    /// Calls, tokens and replayed answers of the whole run.
    pub usage: Usage,
    /// Estimated dollars spent on live calls, when the model's price is known.
    pub estimated_cost_usd: Option<f64>,
    /// The budget, if one was set.
    pub budget_usd: Option<f64>,
    /// Live calls skipped because the budget was spent.
    pub skipped_calls: u64,
}

/// One metric's scores over the run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricSummary {
    /// Scores counted.
    pub count: usize,
    /// Their mean.
    pub mean: f64,
}

/// A score that changed against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Case id.
    pub case: String,
    /// Metric.
    pub metric: Metric,
    /// The baseline's score.
    pub baseline: f64,
    /// This run's score.
    pub current: f64,
    /// current - baseline.
    pub delta: f64,
    /// Worse by more than the tolerance.
    pub regression: bool,
}

impl Report {
    pub(super) fn new(
        suite: &Path,
        judge: &Judge,
        mode: Mode,
        results: Vec<TrialResult>,
    ) -> Report {
        let count = |o: Outcome| results.iter().filter(|r| r.outcome == o).count();
        let (passed, failed, errors) = (
            count(Outcome::Passed),
            count(Outcome::Failed),
            count(Outcome::Error),
        );
        let mut metrics: BTreeMap<Metric, (usize, f64)> = BTreeMap::new();
        for r in &results {
            if let Some(s) = r.score {
                let e = metrics.entry(r.metric).or_default();
                e.0 += 1;
                e.1 += s;
            }
        }
        let summary = Summary {
            trials: results.len(),
            passed,
            failed,
            errors,
            pass_rate: if results.is_empty() {
                0.0
            } else {
                passed as f64 / results.len() as f64
            },
            metrics: metrics
                .into_iter()
                .map(|(m, (n, sum))| {
                    (
                        m,
                        MetricSummary {
                            count: n,
                            mean: sum / n as f64,
                        },
                    )
                })
                .collect(),
            usage: judge.usage(),
            estimated_cost_usd: judge.cost(),
            budget_usd: judge.budget(),
            skipped_calls: judge.skipped_calls(),
        };
        Report {
            ragaliq_report: FORMAT,
            suite: suite.display().to_string(),
            judge: JudgeInfo {
                provider: judge.provider().to_owned(),
                model: judge.model().to_owned(),
            },
            mode,
            results,
            summary,
            changes: Vec::new(),
        }
    }

    /// Reads a `report.json`.
    pub fn read(path: &Path) -> Result<Report, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the baseline report: {e}"))?;
        serde_json::from_str(&text).map_err(|e| format!("not a ragaliq report: {e}"))
    }

    /// Records score changes against `baseline`; returns how many are
    /// regressions beyond `tolerance` (none are counted without a tolerance).
    pub fn compare(&mut self, baseline: &Report, tolerance: Option<f64>) -> usize {
        let before: BTreeMap<(&str, Metric), f64> = baseline
            .results
            .iter()
            .filter_map(|r| r.score.map(|s| ((r.case.as_str(), r.metric), s)))
            .collect();
        self.changes = self
            .results
            .iter()
            .filter_map(|r| {
                let current = r.score?;
                let previous = *before.get(&(r.case.as_str(), r.metric))?;
                let delta = current - previous;
                (delta.abs() > 1e-9).then(|| Change {
                    case: r.case.clone(),
                    metric: r.metric,
                    baseline: previous,
                    current,
                    delta,
                    regression: tolerance.is_some_and(|t| delta < -t),
                })
            })
            .collect();
        self.changes.iter().filter(|c| c.regression).count()
    }

    /// The case × metric table printed after the trials.
    #[must_use]
    pub fn console_table(&self) -> String {
        let metrics: Vec<Metric> = {
            let mut m: Vec<Metric> = self.results.iter().map(|r| r.metric).collect();
            m.sort();
            m.dedup();
            m
        };
        let mut cases: Vec<&str> = self.results.iter().map(|r| r.case.as_str()).collect();
        cases.dedup();
        let width = cases.iter().map(|c| c.len()).max().unwrap_or(4).max(4);
        let mut out = format!("{:width$}", "case");
        for m in &metrics {
            let _ = write!(out, "  {:>17}", m.name());
        }
        out.push('\n');
        for case in &cases {
            let _ = write!(out, "{case:width$}");
            for m in &metrics {
                let cell = self
                    .results
                    .iter()
                    .find(|r| r.case == *case && r.metric == *m)
                    .map_or_else(
                        || "-".to_owned(),
                        |r| match (r.outcome, r.score) {
                            (Outcome::Passed, Some(s)) => format!("{s:.2}  "),
                            (Outcome::Failed, Some(s)) => format!("{s:.2} ✗"),
                            _ => "error ✗".to_owned(),
                        },
                    );
                let _ = write!(out, "  {cell:>17}");
            }
            out.push('\n');
        }
        let s = &self.summary;
        let _ = write!(
            out,
            "{} trials: {} passed, {} failed, {} errors; judge: {} calls, {} tokens, {} answers replayed; estimated cost: {}",
            s.trials,
            s.passed,
            s.failed,
            s.errors,
            s.usage.calls,
            s.usage.total_tokens(),
            s.usage.replayed,
            s.estimated_cost_usd.map_or_else(
                || "unknown (no price for the model)".to_owned(),
                |c| format!("${c:.4}")
            )
        );
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
                c.metric,
                c.baseline,
                c.current,
                c.delta
            );
        }
        out
    }

    /// The Markdown summary (also appended to `GITHUB_STEP_SUMMARY`).
    #[must_use]
    pub fn markdown(&self) -> String {
        let s = &self.summary;
        let mut out = format!(
            "## ragaliq: {} of {} trials passed\n\nJudge `{}:{}`, mode `{:?}`. {} calls, {} tokens, {} answers replayed; estimated cost {}.\n\n| case | metric | score | threshold | result |\n| --- | --- | --- | --- | --- |\n",
            s.passed,
            s.trials,
            self.judge.provider,
            self.judge.model,
            self.mode,
            s.usage.calls,
            s.usage.total_tokens(),
            s.usage.replayed,
            s.estimated_cost_usd
                .map_or_else(|| "unknown".to_owned(), |c| format!("${c:.4}"))
        );
        for r in &self.results {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.2} | {} |",
                r.case,
                r.metric,
                r.score
                    .map_or_else(|| "—".to_owned(), |s| format!("{s:.2}")),
                r.threshold,
                match r.outcome {
                    Outcome::Passed => "✅ passed",
                    Outcome::Failed => "❌ failed",
                    Outcome::Error => "⚠️ error",
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
                    c.metric,
                    c.baseline,
                    c.current,
                    c.delta,
                    if c.regression { " ❌" } else { "" }
                );
            }
        }
        out
    }

    /// The JUnit XML report: one `<testcase>` per trial, named `case::metric`.
    pub fn junit(&self) -> Result<String, String> {
        use quick_junit::{NonSuccessKind, Report as JReport, TestCase, TestCaseStatus, TestSuite};
        let mut suite = TestSuite::new(self.suite.as_str());
        for r in &self.results {
            let status = match r.outcome {
                Outcome::Passed => TestCaseStatus::success(),
                Outcome::Failed | Outcome::Error => {
                    let kind = if r.outcome == Outcome::Failed {
                        NonSuccessKind::Failure
                    } else {
                        NonSuccessKind::Error
                    };
                    let mut s = TestCaseStatus::non_success(kind);
                    let message = match (&r.error, r.score) {
                        (Some(e), _) => e.clone(),
                        (None, Some(score)) => {
                            format!("{}: {score:.2} < threshold {:.2}", r.metric, r.threshold)
                        }
                        (None, None) => r.metric.to_string(),
                    };
                    s.set_message(message);
                    s.set_description(r.reasoning.as_str());
                    s
                }
            };
            let mut case = TestCase::new(format!("{}::{}", r.case, r.metric), status);
            case.set_classname(r.case.as_str());
            suite.add_test_case(case);
        }
        let mut report = JReport::new("ragaliq");
        report.add_test_suite(suite);
        report.to_string().map_err(|e| e.to_string())
    }

    /// Writes `report.json`, `junit.xml` and `summary.md` into `dir`.
    pub fn write_all(&self, dir: &Path) -> Result<(), (PathBuf, String)> {
        std::fs::create_dir_all(dir).map_err(|e| (dir.to_owned(), e.to_string()))?;
        let json = serde_json::to_string_pretty(self)
            .map_err(|e| (dir.join("report.json"), e.to_string()))?;
        let junit = self.junit().map_err(|e| (dir.join("junit.xml"), e))?;
        for (name, text) in [
            ("report.json", json),
            ("junit.xml", junit),
            ("summary.md", self.markdown()),
        ] {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|e| (path, e.to_string()))?;
        }
        Ok(())
    }

    /// Appends the Markdown summary to `path` (GitHub's step summary).
    pub fn append_markdown(&self, path: &Path) -> Result<(), (PathBuf, String)> {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| (path.to_owned(), e.to_string()))?;
        f.write_all(self.markdown().as_bytes())
            .map_err(|e| (path.to_owned(), e.to_string()))
    }
}
