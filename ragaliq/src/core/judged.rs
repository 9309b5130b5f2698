//! What an exchange with the judge *judged*, apart from how it was asked:
//! the items of an exchange that decide a verdict, the key of each, the
//! words a person's verdict on it may take, and that verdict itself
//! ([`Person`]).
//!
//! A person's verdict in a recording is keyed by what was judged (the
//! claim and the passages it was checked against; the answer and its
//! question; the passage and its question; the response and the criteria),
//! never by the exchange's position, the model, the prompt, the settings or
//! the way of asking (a claim asked as a yes/no question or in a JSON batch
//! has one key). So re-recording with another model or prompt version finds
//! the same key, and a changed passage or claim finds another.
//!
//! The rule reads only an exchange's task name and what it asked (its
//! `subject`, the recording's `asked`), so the recorder, the metrics and
//! `cargo ragaliq review` compute the same keys. A task not named here is a
//! one-item question keyed by everything it asked, answered yes or no: a
//! new yes/no task is reviewable as it is.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The verdicts a person may give on a claim: the judge's four, and
/// [`NOT_A_CLAIM`].
pub const CLAIM_VERDICTS: [&str; 5] = [
    "supported",
    "partially_supported",
    "no_evidence",
    "contradicted",
    NOT_A_CLAIM,
];

/// A person's verdict that an item of a text states no fact to check (a
/// greeting, "please contact support", "I could not find that"): the claim
/// leaves the score, counted neither supported nor unsupported, and the
/// reasoning says so. Only a person gives it; a judge's reply never does.
///
/// ```
/// use ragaliq::judged::{verdict_words, NOT_A_CLAIM};
/// assert!(verdict_words("claim_supported").unwrap().contains(&NOT_A_CLAIM));
/// assert!(!verdict_words("answers_query").unwrap().contains(&NOT_A_CLAIM));
/// ```
pub const NOT_A_CLAIM: &str = "not_a_claim";

/// A yes/no question's answers.
pub const YES_NO: [&str; 2] = ["yes", "no"];

/// A 1-to-5 score's answers.
pub const SCORES: [&str; 5] = ["1", "2", "3", "4", "5"];

/// Fields of what was asked that say how or where, not what: a re-ask's
/// note, the evaluation steps the judge wrote itself, and which
/// conversation and turn asked it (a follow-up's key holds the earlier
/// turns the judge was shown, `history`: what it judged, wherever it
/// stands).
const HOW_ASKED: [&str; 4] = ["again", "steps", "conversation", "turn"];

/// Tasks whose answer decides no verdict (claims listed, steps written,
/// cases generated).
const NO_VERDICT: [&str; 3] = ["extract_claims", "criteria_steps", "generate_cases"];

/// One item an exchange judged.
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    /// Its number in the exchange (1 for a one-item question; the claim's
    /// or passage's number in a batch).
    pub item: usize,
    /// What kind of thing was judged: `claim`, `answer`, `passage`, or the
    /// task's own name.
    pub family: String,
    /// What was judged, as an object (the claim and its passages, ...).
    pub what: Value,
    /// The key: 16 hex digits of SHA-256 over the family and `what`.
    pub key: String,
}

/// The family of `task`: the tasks that judge the same thing in other
/// ways share one, so a person's verdict outlives a change of strategy.
#[must_use]
pub fn family(task: &str) -> &str {
    match task {
        "claim_supported" | "claim_contradicted" | "verify_claim" | "verify_claims" => "claim",
        "answers_query" | "relevance" => "answer",
        "passage_relevant" | "passage_relevance" => "passage",
        // The found rule decided the answer with no call in place of the
        // direct question: a person's verdict on it is a verdict on the
        // answer, whoever read it first.
        "answer_found" => "answer_correct",
        other => other,
    }
}

/// The words a person's verdict on an item of `task` may take: the claim
/// verdicts, a score from 1 to 5, yes or no; `None` for a metric of one's
/// own (`custom:…`), whose words the metric says (checked when it is
/// replayed); empty for a task that decides no verdict.
#[must_use]
pub fn verdict_words(task: &str) -> Option<&'static [&'static str]> {
    if NO_VERDICT.contains(&task) {
        return Some(&[]);
    }
    if task.starts_with("custom:") {
        return None;
    }
    Some(match family(task) {
        "claim" => &CLAIM_VERDICTS,
        "criteria_score" => &SCORES,
        _ => &YES_NO,
    })
}

