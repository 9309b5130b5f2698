//! The one provider-agnostic request the judge sends, the response it gets
//! back, and the [`Fingerprint`] that identifies an exchange.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// Who speaks a [`Message`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The evaluator (ragaliq).
    User,
    /// The judge model (used for prefills and few-shot turns).
    Assistant,
}

/// One conversation turn.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: String,
}

impl Message {
    /// A user turn.
    #[must_use]
    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }
}

/// How the judge should shape its reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum ResponseFormat {
    /// Free text.
    Text,
    /// Any JSON object.
    Json,
    /// JSON matching a schema.
    JsonSchema {
        /// The schema's name (the task label).
        name: String,
        /// The JSON schema.
        schema: serde_json::Value,
    },
}

/// Everything the judge asks, in one provider-agnostic value.
///
/// Transports turn it into their wire format; the recorder fingerprints it;
/// accounting counts it. Field order is the canonical encoding's order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgeRequest {
    /// The task label (`extract_claims`, `verify_claims`, …).
    pub task: String,
    /// The template versions used: `<task>@<v>+system@<v>`.
    pub template_version: String,
    /// The model to ask.
    pub model: String,
    /// The system prompt.
    pub system: String,
    /// The conversation.
    pub messages: Vec<Message>,
    /// Sampling temperature.
    pub temperature: f64,
    /// Most tokens the reply may use.
    pub max_tokens: u32,
    /// Requested reply shape.
    pub response_format: ResponseFormat,
    /// Which sample this is when the same question is asked several times.
    pub sample: u32,
    /// What was asked, in a form a reviewer can read (the claims, the
    /// question, the passages' numbers), for recordings and logs. Not part of
    /// the fingerprint: it is derived from the messages.
    #[serde(skip)]
    pub subject: serde_json::Value,
}

impl JudgeRequest {
    /// The SHA-256 of a canonical JSON encoding of the provider and every
    /// field that can change the answer: object keys sorted at every level,
    /// no whitespace. The value is the same across runs, platforms, processes
    /// and map implementations (serde_json's `preserve_order` or not).
    ///
    /// ```
    /// use ragaliq::judge::{JudgeRequest, Message, ResponseFormat};
    /// let mut req = JudgeRequest {
    ///     task: "relevance".into(),
    ///     template_version: "relevance@1+system@1".into(),
    ///     model: "gpt-4o-mini".into(),
    ///     system: "You evaluate.".into(),
    ///     messages: vec![Message::user("Score it.")],
    ///     temperature: 0.0,
    ///     max_tokens: 512,
    ///     response_format: ResponseFormat::Json,
    ///     sample: 0,
    ///     subject: serde_json::Value::Null,
    /// };
    /// let a = req.fingerprint("openai");
    /// assert_eq!(a, req.fingerprint("openai"));
    /// assert_ne!(a, req.fingerprint("anthropic"));
    /// req.temperature = 0.2;
    /// assert_ne!(a, req.fingerprint("openai"));
    /// assert_eq!(a.to_string().len(), 64);
    /// ```
    #[must_use]
    pub fn fingerprint(&self, provider: &str) -> Fingerprint {
        let value = serde_json::json!({
            "v": 1,
            "provider": provider,
            "request": serde_json::to_value(self).expect("a request always serializes"),
        });
        let mut bytes = Vec::with_capacity(1024);
        write_canonical(&value, &mut bytes);
        Fingerprint(Sha256::digest(&bytes).into())
    }
}

/// JSON with object keys sorted at every level.
fn write_canonical(value: &serde_json::Value, out: &mut Vec<u8>) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, k).expect("strings serialize");
                out.push(b':');
                write_canonical(v, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(v, out);
            }
            out.push(b']');
        }
        scalar => serde_json::to_writer(&mut *out, scalar).expect("scalars serialize"),
    }
}

/// A small request for unit tests of the transports and recordings.
#[cfg(test)]
pub(crate) fn test_request(model: &str, format: ResponseFormat) -> JudgeRequest {
    JudgeRequest {
        task: "relevance".into(),
        template_version: "relevance@1+system@1".into(),
        model: model.into(),
        system: "sys".into(),
        messages: vec![Message::user("hi")],
        temperature: 0.0,
        max_tokens: 100,
        response_format: format,
        sample: 0,
        subject: serde_json::json!({"query": "How long?"}),
    }
}

/// What the judge answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeResponse {
    /// The reply text (for forced tool use, the tool input as JSON).
    pub text: String,
    /// Prompt tokens the server reported (0 when it reports none).
    pub input_tokens: u64,
    /// Completion tokens the server reported (0 when it reports none).
    pub output_tokens: u64,
    /// The model the server says answered, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl JudgeResponse {
    /// A reply with no token counts, for custom transports and tests.
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        JudgeResponse {
            text: text.into(),
            input_tokens: 0,
            output_tokens: 0,
            model: None,
        }
    }
}

/// A SHA-256 identifying one exchange; displayed as 64 hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint([u8; 32]);

impl Fingerprint {
    /// The first 12 hex digits, enough to tell exchanges apart when reading.
    #[must_use]
    pub fn short(&self) -> String {
        self.to_string()[..12].to_owned()
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({})", self.short())
    }
}

impl std::str::FromStr for Fingerprint {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("`{s}` is not a 64-digit hex fingerprint");
        if s.len() != 64 || !s.is_ascii() {
            return Err(bad());
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(Fingerprint(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> JudgeRequest {
        JudgeRequest {
            task: "t".into(),
            template_version: "t@1+system@1".into(),
            model: "m".into(),
            system: "s".into(),
            messages: vec![Message::user("u")],
            temperature: 0.0,
            max_tokens: 10,
            response_format: ResponseFormat::JsonSchema {
                name: "t".into(),
                schema: serde_json::json!({"b": 1, "a": 2}),
            },
            sample: 0,
            subject: serde_json::json!({"ignored": true}),
        }
    }

    #[test]
    fn fingerprint_is_pinned() {
        // A changed value here means every committed recording goes stale:
        // change the canonical encoding only on purpose. The value was
        // checked against an independent implementation (Python: json.dumps
        // with sort_keys and compact separators, then SHA-256).
        assert_eq!(
            req().fingerprint("openai").to_string(),
            "e85c6c32553353e36c5b2f23fb8668e0f7edf667954fb03ea2f7091eace03b92"
        );
    }

    #[test]
    fn every_answer_changing_field_changes_it() {
        let base = req().fingerprint("p");
        type Change = Box<dyn Fn(&mut JudgeRequest)>;
        let variants: Vec<Change> = vec![
            Box::new(|r| r.task = "x".into()),
            Box::new(|r| r.template_version = "t@2+system@1".into()),
            Box::new(|r| r.model = "x".into()),
            Box::new(|r| r.system = "x".into()),
            Box::new(|r| r.messages[0].content = "x".into()),
            Box::new(|r| r.temperature = 0.5),
            Box::new(|r| r.max_tokens = 11),
            Box::new(|r| r.response_format = ResponseFormat::Json),
            Box::new(|r| r.sample = 1),
        ];
        for change in variants {
            let mut r = req();
            change(&mut r);
            assert_ne!(r.fingerprint("p"), base);
        }
        let mut r = req();
        r.subject = serde_json::json!("other");
        assert_eq!(
            r.fingerprint("p"),
            base,
            "the subject is derived, not hashed"
        );
    }

    #[test]
    fn fingerprint_parses_back() {
        let f = req().fingerprint("p");
        assert_eq!(f.to_string().parse::<Fingerprint>().unwrap(), f);
        assert!("zz".parse::<Fingerprint>().is_err());
    }
}
