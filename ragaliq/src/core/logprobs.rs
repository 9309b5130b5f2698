//! Token probabilities a judge's server returns with its reply: for each
//! token it wrote, the token's log-probability and its likeliest
//! alternatives at that position (OpenAI's `logprobs` / `top_logprobs`,
//! which llama.cpp, vLLM and others return too).
//!
//! A yes/no question answered in one token is read from these rather than
//! from the word written: P(yes) over the alternatives says how sure the
//! judge is, and a threshold on it can be fitted to people's labels.

use serde::{Deserialize, Serialize};

/// One alternative at a position: a token and its log-probability.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TopLogprob {
    /// The token's text, as the server gives it (`"Yes"`, `" no"`).
    pub token: String,
    /// Its natural log-probability (0 is certain).
    pub logprob: f64,
}

/// One token of the reply, with the alternatives the server listed.
///
/// ```
/// use ragaliq::judge::{TokenLogprob, TopLogprob};
/// let t = TokenLogprob {
///     token: "Yes".into(),
///     logprob: -0.1,
///     top: vec![
///         TopLogprob { token: "Yes".into(), logprob: -0.1 },
///         TopLogprob { token: "No".into(), logprob: -2.4 },
///     ],
/// };
/// assert!((t.probability() - 0.905).abs() < 1e-3);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TokenLogprob {
    /// The token written.
    pub token: String,
    /// Its log-probability.
    pub logprob: f64,
    /// The likeliest tokens at this position (the one written among them),
    /// likeliest first; empty when the server gave none.
    #[serde(default)]
    pub top: Vec<TopLogprob>,
}

impl TokenLogprob {
    /// The probability of the token written.
    #[must_use]
    pub fn probability(&self) -> f64 {
        self.logprob.exp()
    }
}
