//! How a server is asked for JSON: the four ways, strongest first, and the
//! response format each sends.

use super::request::ResponseFormat;
use serde::{Deserialize, Serialize};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in JsonMode::ALL {
            assert_eq!(JsonMode::from_name(m.name()), Some(m));
            assert_eq!(JsonMode::of(&m.format("t", &serde_json::json!({}))), m);
        }
    }
}
