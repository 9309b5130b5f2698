//! Claim extraction and verification, shared by faithfulness, hallucination
//! and context recall, with several samples voted on when asked.

use super::sampling::{sample, vote_items};
use super::{Asker, Plan};
use crate::core::{Agreement, Verdict};
use crate::error::Result;
use crate::parse::ParsedVerdict;
use crate::tasks::{ExtractClaims, VerifyClaim, VerifyClaims};
use futures_util::{StreamExt, TryStreamExt, stream};

/// How many single-claim re-asks run at once when a batch cannot be matched
/// (the judge's own concurrency limit applies on top).
const REASK_CONCURRENCY: usize = 4;

/// The atomic claims of `text`. No call for a blank text: it claims nothing.
/// Claims are extracted once (sample 0), whatever the samples: voting
/// happens on the verdicts, about the same claims.
pub(super) async fn extract(ask: &Asker<'_>, query: &str, text: &str) -> Result<Vec<String>> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    ask.ask(&ExtractClaims { query, text }, 0).await
}

/// A claim's verdict after the vote over every sample.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Voted {
    pub verdict: ParsedVerdict,
    /// `Some` with several samples.
    pub agreement: Option<Agreement>,
    pub undecided: bool,
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

/// Verdicts on `claims` from every sample the plan asks for, and the vote.
/// `score` turns one sample's verdicts into that sample's score (for
/// [`Samples::Auto`](crate::Samples::Auto) and the spread).
pub(super) async fn verify_voted(
    ask: &Asker<'_>,
    claims: &[String],
    passages: &[String],
    plan: &Plan,
    score: impl Fn(&[ParsedVerdict]) -> f64,
) -> Result<(Vec<Voted>, Vec<f64>)> {
    let sampled = sample(
        plan,
        |s| verify(ask, claims, passages, s),
        |set: &Vec<ParsedVerdict>| score(set),
    )
    .await?;
    let voted = vote_items(&sampled.answers, claims.len(), plan, |v| v.verdict, rank)
        .into_iter()
        .map(|vote| {
            let confidences: Vec<f64> = vote.agreeing.iter().filter_map(|v| v.confidence).collect();
            Voted {
                verdict: ParsedVerdict {
                    verdict: vote.winner,
                    evidence: vote
                        .agreeing
                        .iter()
                        .map(|v| v.evidence.clone())
                        .find(|e| !e.is_empty())
                        .unwrap_or_default(),
                    confidence: match (vote.agreement, &confidences[..]) {
                        // One sample: its confidence as given.
                        (None, _) => vote.agreeing[0].confidence,
                        (Some(_), []) => None,
                        (Some(_), c) => Some(c.iter().sum::<f64>() / c.len() as f64),
                    },
                },
                agreement: vote.agreement,
                undecided: vote.undecided,
            }
        })
        .collect();
    Ok((voted, sampled.scores))
}

/// One verdict per claim, in claim order, from sample `sample`.
///
/// One batched call; the claims its reply leaves unanswered (some missing,
/// or a batch that cannot be matched at all) are re-asked one by one, at
/// most [`MAX_REASKS`](crate::MAX_REASKS) of them. Verdicts are never
/// truncated or padded. With no context, every claim has no evidence and no
/// call is made.
async fn verify(
    ask: &Asker<'_>,
    claims: &[String],
    passages: &[String],
    sample: u32,
) -> Result<Vec<ParsedVerdict>> {
    if claims.is_empty() {
        return Ok(Vec::new());
    }
    if passages.is_empty() {
        return Ok(claims
            .iter()
            .map(|_| ParsedVerdict {
                verdict: Verdict::NoEvidence,
                evidence: String::new(),
                confidence: None,
            })
            .collect());
    }
    let mut verdicts = ask.ask(&VerifyClaims { claims, passages }, sample).await?;
    let missing: Vec<usize> = (0..claims.len())
        .filter(|&i| verdicts[i].is_none())
        .collect();
    let reasked: Vec<(usize, ParsedVerdict)> = stream::iter(missing)
        .map(|i| async move {
            let claim = VerifyClaim {
                claim: &claims[i],
                passages,
            };
            ask.ask(&claim, sample).await.map(|v| (i, v))
        })
        .buffer_unordered(REASK_CONCURRENCY)
        .try_collect()
        .await?;
    for (i, v) in reasked {
        verdicts[i] = Some(v);
    }
    Ok(verdicts.into_iter().flatten().collect())
}
