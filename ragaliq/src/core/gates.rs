//! [`Gates`]: what a whole run must reach, set once for a team (`[gates]`
//! in `ragaliq.toml`, or in a suite's code): the share of each metric's
//! trials that must pass, the least each metric's mean may be, and the most
//! a mean may fall against a baseline run. Checked by the suite at the end
//! of a run and by `cargo ragaliq report` over a run's shards.

use super::config_error::ConfigError;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One gate's figure: for every metric of the run, or for each metric by
/// name, or both (a metric's own wins).
///
/// Metrics are named as trials name them: `faithfulness`,
/// `criteria:no-promise`, `recall@5`.
///
/// ```
/// use ragaliq::config::GateRule;
/// let rule = GateRule::every(0.95).with("criteria:no-promise", 0.8);
/// assert_eq!(rule.for_metric("faithfulness"), Some(0.95));
/// assert_eq!(rule.for_metric("criteria:no-promise"), Some(0.8));
/// assert_eq!(GateRule::default().for_metric("faithfulness"), None);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GateRule {
    every: Option<f64>,
    each: BTreeMap<String, f64>,
}

impl GateRule {
    /// `figure` for every metric of the run.
    #[must_use]
    pub fn every(figure: f64) -> GateRule {
        GateRule {
            every: Some(figure),
            each: BTreeMap::new(),
        }
    }

    /// `figure` for `metric`, over any figure for every metric.
    #[must_use]
    pub fn with(mut self, metric: impl Into<String>, figure: f64) -> GateRule {
        self.each.insert(metric.into(), figure);
        self
    }

    /// The figure for `metric`, if the gate holds it.
    #[must_use]
    pub fn for_metric(&self, metric: &str) -> Option<f64> {
        self.each.get(metric).copied().or(self.every)
    }

    /// The figure for every metric, if one is set.
    #[must_use]
    pub fn for_every(&self) -> Option<f64> {
        self.every
    }

    /// The metrics the gate names, each with its figure.
    pub fn named(&self) -> impl Iterator<Item = (&str, f64)> {
        self.each.iter().map(|(m, f)| (m.as_str(), *f))
    }

    /// Whether the gate holds no metric at all.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.every.is_none() && self.each.is_empty()
    }

    /// Every figure in 0 to 1, every name given; `origin` names the gate in
    /// the error (`ragaliq.toml: gates.pass_rate`).
    pub(crate) fn check(&self, origin: &str) -> Result<(), ConfigError> {
        let bad = |key: String, value: f64| ConfigError::Invalid {
            origin: key,
            value: value.to_string(),
            expected: "a number from 0 to 1".into(),
        };
        if let Some(v) = self.every.filter(|v| !(0.0..=1.0).contains(v)) {
            return Err(bad(origin.to_owned(), v));
        }
        for (metric, v) in &self.each {
            if metric.trim().is_empty() {
                return Err(ConfigError::Invalid {
                    origin: origin.to_owned(),
                    value: String::new(),
                    expected: "metrics named as trials name them (`faithfulness`, `recall@5`), or `\"*\"` for every metric".into(),
                });
            }
            if !(0.0..=1.0).contains(v) {
                return Err(bad(format!("{origin}.\"{metric}\""), *v));
            }
        }
        Ok(())
    }
}