/// The items an exchange of `task` that asked `asked` judged, each with its
/// key; empty when it decides no verdict.
///
/// ```
/// use ragaliq::judged::items;
/// use serde_json::json;
/// let asked = json!({"claim": "Refunds take 30 days.", "passages": ["Refunds: 30 days."]});
/// let yes_no = items("claim_supported", &asked);
/// let batch = items("verify_claims", &json!({"claims": ["Refunds take 30 days."], "passages": ["Refunds: 30 days."]}));
/// assert_eq!(yes_no[0].key, batch[0].key, "one claim, however it was asked");
/// assert!(items("extract_claims", &json!({"query": "q", "response": "r"})).is_empty());
/// ```
#[must_use]
pub fn items(task: &str, asked: &Value) -> Vec<Judged> {
    if NO_VERDICT.contains(&task) {
        return Vec::new();
    }
    let Some(object) = asked.as_object() else {
        return Vec::new();
    };
    let family = family(task);
    let mut base = serde_json::Map::new();
    for (k, v) in object {
        if !v.is_null() && !HOW_ASKED.contains(&k.as_str()) {
            base.insert(k.clone(), v.clone());
        }
    }
    // A batch: one item per claim or passage, each judged as if asked alone.
    let batch = match task {
        "verify_claims" => Some(("claims", "claim", false)),
        "passage_relevance" => Some(("passages", "passages", true)),
        _ => None,
    };
    let whats: Vec<Value> = match batch {
        Some((list, one, as_list)) => {
            let Some(each) = base.remove(list).and_then(|v| v.as_array().cloned()) else {
                return Vec::new();
            };
            each.into_iter()
                .map(|x| {
                    let mut what = base.clone();
                    what.insert(
                        one.to_owned(),
                        if as_list { Value::Array(vec![x]) } else { x },
                    );
                    Value::Object(what)
                })
                .collect()
        }
        None => vec![Value::Object(base)],
    };
    whats
        .into_iter()
        .enumerate()
        .map(|(i, what)| Judged {
            item: i + 1,
            family: family.to_owned(),
            key: key(family, &what),
            what,
        })
        .collect()
}

/// The key of `what` in `family`: 16 hex digits of SHA-256 over canonical
/// JSON (object keys sorted), enough to tell a project's items apart and
/// short enough to type.
#[must_use]
pub fn key(family: &str, what: &Value) -> String {
    let text = super::canonical_json(&serde_json::json!({"judged": family, "what": what}));
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// A verdict a person gave in review, used in place of the judge's.
///
/// It is read from the recording (see the guide's "A person's verdict"):
/// the test passes or fails by it, and every message and report says the
/// verdict is a person's and what the judge's own reading was.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Person {
    /// The verdict as the person gave it (`supported`, `yes`, `4`).
    pub verdict: String,
    /// Who gave it, when they said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// Why, when they said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// What the judge's own reading decided (`no_evidence, P(supported)
    /// 0.31`).
    pub judge: String,
}

impl Person {
    /// A person's `verdict`, the judge's own reading not yet said.
    #[must_use]
    pub fn new(verdict: impl Into<String>, by: Option<String>, note: Option<String>) -> Person {
        Person {
            verdict: verdict.into(),
            by,
            note,
            judge: String::new(),
        }
    }

    /// The person's verdict as a message shows it: `supported (a person's
    /// verdict; the judge: no_evidence, P(supported) 0.31)`.
    ///
    /// ```
    /// use ragaliq::judged::Person;
    /// let mut p = Person::new("supported", Some("ana".into()), None);
    /// p.judge = "no_evidence, P(supported) 0.31".into();
    /// assert_eq!(p.to_string(), "supported (a person's verdict, by ana; the judge: no_evidence, P(supported) 0.31)");
    /// ```
    #[must_use]
    pub fn describe(&self) -> String {
        self.to_string()
    }
}

