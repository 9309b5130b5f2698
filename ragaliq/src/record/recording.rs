//! What a recording holds: the judge exchanges of one test, in the form a
//! reviewer reads in `cargo insta review` and replay reads back.

use crate::judge::{JudgeRequest, JudgeResponse};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The recording format's version; part of every recording.
pub const FORMAT: u32 = 1;

/// All judge exchanges of one test, ordered by fingerprint so that
/// concurrent calls still produce the same file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recording {
    /// The format's version ([`FORMAT`]).
    pub ragaliq_recording: u32,
    /// The exchanges.
    pub exchanges: Vec<Exchange>,
}

/// One question to the judge and its answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exchange {
    /// SHA-256 of everything that can change the answer (64 hex digits).
    pub fingerprint: String,
    /// The task (`extract_claims`, `verify_claims`, …).
    pub task: String,
    /// The provider asked.
    pub provider: String,
    /// The model asked.
    pub model: String,
    /// The prompt templates' versions.
    pub template: String,
    /// What was asked, readably: the query, the claims, how many passages.
    pub asked: Value,
    /// The judge's reply, when it is JSON that reads back to the very same
    /// text; otherwise `answer_text` holds the reply verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Value>,
    /// The judge's reply verbatim, when it is not plain JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_text: Option<String>,
    /// Tokens the server reported.
    pub tokens: Tokens,
    /// The model the server said answered, when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_by: Option<String>,
}

/// Token counts of one exchange.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tokens {
    /// Prompt tokens.
    pub input: u64,
    /// Completion tokens.
    pub output: u64,
}

impl Exchange {
    pub(crate) fn new(
        provider: &str,
        fingerprint: String,
        request: &JudgeRequest,
        response: &JudgeResponse,
    ) -> Exchange {
        // Keep the structured form only when it reproduces the text exactly:
        // replay must hand the parsers the same bytes the judge sent.
        let structured = serde_json::from_str::<Value>(&response.text)
            .ok()
            .filter(|v| serde_json::to_string(v).is_ok_and(|s| s == response.text));
        let (answer, answer_text) = match structured {
            Some(v) => (Some(v), None),
            None => (None, Some(response.text.clone())),
        };
        Exchange {
            fingerprint,
            task: request.task.clone(),
            provider: provider.to_owned(),
            model: request.model.clone(),
            template: request.template_version.clone(),
            asked: request.subject.clone(),
            answer,
            answer_text,
            tokens: Tokens {
                input: response.input_tokens,
                output: response.output_tokens,
            },
            served_by: response.model.clone(),
        }
    }

    /// The reply text, as the judge sent it.
    #[must_use]
    pub fn reply_text(&self) -> String {
        match (&self.answer_text, &self.answer) {
            (Some(text), _) => text.clone(),
            (None, Some(v)) => v.to_string(),
            (None, None) => String::new(),
        }
    }

    pub(crate) fn response(&self) -> JudgeResponse {
        JudgeResponse {
            text: self.reply_text(),
            input_tokens: self.tokens.input,
            output_tokens: self.tokens.output,
            model: self.served_by.clone(),
        }
    }
}

/// A short readable form of what an exchange asks, for error messages.
pub(crate) fn describe(task: &str, asked: &Value) -> String {
    let text = |key: &str| asked.get(key).and_then(Value::as_str).map(|s| quote(s, 60));
    let detail = match task {
        "extract_claims" => text("response").map(|r| format!("claims of the response {r}")),
        "verify_claims" => asked.get("claims").and_then(Value::as_array).map(|c| {
            let first = c
                .first()
                .and_then(Value::as_str)
                .map(|s| quote(s, 50))
                .unwrap_or_default();
            format!(
                "{} claim{} starting {first}",
                c.len(),
                if c.len() == 1 { "" } else { "s" }
            )
        }),
        "verify_claim" => text("claim").map(|c| format!("claim {c}")),
        "relevance" | "passage_relevance" => text("query").map(|q| format!("query {q}")),
        _ => None,
    };
    match detail {
        Some(d) => format!("{task} ({d})"),
        None => task.to_owned(),
    }
}

fn quote(s: &str, max: usize) -> String {
    let s = s.trim();
    if s.chars().count() <= max {
        format!("\"{s}\"")
    } else {
        let cut: String = s.chars().take(max).collect();
        format!("\"{cut}…\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::{ResponseFormat, test_request};
    use serde_json::json;

    fn request() -> JudgeRequest {
        test_request("m", ResponseFormat::Json)
    }

    #[test]
    fn compact_json_is_stored_structured_and_replays_byte_for_byte() {
        let text = r#"{"reasoning":"ok","score":0.9}"#;
        let e = Exchange::new("p", "f".into(), &request(), &JudgeResponse::text(text));
        assert_eq!(e.answer, Some(json!({"reasoning": "ok", "score": 0.9})));
        assert_eq!(e.answer_text, None);
        assert_eq!(e.reply_text(), text);
    }

    #[test]
    fn anything_else_is_stored_verbatim() {
        for text in [
            "```json\n{\"score\": 0.9}\n```",
            "{\"score\": 0.9}",
            "I refuse.",
        ] {
            let e = Exchange::new("p", "f".into(), &request(), &JudgeResponse::text(text));
            assert_eq!(e.answer_text.as_deref(), Some(text));
            assert_eq!(e.reply_text(), text);
        }
    }

    #[test]
    fn descriptions_are_short_and_readable() {
        assert_eq!(
            describe("relevance", &json!({"query": "How long?"})),
            "relevance (query \"How long?\")"
        );
        let long = "x".repeat(100);
        assert!(describe("verify_claim", &json!({"claim": long})).ends_with("…\")"));
        assert_eq!(
            describe(
                "verify_claims",
                &json!({"claims": ["A.", "B."], "passages": 2})
            ),
            "verify_claims (2 claims starting \"A.\")"
        );
    }
}
