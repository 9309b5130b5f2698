//! The questions ragaliq asks a judge, each bound once to its template, its
//! reply schema, its reply-token sizing and its reply parser.
//!
//! A metric builds a task from its input (`VerifyClaims { claims, passages }`)
//! and hands it to the session, which turns it into a request
//! ([`Asking::question`]), gets an answer (recording, memo or live call) and
//! reads it with the task's own parser ([`Ask::read`]): typed verdicts come
//! back, never reply text. Nothing here knows a metric, a recording or a
//! client.

use crate::core::{
    Check, CheckOutcome, JsonMode, JudgeRequest, JudgeResponse, Message, Shown, Verdict,
};
use crate::evidence::{self, Found, Grounding};
#[cfg(feature = "generate")]
use crate::parse::GeneratedCase;
use crate::parse::{
    self, AnswerAt, AnswerWords, Batch, ParseError, ParseErrorKind, ParsedRelevance, ParsedVerdict,
    ScoredReply, YesNo,
};
use crate::prompts::{SchemaDialect, Shape, Task, Templates, escape, numbered};
use serde_json::json;

/// The most claims re-asked one by one after one batch: a judge that leaves
/// more unmatched is not answering the batch, and asking each would cost
/// without end.
pub const MAX_REASKS: usize = 8;

/// How many likeliest alternatives a yes/no question asks for at each
/// token (OpenAI allows up to 20; ten hold every spelling of yes and no).
pub const TOP_LOGPROBS: u8 = 10;

/// How a session's requests are written: the model, its sampling and reply
/// limits, the templates, and the schema keywords the server accepts.
#[derive(Clone, Debug)]
pub(crate) struct Asking {
    pub model: String,
    pub temperature: f64,
    /// Whether yes/no questions ask for token probabilities (not of a
    /// provider that has none, Anthropic; nor under `verification = "word"`).
    pub probabilities: bool,
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
        if let Some(own) = ask.own() {
            return self.own_question(ask, &own, mode, sample);
        }
        let task = A::TASK;
        let shape = ask.shape();
        let vars = ask.vars();
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let schema = task.schema_in_order(&shape, self.dialect, self.templates.fields(task));
        let word = task.reads_first_word();
        let (max_tokens, sized_for) = if word {
            // One word (and a reason, for some), whatever the ceiling: the
            // answer is read at the start.
            (task.reply_tokens(&shape), shape.describe(task))
        } else if self.sized_max_tokens {
            let limit = task.reply_tokens(&shape).min(self.max_tokens);
            (limit, shape.describe(task))
        } else {
            (self.max_tokens, String::new())
        };
        let body = self.templates.render(task, &vars);
        let mut template_version = self.templates.version_label(task);
        // A follow-up's question starts with the conversation before it;
        // a first turn's is a single question's, word for word.
        let (content, shows_history) = match ask
            .history()
            .filter(|h| h.shown_to(task))
            .and_then(|h| self.templates.history_block(&h.shown))
        {
            Some(block) => {
                template_version.push_str(&format!(
                    "+conversation@{}",
                    self.templates.conversation().version
                ));
                (format!("{block}\n\n{body}"), true)
            }
            None => (body, false),
        };
        Question {
            request: JudgeRequest {
                task: task.name().to_owned(),
                template_version,
                model: self.model.clone(),
                system: self.templates.system_for(task).body.clone(),
                messages: vec![Message::user(content)],
                temperature: self.temperature,
                max_tokens,
                // Plain text: under a JSON grammar the word's probability
                // saturates, and the reply is one word anyway.
                response_format: if word {
                    crate::core::ResponseFormat::Text
                } else {
                    mode.format(task.name(), &schema)
                },
                sample,
                top_logprobs: if word && self.probabilities {
                    TOP_LOGPROBS
                } else {
                    0
                },
                subject: ask.subject(),
            },
            task: task.name(),
            word,
            read_at_start: word && ask.answer_at().at_start(),
            answer_at: word.then(|| ask.answer_at().clone()),
            schema,
            sized_for,
            shows_history,
        }
    }
}

impl Asking {
    /// A question of one's own ([`OwnTask`]): its template, with the
    /// system prompt of its kind of answer.
    fn own_question<A: Ask>(
        &self,
        ask: &A,
        own: &OwnTask<'_>,
        mode: JsonMode,
        sample: u32,
    ) -> Question {
        let vars = ask.vars();
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        // A word answer is read like a criteria answer (the word, then a
        // reason); a JSON answer like the JSON tasks'.
        let like = if own.schema.is_none() {
            crate::prompts::Task::CriteriaMet
        } else {
            crate::prompts::Task::VerifyClaim
        };
        let word = own.schema.is_none();
        // An answer word read after a marker comes last, after the reason:
        // asked with a system prompt that says so, and room for both.
        let last = word && !ask.answer_at().at_start();
        let (system_name, system) = if last {
            ("system_reason_last", self.templates.system_reason_last())
        } else if word {
            ("system_reason", self.templates.system_for(like))
        } else {
            ("system", self.templates.system_for(like))
        };
        let schema = own
            .schema
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"type": "string"}));
        let max_tokens = if last {
            crate::prompts::REASON_THEN_WORD_TOKENS
        } else if word {
            crate::prompts::REASON_TOKENS
        } else {
            OWN_JSON_TOKENS.min(self.max_tokens)
        };
        let mut template_version = format!(
            "{}@{}+{system_name}@{}",
            own.name, own.template.version, system.version
        );
        let body = crate::prompts::render_text(&own.template.body, &vars);
        let (content, shows_history) = match ask
            .history()
            .and_then(|h| self.templates.history_block(&h.shown))
        {
            Some(block) => {
                template_version.push_str(&format!(
                    "+conversation@{}",
                    self.templates.conversation().version
                ));
                (format!("{block}\n\n{body}"), true)
            }
            None => (body, false),
        };
        Question {
            request: JudgeRequest {
                task: format!("custom:{}", own.name),
                template_version,
                model: self.model.clone(),
                system: system.body.clone(),
                messages: vec![Message::user(content)],
                temperature: self.temperature,
                max_tokens,
                response_format: if word {
                    crate::core::ResponseFormat::Text
                } else {
                    mode.format(own.name, &schema)
                },
                sample,
                top_logprobs: if word && self.probabilities {
                    TOP_LOGPROBS
                } else {
                    0
                },
                subject: ask.subject(),
            },
            task: "custom",
            word,
            read_at_start: word && !last,
            answer_at: word.then(|| ask.answer_at().clone()),
            schema,
            sized_for: String::new(),
            shows_history,
        }
    }
}

