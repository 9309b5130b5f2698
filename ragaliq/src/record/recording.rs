//! What a recording holds: the judge exchanges of one test, laid out for the
//! person who reviews them in `cargo insta review`, and read back by replay.
//!
//! The format (version 2) is YAML inside the `.snap` file:
//!
//! ```yaml
//! ragaliq_recording: 2
//! passages:                      # every passage once; exchanges refer to it by number
//! - P1: Refunds are accepted within 30 days of delivery.
//! exchanges:
//! - task: verify_claims          # what the judge was asked ...
//!   asked:
//!     passages: [P1]
//!     claims:
//!     - The refund window is 30 days from delivery.
//!   answer:                      # ... and what it said
//!     verdicts:
//!     - claim: 1
//!       verdict: supported
//!       evidence: Refunds are accepted within 30 days of delivery.
//!       confidence: 0.9
//!   provider: openai
//!   model: gpt-4o-mini
//!   template: verify_claims@2+system@1
//!   settings: {format: json_schema, temperature: 0.0, max_tokens: 184}
//!   tokens: {input: 350, output: 31}
//!   fingerprint: e496aa…
//! ```
//!
//! Exchanges are grouped by case (its claim extraction, the verification of
//! those claims, the re-asks, relevance) and ordered within a case, so the
//! file reads top to bottom and is the same however the calls interleaved.
//! A JSON reply that can be written back byte for byte is shown as
//! structured `answer`; anything else is kept verbatim as `reply`. Either
//! way replay hands the parsers exactly what the judge sent. A reply read
//! from token probabilities keeps them beside it, each token with its
//! likeliest alternatives (full precision, so replay reads the same
//! probability), and its `checked` entry says what ragaliq read:
//!
//! ```yaml
//! - task: claim_supported
//!   asked: {passages: [P1], claim: The refund window is 30 days.}
//!   reply: "Yes"
//!   probabilities:
//!   - token: "Yes"
//!     logprob: -0.02
//!     top: {"Yes": -0.02, "No": -4.1, "yes": -5.3}
//!   checked:
//!   - item: 1
//!     probability: "P(yes) 0.983 from the first token's 10 likeliest (yes 0.985, no 0.017)"
//! ```
//!
//! An exchange may also hold `reviewed:`, the verdicts a person gave on its
//! items, keyed by what was judged and never part of the fingerprint (see
//! [`Reviewed`] and `cargo ragaliq review`).

use super::call::{Call, FileCall};
use super::fields::{ReplyText, Tokens, quote};
use super::ordered::Ordered;
use super::reviewed_entry::{FileReviewed, Reviewed, read_reviewed};
use crate::core::{
    Check, CheckOutcome, JsonMode, JudgeRequest, JudgeResponse, ResponseFormat, TokenLogprob,
    TopLogprob,
};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The recording format's version; part of every recording.
pub const FORMAT: u32 = 2;

/// The `provider` of an exchange a rule decided with no call.
pub const RULE_PROVIDER: &str = "ragaliq";

/// All judge exchanges of one test (or one suite case), and the calls the
/// pipeline under test made to its own model (see [`Call`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recording {
    /// The exchanges, in reading order.
    pub exchanges: Vec<Exchange>,
    /// The pipeline's own model calls, in reading order (shown above the
    /// judge's exchanges on their answers).
    pub pipeline: Vec<Call>,
}

/// One question to the judge and its answer.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Exchange {
    /// The task (`extract_claims`, `verify_claims`, …).
    pub task: String,
    /// What was asked, readably: the query, the response, the passages, the claims.
    pub asked: Ordered,
    /// The judge's reply, exactly as sent.
    pub reply: String,
    /// The token probabilities the server returned with the reply, when
    /// they were asked for (an alternative's text appears once: repeats are
    /// merged, their probabilities added).
    pub probabilities: Option<Vec<TokenLogprob>>,
    /// The provider asked.
    pub provider: String,
    /// The model asked.
    pub model: String,
    /// The model the server said answered, when it said.
    pub served_by: Option<String>,
    /// The prompt templates' versions.
    pub template: String,
    /// The settings that shaped the request (none for recordings migrated
    /// from format 1, which did not keep them).
    pub settings: Option<Settings>,
    /// Tokens the server reported.
    pub tokens: Tokens,
    /// What ragaliq made of the answer's items: where each verdict's
    /// evidence was found, or why an item was set aside.
    pub checks: Vec<Check>,
    /// Verdicts a person gave on this exchange's items in review, used in
    /// place of the judge's (see [`Reviewed`]). Never part of the
    /// fingerprint: adding one asks nothing again.
    pub reviewed: Vec<Reviewed>,
    /// The trials (a suite's metrics) that use this exchange; empty for a
    /// `#[rag_test]`, whose whole test is the one user.
    pub used_by: BTreeSet<String>,
    /// SHA-256 of everything that can change the answer (64 hex digits).
    pub fingerprint: String,
}

