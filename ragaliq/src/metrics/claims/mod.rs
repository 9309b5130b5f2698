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
pub(crate) use report::{details, dropped, no_claims, summary};

use super::decide::{Read, Threshold, decide};
use super::sampling::{sample, vote_items};
use super::vocab::{Asker, Interval, Plan, Verification};
use crate::core::judged::{NOT_A_CLAIM, Person};
use crate::core::{Agreement, Kind, Strategy, Unsure, UnsureWhy, Verdict};
use crate::error::Result;
use crate::evidence::Found;
use crate::parse::ParsedVerdict;
use crate::tasks::{CheckedVerdict, ClaimSupported};

/// How many single-claim re-asks run at once (the judge's own concurrency
/// limit applies on top).
const REASK_CONCURRENCY: usize = 4;

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
    /// With passages in chunks: the chunk the reading came from.
    pub chunk: usize,
    /// The claim is uncertain for every judge asked, and why.
    pub unsure: Option<Unsure>,
    /// The judge the verdict is from, when the claim was escalated.
    pub judge: Option<String>,
    /// A person said the item states no fact to check ([`NoClaim`]): it
    /// leaves the score.
    pub no_claim: Option<NoClaim>,
}

/// Why an item of a text counts as no claim: it leaves the score (counted
/// neither supported nor unsupported), and the reasoning says so. A
/// person says it (`not_a_claim`). The one rule of ragaliq's own acts
/// earlier: the user's *wh*-question echoed back is dropped at extraction
/// ([`crate::evidence::the_question_echoed`]), never asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NoClaim {
    /// A person's verdict `not_a_claim`.
    Person,
}

impl NoClaim {
    /// As the reasoning says it: `a person's verdict`.
    pub(crate) fn describe(self) -> String {
        match self {
            NoClaim::Person => "a person's verdict".to_owned(),
        }
    }
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

/// What [`check`] found: each claim's voted verdict, each sample's score
/// (the first judge's), and per judge of the cascade how many claims it was
/// asked about and how many it decided.
pub(crate) struct Checked {
    pub voted: Vec<Voted>,
    pub sample_scores: Vec<f64>,
    pub judges: Vec<(usize, usize)>,
}

impl Checked {
    /// How many claims await a person.
    pub(crate) fn awaiting(&self) -> usize {
        self.voted.iter().filter(|v| v.awaits()).count()
    }

    /// The score `score` gives the verdicts with every claim that awaits a
    /// person counted each way: supported, and not (its own verdict, or no
    /// evidence where the threshold read it supported). `None` when none
    /// awaits.
    pub(crate) fn interval(&self, score: impl Fn(&[ParsedVerdict]) -> f64) -> Option<Interval> {
        let n = self.awaiting();
        let way = |yes: bool| -> Vec<ParsedVerdict> {
            self.voted
                .iter()
                .filter(|v| v.is_claim())
                .map(|v| {
                    if !v.awaits() {
                        return ParsedVerdict {
                            verdict: v.counted(),
                            ..v.verdict.clone()
                        };
                    }
                    let verdict = match (yes, v.counted()) {
                        (true, _) => Verdict::Supported,
                        (false, Verdict::Supported | Verdict::PartiallySupported) => {
                            Verdict::NoEvidence
                        }
                        (false, other) => other,
                    };
                    ParsedVerdict {
                        verdict,
                        evidence: String::new(),
                        confidence: None,
                    }
                })
                .collect()
        };
        Interval::of(n, score(&way(false)), score(&way(true)))
    }
}

impl Voted {
    /// Whether the claim decides nothing yet: uncertain for every judge,
    /// and no person's verdict.
    pub(crate) fn awaits(&self) -> bool {
        self.person.is_none() && self.unsure.is_some() && self.no_claim.is_none()
    }

    /// Whether the claim counts in a score: no person took it for no claim.
    pub(crate) fn is_claim(&self) -> bool {
        self.no_claim.is_none()
    }

