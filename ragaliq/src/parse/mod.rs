//! Parsers for judge replies, public so custom judges can reuse them.
//!
//! Each parser accepts what has exactly one reasonable reading and refuses
//! the rest with a [`ParseError`] that carries the raw reply. The rules:
//!
//! 1. **Finding the JSON.** An empty reply is an error. Everything up to
//!    the last `</think>` is dropped; an unclosed `<think>` is an error. The
//!    reply must hold exactly one JSON value; prose, fences, role headers,
//!    chat-template tokens and wrapper tags around it are ignored,
//!    byte-identical copies count once, and no number is picked out of
//!    prose.
//! 2. **Repairs with one meaning:** trailing commas, a missing comma
//!    between array items, single quotes, `True`/`False`/`None`, comments,
//!    raw newlines in strings, invalid escapes (kept as written), smart
//!    quotes, unquoted keys, a bare verdict label, `.8`. Not repaired:
//!    unbalanced brackets, broken key quoting, an unescaped `"` in a string,
//!    lists elided with `...`, truncation (except that a single verdict or a
//!    relevance score is kept when its pair was complete and followed by a
//!    comma before the break).
//! 3. **Shape.** Keys match case-insensitively after trimming; other names
//!    for them (`label`, `truths`, `relevance_score`, translations) are
//!    errors. One single-key wrapper (`{"json": …}`, `{"args": …}`,
//!    `{"verdicts": [one verdict]}`) is unwrapped, also when it holds the
//!    answer as a JSON string. A bare list of strings is a claims list; a
//!    bare verdict object is a batch of one; extra keys are ignored.
//! 4. **Labels** are trimmed, stripped of outer punctuation and quotes,
//!    upper-cased, spaces and hyphens made `_`, and then must be one of the
//!    [listed spellings](crate::Verdict::from_label); anything else (`no`,
//!    `false`, `0`, `null`, `NOT SUPPORTED`, a label with a qualifier) is an
//!    error, and in a batch one bad item fails the batch.
//! 5. **Scores** are a number, or a string holding a number, `N%` or `a/b`,
//!    finite and in [0, 1], never clamped or rescaled. **Claim numbers** are
//!    positive whole numbers (`"-1"` and `"#1"` are not claim 1).
//! 6. A text that only echoes the prompt's placeholder (`"<claim>"`,
//!    `"<your reasoning>"`, `"..."`) is an error, not a claim or a reason.
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
mod word;

use crate::core::Verdict;
pub(crate) use json::canonical;
use json::{Found, J};
use std::fmt;
pub use word::{
    AnswerAt, AnswerWords, MIN_ANSWER_MASS, WordAnswer, YesNo, answer_word, yes_no, yes_or_no,
};
pub(crate) use word::{cut_in_reasoning, tokens_read};

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
    /// The JSON, or a reasoning block before the answer, was cut off
    /// before it closed.
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
    /// The judge echoed a placeholder from the prompt (`"<claim>"`,
    /// `"<your reasoning>"`, `"..."`) instead of writing its own text.
    Placeholder {
        /// The placeholder as echoed.
        value: String,
    },
    /// A batch left more claims unmatched than are re-asked one by one.
    Unmatched {
        /// Claims without a verdict.
        unmatched: usize,
        /// The most re-asked ([`MAX_REASKS`](crate::judge::MAX_REASKS)).
        limit: usize,
    },
    /// A question answered in a word (yes or no, a score, a custom
    /// metric's words) with none of its words where it asked for one, and
    /// no token probabilities there that give one.
    NotYesNo {
        /// What stands where the answer was asked for (up to the next
        /// blank, at most 40 characters; empty when nothing does).
        word: String,
    },
    /// A question that asks for its answer after a marker
    /// ([`AnswerAt::After`]) answered without the marker.
    NoAnswerMarker {
        /// The marker.
        marker: String,
    },
}