/// Request settings kept in a recording, to say what changed when it goes stale.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The response format sent (`json_schema`, `json_object+schema`, …).
    pub format: String,
    /// The format configured, when the server refused it and `format` was
    /// negotiated in its place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negotiated_from: Option<String>,
    /// Sampling temperature.
    pub temperature: f64,
    /// The reply's token limit.
    pub max_tokens: u32,
    /// The sample index, when the question was asked several times.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sample: u32,
    /// Token probabilities asked for: this many alternatives per token.
    #[serde(default, skip_serializing_if = "is_zero_u8")]
    pub top_logprobs: u8,
    /// The question would have asked for token probabilities, but the
    /// server refused them, so it was asked without: only such an
    /// exchange answers a question that asks for them on replay (one
    /// recorded under `strategy = "word"` does not).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub probabilities_refused: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_zero_u8(n: &u8) -> bool {
    *n == 0
}

/// Token probabilities with each position's alternatives merged by text
/// (log-sum-exp), so the recording's map of them loses nothing.
fn merged(tokens: &[TokenLogprob]) -> Vec<TokenLogprob> {
    tokens
        .iter()
        .map(|t| {
            let mut top: Vec<TopLogprob> = Vec::new();
            for alt in &t.top {
                match top.iter_mut().find(|a| a.token == alt.token) {
                    Some(a) => {
                        let (hi, lo) = if a.logprob >= alt.logprob {
                            (a.logprob, alt.logprob)
                        } else {
                            (alt.logprob, a.logprob)
                        };
                        a.logprob = hi + (lo - hi).exp().ln_1p();
                    }
                    None => top.push(alt.clone()),
                }
            }
            TokenLogprob {
                token: t.token.clone(),
                logprob: t.logprob,
                top,
            }
        })
        .collect()
}

impl Exchange {
    pub(crate) fn new(
        provider: &str,
        fingerprint: String,
        request: &JudgeRequest,
        response: &JudgeResponse,
        requested: JsonMode,
        probabilities_refused: bool,
    ) -> Exchange {
        let used = JsonMode::of(&request.response_format);
        Exchange {
            task: request.task.clone(),
            asked: asked_from(&request.subject),
            reply: response.text.clone(),
            probabilities: response.logprobs.as_deref().map(merged),
            provider: provider.to_owned(),
            model: request.model.clone(),
            served_by: response.model.clone(),
            template: request.template_version.clone(),
            settings: Some(Settings {
                format: request.response_format.label().to_owned(),
                negotiated_from: (used != requested)
                    .then(|| requested_label(requested, &request.response_format)),
                temperature: request.temperature,
                max_tokens: request.max_tokens,
                sample: request.sample,
                top_logprobs: request.top_logprobs,
                probabilities_refused,
            }),
            tokens: Tokens {
                input: response.input_tokens,
                output: response.output_tokens,
            },
            checks: Vec::new(),
            reviewed: Vec::new(),
            used_by: BTreeSet::new(),
            fingerprint,
        }
    }

    /// A decision a rule made with no call (the found rule of answer
    /// correctness): an exchange of task `task` that asked `subject` (what
    /// the question it stands in for would have asked, so it has that
    /// question's key and a person's verdict on it is the same verdict),
    /// answered `reply` by the rule `rule` (kept as the model) at version
    /// `template`, with no tokens. Its fingerprint is SHA-256 over the
    /// task, the rule's version and `subject`: the same decision has the
    /// same one in every recording.
    pub(crate) fn by_rule(
        task: &str,
        rule: &str,
        template: &str,
        subject: &serde_json::Value,
        reply: &serde_json::Value,
    ) -> Exchange {
        use sha2::{Digest, Sha256};
        let text = crate::core::canonical_json(
            &serde_json::json!({"rule": task, "version": template, "asked": subject}),
        );
        let fingerprint = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Exchange {
            task: task.to_owned(),
            asked: asked_from(subject),
            reply: reply.to_string(),
            probabilities: None,
            provider: RULE_PROVIDER.to_owned(),
            model: rule.to_owned(),
            served_by: None,
            template: template.to_owned(),
            settings: None,
            tokens: Tokens::default(),
            checks: Vec::new(),
            reviewed: Vec::new(),
            used_by: BTreeSet::new(),
            fingerprint,
        }
    }

