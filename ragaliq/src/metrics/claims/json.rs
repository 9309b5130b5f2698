//! Claims verified with the JSON prompts (`strategy = "json"`): in batches
//! of `verify_batch`, every item read on its own, unreadable and ungrounded
//! ones asked again alone.

use super::REASK_CONCURRENCY;
use crate::error::{Error, Result};
use crate::metrics::vocab::{Asker, Verification};
use crate::parse::{ParseError, ParseErrorKind};
use crate::tasks::{CheckedVerdict, MAX_REASKS, VerifyClaim, VerifyClaims};
use futures_util::{StreamExt, stream};

/// One verdict per claim, in claim order, from sample `sample`.
///
/// Batches of `how.batch` claims; the claims a batch's answer leaves
/// unanswered are asked again alone, at most [`MAX_REASKS`] per batch; with
/// evidence checked, so are ungrounded verdicts, once. Verdicts are never
/// truncated or padded.
pub(super) async fn verify(
    ask: &Asker<'_>,
    how: Verification,
    claims: &[String],
    passages: &[String],
    sample: u32,
) -> Result<Vec<CheckedVerdict>> {
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
            let answers: Vec<(usize, CheckedVerdict)> = crate::metrics::sampling::every(answers)?;
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
    let verdicts = crate::metrics::sampling::every(futures_util::future::join_all(batches).await)?;
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