/// The reply limit of a metric of one's own answered in JSON (under the
/// configured ceiling).
const OWN_JSON_TOKENS: u32 = 512;

/// A task of one's own (a [`CustomMetric`](crate::CustomMetric)'s): its
/// name, template and reply, in place of a built-in task's.
pub(crate) struct OwnTask<'a> {
    pub name: &'a str,
    pub template: &'a crate::prompts::Template,
    /// The reply's schema, for an answer in JSON; `None` for an answer
    /// word (then a reason).
    pub schema: Option<&'a serde_json::Value>,
}

/// Room added to a first-word answer's token limit for a reasoning block
/// before the word (`<think>\n\n</think>\n\n` is four tokens on Qwen3):
/// an empty block, or a line of it, not a model thinking at length.
const REASONING_ROOM: u32 = 32;

/// A request ready to send, with what it takes to ask it again in another
/// JSON mode and to explain a reply cut off at its limit.
#[derive(Clone)]
pub(crate) struct Question {
    pub request: JudgeRequest,
    /// The task's label.
    pub task: &'static str,
    /// A question answered in a word (a yes/no question, a score, a custom
    /// metric's words): plain text whatever the JSON mode.
    pub word: bool,
    /// The answer word is read at the reply's start ([`AnswerAt::First`]),
    /// so a reply at its token limit is whole. An answer read after a
    /// marker comes last: a reply cut at its limit is truncated.
    pub read_at_start: bool,
    /// Where a one-word answer's word stands (`None` for a JSON answer):
    /// a recording keeps the token probabilities up to it and no further
    /// ([`parse::tokens_read`]).
    pub answer_at: Option<AnswerAt>,
    schema: serde_json::Value,
    /// What the reply limit was sized for ("3 claims"); empty when the
    /// configured ceiling was the limit.
    pub sized_for: String,
    /// Whether the question starts with the conversation before its turn:
    /// what an evaluation says its judge was shown is what its questions
    /// showed, not a list of metrics kept beside the tasks' own rule.
    pub shows_history: bool,
}

impl Question {
    /// This question again with room for a reasoning block, when `reply`
    /// (its answer) opened one before its first word and was cut inside it
    /// (a reasoning model whose empty `<think></think>` the server does not
    /// strip fills a one-word limit with it); `None` otherwise. Asked anew
    /// under its own fingerprint, so recordings made without a block are
    /// untouched.
    pub(crate) fn with_room_for_reasoning(&self, reply: &str) -> Option<Question> {
        if !self.read_at_start || !crate::parse::cut_in_reasoning(reply) {
            return None;
        }
        let mut again = self.clone();
        again.request.max_tokens = again.request.max_tokens.saturating_add(REASONING_ROOM);
        Some(again)
    }

    /// What a recording keeps of `response`: the reply's JSON value where
    /// it holds one ([`recorded_reply`]), and, for a one-word answer, the
    /// token probabilities up to its word and no further
    /// ([`parse::tokens_read`]). The rest of such a reply (its reason) is
    /// never read from its probabilities: kept whole, ten alternatives a
    /// token made a criteria exchange 774 lines long. Read again from what
    /// is kept, the answer reads the same; recordings made before keep all
    /// their tokens, and replay as they did.
    pub(crate) fn kept(&self, response: &JudgeResponse) -> JudgeResponse {
        let mut kept = response.clone();
        kept.text = recorded_reply(&response.text);
        if let (Some(at), Some(tokens)) = (&self.answer_at, &mut kept.logprobs) {
            let n = parse::tokens_read(&kept.text, tokens, at);
            tokens.truncate(n);
        }
        kept
    }

    /// The request, with its reply shaped as `mode` asks (a one-word
    /// question stays plain text).
    pub(crate) fn in_mode(&self, mode: JsonMode) -> JudgeRequest {
        if self.word {
            return self.request.clone();
        }
        JudgeRequest {
            response_format: mode.format(self.task, &self.schema),
            ..self.request.clone()
        }
    }
}

/// Where the built-in questions' answers stand: their prompts ask for the
/// word (or score) first.
static FIRST_WORD: AnswerAt = AnswerAt::First;

/// A yes/no question's answer, read where `ask` says it stands.
fn yes_no_at<A: Ask>(
    ask: &A,
    reply: &str,
    logprobs: Option<&[crate::core::TokenLogprob]>,
) -> Result<YesNo, ParseError> {
    let read = parse::answer_word(reply, logprobs, &parse::yes_or_no(), ask.answer_at())?;
    Ok(YesNo::from_read(read))
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
    /// Reads the judge's whole response (its token probabilities too, for
    /// a yes/no question); the reply text by default.
    fn read_response(&self, response: &JudgeResponse) -> Result<Self::Answer, ParseError> {
        self.read(&response.text)
    }
    /// What was made of the answer's items, for the recording (none by default).
    fn checks(&self, _answer: &Self::Answer) -> Vec<Check> {
        Vec::new()
    }
    /// For a turn of a conversation: which turn, and what the judge is
    /// shown of the conversation before it (none by default; only tasks
    /// that [read the question](Task::reads_history) are asked with it).
    fn history(&self) -> Option<&History> {
        None
    }
    /// A task of one's own, asked in place of [`Ask::TASK`] (none by
    /// default).
    fn own(&self) -> Option<OwnTask<'_>> {
        None
    }
    /// The task's name in requests and recordings (`claim_supported`, or
    /// `custom:<name>` for a task of one's own).
    fn task_name(&self) -> String {
        match self.own() {
            Some(own) => format!("custom:{}", own.name),
            None => Self::TASK.name().to_owned(),
        }
    }
    /// The task's label in errors.
    fn label(&self) -> &'static str {
        if self.own().is_some() {
            "custom"
        } else {
            Self::TASK.name()
        }
    }
    /// Where the answer word stands in the reply, for a question answered
    /// in a word: the first word for every built-in question (each prompt
    /// asks for the answer first); a custom metric says its own.
    fn answer_at(&self) -> &AnswerAt {
        &FIRST_WORD
    }
    /// Whether the reply holds an answer word read from token
    /// probabilities.
    fn reads_first_word(&self) -> bool {
        match self.own() {
            Some(own) => own.schema.is_none(),
            None => Self::TASK.reads_first_word(),
        }
    }
}