impl std::fmt::Display for Person {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (a person's verdict", self.verdict)?;
        if let Some(by) = &self.by {
            write!(f, ", by {by}")?;
        }
        if !self.judge.is_empty() {
            write!(f, "; the judge: {}", self.judge)?;
        }
        write!(f, ")")?;
        if let Some(note) = &self.note {
            write!(f, ": {note}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claim(claim: &str, passages: &[&str]) -> Value {
        json!({"claim": claim, "passages": passages})
    }

    #[test]
    fn a_claim_has_one_key_however_it_was_asked() {
        let asked = claim(
            "You get all your money back",
            &["A full refund.", "Free shipping."],
        );
        let supported = items("claim_supported", &asked);
        let contradicted = items("claim_contradicted", &asked);
        let again = items(
            "verify_claim",
            &json!({"claim": "You get all your money back", "passages": ["A full refund.", "Free shipping."], "again": "its earlier quote is in no passage"}),
        );
        let batch = items(
            "verify_claims",
            &json!({"claims": ["Other.", "You get all your money back"], "passages": ["A full refund.", "Free shipping."]}),
        );
        assert_eq!(supported.len(), 1);
        assert_eq!(supported[0].key, contradicted[0].key);
        assert_eq!(supported[0].key, again[0].key);
        assert_eq!(batch.len(), 2);
        assert_eq!((batch[1].item, &batch[1].key), (2, &supported[0].key));
        assert_eq!(supported[0].key.len(), 16);
    }

    #[test]
    fn the_key_changes_with_what_was_judged_and_only_with_it() {
        let k = |v: &Value| items("claim_supported", v)[0].key.clone();
        let base = k(&claim("A.", &["P one.", "P two."]));
        assert_ne!(
            base,
            k(&claim("B.", &["P one.", "P two."])),
            "another claim"
        );
        assert_ne!(
            base,
            k(&claim("A.", &["P one.", "P 2."])),
            "another passage"
        );
        assert_ne!(
            base,
            k(&claim("A.", &["P two.", "P one."])),
            "passages reordered"
        );
        // Key order and nulls are not what was judged.
        assert_eq!(
            base,
            k(&json!({"passages": ["P one.", "P two."], "claim": "A.", "expected": null}))
        );
        // A claim and an answer with the same words are different things.
        assert_ne!(
            items("answers_query", &json!({"query": "q", "response": "r"}))[0].key,
            items("criteria_met", &json!({"query": "q", "response": "r"}))[0].key
        );
    }

    #[test]
    fn a_found_rule_decision_has_the_key_of_the_direct_question() {
        let asked = json!({"query": "q", "expected": "30 days", "response": "30 days."});
        assert_eq!(
            items("answer_found", &asked)[0].key,
            items("answer_correct", &asked)[0].key
        );
    }

    #[test]
    fn passages_of_a_batch_are_keyed_as_if_asked_alone() {
        let one = items(
            "passage_relevant",
            &json!({"query": "q", "expected": null, "passages": ["B"]}),
        );
        let batch = items(
            "passage_relevance",
            &json!({"query": "q", "expected": null, "passages": ["A", "B"]}),
        );
        assert_eq!(batch[1].key, one[0].key);
        assert_ne!(batch[0].key, one[0].key);
    }

    /// Issue 48: a verdict on a follow-up is kept under the history the
    /// judge saw, so it never decides another conversation's turn with
    /// other earlier turns; which conversation and turn asked is no part
    /// of it (a conversation renamed keeps its verdicts).
    #[test]
    fn a_follow_ups_key_holds_the_history_the_judge_saw() {
        let asked = |conversation: &str, turn: usize, earlier: &str| {
            items(
                "answers_query",
                &json!({"conversation": conversation, "turn": turn, "query": "And how long?",
                        "response": "30 days.",
                        "history": [{"user": earlier, "assistant": "Yes."}]}),
            )[0]
            .key
            .clone()
        };
        let jacket = asked("a", 3, "Can I return a jacket?");
        assert_ne!(
            jacket,
            asked("b", 3, "Can I return a sofa?"),
            "turn 3 of another conversation"
        );
        assert_eq!(jacket, asked("renamed", 7, "Can I return a jacket?"));
        assert_ne!(
            jacket,
            items(
                "answers_query",
                &json!({"query": "And how long?", "response": "30 days."})
            )[0]
            .key,
            "the same words with no history"
        );
    }

    #[test]
    fn the_words_a_verdict_takes() {
        assert_eq!(verdict_words("claim_supported"), Some(&CLAIM_VERDICTS[..]));
        assert_eq!(verdict_words("answers_query"), Some(&YES_NO[..]));
        assert_eq!(verdict_words("criteria_score"), Some(&SCORES[..]));
        assert_eq!(verdict_words("custom:tone"), None);
        assert_eq!(verdict_words("extract_claims"), Some(&[][..]));
        assert_eq!(verdict_words("a_new_yes_no_task"), Some(&YES_NO[..]));
        assert_eq!(verdict_words("answer_found"), Some(&YES_NO[..]));
        // Steps the judge wrote are not what was judged.
        let a = items(
            "criteria_score",
            &json!({"criteria": "c", "query": "q", "response": "r", "steps": ["x"]}),
        );
        let b = items(
            "criteria_score",
            &json!({"criteria": "c", "query": "q", "response": "r", "steps": ["y"]}),
        );
        assert_eq!(a[0].key, b[0].key);
    }
}
