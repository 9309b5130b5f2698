//! OpenAI-compatible chat completions: OpenAI, Ollama, vLLM, llama.cpp
//! server, LM Studio, OpenRouter and anything else that speaks
//! `POST {base}/chat/completions`.

use super::http::{self, ApiKey};
use super::request::{JudgeRequest, JudgeResponse, ResponseFormat, Role};
use super::transport::{BoxFuture, Transport};
use crate::error::{TransportError, TransportErrorKind};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// How a chat-completions server is asked for JSON.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JsonMode {
    /// `response_format: {"type": "json_schema", …}` with the task's schema,
    /// strict (OpenAI structured outputs; recent vLLM and Ollama).
    #[default]
    Schema,
    /// `response_format: {"type": "json_object"}`.
    Object,
    /// No `response_format`: the prompt alone asks for JSON.
    None,
}

impl JsonMode {
    /// The accepted configuration spellings.
    pub const NAMES: &'static str = "schema, object, none";

    /// Parses a configuration value.
    #[must_use]
    pub fn from_name(s: &str) -> Option<JsonMode> {
        match s {
            "schema" => Some(JsonMode::Schema),
            "object" => Some(JsonMode::Object),
            "none" => Some(JsonMode::None),
            _ => None,
        }
    }
}

/// A transport for OpenAI-compatible chat completions.
///
/// ```
/// use ragaliq::judge::{ApiKey, JsonMode, OpenAiTransport};
/// // A local Ollama: no key, JSON object mode.
/// let ollama = OpenAiTransport::new("http://127.0.0.1:11434/v1")
///     .with_provider_name("ollama")
///     .with_json_mode(JsonMode::Object);
/// // OpenAI itself.
/// let openai = OpenAiTransport::new("https://api.openai.com/v1")
///     .with_api_key(Some(ApiKey::new("sk-…")), "OPENAI_API_KEY");
/// # let _ = (ollama, openai);
/// ```
#[derive(Clone, Debug)]
pub struct OpenAiTransport {
    endpoint: String,
    provider: String,
    key: Option<ApiKey>,
    key_variable: Option<String>,
    json_mode: JsonMode,
    client: reqwest::Client,
}

impl OpenAiTransport {
    /// A transport for the server at `base_url` (up to and including `/v1`).
    #[must_use]
    pub fn new(base_url: &str) -> Self {
        OpenAiTransport {
            endpoint: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            provider: "openai".into(),
            key: None,
            key_variable: None,
            json_mode: JsonMode::Schema,
            client: http::client(),
        }
    }

    /// Sends `Authorization: Bearer <key>`. When `key` is `None` and
    /// `variable` is not empty, calls fail with a message naming `variable`;
    /// an empty `variable` means the server needs no key (Ollama, vLLM).
    #[must_use]
    pub fn with_api_key(mut self, key: Option<ApiKey>, variable: &str) -> Self {
        self.key = key;
        self.key_variable = (!variable.is_empty()).then(|| variable.to_owned());
        self
    }

    /// How JSON is requested (default [`JsonMode::Schema`]).
    #[must_use]
    pub fn with_json_mode(mut self, mode: JsonMode) -> Self {
        self.json_mode = mode;
        self
    }

    /// The provider name in fingerprints (default `openai`).
    #[must_use]
    pub fn with_provider_name(mut self, name: &str) -> Self {
        self.provider = name.to_owned();
        self
    }

    /// The request body, as sent.
    #[must_use]
    pub fn body(&self, request: &JudgeRequest) -> Value {
        let mut messages = vec![json!({"role": "system", "content": request.system})];
        messages.extend(request.messages.iter().map(|m| {
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            json!({"role": role, "content": m.content})
        }));
        let mut body = json!({
            "model": request.model,
            "messages": messages,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        });
        let format = match (&request.response_format, self.json_mode) {
            (ResponseFormat::Text, _) | (_, JsonMode::None) => None,
            (ResponseFormat::Json, _) | (ResponseFormat::JsonSchema { .. }, JsonMode::Object) => {
                Some(json!({"type": "json_object"}))
            }
            (ResponseFormat::JsonSchema { name, schema }, JsonMode::Schema) => Some(json!({
                "type": "json_schema",
                "json_schema": {"name": name, "strict": true, "schema": schema}
            })),
        };
        if let Some(format) = format {
            body["response_format"] = format;
        }
        body
    }
}

