//! The pipeline's own model calls in a recording: what the application
//! under test asked its model (through ragaliq's loopback endpoint) and
//! what it was answered, kept in the test's recording above the judge's
//! exchanges on that answer.
//!
//! ```yaml
//! pipeline:
//! - api: chat/completions          # /v1/chat/completions (OpenAI-compatible)
//!   model: qwen2.5-coder-0.5b
//!   asked:                         # the request's body, but its model
//!     messages:
//!     - role: system
//!       content: Answer from the passages only.
//!     - role: user
//!       content: What is the refund window?
//!     temperature: 0
//!   answer: The refund window is 30 days.   # the answer's text, for readers
//!   response: {…}                  # the body replay sends back
//!   tokens: {input: 120, output: 9}
//!   fingerprint: 3f5a…
//! ```
//!
//! A streamed answer keeps `chunks:` instead of `response:`, each
//! server-sent event as the client received it, and replay sends the same
//! events. The same request asked again in one test is a second call with
//! `occurrence: 2`, replayed second. No header is ever kept: the key the
//! application sent is forwarded when recording and written nowhere.

use super::fields::{ReplyText, Tokens, quote};
use super::ordered::Ordered;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// One call the pipeline under test made to its own model through the
/// loopback endpoint, and its answer.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Call {
    /// The API called, its path after `/v1/`: `chat/completions`,
    /// `completions`, `embeddings` or `models` (OpenAI-compatible), or
    /// `messages` (Anthropic).
    pub api: String,
    /// The model asked (the body's `model`); empty when the body names none.
    pub model: String,
    /// The request's body without its `model`: the messages or prompt, and
    /// the parameters. `None` for a request with no body (`models`).
    pub asked: Option<Ordered>,
    /// The answer's text, as the application read it (the streamed
    /// pieces joined), for readers; replay sends `response` or `chunks`.
    pub answer: String,
    /// The response's body (compact JSON), when it was answered whole.
    pub response: Option<String>,
    /// The server-sent events, each as the client received it (without the
    /// blank line that ends it), when the answer was streamed.
    pub chunks: Vec<String>,
    /// Tokens the server reported.
    pub tokens: Tokens,
    /// Which asking of the same request this is in its test: 1 for the
    /// first, 2 for the second, …
    pub occurrence: u32,
    /// The trials that use this call (`pipeline` in a suite); empty for a
    /// `#[rag_test]`.
    pub used_by: BTreeSet<String>,
    /// SHA-256 of the API and the request's body (64 hex digits).
    pub fingerprint: String,
}

impl Call {
    /// A call as the endpoint recorded it: the body is the request's JSON
    /// (its `model` is kept apart), `response` the whole answer's body (kept
    /// as compact JSON when it is JSON), `chunks` a streamed answer's events.
    #[allow(
        clippy::too_many_arguments,
        reason = "each argument is a field of the call written"
    )]
    pub(crate) fn new(
        api: &str,
        body: Option<&Ordered>,
        answer: String,
        response: Option<String>,
        chunks: Vec<String>,
        tokens: Tokens,
        occurrence: u32,
        fingerprint: String,
    ) -> Call {
        let mut model = String::new();
        let asked = body.map(|b| match b {
            Ordered::Object(entries) => Ordered::Object(
                entries
                    .iter()
                    .filter(|(k, v)| {
                        if k == "model"
                            && let Ordered::String(m) = v
                        {
                            model = m.clone();
                            return false;
                        }
                        true
                    })
                    .cloned()
                    .collect(),
            ),
            other => other.clone(),
        });
        let response = response.map(|text| match Ordered::parse_json(&text) {
            Some(v) => v.to_compact(),
            None => text,
        });
        Call {
            api: api.to_owned(),
            model,
            asked,
            answer,
            response,
            chunks,
            tokens,
            occurrence: occurrence.max(1),
            used_by: BTreeSet::new(),
            fingerprint,
        }
    }

    /// The key a recording holds the call by: its fingerprint and, from
    /// the second asking on, which asking it is.
    #[must_use]
    pub fn key(&self) -> String {
        key(&self.fingerprint, self.occurrence)
    }

    /// The request's body as the application sent it (its `model` first),
    /// as JSON.
    #[must_use]
    pub fn body(&self) -> serde_json::Value {
        let mut body = match self.asked.as_ref().map(Ordered::to_value) {
            Some(serde_json::Value::Object(map)) => map,
            Some(other) => return other,
            None if self.model.is_empty() => return serde_json::Value::Null,
            None => serde_json::Map::new(),
        };
        if !self.model.is_empty() {
            body.insert("model".into(), self.model.clone().into());
        }
        serde_json::Value::Object(body)
    }

    /// What was called, readably: `chat/completions of qwen2.5-coder-0.5b
    /// ("What is the refund window?")`.
    #[must_use]
    pub fn describe(&self) -> String {
        describe(&self.api, &self.model, self.asked.as_ref())
    }

    /// The rank of its API in reading order: what a pipeline asks first
    /// (embeddings, to retrieve) before what it asks last (the answer).
    fn rank(&self) -> usize {
        [
            "models",
            "embeddings",
            "completions",
            "chat/completions",
            "messages",
        ]
        .iter()
        .position(|a| *a == self.api)
        .unwrap_or(usize::MAX)
    }
}

