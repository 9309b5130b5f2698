//! The Anthropic Messages API (`POST {base}/messages`).
//!
//! How JSON is obtained: for a request with a schema (every ragaliq task),
//! the schema becomes the input schema of a single tool, `submit`, and
//! `tool_choice` forces the model to call it; the tool input *is* the reply,
//! handed to the parsers as JSON text with its keys sorted, so the reply
//! reads the same streamed or not and whatever the map implementation.
//! Forced tool use is the API's supported way to get schema-shaped output
//! and, unlike an assistant prefill, works with every current model. A
//! request that asks for plain JSON without a schema is prefilled with `{`.

use super::{BoxFuture, Transport};
use super::{http, limits};
use crate::core::{
    ApiKey, JudgeRequest, JudgeResponse, ResponseFormat, Role, StopReason, canonical_json,
};
use crate::transport::{TransportError, TransportErrorKind};
use serde_json::{Value, json};
use std::time::Duration;

/// The `anthropic-version` header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

const TOOL: &str = "submit";

/// A transport for the Anthropic Messages API.
///
/// ```
/// use ragaliq::judge::{AnthropicTransport, ApiKey};
/// let t = AnthropicTransport::new("https://api.anthropic.com/v1")
///     .with_api_key(Some(ApiKey::new("sk-ant-…")), "ANTHROPIC_API_KEY")
///     .with_streaming(true);
/// # let _ = t;
/// ```
#[derive(Clone, Debug)]
pub struct AnthropicTransport {
    url: String,
    key: Option<ApiKey>,
    key_variable: String,
    stream: bool,
    idle_timeout: Duration,
}

impl AnthropicTransport {
    /// A transport for the server at `base_url` (up to and including `/v1`),
    /// not streamed.
    #[must_use]
    pub fn new(base_url: &str) -> Self {
        AnthropicTransport {
            url: http::join_path(base_url, "messages"),
            key: None,
            key_variable: "ANTHROPIC_API_KEY".into(),
            stream: false,
            idle_timeout: Duration::from_secs(30),
        }
    }

    /// Sends `x-api-key: <key>`; with `None`, calls fail naming `variable`.
    #[must_use]
    pub fn with_api_key(mut self, key: Option<ApiKey>, variable: &str) -> Self {
        self.key = key;
        self.key_variable = variable.to_owned();
        self
    }

    /// Streams replies as server-sent events (default off).
    #[must_use]
    pub fn with_streaming(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// How long a streamed reply may go without data (default 30 s).
    #[must_use]
    pub fn with_idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = idle;
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
            ResponseFormat::JsonSchema { name, schema }
            | ResponseFormat::JsonObjectWithSchema { name, schema } => {
                body["tools"] = json!([{
                    "name": TOOL,
                    "description": format!("Submit the {name} result."),
                    "input_schema": schema,
                }]);
                body["tool_choice"] = json!({"type": "tool", "name": TOOL});
            }
            ResponseFormat::JsonObject => {
                messages.push(json!({"role": "assistant", "content": "{"}));
            }
            ResponseFormat::Text => {}
        }
        body["messages"] = Value::Array(messages);
        if self.stream {
            body["stream"] = json!(true);
        }
        body
    }

    async fn call(&self, request: &JudgeRequest) -> Result<JudgeResponse, TransportError> {
        let Some(key) = &self.key else {
            return Err(TransportError::new(TransportErrorKind::MissingApiKey {
                variable: self.key_variable.clone(),
            }));
        };
        let headers = [
            ("x-api-key", key.expose()),
            ("anthropic-version", ANTHROPIC_VERSION),
        ];
        let format_requested = !matches!(request.response_format, ResponseFormat::Text);
        let response = http::send(
            &self.url,
            &headers,
            &self.body(request),
            Some(key),
            format_requested,
            error_message,
        )
        .await?;
        let prefilled = matches!(request.response_format, ResponseFormat::JsonObject);
        let rate = http::rate_limits(response.headers(), std::time::SystemTime::now());
        let reply = if self.stream && http::is_event_stream(&response) {
            read_stream(
                http::EventStream::new(response, self.idle_timeout),
                Some(key),
                prefilled,
            )
            .await
        } else {
            read_reply(
                &http::read_json(response, Some(key)).await?,
                prefilled,
                Some(key),
            )
        };
        reply.map(|r| r.with_rate(rate))
    }
}

impl Transport for AnthropicTransport {
    fn provider(&self) -> &str {
        "anthropic"
    }

    fn endpoint(&self) -> Option<String> {
        http::endpoint_label(&self.url)
    }

    fn complete<'a>(
        &'a self,
        request: &'a JudgeRequest,
    ) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
        Box::pin(async move {
            self.call(request)
                .await
                .map_err(|e| e.with_endpoint(self.endpoint()))
        })
    }
}

/// `{"type": "error", "error": {"type": "…", "message": "…"}}`.
pub(super) fn error_message(body: &Value) -> Option<String> {
    let error = body.get("error")?;
    let message = error.get("message").and_then(Value::as_str)?;
    Some(match error.get("type").and_then(Value::as_str) {
        Some(kind) => format!("{kind}: {message}"),
        None => message.to_owned(),
    })
}

fn stop_reason(reason: Option<&str>) -> StopReason {
    match reason {
        Some("max_tokens") => StopReason::MaxTokens,
        _ => StopReason::Complete,
    }
}

/// The tool input as reply text: sorted keys, compact.
fn tool_text(input: &Value) -> String {
    canonical_json(input)
}

