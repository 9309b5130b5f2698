//! Claim extraction and verification, shared by faithfulness, hallucination
//! and context recall, with several samples voted on when asked.
//!
//! Verification asks about the claims in batches (`verify_batch` claims per
//! call). Every item of a batch's answer is read on its own: a claim whose
//! item cannot be read is asked again alone, and its neighbours stand. With
//! evidence checked (the default), a verdict that needs evidence and whose
//! quote is in no passage is asked again alone, once, told that its quote
//! was not found; a verdict still ungrounded then decides nothing: the
//! claim is undecided, never a pass.
//!
//! With short questions ([`Strategy::Probability`] or [`Strategy::Word`]),
//! each claim is asked alone whether the passages support it (per chunk
//! of a long context: the best chunk counts); P(supported) at or above the
//! threshold makes it supported. An unsupported claim is asked whether the
//! passages contradict it (when configured), and is shown beside the
//! passage sentence closest to it, found by ragaliq: the judge is never
//! asked for a quote, which made small judges' verdicts worse.

use super::sampling::{sample, vote_items};
use super::{Asker, Plan};
use crate::core::{Agreement, Strategy, Verdict};
use crate::error::{Error, Result};
use crate::evidence::Found;
use crate::parse::{ParseError, ParseErrorKind, ParsedVerdict};
use crate::tasks::{
    CheckedVerdict, ClaimContradicted, ClaimSupported, ExtractClaims, Extracted, MAX_REASKS,
    VerifyClaim, VerifyClaims,
};
use futures_util::{StreamExt, stream};

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
    /// Yes/no questions: whether an unsupported claim is asked whether it
    /// is contradicted.
    pub contradiction: bool,
    /// Yes/no questions: P(contradicted) at or above which an unsupported
    /// claim is contradicted.
    pub contradiction_threshold: f64,
    /// Yes/no questions: passages longer than this are asked about in
    /// chunks (0: never).
    pub chunk_chars: usize,
    /// Claims are the text's sentences (no judge call), not what the
    /// judge extracts.
    pub sentences: bool,
}

/// The claims of `text` that come from it (see
/// [`ExtractClaims`](crate::tasks::ExtractClaims)), and those the judge
/// wrote that do not. No call for a blank text: it claims nothing. Claims
/// are extracted once (sample 0), whatever the samples: voting happens on
/// the verdicts, about the same claims.
///
/// A text that states something and gets no claim from it (none listed,
/// or every one listed dropped as not the text's) is asked once more, then
/// marked missed (undecided): scoring it as claiming nothing would call it
/// vacuously faithful. An extraction that gives claims, none of them from a
/// text that states nothing, is an error.
pub(super) async fn extract(
    ask: &Asker<'_>,
    how: Verification,
    query: &str,
    text: &str,
) -> Result<Extracted> {
    if text.trim().is_empty() {
        return Ok(Extracted {
            claims: Vec::new(),
            dropped: Vec::new(),
            missed: false,
        });
    }
    if how.sentences {
        // Every sentence that states something: questions are not claims.
        return Ok(Extracted {
            claims: sentences(text)
                .into_iter()
                .filter(|s| !s.ends_with('?'))
                .map(str::to_owned)
                .collect(),
            dropped: Vec::new(),
            missed: false,
        });
    }
    let mut extracted = ask.ask(&ExtractClaims { query, text }, 0).await?;
    if extracted.claims.is_empty() && crate::evidence::states_something(text) {
        // No claim from a text that states something: asked once more (a
        // second sample), then it is undecided, never vacuously faithful.
        // Claims the judge wrote that are not the text's (a small model
        // answering the query instead) count as none: the 1.5B did so on
        // an off-topic answer. What the second ask dropped stays listed.
        extracted = ask.ask(&ExtractClaims { query, text }, 1).await?;
        extracted.missed = extracted.claims.is_empty();
        if extracted.missed {
            return Ok(extracted);
        }
    }
    if extracted.claims.is_empty() && !extracted.dropped.is_empty() {
        let listed: Vec<String> = extracted
            .dropped
            .iter()
            .map(|(_, c, _)| format!("{c:?}"))
            .collect();
        return Err(Error::JudgeResponse {
            task: "extract_claims",
            source: ParseError::new(
                ParseErrorKind::WrongShape {
                    detail: format!(
                        "none of the claims the judge extracted is in the response: {}",
                        listed.join(", ")
                    ),
                },
                // What the judge answered, as read (the recording keeps the
                // reply itself): a reader sees every claim it wrote.
                serde_json::json!({
                    "claims": extracted.dropped.iter().map(|(_, c, _)| c).collect::<Vec<_>>()
                })
                .to_string()
                .as_str(),
            ),
        });
    }
    Ok(extracted)
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

/// Verdicts on `claims` from every sample the plan asks for, and the vote.
/// `score` turns one sample's verdicts (an ungrounded one read as no
/// evidence) into that sample's score (for
/// [`Samples::Auto`](crate::Samples::Auto) and the spread).
pub(super) async fn verify_voted(
    ask: &Asker<'_>,
    how: Verification,
    claims: &[String],
    passages: &[String],
    plan: &Plan,
    score: impl Fn(&[ParsedVerdict]) -> f64,
) -> Result<(Vec<Voted>, Vec<f64>)> {
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
    let sampled = sample(
        plan,
        |s| verify(ask, how, claims, passages, s),
        sample_score,
    )
    .await?;
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
            }
        })
        .collect();
    Ok((voted, sampled.scores))
}