/// The reply a recording keeps: the JSON value it carries, compact, in the
/// judge's key order (so the recording can show it as YAML, whatever
/// spacing or fences the judge used), else the reply as it came.
pub(crate) fn recorded_reply(reply: &str) -> String {
    parse::canonical(reply).unwrap_or_else(|| reply.to_owned())
}

/// A turn of a conversation, as its questions carry it: which
/// conversation and turn (for the recording's reader, and never part of
/// what a person's verdict is keyed by), and what the judge is shown of
/// the conversation before it (part of the question, and of the key).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct History {
    /// The conversation's id, when it has one.
    pub conversation: Option<String>,
    /// The turn's number (1 for the first).
    pub turn: usize,
    /// The earlier turns the judge is shown (none for a first turn).
    pub shown: Shown,
    /// Whether questions measured to do better bare (see
    /// [`Task::bare_for_follow_ups`]) show them too.
    pub every_question: bool,
}

impl History {
    /// Whether `task`'s question about this turn shows the earlier turns.
    pub(crate) fn shown_to(&self, task: Task) -> bool {
        task.reads_history() && (self.every_question || !task.bare_for_follow_ups())
    }
}

/// `subject` with the turn it is about: its conversation and number, and
/// the earlier turns the judge was shown (`history`: each turn's `user`
/// and `assistant`, as shown).
pub(crate) fn with_history(
    mut subject: serde_json::Value,
    history: Option<&History>,
    task: Task,
) -> serde_json::Value {
    let (Some(h), Some(map)) = (history, subject.as_object_mut()) else {
        return subject;
    };
    if let Some(c) = &h.conversation {
        map.insert("conversation".into(), json!(c));
    }
    map.insert("turn".into(), json!(h.turn));
    if !h.shown.is_empty() && h.shown_to(task) {
        let said: Vec<serde_json::Value> = h
            .shown
            .said
            .iter()
            .map(|s| json!({"user": s.user, "assistant": s.assistant}))
            .collect();
        map.insert("history".into(), json!(said));
    }
    subject
}

/// A verdict as read, with its evidence looked for in the passages.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CheckedVerdict {
    pub verdict: ParsedVerdict,
    /// Where its quote is, for a verdict that needs one and has it.
    pub found: Option<Found>,
    /// A verdict that needs evidence (supported, partially supported,
    /// contradicted) whose quote is in no passage, or that quotes none.
    pub ungrounded: bool,
    /// P(supported), for a verdict read from a yes/no question's token
    /// probabilities.
    pub probability: Option<f64>,
    /// P(contradicted), for an unsupported claim asked whether the passages
    /// contradict it.
    pub contradiction: Option<f64>,
    /// The evidence is the passage sentence closest to the claim, found by
    /// ragaliq (the judge was asked a yes/no question, not for a quote).
    pub located: bool,
    /// With passages asked about in chunks: the chunk whose answer decided
    /// (the likeliest support); 0 otherwise.
    pub chunk: usize,
}

impl CheckedVerdict {
    /// No evidence, with nothing asked (there is nothing to check against).
    pub(crate) fn no_evidence() -> CheckedVerdict {
        CheckedVerdict {
            verdict: ParsedVerdict {
                verdict: Verdict::NoEvidence,
                evidence: String::new(),
                confidence: None,
            },
            found: None,
            ungrounded: false,
            probability: None,
            contradiction: None,
            located: false,
            chunk: 0,
        }
    }

    fn check(verdict: ParsedVerdict, passages: &[String]) -> CheckedVerdict {
        if verdict.verdict == Verdict::NoEvidence {
            return CheckedVerdict {
                verdict,
                found: None,
                ungrounded: false,
                probability: None,
                contradiction: None,
                located: false,
                chunk: 0,
            };
        }
        match evidence::locate(&verdict.evidence, passages) {
            Grounding::Found(found) => CheckedVerdict {
                verdict,
                found: Some(found),
                ungrounded: false,
                probability: None,
                contradiction: None,
                located: false,
                chunk: 0,
            },
            Grounding::Ungrounded | Grounding::NoQuote => CheckedVerdict {
                verdict,
                found: None,
                ungrounded: true,
                probability: None,
                contradiction: None,
                located: false,
                chunk: 0,
            },
        }
    }

    fn outcome(&self, passages: &[String]) -> Option<CheckOutcome> {
        match (&self.found, self.ungrounded) {
            (Some(f), _) => Some(CheckOutcome::Found {
                passage: f.passage,
                quote: passages[f.passage][f.span.clone()].to_owned(),
            }),
            (None, true) if self.verdict.evidence.trim().is_empty() => Some(CheckOutcome::NoQuote),
            (None, true) => Some(CheckOutcome::Ungrounded),
            (None, false) => None,
        }
    }
}