/// What a whole run must reach, beyond each trial's threshold.
///
/// - **`pass_rate`**: the share of a metric's trials that must pass. A
///   metric under this gate may fail some trials: a trial whose score is on
///   the wrong side of its threshold does not fail the test run by itself
///   (it is reported as failed, *allowed by the gate*), and the run fails
///   when the share of passed trials is below the gate. Errors (the judge
///   failed, a configuration error, a missing recording) and undecided
///   judges are never allowed: they fail their trials and count as not
///   passed. A trial whose recording awaits review, or whose question is
///   queued for a batch, has no verdict yet and counts neither way; so
///   does one awaiting a person's verdict.
/// - **`min_mean`**: the least a metric's mean score over the run may be,
///   over its decided scores: a trial awaiting a person is left out of the
///   mean and counted in the gate's line, and a metric with no decided
///   score fails the gate.
/// - **`max_drop`**: the most a metric's mean may fall against a baseline
///   run (`baseline`, or the suite's `.baseline(…)`, `RAGALIQ_BASELINE`,
///   `cargo ragaliq report --baseline`), over the cases both runs scored
///   (decided scores only, as for `min_mean`).
///
/// Under `cargo test` the suite checks the gates at the end of its run;
/// under cargo-nextest each trial runs alone, so `cargo ragaliq report`
/// checks them over the run's report (or its shards').
///
/// ```
/// use ragaliq::config::Gates;
/// let gates = Gates::new()
///     .pass_rate(0.95)
///     .min_mean_of("recall@5", 0.8)
///     .max_drop(0.02);
/// assert_eq!(gates.pass_rate.for_metric("faithfulness"), Some(0.95));
/// assert_eq!(gates.min_mean.for_metric("faithfulness"), None);
/// assert!(!gates.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Gates {
    /// The share of each metric's trials that must pass.
    pub pass_rate: GateRule,
    /// The least each metric's mean score may be.
    pub min_mean: GateRule,
    /// The most each metric's mean may fall against the baseline run.
    pub max_drop: GateRule,
    /// A previous run's `report.json` (or its folder) for `max_drop`, when
    /// nothing else names one.
    pub baseline: Option<PathBuf>,
}

impl Gates {
    /// No gate.
    #[must_use]
    pub fn new() -> Gates {
        Gates::default()
    }

    /// The share of every metric's trials that must pass.
    #[must_use]
    pub fn pass_rate(mut self, share: f64) -> Gates {
        self.pass_rate.every = Some(share);
        self
    }

    /// The share of `metric`'s trials that must pass.
    #[must_use]
    pub fn pass_rate_of(mut self, metric: impl Into<String>, share: f64) -> Gates {
        self.pass_rate = self.pass_rate.with(metric, share);
        self
    }

    /// The least every metric's mean may be.
    #[must_use]
    pub fn min_mean(mut self, mean: f64) -> Gates {
        self.min_mean.every = Some(mean);
        self
    }

    /// The least `metric`'s mean may be.
    #[must_use]
    pub fn min_mean_of(mut self, metric: impl Into<String>, mean: f64) -> Gates {
        self.min_mean = self.min_mean.with(metric, mean);
        self
    }

    /// The most every metric's mean may fall against the baseline.
    #[must_use]
    pub fn max_drop(mut self, drop: f64) -> Gates {
        self.max_drop.every = Some(drop);
        self
    }

    /// The most `metric`'s mean may fall against the baseline.
    #[must_use]
    pub fn max_drop_of(mut self, metric: impl Into<String>, drop: f64) -> Gates {
        self.max_drop = self.max_drop.with(metric, drop);
        self
    }

    /// The baseline run for `max_drop` (a `report.json`, or its folder).
    #[must_use]
    pub fn baseline(mut self, report: impl Into<PathBuf>) -> Gates {
        self.baseline = Some(report.into());
        self
    }

    /// Whether no gate is set.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.pass_rate.is_empty() && self.min_mean.is_empty() && self.max_drop.is_empty()
    }

    /// Every figure checked, named by `origin` (`ragaliq.toml: gates`).
    ///
    /// ```
    /// use ragaliq::config::Gates;
    /// let e = Gates::new().pass_rate_of("faithfulness", 95.0).check("ragaliq.toml: gates").unwrap_err();
    /// assert_eq!(e.to_string(), "ragaliq.toml: gates.pass_rate.\"faithfulness\" = \"95\" is invalid: expected a number from 0 to 1");
    /// ```
    pub fn check(&self, origin: &str) -> Result<(), ConfigError> {
        self.pass_rate.check(&format!("{origin}.pass_rate"))?;
        self.min_mean.check(&format!("{origin}.min_mean"))?;
        self.max_drop.check(&format!("{origin}.max_drop"))
    }
}
