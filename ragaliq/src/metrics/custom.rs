//! Metrics of one's own: a prompt template, how its answer is read (an
//! answer word with its probability, or JSON against a schema) and a
//! scorer, asked through the same session as every built-in metric
//! (recording, memo, budget, pace, samples and vote, undecided).

use super::decide::{self, Threshold, decide_one};
use super::vocab::{Asker, Interval, Plan, Scored};
use crate::core::{Check, CheckOutcome, JudgeResponse};
use crate::core::{ConfigError, Kind, RagCase};
use crate::error::{Error, Result};
use crate::parse::{AnswerAt, AnswerWords, ParseError, ParseErrorKind, WordAnswer};
use crate::prompts::{Shape, Task, Template, escape};
use crate::tasks::{Ask, OwnTask, document};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// What the judge answered a [`CustomMetric`]'s question, as read.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CustomAnswer {
    /// An answer word: its probabilities over the metric's words (from the
    /// judge's token probabilities where the server gives them, else 1 for
    /// the word written), read where the metric says it stands, and the
    /// reason the judge wrote besides it.
    Word {
        /// The answer word's reading ([`crate::parse::answer_word`]).
        answer: WordAnswer,
        /// What the judge wrote besides the word: after it, or before the
        /// marker for an answer read after one.
        reason: String,
    },
    /// A JSON value, checked against the metric's schema.
    Json(Value),
}

/// A [`CustomMetric`]'s score for one case: in [0, 1], with why.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CustomScore {
    /// The score, in [0, 1].
    pub score: f64,
    /// Why, in a sentence, for the failure message.
    pub reasoning: String,
}

impl CustomScore {
    /// A score and its reasoning.
    #[must_use]
    pub fn new(score: f64, reasoning: impl Into<String>) -> CustomScore {
        CustomScore {
            score,
            reasoning: reasoning.into(),
        }
    }
}

type Scorer =
    dyn Fn(&CustomAnswer, &RagCase) -> std::result::Result<CustomScore, String> + Send + Sync;

/// A metric of one's own.
///
/// The template is plain text with `{{query}}`, `{{response}}`,
/// `{{context}}` (the passages, numbered `[1]`, `[2]`), `{{expected}}` (the
/// expected answer) and `{{facts}}` (the expected facts, one per line),
/// each escaped so no case can close a tag; it may start with a header
/// (`version: 2`, then a line `---`), whose version is part of every
/// recording's fingerprint: bump it when the wording changes. Without a
/// header the version is 1.
///
/// The answer is read one of two ways:
///
/// - [`answered_by`](Self::answered_by) words: the judge answers one of
///   them, and a reason; the probability of each is read from its token
///   probabilities (the word written where the server gives none), exactly
///   where the template asks for the word ([`answered_at`](Self::answered_at)):
///   first by default ("Answer "yes" or "no" first, then give your reason
///   in one sentence."), or after a marker the template sets ("Give your
///   reason in one sentence, then end with "Answer: yes" or "Answer: no"."
///   with `AnswerAt::after("Answer:")`). A word anywhere else in the reply
///   is never read as the answer, and a word counts only whole (or as a
///   listed spelling, [`spelled`](Self::spelled)); see
///   [`crate::parse::answer_word`]. Unless a scorer says otherwise, the
///   score is the first word's probability.
/// - [`answered_in_json`](Self::answered_in_json) a schema: the judge
///   answers a JSON object (the schema is sent as a structured-output
///   format where the server takes one) that must satisfy the schema's
///   `type`, `properties`, `required`, `enum`, `items`, `minimum`,
///   `maximum`, `minItems` and `maxItems`; the scorer turns it into a score.
///
/// ```
/// use ragaliq::{CustomAnswer, CustomMetric, CustomScore};
/// let tone = CustomMetric::new(
///     "polite",
///     "<question>{{query}}</question>\n<response>{{response}}</response>\n\nIs the response polite? Answer \"yes\" or \"no\" first, then give your reason in one sentence.",
/// )
/// .unwrap()
/// .answered_by(["yes", "no"])
/// .with_threshold(0.6);
/// assert_eq!(tone.name(), "polite");
/// assert_eq!(tone.threshold(), 0.6);
///
/// // The reason first, the answer last, after "Answer:".
/// use ragaliq::parse::AnswerAt;
/// let refund = CustomMetric::new(
///     "no-refund-promise",
///     "<response>{{response}}</response>\n\nDoes the response promise a refund? Give your reason in one sentence, then end with \"Answer: yes\" or \"Answer: no\".",
/// )
/// .unwrap()
/// .answered_by(["no", "yes"])
/// .answered_at(AnswerAt::after("Answer:"));
/// assert_eq!(refund.answer_at(), &AnswerAt::after("Answer:"));
///
/// let steps = CustomMetric::new("steps", "version: 2\n---\nCount the steps in {{response}}. Reply: {\"steps\": <n>}")
///     .unwrap()
///     .answered_in_json(serde_json::json!({
///         "type": "object",
///         "properties": {"steps": {"type": "integer", "minimum": 0}},
///         "required": ["steps"]
///     }))
///     .scored_by(|answer, _case| match answer {
///         CustomAnswer::Json(v) => {
///             let n = v["steps"].as_u64().unwrap_or(0);
///             Ok(CustomScore::new(if n <= 3 { 1.0 } else { 0.0 }, format!("{n} steps")))
///         }
///         _ => Err("expected JSON".into()),
///     });
/// assert_eq!(steps.version(), "2");
/// ```
#[derive(Clone)]
pub struct CustomMetric {
    name: String,
    template: Template,
    reply: Reply,
    answer_at: AnswerAt,
    /// A definition that cannot be asked (said before any call).
    misuse: Option<String>,
    scorer: Option<Arc<Scorer>>,
    threshold: f64,
}

