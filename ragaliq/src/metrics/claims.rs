//! Claim extraction and verification, shared by faithfulness, hallucination
//! and context recall.

use super::Tally;
use crate::error::{Error, Result};
use crate::judge::Judge;
use crate::parse::{self, ParseErrorKind, ParsedVerdict};
use crate::prompts::{Task, escape, numbered};
use crate::verdict::Verdict;
use futures_util::{StreamExt, TryStreamExt, stream};
use serde_json::json;

/// How many single-claim re-asks run at once when a batch cannot be matched
/// (the judge's own concurrency limit applies on top).
const REASK_CONCURRENCY: usize = 4;

/// The atomic claims of `text`. No call for a blank text: it claims nothing.
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
    let request = judge.request(
        Task::ExtractClaims,
        user,
        json!({"query": query, "response": text}),
    );
    let reply = judge.exchange(&request, tally).await?;
    parse::claims(&reply.text).map_err(|source| Error::JudgeResponse {
        task: Task::ExtractClaims.name(),
        source,
    })
}

/// One verdict per claim, in claim order.
///
/// One batched call; when its reply cannot be matched to the claims one to
/// one (some missing, numbers out of range or contradictory), the unmatched
/// claims are re-asked one by one. Verdicts are never truncated or padded.
/// With no context, every claim has no evidence and no call is made.
pub(super) async fn verify(
    judge: &Judge,
    claims: &[String],
    passages: &[String],
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
        ],
    );
    let request = judge.request(
        Task::VerifyClaims,
        user,
        json!({"claims": claims, "passages": passages.len()}),
    );
    let reply = judge.exchange(&request, tally).await?;
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
    let reasked: Vec<(usize, ParsedVerdict)> = stream::iter(missing)
        .map(|i| {
            let rendered_passages = &rendered_passages;
            async move {
                verify_one(judge, &claims[i], rendered_passages, tally)
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
    rendered_passages: &str,
    tally: &Tally,
) -> Result<ParsedVerdict> {
    let user = judge.templates().render(
        Task::VerifyClaim,
        &[
            ("passages", rendered_passages),
            ("claim", &escape(claim.trim())),
        ],
    );
    let request = judge.request(Task::VerifyClaim, user, json!({"claim": claim}));
    let reply = judge.exchange(&request, tally).await?;
    parse::verdict(&reply.text).map_err(|source| Error::JudgeResponse {
        task: Task::VerifyClaim.name(),
        source,
    })
}
