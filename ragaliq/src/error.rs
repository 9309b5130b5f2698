//! Every error ragaliq returns: [`Error`], the one aggregator of the
//! layers' own error types (a case's, configuration's, a reply parser's, a
//! transport's and a recording's).

use crate::core::{CaseError, ConfigError, Metric};
use crate::parse::ParseError;
use crate::record::RecordingError;
use crate::retrieval::RetrievalError;
use crate::transport::TransportError;

/// How messages name an evaluation a recording could not serve: a problem
/// of the test's setup, not of the answer and not of the judge.
pub(crate) const NOT_RECORDED: &str =
    "no usable recording (a setup problem: this is not a low score, and the judge was not asked)";

/// Shorthand for `Result<T, ragaliq::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why an evaluation could not be computed. A low score is not an error: it
/// is an [`Evaluation`](crate::Evaluation) with `passed == false`.
///
/// Errors fall in two families, which assertion macros, suites and reports
/// keep apart: [configuration errors](Error::is_configuration) (the case or
/// the settings cannot be scored this way; fix the test) and judge errors
/// (the judge could not answer, or its answer could not be used; the test
/// says nothing about the answer being graded).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The case itself is invalid.
    #[error(transparent)]
    Case(#[from] CaseError),
    /// Configuration (file, environment, templates, options) is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The metric needs a part of the case that it lacks.
    #[error("{metric} needs {what}")]
    MissingInput {
        /// The metric.
        metric: Metric,
        /// What is missing, e.g. "expected facts or an expected answer".
        what: &'static str,
    },
    /// The judge could not be reached, or answered with an error.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// A recording cannot serve an exchange (replay mode: missing or stale;
    /// any mode: unreadable).
    #[error(transparent)]
    Recording(#[from] RecordingError),
    /// A person's verdict in the recording cannot decide what it is kept
    /// for (a word the metric does not take, a verdict on an answer given
    /// in JSON): fix or remove it (`cargo ragaliq review`).
    #[error("a person's verdict in the recording cannot be used: {problem}")]
    Reviewed {
        /// What is wrong with it.
        problem: String,
    },
    /// The judge answered, but the reply cannot be read.
    #[error("{task}: {source}")]
    JudgeResponse {
        /// The task whose reply it was (`verify_claims`, …).
        task: &'static str,
        /// What was wrong, with the raw reply.
        source: ParseError,
    },
    /// The judge's reply hit its token limit and was cut off.
    #[error("{}", truncated_message(task, *limit, *ceiling, items, raw))]
    Truncated {
        /// The task.
        task: &'static str,
        /// The reply's token limit for this request.
        limit: u32,
        /// The configured ceiling (`judge.max_tokens`).
        ceiling: u32,
        /// What the limit was sized for, e.g. "3 claims"; empty when the
        /// ceiling itself was the limit.
        items: String,
        /// The reply as far as it came.
        raw: String,
    },
    /// The state a run's processes share (the budget's ledger, a lock)
    /// cannot be used: the live call was not made.
    #[error("{problem}")]
    RunState {
        /// What cannot be used, and why.
        problem: String,
    },
    /// Collect mode (`cargo ragaliq record --batch`): the question was
    /// queued for the provider's batch API instead of being asked; the
    /// round after the batch ends has its answer.
    #[error(
        "{task}: queued for the provider's batch API in {} (collect mode: `cargo ragaliq record --batch` asks it and runs this test again)",
        folder.display()
    )]
    Queued {
        /// The task whose question was queued.
        task: String,
        /// The batch folder.
        folder: std::path::PathBuf,
    },
    /// The pipeline under test could not answer the case: its function
    /// returned an error, or one of its model calls failed at the loopback
    /// endpoint (a call its recording does not hold, in replay; an
    /// upstream that failed, answered garbage or hung). The judge was not
    /// asked.
    #[error("{message}")]
    Pipeline {
        /// What failed, and what to do.
        message: String,
        /// A call its recording does not hold (replay mode): a setup
        /// problem, counted with the recording errors.
        not_recorded: bool,
    },
    /// A turn of a conversation could not be evaluated: the turn, and why.
    /// Asked of its family (configuration, judge, recording, budget), it
    /// answers as the error inside does.
    #[error("turn {turn}: {source}")]
    InTurn {
        /// The turn (1 for the first).
        turn: usize,
        /// Why it could not be evaluated.
        source: Box<Error>,
    },
    /// The cost budget is spent: this live call was not made.
    #[error(
        "cost budget reached: ${spent:.4} of ${budget:.2} spent on {calls} live calls in this run; this call was skipped (raise RAGALIQ_MAX_COST_USD or cost.max_usd to spend more)"
    )]
    BudgetExhausted {
        /// The budget in dollars.
        budget: f64,
        /// Dollars spent (estimated) in the run when the call was refused.
        spent: f64,
        /// Live calls made in the run before it.
        calls: u64,
    },
}