    /// Whether a rule decided this exchange with no call (the found rule
    /// of answer correctness): no judge was asked.
    #[must_use]
    pub fn is_rule(&self) -> bool {
        self.provider == RULE_PROVIDER
    }

    /// The items this exchange judged that decide a verdict, with their
    /// keys (see [`judged`](crate::judged)); empty for an exchange that
    /// decides none (claims listed, steps written).
    #[must_use]
    pub fn judged(&self) -> Vec<crate::core::judged::Judged> {
        crate::core::judged::items(&self.task, &self.asked.to_value())
    }

    /// The reply text, as the judge sent it.
    #[must_use]
    pub fn reply_text(&self) -> &str {
        &self.reply
    }

    pub(crate) fn response(&self) -> JudgeResponse {
        let mut r = JudgeResponse::text(self.reply.clone())
            .with_tokens(self.tokens.input, self.tokens.output);
        if let Some(m) = &self.served_by {
            r = r.with_model(m.clone());
        }
        if let Some(p) = &self.probabilities {
            r = r.with_logprobs(p.clone());
        }
        r
    }
}

/// The label of the configured mode, for a task's format.
fn requested_label(requested: JsonMode, sent: &ResponseFormat) -> String {
    let schema = match sent {
        ResponseFormat::JsonSchema { schema, .. }
        | ResponseFormat::JsonObjectWithSchema { schema, .. } => schema.clone(),
        _ => serde_json::Value::Null,
    };
    requested.format("task", &schema).label().to_owned()
}

/// The keys of `asked`, in reading order: a conversation's turn first
/// (which one, and the earlier turns the judge was shown).
const ASKED_ORDER: [&str; 11] = [
    "conversation",
    "turn",
    "history",
    "query",
    "response",
    "expected",
    "document",
    "count",
    "passages",
    "claims",
    "claim",
];

/// `subject` as a readable `asked`: known keys first, in reading order.
fn asked_from(subject: &serde_json::Value) -> Ordered {
    let Some(map) = subject.as_object() else {
        return Ordered::from_value(subject);
    };
    let mut entries: Vec<(String, Ordered)> = Vec::new();
    for key in ASKED_ORDER {
        if let Some(v) = map.get(key).filter(|v| !v.is_null()) {
            let mut value = Ordered::from_value(v);
            if key == "history" {
                user_first(&mut value);
            }
            entries.push((key.to_owned(), value));
        }
    }
    let mut rest: Vec<_> = map
        .iter()
        .filter(|(k, v)| !ASKED_ORDER.contains(&k.as_str()) && !v.is_null())
        .collect();
    rest.sort_by(|a, b| a.0.cmp(b.0));
    entries.extend(
        rest.into_iter()
            .map(|(k, v)| (k.clone(), Ordered::from_value(v))),
    );
    Ordered::Object(entries)
}

/// Each earlier turn of a `history` as it was said: the user's message,
/// then the assistant's answer (display only: what is judged, and its key,
/// does not depend on the order).
fn user_first(history: &mut Ordered) {
    if let Ordered::Array(turns) = history {
        for turn in turns {
            if let Ordered::Object(entries) = turn {
                entries.sort_by_key(|(k, _)| k != "user");
            }
        }
    }
}

/// The rank of a task in reading order.
fn task_rank(task: &str) -> usize {
    [
        "generate_cases",
        "extract_claims",
        "verify_claims",
        "verify_claim",
        "claim_supported",
        "claim_contradicted",
        "relevance",
        "answers_query",
        "answer_found",
        "answer_correct",
        "passage_relevance",
        "passage_relevant",
        "passages_answer",
        "declines_to_answer",
        "contradicts_earlier",
        "ignores_user",
    ]
    .iter()
    .position(|t| *t == task)
    .unwrap_or(usize::MAX)
}

