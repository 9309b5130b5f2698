//! OpenAI-compatible chat completions: OpenAI, Ollama, vLLM, llama.cpp
//! server, LM Studio, OpenRouter and anything else that speaks
//! `POST {base}/chat/completions`.
//!
//! Replies are streamed (server-sent events) when the transport is built
//! from configuration: a call that times out then really ends, because
//! dropping the stream closes the connection and the server stops
//! generating, and a slow but working local model is told apart from a
//! stalled one by the idle timeout. Streamed or not, the judge sees the same
//! reply text, tokens and model, so recordings are identical.

use super::{BoxFuture, Transport};
use super::{http, limits};
use crate::core::{
    ApiKey, JudgeRequest, JudgeResponse, ResponseFormat, Role, StopReason, TokenLogprob, TopLogprob,
};
use crate::transport::{TransportError, TransportErrorKind};
use serde_json::{Value, json};
use std::time::Duration;

/// A transport for OpenAI-compatible chat completions.
///
/// ```
/// use ragaliq::judge::{ApiKey, OpenAiTransport};
/// // A local Ollama: no key.
/// let ollama = OpenAiTransport::new("http://127.0.0.1:11434/v1").with_provider_name("ollama");
/// // OpenAI itself: `max_completion_tokens`, streamed.
/// let openai = OpenAiTransport::new("https://api.openai.com/v1")
///     .with_api_key(Some(ApiKey::new("sk-…")), "OPENAI_API_KEY")
///     .with_max_completion_tokens(true)
///     .with_streaming(true);
/// # let _ = (ollama, openai);
/// ```
#[derive(Clone, Debug)]
pub struct OpenAiTransport {
    url: Option<String>,
    provider: String,
    key: Option<ApiKey>,
    key_variable: Option<String>,
    max_completion_tokens: bool,
    stream: bool,
    idle_timeout: Duration,
}

impl OpenAiTransport {
    /// A transport for the server at `base_url` (up to and including `/v1`).
    /// Not streamed, `max_tokens`, no key, provider name `openai`.
    #[must_use]
    pub fn new(base_url: &str) -> Self {
        OpenAiTransport {
            url: Some(http::join_path(base_url, "chat/completions")),
            provider: "openai".into(),
            key: None,
            key_variable: None,
            max_completion_tokens: false,
            stream: false,
            idle_timeout: Duration::from_secs(30),
        }
    }

