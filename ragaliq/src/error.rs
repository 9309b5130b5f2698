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
            self,
            Error::Case(_) | Error::Config(_) | Error::MissingInput { .. }
        )
    }

    /// Whether the run's cost budget stopped this evaluation.
    #[must_use]
    pub fn is_budget(&self) -> bool {
        matches!(self, Error::BudgetExhausted { .. })
    }
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
    /// A required setting that nobody gave.
    #[error("{what} is not set: {how}")]
    Missing {
        /// The setting, e.g. "the judge's model".
        what: String,
        /// Where to set it, naming the file and the variable.
        how: String,
    },
    /// A value that must not be shown (it may be a secret), with why it is wrong.
    #[error("{origin} is invalid: {problem} (the value is not shown, in case it is a secret)")]
    Hidden {
        /// Where the value came from.
        origin: String,
        /// What is wrong with it.
        problem: String,
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
/// judge tried before giving up; `endpoint` says where the calls went.
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
    /// Where the calls went: scheme, host and port (never a path or key).
    pub endpoint: Option<String>,
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
    /// The server refused the requested response format (a 400, 422 or 500
    /// whose message names it). The judge steps down to a weaker format
    /// instead of retrying this one.
    FormatRefused {
        /// The HTTP status code.
        status: u16,
        /// The server's message.
        message: String,
    },
    /// No complete answer within the per-call timeout.
    Timeout {
        /// The timeout that expired.
        after: Duration,
    },
    /// A streamed answer stopped: no data for this long.
    IdleTimeout {
        /// The idle timeout that expired.
        after: Duration,
    },
    /// The connection could not be made, or broke before a response.
    Connect {
        /// The client's description.
        message: String,
    },
    /// Nothing listens at a local address (connection refused on loopback):
    /// the server is not running, so retrying is pointless.
    Unreachable {
        /// The client's description.
        message: String,
    },
    /// A streamed reply ended before the server said it was complete: a
    /// server that answers one request at a time stopped it for another
    /// (llama-cpp-python does). The judge then sends one request at a time.
    Interrupted {
        /// What was seen.
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
    /// No server address is configured (needed only for live calls).
    MissingBaseUrl {
        /// The provider.
        provider: String,
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
            endpoint: None,
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

    /// Records where the call went.
    #[must_use]
    pub fn with_endpoint(mut self, endpoint: Option<String>) -> Self {
        if self.endpoint.is_none() {
            self.endpoint = endpoint;
        }
        self
    }

    /// Whether another attempt may succeed: 408, 425, 429 and 5xx statuses,
    /// timeouts, connection failures (except to a local port where nothing
    /// listens) and broken bodies.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        match &self.kind {
            TransportErrorKind::Status { status, .. } => {
                matches!(status, 408 | 425 | 429) || *status >= 500
            }
            TransportErrorKind::Timeout { .. }
            | TransportErrorKind::IdleTimeout { .. }
            | TransportErrorKind::Connect { .. }
            | TransportErrorKind::Interrupted { .. }
            | TransportErrorKind::Body { .. } => true,
            TransportErrorKind::FormatRefused { .. }
            | TransportErrorKind::Unreachable { .. }
            | TransportErrorKind::Decode { .. }
            | TransportErrorKind::MissingApiKey { .. }
            | TransportErrorKind::MissingBaseUrl { .. }
            | TransportErrorKind::Other { .. } => false,
        }
    }

    /// Whether the attempt ran out of time (total or idle).
    #[must_use]
    pub fn is_timeout(&self) -> bool {
        matches!(
            self.kind,
            TransportErrorKind::Timeout { .. } | TransportErrorKind::IdleTimeout { .. }
        )
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self
            .endpoint
            .as_deref()
            .map(|e| format!(" at {e}"))
            .unwrap_or_default();
        match &self.kind {
            TransportErrorKind::Status { status, message } => {
                write!(f, "the judge server{at} answered HTTP {status}")?;
                if !message.is_empty() {
                    write!(f, ": {message}")?;
                }
            }
            TransportErrorKind::FormatRefused { status, message } => write!(
                f,
                "the judge server{at} refused the response format (HTTP {status}: {message}); set judge.json_mode (RAGALIQ_JSON_MODE) to one it accepts: {}",
                crate::judge::JsonMode::NAMES
            )?,
            TransportErrorKind::Timeout { after } => write!(
                f,
                "the judge call{at} timed out after {} (judge.timeout_secs, RAGALIQ_TIMEOUT_SECS)",
                secs(*after)
            )?,
            TransportErrorKind::IdleTimeout { after } => write!(
                f,
                "the judge server{at} stopped sending for {} in the middle of its answer (judge.idle_timeout_secs, RAGALIQ_IDLE_TIMEOUT_SECS); the connection was closed so the server stops generating",
                secs(*after)
            )?,
            TransportErrorKind::Connect { message } => {
                write!(f, "could not reach the judge server{at}: {message}")?
            }
            TransportErrorKind::Unreachable { message } => write!(
                f,
                "nothing is listening{at} ({message}): is the judge server running? (not retried)"
            )?,
            TransportErrorKind::Body { message } => {
                write!(f, "the judge server's response{at} broke off: {message}")?
            }
            TransportErrorKind::Interrupted { message } => write!(
                f,
                "the judge server{at} stopped its streamed reply: {message}"
            )?,
            TransportErrorKind::Decode { message, body } => write!(
                f,
                "the judge server's response{at} is not valid: {message}; body starts: {body:?}"
            )?,
            TransportErrorKind::MissingApiKey { variable } => write!(
                f,
                "no API key: set {variable} to call the judge{at} (replayed recordings need none)"
            )?,
            TransportErrorKind::MissingBaseUrl { provider } => write!(
                f,
                "no server address for provider {provider}: set judge.base_url in ragaliq.toml, RAGALIQ_BASE_URL, or RAGALIQ_JUDGE=http://host:port/v1 (replayed recordings need none)"
            )?,
            TransportErrorKind::Other { message } => {
                f.write_str(message)?;
                if !at.is_empty() {
                    write!(f, " ({})", at.trim_start())?;
                }
            }
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
        let refused = TransportError::new(TransportErrorKind::Unreachable {
            message: "connection refused".into(),
        });
        assert!(!refused.is_retryable());
    }

    #[test]
    fn display_says_how_hard_it_tried_and_where() {
        let mut e = TransportError::status(429, "Rate limit reached")
            .with_endpoint(Some("https://api.openai.com:443".into()));
        e.attempts = 3;
        e.elapsed = Duration::from_millis(1300);
        assert_eq!(
            e.to_string(),
            "the judge server at https://api.openai.com:443 answered HTTP 429: Rate limit reached (gave up after 3 attempts in 1.3s)"
        );
    }

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
