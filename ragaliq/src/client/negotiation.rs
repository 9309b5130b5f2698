//! Stepping down when a server refuses how it is asked for JSON.
//!
//! The four ways, strongest first: a JSON schema (`json_schema`), a JSON
//! object with the schema as a hint (`json_object` plus `schema`, which
//! llama.cpp servers and vLLM honour), any JSON object, and plain text. A
//! server that answers 400, 422 or 500 with a body that names the response
//! format (`response_format`, `json_schema`, `json_object`, …) is asked once
//! more with the next way, at once, and the rest of the run starts there.
//! The way actually used is part of every fingerprint, and recordings note
//! when it was negotiated, so replay asks for the same thing.

use crate::core::JsonMode;
use std::sync::Mutex;

/// The negotiated mode of one client: where it started, where it is now,
/// and what the server said when it refused.
#[derive(Debug)]
pub(crate) struct Negotiation {
    configured: JsonMode,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    current: JsonMode,
    refusals: Vec<Refusal>,
}

/// One refused response format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The mode the server refused.
    pub refused: JsonMode,
    /// The mode used from then on.
    pub now: JsonMode,
    /// The server's status and message.
    pub reason: String,
}

impl Negotiation {
    pub(crate) fn new(configured: JsonMode, start: JsonMode) -> Self {
        Negotiation {
            configured,
            state: Mutex::new(State {
                current: start.max(configured),
                refusals: Vec::new(),
            }),
        }
    }

    pub(crate) fn configured(&self) -> JsonMode {
        self.configured
    }

    pub(crate) fn current(&self) -> JsonMode {
        self.lock().current
    }

    /// After `refused` was refused: the mode to ask with next, or `None`
    /// when nothing weaker is left. Concurrent refusals step down once.
    pub(crate) fn step_down(&self, refused: JsonMode, reason: &str) -> Option<JsonMode> {
        let mut state = self.lock();
        if state.current > refused {
            return Some(state.current);
        }
        let next = refused.weaker()?;
        state.current = next;
        state.refusals.push(Refusal {
            refused,
            now: next,
            reason: reason.to_owned(),
        });
        Some(next)
    }

    pub(crate) fn refusals(&self) -> Vec<Refusal> {
        self.lock().refusals.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        crate::core::sync::lock(&self.state)
    }
}

/// Whether a failed call says the server does not do token probabilities:
/// a 400 or 422 whose message names them (as OpenAI's reasoning models and
/// some gateways answer a request with `logprobs`).
pub(crate) fn refuses_probabilities(e: &crate::transport::TransportError) -> bool {
    use crate::transport::TransportErrorKind;
    match &e.kind {
        TransportErrorKind::Status {
            status: 400 | 422,
            message,
        } => message.to_ascii_lowercase().contains("logprob"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_down_once_per_refusal_and_never_past_none() {
        let n = Negotiation::new(JsonMode::Schema, JsonMode::Schema);
        assert_eq!(
            n.step_down(JsonMode::Schema, "500"),
            Some(JsonMode::ObjectSchema)
        );
        // A second request that was refused at the old mode does not step again.
        assert_eq!(
            n.step_down(JsonMode::Schema, "500"),
            Some(JsonMode::ObjectSchema)
        );
        assert_eq!(
            n.step_down(JsonMode::ObjectSchema, "x"),
            Some(JsonMode::Object)
        );
        assert_eq!(n.step_down(JsonMode::Object, "x"), Some(JsonMode::None));
        assert_eq!(n.step_down(JsonMode::None, "x"), None);
        assert_eq!(n.refusals().len(), 3);
        assert_eq!(n.configured(), JsonMode::Schema);
    }
}