    /// A transport with no server address: every call fails, naming the
    /// settings that give one. Replay never calls it.
    pub(crate) fn without_address(provider: &str) -> Self {
        OpenAiTransport {
            url: None,
            ..OpenAiTransport::new("http://unset").with_provider_name(provider)
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

    /// The provider name in fingerprints (default `openai`).
    #[must_use]
    pub fn with_provider_name(mut self, name: &str) -> Self {
        self.provider = name.to_owned();
        self
    }

    /// Sends the reply limit as `max_completion_tokens` (OpenAI; its
    /// o-series accepts nothing else) instead of `max_tokens` (what other
    /// servers read: llama-cpp-python ignores `max_completion_tokens`).
    #[must_use]
    pub fn with_max_completion_tokens(mut self, yes: bool) -> Self {
        self.max_completion_tokens = yes;
        self
    }

    /// Streams replies as server-sent events (default off).
    #[must_use]
    pub fn with_streaming(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// How long a streamed reply may go without data before the call fails
    /// and the connection is closed (default 30 s).
    #[must_use]
    pub fn with_idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = idle;
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
        });
        let limit = if self.max_completion_tokens {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body[limit] = json!(request.max_tokens);
        let format = match &request.response_format {
            ResponseFormat::Text => None,
            ResponseFormat::JsonObject => Some(json!({"type": "json_object"})),
            ResponseFormat::JsonObjectWithSchema { schema, .. } => {
                Some(json!({"type": "json_object", "schema": schema}))
            }
            ResponseFormat::JsonSchema { name, schema } => Some(json!({
                "type": "json_schema",
                "json_schema": {"name": name, "strict": true, "schema": schema}
            })),
        };
        if let Some(format) = format {
            body["response_format"] = format;
        }
        if request.top_logprobs > 0 {
            body["logprobs"] = json!(true);
            body["top_logprobs"] = json!(request.top_logprobs);
        }
        if self.stream {
            body["stream"] = json!(true);
            body["stream_options"] = json!({"include_usage": true});
        }
        body
    }

    async fn call(&self, request: &JudgeRequest) -> Result<JudgeResponse, TransportError> {
        let Some(url) = &self.url else {
            return Err(TransportError::new(TransportErrorKind::MissingBaseUrl {
                provider: self.provider.clone(),
            }));
        };
        let bearer;
        let mut headers: Vec<(&str, &str)> = Vec::new();
        match (&self.key, &self.key_variable) {
            (Some(key), _) => {
                bearer = format!("Bearer {}", key.expose());
                headers.push(("authorization", &bearer));
            }
            (None, Some(variable)) => {
                return Err(TransportError::new(TransportErrorKind::MissingApiKey {
                    variable: variable.clone(),
                }));
            }
            (None, None) => {}
        }
        let format_requested = !matches!(request.response_format, ResponseFormat::Text);
        let response = http::send(
            url,
            &headers,
            &self.body(request),
            self.key.as_ref(),
            format_requested,
            error_message,
        )
        .await?;
        let rate = http::rate_limits(response.headers(), std::time::SystemTime::now());
        let reply = if self.stream && http::is_event_stream(&response) {
            read_stream(
                http::EventStream::new(response, self.idle_timeout),
                request.max_tokens,
                self.key.as_ref(),
            )
            .await
        } else {
            read_reply(
                &http::read_json(response, self.key.as_ref()).await?,
                request.max_tokens,
                self.key.as_ref(),
            )
        };
        reply.map(|r| r.with_rate(rate))
    }
}

impl Transport for OpenAiTransport {
    fn provider(&self) -> &str {
        &self.provider
    }

