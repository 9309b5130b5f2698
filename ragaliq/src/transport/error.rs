//! Why a transport call failed, classified so retries know what to do.

use std::fmt;
use std::time::Duration;

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
    /// A body (or one line of it) is longer than ragaliq reads: a server
    /// that sends without end is cut off at a documented limit (see
    /// [`limits`](crate::judge::limits)) instead of filling memory.
    TooLarge {
        /// What was too long (`reply body`, `streamed line`, …).
        what: &'static str,
        /// The limit, in bytes.
        limit: usize,
        /// The limit's name in [`limits`](crate::judge::limits).
        name: &'static str,
    },
    /// The server redirected the call to another origin (scheme, host or
    /// port): not followed, so the API key goes only where it was meant to.
    Redirected {
        /// The redirect's status (301, 302, 303, 307, 308).
        status: u16,
        /// Where it pointed: scheme, host and port.
        to: String,
    },
    /// The run's pace (a provider's `Retry-After` or rate-limit headers)
    /// asks for a longer wait than the retry budget allows: the call fails
    /// at once instead of hanging.
    Paused {
        /// How long the pace would have the call wait, in whole seconds.
        wait_secs: u64,
        /// What asked for the wait (the header and its value).
        why: String,
        /// The retry budget it exceeds, in whole seconds.
        budget_secs: u64,
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
            | TransportErrorKind::TooLarge { .. }
            | TransportErrorKind::Redirected { .. }
            | TransportErrorKind::Paused { .. }
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
                crate::core::JsonMode::NAMES
            )?,
            TransportErrorKind::Timeout { after } => write!(
                f,
                "the judge call{at} timed out after {} (judge.timeout_secs or RAGALIQ_TIMEOUT_SECS, plus half a second per token of the reply's limit)",
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
            TransportErrorKind::TooLarge { what, limit, name } => write!(
                f,
                "the judge server's {what}{at} is longer than ragaliq reads ({limit} bytes, ragaliq::judge::limits::{name}): cut off rather than read without end"
            )?,
            TransportErrorKind::Redirected { status, to } => write!(
                f,
                "the judge server{at} redirected the call (HTTP {status}) to another origin, {to}: not followed, so the API key is sent only{at}; if {to} is the server you mean, set judge.base_url (RAGALIQ_BASE_URL) to it"
            )?,
            TransportErrorKind::Paused {
                wait_secs,
                why,
                budget_secs,
            } => write!(
                f,
                "the run's pace would hold this call{at} for {wait_secs} s ({why}), longer than the retry budget of {budget_secs} s (retry.budget_secs, RAGALIQ_RETRY_BUDGET_SECS): it fails now instead of hanging the run",
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
}