/// The key of the `occurrence`-th asking of the request `fingerprint`.
pub(crate) fn key(fingerprint: &str, occurrence: u32) -> String {
    if occurrence <= 1 {
        fingerprint.to_owned()
    } else {
        format!("{fingerprint}#{occurrence}")
    }
}

/// A call, readably, from its API, model and body.
pub(crate) fn describe(api: &str, model: &str, asked: Option<&Ordered>) -> String {
    let name = match api {
        "chat/completions" => "chat completion",
        "completions" => "completion",
        "embeddings" => "embeddings",
        "models" => "model list",
        "messages" => "Anthropic message",
        other => other,
    };
    let model = if model.is_empty() {
        String::new()
    } else {
        format!(" of `{model}`")
    };
    // The last line a body ends on: a prompt's question usually.
    let last_text = asked
        .and_then(last_text)
        .and_then(|t| {
            t.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(str::to_owned)
        })
        .map(|t| format!(" ({})", quote(&t, 60)));
    format!("{name}{model}{}", last_text.unwrap_or_default())
}

/// The text a body ends on: its last message's text, its prompt, or its
/// first input.
fn last_text(asked: &Ordered) -> Option<String> {
    let text_of = |v: &Ordered| -> Option<String> {
        match v {
            Ordered::String(s) => Some(s.clone()),
            Ordered::Array(parts) => Some(
                parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Ordered::as_str))
                    .collect::<Vec<_>>()
                    .join(" "),
            )
            .filter(|s| !s.is_empty()),
            _ => None,
        }
    };
    if let Some(messages) = asked.get("messages").and_then(Ordered::as_array) {
        return messages
            .last()
            .and_then(|m| m.get("content"))
            .and_then(text_of);
    }
    for key in ["prompt", "input"] {
        match asked.get(key) {
            Some(Ordered::Array(items)) => return items.first().and_then(text_of),
            Some(v) => return text_of(v),
            None => {}
        }
    }
    None
}

/// Sorts calls in reading order: by API (retrieval's embeddings before the
/// answer), then by what was asked, then by asking.
pub(crate) fn sort(calls: &mut [Call]) {
    calls.sort_by_cached_key(|c| {
        (
            c.rank(),
            c.model.clone(),
            c.asked
                .as_ref()
                .map(Ordered::to_compact)
                .unwrap_or_default(),
            c.occurrence,
            c.fingerprint.clone(),
        )
    });
}

/// A call as written in the file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileCall {
    api: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    asked: Option<Ordered>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    answer: Option<ReplyText>,
    /// The whole answer's body, structured, when it reads back exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    response: Option<Ordered>,
    /// The whole answer's body as one line of JSON text: embeddings (whose
    /// vectors would fill pages), and anything that would not read back
    /// exactly when structured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    response_text: Option<String>,
    /// Each event a block of its own: its JSON read as it came, no escapes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    chunks: Vec<ReplyText>,
    tokens: Tokens,
    #[serde(default = "first", skip_serializing_if = "is_first")]
    occurrence: u32,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    used_by: BTreeSet<String>,
    fingerprint: String,
}

fn first() -> u32 {
    1
}

fn is_first(n: &u32) -> bool {
    *n <= 1
}

impl FileCall {
    /// `call` as written; `verbatim`: its response as text even when it
    /// could be structured.
    pub(crate) fn write(call: &Call, verbatim: bool) -> FileCall {
        let structured = (!verbatim && call.api != "embeddings")
            .then(|| call.response.as_deref().and_then(Ordered::parse_json))
            .flatten()
            .filter(|v| Some(v.to_compact().as_str()) == call.response.as_deref());
        let (response, response_text) = match structured {
            Some(v) => (Some(v), None),
            None => (None, call.response.clone()),
        };
        FileCall {
            api: call.api.clone(),
            model: call.model.clone(),
            asked: call.asked.clone(),
            answer: (!call.answer.is_empty()).then(|| ReplyText {
                text: call.answer.clone(),
                block: call.answer.contains('\n'),
            }),
            response,
            response_text,
            chunks: call
                .chunks
                .iter()
                .map(|c| ReplyText {
                    text: c.clone(),
                    block: !verbatim,
                })
                .collect(),
            tokens: call.tokens,
            occurrence: call.occurrence,
            used_by: call.used_by.clone(),
            fingerprint: call.fingerprint.clone(),
        }
    }