#[derive(Clone, Debug)]
enum Reply {
    Words(AnswerWords),
    Json(Value),
}

impl fmt::Debug for CustomMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CustomMetric")
            .field("name", &self.name)
            .field("version", &self.template.version)
            .field("reply", &self.reply)
            .field("answer_at", &self.answer_at)
            .field("scorer", &self.scorer.as_ref().map(|_| "…"))
            .field("threshold", &self.threshold)
            .finish()
    }
}

impl CustomMetric {
    /// A metric called `name` (letters, digits, `-` and `_`), asking
    /// `template` (see the type), answered "yes" or "no" and scored by
    /// P(yes) until told otherwise, passing at 0.7.
    ///
    /// # Errors
    ///
    /// The name is not a plain name, the template's header is malformed, or
    /// it names a placeholder ragaliq does not fill.
    pub fn new(
        name: impl Into<String>,
        template: &str,
    ) -> std::result::Result<CustomMetric, ConfigError> {
        let name = name.into();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(ConfigError::Invalid {
                origin: "custom metric name".into(),
                value: name,
                expected:
                    "letters, digits, `-` and `_` (it names the metric in reports and recordings)"
                        .into(),
            });
        }
        let origin = format!("custom metric `{name}`");
        let template = if template.contains("\n---\n") {
            Template::parse(template, &origin)?
        } else {
            Template::parse(&format!("version: 1\n---\n{template}"), &origin)?
        };
        if let Some(unknown) = placeholders(&template.body)
            .into_iter()
            .find(|p| !PLACEHOLDERS.contains(&p.as_str()))
        {
            return Err(ConfigError::Template {
                origin,
                problem: format!(
                    "`{{{{{unknown}}}}}` is no placeholder ragaliq fills (it fills: {})",
                    PLACEHOLDERS.join(", ")
                ),
            });
        }
        Ok(CustomMetric {
            name,
            template,
            reply: Reply::Words(crate::parse::yes_or_no()),
            answer_at: AnswerAt::First,
            misuse: None,
            scorer: None,
            threshold: 0.7,
        })
    }

    /// A metric whose template is the file at `path` (read now).
    ///
    /// # Errors
    ///
    /// The file cannot be read, or as [`new`](Self::new).
    pub fn from_file(
        name: impl Into<String>,
        path: impl AsRef<std::path::Path>,
    ) -> std::result::Result<CustomMetric, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Template {
            origin: path.display().to_string(),
            problem: e.to_string(),
        })?;
        CustomMetric::new(name, &text)
    }

    /// The judge answers one of `words` (lower case; the first is the one
    /// the default score reads) and a reason; where the word stands is
    /// [`answered_at`](Self::answered_at) (first, by default).
    #[must_use]
    pub fn answered_by<I, S>(mut self, words: I) -> CustomMetric
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.reply = Reply::Words(AnswerWords::new(words));
        self
    }

    /// Other spellings that count for answer word `word` (say, `supports`
    /// and `supported` for `support`, if the template's wording invites
    /// them): only the word itself counts otherwise.
    #[must_use]
    pub fn spelled<I, S>(mut self, word: &str, spellings: I) -> CustomMetric
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        match self.reply {
            Reply::Words(words) => self.reply = Reply::Words(words.spelled(word, spellings)),
            Reply::Json(_) => {
                self.misuse = Some(format!(
                    "spellings of `{word}` are given, but the metric is answered in JSON"
                ));
            }
        }
        self
    }

    /// Where the answer word stands in the judge's reply, as the template
    /// asks for it: [`AnswerAt::First`] (the default: "Answer "yes" or "no"
    /// first, then …"), or [`AnswerAt::After`] a marker for a template that
    /// asks for the reason first and the answer last ("… then end with
    /// "Answer: yes" or "Answer: no"."). The answer is read there and
    /// nowhere else. An answer read after a marker is asked with room for
    /// the reason before it, and a reply cut off before the marker is
    /// truncated, not read.
    #[must_use]
    pub fn answered_at(mut self, at: AnswerAt) -> CustomMetric {
        self.answer_at = at;
        self
    }

    /// The judge answers a JSON object satisfying `schema`; a scorer
    /// ([`scored_by`](Self::scored_by)) is then needed.
    #[must_use]
    pub fn answered_in_json(mut self, schema: Value) -> CustomMetric {
        self.reply = Reply::Json(schema);
        self
    }

    /// How an answer becomes a score in [0, 1] (an `Err` says why the
    /// answer cannot be scored, and fails the evaluation as a judge error).
    #[must_use]
    pub fn scored_by<F>(mut self, scorer: F) -> CustomMetric
    where
        F: Fn(&CustomAnswer, &RagCase) -> std::result::Result<CustomScore, String>
            + Send
            + Sync
            + 'static,
    {
        self.scorer = Some(Arc::new(scorer));
        self
    }

    /// The threshold the score passes at (default 0.7).
    #[must_use]
    pub fn with_threshold(mut self, threshold: f64) -> CustomMetric {
        self.threshold = threshold;
        self
    }

    /// Its name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where its answer word stands.
    #[must_use]
    pub fn answer_at(&self) -> &AnswerAt {
        &self.answer_at
    }

    /// Whether the definition can be asked: its answer words can be told
    /// apart, its marker is not blank, and a marker goes with answer words.
    ///
    /// # Errors
    ///
    /// What is wrong with the definition, naming the metric.
    pub fn check(&self) -> std::result::Result<(), ConfigError> {
        let problem = match (&self.reply, &self.misuse) {
            (_, Some(misuse)) => Err(misuse.clone()),
            (Reply::Words(words), None) => words.check().and_then(|()| self.answer_at.check()),
            (Reply::Json(_), None) if self.answer_at != AnswerAt::First => Err(
                "an answer read after a marker is an answer word: the metric is answered in JSON"
                    .to_owned(),
            ),
            (Reply::Json(_), None) => Ok(()),
        };
        problem.map_err(|problem| ConfigError::Template {
            origin: format!("custom metric `{}`", self.name),
            problem,
        })
    }

    /// Its template's version.
    #[must_use]
    pub fn version(&self) -> &str {
        &self.template.version
    }

    /// The threshold it passes at, unless an
    /// [`EvalOptions`](crate::EvalOptions) says otherwise.
    #[must_use]
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    fn score(&self, answer: &CustomAnswer, case: &RagCase) -> Result<CustomScore> {
        let scored = match (&self.scorer, answer) {
            (Some(f), _) => f(answer, case),
            (None, CustomAnswer::Word { answer, reason }) => Ok(CustomScore::new(
                answer.probabilities[0],
                if reason.is_empty() {
                    format!("{} ({})", self.first_word(), answer.read)
                } else {
                    format!("The judge's reason: \"{reason}\" ({})", answer.read)
                },
            )),
            (None, CustomAnswer::Json(_)) => Err(
                "a metric answered in JSON needs a scorer (`scored_by`) to turn its answer into a score"
                    .to_owned(),
            ),
        };
        let bad = |detail: String| Error::JudgeResponse {
            task: "custom",
            source: ParseError::new(ParseErrorKind::WrongShape { detail }, ""),
        };
        let scored = scored.map_err(|why| bad(format!("metric `{}`: {why}", self.name)))?;
        if !(0.0..=1.0).contains(&scored.score) {
            return Err(bad(format!(
                "metric `{}`: its scorer gave {}, not a score from 0 to 1",
                self.name, scored.score
            )));
        }
        Ok(scored)
    }

    fn first_word(&self) -> String {
        match &self.reply {
            Reply::Words(w) => format!("P({})", w.words().next().unwrap_or_default()),
            Reply::Json(_) => "the score".into(),
        }
    }
}