impl Transport for OpenAiTransport {
    fn provider(&self) -> &str {
        &self.provider
    }

    fn complete<'a>(
        &'a self,
        request: &'a JudgeRequest,
    ) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
        Box::pin(async move {
            let mut builder = self.client.post(&self.endpoint);
            match (&self.key, &self.key_variable) {
                (Some(key), _) => builder = builder.bearer_auth(key.expose()),
                (None, Some(variable)) => {
                    return Err(TransportError::new(TransportErrorKind::MissingApiKey {
                        variable: variable.clone(),
                    }));
                }
                (None, None) => {}
            }
            let reply = http::post_json(
                builder,
                &self.body(request),
                self.key.as_ref(),
                error_message,
            )
            .await?;
            read_reply(&reply)
        })
    }
}

/// `{"error": {"message": "…"}}`, or `{"error": "…"}` as some servers send.
fn error_message(body: &Value) -> Option<String> {
    let error = body.get("error")?;
    error
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| error.as_str())
        .map(str::to_owned)
}

fn read_reply(reply: &Value) -> Result<JudgeResponse, TransportError> {
    let decode = |message: &str| {
        TransportError::new(TransportErrorKind::Decode {
            message: message.to_owned(),
            body: reply.to_string().chars().take(300).collect(),
        })
    };
    let message = reply
        .pointer("/choices/0/message")
        .ok_or_else(|| decode("no choices[0].message in the response"))?;
    let text = match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        _ => match message.get("refusal").and_then(Value::as_str) {
            // A structured-outputs refusal: hand it on as the reply, so the
            // parser reports it as a refusal with the text attached.
            Some(refusal) => refusal.to_owned(),
            None => return Err(decode("choices[0].message.content is not a string")),
        },
    };
    Ok(http::judge_response(
        text,
        reply,
        "prompt_tokens",
        "completion_tokens",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::request::test_request;

    fn req(format: ResponseFormat) -> JudgeRequest {
        test_request("gpt-4o-mini", format)
    }

    #[test]
    fn body_per_json_mode() {
        let schema = ResponseFormat::JsonSchema {
            name: "relevance".into(),
            schema: json!({"type": "object"}),
        };
        let t = OpenAiTransport::new("http://x/v1/");
        assert_eq!(t.endpoint, "http://x/v1/chat/completions");
        let b = t.body(&req(schema.clone()));
        assert_eq!(
            b["messages"][0],
            json!({"role": "system", "content": "sys"})
        );
        assert_eq!(b["response_format"]["json_schema"]["strict"], json!(true));
        let b = t
            .clone()
            .with_json_mode(JsonMode::Object)
            .body(&req(schema.clone()));
        assert_eq!(b["response_format"], json!({"type": "json_object"}));
        let b = t.with_json_mode(JsonMode::None).body(&req(schema));
        assert!(b.get("response_format").is_none());
    }

    #[test]
    fn reply_with_usage_and_refusal() {
        let r = read_reply(&json!({
            "model": "gpt-4o-mini-2024-07-18",
            "choices": [{"message": {"role": "assistant", "content": "{}"}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3}
        }))
        .unwrap();
        assert_eq!((r.input_tokens, r.output_tokens), (12, 3));
        assert_eq!(r.model.as_deref(), Some("gpt-4o-mini-2024-07-18"));
        let r = read_reply(
            &json!({"choices": [{"message": {"content": null, "refusal": "I can't help."}}]}),
        )
        .unwrap();
        assert_eq!(r.text, "I can't help.");
        assert!(read_reply(&json!({"choices": []})).is_err());
    }
}