    /// The verdict as a score counts it: a verdict whose evidence is in no
    /// passage never helps the answer (no evidence), whatever it said.
    pub(crate) fn counted(&self) -> Verdict {
        if self.ungrounded && self.person.is_none() {
            Verdict::NoEvidence
        } else {
            self.verdict.verdict
        }
    }
}

/// `claims` checked against `against` (a context's passages, or a
/// reference text) through the one decision step ([`decide`]): every sample
/// the plan asks for, asked the way each judge is set to ask, voted; a
/// claim uncertain for one judge asked of the next; a person's verdict in
/// the recording deciding. `score` turns one sample's verdicts (an
/// ungrounded one read as no evidence) into that sample's score (for
/// [`Samples::Auto`](crate::Samples::Auto) and the spread).
pub(crate) async fn check(
    ask: &Asker<'_>,
    claims: &[String],
    against: &[String],
    plan: &Plan,
    score: impl Fn(&[ParsedVerdict]) -> f64,
) -> Result<Checked> {
    let first_scores = std::sync::Mutex::new(Vec::new());
    let asked = std::sync::Mutex::new(Vec::new());
    let score = &score;
    let decided = if against.is_empty() {
        // Nothing to check against: no evidence, and nothing asked (so
        // nothing for a person to have judged).
        Vec::new()
    } else {
        decide(
            ask,
            Kind::Claims,
            Threshold::Claim,
            plan,
            claims.len(),
            |judge: Asker<'_>, items: Vec<usize>| {
                let subset: Vec<String> = items.iter().map(|&i| claims[i].clone()).collect();
                let first_scores = &first_scores;
                let asked = &asked;
                async move {
                    let how = judge.scoring().verification;
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
                    let voted: Vec<Result<Voted>> = match sample(
                        plan,
                        |s| verify(&judge, how, &subset, against, s),
                        &sample_score,
                    )
                    .await
                    {
                        Ok(sampled) => {
                            if judge.stage() == 0 {
                                *crate::core::sync::lock(first_scores) = sampled.scores.clone();
                            }
                            vote(&sampled.answers, subset.len(), plan, how)
                                .into_iter()
                                .map(Ok)
                                .collect()
                        }
                        // A reply no parser reads fails the set it is in:
                        // each claim is read alone instead, so that a
                        // person's verdict on the one that failed can decide
                        // it and its neighbours stand. With short questions
                        // each claim is its own question anyway: the same
                        // exchanges, no new call.
                        Err(e) if e.is_judge_reply() && how.strategy != Strategy::Json => {
                            let mut each = Vec::with_capacity(subset.len());
                            for claim in &subset {
                                let one = std::slice::from_ref(claim);
                                each.push(
                                    sample(
                                        plan,
                                        |s| verify(&judge, how, one, against, s),
                                        &sample_score,
                                    )
                                    .await
                                    .map(|sampled| vote(&sampled.answers, 1, plan, how).remove(0)),
                                );
                            }
                            each
                        }
                        Err(e) => return Err(e),
                    };
                    crate::core::sync::lock(asked).push(subset.len());
                    Ok(voted
                        .into_iter()
                        .map(|v| {
                            let v = v?;
                            let unsettled = if v.ungrounded {
                                Some(UnsureWhy::Ungrounded)
                            } else if v.undecided {
                                Some(UnsureWhy::Split)
                            } else {
                                None
                            };
                            Ok(Read {
                                p: v.probability.unwrap_or(match v.verdict.verdict {
                                    Verdict::Supported => 1.0,
                                    Verdict::PartiallySupported => 0.5,
                                    _ => 0.0,
                                }),
                                from_probabilities: v.probability.is_some(),
                                unsettled,
                                value: v,
                            })
                        })
                        .collect())
                }
            },
            |i, read: Option<&Voted>| reviewed(ask, &claims[i], against, read, plan.persons),
        )
        .await?
    };
    let mut judges = vec![(0, 0); ask.judges()];
    for (k, n) in crate::core::sync::lock(&asked).iter().enumerate() {
        judges[k].0 = *n;
    }
    let voted = if against.is_empty() {
        claims
            .iter()
            .map(|_| voted_alone(CheckedVerdict::no_evidence()))
            .collect()
    } else {
        let mut out = Vec::with_capacity(decided.len());
        for d in decided {
            if d.person.is_none() && d.unsure.is_none() {
                judges[d.stage].1 += 1;
            }
            let mut v = match d.value {
                Some(v) => v,
                None => voted_alone(CheckedVerdict::no_evidence()),
            };
            v.undecided = false;
            v.unsure = d.unsure;
            v.review_key = d.review_key;
            v.judge = (d.stage > 0).then(|| ask.at(d.stage).model().to_owned());
            if let Some(person) = d.person {
                by_person(&mut v, person)?;
            } else {
                v.undecided = v.unsure.is_some();
            }
            out.push(v);
        }
        out
    };
    let sample_scores = std::mem::take(&mut *crate::core::sync::lock(&first_scores));
    Ok(Checked {
        voted,
        sample_scores,
        judges,
    })
}

