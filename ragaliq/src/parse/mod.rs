//! Parsers for judge replies, public so custom judges can reuse them.
//!
//! Each parser accepts what has exactly one reasonable reading — markdown
//! fences, prose around a single JSON value, `<think>…</think>` preambles,
//! trailing commas, case / whitespace / punctuation variants of labels and
//! keys, `NOT_ENOUGH_INFO` for no evidence, scores written `0.85`, `"85%"`
//! or `"8/10"` — and refuses the rest with a [`ParseError`] that carries the
//! raw reply: empty replies, refusals, prose without JSON, two different JSON
//! values, wrong key names, cut-off replies, unknown labels, scores outside
//! [0, 1] or not a number.
//!
//! ```
//! use ragaliq::parse;
//! use ragaliq::Verdict;
//!
//! let reply = "<think>Claim 1 is in passage 2.</think>\n```json\n{\"verdicts\": [\
//!     {\"claim\": 1, \"verdict\": \"SUPPORTED\", \"evidence\": \"30 days\", \"confidence\": \"90%\"},\
//! ]}\n```";
//! let verdicts = parse::verdicts(reply, 1).unwrap();
//! assert_eq!(verdicts[0].verdict, Verdict::Supported);
//! assert_eq!(verdicts[0].confidence, Some(0.9));
//!
//! let err = parse::claims("I'm sorry, I can't do that.").unwrap_err();
//! assert_eq!(err.kind.name(), "refusal");
//! assert_eq!(err.raw, "I'm sorry, I can't do that.");
//! ```

mod json;

use crate::verdict::Verdict;
use serde_json::{Map, Value};
use std::fmt;

/// A judge reply that could not be read, with the reply itself.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub struct ParseError {
    /// What was wrong.
    pub kind: ParseErrorKind,
    /// The judge's reply, verbatim.
    pub raw: String,
}

impl ParseError {
    pub(crate) fn new(kind: ParseErrorKind, raw: &str) -> Self {
        ParseError {
            kind,
            raw: raw.to_owned(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 2000;
        write!(
            f,
            "unreadable judge reply: {}\n--- raw reply ---\n",
            self.kind
        )?;
        if self.raw.len() > SHOWN {
            let cut = (0..=SHOWN)
                .rev()
                .find(|&i| self.raw.is_char_boundary(i))
                .unwrap_or(0);
            write!(
                f,
                "{}\n[… {} more bytes]",
                &self.raw[..cut],
                self.raw.len() - cut
            )
        } else {
            f.write_str(&self.raw)
        }
    }
}

/// Why a reply was refused.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The reply is empty or only whitespace (or only a reasoning block).
    Empty,
    /// The judge declined to answer.
    Refusal,
    /// The reply holds no JSON value.
    NoJson,
    /// The JSON (or a reasoning block) was cut off before it closed.
    Truncated,
    /// The reply holds more than one different JSON value.
    Ambiguous {
        /// How many different values.
        values: usize,
    },
    /// The JSON does not have the expected keys or types.
    WrongShape {
        /// What was expected and what was found.
        detail: String,
    },
    /// A verdict label that is not one of the four (or a synonym).
    UnknownLabel {
        /// The label as the judge wrote it.
        label: String,
    },
    /// A batch does not hold exactly one item per claim or passage.
    CountMismatch {
        /// Items asked for.
        expected: usize,
        /// Items answered.
        got: usize,
    },
    /// An item refers to a claim or passage number that does not exist, or
    /// two items give different answers for the same number.
    BadIndex {
        /// What was wrong.
        detail: String,
    },
    /// A score or confidence that is not a number.
    InvalidScore {
        /// The value as written.
        value: String,
    },
    /// A score or confidence outside [0, 1].
    ScoreOutOfRange {
        /// The value as written.
        value: String,
    },
}

impl ParseErrorKind {
    /// A short stable name (`empty`, `refusal`, `no_json`, `truncated`,
    /// `ambiguous`, `wrong_shape`, `unknown_label`, `count_mismatch`,
    /// `bad_index`, `invalid_score`, `score_out_of_range`).
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            ParseErrorKind::Empty => "empty",
            ParseErrorKind::Refusal => "refusal",
            ParseErrorKind::NoJson => "no_json",
            ParseErrorKind::Truncated => "truncated",
            ParseErrorKind::Ambiguous { .. } => "ambiguous",
            ParseErrorKind::WrongShape { .. } => "wrong_shape",
            ParseErrorKind::UnknownLabel { .. } => "unknown_label",
            ParseErrorKind::CountMismatch { .. } => "count_mismatch",
            ParseErrorKind::BadIndex { .. } => "bad_index",
            ParseErrorKind::InvalidScore { .. } => "invalid_score",
            ParseErrorKind::ScoreOutOfRange { .. } => "score_out_of_range",
        }
    }
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseErrorKind::Empty => f.write_str("the reply is empty"),
            ParseErrorKind::Refusal => f.write_str("the judge refused to answer"),
            ParseErrorKind::NoJson => f.write_str("the reply contains no JSON"),
            ParseErrorKind::Truncated => {
                f.write_str("the reply was cut off before its JSON closed")
            }
            ParseErrorKind::Ambiguous { values } => {
                write!(f, "the reply contains {values} different JSON values")
            }
            ParseErrorKind::WrongShape { detail } => write!(f, "unexpected JSON shape: {detail}"),
            ParseErrorKind::UnknownLabel { label } => write!(
                f,
                "unknown verdict `{label}`; expected supported, partially_supported, no_evidence or contradicted"
            ),
            ParseErrorKind::CountMismatch { expected, got } => {
                write!(f, "expected {expected} items, the reply has {got}")
            }
            ParseErrorKind::BadIndex { detail } => write!(f, "bad item number: {detail}"),
            ParseErrorKind::InvalidScore { value } => write!(f, "`{value}` is not a score"),
            ParseErrorKind::ScoreOutOfRange { value } => {
                write!(f, "score `{value}` is outside [0, 1]")
            }
        }
    }
}

