//! Every error ragaliq returns: [`Error`] and the typed errors it wraps.

use crate::case::CaseError;
use crate::evaluation::Metric;
use crate::parse::ParseError;
use crate::record::RecordingError;
use std::fmt;
use std::time::Duration;

/// Shorthand for `Result<T, ragaliq::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why an evaluation could not be computed. A low score is not an error: it
/// is an [`Evaluation`](crate::Evaluation) with `passed == false`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The case itself is invalid.
    #[error(transparent)]
    Case(#[from] CaseError),
    /// Configuration (file, environment, templates) is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The judge could not be reached, or answered with an error.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// A recording cannot serve an exchange (replay mode: missing or stale;
    /// any mode: unreadable).
    #[error(transparent)]
    Recording(#[from] RecordingError),
    /// The judge answered, but the reply cannot be read.
    #[error("{task}: {source}")]
    JudgeResponse {
        /// The task whose reply it was (`verify_claims`, …).
        task: &'static str,
        /// What was wrong, with the raw reply.
        source: ParseError,
    },
    /// The cost budget is spent: this live call was not made.
    #[error(
        "cost budget reached: ${spent:.4} of ${budget:.2} spent on {calls} live calls; this call was skipped (raise RAGALIQ_MAX_COST_USD or cost.max_usd to spend more)"
    )]
    BudgetExhausted {
        /// The budget in dollars.
        budget: f64,
        /// Dollars spent (estimated) when the call was refused.
        spent: f64,
        /// Live calls made before it.
        calls: u64,
    },
    /// The metric needs a part of the case that it lacks.
    #[error("{metric} needs {what}")]
    MissingInput {
        /// The metric.
        metric: Metric,
        /// What is missing, e.g. "expected facts or an expected answer".
        what: &'static str,
    },
}

/// Invalid configuration; always names the key, variable or file at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A value that is not one of the accepted ones.
    #[error("{origin} = {value:?} is invalid: expected {expected}")]
    Invalid {
        /// Where the value came from: `RAGALIQ_CONCURRENCY`, or
        /// `ragaliq.toml: judge.concurrency`.
        origin: String,
        /// The value as written.
        value: String,
        /// What would have been accepted.
        expected: String,
    },
    /// A configuration file that cannot be read or parsed.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// The reader's or parser's message (with line and column).
        message: String,
    },
    /// A prompt template that cannot be read or parsed.
    #[error("prompt template {origin}: {problem}")]
    Template {
        /// The file (or built-in name).
        origin: String,
        /// What is wrong.
        problem: String,
    },
}

/// The judge's transport failed. `attempts` and `elapsed` say how hard the
/// judge tried before giving up.
#[derive(Clone, Debug, PartialEq)]
pub struct TransportError {
    /// What happened on the last attempt.
    pub kind: TransportErrorKind,
    /// The server's `Retry-After`, when it sent one.
    pub retry_after: Option<Duration>,
    /// Attempts made (1 when the error was not retryable).
    pub attempts: u32,
    /// Time from the first attempt to giving up.
    pub elapsed: Duration,
    /// Set when the retry time budget, not the attempt count, ended the retries.
    pub budget_exhausted: bool,
}

/// What went wrong in one transport attempt.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum TransportErrorKind {
    /// The server answered with a non-success status.
    Status {
        /// The HTTP status code.
        status: u16,
        /// The server's own error message (or the start of its body).
        message: String,
    },
    /// No answer within the per-call timeout.
    Timeout {
        /// The timeout that expired.
        after: Duration,
    },
    /// The connection could not be made, or broke before a response.
    Connect {
        /// The client's description.
        message: String,
    },
    /// The response body broke off or could not be read.
    Body {
        /// The client's description.
        message: String,
    },
    /// A success response whose body is not the provider's JSON format.
    Decode {
        /// What was wrong.
        message: String,
        /// The start of the body as received.
        body: String,
    },
    /// No API key is available for a provider that needs one.
    MissingApiKey {
        /// The environment variable that should hold it.
        variable: String,
    },
    /// Anything else a custom transport reports.
    Other {
        /// The description.
        message: String,
    },
}

impl TransportError {
    /// An error of `kind`, not yet retried.
    #[must_use]
    pub fn new(kind: TransportErrorKind) -> Self {
        TransportError {
            kind,
            retry_after: None,
            attempts: 1,
            elapsed: Duration::ZERO,
            budget_exhausted: false,
        }
    }

    /// A non-success HTTP status with the server's message.
    #[must_use]
    pub fn status(status: u16, message: impl Into<String>) -> Self {
        Self::new(TransportErrorKind::Status {
            status,
            message: message.into(),
        })
    }

    /// Any other failure, described.
    #[must_use]
    pub fn other(message: impl Into<String>) -> Self {
        Self::new(TransportErrorKind::Other {
            message: message.into(),
        })
    }

    /// Records the server's `Retry-After`.
    #[must_use]
    pub fn with_retry_after(mut self, after: Option<Duration>) -> Self {
        self.retry_after = after;
        self
    }

    /// Whether another attempt may succeed: 408, 425, 429 and 5xx statuses,
    /// timeouts, connection failures and broken bodies.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        match &self.kind {
            TransportErrorKind::Status { status, .. } => {
                matches!(status, 408 | 425 | 429) || *status >= 500
            }
            TransportErrorKind::Timeout { .. }
            | TransportErrorKind::Connect { .. }
            | TransportErrorKind::Body { .. } => true,
            TransportErrorKind::Decode { .. }
            | TransportErrorKind::MissingApiKey { .. }
            | TransportErrorKind::Other { .. } => false,
        }
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            TransportErrorKind::Status { status, message } => {
                write!(f, "judge server answered HTTP {status}")?;
                if !message.is_empty() {
                    write!(f, ": {message}")?;
                }
            }
            TransportErrorKind::Timeout { after } => {
                write!(f, "judge call timed out after {}", secs(*after))?
            }
            TransportErrorKind::Connect { message } => {
                write!(f, "could not reach the judge server: {message}")?
            }
            TransportErrorKind::Body { message } => {
                write!(f, "the judge server's response broke off: {message}")?
            }
            TransportErrorKind::Decode { message, body } => write!(
                f,
                "the judge server's response is not valid: {message}; body starts: {body:?}"
            )?,
            TransportErrorKind::MissingApiKey { variable } => write!(
                f,
                "no API key: set {variable} to call the judge (replayed recordings need none)"
            )?,
            TransportErrorKind::Other { message } => f.write_str(message)?,
        }
        if self.attempts > 1 || self.budget_exhausted {
            write!(
                f,
                " (gave up after {} attempt{} in {}{})",
                self.attempts,
                if self.attempts == 1 { "" } else { "s" },
                secs(self.elapsed),
                if self.budget_exhausted {
                    ", retry time budget exhausted"
                } else {
                    ""
                }
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for TransportError {}

fn secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable_statuses() {
        for s in [408, 425, 429, 500, 502, 503, 529] {
            assert!(TransportError::status(s, "").is_retryable(), "{s}");
        }
        for s in [400, 401, 403, 404, 422] {
            assert!(!TransportError::status(s, "").is_retryable(), "{s}");
        }
    }

    #[test]
    fn display_says_how_hard_it_tried() {
        let mut e = TransportError::status(429, "Rate limit reached");
        e.attempts = 3;
        e.elapsed = Duration::from_millis(1300);
        assert_eq!(
            e.to_string(),
            "judge server answered HTTP 429: Rate limit reached (gave up after 3 attempts in 1.3s)"
        );
    }
}
