//! The one claim path: claims checked against a text, for every metric
//! that verifies claims (faithfulness, hallucination, context recall,
//! answer correctness, and claim checks of one's own).
//!
//! [`check`] is the piece they all call: it asks every sample the plan
//! asks for, in the way the judge is set to ask ([`short`] questions or the
//! [`json`] prompts: chosen here, nowhere else), and votes. A metric only
//! says which claims, against which text, and how a sample's verdicts
//! score. Extraction ([`extract()`]) lists a text's claims, once per text.
//!
//! With no text to check against, every claim has no evidence and no call
//! is made.

mod extract;
mod json;
mod report;
pub(crate) mod rule;
mod short;

pub(crate) use extract::extract;
pub(crate) use report::{details, dropped, summary};

use super::sampling::{sample, vote_items};
use super::{Asker, Plan};
use crate::core::judged::Person;
use crate::core::{Agreement, Strategy, Verdict};
use crate::error::Result;
use crate::evidence::Found;
use crate::parse::ParsedVerdict;
use crate::tasks::{CheckedVerdict, ClaimSupported};

/// How many single-claim re-asks run at once (the judge's own concurrency
/// limit applies on top).
const REASK_CONCURRENCY: usize = 4;

/// How claims (and passages) are asked about and read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Verification {
    /// Short yes/no questions, or the JSON prompts.
    pub strategy: Strategy,
    /// JSON prompts: claims asked about in one call (1: each claim alone).
    pub batch: usize,
    /// JSON prompts: whether a verdict's evidence must be found in the
    /// passages.
    pub evidence_checked: bool,
    /// Yes/no questions: P(supported) at or above which a claim is supported.
    pub claim_threshold: f64,
    /// Yes/no questions: P(relevant) at or above which a passage is relevant.
    pub passage_threshold: f64,
    /// Yes/no questions: whether a claim the judge answered no to is asked
    /// whether it is contradicted.
    pub contradiction: bool,
    /// Yes/no questions: how many times P(supported) P(contradicted) must
    /// reach for a claim to be contradicted ([`rule`]).
    pub contradiction_ratio: f64,
    /// Yes/no questions: passages longer than this are asked about in
    /// chunks (0: never).
    pub chunk_chars: usize,
    /// Claims are the text's sentences (no judge call), not what the
    /// judge extracts.
    pub sentences: bool,
}

/// A claim's verdict after the vote over every sample.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Voted {
    pub verdict: ParsedVerdict,
    /// Where the winning verdict's evidence was found, when it was.
    pub found: Option<Found>,
    /// `Some` with several samples.
    pub agreement: Option<Agreement>,
    pub undecided: bool,
    /// The verdict needs evidence and its quote was in no passage, even
    /// asked again alone (evidence checked): it decides nothing.
    pub ungrounded: bool,
    /// P(supported) read from the judge's token probabilities (the mean
    /// over the agreeing samples).
    pub probability: Option<f64>,
    /// P(contradicted), for an unsupported claim asked about it (the mean
    /// over the agreeing samples that were asked).
    pub contradiction: Option<f64>,
    /// The evidence was found by ragaliq (the closest passage sentence).
    pub located: bool,
    /// The verdict is a person's, from the recording (the judge's reading
    /// kept in `probability`, and said in the person's `judge`).
    pub person: Option<Person>,
    /// The key a person's verdict on this claim is kept under.
    pub review_key: Option<String>,
}

/// How bad a verdict is for the answer: ties go to the worse one.
fn rank(v: Verdict) -> i32 {
    match v {
        Verdict::Contradicted => 0,
        Verdict::NoEvidence => 1,
        Verdict::PartiallySupported => 2,
        Verdict::Supported => 3,
    }
}

/// A sample's verdict as scored: an ungrounded one counts as no evidence
/// (it never helps the answer).
pub(super) fn scored(v: &CheckedVerdict, checked: bool) -> Verdict {
    if checked && v.ungrounded {
        Verdict::NoEvidence
    } else {
        v.verdict.verdict
    }
}

/// What [`check`] found: each claim's voted verdict, and each sample's
/// score.
pub(crate) struct Checked {
    pub voted: Vec<Voted>,
    pub sample_scores: Vec<f64>,
}