/// One verdict as the judge gave it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedVerdict {
    /// The verdict.
    pub verdict: Verdict,
    /// The quoted evidence; empty when none.
    pub evidence: String,
    /// The confidence in [0, 1], when given.
    pub confidence: Option<f64>,
}

/// A score with the judge's reasoning.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoredReply {
    /// In [0, 1].
    pub score: f64,
    /// May be empty.
    pub reasoning: String,
}

/// One passage's relevance as the judge gave it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedRelevance {
    /// Whether the passage helps answer the query.
    pub relevant: bool,
    /// The judge's reason; may be empty.
    pub reason: String,
}

/// A claims list: `{"claims": ["…", …]}` (or a bare array of strings).
///
/// ```
/// let claims = ragaliq::parse::claims(r#"{"claims": ["A is B.", "C is D."]}"#).unwrap();
/// assert_eq!(claims, ["A is B.", "C is D."]);
/// assert_eq!(ragaliq::parse::claims(r#"{"claims": []}"#).unwrap().len(), 0);
/// assert!(ragaliq::parse::claims(r#"{"statements": ["A."]}"#).is_err());
/// ```
pub fn claims(raw: &str) -> Result<Vec<String>, ParseError> {
    let value = json::extract(raw)?;
    let shape = |detail: String| ParseError::new(ParseErrorKind::WrongShape { detail }, raw);
    let items = list(&value, "claims").ok_or_else(|| {
        shape(format!(
            "expected {{\"claims\": [...]}}, found {}",
            describe(&value)
        ))
    })?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let text = match item {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) => {
                    field(o, &["claim", "text", "statement"]).and_then(Value::as_str)
                }
                _ => None,
            };
            match text.map(str::trim) {
                Some(t) if !t.is_empty() => Ok(t.to_owned()),
                Some(_) => Err(shape(format!("claim {} is empty", i + 1))),
                None => Err(shape(format!(
                    "claim {} is {}, not a string",
                    i + 1,
                    describe(item)
                ))),
            }
        })
        .collect()
}

