//! The providers' batch APIs: many requests submitted at once, answered
//! within 24 hours (usually within one) at half the price.
//!
//! - OpenAI: a JSONL file of `{custom_id, method, url, body}` lines
//!   uploaded to `POST /v1/files` (`purpose=batch`), `POST /v1/batches`,
//!   polled at `GET /v1/batches/{id}`; the answers are the lines of its
//!   `output_file_id` and `error_file_id` (`GET /v1/files/{id}/content`).
//! - Anthropic: `POST /v1/messages/batches` with `{requests: [{custom_id,
//!   params}]}`, polled at `GET /v1/messages/batches/{id}`; the answers are
//!   the JSONL lines of `GET /v1/messages/batches/{id}/results`.
//!
//! A request's body is exactly what the live transport would send (not
//! streamed), and an answer is read by the live transport's own reader, so
//! a batch's answer is the [`JudgeResponse`] a live call would have given.
//! Answers are matched to requests by `custom_id` only: both providers
//! return them in any order. A line that failed (an error object, a status
//! other than 200, a success with no readable body, a request that expired
//! or was canceled) is reported as [`LineResult::Failed`], never as an
//! answer.

use super::http;
use super::{AnthropicTransport, OpenAiTransport, TransportError, TransportErrorKind};
use crate::core::{ApiKey, JudgeRequest, JudgeResponse, ResponseFormat};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Which provider's batch API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchKind {
    /// OpenAI's Batch API (files + batches).
    OpenAi,
    /// Anthropic's Message Batches API.
    Anthropic,
}

/// A client for one provider's batch API.
///
/// ```
/// use ragaliq::batch::BatchApi;
/// let api = BatchApi::openai("https://api.openai.com/v1", None, "OPENAI_API_KEY");
/// assert_eq!(api.provider(), "openai");
/// assert_eq!(api.max_requests(), 50_000);
/// ```
#[derive(Clone, Debug)]
pub struct BatchApi {
    kind: BatchKind,
    base_url: String,
    key: Option<ApiKey>,
    key_variable: String,
}

/// One request of a batch: its `custom_id` and the request.
#[derive(Clone, Debug)]
pub struct BatchLine {
    /// The id the answer comes back under (ragaliq uses the fingerprint).
    pub custom_id: String,
    /// The request.
    pub request: JudgeRequest,
}

/// Where a submitted batch stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchProgress {
    /// The provider's batch id.
    pub id: String,
    /// The provider's word for its state (`in_progress`, `completed`,
    /// `expired`, `ended`, …).
    pub status: String,
    /// Whether the provider is done with it (answers, if any, can be read).
    pub ended: bool,
    /// Requests in the batch.
    pub total: u64,
    /// Requests answered so far.
    pub succeeded: u64,
    /// Requests that failed, expired or were canceled so far.
    pub failed: u64,
    /// Where the answers are: OpenAI's output and error file ids.
    #[serde(default)]
    pub files: Vec<String>,
    /// What the provider said about a batch that failed as a whole.
    #[serde(default)]
    pub message: Option<String>,
}

/// What a batch gave for one request.
#[derive(Clone, Debug, PartialEq)]
pub enum LineResult {
    /// An answer, as the live transport reads it.
    Answered(JudgeResponse),
    /// No answer: why.
    Failed(String),
}

impl BatchApi {
    /// OpenAI's Batch API at `base_url` (up to and including `/v1`), with
    /// the key from `variable` (named in the error when it is missing).
    #[must_use]
    pub fn openai(base_url: &str, key: Option<ApiKey>, variable: &str) -> BatchApi {
        BatchApi::new(BatchKind::OpenAi, base_url, key, variable)
    }

    /// Anthropic's Message Batches API at `base_url`.
    #[must_use]
    pub fn anthropic(base_url: &str, key: Option<ApiKey>, variable: &str) -> BatchApi {
        BatchApi::new(BatchKind::Anthropic, base_url, key, variable)
    }

    fn new(kind: BatchKind, base_url: &str, key: Option<ApiKey>, variable: &str) -> BatchApi {
        BatchApi {
            kind,
            base_url: base_url.trim_end_matches('/').to_owned(),
            key,
            key_variable: variable.to_owned(),
        }
    }

