//! `assert_retrieved!`: retrieval measured against labels, with no judge.

use super::outcome::{Failure, note_failure};
use crate::core::{Evaluation, RagCase};

/// What `assert_retrieved!` measures: one case (its score), or a set of
/// cases (the mean over them).
pub trait Retrievable {
    /// What the assertion returns: an [`Evaluation`], or the set's
    /// [`Mean`](crate::retrieval::Mean).
    type Output;

    /// The metric against `threshold`: what it measured, or the failure
    /// message.
    fn assert_retrieved(
        &self,
        metric: crate::retrieval::RetrievalMetric,
    ) -> Result<Self::Output, String>;
}

/// How a message names a case: its id, else its query.
fn named(case: &RagCase) -> String {
    match &case.id {
        Some(id) => format!("case `{id}`"),
        None => format!("case {:?}", case.query.trim()),
    }
}

/// An input error as a message says it, after the case is named.
fn problem(error: &crate::retrieval::RetrievalError) -> String {
    match error {
        crate::retrieval::RetrievalError::Case(e) => e.problem.clone(),
        other => other.to_string(),
    }
}

impl Retrievable for RagCase {
    type Output = Evaluation;

    fn assert_retrieved(
        &self,
        metric: crate::retrieval::RetrievalMetric,
    ) -> Result<Evaluation, String> {
        match metric.evaluate(self) {
            Ok(eval) if eval.passed => Ok(eval),
            Ok(eval) => {
                note_failure(Failure::Score);
                Err(format!(
                    "assert_retrieved! failed for {}\n{eval}",
                    named(self)
                ))
            }
            Err(e) => {
                note_failure(Failure::Judge);
                Err(format!(
                    "assert_retrieved! configuration error for {}: {} (this is not a low score: the case cannot be measured this way)",
                    named(self),
                    problem(&e)
                ))
            }
        }
    }
}

impl Retrievable for [RagCase] {
    type Output = crate::retrieval::Mean;

    fn assert_retrieved(
        &self,
        metric: crate::retrieval::RetrievalMetric,
    ) -> Result<crate::retrieval::Mean, String> {
        match metric.mean(self) {
            Ok(mean) if mean.passed => Ok(mean),
            Ok(mean) => {
                note_failure(Failure::Score);
                Err(format!(
                    "assert_retrieved! failed for {} cases\n{mean}",
                    mean.cases.len()
                ))
            }
            Err(e) => {
                note_failure(Failure::Judge);
                let which = match &e {
                    crate::retrieval::RetrievalError::Case(c) => match &c.id {
                        Some(id) => format!(" (case `{id}`)"),
                        None => String::new(),
                    },
                    _ => String::new(),
                };
                Err(format!(
                    "assert_retrieved! configuration error for a set of {} cases{which}: {} (this is not a low score: the set cannot be measured this way)",
                    self.len(),
                    problem(&e)
                ))
            }
        }
    }
}

impl Retrievable for Vec<RagCase> {
    type Output = crate::retrieval::Mean;

    fn assert_retrieved(
        &self,
        metric: crate::retrieval::RetrievalMetric,
    ) -> Result<crate::retrieval::Mean, String> {
        self.as_slice().assert_retrieved(metric)
    }
}

impl<const N: usize> Retrievable for [RagCase; N] {
    type Output = crate::retrieval::Mean;

    fn assert_retrieved(
        &self,
        metric: crate::retrieval::RetrievalMetric,
    ) -> Result<crate::retrieval::Mean, String> {
        self.as_slice().assert_retrieved(metric)
    }
}

impl<T: Retrievable + ?Sized> Retrievable for &T {
    type Output = T::Output;

    fn assert_retrieved(
        &self,
        metric: crate::retrieval::RetrievalMetric,
    ) -> Result<T::Output, String> {
        (**self).assert_retrieved(metric)
    }
}

/// `assert_retrieved!`: the comparison `metric >= threshold` on `subject`.
pub fn assert_retrieved<S: Retrievable + ?Sized>(
    subject: &S,
    (metric, threshold): (crate::retrieval::RetrievalMetric, impl Into<f64>),
) -> Result<S::Output, String> {
    subject.assert_retrieved(metric.threshold(threshold.into()))
}
