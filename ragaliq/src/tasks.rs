//! The questions ragaliq asks a judge, each bound once to its template, its
//! reply schema, its reply-token sizing and its reply parser.
//!
//! A metric builds a task from its input (`VerifyClaims { claims, passages }`)
//! and hands it to the session, which turns it into a request
//! ([`Asking::question`]), gets an answer (recording, memo or live call) and
//! reads it with the task's own parser ([`Ask::read`]): typed verdicts come
//! back, never reply text. Nothing here knows a metric, a recording or a
//! client.

use crate::core::{JsonMode, JudgeRequest, Message};
use crate::parse::{
    self, GeneratedCase, ParseError, ParseErrorKind, ParsedRelevance, ParsedVerdict, ScoredReply,
};
use crate::prompts::{SchemaDialect, Shape, Task, Templates, escape, numbered};
use serde_json::json;

/// The most claims re-asked one by one after one batch: a judge that leaves
/// more unmatched is not answering the batch, and asking each would cost
/// without end.
pub const MAX_REASKS: usize = 8;

/// How a session's requests are written: the model, its sampling and reply
/// limits, the templates, and the schema keywords the server accepts.
#[derive(Clone, Debug)]
pub(crate) struct Asking {
    pub model: String,
    pub temperature: f64,
    /// The configured ceiling of every reply's token limit.
    pub max_tokens: u32,
    /// Whether each task's limit is sized from its input, under the ceiling.
    pub sized_max_tokens: bool,
    pub templates: Templates,
    pub dialect: SchemaDialect,
}

impl Asking {
    /// The question `ask` puts, with the reply shaped as `mode` asks, as
    /// sample `sample`: the task's template filled in, its schema bounded for
    /// the input's shape, its reply limit sized for it under the ceiling.
    pub(crate) fn question<A: Ask>(&self, ask: &A, mode: JsonMode, sample: u32) -> Question {
        let task = A::TASK;
        let shape = ask.shape();
        let vars = ask.vars();
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let schema = task.schema(&shape, self.dialect);
        let (max_tokens, sized_for) = if self.sized_max_tokens {
            let limit = task.reply_tokens(&shape).min(self.max_tokens);
            (limit, shape.describe(task))
        } else {
            (self.max_tokens, String::new())
        };
        Question {
            request: JudgeRequest {
                task: task.name().to_owned(),
                template_version: self.templates.version_label(task),
                model: self.model.clone(),
                system: self.templates.system().body.clone(),
                messages: vec![Message::user(self.templates.render(task, &vars))],
                temperature: self.temperature,
                max_tokens,
                response_format: mode.format(task.name(), &schema),
                sample,
                subject: ask.subject(),
            },
            task: task.name(),
            schema,
            sized_for,
        }
    }
}

/// A request ready to send, with what it takes to ask it again in another
/// JSON mode and to explain a reply cut off at its limit.
pub(crate) struct Question {
    pub request: JudgeRequest,
    /// The task's label.
    pub task: &'static str,
    schema: serde_json::Value,
    /// What the reply limit was sized for ("3 claims"); empty when the
    /// configured ceiling was the limit.
    pub sized_for: String,
}

impl Question {
    /// The request, with its reply shaped as `mode` asks.
    pub(crate) fn in_mode(&self, mode: JsonMode) -> JudgeRequest {
        JudgeRequest {
            response_format: mode.format(self.task, &self.schema),
            ..self.request.clone()
        }
    }
}

/// One question to the judge: which task, on what input, and how its reply
/// is read.
pub(crate) trait Ask: Sync {
    /// What a reply is read as.
    type Answer;
    /// The task: its template, schema and sizing.
    const TASK: Task;
    /// The template's placeholders with their values, user data escaped.
    fn vars(&self) -> Vec<(&'static str, String)>;
    /// What was asked, readably, for recordings and messages.
    fn subject(&self) -> serde_json::Value;
    /// The input's shape, which bounds the reply.
    fn shape(&self) -> Shape;
    /// Reads the judge's reply.
    fn read(&self, reply: &str) -> Result<Self::Answer, ParseError>;
}

/// The atomic claims of a text (a response, or an expected answer).
pub(crate) struct ExtractClaims<'a> {
    pub query: &'a str,
    pub text: &'a str,
}

impl Ask for ExtractClaims<'_> {
    type Answer = Vec<String>;
    const TASK: Task = Task::ExtractClaims;

    fn vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("query", escape(self.query.trim())),
            ("response", escape(self.text.trim())),
        ]
    }

    fn subject(&self) -> serde_json::Value {
        json!({"query": self.query, "response": self.text})
    }

    fn shape(&self) -> Shape {
        Shape::text(self.text.trim().chars().count())
    }

    fn read(&self, reply: &str) -> Result<Vec<String>, ParseError> {
        parse::claims(reply)
    }
}

/// Numbered claims verified against the passages in one call.
pub(crate) struct VerifyClaims<'a> {
    pub claims: &'a [String],
    pub passages: &'a [String],
}