/// `claims` checked against `against` (a context's passages, or a
/// reference text): every sample the plan asks for, asked the way `how`
/// says, and the vote. `score` turns one sample's verdicts (an ungrounded
/// one read as no evidence) into that sample's score (for
/// [`Samples::Auto`](crate::Samples::Auto) and the spread).
pub(crate) async fn check(
    ask: &Asker<'_>,
    how: Verification,
    claims: &[String],
    against: &[String],
    plan: &Plan,
    score: impl Fn(&[ParsedVerdict]) -> f64,
) -> Result<Checked> {
    let sample_score = |set: &Vec<CheckedVerdict>| {
        let read: Vec<ParsedVerdict> = set
            .iter()
            .map(|v| ParsedVerdict {
                verdict: scored(v, how.evidence_checked),
                ..v.verdict.clone()
            })
            .collect();
        score(&read)
    };
    let sampled = sample(plan, |s| verify(ask, how, claims, against, s), sample_score).await?;
    // An ungrounded verdict is no vote: it is `None` here, and the vote is
    // over what the grounded samples said.
    let key =
        |v: &CheckedVerdict| (!(how.evidence_checked && v.ungrounded)).then_some(v.verdict.verdict);
    let worse = |k: Option<Verdict>| k.map_or(-1, rank);
    let voted = vote_items(&sampled.answers, claims.len(), plan, key, worse)
        .into_iter()
        .map(|vote| {
            let first = vote.agreeing[0];
            let confidences: Vec<f64> = vote
                .agreeing
                .iter()
                .filter_map(|v| v.verdict.confidence)
                .collect();
            let ungrounded = vote.winner.is_none();
            let mean = |values: Vec<f64>| {
                (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
            };
            let probabilities: Vec<f64> =
                vote.agreeing.iter().filter_map(|v| v.probability).collect();
            let contradictions: Vec<f64> = vote
                .agreeing
                .iter()
                .filter_map(|v| v.contradiction)
                .collect();
            Voted {
                verdict: ParsedVerdict {
                    verdict: vote.winner.unwrap_or(first.verdict.verdict),
                    evidence: vote
                        .agreeing
                        .iter()
                        .map(|v| v.verdict.evidence.clone())
                        .find(|e| !e.is_empty())
                        .unwrap_or_default(),
                    confidence: match (vote.agreement, &confidences[..]) {
                        // One sample: its confidence as given.
                        (None, _) => first.verdict.confidence,
                        (Some(_), []) => None,
                        (Some(_), c) => Some(c.iter().sum::<f64>() / c.len() as f64),
                    },
                },
                found: vote.agreeing.iter().find_map(|v| v.found.clone()),
                agreement: vote.agreement,
                undecided: vote.undecided || ungrounded,
                ungrounded,
                probability: mean(probabilities),
                contradiction: mean(contradictions),
                located: first.located,
                person: None,
                review_key: None,
            }
        })
        .collect::<Vec<Voted>>();
    let mut voted = voted;
    if !against.is_empty() {
        for (claim, v) in claims.iter().zip(&mut voted) {
            let (key, person) = reviewed(ask, how, claim, against, plan.persons)?;
            v.review_key = key;
            if let Some(person) = person {
                by_person(v, person)?;
            }
        }
    }
    Ok(Checked {
        voted,
        sample_scores: sampled.scores,
    })
}

/// The key of what `claim` was judged against (`against`), and the
/// person's verdict on it, when `persons`: looked up under the question
/// the claim was asked as (with passages in chunks, each chunk's; the
/// first found decides). Asks nothing.
fn reviewed(
    ask: &Asker<'_>,
    how: Verification,
    claim: &str,
    against: &[String],
    persons: bool,
) -> Result<(Option<String>, Option<Person>)> {
    let chunks = match how.strategy {
        Strategy::Json => vec![against.to_vec()],
        Strategy::Probability | Strategy::Word => short::chunks(against, how.chunk_chars),
    };
    let mut first_key = None;
    for chunk in &chunks {
        let (key, person) = ask.review(
            &ClaimSupported {
                claim,
                passages: chunk,
            },
            1,
            persons,
        )?;
        first_key = first_key.or(key);
        if person.is_some() {
            return Ok((first_key, person));
        }
    }
    Ok((first_key, None))
}

/// `v` decided by a person's verdict: theirs in place of the vote's, the
/// judge's reading said beside it (its probability stays the judge's).
fn by_person(v: &mut Voted, mut person: Person) -> Result<()> {
    let verdict =
        Verdict::from_label(&person.verdict).ok_or_else(|| crate::error::Error::Reviewed {
            problem: format!(
                "`{}` on a claim: give supported, partially_supported, no_evidence or contradicted",
                person.verdict
            ),
        })?;
    let mut judge = if v.ungrounded {
        format!("{}, evidence in no passage", v.verdict.verdict)
    } else if v.undecided {
        format!("undecided, most said {}", v.verdict.verdict)
    } else {
        v.verdict.verdict.label().to_owned()
    };
    match (v.probability, v.verdict.confidence) {
        (Some(p), _) => judge.push_str(&format!(", P(supported) {p:.2}")),
        (None, Some(c)) => judge.push_str(&format!(", confidence {c:.2}")),
        (None, None) => {}
    }
    person.judge = judge;
    v.verdict.verdict = verdict;
    v.verdict.confidence = None;
    v.undecided = false;
    v.ungrounded = false;
    v.agreement = None;
    v.person = Some(person);
    Ok(())
}

/// One verdict per claim, in claim order, from sample `sample`: the one
/// place the way of asking is chosen.
async fn verify(
    ask: &Asker<'_>,
    how: Verification,
    claims: &[String],
    against: &[String],
    sample: u32,
) -> Result<Vec<CheckedVerdict>> {
    if against.is_empty() {
        return Ok(claims
            .iter()
            .map(|_| CheckedVerdict::no_evidence())
            .collect());
    }
    match how.strategy {
        Strategy::Json => json::verify(ask, how, claims, against, sample).await,
        Strategy::Probability | Strategy::Word => {
            short::verify(ask, how, claims, against, sample).await
        }
    }
}

/// A text's sentences (ended by `.`, `!` or `?` before a space, or a line
/// break), trimmed.
pub(super) fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        let end = i + c.len_utf8();
        let boundary = c == '\n'
            || (matches!(c, '.' | '!' | '?') && bytes.get(end).is_none_or(u8::is_ascii_whitespace));
        if boundary {
            let s = text[start..end].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = end;
        }
    }
    let s = text[start..].trim();
    if !s.is_empty() {
        out.push(s);
    }
    out
}