/// The atomic claims of a text (a response, or an expected answer).
pub(crate) struct ExtractClaims<'a> {
    pub query: &'a str,
    pub text: &'a str,
    /// What the text is, in messages and in what a dropped claim is not
    /// in: `response` or `reference`. Not asked: the question is the same.
    pub of: &'static str,
    /// For a turn of a conversation: which, and what came before it.
    pub history: Option<&'a History>,
}

/// Why an item the judge extracted was set aside instead of scored.
/// Written into messages and recordings as its [`Display`](std::fmt::Display)
/// text; matched as a value where a rule depends on it (a text whose only
/// items echo the question claims nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dropped {
    /// The user's question echoed back ([`evidence::the_question_echoed`]).
    Echoed,
    /// Not found in the text it was extracted from (`response` or
    /// `reference`: [`evidence::claim_from_response`]).
    NotIn(&'static str),
    /// The same claim as an earlier one ([`evidence::same_claim`]).
    Repeat,
}

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dropped::Echoed => f.write_str("the user's question echoed, no claim"),
            Dropped::NotIn(of) => write!(f, "not in the {of}"),
            Dropped::Repeat => f.write_str("repeats an earlier claim"),
        }
    }
}

/// Extracted claims: those that come from the response, and those set aside.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Extracted {
    pub claims: Vec<String>,
    /// Claims dropped: their number in the judge's list, the claim, and
    /// why.
    pub dropped: Vec<(usize, String, Dropped)>,
    /// What the text is: `response` or `reference`.
    pub of: &'static str,
    /// The judge listed no claim, even asked again, for a text that states
    /// something ([`evidence::states_something`]): nothing to score it by.
    pub missed: bool,
}

impl Ask for ExtractClaims<'_> {
    type Answer = Extracted;
    const TASK: Task = Task::ExtractClaims;

    fn history(&self) -> Option<&History> {
        self.history
    }

    fn vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("query", escape(self.query.trim())),
            ("response", escape(self.text.trim())),
        ]
    }

    fn subject(&self) -> serde_json::Value {
        with_history(
            json!({"query": self.query, "response": self.text}),
            self.history,
            Self::TASK,
        )
    }

    fn shape(&self) -> Shape {
        Shape::text(self.text.trim().chars().count())
    }

    /// The claims that come from the response (the query read only for
    /// what the response refers to), each once; see
    /// [`evidence::claim_from_response`].
    fn read(&self, reply: &str) -> Result<Extracted, ParseError> {
        // The claims may resolve a pronoun from the query, or from what
        // the user said in the turns shown before it (read as the query
        // is: only for what the response refers to); never from an
        // earlier answer: a claim copied from one is not this answer's
        // (the kit's 1.5B listed one so, recorded in
        // examples/recordings/conversation.snap).
        let mut asked = String::new();
        for said in self.history.iter().flat_map(|h| &h.shown.said) {
            asked.push_str(&said.user);
            asked.push('\n');
        }
        asked.push_str(self.query);
        let mut out = Extracted {
            claims: Vec::new(),
            dropped: Vec::new(),
            missed: false,
            of: self.of,
        };
        for (i, claim) in parse::claims(reply)?.into_iter().enumerate() {
            if evidence::the_question_echoed(&claim, self.query) {
                out.dropped.push((i + 1, claim, Dropped::Echoed));
            } else if !evidence::claim_from_response(&claim, self.text, &asked) {
                out.dropped.push((i + 1, claim, Dropped::NotIn(self.of)));
            } else if out.claims.iter().any(|c| evidence::same_claim(c, &claim)) {
                out.dropped.push((i + 1, claim, Dropped::Repeat));
            } else {
                out.claims.push(claim);
            }
        }
        Ok(out)
    }

    fn checks(&self, answer: &Extracted) -> Vec<Check> {
        answer
            .dropped
            .iter()
            .map(|(item, _, why)| Check {
                item: *item,
                outcome: CheckOutcome::Dropped(why.to_string()),
            })
            .collect()
    }
}

/// Numbered claims verified against the passages in one call.
pub(crate) struct VerifyClaims<'a> {
    pub claims: &'a [String],
    pub passages: &'a [String],
}

impl Ask for VerifyClaims<'_> {
    /// One verdict per claim, in claim order, its evidence checked; `None`
    /// for a claim no readable item answers (to be asked again alone), with
    /// why.
    type Answer = Batch<CheckedVerdict>;
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

    /// Item by item (see [`parse::verdicts_each`]): one unreadable item
    /// costs only its claim. A reply that holds no list of items leaves
    /// every claim to be asked again; more than [`MAX_REASKS`] claims left
    /// unanswered is an error carrying the reply.
    fn read(&self, reply: &str) -> Result<Self::Answer, ParseError> {
        let n = self.claims.len();
        let batch = match parse::verdicts_each(reply, n) {
            Ok(b) => b,
            Err(e) if !matches!(e.kind, ParseErrorKind::Truncated) => Batch {
                items: vec![None; n],
                missing: vec![Some(e.kind.to_string()); n],
                problems: vec![e.kind.to_string()],
            },
            Err(e) => return Err(e),
        };
        let unmatched = batch.items.iter().filter(|v| v.is_none()).count();
        if unmatched > MAX_REASKS {
            return Err(ParseError::new(
                ParseErrorKind::Unmatched {
                    unmatched,
                    limit: MAX_REASKS,
                },
                reply,
            ));
        }
        Ok(Batch {
            items: batch
                .items
                .into_iter()
                .map(|v| v.map(|v| CheckedVerdict::check(v, self.passages)))
                .collect(),
            missing: batch.missing,
            problems: batch.problems,
        })
    }

    fn checks(&self, answer: &Self::Answer) -> Vec<Check> {
        answer
            .items
            .iter()
            .zip(&answer.missing)
            .enumerate()
            .filter_map(|(i, (item, missing))| {
                let outcome = match item {
                    Some(v) => v.outcome(self.passages)?,
                    None => CheckOutcome::Unreadable(
                        missing.clone().unwrap_or_else(|| "no readable item".into()),
                    ),
                };
                Some(Check {
                    item: i + 1,
                    outcome,
                })
            })
            .collect()
    }
}