/// One verdict: `{"verdict": "…", "evidence": "…", "confidence": 0.9}`.
///
/// ```
/// use ragaliq::{parse, Verdict};
/// let v = parse::verdict(r#"{"verdict": "Not Enough Info", "evidence": ""}"#).unwrap();
/// assert_eq!(v.verdict, Verdict::NoEvidence);
/// assert_eq!(v.confidence, None);
/// ```
pub fn verdict(raw: &str) -> Result<ParsedVerdict, ParseError> {
    let value = json::extract(raw)?;
    let obj = match &value {
        Value::Object(o) if field(o, &["verdict"]).is_some() => o,
        // A one-item batch has the same single reading.
        _ => match list(&value, "verdicts") {
            Some([Value::Object(o)]) => o,
            _ => {
                return Err(ParseError::new(
                    ParseErrorKind::WrongShape {
                        detail: format!(
                            "expected {{\"verdict\": ...}}, found {}",
                            describe(&value)
                        ),
                    },
                    raw,
                ));
            }
        },
    };
    read_verdict(obj, raw)
}

/// A batch of verdicts for `n` claims, matched by claim number (1-based).
/// Exactly one verdict per claim, or an error: never truncated, never padded.
///
/// ```
/// use ragaliq::parse;
/// let reply = r#"{"verdicts": [
///     {"claim": 2, "verdict": "contradicted", "evidence": "No."},
///     {"claim": 1, "verdict": "supported", "evidence": "Yes."}
/// ]}"#;
/// let v = parse::verdicts(reply, 2).unwrap();
/// assert_eq!(v[0].evidence, "Yes.");   // matched by number, not position
/// assert_eq!(parse::verdicts(reply, 3).unwrap_err().kind.name(), "count_mismatch");
/// ```
pub fn verdicts(raw: &str, n: usize) -> Result<Vec<ParsedVerdict>, ParseError> {
    complete(verdicts_partial(raw, n)?, n, raw)
}

/// Every slot filled, or a count mismatch: never truncated, never padded.
fn complete<T>(partial: Vec<Option<T>>, n: usize, raw: &str) -> Result<Vec<T>, ParseError> {
    let got = partial.iter().filter(|v| v.is_some()).count();
    if got != n {
        return Err(ParseError::new(
            ParseErrorKind::CountMismatch { expected: n, got },
            raw,
        ));
    }
    Ok(partial.into_iter().flatten().collect())
}

/// Like [`verdicts`], but a batch that names only some claims is returned with
/// `None` for the missing ones, so the caller can re-ask just those.
///
/// Items out of range, items that disagree on one claim, and unnumbered
/// batches of the wrong length are errors (`bad_index`, `count_mismatch`):
/// such a batch cannot be matched to claims at all.
pub fn verdicts_partial(raw: &str, n: usize) -> Result<Vec<Option<ParsedVerdict>>, ParseError> {
    let value = json::extract(raw)?;
    let items = batch_items(&value, "verdicts", raw)?;
    indexed(&items, n, &["claim", "index", "id", "n"], raw, |o| {
        read_verdict(o, raw)
    })
}

/// A score with reasoning: `{"reasoning": "…", "score": 0.8}`. Scores may be
/// written `0.8`, `"0.8"`, `"80%"` or `"8/10"`.
///
/// ```
/// let s = ragaliq::parse::score(r#"{"score": "8/10", "reasoning": "Mostly answers it."}"#).unwrap();
/// assert_eq!(s.score, 0.8);
/// assert_eq!(ragaliq::parse::score(r#"{"score": 8}"#).unwrap_err().kind.name(), "score_out_of_range");
/// ```
pub fn score(raw: &str) -> Result<ScoredReply, ParseError> {
    let value = json::extract(raw)?;
    let Some(obj) = value.as_object() else {
        return Err(ParseError::new(
            ParseErrorKind::WrongShape {
                detail: format!("expected {{\"score\": ...}}, found {}", describe(&value)),
            },
            raw,
        ));
    };
    let score = field(obj, &["score"]).ok_or_else(|| {
        ParseError::new(
            ParseErrorKind::WrongShape {
                detail: format!("no `score` key (keys: {})", keys(obj)),
            },
            raw,
        )
    })?;
    Ok(ScoredReply {
        score: read_score(score).map_err(|k| ParseError::new(k, raw))?,
        reasoning: text_field(obj, &["reasoning", "reason", "explanation"]),
    })
}