    /// Which API.
    #[must_use]
    pub fn kind(&self) -> BatchKind {
        self.kind
    }

    /// The provider's name, as in fingerprints.
    #[must_use]
    pub fn provider(&self) -> &'static str {
        match self.kind {
            BatchKind::OpenAi => "openai",
            BatchKind::Anthropic => "anthropic",
        }
    }

    /// The most requests one batch may hold (OpenAI 50,000; Anthropic 100,000).
    #[must_use]
    pub fn max_requests(&self) -> usize {
        match self.kind {
            BatchKind::OpenAi => 50_000,
            BatchKind::Anthropic => 100_000,
        }
    }

    /// The largest batch in bytes (OpenAI's file 200 MB; Anthropic 256 MB).
    #[must_use]
    pub fn max_bytes(&self) -> usize {
        match self.kind {
            BatchKind::OpenAi => 200 * 1024 * 1024,
            BatchKind::Anthropic => 256 * 1024 * 1024,
        }
    }

    /// The line a request is in the batch: an OpenAI JSONL line, or an
    /// Anthropic `{custom_id, params}` entry.
    #[must_use]
    pub fn line(&self, line: &BatchLine) -> Value {
        match self.kind {
            BatchKind::OpenAi => json!({
                "custom_id": line.custom_id,
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": OpenAiTransport::new(&self.base_url)
                    .with_max_completion_tokens(true)
                    .body(&line.request),
            }),
            BatchKind::Anthropic => json!({
                "custom_id": line.custom_id,
                "params": AnthropicTransport::new(&self.base_url).body(&line.request),
            }),
        }
    }

    /// Splits `lines` into batches within the provider's limits (requests
    /// and bytes), in order.
    #[must_use]
    pub fn split(&self, lines: Vec<BatchLine>) -> Vec<Vec<BatchLine>> {
        self.split_within(lines, self.max_requests(), self.max_bytes())
    }

    fn split_within(
        &self,
        lines: Vec<BatchLine>,
        max_requests: usize,
        max_bytes: usize,
    ) -> Vec<Vec<BatchLine>> {
        let mut out: Vec<Vec<BatchLine>> = Vec::new();
        let mut bytes = 0usize;
        for line in lines {
            let size = self.line(&line).to_string().len() + 1;
            let full = out
                .last()
                .is_none_or(|b| b.len() >= max_requests || bytes + size > max_bytes);
            if full {
                out.push(Vec::new());
                bytes = 0;
            }
            bytes += size;
            out.last_mut().expect("pushed").push(line);
        }
        out
    }

    fn key(&self) -> Result<&ApiKey, TransportError> {
        self.key.as_ref().ok_or_else(|| {
            TransportError::new(TransportErrorKind::MissingApiKey {
                variable: self.key_variable.clone(),
            })
        })
    }

    fn url(&self, path: &str) -> String {
        http::join_path(&self.base_url, path)
    }

    fn authorized(
        &self,
        builder: reqwest::RequestBuilder,
    ) -> Result<reqwest::RequestBuilder, TransportError> {
        let key = self.key()?;
        Ok(match self.kind {
            BatchKind::OpenAi => builder.bearer_auth(key.expose()),
            BatchKind::Anthropic => builder
                .header("x-api-key", key.expose())
                .header("anthropic-version", super::ANTHROPIC_VERSION),
        })
    }

    fn error_message(&self) -> fn(&Value) -> Option<String> {
        match self.kind {
            BatchKind::OpenAi => super::openai::error_message,
            BatchKind::Anthropic => super::anthropic::error_message,
        }
    }

    async fn json(
        &self,
        builder: reqwest::RequestBuilder,
        url: &str,
    ) -> Result<Value, TransportError> {
        let key = self.key.as_ref();
        let response =
            http::send_request(self.authorized(builder)?, url, key, self.error_message()).await?;
        http::read_json(response, key).await
    }

    async fn text(&self, url: &str) -> Result<String, TransportError> {
        let key = self.key.as_ref();
        let builder = self.authorized(http::client()?.get(url))?;
        let response = http::send_request(builder, url, key, self.error_message()).await?;
        http::read_text(response, key).await
    }

    /// Submits `lines` (one model, within [`split`](Self::split)'s limits)
    /// as one batch; returns the provider's batch id.
    ///
    /// # Errors
    ///
    /// The upload or the creation failed (the error says how; a retryable
    /// one may be tried again), or a reply lacks its id.
    pub async fn submit(&self, lines: &[BatchLine]) -> Result<String, TransportError> {
        let missing = |what: &str, reply: &Value| {
            TransportError::new(TransportErrorKind::Decode {
                message: format!("no {what} in the reply"),
                body: reply.to_string().chars().take(300).collect(),
            })
        };
        let client = http::client()?;
        let created = match self.kind {
            BatchKind::OpenAi => {
                let mut file = Vec::new();
                for line in lines {
                    file.extend(self.line(line).to_string().bytes());
                    file.push(b'\n');
                }
                let part = reqwest::multipart::Part::bytes(file)
                    .file_name("ragaliq-batch.jsonl")
                    .mime_str("application/jsonl")
                    .map_err(|e| TransportError::other(e.to_string()))?;
                let form = reqwest::multipart::Form::new()
                    .text("purpose", "batch")
                    .part("file", part);
                let url = self.url("files");
                let uploaded = self.json(client.post(&url).multipart(form), &url).await?;
                let file_id = uploaded
                    .get("id")
                    .and_then(Value::as_str)
                    .ok_or_else(|| missing("file id", &uploaded))?;
                let url = self.url("batches");
                let body = json!({
                    "input_file_id": file_id,
                    "endpoint": "/v1/chat/completions",
                    "completion_window": "24h",
                    "metadata": {"created_by": "ragaliq"},
                });
                self.json(client.post(&url).json(&body), &url).await?
            }
            BatchKind::Anthropic => {
                let requests: Vec<Value> = lines.iter().map(|l| self.line(l)).collect();
                let url = self.url("messages/batches");
                let body = json!({ "requests": requests });
                self.json(client.post(&url).json(&body), &url).await?
            }
        };
        created
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| missing("batch id", &created))
    }

    /// Where batch `id` stands.
    ///
    /// # Errors
    ///
    /// The poll failed (a 500 is retryable: poll again).
    pub async fn progress(&self, id: &str) -> Result<BatchProgress, TransportError> {
        let client = http::client()?;
        let count = |v: &Value, key: &str| {
            v.get("request_counts")
                .and_then(|c| c.get(key))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
        match self.kind {
            BatchKind::OpenAi => {
                let url = self.url(&format!("batches/{id}"));
                let v = self.json(client.get(&url), &url).await?;
                let status = text(&v, "status").unwrap_or_default();
                let message = v
                    .pointer("/errors/data")
                    .and_then(Value::as_array)
                    .map(|errors| {
                        errors
                            .iter()
                            .filter_map(|e| e.get("message").and_then(Value::as_str))
                            .collect::<Vec<_>>()
                            .join("; ")
                    })
                    .filter(|m| !m.is_empty());
                Ok(BatchProgress {
                    id: id.to_owned(),
                    ended: matches!(
                        status.as_str(),
                        "completed" | "failed" | "expired" | "cancelled"
                    ),
                    status,
                    total: count(&v, "total"),
                    succeeded: count(&v, "completed"),
                    failed: count(&v, "failed"),
                    files: ["output_file_id", "error_file_id"]
                        .iter()
                        .filter_map(|k| text(&v, k))
                        .collect(),
                    message,
                })
            }
            BatchKind::Anthropic => {
                let url = self.url(&format!("messages/batches/{id}"));
                let v = self.json(client.get(&url), &url).await?;
                let status = text(&v, "processing_status").unwrap_or_default();
                let failed = ["errored", "canceled", "expired"]
                    .iter()
                    .map(|k| count(&v, k))
                    .sum();
                let succeeded = count(&v, "succeeded");
                Ok(BatchProgress {
                    id: id.to_owned(),
                    ended: status == "ended",
                    status,
                    total: succeeded + failed + count(&v, "processing"),
                    succeeded,
                    failed,
                    files: Vec::new(),
                    message: None,
                })
            }
        }
    }

    /// The answers of an ended batch, by `custom_id`. `requests` are the
    /// batch's requests by `custom_id` (an answer is read as its request's
    /// response format asks); a line for an id not among them is left out.
    /// Requests with no line at all (a batch that expired part way) are
    /// not in the map: the caller counts them as not answered.
    ///
    /// # Errors
    ///
    /// A results file cannot be fetched (retryable ones may be tried again).
    pub async fn results(
        &self,
        progress: &BatchProgress,
        requests: &BTreeMap<String, JudgeRequest>,
    ) -> Result<BTreeMap<String, LineResult>, TransportError> {
        let mut out = BTreeMap::new();
        let bodies = match self.kind {
            BatchKind::OpenAi => {
                let mut all = Vec::new();
                for file in &progress.files {
                    all.push(
                        self.text(&self.url(&format!("files/{file}/content")))
                            .await?,
                    );
                }
                all
            }
            BatchKind::Anthropic => vec![
                self.text(&self.url(&format!("messages/batches/{}/results", progress.id)))
                    .await?,
            ],
        };
        for body in bodies {
            for line in body.lines().filter(|l| !l.trim().is_empty()) {
                let Ok(value) = serde_json::from_str::<Value>(line) else {
                    continue;
                };
                let Some(id) = value.get("custom_id").and_then(Value::as_str) else {
                    continue;
                };
                let Some(request) = requests.get(id) else {
                    continue;
                };
                let result = match self.kind {
                    BatchKind::OpenAi => openai_line(&value),
                    BatchKind::Anthropic => anthropic_line(&value, request),
                };
                // A success wins over a failure for the same id (a request
                // retried inside the provider may appear in both files).
                match out.get(id) {
                    Some(LineResult::Answered(_)) => {}
                    _ => {
                        out.insert(id.to_owned(), result);
                    }
                }
            }
        }
        Ok(out)
    }
}