impl Recording {
    /// Whether it holds nothing: no judge exchange and no pipeline call.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.exchanges.is_empty() && self.pipeline.is_empty()
    }

    /// Sorts the exchanges in reading order: grouped by case, each group's
    /// extraction, verification, re-asks and relevance in turn.
    pub(crate) fn sort(&mut self) {
        super::call::sort(&mut self.pipeline);
        // A verification belongs to the case whose extraction produced its
        // claims: the `claims` list of the extraction's JSON answer (the
        // recording reads its own answers' layout; it never parses a reply
        // as the judge's parsers do).
        let mut owner_of_claim: BTreeMap<String, (String, String)> = BTreeMap::new();
        for e in &self.exchanges {
            if e.task == "extract_claims"
                && let Some(answer) = Ordered::parse_json(&e.reply)
                && let Some(claims) = answer.get("claims").and_then(Ordered::as_array)
            {
                let key = case_key(e);
                for c in claims.iter().filter_map(Ordered::as_str) {
                    owner_of_claim
                        .entry(c.to_owned())
                        .or_insert_with(|| key.clone());
                }
            }
        }
        let group = |e: &Exchange| -> (String, String) {
            let text = |k: &str| e.asked.get(k).and_then(Ordered::as_str).unwrap_or_default();
            match e.task.as_str() {
                "verify_claims" => e
                    .asked
                    .get("claims")
                    .and_then(Ordered::as_array)
                    .and_then(|c| c.first())
                    .and_then(Ordered::as_str)
                    .and_then(|c| owner_of_claim.get(c).cloned())
                    .unwrap_or_else(|| (text("query").to_owned(), "~".to_owned())),
                "verify_claim" | "claim_supported" | "claim_contradicted" => owner_of_claim
                    .get(text("claim"))
                    .cloned()
                    .unwrap_or_else(|| (text("query").to_owned(), "~".to_owned())),
                _ => case_key(e),
            }
        };
        self.exchanges.sort_by_cached_key(|e| {
            (
                group(e),
                task_rank(&e.task),
                e.settings.as_ref().map_or(0, |s| s.sample),
                e.fingerprint.clone(),
            )
        });
    }

    /// The recording as YAML (what the `.snap` file holds below insta's
    /// header), with the passages in one table. Answers that would not read
    /// back byte for byte are kept verbatim.
    #[must_use]
    pub fn to_yaml(&self) -> String {
        // Each round writes the answers it can as YAML, the other replies as
        // blocks; what does not read back exactly goes one step plainer
        // (an answer to a reply block, a block to a quoted string) and the
        // check repeats.
        let mut verbatim: BTreeSet<usize> = BTreeSet::new();
        let mut quoted: BTreeSet<usize> = BTreeSet::new();
        let mut calls_verbatim: BTreeSet<usize> = BTreeSet::new();
        loop {
            let file = FileForm::from_recording(self, &verbatim, &quoted, &calls_verbatim);
            let text = serialize_yaml(&file);
            // Check the round trip; any answer that does not come back
            // exactly is written verbatim instead, and the check repeats.
            let back = parse_yaml(&text).ok();
            let mismatched: Vec<usize> = match &back {
                Some(back) if back.exchanges.len() == self.exchanges.len() => self
                    .exchanges
                    .iter()
                    .zip(&back.exchanges)
                    .enumerate()
                    .filter(|(_, (a, b))| a != b)
                    .map(|(i, _)| i)
                    .collect(),
                _ => (0..self.exchanges.len()).collect(),
            };
            let mut changed = false;
            for i in mismatched {
                changed |= verbatim.insert(i) || quoted.insert(i);
            }
            // A pipeline call whose structured response does not read back
            // exactly is written as text.
            let calls_mismatched: Vec<usize> = match &back {
                Some(back) if back.pipeline.len() == self.pipeline.len() => self
                    .pipeline
                    .iter()
                    .zip(&back.pipeline)
                    .enumerate()
                    .filter(|(_, (a, b))| a != b)
                    .map(|(i, _)| i)
                    .collect(),
                _ => (0..self.pipeline.len()).collect(),
            };
            for i in calls_mismatched {
                changed |= calls_verbatim.insert(i);
            }
            if !changed {
                return text;
            }
        }
    }
}