/// A claim's verdict as the one sample that gave it.
fn voted_alone(v: CheckedVerdict) -> Voted {
    Voted {
        found: v.found,
        agreement: None,
        undecided: false,
        ungrounded: v.ungrounded,
        probability: v.probability,
        contradiction: v.contradiction,
        located: v.located,
        chunk: v.chunk,
        verdict: v.verdict,
        person: None,
        review_key: None,
        unsure: None,
        judge: None,
        no_claim: None,
    }
}

/// The vote on each of `n` claims over every sample's verdicts.
fn vote(answers: &[Vec<CheckedVerdict>], n: usize, plan: &Plan, how: Verification) -> Vec<Voted> {
    // An ungrounded verdict is no vote: it is `None` here, and the vote is
    // over what the grounded samples said.
    let key =
        |v: &CheckedVerdict| (!(how.evidence_checked && v.ungrounded)).then_some(v.verdict.verdict);
    let worse = |k: Option<Verdict>| k.map_or(-1, rank);
    vote_items(answers, n, plan, key, worse)
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
                chunk: first.chunk,
                person: None,
                review_key: None,
                unsure: None,
                judge: None,
                no_claim: None,
            }
        })
        .collect()
}

/// The key of what `claim` was judged against (`against`), and the
/// person's verdict on it: looked up under the question the claim was asked
/// as. With passages in chunks, each chunk is its own item: the best
/// verdict a person gave on any chunk decides (a claim is supported when
/// some chunk supports it, as the judge's reading takes the likeliest
/// chunk), and the key shown is the chunk the judge's reading came from.
/// Asks nothing.
fn reviewed(
    ask: &Asker<'_>,
    claim: &str,
    against: &[String],
    read: Option<&Voted>,
    persons: bool,
) -> Result<(Option<String>, Option<Person>)> {
    let how = ask.scoring().verification;
    let chunks = match how.strategy {
        Strategy::Json => vec![against.to_vec()],
        Strategy::Probability | Strategy::Word => short::chunks(against, how.chunk_chars),
    };
    let deciding = read
        .map_or(0, |v| v.chunk)
        .min(chunks.len().saturating_sub(1));
    let mut shown = None;
    let mut best: Option<Person> = None;
    for (c, chunk) in chunks.iter().enumerate() {
        let (key, person) = ask.review(
            &ClaimSupported {
                claim,
                passages: chunk,
            },
            1,
            persons,
        )?;
        if c == deciding {
            shown = key;
        }
        if let Some(person) = person {
            let rank_of = |p: &Person| Verdict::from_label(&p.verdict).map_or(-1, rank);
            if best.as_ref().is_none_or(|b| rank_of(&person) > rank_of(b)) {
                best = Some(person);
            }
        }
    }
    Ok((shown, best))
}

/// `v` decided by a person's verdict: theirs in place of the vote's, the
/// judge's reading said beside it (its probability stays the judge's).
fn by_person(v: &mut Voted, mut person: Person) -> Result<()> {
    let not_a_claim = person.verdict == NOT_A_CLAIM;
    let verdict = if not_a_claim {
        // The judge's verdict stays beside the person's: it counts nowhere.
        v.verdict.verdict
    } else {
        Verdict::from_label(&person.verdict).ok_or_else(|| crate::error::Error::Reviewed {
            problem: format!(
                "`{}` on a claim: give supported, partially_supported, no_evidence, contradicted or {NOT_A_CLAIM}",
                person.verdict
            ),
        })?
    };
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
    v.no_claim = not_a_claim.then_some(NoClaim::Person);
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
