//! How a server is asked for JSON, and stepping down when it refuses.
//!
//! The four ways, strongest first: a JSON schema (`json_schema`), a JSON
//! object with the schema as a hint (`json_object` plus `schema`, which
//! llama.cpp servers and vLLM honour), any JSON object, and plain text. A
//! server that answers 400, 422 or 500 with a body that names the response
//! format (`response_format`, `json_schema`, `json_object`, …) is asked once
//! more with the next way, at once, and the rest of the run starts there.
//! The way actually used is part of every fingerprint, and recordings note
//! when it was negotiated, so replay asks for the same thing.

use super::request::ResponseFormat;
use serde::{Deserialize, Serialize};
use std::sync::Mutex;

/// How a server is asked for JSON (`judge.json_mode`, `RAGALIQ_JSON_MODE`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum JsonMode {
    /// `response_format: {"type": "json_schema", …}` with the task's schema,
    /// strict (OpenAI structured outputs, vLLM, llama.cpp's `llama-server`,
    /// LM Studio, recent Ollama). Anthropic: forced tool use.
    #[default]
    Schema,
    /// `{"type": "json_object", "schema": …}` (llama-cpp-python, llama.cpp, vLLM).
    ObjectSchema,
    /// `{"type": "json_object"}`.
    Object,
    /// No `response_format`: the prompt alone asks for JSON.
    None,
}

impl JsonMode {
    /// The accepted configuration spellings.
    pub const NAMES: &'static str = "schema, object-schema, object, none";

    /// Every mode, strongest first: the order of negotiation.
    pub const ALL: [JsonMode; 4] = [
        JsonMode::Schema,
        JsonMode::ObjectSchema,
        JsonMode::Object,
        JsonMode::None,
    ];

    /// Parses a configuration value.
    ///
    /// ```
    /// use ragaliq::judge::JsonMode;
    /// assert_eq!(JsonMode::from_name("object-schema"), Some(JsonMode::ObjectSchema));
    /// assert_eq!(JsonMode::from_name("strict"), None);
    /// ```
    #[must_use]
    pub fn from_name(s: &str) -> Option<JsonMode> {
        match s.trim() {
            "schema" => Some(JsonMode::Schema),
            "object-schema" | "object_schema" => Some(JsonMode::ObjectSchema),
            "object" => Some(JsonMode::Object),
            "none" => Some(JsonMode::None),
            _ => None,
        }
    }

    /// The configuration spelling.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            JsonMode::Schema => "schema",
            JsonMode::ObjectSchema => "object-schema",
            JsonMode::Object => "object",
            JsonMode::None => "none",
        }
    }

    /// The next weaker mode, if any.
    #[must_use]
    pub fn weaker(self) -> Option<JsonMode> {
        match self {
            JsonMode::Schema => Some(JsonMode::ObjectSchema),
            JsonMode::ObjectSchema => Some(JsonMode::Object),
            JsonMode::Object => Some(JsonMode::None),
            JsonMode::None => None,
        }
    }

    /// The response format this mode sends for a task's schema.
    #[must_use]
    pub fn format(self, name: &str, schema: &serde_json::Value) -> ResponseFormat {
        match self {
            JsonMode::Schema => ResponseFormat::JsonSchema {
                name: name.to_owned(),
                schema: schema.clone(),
            },
            JsonMode::ObjectSchema => ResponseFormat::JsonObjectWithSchema {
                name: name.to_owned(),
                schema: schema.clone(),
            },
            JsonMode::Object => ResponseFormat::JsonObject,
            JsonMode::None => ResponseFormat::Text,
        }
    }

    /// The mode that sends `format`.
    #[must_use]
    pub fn of(format: &ResponseFormat) -> JsonMode {
        match format {
            ResponseFormat::JsonSchema { .. } => JsonMode::Schema,
            ResponseFormat::JsonObjectWithSchema { .. } => JsonMode::ObjectSchema,
            ResponseFormat::JsonObject => JsonMode::Object,
            ResponseFormat::Text => JsonMode::None,
        }
    }
}

impl std::fmt::Display for JsonMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether an error answer says the server refused the response format.
///
/// ```
/// use ragaliq::judge::refuses_response_format;
/// assert!(refuses_response_format(500, "Input should be 'text' or 'json_object'"));
/// assert!(refuses_response_format(400, "'response_format.type' must be 'json_schema' or 'text'"));
/// assert!(!refuses_response_format(400, "maximum context length exceeded"));
/// assert!(!refuses_response_format(503, "response_format busy"));
/// ```
#[must_use]
pub fn refuses_response_format(status: u16, message: &str) -> bool {
    if !matches!(status, 400 | 415 | 422 | 500 | 501) {
        return false;
    }
    let lower = message.to_ascii_lowercase();
    [
        "response_format",
        "response format",
        "json_schema",
        "json_object",
        "json schema",
        "guided_json",
        "structured output",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

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
        crate::sync::lock(&self.state)
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

    #[test]
    fn names_round_trip() {
        for m in JsonMode::ALL {
            assert_eq!(JsonMode::from_name(m.name()), Some(m));
            assert_eq!(JsonMode::of(&m.format("t", &serde_json::json!({}))), m);
        }
    }
}