impl ParseErrorKind {
    /// A short stable name (`empty`, `refusal`, `no_json`, `truncated`,
    /// `ambiguous`, `wrong_shape`, `unknown_label`, `count_mismatch`,
    /// `bad_index`, `invalid_score`, `score_out_of_range`, `placeholder`,
    /// `unmatched`, `not_yes_no`, `no_answer_marker`).
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
            ParseErrorKind::Placeholder { .. } => "placeholder",
            ParseErrorKind::Unmatched { .. } => "unmatched",
            ParseErrorKind::NotYesNo { .. } => "not_yes_no",
            ParseErrorKind::NoAnswerMarker { .. } => "no_answer_marker",
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
                f.write_str("the reply was cut off before its JSON or its reasoning block closed")
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
            ParseErrorKind::Placeholder { value } => write!(
                f,
                "the judge echoed the prompt's placeholder `{value}` instead of an answer"
            ),
            ParseErrorKind::Unmatched { unmatched, limit } => write!(
                f,
                "the batch left {unmatched} claims without a verdict; ragaliq re-asks at most {limit} claims one by one, so the batch is refused"
            ),
            ParseErrorKind::NotYesNo { word } if word.is_empty() => f.write_str(
                "no answer word where the question asked for one, and no token probabilities there that give one",
            ),
            ParseErrorKind::NotYesNo { word } => write!(
                f,
                "`{word}` stands where the question asked for its answer word, and no token probabilities there give one"
            ),
            ParseErrorKind::NoAnswerMarker { marker } => write!(
                f,
                "the reply has no `{marker}`, after which the question asked for its answer word"
            ),
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
    /// P(relevant), when read from a yes/no answer's token probabilities.
    pub probability: Option<f64>,
}

type Obj = [(String, J)];

/// The value a reader wants, after unwrapping one single-key wrapper
/// (`{"json": {…}}`, `{"args": "{…}"}`) when the top level is not it. Only
/// an object is unwrapped, also when written as a JSON string: a key whose
/// value is a bare list is another name for the expected key (`truths` for
/// `claims`), which is an error, not a wrapper.
fn unwrap_once(value: J, accepts: impl Fn(&J) -> bool) -> J {
    if accepts(&value) {
        return value;
    }
    if let J::Object(pairs) = &value
        && let [(_, inner)] = pairs.as_slice()
    {
        let inner = match inner {
            J::String(text) => match json::extract(text) {
                Ok(Found::Value(v)) => v,
                _ => return value,
            },
            other => other.clone(),
        };
        if matches!(inner, J::Object(_)) && accepts(&inner) {
            return inner;
        }
    }
    value
}

/// The value of `key`: keys compare case-insensitively after trimming; a
/// key given twice with different values is an error.
fn get<'a>(obj: &'a Obj, key: &str, raw: &str) -> Result<Option<&'a J>, ParseError> {
    let mut found: Option<&J> = None;
    for (k, v) in obj {
        if k.trim().eq_ignore_ascii_case(key) {
            match found {
                Some(prev) if prev != v => {
                    return Err(shape(
                        format!("the key `{key}` is given twice, differently"),
                        raw,
                    ));
                }
                _ => found = Some(v),
            }
        }
    }
    Ok(found)
}

fn has(v: &J, key: &str) -> bool {
    matches!(v, J::Object(o) if o.iter().any(|(k, _)| k.trim().eq_ignore_ascii_case(key)))
}

fn shape(detail: String, raw: &str) -> ParseError {
    ParseError::new(ParseErrorKind::WrongShape { detail }, raw)
}

fn keys(obj: &Obj) -> String {
    let k: Vec<&str> = obj.iter().map(|(k, _)| k.as_str()).collect();
    if k.is_empty() {
        "none".into()
    } else {
        k.join(", ")
    }
}

/// Whether a text only echoes a prompt placeholder: `<anything>`, `...`.
fn is_placeholder(text: &str) -> bool {
    let t = text.trim();
    if t == "..." || t == "…" {
        return true;
    }
    t.len() >= 3
        && t.len() <= 80
        && t.starts_with('<')
        && t.ends_with('>')
        && !t[1..t.len() - 1].contains(['<', '>'])
}

/// An optional text field: absent or null is empty; a placeholder is an error.
fn text_field(obj: &Obj, key: &str, raw: &str) -> Result<String, ParseError> {
    match get(obj, key, raw)? {
        None | Some(J::Null) => Ok(String::new()),
        Some(J::String(s)) if is_placeholder(s) => Err(ParseError::new(
            ParseErrorKind::Placeholder {
                value: s.trim().to_owned(),
            },
            raw,
        )),
        Some(J::String(s)) => Ok(s.trim().to_owned()),
        Some(other) => Err(shape(
            format!("`{key}` should be a string, found {}", other.describe()),
            raw,
        )),
    }
}

/// A claims list: `{"claims": ["…", …]}` or a bare array of strings.
///
/// ```
/// let claims = ragaliq::parse::claims(r#"{"claims": ["A is B.", "C is D."]}"#).unwrap();
/// assert_eq!(claims, ["A is B.", "C is D."]);
/// assert_eq!(ragaliq::parse::claims(r#"{"claims": []}"#).unwrap().len(), 0);
/// assert!(ragaliq::parse::claims(r#"{"statements": ["A."]}"#).is_err());
/// assert_eq!(ragaliq::parse::claims(r#"{"claims": ["<claim>"]}"#).unwrap_err().kind.name(), "placeholder");
/// ```
pub fn claims(raw: &str) -> Result<Vec<String>, ParseError> {
    string_list(raw, "claims", "claim")
}