/// A retrieval metric's error as the crate's: an input error of the case,
/// or a configuration error.
///
/// ```
/// use ragaliq::{Error, RagCase};
/// let unlabelled = RagCase::new("q").retrieved_ids(["a"]);
/// let e: Error = ragaliq::retrieval::mrr().evaluate(&unlabelled).unwrap_err().into();
/// assert!(e.is_configuration(), "an input error, not a judge's");
/// ```
impl From<RetrievalError> for Error {
    fn from(e: RetrievalError) -> Error {
        match e {
            RetrievalError::Case(e) => Error::Case(e),
            RetrievalError::Config(e) => Error::Config(e),
        }
    }
}

fn truncated_message(task: &str, limit: u32, ceiling: u32, items: &str, raw: &str) -> String {
    let mut out = format!("{task}: the judge's reply was cut off at its token limit of {limit}");
    if items.is_empty() || limit >= ceiling {
        out.push_str(&format!(
            " (judge.max_tokens = {ceiling}): raise judge.max_tokens or RAGALIQ_MAX_TOKENS"
        ));
    } else {
        out.push_str(&format!(
            ", sized for {items} under judge.max_tokens = {ceiling}: a model that reasons before answering needs more; set judge.sized_max_tokens = false (RAGALIQ_SIZED_MAX_TOKENS=false) to allow the full ceiling"
        ));
    }
    let shown: String = raw.chars().take(300).collect();
    out.push_str(&format!("\n--- reply as far as it came ---\n{shown}"));
    if shown.len() < raw.len() {
        out.push('…');
    }
    out
}

impl Error {
    /// The error itself, inside the turn it happened in, if any.
    fn inner(&self) -> &Error {
        match self {
            Error::InTurn { source, .. } => source.inner(),
            other => other,
        }
    }

    /// Whether this is a configuration error: the case, an option or a
    /// setting is wrong, and no judge could have scored it as asked.
    ///
    /// ```
    /// use ragaliq::{Error, Metric};
    /// let e = Error::MissingInput { metric: Metric::ContextRecall, what: "expected facts" };
    /// assert!(e.is_configuration());
    /// ```
    #[must_use]
    pub fn is_configuration(&self) -> bool {
        matches!(
            self.inner(),
            Error::Case(_) | Error::Config(_) | Error::MissingInput { .. }
        )
    }

    /// Whether a recording could not serve the evaluation (replay mode:
    /// missing or stale; any mode: unreadable or not lockable): a problem
    /// of the test's setup, reported apart from the judge's failures.
    #[must_use]
    pub fn is_recording(&self) -> bool {
        matches!(
            self.inner(),
            Error::Recording(_)
                | Error::Reviewed { .. }
                | Error::Pipeline {
                    not_recorded: true,
                    ..
                }
        )
    }

    /// Whether the pipeline under test could not answer the case (its
    /// function failed, or one of its model calls did): the judge was not
    /// asked, and the answer was not graded.
    #[must_use]
    pub fn is_pipeline(&self) -> bool {
        matches!(self.inner(), Error::Pipeline { .. })
    }

    /// Whether the question was queued for a batch (collect mode) instead
    /// of being asked: no score yet, and nothing wrong.
    #[must_use]
    pub fn is_queued(&self) -> bool {
        matches!(self.inner(), Error::Queued { .. })
    }

    /// Whether the judge's reply could not be read (a `JudgeResponse`
    /// error, carrying the raw reply).
    #[must_use]
    pub(crate) fn is_judge_reply(&self) -> bool {
        matches!(self.inner(), Error::JudgeResponse { .. })
    }

    /// Whether the run's cost budget stopped this evaluation.
    #[must_use]
    pub fn is_budget(&self) -> bool {
        matches!(self.inner(), Error::BudgetExhausted { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_names_the_limit_to_raise() {
        let sized = truncated_message("verify_claims", 640, 2048, "3 claims", "{\"verdicts\": [");
        assert!(
            sized.contains("sized for 3 claims under judge.max_tokens = 2048"),
            "{sized}"
        );
        assert!(sized.contains("judge.sized_max_tokens = false"), "{sized}");
        let ceiling = truncated_message("relevance", 2048, 2048, "", "{");
        assert!(ceiling.contains("raise judge.max_tokens"), "{ceiling}");
    }
}
