//! What an assertion macro evaluates, and what it expects of the
//! evaluation.

use crate::core::Metric;

/// What an assertion macro expects of the evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The score reaches the threshold (`assert_faithful!`, …).
    Pass,
    /// The score stays below it: a bad answer is caught (`assert_caught!`).
    Caught,
}

/// What an assertion macro evaluates.
pub enum What<'a> {
    /// A built-in metric.
    Metric(Metric),
    /// Criteria (`assert_judged!`).
    Criteria(crate::Criteria),
    /// A metric of one's own (`assert_metric!`).
    Custom(&'a crate::CustomMetric),
}

impl From<Metric> for What<'_> {
    fn from(m: Metric) -> Self {
        What::Metric(m)
    }
}

/// Criteria for `assert_judged!`: a `&str`, a `String` or a [`Criteria`](crate::Criteria).
pub fn criteria<'a>(c: impl Into<crate::Criteria>) -> What<'a> {
    What::Criteria(c.into())
}

/// A metric of one's own for `assert_metric!`.
pub fn custom(m: &crate::CustomMetric) -> What<'_> {
    What::Custom(m)
}
