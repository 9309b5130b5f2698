//! What a gate checked over a run came to ([`GateResult`]): data a report
//! carries, apart from the checking (`gates.rs`), which reads reports.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Which gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateKind {
    /// The share of a metric's trials that must pass.
    PassRate,
    /// The least a metric's mean may be.
    MinMean,
    /// The most a metric's mean may fall against the baseline.
    MaxDrop,
}

impl GateKind {
    /// The gate's name, as in `ragaliq.toml`.
    ///
    /// ```
    /// use ragaliq::harness::gates::GateKind;
    /// assert_eq!(GateKind::MaxDrop.name(), "max_drop");
    /// ```
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            GateKind::PassRate => "pass_rate",
            GateKind::MinMean => "min_mean",
            GateKind::MaxDrop => "max_drop",
        }
    }
}

/// How a gate came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateStatus {
    /// The run reached it.
    Passed,
    /// The run did not: the run fails.
    Failed,
    /// It could not be checked (no baseline run, or a baseline without the
    /// metric); said, and the run does not fail on it.
    NotChecked,
}

/// One gate on one metric, checked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GateResult {
    /// The gate.
    pub gate: GateKind,
    /// The metric, as trials name it.
    pub metric: String,
    /// The figure the gate asks for.
    pub required: f64,
    /// The figure the run reached (the pass rate, the mean, the fall); none
    /// when it could not be measured.
    pub figure: Option<f64>,
    /// How it came out.
    pub status: GateStatus,
    /// The cases that moved the figure: the trials not passed, the lowest
    /// scores, the scores that fell most.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<String>,
    /// Trials counted neither passed nor failed (no verdict yet).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub neither: usize,
    /// The sentence a person reads: the gate, the figure, the cases.
    pub message: String,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl GateResult {
    /// Whether the run fails on it.
    #[must_use]
    pub fn failed(&self) -> bool {
        self.status == GateStatus::Failed
    }
}

impl fmt::Display for GateResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