impl Ask for VerifyClaims<'_> {
    /// One verdict per claim, in claim order; `None` for the claims the
    /// batch did not answer (to be re-asked alone).
    type Answer = Vec<Option<ParsedVerdict>>;
    const TASK: Task = Task::VerifyClaims;

    fn vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("passages", numbered("passage", self.passages)),
            ("claims", numbered("claim", self.claims)),
            ("count", self.claims.len().to_string()),
        ]
    }

    fn subject(&self) -> serde_json::Value {
        json!({"claims": self.claims, "passages": self.passages})
    }

    fn shape(&self) -> Shape {
        Shape::items(self.claims.len())
    }

    /// A batch whose items cannot be matched to the claims at all (numbers
    /// out of range or contradictory, an unnumbered batch of the wrong
    /// length) leaves every claim to be re-asked; one that leaves more than
    /// [`MAX_REASKS`] claims unanswered is an error carrying the reply.
    fn read(&self, reply: &str) -> Result<Self::Answer, ParseError> {
        let n = self.claims.len();
        let verdicts = match parse::verdicts_partial(reply, n) {
            Ok(partial) => partial,
            Err(e)
                if matches!(
                    e.kind,
                    ParseErrorKind::CountMismatch { .. } | ParseErrorKind::BadIndex { .. }
                ) =>
            {
                vec![None; n]
            }
            Err(e) => return Err(e),
        };
        let unmatched = verdicts.iter().filter(|v| v.is_none()).count();
        if unmatched > MAX_REASKS {
            return Err(ParseError::new(
                ParseErrorKind::Unmatched {
                    unmatched,
                    limit: MAX_REASKS,
                },
                reply,
            ));
        }
        Ok(verdicts)
    }
}

/// One claim verified alone (the re-ask of a claim a batch left unanswered).
pub(crate) struct VerifyClaim<'a> {
    pub claim: &'a str,
    pub passages: &'a [String],
}

impl Ask for VerifyClaim<'_> {
    type Answer = ParsedVerdict;
    const TASK: Task = Task::VerifyClaim;

    fn vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("passages", numbered("passage", self.passages)),
            ("claim", escape(self.claim.trim())),
        ]
    }

    fn subject(&self) -> serde_json::Value {
        json!({"claim": self.claim, "passages": self.passages})
    }

    fn shape(&self) -> Shape {
        Shape::items(1)
    }

    fn read(&self, reply: &str) -> Result<ParsedVerdict, ParseError> {
        parse::verdict(reply)
    }
}

/// How well a response answers the query: a score with reasoning.
pub(crate) struct Relevance<'a> {
    pub query: &'a str,
    pub response: &'a str,
}

impl Ask for Relevance<'_> {
    type Answer = ScoredReply;
    const TASK: Task = Task::Relevance;

    fn vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("query", escape(self.query.trim())),
            ("response", escape(self.response.trim())),
        ]
    }

    fn subject(&self) -> serde_json::Value {
        json!({"query": self.query, "response": self.response})
    }

    fn shape(&self) -> Shape {
        Shape::items(1)
    }

    fn read(&self, reply: &str) -> Result<ScoredReply, ParseError> {
        parse::score(reply)
    }
}

/// Each retrieved passage's relevance to the query, in one call.
pub(crate) struct PassageRelevance<'a> {
    pub query: &'a str,
    pub expected: Option<&'a str>,
    pub passages: &'a [String],
}

impl Ask for PassageRelevance<'_> {
    type Answer = Vec<ParsedRelevance>;
    const TASK: Task = Task::PassageRelevance;

    fn vars(&self) -> Vec<(&'static str, String)> {
        let expected = self
            .expected
            .map_or_else(|| "(not given)".to_owned(), |a| escape(a.trim()));
        vec![
            ("query", escape(self.query.trim())),
            ("expected", expected),
            ("passages", numbered("passage", self.passages)),
            ("count", self.passages.len().to_string()),
        ]
    }

    fn subject(&self) -> serde_json::Value {
        json!({"query": self.query, "expected": self.expected, "passages": self.passages})
    }

    fn shape(&self) -> Shape {
        Shape::items(self.passages.len())
    }

    fn read(&self, reply: &str) -> Result<Vec<ParsedRelevance>, ParseError> {
        parse::passage_relevance(reply, self.passages.len())
    }
}

/// Questions with grounded answers written from one document.
pub(crate) struct GenerateCases<'a> {
    /// The document's file name, for the recording.
    pub file: Option<&'a str>,
    pub count: usize,
    /// The document's text, trimmed.
    pub document: &'a str,
}

impl Ask for GenerateCases<'_> {
    type Answer = Vec<GeneratedCase>;
    const TASK: Task = Task::GenerateCases;

    fn vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("count", self.count.to_string()),
            ("document", escape(self.document)),
        ]
    }

    fn subject(&self) -> serde_json::Value {
        json!({"file": self.file, "count": self.count, "document": self.document})
    }

    fn shape(&self) -> Shape {
        Shape::items(self.count)
    }

    fn read(&self, reply: &str) -> Result<Vec<GeneratedCase>, ParseError> {
        parse::generated_cases(reply)
    }
}