/// One line of an OpenAI output or error file.
fn openai_line(value: &Value) -> LineResult {
    if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| error.get("code").and_then(Value::as_str))
            .unwrap_or("an error with no message");
        return LineResult::Failed(message.to_owned());
    }
    let status = value
        .pointer("/response/status_code")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let body = value.pointer("/response/body");
    if status != 200 {
        let said = body
            .and_then(super::openai::error_message)
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        return LineResult::Failed(format!("status code {status}{said}"));
    }
    match body.filter(|b| b.is_object()) {
        Some(body) => match super::openai::read_reply(body) {
            Ok(response) => LineResult::Answered(response),
            Err(e) => LineResult::Failed(e.to_string()),
        },
        None => LineResult::Failed("status code 200 with no body".into()),
    }
}

/// One line of an Anthropic results file.
fn anthropic_line(value: &Value, request: &JudgeRequest) -> LineResult {
    let result = value.get("result");
    let kind = result
        .and_then(|r| r.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("missing");
    match kind {
        "succeeded" => match result.and_then(|r| r.get("message")) {
            Some(message) => {
                let prefilled = matches!(request.response_format, ResponseFormat::JsonObject);
                match super::anthropic::read_reply(message, prefilled) {
                    Ok(response) => LineResult::Answered(response),
                    Err(e) => LineResult::Failed(e.to_string()),
                }
            }
            None => LineResult::Failed("succeeded with no message".into()),
        },
        "errored" => {
            let error = result.and_then(|r| r.get("error"));
            let message = error
                .and_then(|e| e.pointer("/error/message").or_else(|| e.get("message")))
                .and_then(Value::as_str)
                .unwrap_or("an error with no message");
            LineResult::Failed(format!("errored: {message}"))
        }
        other => LineResult::Failed(format!("{other} (not answered)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Message;

    fn request(format: ResponseFormat) -> JudgeRequest {
        JudgeRequest {
            task: "verify_claim".into(),
            template_version: "t@1".into(),
            model: "m".into(),
            system: "s".into(),
            messages: vec![Message::user("u")],
            temperature: 0.0,
            max_tokens: 10,
            response_format: format,
            sample: 0,
            subject: Value::Null,
        }
    }

    #[test]
    fn openai_lines_that_are_not_answers_say_why() {
        let ok = json!({"custom_id": "a", "response": {"status_code": 200, "body": {
            "model": "gpt-4o-mini", "choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1}}}, "error": null});
        assert_eq!(
            openai_line(&ok),
            LineResult::Answered(
                JudgeResponse::text("{}")
                    .with_tokens(5, 1)
                    .with_model("gpt-4o-mini")
            )
        );
        let cases = [
            (
                json!({"custom_id": "a", "response": null, "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}}),
                "could not be executed",
            ),
            (
                json!({"custom_id": "a", "response": {"status_code": 0, "body": {}}, "error": null}),
                "status code 0",
            ),
            (
                json!({"custom_id": "a", "response": {"status_code": 500, "body": {"error": {"message": "boom"}}}, "error": null}),
                "status code 500: boom",
            ),
            (
                json!({"custom_id": "a", "response": {"status_code": 200}, "error": null}),
                "no body",
            ),
            (
                json!({"custom_id": "a", "response": {"status_code": 200, "body": {"choices": []}}, "error": null}),
                "choices[0]",
            ),
        ];
        for (line, says) in cases {
            match openai_line(&line) {
                LineResult::Failed(why) => assert!(why.contains(says), "{why} / {says}"),
                other => panic!("{line} gave {other:?}"),
            }
        }
    }

    #[test]
    fn anthropic_lines_read_tool_answers_and_name_failures() {
        let schema = ResponseFormat::JsonSchema {
            name: "t".into(),
            schema: json!({}),
        };
        let ok = json!({"custom_id": "a", "result": {"type": "succeeded", "message": {
            "content": [{"type": "tool_use", "input": {"verdict": "supported"}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 7, "output_tokens": 2}}}});
        match anthropic_line(&ok, &request(schema.clone())) {
            LineResult::Answered(r) => {
                assert_eq!(r.text, r#"{"verdict":"supported"}"#);
                assert_eq!((r.input_tokens, r.output_tokens), (7, 2));
            }
            other => panic!("{other:?}"),
        }
        let prefilled = json!({"custom_id": "a", "result": {"type": "succeeded", "message": {
            "content": [{"type": "text", "text": "\"a\": 1}"}], "stop_reason": "end_turn"}}});
        match anthropic_line(&prefilled, &request(ResponseFormat::JsonObject)) {
            LineResult::Answered(r) => assert_eq!(r.text, r#"{"a": 1}"#),
            other => panic!("{other:?}"),
        }
        for (line, says) in [
            (
                json!({"custom_id": "a", "result": {"type": "errored", "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}}}),
                "errored: bad",
            ),
            (
                json!({"custom_id": "a", "result": {"type": "expired"}}),
                "expired",
            ),
            (
                json!({"custom_id": "a", "result": {"type": "canceled"}}),
                "canceled",
            ),
        ] {
            match anthropic_line(&line, &request(schema.clone())) {
                LineResult::Failed(why) => assert!(why.contains(says), "{why}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn batches_split_at_the_providers_limits() {
        let api = BatchApi::anthropic("http://127.0.0.1:1/v1", None, "K");
        let lines: Vec<BatchLine> = (0..5)
            .map(|i| BatchLine {
                custom_id: format!("id{i}"),
                request: request(ResponseFormat::Text),
            })
            .collect();
        assert_eq!(api.split(lines.clone()).len(), 1);
        let size = api.line(&lines[0]).to_string().len() + 1;
        let sizes = |chunks: Vec<Vec<BatchLine>>| chunks.iter().map(Vec::len).collect::<Vec<_>>();
        assert_eq!(
            sizes(api.split_within(lines.clone(), 3, usize::MAX)),
            [3, 2]
        );
        assert_eq!(
            sizes(api.split_within(lines.clone(), 100, 2 * size)),
            [2, 2, 1]
        );
        assert_eq!(
            sizes(api.split_within(lines, 100, 2 * size - 1)),
            [1, 1, 1, 1, 1]
        );
    }
}