fn case_key(e: &Exchange) -> (String, String) {
    let text = |k: &str| {
        e.asked
            .get(k)
            .and_then(Ordered::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let (query, response) = match e.task.as_str() {
        "generate_cases" => (text("document"), String::new()),
        "passage_relevance" | "passage_relevant" | "passages_answer" => {
            (text("query"), "~".to_owned())
        }
        _ => (text("query"), text("response")),
    };
    // A conversation's turn: grouped by conversation, then turn in order
    // (an exchange of a single case has neither, and sorts as it did).
    match e.asked.get("turn").and_then(Ordered::as_u64) {
        Some(turn) => (
            format!("{}\u{1}{turn:06}\u{1}{query}", text("conversation")),
            response,
        ),
        None => (query, response),
    }
}

fn serialize_yaml(file: &FileForm) -> String {
    // The default options write long text folded (`>`) and multi-line
    // text as literal blocks (`|`), which is what a reviewer wants.
    serde_saphyr::to_string(file).unwrap_or_default()
}

/// Parses a recording's YAML (format 2).
pub(crate) fn parse_yaml(text: &str) -> Result<Recording, String> {
    let file: FileForm = serde_saphyr::from_str(text).map_err(|e| first_line(&e.to_string()))?;
    file.into_recording()
}

/// Parses a format-1 recording (JSON), for replay and migration.
pub(crate) fn parse_v1(text: &str) -> Result<Recording, String> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct V1 {
        #[allow(dead_code)]
        ragaliq_recording: u32,
        exchanges: Vec<V1Exchange>,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct V1Exchange {
        fingerprint: String,
        task: String,
        provider: String,
        model: String,
        template: String,
        asked: serde_json::Value,
        #[serde(default)]
        answer: Option<serde_json::Value>,
        #[serde(default)]
        answer_text: Option<String>,
        tokens: Tokens,
        #[serde(default)]
        served_by: Option<String>,
    }
    let v1: V1 = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(Recording {
        pipeline: Vec::new(),
        exchanges: v1
            .exchanges
            .into_iter()
            .map(|e| Exchange {
                reply: match (e.answer_text, &e.answer) {
                    (Some(t), _) => t,
                    // Format 1 kept a reply structured only when serde_json
                    // wrote it back exactly, with its keys sorted.
                    (None, Some(v)) => crate::core::canonical_json(v),
                    (None, None) => String::new(),
                },
                task: e.task,
                asked: asked_from(&e.asked),
                probabilities: None,
                provider: e.provider,
                model: e.model,
                served_by: e.served_by,
                template: e.template,
                settings: None,
                tokens: e.tokens,
                checks: Vec::new(),
                reviewed: Vec::new(),
                used_by: BTreeSet::new(),
                fingerprint: e.fingerprint,
            })
            .collect(),
    })
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or_default().to_owned()
}

/// How a structured answer is written back as JSON text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Layout {
    #[default]
    Compact,
    Pretty,
}

fn is_compact(l: &Layout) -> bool {
    *l == Layout::Compact
}

/// The recording as written in the file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileForm {
    ragaliq_recording: u32,
    /// The pipeline's own calls, first: what the application was asked
    /// and answered, above the judge's verdicts on it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pipeline: Vec<FileCall>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    passages: Vec<Passage>,
    #[serde(default)]
    exchanges: Vec<FileExchange>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileExchange {
    task: String,
    asked: Ordered,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    answer: Option<Ordered>,
    #[serde(default, skip_serializing_if = "is_compact")]
    answer_json: Layout,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reply: Option<ReplyText>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    probabilities: Option<Vec<FileToken>>,
    provider: String,
    model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    served_by: Option<String>,
    template: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    settings: Option<Settings>,
    tokens: Tokens,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    checked: Vec<FileCheck>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    reviewed: Vec<FileReviewed>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    used_by: BTreeSet<String>,
    fingerprint: String,
}

/// A check as written: the item, and one of where its evidence was found
/// (the passage by its number in the table, and the quote as the passage
/// has it), or why it is ungrounded, quotes nothing or was unreadable.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileCheck {
    item: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    found_in: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    quote: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ungrounded: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    no_quote: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unreadable: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dropped: Option<String>,
    /// How a one-word answer was read (P(yes), or the word).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    read: Option<String>,
}

const UNGROUNDED: &str = "the quote is in no passage";
const NO_QUOTE: &str = "the verdict cites no evidence";

impl FileCheck {
    /// `passage_ids`: the table ids (`P3`) of the exchange's passages, in order.
    fn write(check: &Check, passage_ids: &[String]) -> FileCheck {
        let mut f = FileCheck {
            item: check.item,
            found_in: None,
            quote: None,
            ungrounded: None,
            no_quote: None,
            unreadable: None,
            dropped: None,
            read: None,
        };
        match &check.outcome {
            CheckOutcome::Found { passage, quote } => {
                f.found_in = Some(
                    passage_ids
                        .get(*passage)
                        .cloned()
                        .unwrap_or_else(|| format!("passage {}", passage + 1)),
                );
                f.quote = Some(quote.clone());
            }
            CheckOutcome::Ungrounded => f.ungrounded = Some(UNGROUNDED.into()),
            CheckOutcome::NoQuote => f.no_quote = Some(NO_QUOTE.into()),
            CheckOutcome::Unreadable(why) => f.unreadable = Some(why.clone()),
            CheckOutcome::Dropped(why) => f.dropped = Some(why.clone()),
            CheckOutcome::Read(how) => f.read = Some(how.clone()),
        }
        f
    }