/// Evaluation steps: `{"steps": ["…", …]}` or a bare array of strings, at
/// least one.
///
/// ```
/// let steps = ragaliq::parse::steps(r#"{"steps": ["Find the policy number.", "Look for a promise."]}"#).unwrap();
/// assert_eq!(steps.len(), 2);
/// assert_eq!(ragaliq::parse::steps(r#"{"steps": []}"#).unwrap_err().kind.name(), "wrong_shape");
/// ```
pub fn steps(raw: &str) -> Result<Vec<String>, ParseError> {
    let steps = string_list(raw, "steps", "step")?;
    if steps.is_empty() {
        return Err(shape("the list of steps is empty".into(), raw));
    }
    Ok(steps)
}

/// A list of strings under `key` (`{"claims": [...]}`), or a bare array;
/// an item may also be an object holding the string under `item`.
fn string_list(raw: &str, key: &str, item: &str) -> Result<Vec<String>, ParseError> {
    let value = json::extract_complete(raw)?;
    let value = unwrap_once(value, |v| has(v, key) || is_string_list(v));
    let items: Vec<J> = match &value {
        J::Array(items) if is_string_list(&value) => items.clone(),
        J::Object(o) => match get(o, key, raw)? {
            Some(J::Array(items)) => items.clone(),
            Some(other) => {
                return Err(shape(
                    format!("`{key}` should be a list, found {}", other.describe()),
                    raw,
                ));
            }
            None => {
                return Err(shape(
                    format!(
                        "expected {{\"{key}\": [...]}}, found an object with keys {}",
                        keys(o)
                    ),
                    raw,
                ));
            }
        },
        other => {
            return Err(shape(
                format!("expected {{\"{key}\": [...]}}, found {}", other.describe()),
                raw,
            ));
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let text = match entry {
                J::String(s) => Some(s.clone()),
                J::Object(o) => match get(o, item, raw)? {
                    Some(J::String(s)) => Some(s.clone()),
                    _ => None,
                },
                _ => None,
            };
            match text.as_deref().map(str::trim) {
                Some(t) if is_placeholder(t) => Err(ParseError::new(
                    ParseErrorKind::Placeholder {
                        value: t.to_owned(),
                    },
                    raw,
                )),
                Some(t) if !t.is_empty() => Ok(t.to_owned()),
                Some(_) => Err(shape(format!("{item} {} is empty", i + 1), raw)),
                None => Err(shape(
                    format!("{item} {} is {}, not a string", i + 1, entry.describe()),
                    raw,
                )),
            }
        })
        .collect()
}

fn is_string_list(v: &J) -> bool {
    matches!(v, J::Array(items) if items.iter().all(|i| matches!(i, J::String(_))))
}

/// One verdict: `{"verdict": "…", "evidence": "…", "confidence": 0.9}`.
///
/// A reply cut off after its `verdict` pair (and the comma after it) is
/// still read: the verdict was complete.
///
/// ```
/// use ragaliq::{parse, Verdict};
/// let v = parse::verdict(r#"{"verdict": "Not Enough Info", "evidence": ""}"#).unwrap();
/// assert_eq!(v.verdict, Verdict::NoEvidence);
/// assert_eq!(v.confidence, None);
/// let cut = parse::verdict(r#"{"verdict": "contradicted", "evidence": "The passage sa"#).unwrap();
/// assert_eq!(cut.verdict, Verdict::Contradicted);
/// assert_eq!(parse::verdict("Supported.").unwrap().verdict, Verdict::Supported);
/// ```
pub fn verdict(raw: &str) -> Result<ParsedVerdict, ParseError> {
    // A reply that is nothing but one verdict word (what a one-word prompt
    // asks for) is that verdict, with no evidence.
    if let Some(verdict) = Verdict::from_label(raw).filter(|_| raw.trim().len() <= 40) {
        return Ok(ParsedVerdict {
            verdict,
            evidence: String::new(),
            confidence: None,
        });
    }
    let value = match json::extract(raw)? {
        Found::Value(v) => v,
        Found::Truncated(pairs) if has(&J::Object(pairs.clone()), "verdict") => {
            return read_verdict(&pairs, raw);
        }
        Found::Truncated(_) => return Err(ParseError::new(ParseErrorKind::Truncated, raw)),
    };
    let value = unwrap_once(value, |v| has(v, "verdict") || has(v, "verdicts"));
    match &value {
        J::Object(o) if has(&value, "verdict") => read_verdict(o, raw),
        // `{"verdicts": [one verdict]}`: the batch form around one verdict.
        J::Object(o) if has(&value, "verdicts") => match get(o, "verdicts", raw)? {
            Some(J::Array(items)) => match items.as_slice() {
                [J::Object(one)] => read_verdict(one, raw),
                _ => Err(shape(
                    format!("expected one verdict, found a list of {}", items.len()),
                    raw,
                )),
            },
            Some(J::Object(one)) => read_verdict(one, raw),
            _ => Err(shape("`verdicts` should hold one verdict".into(), raw)),
        },
        J::Array(items) => match items.as_slice() {
            [J::Object(o)] => read_verdict(o, raw),
            _ => Err(shape(
                format!("expected one verdict, found a list of {}", items.len()),
                raw,
            )),
        },
        J::Object(o) => Err(shape(format!("no `verdict` key (keys: {})", keys(o)), raw)),
        other => Err(shape(
            format!("expected {{\"verdict\": ...}}, found {}", other.describe()),
            raw,
        )),
    }
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
    let value = json::extract_complete(raw)?;
    let items = batch_items(value, "verdicts", "verdict", raw)?;
    indexed(&items, n, "claim", raw, |o| read_verdict(o, raw))
}