/// What a custom template may name.
const PLACEHOLDERS: [&str; 5] = ["query", "response", "context", "expected", "facts"];

fn placeholders(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) => {
                out.push(after[..end].trim().to_owned());
                rest = &after[end + 2..];
            }
            None => break,
        }
    }
    out
}

/// A custom metric's question on one case.
struct Question<'a> {
    metric: &'a CustomMetric,
    case: &'a RagCase,
    /// For a turn of a conversation: which, and what came before it.
    history: Option<&'a crate::tasks::History>,
}

impl Ask for Question<'_> {
    type Answer = CustomAnswer;
    // Only for the trait's defaults: `own` supplies the task.
    const TASK: Task = Task::CriteriaMet;

    fn history(&self) -> Option<&crate::tasks::History> {
        self.history
    }

    fn vars(&self) -> Vec<(&'static str, String)> {
        let case = self.case;
        vec![
            ("query", escape(case.query.trim())),
            ("response", escape(case.response_text().trim())),
            ("context", document(&case.context)),
            (
                "expected",
                escape(case.expected_answer.as_deref().unwrap_or_default().trim()),
            ),
            (
                "facts",
                case.expected_facts
                    .iter()
                    .map(|f| escape(f.trim()))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
        ]
    }

    fn subject(&self) -> Value {
        let case = self.case;
        // What was judged includes the question: a person's verdict on "Is
        // it polite?" is no verdict on "Is it rude?", and the key a verdict
        // is kept under must say which (the template's words, as written,
        // and the expected facts it shows the judge).
        let mut subject = serde_json::json!({
            "metric": self.metric.name,
            "question": self.metric.template.body.trim(),
            "query": case.query,
            "response": case.response_text(),
        });
        if !case.context.is_empty() {
            subject["passages"] = serde_json::json!(case.context);
        }
        if let Some(e) = &case.expected_answer {
            subject["expected"] = serde_json::json!(e);
        }
        if !case.expected_facts.is_empty()
            && placeholders(&self.metric.template.body)
                .iter()
                .any(|p| p == "facts")
        {
            subject["facts"] = serde_json::json!(case.expected_facts);
        }
        crate::tasks::with_history(subject, self.history, Self::TASK)
    }

    fn shape(&self) -> Shape {
        Shape::items(1)
    }

    fn read(&self, reply: &str) -> std::result::Result<CustomAnswer, ParseError> {
        self.read_response(&JudgeResponse::text(reply))
    }

    fn read_response(
        &self,
        response: &JudgeResponse,
    ) -> std::result::Result<CustomAnswer, ParseError> {
        match &self.metric.reply {
            Reply::Words(words) => {
                let answer = crate::parse::answer_word(
                    &response.text,
                    response.logprobs.as_deref(),
                    words,
                    &self.metric.answer_at,
                )?;
                let reason = answer.reason.clone();
                Ok(CustomAnswer::Word { answer, reason })
            }
            Reply::Json(schema) => {
                let text = crate::parse::canonical(&response.text)
                    .ok_or_else(|| ParseError::new(ParseErrorKind::NoJson, &response.text))?;
                let value: Value = serde_json::from_str(&text)
                    .map_err(|_| ParseError::new(ParseErrorKind::NoJson, &response.text))?;
                if let Err(detail) = check_schema(&value, schema, "the answer") {
                    return Err(ParseError::new(
                        ParseErrorKind::WrongShape { detail },
                        &response.text,
                    ));
                }
                Ok(CustomAnswer::Json(value))
            }
        }
    }

    fn checks(&self, answer: &CustomAnswer) -> Vec<Check> {
        match answer {
            CustomAnswer::Word { answer, .. } => vec![Check {
                item: 1,
                outcome: CheckOutcome::Read(answer.read.clone()),
            }],
            CustomAnswer::Json(_) => Vec::new(),
        }
    }

    fn answer_at(&self) -> &AnswerAt {
        &self.metric.answer_at
    }

    fn own(&self) -> Option<OwnTask<'_>> {
        Some(OwnTask {
            name: &self.metric.name,
            template: &self.metric.template,
            schema: match &self.metric.reply {
                Reply::Json(schema) => Some(schema),
                Reply::Words(_) => None,
            },
        })
    }
}