    fn read(self, passage_ids: &[String], n: usize) -> Result<Check, String> {
        let bad = || format!("exchange {n}: check of item {} is not readable", self.item);
        if let Some(how) = self.read {
            return Ok(Check {
                item: self.item,
                outcome: CheckOutcome::Read(how),
            });
        }
        let outcome = match (
            self.found_in,
            self.quote,
            self.ungrounded,
            self.no_quote,
            self.unreadable.or(self.dropped.clone()),
        ) {
            (Some(id), Some(quote), None, None, None) => CheckOutcome::Found {
                passage: passage_ids
                    .iter()
                    .position(|p| *p == id)
                    .or_else(|| {
                        id.strip_prefix("passage ")
                            .and_then(|k| k.parse::<usize>().ok())
                            .map(|k| k - 1)
                    })
                    .ok_or_else(bad)?,
                quote,
            },
            (None, None, Some(_), None, None) => CheckOutcome::Ungrounded,
            (None, None, None, Some(_), None) => CheckOutcome::NoQuote,
            (None, None, None, None, Some(why)) if self.dropped.is_some() => {
                CheckOutcome::Dropped(why)
            }
            (None, None, None, None, Some(why)) => CheckOutcome::Unreadable(why),
            _ => return Err(bad()),
        };
        Ok(Check {
            item: self.item,
            outcome,
        })
    }
}

/// One token's probabilities as written: the token, its log-probability,
/// and its alternatives as a map from text to log-probability, likeliest
/// first.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileToken {
    token: String,
    logprob: f64,
    #[serde(default, skip_serializing_if = "TopMap::is_empty")]
    top: TopMap,
}

/// Alternatives written as a map (`Yes: -0.02`), in their order.
#[derive(Default)]
struct TopMap(Vec<TopLogprob>);

impl TopMap {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for TopMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for t in &self.0 {
            map.serialize_entry(&t.token, &t.logprob)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for TopMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TopMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of alternative tokens to log-probabilities")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopMap, A::Error> {
                let mut out = Vec::new();
                while let Some((token, logprob)) = map.next_entry::<String, f64>()? {
                    out.push(TopLogprob { token, logprob });
                }
                Ok(TopMap(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// One passage of the table: written `P3: text`.
#[derive(Clone, Debug, PartialEq)]
struct Passage {
    id: usize,
    text: String,
}

impl Serialize for Passage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(&format!("P{}", self.id), &self.text)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for Passage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Passage;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a passage written `P<number>: text`")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Passage, A::Error> {
                let (key, text): (String, String) = map
                    .next_entry()?
                    .ok_or_else(|| de::Error::custom("an empty passage entry"))?;
                if map.next_entry::<String, String>()?.is_some() {
                    return Err(de::Error::custom("a passage entry with two keys"));
                }
                let id = key
                    .strip_prefix('P')
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| {
                        de::Error::custom(format!("`{key}` is not a passage number like P1"))
                    })?;
                Ok(Passage { id, text })
            }
        }
        d.deserialize_map(V)
    }
}

/// Calls `f` on each string of the `passages` list of an exchange's
/// `asked` object: passage texts in memory, `P1`-style references on file.
fn for_each_passage<E>(
    asked: &mut Ordered,
    mut f: impl FnMut(&mut String) -> Result<(), E>,
) -> Result<(), E> {
    let Ordered::Object(entries) = asked else {
        return Ok(());
    };
    for (_, value) in entries.iter_mut().filter(|(k, _)| k == "passages") {
        if let Ordered::Array(items) = value {
            for item in items.iter_mut() {
                if let Ordered::String(text) = item {
                    f(text)?;
                }
            }
        }
    }
    Ok(())
}