/// One claim verified alone (a batch of one, or the re-ask of a claim a
/// batch left unanswered or quoted no passage for).
pub(crate) struct VerifyClaim<'a> {
    pub claim: &'a str,
    pub passages: &'a [String],
    /// Asked again because the quote it was given before is in no passage:
    /// the question says so.
    pub retry: bool,
}

/// What a re-asked claim's question adds when its earlier quote was in no
/// passage.
const NOT_FOUND: &str = "The evidence given for this claim before is in none of the passages. Quote the words of a passage exactly, or answer no_evidence.";

impl Ask for VerifyClaim<'_> {
    type Answer = CheckedVerdict;
    const TASK: Task = Task::VerifyClaim;

    fn vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("passages", numbered("passage", self.passages)),
            ("claim", escape(self.claim.trim())),
            (
                "retry",
                if self.retry {
                    NOT_FOUND.to_owned()
                } else {
                    String::new()
                },
            ),
        ]
    }

    fn subject(&self) -> serde_json::Value {
        if self.retry {
            json!({"claim": self.claim, "passages": self.passages, "again": "its earlier quote is in no passage"})
        } else {
            json!({"claim": self.claim, "passages": self.passages})
        }
    }

    fn shape(&self) -> Shape {
        Shape::items(1)
    }

    fn read(&self, reply: &str) -> Result<CheckedVerdict, ParseError> {
        parse::verdict(reply).map(|v| CheckedVerdict::check(v, self.passages))
    }

    fn checks(&self, answer: &CheckedVerdict) -> Vec<Check> {
        answer
            .outcome(self.passages)
            .map(|outcome| Check { item: 1, outcome })
            .into_iter()
            .collect()
    }
}

/// How well a response answers the query: a score with reasoning.
pub(crate) struct Relevance<'a> {
    pub query: &'a str,
    pub response: &'a str,
    /// For a turn of a conversation: which, and what came before it.
    pub history: Option<&'a History>,
}

impl Ask for Relevance<'_> {
    type Answer = ScoredReply;
    const TASK: Task = Task::Relevance;

    fn history(&self) -> Option<&History> {
        self.history
    }

    fn vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("query", escape(self.query.trim())),
            ("response", escape(self.response.trim())),
        ]
    }

    fn subject(&self) -> serde_json::Value {
        with_history(
            json!({"query": self.query, "response": self.response}),
            self.history,
            Self::TASK,
        )
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
    /// For a turn of a conversation: which, and what came before it.
    pub history: Option<&'a History>,
}

impl Ask for PassageRelevance<'_> {
    /// One verdict per passage; `None` for a passage no readable item
    /// answers (to be asked again alone).
    type Answer = Batch<ParsedRelevance>;
    const TASK: Task = Task::PassageRelevance;

    fn history(&self) -> Option<&History> {
        self.history
    }

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
        with_history(
            json!({"query": self.query, "expected": self.expected, "passages": self.passages}),
            self.history,
            Self::TASK,
        )
    }

    fn shape(&self) -> Shape {
        Shape::items(self.passages.len())
    }

    fn read(&self, reply: &str) -> Result<Batch<ParsedRelevance>, ParseError> {
        let n = self.passages.len();
        match parse::passage_relevance_each(reply, n) {
            Err(e) if !matches!(e.kind, ParseErrorKind::Truncated) && n > 1 => Ok(Batch {
                items: vec![None; n],
                missing: vec![Some(e.kind.to_string()); n],
                problems: vec![e.kind.to_string()],
            }),
            other => other,
        }
    }

    fn checks(&self, answer: &Batch<ParsedRelevance>) -> Vec<Check> {
        answer
            .missing
            .iter()
            .enumerate()
            .filter_map(|(i, m)| {
                m.as_ref().map(|why| Check {
                    item: i + 1,
                    outcome: CheckOutcome::Unreadable(why.clone()),
                })
            })
            .collect()
    }
}

/// Questions with grounded answers written from one document.
#[cfg(feature = "generate")]
pub(crate) struct GenerateCases<'a> {
    /// The document's file name, for the recording.
    pub file: Option<&'a str>,
    pub count: usize,
    /// The document's text, trimmed.
    pub document: &'a str,
}

#[cfg(feature = "generate")]
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

/// The passages of a one-word question: one per line, numbered `[1]`,
/// `[2]` when there are several, escaped.
pub(crate) fn document(passages: &[String]) -> String {
    if passages.len() == 1 {
        return escape(passages[0].trim());
    }
    passages
        .iter()
        .enumerate()
        .map(|(i, p)| format!("[{}] {}", i + 1, escape(p.trim())))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a yes/no answer's check says in the recording.
fn read_check(answer: &YesNo) -> Vec<Check> {
    vec![Check {
        item: 1,
        outcome: CheckOutcome::Read(answer.read.clone()),
    }]
}

/// Is one claim supported by the passages (or a chunk of them)? Passages
/// first, the claim last, so a server's prompt cache reuses the passages
/// across the claims of a case.
pub(crate) struct ClaimSupported<'a> {
    pub claim: &'a str,
    pub passages: &'a [String],
}

impl Ask for ClaimSupported<'_> {
    type Answer = YesNo;
    const TASK: Task = Task::ClaimSupported;

    fn vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("passages", document(self.passages)),
            ("claim", escape(self.claim.trim())),
        ]
    }

    fn subject(&self) -> serde_json::Value {
        json!({"claim": self.claim, "passages": self.passages})
    }

    fn shape(&self) -> Shape {
        Shape::items(1)
    }

    fn read(&self, reply: &str) -> Result<YesNo, ParseError> {
        yes_no_at(self, reply, None)
    }

    fn read_response(&self, response: &JudgeResponse) -> Result<YesNo, ParseError> {
        yes_no_at(self, &response.text, response.logprobs.as_deref())
    }

    fn checks(&self, answer: &YesNo) -> Vec<Check> {
        read_check(answer)
    }
}