/// A batch read item by item: each readable item in its slot, and why the
/// others were set aside. One unreadable item (a placeholder echoed, an
/// unknown label, a missing field, a number out of range or given twice)
/// costs only its own slot, never its neighbours'.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch<T> {
    /// One slot per claim (or passage), in order: `None` where no readable
    /// item answers it.
    pub items: Vec<Option<T>>,
    /// For each empty slot, why it is empty.
    pub missing: Vec<Option<String>>,
    /// Why items were set aside, one line each: `item 3: …`.
    pub problems: Vec<String>,
}

/// Verdicts for `n` claims, item by item: every readable verdict at its
/// claim's number, the claims no readable item answers left `None` (to be
/// asked again, alone), and why. An error only when the reply holds no list
/// of items at all.
///
/// ```
/// use ragaliq::{parse, Verdict};
/// let reply = r#"{"verdicts": [
///     {"claim": 1, "verdict": "supported", "evidence": "Refunds take 30 days."},
///     {"claim": 2, "verdict": "supported", "evidence": "<quote from a passage>"},
///     {"claim": 9, "verdict": "contradicted", "evidence": "No."}
/// ]}"#;
/// let b = parse::verdicts_each(reply, 3).unwrap();
/// assert_eq!(b.items[0].as_ref().unwrap().verdict, Verdict::Supported);
/// assert!(b.items[1].is_none() && b.items[2].is_none());
/// assert_eq!(b.problems.len(), 3); // the placeholder, claim 9, claim 3 unanswered
/// ```
pub fn verdicts_each(raw: &str, n: usize) -> Result<Batch<ParsedVerdict>, ParseError> {
    let value = json::extract_complete(raw)?;
    let items = batch_items(value, "verdicts", "verdict", raw)?;
    Ok(indexed_each(&items, n, "claim", raw, |o| {
        read_verdict(o, raw)
    }))
}