/// One verdict per claim, in claim order, from sample `sample`.
///
/// Batches of `how.batch` claims; the claims a batch's answer leaves
/// unanswered are asked again alone, at most [`MAX_REASKS`] per batch; with
/// evidence checked, so are ungrounded verdicts, once. Verdicts are never
/// truncated or padded. With no context, every claim has no evidence and no
/// call is made.
async fn verify(
    ask: &Asker<'_>,
    how: Verification,
    claims: &[String],
    passages: &[String],
    sample: u32,
) -> Result<Vec<CheckedVerdict>> {
    if passages.is_empty() {
        return Ok(claims
            .iter()
            .map(|_| CheckedVerdict {
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
            })
            .collect());
    }
    if how.strategy != Strategy::Json {
        // Each claim alone, in order: a server's prompt cache keeps the
        // passages between one claim's question and the next's.
        let asked = stream::iter(claims)
            .map(|claim| probe(ask, how, claim, passages, sample))
            .buffered(REASK_CONCURRENCY)
            .collect::<Vec<_>>()
            .await;
        return super::sampling::every(asked);
    }
    let batches = claims.chunks(how.batch.max(1)).map(|chunk| async move {
        let mut got: Vec<Option<CheckedVerdict>> = if chunk.len() == 1 {
            // A batch of one is asked as one claim.
            vec![Some(alone(ask, &chunk[0], passages, sample, false).await?)]
        } else {
            ask.ask(
                &VerifyClaims {
                    claims: chunk,
                    passages,
                },
                sample,
            )
            .await?
            .items
        };
        // Unreadable items first, then (evidence checked) ungrounded ones.
        for retry in [false, true] {
            if retry && !how.evidence_checked {
                break;
            }
            let again: Vec<usize> = (0..chunk.len())
                .filter(|&i| match &got[i] {
                    None => !retry,
                    Some(v) => retry && v.ungrounded,
                })
                .take(MAX_REASKS)
                .collect();
            let answers = stream::iter(again)
                .map(|i| async move {
                    alone(ask, &chunk[i], passages, sample, retry)
                        .await
                        .map(|v| (i, v))
                })
                .buffer_unordered(REASK_CONCURRENCY)
                .collect::<Vec<_>>()
                .await;
            let answers: Vec<(usize, CheckedVerdict)> = super::sampling::every(answers)?;
            for (i, v) in answers {
                got[i] = Some(v);
            }
        }
        got.into_iter()
            .map(|v| {
                v.ok_or_else(|| Error::JudgeResponse {
                    task: "verify_claims",
                    source: ParseError::new(
                        ParseErrorKind::Unmatched {
                            unmatched: 1,
                            limit: MAX_REASKS,
                        },
                        "",
                    ),
                })
            })
            .collect::<Result<Vec<_>>>()
    });
    let verdicts = super::sampling::every(futures_util::future::join_all(batches).await)?;
    Ok(verdicts.into_iter().flatten().collect())
}

/// One claim asked alone; `retry` says the judge's quote for it was in no
/// passage, so the question says so.
async fn alone(
    ask: &Asker<'_>,
    claim: &str,
    passages: &[String],
    sample: u32,
    retry: bool,
) -> Result<CheckedVerdict> {
    ask.ask(
        &VerifyClaim {
            claim,
            passages,
            retry,
        },
        sample,
    )
    .await
}