/// Do the passages contradict one claim? Asked only of claims found
/// unsupported, to tell a contradiction from no evidence.
pub(crate) struct ClaimContradicted<'a> {
    pub claim: &'a str,
    pub passages: &'a [String],
}

impl Ask for ClaimContradicted<'_> {
    type Answer = YesNo;
    const TASK: Task = Task::ClaimContradicted;

    fn vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("passages", document(self.passages)),
            ("claim", escape(self.claim.trim())),
        ]
    }

    fn subject(&self) -> serde_json::Value {
        json!({"claim": self.claim, "passages": self.passages})
    }

    fn shape(&self) -> Shape {
        Shape::items(1)
    }

    fn read(&self, reply: &str) -> Result<YesNo, ParseError> {
        yes_no_at(self, reply, None)
    }

    fn read_response(&self, response: &JudgeResponse) -> Result<YesNo, ParseError> {
        yes_no_at(self, &response.text, response.logprobs.as_deref())
    }

    fn checks(&self, answer: &YesNo) -> Vec<Check> {
        read_check(answer)
    }
}

/// Does the response answer the query? P(yes) is the relevance score.
pub(crate) struct AnswersQuery<'a> {
    pub query: &'a str,
    pub response: &'a str,
    /// For a turn of a conversation: which, and what came before it.
    pub history: Option<&'a History>,
}

impl Ask for AnswersQuery<'_> {
    type Answer = YesNo;
    const TASK: Task = Task::AnswersQuery;

    fn history(&self) -> Option<&History> {
        self.history
    }

    fn vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("query", escape(self.query.trim())),
            ("response", escape(self.response.trim())),
        ]
    }

    fn subject(&self) -> serde_json::Value {
        with_history(
            json!({"query": self.query, "response": self.response}),
            self.history,
            Self::TASK,
        )
    }

    fn shape(&self) -> Shape {
        Shape::items(1)
    }

    fn read(&self, reply: &str) -> Result<YesNo, ParseError> {
        yes_no_at(self, reply, None)
    }

    fn read_response(&self, response: &JudgeResponse) -> Result<YesNo, ParseError> {
        yes_no_at(self, &response.text, response.logprobs.as_deref())
    }

    fn checks(&self, answer: &YesNo) -> Vec<Check> {
        read_check(answer)
    }
}

/// Does the response give the same answer to the question as the expected
/// answer, without contradicting it? P(yes) is the correctness score (the
/// direct question, answer correctness's default). The expected answer is
/// shown as the case gives it, several accepted answers
/// (`Accepted answers: "A"; "B"`) included.
pub(crate) struct AnswerCorrect<'a> {
    pub query: &'a str,
    pub expected: &'a str,
    pub response: &'a str,
    /// For a turn of a conversation: which, and what came before it.
    pub history: Option<&'a History>,
}

impl Ask for AnswerCorrect<'_> {
    type Answer = YesNo;
    const TASK: Task = Task::AnswerCorrect;

    fn history(&self) -> Option<&History> {
        self.history
    }

    fn vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("query", escape(self.query.trim())),
            ("expected", escape(self.expected.trim())),
            ("response", escape(self.response.trim())),
        ]
    }

    fn subject(&self) -> serde_json::Value {
        with_history(
            json!({"query": self.query, "expected": self.expected, "response": self.response}),
            self.history,
            Self::TASK,
        )
    }

    fn shape(&self) -> Shape {
        Shape::items(1)
    }

    fn read(&self, reply: &str) -> Result<YesNo, ParseError> {
        yes_no_at(self, reply, None)
    }

    fn read_response(&self, response: &JudgeResponse) -> Result<YesNo, ParseError> {
        yes_no_at(self, &response.text, response.logprobs.as_deref())
    }

    fn checks(&self, answer: &YesNo) -> Vec<Check> {
        read_check(answer)
    }
}

/// Does one passage help answer the query (the expected answer, when
/// given, shows what a good answer needs)?
pub(crate) struct PassageRelevant<'a> {
    pub query: &'a str,
    pub expected: Option<&'a str>,
    pub passage: &'a str,
    /// For a turn of a conversation: which, and what came before it.
    pub history: Option<&'a History>,
}

impl Ask for PassageRelevant<'_> {
    type Answer = YesNo;
    const TASK: Task = Task::PassageRelevant;

    fn history(&self) -> Option<&History> {
        self.history
    }

    fn vars(&self) -> Vec<(&'static str, String)> {
        let expected = self
            .expected
            .filter(|a| !a.trim().is_empty())
            .map_or_else(String::new, |a| {
                format!("\n<expected>{}</expected>\n", escape(a.trim()))
            });
        vec![
            ("query", escape(self.query.trim())),
            ("expected", expected),
            ("passage", escape(self.passage.trim())),
        ]
    }

    fn subject(&self) -> serde_json::Value {
        with_history(
            json!({"query": self.query, "expected": self.expected, "passages": [self.passage]}),
            self.history,
            Self::TASK,
        )
    }

    fn shape(&self) -> Shape {
        Shape::items(1)
    }

    fn read(&self, reply: &str) -> Result<YesNo, ParseError> {
        yes_no_at(self, reply, None)
    }

    fn read_response(&self, response: &JudgeResponse) -> Result<YesNo, ParseError> {
        yes_no_at(self, &response.text, response.logprobs.as_deref())
    }

    fn checks(&self, answer: &YesNo) -> Vec<Check> {
        read_check(answer)
    }
}