    fn endpoint(&self) -> Option<String> {
        self.url.as_deref().and_then(http::endpoint_label)
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

/// `{"error": {"message": "…"}}`, or `{"error": "…"}` as some servers send,
/// or `{"detail": "…"}` (FastAPI servers).
pub(super) fn error_message(body: &Value) -> Option<String> {
    if let Some(error) = body.get("error") {
        return error
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| error.as_str())
            .map(str::to_owned);
    }
    body.get("detail")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn stop_reason(finish: Option<&str>) -> StopReason {
    match finish {
        Some("length") => StopReason::MaxTokens,
        _ => StopReason::Complete,
    }
}

/// A whole (not streamed) reply to a request of `max_tokens`: its text,
/// tokens, model, stop reason and log-probabilities (as many positions as
/// a streamed reply keeps, so both read alike).
pub(super) fn read_reply(
    reply: &Value,
    max_tokens: u32,
    key: Option<&ApiKey>,
) -> Result<JudgeResponse, TransportError> {
    let decode = |message: &str| {
        TransportError::new(TransportErrorKind::Decode {
            message: message.to_owned(),
            body: http::excerpt(reply.to_string().as_bytes(), key),
        })
    };
    let choice = reply
        .pointer("/choices/0")
        .ok_or_else(|| decode("no choices[0] in the response"))?;
    let message = choice
        .get("message")
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
    let stop = stop_reason(choice.get("finish_reason").and_then(Value::as_str));
    let response =
        http::judge_response(text, reply, "prompt_tokens", "completion_tokens").with_stop(stop);
    Ok(
        match token_logprobs(choice, logprob_positions(max_tokens)) {
            Some(logprobs) => response.with_logprobs(logprobs),
            None => response,
        },
    )
}

/// How many positions of log-probabilities a reply of `max_tokens` keeps:
/// one per token it may write (the answer word is read at the first ones;
/// a batched answer may be read at one position per numbered line), but
/// never more than [`limits::MAX_LOGPROB_TOKENS`].
fn logprob_positions(max_tokens: u32) -> usize {
    usize::try_from(max_tokens)
        .unwrap_or(usize::MAX)
        .min(limits::MAX_LOGPROB_TOKENS)
}

/// The most alternatives kept at one position: the most a request can ask
/// for (`top_logprobs` is a `u8`). A server that lists more is cut there,
/// so the positions kept hold a bounded number of alternatives each.
const MAX_ALTERNATIVES: usize = u8::MAX as usize;

/// The bytes of text `tokens` hold (each token and its alternatives): they
/// count towards a streamed reply's [`limits::MAX_REPLY_BYTES`], as its
/// text does.
fn logprob_bytes(tokens: &[TokenLogprob]) -> usize {
    tokens
        .iter()
        .map(|t| t.token.len() + t.top.iter().map(|a| a.token.len()).sum::<usize>())
        .sum()
}

/// `choices[i].logprobs.content`: each token written, its log-probability
/// and its alternatives, as OpenAI, llama.cpp and vLLM return them, at most
/// `room` positions (the first) and [`MAX_ALTERNATIVES`] alternatives at
/// each. `None` when the choice carries none (not asked for, or not
/// supported). A token whose numbers are not finite is left out (never
/// read as certain).
fn token_logprobs(choice: &Value, room: usize) -> Option<Vec<TokenLogprob>> {
    let content = choice.pointer("/logprobs/content")?.as_array()?;
    let entry = |v: &Value| -> Option<(String, f64)> {
        let token = v.get("token")?.as_str()?.to_owned();
        let logprob = v
            .get("logprob")?
            .as_f64()
            .filter(|l| l.is_finite() && *l <= 0.0)?;
        Some((token, logprob))
    };
    Some(
        content
            .iter()
            .filter_map(|t| {
                let (token, logprob) = entry(t)?;
                let top = t
                    .get("top_logprobs")
                    .and_then(Value::as_array)
                    .map(|alts| {
                        alts.iter()
                            .filter_map(entry)
                            .take(MAX_ALTERNATIVES)
                            .map(|(token, logprob)| TopLogprob { token, logprob })
                            .collect()
                    })
                    .unwrap_or_default();
                Some(TokenLogprob {
                    token,
                    logprob,
                    top,
                })
            })
            .take(room)
            .collect(),
    )
}

/// Assembles a streamed reply to a request of `max_tokens`: the content
/// deltas in order, the finish reason, the usage and model the chunks
/// carry, and the log-probabilities of its first positions.
///
/// What is kept is bounded whatever the server sends: the text and the
/// log-probabilities' tokens together by [`limits::MAX_REPLY_BYTES`] (an
/// error past it), the positions by [`logprob_positions`] (the rest
/// dropped), each event by [`limits::MAX_EVENT_BYTES`].
async fn read_stream(
    mut events: http::EventStream,
    max_tokens: u32,
    key: Option<&ApiKey>,
) -> Result<JudgeResponse, TransportError> {
    let mut text = String::new();
    let mut refusal = String::new();
    let mut finish: Option<String> = None;
    let mut usage = (0, 0);
    let mut model: Option<String> = None;
    let mut saw_choice = false;
    let mut logprobs: Option<Vec<TokenLogprob>> = None;
    let positions = logprob_positions(max_tokens);
    let mut logprob_text = 0usize;
    while let Some(event) = events.next().await? {
        let data = event.data.trim();
        if data == "[DONE]" {
            break;
        }
        if data.is_empty() {
            continue;
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            TransportError::new(TransportErrorKind::Decode {
                message: format!("a streamed chunk is not JSON ({e})"),
                body: http::excerpt(data.as_bytes(), key),
            })
        })?;
        if let Some(message) = error_message(&chunk).filter(|_| chunk.get("error").is_some()) {
            let message = key.map_or(message.clone(), |k| k.redact(&message));
            return Err(TransportError::new(TransportErrorKind::Status {
                status: 500,
                message: format!("error in the middle of a streamed reply: {message}"),
            }));
        }
        if let Some(m) = chunk.get("model").and_then(Value::as_str) {
            model = Some(m.to_owned());
        }
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            usage = (n("prompt_tokens"), n("completion_tokens"));
        }
        if let Some(choice) = chunk.pointer("/choices/0") {
            saw_choice = true;
            if let Some(delta) = choice.get("delta") {
                if let Some(s) = delta.get("content").and_then(Value::as_str) {
                    text.push_str(s);
                }
                if let Some(s) = delta.get("refusal").and_then(Value::as_str) {
                    refusal.push_str(s);
                }
            }
            if let Some(f) = choice.get("finish_reason").and_then(Value::as_str) {
                finish = Some(f.to_owned());
            }
            let kept = logprobs.as_ref().map_or(0, Vec::len);
            if let Some(tokens) = token_logprobs(choice, positions.saturating_sub(kept)) {
                logprob_text += logprob_bytes(&tokens);
                logprobs.get_or_insert_with(Vec::new).extend(tokens);
            }
        }
        if text.len() + refusal.len() + logprob_text > limits::MAX_REPLY_BYTES {
            return Err(TransportError::new(TransportErrorKind::TooLarge {
                what: "streamed reply",
                limit: limits::MAX_REPLY_BYTES,
                name: "MAX_REPLY_BYTES",
            }));
        }
    }
    if !saw_choice {
        return Err(TransportError::new(TransportErrorKind::Decode {
            message: "the stream ended without a single choice".into(),
            body: String::new(),
        }));
    }
    if finish.is_none() {
        // llama-cpp-python ends a streamed reply this way when another
        // request arrives: the reply is incomplete, whatever it holds.
        return Err(TransportError::new(TransportErrorKind::Interrupted {
            message: format!(
                "the stream ended with no finish_reason after {} characters, as a server that answers one request at a time does when another arrives (llama-cpp-python); ragaliq now sends it one request at a time (set judge.concurrency = 1 for such a server)",
                text.chars().count()
            ),
        }));
    }
    if text.is_empty() && !refusal.is_empty() {
        text = refusal;
    }
    let mut response = JudgeResponse::text(text)
        .with_tokens(usage.0, usage.1)
        .with_stop(stop_reason(finish.as_deref()));
    if let Some(model) = model {
        response = response.with_model(model);
    }
    if let Some(logprobs) = logprobs {
        response = response.with_logprobs(logprobs);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::test_request;

    fn req(format: ResponseFormat) -> JudgeRequest {
        test_request("gpt-test", format)
    }

    #[test]
    fn body_for_every_format() {
        let t = OpenAiTransport::new("http://x/v1/");
        let schema = json!({"type": "object"});
        let b = t.body(&req(ResponseFormat::JsonSchema {
            name: "relevance".into(),
            schema: schema.clone(),
        }));
        assert_eq!(b["response_format"]["type"], "json_schema");
        assert_eq!(b["response_format"]["json_schema"]["strict"], true);
        assert_eq!(b["messages"][0]["role"], "system");
        assert_eq!(b["max_tokens"], 100);
        assert!(b.get("stream").is_none());
        let b = t.body(&req(ResponseFormat::JsonObjectWithSchema {
            name: "relevance".into(),
            schema: schema.clone(),
        }));
        assert_eq!(
            b["response_format"],
            json!({"type": "json_object", "schema": schema})
        );
        let b = t.body(&req(ResponseFormat::JsonObject));
        assert_eq!(b["response_format"], json!({"type": "json_object"}));
        let b = t.body(&req(ResponseFormat::Text));
        assert!(b.get("response_format").is_none());
    }

    #[test]
    fn openai_itself_gets_max_completion_tokens_and_a_stream() {
        let t = OpenAiTransport::new("http://x/v1")
            .with_max_completion_tokens(true)
            .with_streaming(true);
        let b = t.body(&req(ResponseFormat::JsonObject));
        assert_eq!(b["max_completion_tokens"], 100);
        assert!(b.get("max_tokens").is_none());
        assert_eq!(b["stream"], true);
        assert_eq!(b["stream_options"]["include_usage"], true);
    }

    #[test]
    fn token_probabilities_are_asked_for_and_read() {
        let t = OpenAiTransport::new("http://x/v1");
        let mut r = req(ResponseFormat::Text);
        assert!(
            t.body(&r).get("logprobs").is_none(),
            "not asked unless wanted"
        );
        r.top_logprobs = 10;
        let b = t.body(&r);
        assert_eq!(
            (b["logprobs"].clone(), b["top_logprobs"].clone()),
            (json!(true), json!(10))
        );
        // As llama.cpp's server answers (with ids and bytes OpenAI also sends).
        let read = read_reply(
            &json!({"choices": [{"finish_reason": "length", "message": {"content": "Yes"},
                "logprobs": {"content": [{"id": 9454, "token": "Yes", "bytes": [89, 101, 115], "logprob": -0.98,
                    "top_logprobs": [{"id": 9454, "token": "Yes", "logprob": -0.98},
                                     {"id": 9693, "token": "yes", "logprob": -1.34},
                                     {"id": 2753, "token": "No", "logprob": -2.08},
                                     {"token": "bad", "logprob": "NaN"}]}]}}]}),
            3,
            None,
        )
        .unwrap();
        let lp = read.logprobs.unwrap();
        assert_eq!(lp.len(), 1);
        assert_eq!(lp[0].token, "Yes");
        assert_eq!(lp[0].top.len(), 3, "an unreadable alternative is left out");
        assert_eq!(lp[0].top[2].token, "No");
        // None given: none read (llama-cpp-python sends `logprobs: null`).
        let none = read_reply(
            &json!({"choices": [{"message": {"content": "yes"}, "logprobs": null}]}),
            3,
            None,
        )
        .unwrap();
        assert_eq!(none.logprobs, None);
    }

    /// A whole reply keeps what a streamed one keeps: the first
    /// `max_tokens` positions, and at most [`MAX_ALTERNATIVES`]
    /// alternatives at each.
    #[test]
    fn a_whole_reply_keeps_the_positions_a_streamed_one_keeps() {
        let alternatives: Vec<Value> = (0..300)
            .map(|i| json!({"token": format!("t{i}"), "logprob": -1.0}))
            .collect();
        let positions: Vec<Value> = ["Yes", " it", " is", " so"]
            .iter()
            .map(|t| json!({"token": t, "logprob": -0.1, "top_logprobs": alternatives}))
            .collect();
        let reply = json!({"choices": [{"finish_reason": "stop", "message": {"content": "Yes it is so"},
            "logprobs": {"content": positions}}]});
        let lp = read_reply(&reply, 2, None).unwrap().logprobs.unwrap();
        assert_eq!(
            lp.iter().map(|t| t.token.as_str()).collect::<Vec<_>>(),
            ["Yes", " it"]
        );
        assert_eq!(lp[0].top.len(), MAX_ALTERNATIVES);
        assert_eq!(lp[0].top[0].token, "t0", "the likeliest are kept");
        assert_eq!(logprob_positions(u32::MAX), limits::MAX_LOGPROB_TOKENS);
    }

    #[test]
    fn reply_with_usage_refusal_and_truncation() {
        let r = read_reply(&json!({
            "model": "gpt-4o-mini-2024-07-18",
            "choices": [{"message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3}
        }), 100, None)
        .unwrap();
        assert_eq!((r.input_tokens, r.output_tokens), (12, 3));
        assert_eq!(r.model.as_deref(), Some("gpt-4o-mini-2024-07-18"));
        assert_eq!(r.stop, StopReason::Complete);
        let r = read_reply(
            &json!({"choices": [{"message": {"content": null, "refusal": "I can't help."}}]}),
            100,
            None,
        )
        .unwrap();
        assert_eq!(r.text, "I can't help.");
        let r = read_reply(
            &json!({"choices": [{"message": {"content": "{\"a\": ["}, "finish_reason": "length"}]}),
            100,
            None,
        )
        .unwrap();
        assert_eq!(r.stop, StopReason::MaxTokens);
        assert!(read_reply(&json!({"choices": []}), 100, None).is_err());
    }
}