/// Relevance verdicts for `n` passages, matched by passage number (1-based):
/// `{"verdicts": [{"passage": 1, "relevant": true, "reason": "…"}, …]}`.
///
/// ```
/// let r = ragaliq::parse::passage_relevance(
///     r#"{"verdicts": [{"passage": 1, "relevant": "yes"}, {"passage": 2, "relevant": false}]}"#, 2,
/// ).unwrap();
/// assert!(r[0].relevant && !r[1].relevant);
/// ```
pub fn passage_relevance(raw: &str, n: usize) -> Result<Vec<ParsedRelevance>, ParseError> {
    let value = json::extract(raw)?;
    let items = batch_items(&value, "verdicts", raw)?;
    let partial = indexed(&items, n, &["passage", "index", "id", "n"], raw, |o| {
        let relevant = match field(o, &["relevant", "verdict", "relevance"]) {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => match norm(s).as_str() {
                "yes" | "true" | "relevant" | "useful" => true,
                "no" | "false" | "irrelevant" | "notrelevant" | "notuseful" => false,
                _ => {
                    return Err(ParseError::new(
                        ParseErrorKind::UnknownLabel { label: s.clone() },
                        raw,
                    ));
                }
            },
            other => {
                return Err(ParseError::new(
                    ParseErrorKind::WrongShape {
                        detail: format!(
                            "`relevant` should be true or false, found {}",
                            other.map_or("nothing".into(), describe)
                        ),
                    },
                    raw,
                ));
            }
        };
        Ok(ParsedRelevance {
            relevant,
            reason: text_field(o, &["reason", "reasoning", "evidence"]),
        })
    })?;
    complete(partial, n, raw)
}

/// A generated question with its grounded answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedCase {
    /// The question.
    pub question: String,
    /// The answer, from the document.
    pub answer: String,
}

/// Generated cases: `{"cases": [{"question": "…", "answer": "…"}, …]}`.
/// An empty list is valid (a document with nothing to ask about).
///
/// ```
/// let cases = ragaliq::parse::generated_cases(
///     r#"{"cases": [{"question": "How long?", "answer": "30 days."}]}"#,
/// ).unwrap();
/// assert_eq!(cases[0].answer, "30 days.");
/// ```
pub fn generated_cases(raw: &str) -> Result<Vec<GeneratedCase>, ParseError> {
    let value = json::extract(raw)?;
    let items = batch_items(&value, "cases", raw)?;
    items
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let question = text_field(o, &["question", "query"]);
            let answer = text_field(o, &["answer", "expected_answer"]);
            if question.is_empty() || answer.is_empty() {
                return Err(ParseError::new(
                    ParseErrorKind::WrongShape {
                        detail: format!(
                            "case {} needs a non-empty `question` and `answer` (keys: {})",
                            i + 1,
                            keys(o)
                        ),
                    },
                    raw,
                ));
            }
            Ok(GeneratedCase { question, answer })
        })
        .collect()
}

/// The objects of a batch: `{"<key>": [...]}` or a bare array.
fn batch_items<'v>(
    value: &'v Value,
    key: &str,
    raw: &str,
) -> Result<Vec<&'v Map<String, Value>>, ParseError> {
    let shape = |detail: String| ParseError::new(ParseErrorKind::WrongShape { detail }, raw);
    let items = list(value, key).ok_or_else(|| {
        shape(format!(
            "expected {{\"{key}\": [...]}}, found {}",
            describe(value)
        ))
    })?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            item.as_object().ok_or_else(|| {
                shape(format!(
                    "item {} is {}, not an object",
                    i + 1,
                    describe(item)
                ))
            })
        })
        .collect()
}