/// A score with reasoning: `{"reasoning": "…", "score": 0.8}`. Scores may be
/// written `0.8`, `"0.8"`, `"80%"` or `"8/10"`. A reply cut off after its
/// `score` pair (and the comma after it) is still read.
///
/// ```
/// let s = ragaliq::parse::score(r#"{"score": "8/10", "reasoning": "Mostly answers it."}"#).unwrap();
/// assert_eq!(s.score, 0.8);
/// assert_eq!(ragaliq::parse::score(r#"{"score": 8}"#).unwrap_err().kind.name(), "score_out_of_range");
/// assert_eq!(ragaliq::parse::score(r#"{"relevance_score": 0.8}"#).unwrap_err().kind.name(), "wrong_shape");
/// ```
pub fn score(raw: &str) -> Result<ScoredReply, ParseError> {
    let (obj, complete) = match json::extract(raw)? {
        Found::Value(v) => {
            let v = unwrap_once(v, |v| has(v, "score"));
            match v {
                J::Object(o) => (o, true),
                other => {
                    return Err(shape(
                        format!("expected {{\"score\": ...}}, found {}", other.describe()),
                        raw,
                    ));
                }
            }
        }
        Found::Truncated(pairs) if has(&J::Object(pairs.clone()), "score") => (pairs, false),
        Found::Truncated(_) => return Err(ParseError::new(ParseErrorKind::Truncated, raw)),
    };
    let Some(score) = get(&obj, "score", raw)? else {
        return Err(shape(format!("no `score` key (keys: {})", keys(&obj)), raw));
    };
    let _ = complete;
    Ok(ScoredReply {
        score: read_score(score).map_err(|k| ParseError::new(k, raw))?,
        reasoning: text_field(&obj, "reasoning", raw)?,
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
    let value = json::extract_complete(raw)?;
    let items = batch_items(value, "verdicts", "relevant", raw)?;
    let partial = indexed(&items, n, "passage", raw, |o| read_relevance(o, raw))?;
    complete(partial, n, raw)
}

/// Like [`passage_relevance`], item by item (see [`verdicts_each`]).
///
/// ```
/// let b = ragaliq::parse::passage_relevance_each(
///     r#"{"verdicts": [{"passage": 1, "relevant": "maybe"}, {"passage": 2, "relevant": false}]}"#, 2,
/// ).unwrap();
/// assert!(b.items[0].is_none() && b.items[1].as_ref().is_some_and(|r| !r.relevant));
/// ```
pub fn passage_relevance_each(raw: &str, n: usize) -> Result<Batch<ParsedRelevance>, ParseError> {
    let value = json::extract_complete(raw)?;
    let items = batch_items(value, "verdicts", "relevant", raw)?;
    Ok(indexed_each(&items, n, "passage", raw, |o| {
        read_relevance(o, raw)
    }))
}

fn read_relevance(o: &Obj, raw: &str) -> Result<ParsedRelevance, ParseError> {
    let relevant = match get(o, "relevant", raw)? {
        Some(J::Bool(b)) => *b,
        Some(J::String(s) | J::Word(s)) => {
            match s
                .trim()
                .trim_matches(|c: char| c.is_ascii_punctuation())
                .to_ascii_lowercase()
                .as_str()
            {
                "yes" | "true" => true,
                "no" | "false" => false,
                _ => {
                    return Err(ParseError::new(
                        ParseErrorKind::UnknownLabel { label: s.clone() },
                        raw,
                    ));
                }
            }
        }
        other => {
            return Err(shape(
                format!(
                    "`relevant` should be true or false, found {}",
                    other.map_or("nothing".into(), J::describe)
                ),
                raw,
            ));
        }
    };
    Ok(ParsedRelevance {
        relevant,
        reason: text_field(o, "reason", raw)?,
        probability: None,
    })
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
    let value = json::extract_complete(raw)?;
    let items = batch_items(value, "cases", "question", raw)?;
    items
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let question = text_field(o, "question", raw)?;
            let answer = text_field(o, "answer", raw)?;
            if question.is_empty() || answer.is_empty() {
                return Err(shape(
                    format!(
                        "case {} needs a non-empty `question` and `answer` (keys: {})",
                        i + 1,
                        keys(o)
                    ),
                    raw,
                ));
            }
            Ok(GeneratedCase { question, answer })
        })
        .collect()
}

/// The objects of a batch: `{"<key>": [...]}`, a bare array of objects, or
/// one bare item object (a batch of one, recognised by `item_key`).
fn batch_items(
    value: J,
    key: &str,
    item_key: &str,
    raw: &str,
) -> Result<Vec<Vec<(String, J)>>, ParseError> {
    let accepts = |v: &J| match v {
        J::Object(_) => has(v, key) || has(v, item_key),
        J::Array(items) => items.iter().all(|i| matches!(i, J::Object(_))),
        _ => false,
    };
    let value = unwrap_once(value, accepts);
    let items: Vec<J> = match &value {
        J::Array(items) => items.clone(),
        J::Object(o) if has(&value, key) => match get(o, key, raw)? {
            Some(J::Array(items)) => items.clone(),
            Some(J::Object(one)) => vec![J::Object(one.clone())],
            Some(other) => {
                return Err(shape(
                    format!("`{key}` should be a list, found {}", other.describe()),
                    raw,
                ));
            }
            None => unreachable!("checked by has()"),
        },
        J::Object(o) if has(&value, item_key) => vec![J::Object(o.clone())],
        J::Object(o) => {
            return Err(shape(
                format!(
                    "expected {{\"{key}\": [...]}}, found an object with keys {}",
                    keys(o)
                ),
                raw,
            ));
        }
        other => {
            return Err(shape(
                format!("expected {{\"{key}\": [...]}}, found {}", other.describe()),
                raw,
            ));
        }
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| match item {
            J::Object(o) => Ok(o),
            other => Err(shape(
                format!("item {} is {}, not an object", i + 1, other.describe()),
                raw,
            )),
        })
        .collect()
}

