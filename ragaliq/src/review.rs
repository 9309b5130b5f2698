//! What a person reviews in a recording: every item an exchange judged
//! that decides a verdict (a claim, an answer's relevance, a passage, a
//! criteria verdict or score, a word metric of one's own), with the judge's
//! reading of it and the person's verdict, if any. `cargo ragaliq review`
//! walks these, and `cargo ragaliq calibrate --reviewed` reads the person's
//! verdicts as labels against the judge's reading beside them, asking
//! nothing.
//!
//! The judge's reading is computed from the recorded replies by the same
//! parsers and the same claim rule the metrics use, at the thresholds
//! given ([`Thresholds`]).
//!
//! ```
//! use ragaliq::record::Recording;
//! use ragaliq::review::{Thresholds, items};
//! let recording = Recording::default();
//! assert!(items(&recording, &Thresholds::default()).is_empty());
//! ```

use crate::core::judged::{self, Judged};
use crate::core::{Bands, Decision, Kind, Metric, Uncertain, Verdict};
use crate::judge::Judge;
use crate::metrics::Reading as ClaimReading;
use crate::parse;
use crate::record::{Exchange, Recording, Reviewed};
use std::collections::{BTreeMap, BTreeSet};

/// The thresholds a judge's reading is decided at: those of the judge a
/// project configures ([`Thresholds::of`]), or ragaliq's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct Thresholds {
    /// P(supported) at or above which a claim is supported.
    pub claim: f64,
    /// How many times P(supported) P(contradicted) must exceed.
    pub contradiction_ratio: f64,
    /// P(relevant) at or above which a passage is relevant.
    pub passage: f64,
    /// The relevance score an answer passes at.
    pub relevance: f64,
    /// The criteria score a response passes at.
    pub criteria: f64,
    /// P(yes) to the direct correctness question an answer passes at.
    pub correctness: f64,
    /// The conversation checks' thresholds: abstention's (on P(yes) that
    /// the answer says it cannot answer), and consistency's and
    /// retention's (on 1 − P(yes) that the answer goes wrong).
    pub abstention: f64,
    /// See [`abstention`](Self::abstention).
    pub consistency: f64,
    /// See [`abstention`](Self::abstention).
    pub retention: f64,
    /// The judge's uncertainty bands: a reading inside its kind's band
    /// awaits a person ([`JudgeReading::uncertain`]).
    pub bands: Bands,
    /// The judges it escalates to, in order: each one's model and bands.
    /// An item one of them was asked about is read as that judge read it
    /// (the last asked decides, or leaves it uncertain).
    pub escalate: Vec<(String, Bands)>,
    /// The model these are the thresholds of (`None`: the defaults). A
    /// recording by another model is read at that model's own bands
    /// ([`Bands::measured`]): a band is the judge's, not the project's.
    pub model: Option<String>,
    /// What the project does with a reading the judge is unsure of
    /// (`[scoring] uncertain`): under `decide` the threshold decides it,
    /// and nothing awaits a person ([`Item::awaits`]).
    pub uncertain: Uncertain,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            claim: crate::core::DEFAULT_CLAIM_THRESHOLD,
            contradiction_ratio: crate::core::DEFAULT_CONTRADICTION_RATIO,
            passage: crate::core::DEFAULT_PROBABILITY_THRESHOLD,
            relevance: Metric::Relevance.default_threshold(),
            criteria: Metric::Criteria.default_threshold(),
            correctness: Metric::Correctness.default_threshold(),
            abstention: Metric::Abstention.default_threshold(),
            consistency: Metric::Consistency.default_threshold(),
            retention: Metric::Retention.default_threshold(),
            bands: Bands::DEFAULT,
            escalate: Vec::new(),
            model: None,
            uncertain: Uncertain::default(),
        }
    }
}

/// A judge's bands, kind by kind.
fn bands_of(judge: &Judge) -> Bands {
    Kind::ALL.into_iter().fold(Bands::OFF, |mut b, k| {
        b.set(k, judge.band(k));
        b
    })
}