pub(super) fn read_reply(
    reply: &Value,
    prefilled: bool,
    key: Option<&ApiKey>,
) -> Result<JudgeResponse, TransportError> {
    let decode = |message: &str| {
        TransportError::new(TransportErrorKind::Decode {
            message: message.to_owned(),
            body: http::excerpt(reply.to_string().as_bytes(), key),
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
        Some(input) => tool_text(input),
        None => {
            let text: String = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            if prefilled { format!("{{{text}") } else { text }
        }
    };
    let stop = stop_reason(reply.get("stop_reason").and_then(Value::as_str));
    Ok(http::judge_response(text, reply, "input_tokens", "output_tokens").with_stop(stop))
}

/// Assembles a streamed reply from `message_start`, `content_block_*` and
/// `message_delta` events.
async fn read_stream(
    mut events: http::EventStream,
    key: Option<&ApiKey>,
    prefilled: bool,
) -> Result<JudgeResponse, TransportError> {
    let mut tool_json = String::new();
    let mut saw_tool = false;
    let mut text = String::new();
    let mut stop: Option<String> = None;
    let (mut input_tokens, mut output_tokens) = (0, 0);
    let mut model: Option<String> = None;
    let mut started = false;
    let mut stopped = false;
    while let Some(event) = events.next().await? {
        if event.data.trim().is_empty() {
            continue;
        }
        if text.len() + tool_json.len() > limits::MAX_REPLY_BYTES {
            return Err(TransportError::new(TransportErrorKind::TooLarge {
                what: "streamed reply",
                limit: limits::MAX_REPLY_BYTES,
                name: "MAX_REPLY_BYTES",
            }));
        }
        let data: Value = serde_json::from_str(&event.data).map_err(|e| {
            TransportError::new(TransportErrorKind::Decode {
                message: format!("a streamed event is not JSON ({e})"),
                body: http::excerpt(event.data.as_bytes(), key),
            })
        })?;
        let kind = event
            .name
            .as_deref()
            .or_else(|| data.get("type").and_then(Value::as_str))
            .unwrap_or_default()
            .to_owned();
        match kind.as_str() {
            "message_start" => {
                started = true;
                let message = &data["message"];
                model = message
                    .get("model")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                input_tokens = message
                    .pointer("/usage/input_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
            }
            "content_block_start"
                if data.pointer("/content_block/type").and_then(Value::as_str)
                    == Some("tool_use") =>
            {
                saw_tool = true;
            }
            "content_block_delta" => match data.pointer("/delta/type").and_then(Value::as_str) {
                Some("input_json_delta") => {
                    if let Some(part) = data.pointer("/delta/partial_json").and_then(Value::as_str)
                    {
                        tool_json.push_str(part);
                    }
                }
                Some("text_delta") => {
                    if let Some(part) = data.pointer("/delta/text").and_then(Value::as_str) {
                        text.push_str(part);
                    }
                }
                _ => {}
            },
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    stop = Some(reason.to_owned());
                }
                if let Some(n) = data.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    output_tokens = n;
                }
            }
            "message_stop" => {
                stopped = true;
                break;
            }
            "error" => {
                let message = error_message(&data).unwrap_or_else(|| data.to_string());
                let message = key.map_or(message.clone(), |k| k.redact(&message));
                let status = if message.contains("overloaded") {
                    529
                } else {
                    500
                };
                return Err(TransportError::new(TransportErrorKind::Status {
                    status,
                    message: format!("error in the middle of a streamed reply: {message}"),
                }));
            }
            _ => {}
        }
    }
    if !started {
        return Err(TransportError::new(TransportErrorKind::Decode {
            message: "the stream ended without a message".into(),
            body: String::new(),
        }));
    }
    if !stopped {
        return Err(TransportError::new(TransportErrorKind::Body {
            message: "the stream ended before `message_stop`: the reply is incomplete".into(),
        }));
    }
    let stop = stop_reason(stop.as_deref());
    let text = if saw_tool {
        // The streamed tool input, written as the non-streamed reply is.
        match serde_json::from_str::<Value>(if tool_json.trim().is_empty() {
            "{}"
        } else {
            &tool_json
        }) {
            Ok(input) => tool_text(&input),
            Err(_) => tool_json,
        }
    } else if prefilled {
        format!("{{{text}")
    } else {
        text
    };
    let mut response = JudgeResponse::text(text)
        .with_tokens(input_tokens, output_tokens)
        .with_stop(stop);
    if let Some(model) = model {
        response = response.with_model(model);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::test_request;

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
            &json!({"content": [{"type": "tool_use", "name": "submit", "input": {"score": 1, "reasoning": "r"}}],
                    "usage": {"input_tokens": 9, "output_tokens": 4}, "model": "claude-x",
                    "stop_reason": "tool_use"}),
            false,
            None,
        )
        .unwrap();
        assert_eq!(r.text, r#"{"reasoning":"r","score":1}"#);
        assert_eq!((r.input_tokens, r.output_tokens), (9, 4));
        assert_eq!(r.stop, StopReason::Complete);
        let r = read_reply(
            &json!({"content": [{"type": "text", "text": "\"a\":1}"}], "stop_reason": "max_tokens"}),
            true,
            None,
        )
        .unwrap();
        assert_eq!(r.text, r#"{"a":1}"#);
        assert_eq!(r.stop, StopReason::MaxTokens);
        assert!(read_reply(&json!({"id": "x"}), false, None).is_err());
    }
}