impl FileForm {
    fn from_recording(
        recording: &Recording,
        verbatim: &BTreeSet<usize>,
        quoted: &BTreeSet<usize>,
        calls_verbatim: &BTreeSet<usize>,
    ) -> FileForm {
        let mut passages: Vec<Passage> = Vec::new();
        let mut exchanges = Vec::new();
        for (i, e) in recording.exchanges.iter().enumerate() {
            let mut asked = e.asked.clone();
            let mut ids: Vec<String> = Vec::new();
            let Ok(()) = for_each_passage(&mut asked, |text| {
                let id = match passages.iter().find(|p| p.text == *text) {
                    Some(p) => p.id,
                    None => {
                        passages.push(Passage {
                            id: passages.len() + 1,
                            text: text.clone(),
                        });
                        passages.len()
                    }
                };
                *text = format!("P{id}");
                ids.push(text.clone());
                Ok::<(), std::convert::Infallible>(())
            });
            let structured = (!verbatim.contains(&i))
                .then(|| Ordered::parse_json(&e.reply))
                .flatten()
                .and_then(|v| {
                    if v.to_compact() == e.reply {
                        Some((v, Layout::Compact))
                    } else if v.to_pretty() == e.reply {
                        Some((v, Layout::Pretty))
                    } else {
                        None
                    }
                });
            let (answer, answer_json, reply) = match structured {
                Some((v, layout)) => (Some(v), layout, None),
                None => (
                    None,
                    Layout::Compact,
                    Some(ReplyText {
                        text: e.reply.clone(),
                        block: !quoted.contains(&i),
                    }),
                ),
            };
            exchanges.push(FileExchange {
                task: e.task.clone(),
                asked,
                answer,
                answer_json,
                reply,
                probabilities: e.probabilities.as_ref().map(|tokens| {
                    tokens
                        .iter()
                        .map(|t| FileToken {
                            token: t.token.clone(),
                            logprob: t.logprob,
                            top: TopMap(t.top.clone()),
                        })
                        .collect()
                }),
                provider: e.provider.clone(),
                model: e.model.clone(),
                served_by: e.served_by.clone(),
                template: e.template.clone(),
                settings: e.settings.clone(),
                tokens: e.tokens,
                checked: e.checks.iter().map(|c| FileCheck::write(c, &ids)).collect(),
                reviewed: e.reviewed.iter().map(FileReviewed::write).collect(),
                used_by: e.used_by.clone(),
                fingerprint: e.fingerprint.clone(),
            });
        }
        FileForm {
            ragaliq_recording: FORMAT,
            pipeline: recording
                .pipeline
                .iter()
                .enumerate()
                .map(|(i, c)| FileCall::write(c, calls_verbatim.contains(&i)))
                .collect(),
            passages,
            exchanges,
        }
    }

    fn into_recording(self) -> Result<Recording, String> {
        if self.ragaliq_recording != FORMAT {
            return Err(format!(
                "recording format {} is not {FORMAT}; `cargo ragaliq migrate` converts older recordings",
                self.ragaliq_recording
            ));
        }
        let table: BTreeMap<String, String> = self
            .passages
            .into_iter()
            .map(|p| (format!("P{}", p.id), p.text))
            .collect();
        let mut exchanges = Vec::new();
        for (n, e) in self.exchanges.into_iter().enumerate() {
            let mut asked = e.asked;
            let mut ids: Vec<String> = Vec::new();
            for_each_passage(&mut asked, |id| {
                ids.push(id.clone());
                let text = table.get(id.as_str()).ok_or_else(|| {
                    format!(
                        "exchange {}: passage {id} is not in the passages table",
                        n + 1
                    )
                })?;
                *id = text.clone();
                Ok::<(), String>(())
            })?;
            let reply = match (e.reply, e.answer) {
                (Some(text), None) => text.text,
                (None, Some(v)) => match e.answer_json {
                    Layout::Compact => v.to_compact(),
                    Layout::Pretty => v.to_pretty(),
                },
                (Some(_), Some(_)) => {
                    return Err(format!("exchange {}: both `answer` and `reply`", n + 1));
                }
                (None, None) => return Err(format!("exchange {}: no `answer` or `reply`", n + 1)),
            };
            let checks = e
                .checked
                .into_iter()
                .map(|c| c.read(&ids, n + 1))
                .collect::<Result<Vec<_>, _>>()?;
            let reviewed = read_reviewed(&e.task, &asked, e.reviewed, n + 1)?;
            exchanges.push(Exchange {
                task: e.task,
                asked,
                reply,
                probabilities: e.probabilities.map(|tokens| {
                    tokens
                        .into_iter()
                        .map(|t| TokenLogprob {
                            token: t.token,
                            logprob: t.logprob,
                            top: t.top.0,
                        })
                        .collect()
                }),
                provider: e.provider,
                model: e.model,
                served_by: e.served_by,
                template: e.template,
                settings: e.settings,
                tokens: e.tokens,
                checks,
                reviewed,
                used_by: e.used_by,
                fingerprint: e.fingerprint,
            });
        }
        let pipeline = self
            .pipeline
            .into_iter()
            .enumerate()
            .map(|(n, c)| c.read(n + 1))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Recording {
            exchanges,
            pipeline,
        })
    }
}