/// Places each item at its 1-based number. Unnumbered items are placed by
/// position only when there are exactly `n` of them.
fn indexed<T: PartialEq>(
    items: &[Vec<(String, J)>],
    n: usize,
    index_key: &str,
    raw: &str,
    read: impl Fn(&Obj) -> Result<T, ParseError>,
) -> Result<Vec<Option<T>>, ParseError> {
    let bad = |detail: String| ParseError::new(ParseErrorKind::BadIndex { detail }, raw);
    let mut numbers: Vec<Option<&J>> = Vec::with_capacity(items.len());
    for o in items {
        numbers.push(get(o, index_key, raw)?);
    }
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
        return Err(shape(
            format!(
                "{} of {} items have no `{index_key}` number",
                items.len() - numbered,
                items.len(),
            ),
            raw,
        ));
    }
    // Read every item first: one bad item fails the batch.
    let mut read_items = Vec::with_capacity(items.len());
    for (item, number) in items.iter().zip(numbers) {
        let number = number.expect("all items are numbered");
        let k = read_index(number).ok_or_else(|| {
            bad(format!(
                "`{}` is not a {index_key} number (a positive whole number)",
                written(number)
            ))
        })?;
        if k == 0 || k > n {
            return Err(bad(format!(
                "{index_key} {k} does not exist (there are {n})"
            )));
        }
        read_items.push((k, read(item)?));
    }
    for (k, value) in read_items {
        match &out[k - 1] {
            Some(prev) if *prev != value => {
                return Err(bad(format!(
                    "{index_key} {k} is answered twice, differently"
                )));
            }
            _ => out[k - 1] = Some(value),
        }
    }
    Ok(out)
}

/// Like [`indexed`], but every problem costs only the items it touches.
fn indexed_each<T: PartialEq>(
    items: &[Vec<(String, J)>],
    n: usize,
    index_key: &str,
    raw: &str,
    read: impl Fn(&Obj) -> Result<T, ParseError>,
) -> Batch<T> {
    let mut out: Vec<Option<T>> = (0..n).map(|_| None).collect();
    let mut missing: Vec<Option<String>> = vec![None; n];
    let mut problems = Vec::new();
    let why = |e: &ParseError| e.kind.to_string();
    let numbers: Vec<Result<Option<&J>, ParseError>> =
        items.iter().map(|o| get(o, index_key, raw)).collect();
    let numbered = numbers.iter().filter(|r| matches!(r, Ok(Some(_)))).count();
    // Each slot: the items that name it, read (or why not).
    let mut answers: Vec<Vec<Result<T, String>>> = (0..n).map(|_| Vec::new()).collect();
    if numbered == 0 {
        if items.len() == n {
            for (slot, item) in answers.iter_mut().zip(items) {
                slot.push(read(item).map_err(|e| why(&e)));
            }
        } else {
            problems.push(format!(
                "{} unnumbered items for {n} {index_key}s: none can be matched",
                items.len()
            ));
        }
    } else {
        for (i, (item, number)) in items.iter().zip(numbers).enumerate() {
            let k = match number {
                Ok(Some(number)) => match read_index(number) {
                    Some(k) if k <= n => k,
                    Some(k) => {
                        problems.push(format!(
                            "item {}: {index_key} {k} does not exist (there are {n})",
                            i + 1
                        ));
                        continue;
                    }
                    None => {
                        problems.push(format!(
                            "item {}: `{}` is not a {index_key} number",
                            i + 1,
                            written(number)
                        ));
                        continue;
                    }
                },
                Ok(None) => {
                    problems.push(format!("item {}: it has no `{index_key}` number", i + 1));
                    continue;
                }
                Err(e) => {
                    problems.push(format!("item {}: {}", i + 1, why(&e)));
                    continue;
                }
            };
            answers[k - 1].push(read(item).map_err(|e| why(&e)));
        }
    }
    for (k, got) in answers.into_iter().enumerate() {
        let mut readable: Vec<T> = Vec::new();
        let mut errors: Vec<String> = Vec::new();
        for answer in got {
            match answer {
                Ok(v) => readable.push(v),
                Err(e) => errors.push(e),
            }
        }
        let reason = match readable.len() {
            0 if errors.is_empty() => Some("no item answers it".to_owned()),
            0 => Some(errors.join("; ")),
            1 => {
                out[k] = readable.pop();
                None
            }
            _ if readable.windows(2).all(|w| w[0] == w[1]) => {
                out[k] = readable.pop();
                None
            }
            _ => Some("answered twice, differently".to_owned()),
        };
        if let Some(r) = &reason {
            problems.push(format!("{index_key} {}: {r}", k + 1));
        }
        missing[k] = reason;
    }
    Batch {
        items: out,
        missing,
        problems,
    }
}

