//! Claim extraction and verification, shared by faithfulness, hallucination
//! and context recall, with several samples voted on when asked.

use super::sampling::{Agreement, vote};
use super::{Plan, Tally};
use crate::error::{Error, Result};
use crate::judge::Judge;
use crate::parse::{self, ParseError, ParseErrorKind, ParsedVerdict};
use crate::prompts::{Shape, Task, escape, numbered};
use crate::verdict::Verdict;
use futures_util::future::try_join_all;
use futures_util::{StreamExt, TryStreamExt, stream};
use serde_json::json;

/// How many single-claim re-asks run at once when a batch cannot be matched
/// (the judge's own concurrency limit applies on top).
const REASK_CONCURRENCY: usize = 4;

/// The most claims re-asked one by one after one batch: a judge that leaves
/// more unmatched is not answering the batch, and asking each would cost
/// without end.
pub const MAX_REASKS: usize = 8;

/// The atomic claims of `text`. No call for a blank text: it claims nothing.
/// Claims are extracted once (sample 0), whatever the samples: voting
/// happens on the verdicts, about the same claims.
pub(super) async fn extract(
    judge: &Judge,
    query: &str,
    text: &str,
    tally: &Tally,
) -> Result<Vec<String>> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let user = judge.templates().render(
        Task::ExtractClaims,
        &[
            ("query", &escape(query.trim())),
            ("response", &escape(text.trim())),
        ],
    );
    let shape = Shape::text(text.trim().chars().count());
    let request = judge.request(
        Task::ExtractClaims,
        user,
        json!({"query": query, "response": text}),
        shape,
    );
    let reply = judge
        .exchange(&request, Task::ExtractClaims, &shape, tally)
        .await?;
    parse::claims(&reply.text).map_err(|source| Error::JudgeResponse {
        task: Task::ExtractClaims.name(),
        source,
    })
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
/// [`Samples::Auto`](super::Samples::Auto) and the spread).
pub(super) async fn verify_voted(
    judge: &Judge,
    claims: &[String],
    passages: &[String],
    plan: &Plan,
    tally: &Tally,
    score: impl Fn(&[ParsedVerdict]) -> f64,
) -> Result<(Vec<Voted>, Vec<f64>)> {
    let first = plan.samples.first();
    let mut sets: Vec<Vec<ParsedVerdict>> =
        try_join_all((0..first).map(|s| verify(judge, claims, passages, s, tally))).await?;
    if first == 1 && plan.samples.wants_more(score(&sets[0]), plan.threshold) {
        sets.extend(
            try_join_all(
                (1..plan.samples.max()).map(|s| verify(judge, claims, passages, s, tally)),
            )
            .await?,
        );
    }
    let scores: Vec<f64> = sets.iter().map(|set| score(set)).collect();
    if sets.len() == 1 {
        let voted = sets
            .pop()
            .unwrap_or_default()
            .into_iter()
            .map(|verdict| Voted {
                verdict,
                agreement: None,
                undecided: false,
            })
            .collect();
        return Ok((voted, scores));
    }
    let voted = (0..claims.len())
        .map(|i| {
            let labels: Vec<Verdict> = sets.iter().map(|set| set[i].verdict).collect();
            let (winner, agreement) = vote(&labels, rank);
            let agreeing: Vec<&ParsedVerdict> = sets
                .iter()
                .map(|set| &set[i])
                .filter(|v| v.verdict == winner)
                .collect();
            let confidences: Vec<f64> = agreeing.iter().filter_map(|v| v.confidence).collect();
            Voted {
                verdict: ParsedVerdict {
                    verdict: winner,
                    evidence: agreeing
                        .iter()
                        .map(|v| v.evidence.clone())
                        .find(|e| !e.is_empty())
                        .unwrap_or_default(),
                    confidence: (!confidences.is_empty())
                        .then(|| confidences.iter().sum::<f64>() / confidences.len() as f64),
                },
                agreement: Some(agreement),
                undecided: !agreement.reaches(plan.agreement),
            }
        })
        .collect();
    Ok((voted, scores))
}

/// One verdict per claim, in claim order, from sample `sample`.
///
/// One batched call; when its reply cannot be matched to the claims one to
/// one (some missing, numbers out of range or contradictory), the unmatched
/// claims are re-asked one by one, at most [`MAX_REASKS`] of them. Verdicts
/// are never truncated or padded. With no context, every claim has no
/// evidence and no call is made.
pub(super) async fn verify(
    judge: &Judge,
    claims: &[String],
    passages: &[String],
    sample: u32,
    tally: &Tally,
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
    let rendered_passages = numbered("passage", passages);
    let user = judge.templates().render(
        Task::VerifyClaims,
        &[
            ("passages", &rendered_passages),
            ("claims", &numbered("claim", claims)),
            ("count", &claims.len().to_string()),
        ],
    );
    let shape = Shape::items(claims.len());
    let mut request = judge.request(
        Task::VerifyClaims,
        user,
        json!({"claims": claims, "passages": passages}),
        shape,
    );
    request.sample = sample;
    let reply = judge
        .exchange(&request, Task::VerifyClaims, &shape, tally)
        .await?;
    let mut verdicts = match parse::verdicts_partial(&reply.text, claims.len()) {
        Ok(partial) => partial,
        Err(e)
            if matches!(
                e.kind,
                ParseErrorKind::CountMismatch { .. } | ParseErrorKind::BadIndex { .. }
            ) =>
        {
            vec![None; claims.len()]
        }
        Err(source) => {
            return Err(Error::JudgeResponse {
                task: Task::VerifyClaims.name(),
                source,
            });
        }
    };
    let missing: Vec<usize> = (0..claims.len())
        .filter(|&i| verdicts[i].is_none())
        .collect();
    if missing.len() > MAX_REASKS {
        return Err(Error::JudgeResponse {
            task: Task::VerifyClaims.name(),
            source: ParseError::new(
                ParseErrorKind::Unmatched {
                    unmatched: missing.len(),
                    limit: MAX_REASKS,
                },
                &reply.text,
            ),
        });
    }
    let reasked: Vec<(usize, ParsedVerdict)> = stream::iter(missing)
        .map(|i| {
            let rendered_passages = &rendered_passages;
            async move {
                verify_one(
                    judge,
                    &claims[i],
                    passages,
                    rendered_passages,
                    sample,
                    tally,
                )
                .await
                .map(|v| (i, v))
            }
        })
        .buffer_unordered(REASK_CONCURRENCY)
        .try_collect()
        .await?;
    for (i, v) in reasked {
        verdicts[i] = Some(v);
    }
    Ok(verdicts.into_iter().flatten().collect())
}

async fn verify_one(
    judge: &Judge,
    claim: &str,
    passages: &[String],
    rendered_passages: &str,
    sample: u32,
    tally: &Tally,
) -> Result<ParsedVerdict> {
    let user = judge.templates().render(
        Task::VerifyClaim,
        &[
            ("passages", rendered_passages),
            ("claim", &escape(claim.trim())),
        ],
    );
    let shape = Shape::items(1);
    let mut request = judge.request(
        Task::VerifyClaim,
        user,
        json!({"claim": claim, "passages": passages}),
        shape,
    );
    request.sample = sample;
    let reply = judge
        .exchange(&request, Task::VerifyClaim, &shape, tally)
        .await?;
    parse::verdict(&reply.text).map_err(|source| Error::JudgeResponse {
        task: Task::VerifyClaim.name(),
        source,
    })
}
