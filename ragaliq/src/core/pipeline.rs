//! The pipeline under test: what a suite hands it (a question, with the
//! conversation before it), what it hands back (what it retrieved and what
//! it answered), and where the loopback endpoint forwards its own model
//! calls when it records them.

use std::time::Duration;

/// One earlier exchange of a conversation: what the user said and what the
/// pipeline answered.
///
/// ```
/// use ragaliq::pipeline::Turn;
/// let turn = Turn::new("Can I return shoes?", "Yes, within 30 days of delivery.");
/// assert_eq!(turn.user, "Can I return shoes?");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Turn {
    /// The user's message.
    pub user: String,
    /// The pipeline's answer to it.
    pub assistant: String,
}

impl Turn {
    /// A turn of `user`'s message and the `assistant`'s answer.
    #[must_use]
    pub fn new(user: impl Into<String>, assistant: impl Into<String>) -> Turn {
        Turn {
            user: user.into(),
            assistant: assistant.into(),
        }
    }
}

/// What a suite hands the pipeline under test for one case: the case's
/// query and, for a conversation, the turns before it, oldest first
/// (empty for a single question).
///
/// ```
/// use ragaliq::pipeline::{Input, Turn};
/// let input = Input::new("And shoes?")
///     .with_history([Turn::new("Can I return a shirt?", "Yes, within 30 days.")]);
/// assert_eq!(input.query, "And shoes?");
/// assert_eq!(input.history.len(), 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Input {
    /// The question to answer now.
    pub query: String,
    /// The conversation before it, oldest first; empty for a single question.
    pub history: Vec<Turn>,
}

impl Input {
    /// A single question, with no history.
    #[must_use]
    pub fn new(query: impl Into<String>) -> Input {
        Input {
            query: query.into(),
            history: Vec::new(),
        }
    }

    /// This question, asked after `turns` (oldest first).
    #[must_use]
    pub fn with_history(mut self, turns: impl IntoIterator<Item = Turn>) -> Input {
        self.history = turns.into_iter().collect();
        self
    }
}

/// What the pipeline under test did with an [`Input`]: the passages it
/// retrieved (best first, what the judge grades the answer against), their
/// IDs when it has them (for the retrieval metrics), and its answer.
///
/// ```
/// use ragaliq::pipeline::Answered;
/// let answered = Answered::new("Refunds are accepted within 30 days.")
///     .context(["Refunds are accepted within 30 days of delivery."])
///     .retrieved_ids(["policy-12"]);
/// assert_eq!(answered.context.len(), 1);
/// assert_eq!(answered.retrieved_ids.as_deref(), Some(&["policy-12".to_owned()][..]));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Answered {
    /// The answer.
    pub response: String,
    /// The passages retrieved, best first.
    pub context: Vec<String>,
    /// The IDs of the passages retrieved, best first, when the retriever
    /// has them; `None` leaves the case file's `retrieved_ids` as they are.
    pub retrieved_ids: Option<Vec<String>>,
}

impl Answered {
    /// An answer, with no passages yet.
    #[must_use]
    pub fn new(response: impl Into<String>) -> Answered {
        Answered {
            response: response.into(),
            ..Answered::default()
        }
    }

    /// The passages retrieved, best first.
    #[must_use]
    pub fn context<I, S>(mut self, passages: I) -> Answered
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.context = passages.into_iter().map(Into::into).collect();
        self
    }

    /// The IDs of the passages retrieved, best first.
    #[must_use]
    pub fn retrieved_ids<I, S>(mut self, ids: I) -> Answered
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.retrieved_ids = Some(ids.into_iter().map(Into::into).collect());
        self
    }
}

/// OpenAI's API, where the pipeline's OpenAI-compatible calls go when
/// nothing else is configured.
pub const OPENAI_UPSTREAM: &str = "https://api.openai.com/v1";
/// Anthropic's API, where the pipeline's `/v1/messages` calls go when
/// nothing else is configured.
pub const ANTHROPIC_UPSTREAM: &str = "https://api.anthropic.com/v1";

/// Where the loopback endpoint sends the pipeline's calls when it records
/// them (`[pipeline]` in `ragaliq.toml`, `RAGALIQ_PIPELINE_*`), and how it
/// bounds them. Replay sends nothing anywhere.
///
/// ```
/// use ragaliq::pipeline::Settings;
/// let s = Settings::default();
/// assert_eq!(s.openai_base_url, "https://api.openai.com/v1");
/// assert_eq!(s.timeout.as_secs(), 120);
/// let local = Settings::default().openai("http://127.0.0.1:8766/v1");
/// assert_eq!(local.openai_base_url, "http://127.0.0.1:8766/v1");
/// ```
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct Settings {
    /// Where OpenAI-compatible calls go (`/v1/chat/completions`,
    /// `/v1/completions`, `/v1/embeddings`, `/v1/models`), up to and
    /// including `/v1`.
    pub openai_base_url: String,
    /// Where Anthropic Messages calls (`/v1/messages`) go, up to and
    /// including `/v1`.
    pub anthropic_base_url: String,
    /// The longest one forwarded call may take, from the request to the
    /// last byte of the answer.
    pub timeout: Duration,
    /// The longest a streamed answer may go without a byte.
    pub idle_timeout: Duration,
    /// Most forwarded calls in flight at once in this process.
    pub concurrency: usize,
    /// The judge's run-wide concurrency limit, pace and cost budget count
    /// the pipeline's live calls too (the team's one budget for both).
    pub shared_limits: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            openai_base_url: OPENAI_UPSTREAM.to_owned(),
            anthropic_base_url: ANTHROPIC_UPSTREAM.to_owned(),
            timeout: Duration::from_secs(120),
            idle_timeout: Duration::from_secs(30),
            concurrency: 8,
            shared_limits: false,
        }
    }
}

impl Settings {
    /// These settings, sending OpenAI-compatible calls to `base_url` (up to
    /// and including `/v1`).
    #[must_use]
    pub fn openai(mut self, base_url: impl Into<String>) -> Settings {
        self.openai_base_url = base_url.into();
        self
    }

    /// These settings, sending Anthropic Messages calls to `base_url` (up
    /// to and including `/v1`).
    #[must_use]
    pub fn anthropic(mut self, base_url: impl Into<String>) -> Settings {
        self.anthropic_base_url = base_url.into();
        self
    }

    /// These settings, with each forwarded call bounded by `timeout` (and
    /// a streamed answer's silences by the same, when shorter than the
    /// idle timeout).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Settings {
        self.timeout = timeout;
        self.idle_timeout = self.idle_timeout.min(timeout);
        self
    }
}

/// A base URL without what may hold a secret (a query string, user
/// information), for `Debug` output.
fn shown(url: &str) -> String {
    let url = url.split_once('?').map_or(url, |(before, _)| before);
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((_, host)) => format!("{scheme}://***@{host}{path}"),
        None => url.to_owned(),
    }
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("openai_base_url", &shown(&self.openai_base_url))
            .field("anthropic_base_url", &shown(&self.anthropic_base_url))
            .field("timeout", &self.timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("concurrency", &self.concurrency)
            .field("shared_limits", &self.shared_limits)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_what_a_url_may_hold_secret() {
        let s = Settings::default()
            .openai("https://user:pw@gateway.example/v1?token=abc")
            .anthropic("http://127.0.0.1:9/v1");
        let text = format!("{s:?}");
        assert!(!text.contains("abc") && !text.contains("pw"), "{text}");
        assert!(text.contains("https://***@gateway.example/v1"), "{text}");
        assert!(text.contains("http://127.0.0.1:9/v1"), "{text}");
    }
}
