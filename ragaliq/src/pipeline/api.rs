//! The APIs the loopback endpoint speaks: which call a request is, its
//! fingerprint, how each wire format writes an error, and what an answer
//! says (its text, its tokens) for readers and reports.

use crate::record::Ordered;
use sha2::{Digest, Sha256};

/// A call the endpoint answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Api {
    /// `POST /v1/chat/completions` (OpenAI-compatible).
    Chat,
    /// `POST /v1/completions` (OpenAI-compatible, legacy text completion).
    Completions,
    /// `POST /v1/embeddings` (OpenAI-compatible).
    Embeddings,
    /// `GET /v1/models` (OpenAI-compatible).
    Models,
    /// `POST /v1/messages` (Anthropic).
    Messages,
}

/// The routes, for the message a wrong path gets.
pub(crate) const ROUTES: &str = "POST /v1/chat/completions, POST /v1/completions, POST /v1/embeddings, GET /v1/models (OpenAI-compatible) and POST /v1/messages (Anthropic)";

impl Api {
    /// The call a method and path ask for; a path is also accepted without
    /// its `/v1` (a client given the endpoint's root as an OpenAI base URL).
    pub(crate) fn route(method: &str, path: &str) -> Option<Api> {
        let path = path.trim_end_matches('/');
        let path = path.strip_prefix("/v1").unwrap_or(path);
        match (method, path) {
            ("POST", "/chat/completions") => Some(Api::Chat),
            ("POST", "/completions") => Some(Api::Completions),
            ("POST", "/embeddings") => Some(Api::Embeddings),
            ("GET", "/models") => Some(Api::Models),
            ("POST", "/messages") => Some(Api::Messages),
            _ => None,
        }
    }

    /// Its path after `/v1/`, as recordings name it.
    pub(crate) fn path(self) -> &'static str {
        match self {
            Api::Chat => "chat/completions",
            Api::Completions => "completions",
            Api::Embeddings => "embeddings",
            Api::Models => "models",
            Api::Messages => "messages",
        }
    }

    /// Whether it is Anthropic's wire format.
    pub(crate) fn anthropic(self) -> bool {
        self == Api::Messages
    }

    /// Whether its request has a JSON body.
    pub(crate) fn has_body(self) -> bool {
        self != Api::Models
    }
}