/// Whether `value` satisfies `schema`, for the keywords the type's docs
/// list (a subset: enough for the answers a judge is asked for, not a
/// JSON Schema validator); why not, naming the place.
fn check_schema(value: &Value, schema: &Value, at: &str) -> std::result::Result<(), String> {
    if let Some(kind) = schema.get("type").and_then(Value::as_str) {
        let ok = match kind {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            _ => true,
        };
        if !ok {
            return Err(format!("{at} should be {kind}, found {value}"));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        return Err(format!(
            "{at} is {value}, not one of {}",
            Value::Array(options.clone())
        ));
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            return Err(format!("{at} is {n}, under the minimum {min}"));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            return Err(format!("{at} is {n}, over the maximum {max}"));
        }
    }
    if let Some(object) = value.as_object() {
        for key in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !object.contains_key(key) {
                return Err(format!("{at} has no `{key}`"));
            }
        }
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (key, sub) in properties {
                if let Some(v) = object.get(key) {
                    check_schema(v, sub, &format!("{at}'s `{key}`"))?;
                }
            }
        }
    }
    if let Some(items) = value.as_array() {
        let len = items.len() as u64;
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
            && len < min
        {
            return Err(format!("{at} has {len} items, fewer than {min}"));
        }
        if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
            && len > max
        {
            return Err(format!("{at} has {len} items, more than {max}"));
        }
        if let Some(sub) = schema.get("items") {
            for (i, item) in items.iter().enumerate() {
                check_schema(item, sub, &format!("{at}'s item {}", i + 1))?;
            }
        }
    }
    Ok(())
}

