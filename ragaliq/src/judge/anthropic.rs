//! The Anthropic Messages API (`POST {base}/messages`).
//!
//! How JSON is obtained: for a request with a schema (every ragaliq task),
//! the schema becomes the input schema of a single tool, `submit`, and
//! `tool_choice` forces the model to call it; the tool input *is* the reply,
//! handed to the parsers as JSON text. Forced tool use is the API's supported
//! way to get schema-shaped output and, unlike an assistant prefill, works
//! with every current model. A request that asks for plain JSON without a
//! schema is prefilled with `{`.

use super::http::{self, ApiKey};
use super::request::{JudgeRequest, JudgeResponse, ResponseFormat, Role};
use super::transport::{BoxFuture, Transport};
use crate::error::{TransportError, TransportErrorKind};
use serde_json::{Value, json};

/// The `anthropic-version` header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

const TOOL: &str = "submit";

/// A transport for the Anthropic Messages API.
///
/// ```
/// use ragaliq::judge::{AnthropicTransport, ApiKey};
/// let t = AnthropicTransport::new("https://api.anthropic.com/v1")
///     .with_api_key(Some(ApiKey::new("sk-ant-…")), "ANTHROPIC_API_KEY");
/// # let _ = t;
/// ```
#[derive(Clone, Debug)]
pub struct AnthropicTransport {
    endpoint: String,
    key: Option<ApiKey>,
    key_variable: String,
    client: reqwest::Client,
}

impl AnthropicTransport {
    /// A transport for the server at `base_url` (up to and including `/v1`).
    #[must_use]
    pub fn new(base_url: &str) -> Self {
        AnthropicTransport {
            endpoint: format!("{}/messages", base_url.trim_end_matches('/')),
            key: None,
            key_variable: "ANTHROPIC_API_KEY".into(),
            client: http::client(),
        }
    }

    /// Sends `x-api-key: <key>`; with `None`, calls fail naming `variable`.
    #[must_use]
    pub fn with_api_key(mut self, key: Option<ApiKey>, variable: &str) -> Self {
        self.key = key;
        self.key_variable = variable.to_owned();
        self
    }

    /// The request body, as sent.
    #[must_use]
    pub fn body(&self, request: &JudgeRequest) -> Value {
        let mut messages: Vec<Value> = request
            .messages
            .iter()
            .map(|m| {
                let role = match m.role {
                    Role::User => "user",
                    Role::Assistant => "assistant",
                };
                json!({"role": role, "content": m.content})
            })
            .collect();
        let mut body = json!({
            "model": request.model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "temperature": request.temperature,
        });
        match &request.response_format {
            ResponseFormat::JsonSchema { name, schema } => {
                body["tools"] = json!([{
                    "name": TOOL,
                    "description": format!("Submit the {name} result."),
                    "input_schema": schema,
                }]);
                body["tool_choice"] = json!({"type": "tool", "name": TOOL});
            }
            ResponseFormat::Json => messages.push(json!({"role": "assistant", "content": "{"})),
            ResponseFormat::Text => {}
        }
        body["messages"] = Value::Array(messages);
        body
    }
}

impl Transport for AnthropicTransport {
    fn provider(&self) -> &str {
        "anthropic"
    }

    fn complete<'a>(
        &'a self,
        request: &'a JudgeRequest,
    ) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
        Box::pin(async move {
            let Some(key) = &self.key else {
                return Err(TransportError::new(TransportErrorKind::MissingApiKey {
                    variable: self.key_variable.clone(),
                }));
            };
            let builder = self
                .client
                .post(&self.endpoint)
                .header("x-api-key", key.expose())
                .header("anthropic-version", ANTHROPIC_VERSION);
            let reply =
                http::post_json(builder, &self.body(request), Some(key), error_message).await?;
            let prefilled = matches!(request.response_format, ResponseFormat::Json);
            read_reply(&reply, prefilled)
        })
    }
}

/// `{"type": "error", "error": {"type": "…", "message": "…"}}`.
fn error_message(body: &Value) -> Option<String> {
    let error = body.get("error")?;
    let message = error.get("message").and_then(Value::as_str)?;
    Some(match error.get("type").and_then(Value::as_str) {
        Some(kind) => format!("{kind}: {message}"),
        None => message.to_owned(),
    })
}

fn read_reply(reply: &Value, prefilled: bool) -> Result<JudgeResponse, TransportError> {
    let decode = |message: &str| {
        TransportError::new(TransportErrorKind::Decode {
            message: message.to_owned(),
            body: reply.to_string().chars().take(300).collect(),
        })
    };
    let blocks = reply
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| decode("no `content` array in the response"))?;
    let tool_input = blocks.iter().find_map(|b| {
        (b.get("type").and_then(Value::as_str) == Some("tool_use")).then(|| b.get("input"))?
    });
    let text = match tool_input {
        Some(input) => input.to_string(),
        None => {
            let text: String = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            if prefilled { format!("{{{text}") } else { text }
        }
    };
    Ok(http::judge_response(
        text,
        reply,
        "input_tokens",
        "output_tokens",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::request::test_request;

    fn req(format: ResponseFormat) -> JudgeRequest {
        test_request("claude-haiku", format)
    }

    #[test]
    fn schema_requests_force_the_tool() {
        let t = AnthropicTransport::new("http://x/v1");
        let b = t.body(&req(ResponseFormat::JsonSchema {
            name: "relevance".into(),
            schema: json!({"type": "object"}),
        }));
        assert_eq!(b["system"], "sys");
        assert_eq!(b["max_tokens"], 100);
        assert_eq!(b["tool_choice"], json!({"type": "tool", "name": "submit"}));
        assert_eq!(b["tools"][0]["input_schema"], json!({"type": "object"}));
        assert_eq!(b["messages"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn replies_from_tool_use_text_and_prefill() {
        let r = read_reply(
            &json!({"content": [{"type": "tool_use", "name": "submit", "input": {"score": 1}}],
                    "usage": {"input_tokens": 9, "output_tokens": 4}, "model": "claude-x"}),
            false,
        )
        .unwrap();
        assert_eq!(r.text, r#"{"score":1}"#);
        assert_eq!((r.input_tokens, r.output_tokens), (9, 4));
        let r = read_reply(
            &json!({"content": [{"type": "text", "text": "\"a\":1}"}]}),
            true,
        )
        .unwrap();
        assert_eq!(r.text, r#"{"a":1}"#);
        assert!(read_reply(&json!({"id": "x"}), false).is_err());
    }
}