/// Places each item at its 1-based number. Unnumbered items are placed by
/// position only when there are exactly `n` of them.
fn indexed<T: PartialEq>(
    items: &[&Map<String, Value>],
    n: usize,
    index_keys: &[&str],
    raw: &str,
    read: impl Fn(&Map<String, Value>) -> Result<T, ParseError>,
) -> Result<Vec<Option<T>>, ParseError> {
    let bad = |detail: String| ParseError::new(ParseErrorKind::BadIndex { detail }, raw);
    let numbers: Vec<Option<&Value>> = items.iter().map(|o| field(o, index_keys)).collect();
    let numbered = numbers.iter().filter(|i| i.is_some()).count();
    let mut out: Vec<Option<T>> = (0..n).map(|_| None).collect();
    if numbered == 0 {
        if items.len() != n {
            return Err(ParseError::new(
                ParseErrorKind::CountMismatch {
                    expected: n,
                    got: items.len(),
                },
                raw,
            ));
        }
        for (slot, item) in out.iter_mut().zip(items) {
            *slot = Some(read(item)?);
        }
        return Ok(out);
    }
    if numbered != items.len() {
        return Err(ParseError::new(
            ParseErrorKind::WrongShape {
                detail: format!(
                    "{} of {} items have no `{}` number",
                    items.len() - numbered,
                    items.len(),
                    index_keys[0]
                ),
            },
            raw,
        ));
    }
    for (item, number) in items.iter().zip(numbers) {
        let number = number.expect("all items are numbered");
        let k =
            read_index(number).ok_or_else(|| bad(format!("`{number}` is not an item number")))?;
        if k == 0 || k > n {
            return Err(bad(format!("item {k} does not exist (there are {n})")));
        }
        let value = read(item)?;
        match &out[k - 1] {
            Some(prev) if *prev != value => {
                return Err(bad(format!("item {k} is answered twice, differently")));
            }
            _ => out[k - 1] = Some(value),
        }
    }
    Ok(out)
}

fn read_index(v: &Value) -> Option<usize> {
    match v {
        Value::Number(n) => n.as_u64().and_then(|k| usize::try_from(k).ok()),
        Value::String(s) => s
            .trim()
            .trim_start_matches(|c: char| !c.is_ascii_digit())
            .parse()
            .ok(),
        _ => None,
    }
}

fn read_verdict(obj: &Map<String, Value>, raw: &str) -> Result<ParsedVerdict, ParseError> {
    let label = match field(obj, &["verdict", "label"]) {
        Some(Value::String(s)) => s,
        other => {
            return Err(ParseError::new(
                ParseErrorKind::WrongShape {
                    detail: format!(
                        "`verdict` should be a string, found {} (keys: {})",
                        other.map_or("nothing".into(), describe),
                        keys(obj)
                    ),
                },
                raw,
            ));
        }
    };
    let verdict = Verdict::from_label(label).ok_or_else(|| {
        ParseError::new(
            ParseErrorKind::UnknownLabel {
                label: label.clone(),
            },
            raw,
        )
    })?;
    let confidence = match field(obj, &["confidence"]) {
        None | Some(Value::Null) => None,
        Some(v) => Some(read_score(v).map_err(|k| ParseError::new(k, raw))?),
    };
    Ok(ParsedVerdict {
        verdict,
        evidence: text_field(obj, &["evidence", "reason", "reasoning"]),
        confidence,
    })
}

/// Reads `0.85`, `"0.85"`, `"85%"` or `"8/10"` as a number in [0, 1].
fn read_score(v: &Value) -> Result<f64, ParseErrorKind> {
    let written = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let invalid = || ParseErrorKind::InvalidScore {
        value: written.clone(),
    };
    let out_of_range = || ParseErrorKind::ScoreOutOfRange {
        value: written.clone(),
    };
    let number = |s: &str| -> Result<f64, ParseErrorKind> {
        let x: f64 = s.trim().parse().map_err(|_| invalid())?;
        if x.is_finite() { Ok(x) } else { Err(invalid()) }
    };
    let x = match v {
        Value::Number(n) => n.as_f64().ok_or_else(invalid)?,
        Value::String(s) => {
            let s = s.trim();
            if let Some(p) = s.strip_suffix('%') {
                let p = number(p)?;
                if !(0.0..=100.0).contains(&p) {
                    return Err(out_of_range());
                }
                p / 100.0
            } else if let Some((a, b)) = s.split_once('/') {
                let (a, b) = (number(a)?, number(b)?);
                if b <= 0.0 || !(0.0..=b).contains(&a) {
                    return Err(out_of_range());
                }
                a / b
            } else {
                number(s)?
            }
        }
        _ => return Err(invalid()),
    };
    if (0.0..=1.0).contains(&x) {
        Ok(x)
    } else {
        Err(out_of_range())
    }
}