pub(super) async fn custom(
    ask: &Asker<'_>,
    metric: &CustomMetric,
    case: &RagCase,
    plan: &Plan,
) -> Result<Scored> {
    let question = &Question {
        metric,
        case,
        history: ask.history(),
    };
    let d = decide_one(
        ask,
        Kind::Custom,
        Threshold::Test(plan.threshold),
        plan,
        |judge| async move {
            decide::answer(
                plan,
                |s| async move {
                    let answer = judge.ask(question, s).await?;
                    let scored = metric.score(&answer, case)?;
                    // A word read from token probabilities is banded; a
                    // word written or a JSON answer carries no probability.
                    let from_probabilities = matches!(
                        &answer,
                        CustomAnswer::Word { answer, .. } if answer.from_probabilities
                    );
                    Ok((scored, from_probabilities))
                },
                |(s, _): &(CustomScore, bool)| s.score,
                |(_, p)| *p,
            )
            .await
        },
        || ask.review(question, 1, plan.persons),
    )
    .await?;
    let judges = decide::judges_of(&d, ask.judges());
    let review_key = d.review_key.clone();
    if let Some(mut person) = d.person {
        // The person's word read as if the judge had written it, then
        // scored by the metric's own scorer.
        let Reply::Words(words) = &metric.reply else {
            return Err(Error::Reviewed {
                problem: format!(
                    "metric `{}` is answered in JSON: a person's verdict on it has no word to be read as",
                    metric.name
                ),
            });
        };
        let listed: Vec<&str> = words.words().collect();
        if !listed.contains(&person.verdict.as_str()) {
            return Err(Error::Reviewed {
                problem: format!(
                    "`{}` on metric `{}`: it takes {}",
                    person.verdict,
                    metric.name,
                    listed.join(", ")
                ),
            });
        }
        let judge = match &d.value {
            Some(a) => format!("score {:.2}", a.chosen.0.score),
            None => "its reply unreadable".to_owned(),
        };
        person.judge = judge.clone();
        let mut answer =
            crate::parse::answer_word(&person.verdict, None, words, &crate::parse::AnswerAt::First)
                .map_err(|e| Error::Reviewed {
                    problem: format!("`{}` on metric `{}`: {e}", person.verdict, metric.name),
                })?;
        answer.read = person.to_string();
        let answer = CustomAnswer::Word {
            answer,
            reason: String::new(),
        };
        let scored = metric.score(&answer, case)?;
        let reasoning = match metric.scorer {
            Some(_) => scored.reasoning,
            None => format!("{person}."),
        };
        let out = Scored {
            reasoning,
            ..Scored::by_person(person, judge, scored.score, "")
        };
        return Ok(Scored {
            review_key,
            name: Some(metric.name.clone()),
            judges,
            ..out
        });
    }
    let Some(answer) = d.value else {
        unreachable!("decide returns the reply's error when no person decided")
    };
    let mut reasoning = answer.chosen.0.reasoning.clone();
    if d.stage > 0 {
        reasoning = format!("`{}` (escalated): {reasoning}", ask.at(d.stage).model());
    }
    let awaiting = d.unsure.is_some();
    Ok(Scored {
        score: d.p,
        reasoning,
        sample_scores: answer.scores,
        name: Some(metric.name.clone()),
        review_key,
        interval: Interval::of(usize::from(awaiting), 0.0, 1.0),
        unsure: d.unsure,
        judges,
        ..Scored::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_are_checked_against_the_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "tone": {"type": "string", "enum": ["polite", "rude"]},
                "score": {"type": "number", "minimum": 0, "maximum": 1},
                "issues": {"type": "array", "items": {"type": "string"}, "maxItems": 2}
            },
            "required": ["tone", "score"]
        });
        assert!(check_schema(&json!({"tone": "polite", "score": 0.5}), &schema, "it").is_ok());
        let no = |v: Value| check_schema(&v, &schema, "the answer").unwrap_err();
        assert_eq!(no(json!({"tone": "polite"})), "the answer has no `score`");
        assert!(no(json!({"tone": "warm", "score": 1})).contains("not one of"));
        assert!(no(json!({"tone": "rude", "score": 2})).contains("over the maximum 1"));
        assert!(
            no(json!({"tone": "rude", "score": 1, "issues": ["a", "b", "c"]}))
                .contains("more than 2")
        );
        assert!(
            no(json!({"tone": "rude", "score": 1, "issues": [3]}))
                .contains("item 1 should be string")
        );
        assert!(no(json!([1])).contains("should be object"));
    }

    /// Issue 41, item 7: a person's verdict is kept under what the judge
    /// was asked, its question included: one given on "Is it polite?" is
    /// no verdict on "Is it rude?", and facts the template shows count.
    #[test]
    fn a_persons_verdict_is_kept_under_the_question_asked() {
        let case = RagCase::new("Where is my order?")
            .response("Figure it out yourself.")
            .expected_facts(["It ships Monday."]);
        let key = |template: &str, case: &RagCase| {
            let metric = CustomMetric::new("tone", template).unwrap();
            let question = Question {
                metric: &metric,
                case,
                history: None,
            };
            crate::core::judged::items(&question.task_name(), &question.subject())[0]
                .key
                .clone()
        };
        assert_ne!(
            key("Is {{response}} polite? Answer yes or no.", &case),
            key("Is {{response}} rude? Answer yes or no.", &case)
        );
        let other = case.clone().expected_facts(["It ships Friday."]);
        assert_ne!(
            key("Does {{response}} state {{facts}}?", &case),
            key("Does {{response}} state {{facts}}?", &other)
        );
        assert_eq!(
            key("Is {{response}} polite?", &case),
            key("Is {{response}} polite?", &other),
            "facts the judge is not shown are not part of what it judged"
        );
    }

    #[test]
    fn templates_name_only_what_ragaliq_fills() {
        assert!(CustomMetric::new("ok", "{{query}} {{response}} {{context}}").is_ok());
        let e = CustomMetric::new("bad", "{{question}}").unwrap_err();
        assert!(
            e.to_string().contains("`{{question}}` is no placeholder"),
            "{e}"
        );
        assert!(CustomMetric::new("a b", "x").is_err());
        assert_eq!(CustomMetric::new("v", "x").unwrap().version(), "1");
    }
}