/// One claim asked with short questions (see the module): supported, and
/// when not, contradicted; its evidence the closest passage sentence.
async fn probe(
    ask: &Asker<'_>,
    how: Verification,
    claim: &str,
    passages: &[String],
    sample: u32,
) -> Result<CheckedVerdict> {
    let chunks = chunks(passages, how.chunk_chars);
    let mut supported: Option<(f64, bool)> = None;
    for chunk in &chunks {
        let read = ask
            .ask(
                &ClaimSupported {
                    claim,
                    passages: chunk,
                },
                sample,
            )
            .await?;
        if supported.is_none_or(|(p, _)| read.p_yes > p) {
            supported = Some((read.p_yes, read.from_probabilities));
        }
    }
    let (p, from_probabilities) = supported.unwrap_or((0.0, false));
    let mut asked_contradiction = None;
    let verdict = if p >= how.claim_threshold {
        (Verdict::Supported, from_probabilities.then_some(p))
    } else if how.contradiction {
        let mut contradicted: Option<(f64, bool)> = None;
        for chunk in &chunks {
            let read = ask
                .ask(
                    &ClaimContradicted {
                        claim,
                        passages: chunk,
                    },
                    sample,
                )
                .await?;
            if contradicted.is_none_or(|(q, _)| read.p_yes > q) {
                contradicted = Some((read.p_yes, read.from_probabilities));
            }
        }
        asked_contradiction = contradicted.and_then(|(q, from)| from.then_some(q));
        match contradicted {
            Some((q, from)) if q >= how.contradiction_threshold => {
                (Verdict::Contradicted, from.then_some(q))
            }
            _ => (Verdict::NoEvidence, from_probabilities.then_some(1.0 - p)),
        }
    } else {
        (Verdict::NoEvidence, from_probabilities.then_some(1.0 - p))
    };
    let found = crate::evidence::closest_sentence(claim, passages);
    let evidence = found
        .as_ref()
        .map(|f| passages[f.passage][f.span.clone()].to_owned())
        .unwrap_or_default();
    Ok(CheckedVerdict {
        verdict: ParsedVerdict {
            verdict: verdict.0,
            evidence,
            confidence: verdict.1,
        },
        found,
        ungrounded: false,
        probability: from_probabilities.then_some(p),
        contradiction: asked_contradiction,
        located: true,
    })
}

/// The passages in chunks of at most `chars` characters (0: one chunk of
/// all): whole passages together while they fit, and a passage longer than
/// `chars` alone, cut into groups of its sentences.
fn chunks(passages: &[String], chars: usize) -> Vec<Vec<String>> {
    let total: usize = passages.iter().map(|p| p.chars().count()).sum();
    if chars == 0 || total <= chars {
        return vec![passages.to_vec()];
    }
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut size = 0;
    for passage in passages {
        let n = passage.chars().count();
        if n > chars || size + n > chars {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            size = 0;
        }
        if n > chars {
            let mut part = String::new();
            for sentence in sentences(passage) {
                if !part.is_empty() && part.chars().count() + sentence.chars().count() > chars {
                    out.push(vec![std::mem::take(&mut part)]);
                }
                if !part.is_empty() {
                    part.push(' ');
                }
                part.push_str(sentence);
            }
            if !part.is_empty() {
                out.push(vec![part]);
            }
            continue;
        }
        current.push(passage.clone());
        size += n;
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// A passage's sentences (ended by `.`, `!` or `?` before a space, or a
/// line break), trimmed.
fn sentences(text: &str) -> Vec<&str> {
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

#[cfg(test)]
mod tests {
    use super::chunks;

    #[test]
    fn long_contexts_are_cut_into_chunks_of_whole_passages_or_sentences() {
        let p = |s: &str| s.to_owned();
        let short = vec![p("aaaa."), p("bbbb."), p("cccc.")];
        assert_eq!(chunks(&short, 0), vec![short.clone()], "0: never");
        assert_eq!(chunks(&short, 100), vec![short.clone()], "all fit");
        assert_eq!(
            chunks(&short, 10),
            vec![vec![p("aaaa."), p("bbbb.")], vec![p("cccc.")]]
        );
        // A passage longer than a chunk alone, by its sentences.
        let long = vec![p("One two. Three four. Five six."), p("x.")];
        assert_eq!(
            chunks(&long, 20),
            vec![
                vec![p("One two. Three four.")],
                vec![p("Five six.")],
                vec![p("x.")]
            ]
        );
        // Every character of every passage is in some chunk.
        let total: usize = chunks(&long, 5)
            .iter()
            .flatten()
            .map(|c| c.chars().filter(|c| !c.is_whitespace()).count())
            .sum();
        assert_eq!(total, "Onetwo.Threefour.Fivesix.x.".len());
    }
}