    /// The call read back; `n` is its place in the file, for messages.
    pub(crate) fn read(self, n: usize) -> Result<Call, String> {
        let response = match (self.response, self.response_text) {
            (Some(v), None) => Some(v.to_compact()),
            (None, text) => text,
            (Some(_), Some(_)) => {
                return Err(format!(
                    "pipeline call {n}: both `response` and `response_text`"
                ));
            }
        };
        if response.is_some() && !self.chunks.is_empty() {
            return Err(format!(
                "pipeline call {n}: both a whole `response` and streamed `chunks`"
            ));
        }
        if response.is_none() && self.chunks.is_empty() {
            return Err(format!(
                "pipeline call {n}: no `response` or `chunks` to answer it with"
            ));
        }
        if self.fingerprint.len() != 64 || !self.fingerprint.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return Err(format!(
                "pipeline call {n}: `{}` is not a fingerprint (64 hex digits)",
                self.fingerprint
            ));
        }
        Ok(Call {
            api: self.api,
            model: self.model,
            asked: self.asked,
            answer: self.answer.map(|a| a.text).unwrap_or_default(),
            response,
            chunks: self.chunks.into_iter().map(|c| c.text).collect(),
            tokens: self.tokens,
            occurrence: self.occurrence.max(1),
            used_by: self.used_by,
            fingerprint: self.fingerprint,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(text: &str) -> Ordered {
        Ordered::parse_json(text).unwrap()
    }

    #[test]
    fn the_model_is_kept_apart_and_the_body_comes_back_whole() {
        let b =
            body(r#"{"model":"m","messages":[{"role":"user","content":"Hi?"}],"temperature":0}"#);
        let call = Call::new(
            "chat/completions",
            Some(&b),
            "Hello.".into(),
            Some("{\n  \"id\": \"x\"\n}".into()),
            Vec::new(),
            Tokens::default(),
            1,
            "a".repeat(64),
        );
        assert_eq!(call.model, "m");
        assert_eq!(call.asked.as_ref().unwrap().get("model"), None);
        assert_eq!(call.body(), b.to_value());
        assert_eq!(call.response.as_deref(), Some(r#"{"id":"x"}"#));
        assert_eq!(call.describe(), "chat completion of `m` (\"Hi?\")");
    }

    #[test]
    fn calls_come_back_whole_from_the_file_and_streams_read_as_blocks() {
        use super::super::recording::{Recording, parse_yaml};
        let b = body(r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"Q?"}]}"#);
        let streamed = Call::new(
            "chat/completions",
            Some(&b),
            "Yes.".into(),
            None,
            vec![
                r#"data: {"choices":[{"delta":{"content":"Yes."}}]}"#.into(),
                "event: message_stop\ndata: {\"type\":\"message_stop\"}".into(),
                "data:  two spaces, a tab\there, and a trailing space ".into(),
                "data: [DONE]".into(),
            ],
            Tokens {
                input: 3,
                output: 1,
            },
            2,
            "b".repeat(64),
        );
        let e = body(r#"{"model":"e","input":["a","b"]}"#);
        let embeddings = Call::new(
            "embeddings",
            Some(&e),
            "2 vectors of 3 dimensions".into(),
            Some(r#"{"data":[{"embedding":[0.1,-2.5e-7,3.0]},{"embedding":[1,2,3]}]}"#.into()),
            Vec::new(),
            Tokens::default(),
            1,
            "c".repeat(64),
        );
        let r = Recording {
            exchanges: Vec::new(),
            pipeline: vec![streamed, embeddings],
        };
        let yaml = r.to_yaml();
        assert!(
            yaml.starts_with("ragaliq_recording: 2\npipeline:"),
            "{yaml}"
        );
        assert!(
            yaml.contains("- |-\n    data: {\"choices\""),
            "a block, no escapes:\n{yaml}"
        );
        assert!(yaml.contains("occurrence: 2"), "{yaml}");
        assert!(
            yaml.contains("response_text: "),
            "embeddings as one line:\n{yaml}"
        );
        assert_eq!(parse_yaml(&yaml).unwrap(), r);
    }

    #[test]
    fn keys_tell_askings_apart() {
        assert_eq!(key("ab", 1), "ab");
        assert_eq!(key("ab", 2), "ab#2");
    }
}