/// SHA-256 over the API and the request's body (canonical JSON: key order
/// and spacing do not count), with a format tag: what the recording holds a
/// call by. Headers (the key), the endpoint's port and the upstream's URL
/// are not part of it.
pub(crate) fn fingerprint(api: Api, body: Option<&serde_json::Value>) -> String {
    let canonical = crate::core::canonical_json(&serde_json::json!({
        "v": 1,
        "api": api.path(),
        "body": body.cloned().unwrap_or(serde_json::Value::Null),
    }));
    let digest = Sha256::digest(canonical.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// An error body in the wire format of `api`, so the application's client
/// reads the message as its provider's own.
pub(crate) fn error_body(api: Api, status: u16, message: &str) -> String {
    let value = if api.anthropic() {
        let kind = match status {
            404 => "not_found_error",
            400 => "invalid_request_error",
            504 => "timeout_error",
            _ => "api_error",
        };
        serde_json::json!({"type": "error", "error": {"type": kind, "message": message}})
    } else {
        let code = match status {
            404 => "not_recorded",
            400 => "invalid_request",
            504 => "upstream_timeout",
            _ => "upstream_error",
        };
        serde_json::json!({"error": {"message": message, "type": "ragaliq_pipeline", "param": null, "code": code}})
    };
    value.to_string()
}

/// Whether the request asks for a streamed answer.
pub(crate) fn streamed(body: Option<&serde_json::Value>) -> bool {
    body.and_then(|b| b.get("stream"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

/// What an answer says, for the recording's readers and the reports: its
/// text and its tokens. Read from the whole body, or from the streamed
/// events' data.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Said {
    pub text: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// What a whole JSON answer of `api` says.
pub(crate) fn said(api: Api, body: &serde_json::Value) -> Said {
    let usage = |key: &str| {
        body.get("usage")
            .and_then(|u| u.get(key))
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0)
    };
    match api {
        Api::Chat => Said {
            text: texts(body, |c| {
                c.get("message")
                    .and_then(|m| m.get("content"))
                    .and_then(serde_json::Value::as_str)
            }),
            input_tokens: usage("prompt_tokens"),
            output_tokens: usage("completion_tokens"),
        },
        Api::Completions => Said {
            text: texts(body, |c| c.get("text").and_then(serde_json::Value::as_str)),
            input_tokens: usage("prompt_tokens"),
            output_tokens: usage("completion_tokens"),
        },
        Api::Embeddings => {
            let data = body
                .get("data")
                .and_then(serde_json::Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            let dims = data
                .first()
                .and_then(|d| d.get("embedding"))
                .and_then(serde_json::Value::as_array)
                .map_or(0, Vec::len);
            Said {
                text: format!(
                    "{} vector{} of {dims} dimensions",
                    data.len(),
                    if data.len() == 1 { "" } else { "s" }
                ),
                input_tokens: usage("prompt_tokens"),
                output_tokens: 0,
            }
        }
        Api::Models => {
            let ids: Vec<&str> = body
                .get("data")
                .and_then(serde_json::Value::as_array)
                .map(|d| {
                    d.iter()
                        .filter_map(|m| m.get("id").and_then(serde_json::Value::as_str))
                        .collect()
                })
                .unwrap_or_default();
            Said {
                text: ids.join(", "),
                ..Said::default()
            }
        }
        Api::Messages => Said {
            text: body
                .get("content")
                .and_then(serde_json::Value::as_array)
                .map(|parts| {
                    parts
                        .iter()
                        .filter_map(|p| p.get("text").and_then(serde_json::Value::as_str))
                        .collect::<String>()
                })
                .unwrap_or_default(),
            input_tokens: usage("input_tokens"),
            output_tokens: usage("output_tokens"),
        },
    }
}

/// The choices' texts, joined (one per choice, in order).
fn texts<'a>(
    body: &'a serde_json::Value,
    text: impl Fn(&'a serde_json::Value) -> Option<&'a str>,
) -> String {
    body.get("choices")
        .and_then(serde_json::Value::as_array)
        .map(|choices| {
            choices
                .iter()
                .filter_map(text)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// What a streamed answer of `api` says, from its events (each an event's
/// text: `data: …` lines, and Anthropic's `event: …`).
pub(crate) fn said_streamed(api: Api, events: &[String]) -> Said {
    let mut out = Said::default();
    for event in events {
        let data: String = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect::<Vec<_>>()
            .join("\n");
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&data) else {
            continue; // `[DONE]`, keep-alives
        };
        let n = |v: Option<&serde_json::Value>, key: &str| {
            v.and_then(|u| u.get(key))
                .and_then(serde_json::Value::as_u64)
        };
        match api {
            Api::Messages => {
                if let Some(t) = v
                    .get("delta")
                    .and_then(|d| d.get("text"))
                    .and_then(serde_json::Value::as_str)
                {
                    out.text.push_str(t);
                }
                let message_usage = v.get("message").and_then(|m| m.get("usage"));
                if let Some(i) = n(message_usage, "input_tokens") {
                    out.input_tokens = i;
                }
                if let Some(o) = n(v.get("usage"), "output_tokens") {
                    out.output_tokens = o;
                }
            }
            _ => {
                for choice in v
                    .get("choices")
                    .and_then(serde_json::Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let piece = choice
                        .get("delta")
                        .and_then(|d| d.get("content"))
                        .or_else(|| choice.get("text"))
                        .and_then(serde_json::Value::as_str);
                    if let Some(t) = piece {
                        out.text.push_str(t);
                    }
                }
                if let Some(i) = n(v.get("usage"), "prompt_tokens") {
                    out.input_tokens = i;
                }
                if let Some(o) = n(v.get("usage"), "completion_tokens") {
                    out.output_tokens = o;
                }
            }
        }
    }
    out
}

/// The request's body as an order-keeping value, for the recording.
pub(crate) fn ordered(body: &[u8]) -> Option<Ordered> {
    std::str::from_utf8(body).ok().and_then(Ordered::parse_json)
}

/// A rough count of a request's tokens, for a judge's tokens-per-minute
/// pace when it covers the pipeline too: its characters over four, plus
/// its reply limit.
pub(crate) fn estimated_tokens(body: Option<&serde_json::Value>, bytes: usize) -> u64 {
    let limit = body
        .and_then(|b| {
            b.get("max_tokens")
                .or_else(|| b.get("max_completion_tokens"))
        })
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    (bytes as u64) / 4 + limit
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn routes_with_and_without_v1() {
        assert_eq!(Api::route("POST", "/v1/chat/completions"), Some(Api::Chat));
        assert_eq!(Api::route("POST", "/chat/completions/"), Some(Api::Chat));
        assert_eq!(Api::route("GET", "/v1/models"), Some(Api::Models));
        assert_eq!(Api::route("POST", "/v1/messages"), Some(Api::Messages));
        assert_eq!(Api::route("GET", "/v1/chat/completions"), None);
        assert_eq!(Api::route("POST", "/v1/files"), None);
    }

    #[test]
    fn the_fingerprint_ignores_key_order_and_spacing_but_not_content() {
        let a = json!({"model": "m", "messages": [{"role": "user", "content": "Hi"}]});
        let b: serde_json::Value = serde_json::from_str(
            r#"{ "messages" : [ {"content":"Hi","role":"user"} ], "model":"m" }"#,
        )
        .unwrap();
        assert_eq!(
            fingerprint(Api::Chat, Some(&a)),
            fingerprint(Api::Chat, Some(&b))
        );
        let c = json!({"model": "m", "messages": [{"role": "user", "content": "Hi!"}]});
        assert_ne!(
            fingerprint(Api::Chat, Some(&a)),
            fingerprint(Api::Chat, Some(&c))
        );
        assert_ne!(
            fingerprint(Api::Chat, Some(&a)),
            fingerprint(Api::Completions, Some(&a))
        );
        assert_eq!(fingerprint(Api::Models, None).len(), 64);
    }

    #[test]
    fn streamed_answers_are_read_as_their_client_reads_them() {
        let openai = [
            r#"data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"The "}}]}"#,
            r#"data: {"choices":[{"index":0,"delta":{"content":"window is 30 days."}}]}"#,
            r#"data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":7}}"#,
            "data: [DONE]",
        ]
        .map(String::from);
        let s = said_streamed(Api::Chat, &openai);
        assert_eq!(s.text, "The window is 30 days.");
        assert_eq!((s.input_tokens, s.output_tokens), (12, 7));
        let anthropic = [
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":20,\"output_tokens\":1}}}",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Thirty days.\"}}",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":4}}",
        ]
        .map(String::from);
        let s = said_streamed(Api::Messages, &anthropic);
        assert_eq!(s.text, "Thirty days.");
        assert_eq!((s.input_tokens, s.output_tokens), (20, 4));
    }

    #[test]
    fn whole_answers_are_read_per_api() {
        let chat = json!({"choices": [{"message": {"content": "Yes."}}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}});
        assert_eq!(
            said(Api::Chat, &chat),
            Said {
                text: "Yes.".into(),
                input_tokens: 3,
                output_tokens: 1
            }
        );
        let emb = json!({"data": [{"embedding": [0.1, 0.2, 0.3]}, {"embedding": [0.0, 0.0, 1.0]}], "usage": {"prompt_tokens": 5}});
        assert_eq!(
            said(Api::Embeddings, &emb).text,
            "2 vectors of 3 dimensions"
        );
        let msg = json!({"content": [{"type": "text", "text": "Hello"}], "usage": {"input_tokens": 9, "output_tokens": 2}});
        assert_eq!(said(Api::Messages, &msg).output_tokens, 2);
    }
}