impl Thresholds {
    /// `judge`'s thresholds.
    #[must_use]
    pub fn of(judge: &Judge) -> Thresholds {
        Thresholds {
            escalate: judge
                .escalation_judges()
                .iter()
                .map(|j| (j.model().to_owned(), bands_of(j)))
                .collect(),
            claim: judge.claim_threshold(),
            contradiction_ratio: judge.contradiction_ratio(),
            passage: judge.passage_threshold(),
            relevance: judge.default_threshold(Metric::Relevance),
            criteria: judge.default_threshold(Metric::Criteria),
            correctness: judge.default_threshold(Metric::Correctness),
            abstention: judge.default_threshold(Metric::Abstention),
            consistency: judge.default_threshold(Metric::Consistency),
            retention: judge.default_threshold(Metric::Retention),
            bands: bands_of(judge),
            model: Some(judge.model().to_owned()),
            uncertain: judge.uncertain(),
        }
    }
}

/// What the judge's recorded answers say about one item.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct JudgeReading {
    /// The verdict the judge's reading decides at the thresholds given
    /// (`no_evidence`, `yes`, `4`); `None` when it cannot be read (a reply
    /// that does not parse, a metric of one's own).
    pub verdict: Option<String>,
    /// Whether that verdict is the answer's good side (supported, yes,
    /// relevant, at or above the threshold).
    pub positive: Option<bool>,
    /// The probability or score the verdict was read from: P(supported),
    /// P(yes), the relevance score, the criteria score mapped to [0, 1].
    pub probability: Option<f64>,
    /// For a claim asked whether it is contradicted: P(contradicted).
    pub contradiction: Option<f64>,
    /// What the judge wrote in reply to the question that decides (its
    /// first line, at most 40 characters: `Yes`, `no`): its own word,
    /// which `verdict` is not when a threshold read it from `probability`.
    pub written: Option<String>,
    /// The threshold `verdict` was read at from `probability`, when it was
    /// (a claim's `claim_threshold`, relevance's, a passage's, …).
    pub threshold: Option<f64>,
    /// How each of the item's exchanges was read, as the recording's
    /// `checked` entries say it (`P(yes) 0.310 from the first token's …`).
    pub read: Vec<String>,
    /// The reading lies inside the judge's band for its kind: the judge is
    /// unsure, and the item awaits a person (unless a stronger judge of a
    /// cascade decided it).
    pub uncertain: bool,
    /// A rule decided the item with no call (the found rule of answer
    /// correctness): what it found, where (`«thirty days» (words 3–4)`).
    /// No judge read it; `verdict` is the rule's.
    pub rule: Option<String>,
}

/// One item a recording's exchanges judged, that a person can give a
/// verdict on.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Item {
    /// What was judged, and its key.
    pub judged: Judged,
    /// The task of the first exchange that judges it (where a person's
    /// verdict on it is written).
    pub task: String,
    /// That exchange's position in the recording (0-based).
    pub exchange: usize,
    /// The model that answered.
    pub model: String,
    /// The words a verdict on it may take (`None`: a metric of one's own,
    /// whose words the metric says).
    pub words: Option<&'static [&'static str]>,
    /// The judge's reading.
    pub judge: JudgeReading,
    /// The person's verdict, when one was given.
    pub person: Option<Reviewed>,
    /// What a test does while the judge is unsure of the item and no
    /// person has decided ([`Thresholds::uncertain`]).
    pub meanwhile: Uncertain,
    /// For a turn of a conversation: the conversation's id, when it has
    /// one, as the exchange that judges the item says.
    pub conversation: Option<String>,
    /// For a turn of a conversation: its number (1 for the first).
    pub turn: Option<u64>,
}

impl Item {
    /// The claim, answer or passage the item is about.
    #[must_use]
    pub fn subject(&self) -> String {
        let field = match self.judged.family.as_str() {
            "claim" => "claim",
            "passage" => "passages",
            _ => "response",
        };
        match self.judged.what.get(field) {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(serde_json::Value::Array(a)) => a
                .first()
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            _ => String::new(),
        }
    }