/// A short readable form of what an exchange asks, for error messages.
pub(crate) fn describe(task: &str, asked: &serde_json::Value) -> String {
    let text = |key: &str| {
        asked
            .get(key)
            .and_then(serde_json::Value::as_str)
            .map(|s| quote(s, 60))
    };
    let detail = match task {
        "extract_claims" => text("response").map(|r| format!("claims of the response {r}")),
        "verify_claims" => asked
            .get("claims")
            .and_then(serde_json::Value::as_array)
            .map(|c| {
                let first = c
                    .first()
                    .and_then(serde_json::Value::as_str)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{ResponseFormat, test_request};
    use serde_json::json;

    fn exchange(reply: &str, subject: serde_json::Value) -> Exchange {
        let mut req = test_request("m", ResponseFormat::JsonObject);
        req.subject = subject;
        Exchange::new(
            "p",
            "f".repeat(64),
            &req,
            &JudgeResponse::text(reply),
            JsonMode::Object,
            false,
        )
    }

    fn round_trip(r: &Recording) -> Recording {
        parse_yaml(&r.to_yaml()).unwrap()
    }

    #[test]
    fn every_reply_comes_back_byte_for_byte() {
        for reply in [
            r#"{"reasoning":"ok","score":0.9}"#,
            r#"{"score":0.9,"reasoning":"keys out of order"}"#,
            "{\n  \"score\": 1.0,\n  \"reasoning\": \"pretty\"\n}",
            "```json\n{\"score\": 0.9}\n```",
            "{\"score\": 0.9}",
            "I refuse.",
            "  leading and trailing  \n",
            "tab\there, CR\r\nthen ümlaut and \u{1F600} and a # and : colon",
            r#"{"s":"line one\nline two","n":1e5}"#,
            "",
        ] {
            let r = Recording {
                exchanges: vec![exchange(reply, json!({"query": "How long?"}))],
                pipeline: Vec::new(),
            };
            let back = round_trip(&r);
            assert_eq!(back.exchanges[0].reply, reply, "{reply:?}\n{}", r.to_yaml());
        }
    }

    #[test]
    fn passages_are_stored_once_and_referred_to_by_number() {
        let p = ["Refunds are accepted within 30 days.", "Shipping is free."];
        let r = Recording {
            exchanges: vec![
                exchange(
                    r#"{"verdicts":[]}"#,
                    json!({"claims": ["A."], "passages": p}),
                ),
                exchange(
                    r#"{"verdict":"supported"}"#,
                    json!({"claim": "A.", "passages": p}),
                ),
            ],
            pipeline: Vec::new(),
        };
        let yaml = r.to_yaml();
        assert_eq!(
            yaml.matches("Refunds are accepted within 30 days.").count(),
            1,
            "{yaml}"
        );
        assert!(
            yaml.contains("- P1: Refunds are accepted within 30 days."),
            "{yaml}"
        );
        assert!(
            yaml.contains("- P1\n") || yaml.contains("[P1, P2]"),
            "{yaml}"
        );
        assert_eq!(round_trip(&r), r);
    }

    #[test]
    fn structured_answers_read_as_yaml() {
        let r = Recording {
            exchanges: vec![exchange(
                r#"{"verdicts":[{"claim":1,"verdict":"supported","evidence":"within 30 days","confidence":0.9}]}"#,
                json!({"claims": ["A."]}),
            )],
            pipeline: Vec::new(),
        };
        let yaml = r.to_yaml();
        assert!(yaml.contains("verdict: supported"), "{yaml}");
        assert!(yaml.contains("evidence: within 30 days"), "{yaml}");
        assert!(!yaml.contains("reply:"), "{yaml}");
    }

    #[test]
    fn long_and_multi_line_text_is_written_as_blocks() {
        let response = "First line of a long answer.\nSecond line, which goes on for quite a while so that it is long.";
        let r = Recording {
            exchanges: vec![exchange("{}", json!({"query": "q", "response": response}))],
            pipeline: Vec::new(),
        };
        let yaml = r.to_yaml();
        assert!(yaml.contains("response: |"), "{yaml}");
        assert_eq!(round_trip(&r), r);
    }

    #[test]
    fn format_one_recordings_read_back() {
        let v1 = r#"{"ragaliq_recording": 1, "exchanges": [{"fingerprint": "ab", "task": "relevance",
            "provider": "p", "model": "m", "template": "relevance@1+system@1",
            "asked": {"query": "q", "response": "r"}, "answer": {"score": 1.0, "reasoning": "ok"},
            "tokens": {"input": 1, "output": 2}}]}"#;
        let r = parse_v1(v1).unwrap();
        assert_eq!(r.exchanges[0].reply, r#"{"reasoning":"ok","score":1.0}"#);
        assert_eq!(r.exchanges[0].settings, None);
    }

    #[test]
    fn describes_are_short_and_readable() {
        assert_eq!(
            describe("relevance", &json!({"query": "How long?"})),
            "relevance (query \"How long?\")"
        );
        let long = "x".repeat(100);
        assert!(describe("verify_claim", &json!({"claim": long})).ends_with("…\")"));
        assert_eq!(
            describe(
                "verify_claims",
                &json!({"claims": ["A.", "B."], "passages": ["p"]})
            ),
            "verify_claims (2 claims starting \"A.\")"
        );
    }
}