/// A yes/no question about one turn's question and answer, asked with the
/// conversation before it: its variables, subject and reading.
macro_rules! turn_question {
    ($(#[$doc:meta])* $name:ident, $task:expr, [$($field:ident),*]) => {
        $(#[$doc])*
        pub(crate) struct $name<'a> {
            $(pub $field: &'a str,)*
            /// Which turn, and what came before it.
            pub history: Option<&'a History>,
        }

        impl Ask for $name<'_> {
            type Answer = YesNo;
            const TASK: Task = $task;

            fn history(&self) -> Option<&History> {
                self.history
            }

            fn vars(&self) -> Vec<(&'static str, String)> {
                vec![$((stringify!($field), escape(self.$field.trim())),)*]
            }

            fn subject(&self) -> serde_json::Value {
                with_history(json!({$(stringify!($field): self.$field,)*}), self.history, Self::TASK)
            }

            fn shape(&self) -> Shape {
                Shape::items(1)
            }

            fn read(&self, reply: &str) -> Result<YesNo, ParseError> {
                yes_no_at(self, reply, None)
            }

            fn read_response(&self, response: &JudgeResponse) -> Result<YesNo, ParseError> {
                yes_no_at(self, &response.text, response.logprobs.as_deref())
            }

            fn checks(&self, answer: &YesNo) -> Vec<Check> {
                read_check(answer)
            }
        }
    };
}

turn_question!(
    /// Does the response say that it cannot answer the question, instead
    /// of giving an answer? (abstention)
    DeclinesToAnswer,
    Task::DeclinesToAnswer,
    [query, response]
);

turn_question!(
    /// Does the response contradict something the assistant said earlier
    /// in the conversation? (consistency; asked of follow-ups only)
    ContradictsEarlier,
    Task::ContradictsEarlier,
    [query, response]
);

turn_question!(
    /// Does the response ask the user again for something they already
    /// said, or contradict it? (retention; asked of follow-ups only)
    IgnoresUser,
    Task::IgnoresUser,
    [query, response]
);

/// Does the document (a turn's passages) contain the answer to the
/// question? (abstention: can the turn be answered from what was
/// retrieved for it?)
pub(crate) struct PassagesAnswer<'a> {
    pub query: &'a str,
    pub passages: &'a [String],
    /// Which turn, and what came before it.
    pub history: Option<&'a History>,
}

impl Ask for PassagesAnswer<'_> {
    type Answer = YesNo;
    const TASK: Task = Task::PassagesAnswer;

    fn history(&self) -> Option<&History> {
        self.history
    }

    fn vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("passages", document(self.passages)),
            ("query", escape(self.query.trim())),
        ]
    }

    fn subject(&self) -> serde_json::Value {
        with_history(
            json!({"query": self.query, "passages": self.passages}),
            self.history,
            Self::TASK,
        )
    }

    fn shape(&self) -> Shape {
        Shape::items(1)
    }

    fn read(&self, reply: &str) -> Result<YesNo, ParseError> {
        yes_no_at(self, reply, None)
    }

    fn read_response(&self, response: &JudgeResponse) -> Result<YesNo, ParseError> {
        yes_no_at(self, &response.text, response.logprobs.as_deref())
    }

    fn checks(&self, answer: &YesNo) -> Vec<Check> {
        read_check(answer)
    }
}

/// A criteria question's answer: the score read from the reply's first
/// word ([`AnswerAt::First`]: the prompts ask for it first), and the
/// judge's reason after it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Judged {
    /// In [0, 1]: P(yes) for a yes/no rule; for a 1–5 score, its expected
    /// value over the score tokens' probabilities (or the score written),
    /// mapped so 1 is 0 and 5 is 1.
    pub score: f64,
    /// Whether `score` comes from token probabilities.
    pub from_probabilities: bool,
    /// How the answer was read, for recordings and messages.
    pub read: String,
    /// The judge's reason: what it wrote after the answer.
    pub reason: String,
}

/// The passages and expected answer a criteria question shows, as its
/// template's `{{context}}` and `{{expected}}`.
fn criteria_vars(
    context: Option<&[String]>,
    expected: Option<&str>,
) -> [(&'static str, String); 2] {
    let context = context
        .filter(|c| !c.is_empty())
        .map_or_else(String::new, |c| {
            format!("<document>\n{}\n</document>\n", document(c))
        });
    let expected = expected
        .filter(|e| !e.trim().is_empty())
        .map_or_else(String::new, |e| {
            format!("<expected>{}</expected>\n", escape(e.trim()))
        });
    [("context", context), ("expected", expected)]
}

fn criteria_subject(
    criteria: &str,
    query: &str,
    response: &str,
    context: Option<&[String]>,
    expected: Option<&str>,
) -> serde_json::Value {
    let mut subject = json!({"criteria": criteria, "query": query, "response": response});
    if let Some(c) = context.filter(|c| !c.is_empty()) {
        subject["passages"] = json!(c);
    }
    if let Some(e) = expected.filter(|e| !e.trim().is_empty()) {
        subject["expected"] = json!(e);
    }
    subject
}

/// Does the response meet the criteria? Yes or no, then a reason.
pub(crate) struct CriteriaMet<'a> {
    pub criteria: &'a str,
    pub query: &'a str,
    pub response: &'a str,
    pub context: Option<&'a [String]>,
    pub expected: Option<&'a str>,
    /// For a turn of a conversation: which, and what came before it.
    pub history: Option<&'a History>,
}

impl Ask for CriteriaMet<'_> {
    type Answer = Judged;
    const TASK: Task = Task::CriteriaMet;

    fn history(&self) -> Option<&History> {
        self.history
    }

    fn vars(&self) -> Vec<(&'static str, String)> {
        let [context, expected] = criteria_vars(self.context, self.expected);
        vec![
            ("query", escape(self.query.trim())),
            context,
            expected,
            ("response", escape(self.response.trim())),
            ("criteria", escape(self.criteria.trim())),
        ]
    }

    fn subject(&self) -> serde_json::Value {
        with_history(
            criteria_subject(
                self.criteria,
                self.query,
                self.response,
                self.context,
                self.expected,
            ),
            self.history,
            Self::TASK,
        )
    }

    fn shape(&self) -> Shape {
        Shape::items(1)
    }

    fn read(&self, reply: &str) -> Result<Judged, ParseError> {
        self.read_response(&JudgeResponse::text(reply))
    }

    fn read_response(&self, response: &JudgeResponse) -> Result<Judged, ParseError> {
        let read = parse::answer_word(
            &response.text,
            response.logprobs.as_deref(),
            &parse::yes_or_no(),
            self.answer_at(),
        )?;
        Ok(Judged {
            score: read.probabilities[0],
            from_probabilities: read.from_probabilities,
            read: read.read,
            reason: read.reason,
        })
    }

    fn checks(&self, answer: &Judged) -> Vec<Check> {
        vec![Check {
            item: 1,
            outcome: CheckOutcome::Read(answer.read.clone()),
        }]
    }
}