    /// For a follow-up: the earlier turns the judge was shown, oldest
    /// first, each the user's message and the assistant's answer (part of
    /// what was judged, and of its key).
    #[must_use]
    pub fn history(&self) -> Vec<(String, String)> {
        let text = |v: &serde_json::Value, k: &str| {
            v.get(k)
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        self.judged
            .what
            .get("history")
            .and_then(serde_json::Value::as_array)
            .map(|turns| {
                turns
                    .iter()
                    .map(|t| (text(t, "user"), text(t, "assistant")))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A text field of what was judged (`query`, `expected`, `criteria`).
    #[must_use]
    pub fn field(&self, name: &str) -> Option<&str> {
        self.judged
            .what
            .get(name)
            .and_then(serde_json::Value::as_str)
    }

    /// What a claim was judged against: its passages (the reference, for a
    /// correctness claim).
    #[must_use]
    pub fn passages(&self) -> Vec<String> {
        if self.judged.family == "passage" {
            return Vec::new();
        }
        self.judged
            .what
            .get("passages")
            .and_then(serde_json::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(serde_json::Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether the judge's reading went against the answer (a claim not
    /// supported, a no, a score under the threshold), or cannot be told.
    #[must_use]
    pub fn judged_against(&self) -> bool {
        self.judge.positive != Some(true)
    }

    /// Whether the item awaits a person: the judge is unsure of it, no
    /// person has given a verdict, and the project does not let the
    /// threshold decide what the judge is unsure of (`uncertain =
    /// "decide"`).
    #[must_use]
    pub fn awaits(&self) -> bool {
        self.judge.uncertain && self.person.is_none() && self.meanwhile != Uncertain::Decide
    }
}

/// How many person's verdicts `recording` holds, and how many of them
/// differ from what the judge's reading decides at `thresholds`.
#[must_use]
pub fn count(recording: &Recording, thresholds: &Thresholds) -> (usize, usize) {
    let given: Vec<Item> = items(recording, thresholds)
        .into_iter()
        .filter(|i| i.person.is_some())
        .collect();
    let overruling = given
        .iter()
        .filter(|i| i.person.as_ref().map(|p| &p.verdict) != i.judge.verdict.as_ref())
        .count();
    (given.len(), overruling)
}

/// [`items`] that still decide a test: without the claims the recording's
/// own extractions set aside (and none keeps). A recording can hold the
/// questions asked about such a claim from before a rule dropped it (a
/// failing test's recording keeps what it asked); they decide nothing now,
/// so the walk and `cargo ragaliq status` pass them over, while a person's
/// verdict on one still labels the judge's reading for calibration.
///
/// ```
/// use ragaliq::record::Recording;
/// use ragaliq::review::{Thresholds, deciding};
/// // A recording that asked nothing has nothing to review.
/// assert!(deciding(&Recording::default(), &Thresholds::default()).is_empty());
/// ```
#[must_use]
pub fn deciding(recording: &Recording, thresholds: &Thresholds) -> Vec<Item> {
    let set_aside = set_aside_claims(recording);
    items(recording, thresholds)
        .into_iter()
        .filter(|i| i.judged.family != "claim" || !set_aside.contains(&i.subject()))
        .collect()
}

/// Every item of `recording` that decides a verdict, once per key, in the
/// recording's order, with the judge's reading at `thresholds`.
#[must_use]
pub fn items(recording: &Recording, thresholds: &Thresholds) -> Vec<Item> {
    // Each key's exchanges (and the item each judges), in order.
    let mut order: Vec<String> = Vec::new();
    let mut by_key: BTreeMap<String, Vec<(usize, Judged)>> = BTreeMap::new();
    for (i, e) in recording.exchanges.iter().enumerate() {
        for j in e.judged() {
            if !by_key.contains_key(&j.key) {
                order.push(j.key.clone());
            }
            by_key.entry(j.key.clone()).or_default().push((i, j));
        }
    }
    order
        .into_iter()
        .filter_map(|key| {
            let asked = by_key.remove(&key)?;
            let (first, judged) = asked.first().cloned()?;
            let e = &recording.exchanges[first];
            let person = asked.iter().find_map(|(i, _)| {
                recording.exchanges[*i]
                    .reviewed
                    .iter()
                    .find(|r| r.key == key)
                    .cloned()
            });
            let mut exchanges: Vec<(&Exchange, usize)> = asked
                .iter()
                .map(|(i, j)| (&recording.exchanges[*i], j.item))
                .collect();
            // With a cascade, the last judge asked about the item is the
            // one whose reading stands (or leaves it uncertain).
            let stage = |model: &str| {
                thresholds
                    .escalate
                    .iter()
                    .position(|(m, _)| m == model)
                    .map_or(0, |i| i + 1)
            };
            let last = exchanges
                .iter()
                .map(|(e, _)| stage(&e.model))
                .max()
                .unwrap_or(0);
            exchanges.retain(|(e, _)| stage(&e.model) == last);
            let read_at = match last {
                0 if thresholds.model.as_deref() != Some(e.model.as_str()) => Thresholds {
                    bands: Bands::measured(&e.model),
                    ..thresholds.clone()
                },
                0 => thresholds.clone(),
                k => Thresholds {
                    bands: thresholds.escalate[k - 1].1,
                    ..thresholds.clone()
                },
            };
            Some(Item {
                conversation: e
                    .asked
                    .get("conversation")
                    .and_then(|c| c.as_str())
                    .map(str::to_owned),
                turn: e.asked.get("turn").and_then(|t| t.as_u64()),
                task: e.task.clone(),
                exchange: first,
                model: e.model.clone(),
                words: judged::verdict_words(&e.task),
                judge: reading(&judged.family, &exchanges, &read_at),
                person,
                judged,
                meanwhile: thresholds.uncertain,
            })
        })
        .collect()
}

/// The claims `recording`'s extractions set aside (not the response's, the
/// question echoed, a repeat) that no extraction of it keeps.
fn set_aside_claims(recording: &Recording) -> BTreeSet<String> {
    let (mut kept, mut dropped) = (BTreeSet::new(), BTreeSet::new());
    for e in recording
        .exchanges
        .iter()
        .filter(|e| e.task == "extract_claims")
    {
        let Ok(claims) = parse::claims(e.reply_text()) else {
            continue;
        };
        for (i, claim) in claims.into_iter().enumerate() {
            let aside = e.checks.iter().any(|c| {
                c.item == i + 1 && matches!(c.outcome, crate::core::CheckOutcome::Dropped(_))
            });
            if aside {
                dropped.insert(claim);
            } else {
                kept.insert(claim);
            }
        }
    }
    dropped.retain(|c| !kept.contains(c));
    dropped
}

/// The judge's reading of one item from the exchanges that judged it
/// (sample 0 of each; the first read wins where a task was asked twice).
fn reading(family: &str, asked: &[(&Exchange, usize)], t: &Thresholds) -> JudgeReading {
    let first_samples: Vec<&(&Exchange, usize)> = asked
        .iter()
        .filter(|(e, _)| e.settings.as_ref().is_none_or(|s| s.sample == 0))
        .collect();
    let mut out = JudgeReading {
        read: first_samples
            .iter()
            .flat_map(|(e, item)| {
                e.checks
                    .iter()
                    .filter(|c| c.item == *item)
                    .filter_map(|c| match &c.outcome {
                        crate::core::CheckOutcome::Read(how) => Some(format!("{}: {how}", e.task)),
                        _ => None,
                    })
            })
            .collect(),
        ..JudgeReading::default()
    };
    let find = |task: &str| first_samples.iter().find(|(e, _)| e.task == task).copied();
    let yes_no = |e: &Exchange| {
        let r = e.response();
        parse::yes_no(&r.text, r.logprobs.as_deref()).ok()
    };
    // The kind and threshold of a reading from token probabilities: what
    // its band is read at (a word written, or a score the judge wrote, has
    // no band).
    let mut banded: Option<(Kind, f64)> = None;
    let set_yes_no = |out: &mut JudgeReading, p: f64, threshold: f64| {
        let yes = p >= threshold;
        out.probability = Some(p);
        out.threshold = Some(threshold);
        out.positive = Some(yes);
        out.verdict = Some(if yes { "yes" } else { "no" }.to_owned());
    };
    let wrote = |e: &Exchange| Some(first_line(e.reply_text()));
    // A rule decided it with no call (no judge was asked): its verdict.
    if let Some((e, _)) = first_samples.iter().find(|(e, _)| e.is_rule()) {
        out.verdict = Some("yes".to_owned());
        out.positive = Some(true);
        out.rule = Some(rule_said(e));
        return out;
    }
    match family {
        "claim" => {
            if let Some((e, _)) = find("claim_supported")
                && let Some(supported) = yes_no(e)
            {
                let contradicted = find("claim_contradicted").and_then(|(e, _)| yes_no(e));
                let decided = ClaimReading {
                    supported: supported.p_yes,
                    contradicted: contradicted.as_ref().map(|c| c.p_yes),
                }
                .decide(t.claim, t.contradiction_ratio)
                .0;
                if supported.from_probabilities {
                    banded = Some((Kind::Claims, t.claim));
                }
                out.probability = Some(supported.p_yes);
                out.threshold = Some(t.claim);
                out.written = wrote(e);
                out.contradiction = contradicted.map(|c| c.p_yes);
                out.verdict = Some(decided.label().to_owned());
                out.positive = Some(decided == Verdict::Supported);
            } else {
                // JSON prompts: a re-ask alone answers over the batch.
                let verdict = asked
                    .iter()
                    .rev()
                    .find(|(e, _)| e.task == "verify_claim")
                    .and_then(|(e, _)| parse::verdict(e.reply_text()).ok())
                    .or_else(|| {
                        let (e, item) = find("verify_claims")?;
                        let n = e.judged().len();
                        parse::verdicts_each(e.reply_text(), n)
                            .ok()?
                            .items
                            .get(item - 1)
                            .cloned()
                            .flatten()
                    });
                // No probability: a confidence the judge wrote is not one
                // (calibration fits thresholds on probabilities only).
                if let Some(v) = verdict {
                    out.verdict = Some(v.verdict.label().to_owned());
                    out.positive = Some(v.verdict == Verdict::Supported);
                }
            }
        }
        "answer" => {
            if let Some((e, _)) = find("answers_query")
                && let Some(r) = yes_no(e)
            {
                if r.from_probabilities {
                    banded = Some((Kind::Answers, t.relevance));
                }
                set_yes_no(&mut out, r.p_yes, t.relevance);
                out.written = wrote(e);
            } else if let Some((e, _)) = find("relevance")
                && let Ok(s) = parse::score(e.reply_text())
            {
                set_yes_no(&mut out, s.score, t.relevance);
            }
        }
        "passage" => {
            if let Some((e, _)) = find("passage_relevant")
                && let Some(r) = yes_no(e)
            {
                if r.from_probabilities {
                    banded = Some((Kind::Passages, t.passage));
                }
                set_yes_no(&mut out, r.p_yes, t.passage);
                out.written = wrote(e);
            } else if let Some((e, item)) = find("passage_relevance") {
                let n = e.judged().len();
                if let Some(Some(r)) = parse::passage_relevance_each(e.reply_text(), n)
                    .ok()
                    .and_then(|b| b.items.get(item - 1).cloned())
                {
                    out.positive = Some(r.relevant);
                    out.probability = r.probability;
                    out.verdict = Some(if r.relevant { "yes" } else { "no" }.to_owned());
                }
            }
        }
        "criteria_score" => {
            if let Some((e, _)) = find("criteria_score") {
                let r = e.response();
                if let Ok(w) = parse::answer_word(
                    &r.text,
                    r.logprobs.as_deref(),
                    &parse::AnswerWords::new(judged::SCORES),
                    &parse::AnswerAt::First,
                ) {
                    let expected: f64 = w
                        .probabilities
                        .iter()
                        .enumerate()
                        .map(|(i, p)| p * (i as f64 + 1.0))
                        .sum();
                    let score = ((expected - 1.0) / 4.0).clamp(0.0, 1.0);
                    if w.from_probabilities {
                        banded = Some((Kind::Judged, t.criteria));
                    }
                    out.written = wrote(e);
                    out.probability = Some(score);
                    out.positive = Some(score >= t.criteria);
                    out.verdict = Some(format!("{}", expected.round()));
                }
            }
        }
        other if other.starts_with("custom:") => {}
        other => {
            // criteria_met, answer_correct, and any yes/no question:
            // P(yes), first word.
            if let Some((e, _)) = find(other) {
                let r = e.response();
                if let Ok(w) = parse::answer_word(
                    &r.text,
                    r.logprobs.as_deref(),
                    &parse::AnswerWords::new(judged::YES_NO),
                    &parse::AnswerAt::First,
                ) {
                    // As the metric decides it: the conversation checks
                    // share the answers band, and consistency and
                    // retention's P(yes) is what goes wrong.
                    let (kind, threshold) = match other {
                        "criteria_met" => (Kind::Judged, t.criteria),
                        "answer_correct" => (Kind::Graded, t.correctness),
                        "passages_answer" => (Kind::Answers, 0.5),
                        "declines_to_answer" => (Kind::Answers, t.abstention),
                        "contradicts_earlier" => (Kind::Answers, 1.0 - t.consistency),
                        "ignores_user" => (Kind::Answers, 1.0 - t.retention),
                        _ => (Kind::Custom, 0.5),
                    };
                    if w.from_probabilities {
                        banded = Some((kind, threshold));
                    }
                    set_yes_no(&mut out, w.probabilities[0], threshold);
                    out.written = wrote(e);
                }
            }
        }
    }
    if let (Some((kind, threshold)), Some(p)) = (banded, out.probability) {
        out.uncertain = t.bands.get(kind).decide(p, threshold) == Decision::Uncertain;
    }
    out
}

/// What a rule's recorded decision says it found, and where: `«thirty
/// days» (words 3–4)`, or its reply as recorded.
fn rule_said(e: &Exchange) -> String {
    let reply: Option<serde_json::Value> = serde_json::from_str(e.reply_text()).ok();
    let field = |k: &str| {
        reply
            .as_ref()
            .and_then(|r| r.get(k))
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    match (field("found"), field("at")) {
        (Some(found), Some(at)) => format!("«{found}» ({at})"),
        _ => first_line(e.reply_text()),
    }
}

/// A reply's first line that holds something, at most 40 characters.
fn first_line(reply: &str) -> String {
    let line = reply
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let mut out: String = line.chars().take(40).collect();
    if out.len() < line.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A claim an extraction of the recording sets aside decides nothing,
    /// though the recording still holds the question asked about it (a
    /// failing test's recording keeps what it asked before a rule dropped
    /// it); it stays an item, for a person's verdict on it to label.
    #[test]
    fn a_claim_the_recordings_extraction_sets_aside_decides_nothing() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples/recordings/quickstart.snap");
        let mut recording = Recording::read(&path).unwrap().unwrap();
        let about = |items: &[Item]| {
            items.iter().any(|i| {
                i.judged.family == "claim" && i.subject().contains("store credit in any currency")
            })
        };
        assert!(about(&deciding(&recording, &Thresholds::default())));
        // Set aside by every extraction that lists it (each sample's).
        let mut marked = 0;
        for e in recording
            .exchanges
            .iter_mut()
            .filter(|e| e.task == "extract_claims")
        {
            let claims = parse::claims(e.reply_text()).unwrap_or_default();
            if let Some(n) = claims
                .iter()
                .position(|c| c.contains("store credit in any currency"))
            {
                e.checks.push(crate::core::Check {
                    item: n + 1,
                    outcome: crate::core::CheckOutcome::Dropped("not in the response".into()),
                });
                marked += 1;
            }
        }
        assert!(marked > 0, "an extraction lists the claim");
        let left = deciding(&recording, &Thresholds::default());
        assert!(!about(&left));
        assert!(!left.is_empty(), "the other items stay");
        assert!(about(&items(&recording, &Thresholds::default())));
    }

    #[test]
    fn the_quickstarts_recording_reads_as_its_test_does() {
        // From the quickstart's real recording (Qwen2.5-Coder-1.5B).
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples/recordings/quickstart.snap");
        let recording = Recording::read(&path).unwrap().unwrap();
        let items = items(&recording, &Thresholds::default());
        let store_credit = items
            .iter()
            .find(|i| i.subject().contains("store credit in any currency"))
            .expect("the hallucinating case's claim");
        assert_eq!(store_credit.judged.family, "claim");
        assert_eq!(store_credit.task, "claim_supported");
        assert_eq!(store_credit.judge.verdict.as_deref(), Some("contradicted"));
        assert_eq!(store_credit.judge.positive, Some(false));
        assert!((store_credit.judge.probability.unwrap() - 0.06).abs() < 0.01);
        assert!(store_credit.judge.contradiction.is_some());
        assert_eq!(store_credit.judge.read.len(), 2, "{:?}", store_credit.judge);
        // Each key once, however many exchanges judged it.
        let mut keys: Vec<&str> = items.iter().map(|i| i.judged.key.as_str()).collect();
        keys.sort_unstable();
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n);
        // The answers' relevance, at the configured threshold.
        let off_topic = items
            .iter()
            .find(|i| i.judged.family == "answer" && i.subject().contains("nine in the morning"))
            .unwrap();
        assert_eq!(off_topic.judge.verdict.as_deref(), Some("no"));
        // The faithful answer: the judge wrote "yes", with P(yes) 0.56; at
        // the default threshold 0.7 that reads no. Both are kept apart.
        let faithful = items
            .iter()
            .find(|i| i.judged.family == "answer" && i.subject().contains("30 days from delivery"))
            .unwrap();
        assert_eq!(faithful.judge.written.as_deref(), Some("yes"));
        assert_eq!(faithful.judge.verdict.as_deref(), Some("no"));
        assert_eq!(faithful.judge.threshold, Some(0.7));
    }
}