/// `value[key]` as an array (key matched loosely), or `value` itself when it
/// is a bare array.
fn list<'v>(value: &'v Value, key: &str) -> Option<&'v [Value]> {
    match value {
        Value::Array(a) => Some(a),
        Value::Object(o) => field(o, &[key])
            .and_then(Value::as_array)
            .map(Vec::as_slice),
        _ => None,
    }
}

/// The first of `names` present, comparing keys without case or punctuation.
fn field<'v>(obj: &'v Map<String, Value>, names: &[&str]) -> Option<&'v Value> {
    names.iter().find_map(|name| {
        obj.iter()
            .find(|(k, _)| norm(k) == norm(name))
            .map(|(_, v)| v)
    })
}

fn text_field(obj: &Map<String, Value>, names: &[&str]) -> String {
    match field(obj, names) {
        Some(Value::String(s)) => s.trim().to_owned(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn norm(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn keys(obj: &Map<String, Value>) -> String {
    let k: Vec<&str> = obj.keys().map(String::as_str).collect();
    if k.is_empty() {
        "none".into()
    } else {
        k.join(", ")
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Number(n) => format!("the number {n}"),
        Value::String(_) => "a string".into(),
        Value::Array(a) => format!("an array of {}", a.len()),
        Value::Object(o) => format!("an object with keys {}", keys(o)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_in_every_accepted_spelling() {
        for (v, want) in [
            (serde_json::json!(0.85), 0.85),
            (serde_json::json!("0.85"), 0.85),
            (serde_json::json!("85%"), 0.85),
            (serde_json::json!("8/10"), 0.8),
            (serde_json::json!(1), 1.0),
        ] {
            assert_eq!(read_score(&v).unwrap(), want, "{v}");
        }
    }

    #[test]
    fn bad_scores_are_refused() {
        for (v, kind) in [
            (serde_json::json!(1.5), "score_out_of_range"),
            (serde_json::json!(-0.1), "score_out_of_range"),
            (serde_json::json!("NaN"), "invalid_score"),
            (serde_json::json!("inf"), "invalid_score"),
            (serde_json::json!("120%"), "score_out_of_range"),
            (serde_json::json!("11/10"), "score_out_of_range"),
            (serde_json::json!("3/0"), "score_out_of_range"),
            (serde_json::json!(null), "invalid_score"),
        ] {
            assert_eq!(read_score(&v).unwrap_err().name(), kind, "{v}");
        }
    }

    #[test]
    fn partial_batch_leaves_gaps_for_re_asking() {
        let raw = r#"{"verdicts":[{"claim":1,"verdict":"supported"},{"claim":3,"verdict":"no_evidence"}]}"#;
        let p = verdicts_partial(raw, 3).unwrap();
        assert!(p[0].is_some() && p[1].is_none() && p[2].is_some());
        let e = verdicts(raw, 3).unwrap_err();
        assert_eq!(
            e.kind,
            ParseErrorKind::CountMismatch {
                expected: 3,
                got: 2
            }
        );
    }

    #[test]
    fn conflicting_duplicates_and_out_of_range_are_bad_indexes() {
        let dup = r#"{"verdicts":[{"claim":1,"verdict":"supported"},{"claim":1,"verdict":"contradicted"}]}"#;
        assert_eq!(
            verdicts_partial(dup, 2).unwrap_err().kind.name(),
            "bad_index"
        );
        let same =
            r#"{"verdicts":[{"claim":1,"verdict":"supported"},{"claim":1,"verdict":"supported"}]}"#;
        assert!(verdicts_partial(same, 1).is_ok());
        let far = r#"{"verdicts":[{"claim":4,"verdict":"supported"}]}"#;
        assert_eq!(
            verdicts_partial(far, 1).unwrap_err().kind.name(),
            "bad_index"
        );
    }

    #[test]
    fn display_carries_the_raw_reply() {
        let e = claims("nothing useful").unwrap_err();
        let text = e.to_string();
        assert!(text.contains("contains no JSON"), "{text}");
        assert!(text.ends_with("nothing useful"), "{text}");
    }
}