/// The evaluation steps for judging responses against criteria: asked once
/// per criteria text (the same question, so the memo and the recordings
/// share it across cases).
pub(crate) struct CriteriaSteps<'a> {
    pub criteria: &'a str,
}

impl Ask for CriteriaSteps<'_> {
    type Answer = Vec<String>;
    const TASK: Task = Task::CriteriaSteps;

    fn vars(&self) -> Vec<(&'static str, String)> {
        vec![("criteria", escape(self.criteria.trim()))]
    }

    fn subject(&self) -> serde_json::Value {
        json!({"criteria": self.criteria})
    }

    fn shape(&self) -> Shape {
        Shape::items(1)
    }

    fn read(&self, reply: &str) -> Result<Vec<String>, ParseError> {
        parse::steps(reply)
    }
}

/// How well the response meets the criteria, 1 to 5, following the steps.
pub(crate) struct CriteriaScore<'a> {
    pub criteria: &'a str,
    pub steps: &'a [String],
    pub query: &'a str,
    pub response: &'a str,
    pub context: Option<&'a [String]>,
    pub expected: Option<&'a str>,
    /// For a turn of a conversation: which, and what came before it.
    pub history: Option<&'a History>,
}

/// The score tokens of a 1–5 rating.
const SCORES: [&str; 5] = ["1", "2", "3", "4", "5"];

impl Ask for CriteriaScore<'_> {
    type Answer = Judged;
    const TASK: Task = Task::CriteriaScore;

    fn history(&self) -> Option<&History> {
        self.history
    }

    fn vars(&self) -> Vec<(&'static str, String)> {
        let [context, expected] = criteria_vars(self.context, self.expected);
        let steps = self
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{}. {}", i + 1, escape(s.trim())))
            .collect::<Vec<_>>()
            .join("\n");
        vec![
            ("criteria", escape(self.criteria.trim())),
            ("steps", steps),
            ("query", escape(self.query.trim())),
            context,
            expected,
            ("response", escape(self.response.trim())),
        ]
    }

    fn subject(&self) -> serde_json::Value {
        let mut subject = criteria_subject(
            self.criteria,
            self.query,
            self.response,
            self.context,
            self.expected,
        );
        subject["steps"] = json!(self.steps);
        with_history(subject, self.history, Self::TASK)
    }

    fn shape(&self) -> Shape {
        Shape::items(1)
    }

    fn read(&self, reply: &str) -> Result<Judged, ParseError> {
        self.read_response(&JudgeResponse::text(reply))
    }

    /// G-Eval: the score's expected value over the score tokens'
    /// probabilities, renormalised over 1–5, mapped to [0, 1].
    fn read_response(&self, response: &JudgeResponse) -> Result<Judged, ParseError> {
        let read = parse::answer_word(
            &response.text,
            response.logprobs.as_deref(),
            &AnswerWords::new(SCORES),
            self.answer_at(),
        )?;
        let expected: f64 = read
            .probabilities
            .iter()
            .enumerate()
            .map(|(i, p)| p * (i as f64 + 1.0))
            .sum();
        Ok(Judged {
            score: ((expected - 1.0) / 4.0).clamp(0.0, 1.0),
            from_probabilities: read.from_probabilities,
            read: format!("score {expected:.2} of 5 ({})", read.read),
            reason: read.reason,
        })
    }

    fn checks(&self, answer: &Judged) -> Vec<Check> {
        vec![Check {
            item: 1,
            outcome: CheckOutcome::Read(answer.read.clone()),
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::{Ask, Dropped, ExtractClaims, MAX_REASKS};

    /// First hour (issue 49): a conversation's history folded into the
    /// query gave "claims" taken from the query, and they were kept. Claims
    /// must come from the response; the query only resolves what it refers
    /// to.
    #[test]
    fn claims_taken_from_a_history_in_the_query_are_dropped() {
        let ask = ExtractClaims {
            query: "User: I bought a blender last week for $40.\nAssistant: Thank you for your order!\nUser: Can I return it?",
            text: "Yes, you can return the blender within 30 days of delivery.",
            of: "response",
            history: None,
        };
        let reply = r#"{"claims": ["The customer bought a blender last week.", "The customer bought the blender for $40.", "The blender can be returned within 30 days of delivery."]}"#;
        let read = ask.read(reply).unwrap();
        assert_eq!(
            read.claims,
            ["The blender can be returned within 30 days of delivery."]
        );
        assert_eq!(
            read.dropped
                .iter()
                .map(|(i, _, why)| (*i, *why))
                .collect::<Vec<_>>(),
            [
                (1, Dropped::NotIn("response")),
                (2, Dropped::NotIn("response"))
            ]
        );
        // What messages and recordings say of it.
        assert_eq!(read.dropped[0].2.to_string(), "not in the response");
    }

    /// The guide says how many items of a batch are asked again alone; it
    /// says what the code does.
    #[test]
    fn the_guide_states_the_reask_limit() {
        let guide = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../docs/guide/judges-and-providers.md"),
        )
        .unwrap();
        let said = guide.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            said.contains(&format!(
                "asks the others again alone (at most {MAX_REASKS} per batch)"
            )),
            "docs/guide/judges-and-providers.md does not say {MAX_REASKS}"
        );
    }
}