fn written(v: &J) -> String {
    match v {
        J::String(s) | J::Word(s) => s.clone(),
        J::Number(_, raw) => raw.clone(),
        other => other.describe(),
    }
}

/// A positive whole number, as a number or a string of digits.
fn read_index(v: &J) -> Option<usize> {
    match v {
        J::Number(x, _) if *x >= 1.0 && x.fract() == 0.0 && *x <= 1e9 => Some(*x as usize),
        J::String(s) => {
            let t = s.trim();
            (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
                .then(|| t.parse().ok())
                .flatten()
                .filter(|k| *k >= 1)
        }
        _ => None,
    }
}

fn read_verdict(obj: &Obj, raw: &str) -> Result<ParsedVerdict, ParseError> {
    let unknown = |label: String| ParseError::new(ParseErrorKind::UnknownLabel { label }, raw);
    let verdict = match get(obj, "verdict", raw)? {
        Some(J::String(s) | J::Word(s)) => {
            Verdict::from_label(s).ok_or_else(|| unknown(s.clone()))?
        }
        Some(J::Bool(true)) => Verdict::Supported,
        Some(J::Number(_, n)) if n == "1" => Verdict::Supported,
        Some(J::Bool(false)) => return Err(unknown("false".into())),
        Some(J::Null) => return Err(unknown("null".into())),
        Some(J::Number(_, n)) => return Err(unknown(n.clone())),
        Some(other) => {
            return Err(shape(
                format!("`verdict` should be a label, found {}", other.describe()),
                raw,
            ));
        }
        None => {
            return Err(shape(
                format!("no `verdict` key (keys: {})", keys(obj)),
                raw,
            ));
        }
    };
    let confidence = match get(obj, "confidence", raw)? {
        None | Some(J::Null) => None,
        Some(v) => Some(read_score(v).map_err(|k| ParseError::new(k, raw))?),
    };
    Ok(ParsedVerdict {
        verdict,
        evidence: text_field(obj, "evidence", raw)?,
        confidence,
    })
}

/// Reads `0.85`, `"0.85"`, `"85%"` or `"8/10"` as a number in [0, 1].
fn read_score(v: &J) -> Result<f64, ParseErrorKind> {
    let written = written(v);
    let invalid = || ParseErrorKind::InvalidScore {
        value: written.clone(),
    };
    let out_of_range = || ParseErrorKind::ScoreOutOfRange {
        value: written.clone(),
    };
    let number = |s: &str| -> Result<f64, ParseErrorKind> {
        let s = s.trim();
        let ok = !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'));
        let x: f64 = if ok {
            s.parse().map_err(|_| invalid())?
        } else {
            return Err(invalid());
        };
        if x.is_finite() { Ok(x) } else { Err(invalid()) }
    };
    let x = match v {
        J::Number(x, _) => *x,
        J::String(s) => {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn n(x: f64) -> J {
        J::Number(x, x.to_string())
    }

    fn st(x: &str) -> J {
        J::String(x.into())
    }

    #[test]
    fn scores_in_every_accepted_spelling() {
        for (v, want) in [
            (n(0.85), 0.85),
            (st("0.85"), 0.85),
            (st(".85"), 0.85),
            (st("85%"), 0.85),
            (st("8/10"), 0.8),
            (n(1.0), 1.0),
        ] {
            assert_eq!(read_score(&v).unwrap(), want, "{v:?}");
        }
    }

    #[test]
    fn bad_scores_are_refused() {
        for (v, kind) in [
            (n(1.5), "score_out_of_range"),
            (n(-0.1), "score_out_of_range"),
            (st("NaN"), "invalid_score"),
            (J::Word("NaN".into()), "invalid_score"),
            (st("inf"), "invalid_score"),
            (st("high"), "invalid_score"),
            (st("120%"), "score_out_of_range"),
            (st("11/10"), "score_out_of_range"),
            (st("3/0"), "score_out_of_range"),
            (J::Null, "invalid_score"),
            (J::Bool(true), "invalid_score"),
        ] {
            assert_eq!(read_score(&v).unwrap_err().name(), kind, "{v:?}");
        }
    }

    #[test]
    fn claim_numbers_are_positive_whole_numbers() {
        assert_eq!(read_index(&n(1.0)), Some(1));
        assert_eq!(read_index(&st(" 2 ")), Some(2));
        for bad in [st("-1"), st("#1"), st("one"), n(0.0), n(1.5), st("1.0")] {
            assert_eq!(read_index(&bad), None, "{bad:?}");
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
    fn shapes_wrappers_and_synonyms() {
        assert_eq!(claims(r#"["A.", "B."]"#).unwrap(), ["A.", "B."]);
        assert_eq!(claims(r#"{"json": {"claims": ["A."]}}"#).unwrap(), ["A."]);
        assert_eq!(
            claims(r#"{"args": "{\"claims\": [\"A.\"]}"}"#).unwrap(),
            ["A."]
        );
        assert_eq!(
            claims(r#"{"truths": ["A."]}"#).unwrap_err().kind.name(),
            "wrong_shape"
        );
        assert_eq!(
            claims(r#"{"a": {"b": {"claims": ["A."]}}}"#)
                .unwrap_err()
                .kind
                .name(),
            "wrong_shape",
            "unwrapped once only"
        );
        let one = verdicts(r#"{"claim": 1, "verdict": "supported"}"#, 1).unwrap();
        assert_eq!(
            one[0].verdict,
            Verdict::Supported,
            "a bare verdict is a batch of one"
        );
        assert_eq!(
            verdict(r#"{"verdicts": [{"verdict": "refuted"}]}"#)
                .unwrap()
                .verdict,
            Verdict::Contradicted
        );
        assert_eq!(
            verdict(r#"{"label": "supported"}"#)
                .unwrap_err()
                .kind
                .name(),
            "wrong_shape"
        );
        assert_eq!(
            verdict(r#"{" Verdict ": "supported", "extra": 1}"#)
                .unwrap()
                .verdict,
            Verdict::Supported
        );
        assert_eq!(
            verdict(r#"{"verdict": "supported", "verdict": "contradicted"}"#)
                .unwrap_err()
                .kind
                .name(),
            "wrong_shape"
        );
    }

    #[test]
    fn labels_by_the_rules() {
        for (label, want) in [
            ("\"yes\"", Some(Verdict::Supported)),
            ("true", Some(Verdict::Supported)),
            ("1", Some(Verdict::Supported)),
            ("\"Entailment\"", Some(Verdict::Supported)),
            ("\"refuted\"", Some(Verdict::Contradicted)),
            ("\"IDK\"", Some(Verdict::NoEvidence)),
            ("\"neutral\"", Some(Verdict::NoEvidence)),
            ("\"partially-supported\"", Some(Verdict::PartiallySupported)),
            ("no_evidence", Some(Verdict::NoEvidence)),
            ("\"no\"", None),
            ("false", None),
            ("0", None),
            ("-1", None),
            ("null", None),
            ("\"NOT SUPPORTED\"", None),
            ("\"supported (mostly)\"", None),
            ("\"unsupported\"", None),
        ] {
            let raw = format!("{{\"verdict\": {label}}}");
            assert_eq!(verdict(&raw).ok().map(|v| v.verdict), want, "{raw}");
        }
        let batch = r#"{"verdicts": [{"claim": 1, "verdict": "supported"}, {"claim": 2, "verdict": "maybe"}]}"#;
        assert_eq!(
            verdicts(batch, 2).unwrap_err().kind.name(),
            "unknown_label",
            "one bad item fails the batch"
        );
    }

    #[test]
    fn placeholders_are_refused() {
        assert_eq!(
            score(r#"{"reasoning": "<your reasoning>", "score": 0.5}"#)
                .unwrap_err()
                .kind
                .name(),
            "placeholder"
        );
        assert_eq!(
            verdict(r#"{"verdict": "supported", "evidence": "..."}"#)
                .unwrap_err()
                .kind
                .name(),
            "placeholder"
        );
    }

    #[test]
    fn truncation_keeps_only_finished_single_answers() {
        assert_eq!(
            score(r#"{"score": 0.7, "reasoning": "It answers th"#)
                .unwrap()
                .score,
            0.7
        );
        assert_eq!(
            score(r#"{"reasoning": "fine", "score": 0.7"#)
                .unwrap_err()
                .kind
                .name(),
            "truncated"
        );
        assert_eq!(
            claims(r#"{"claims": ["A.", "B"#).unwrap_err().kind.name(),
            "truncated"
        );
        assert_eq!(
            verdicts(r#"{"verdicts": [{"claim": 1, "verdict": "supported"},"#, 2)
                .unwrap_err()
                .kind
                .name(),
            "truncated"
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
