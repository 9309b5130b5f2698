//! Faithfulness and hallucination: the same claims and verdicts, scored two ways.

use super::{EvalOptions, Scored, Tally, claims, plural};
use crate::case::RagCase;
use crate::error::Result;
use crate::evaluation::ClaimVerdict;
use crate::judge::Judge;
use crate::parse::ParsedVerdict;
use crate::verdict::Verdict;

/// Claims of the response and their verdicts. Both calls go through the
/// judge's memo, so the second metric on a case costs nothing.
async fn claims_and_verdicts(
    judge: &Judge,
    case: &RagCase,
    tally: &Tally,
) -> Result<(Vec<String>, Vec<ParsedVerdict>)> {
    let claims = claims::extract(judge, &case.query, &case.response, tally).await?;
    let verdicts = claims::verify(judge, &claims, &case.context, tally).await?;
    Ok((claims, verdicts))
}

pub(super) async fn faithfulness(
    judge: &Judge,
    case: &RagCase,
    options: &EvalOptions,
    tally: &Tally,
) -> Result<Scored> {
    let weights = options.weights.unwrap_or(judge.scoring().weights);
    let (claims, verdicts) = claims_and_verdicts(judge, case, tally).await?;
    if claims.is_empty() {
        return Ok(vacuous(
            "The response makes no factual claims: vacuously faithful.",
        ));
    }
    let score = weights.score(verdicts.iter().map(|v| v.verdict));
    let details = details(claims, verdicts, |v| v.verdict != Verdict::Supported);
    Ok(Scored {
        score,
        reasoning: match summary(&details, case) {
            Some(verdicts) => format!(
                "Verdicts on {}: {verdicts}.",
                plural(details.len(), "claim", "claims")
            ),
            None => no_context(details.len()),
        },
        claims: details,
        passages: Vec::new(),
    })
}

pub(super) async fn hallucination(
    judge: &Judge,
    case: &RagCase,
    options: &EvalOptions,
    tally: &Tally,
) -> Result<Scored> {
    let floor = options
        .confidence_floor
        .unwrap_or(judge.scoring().confidence_floor);
    let (claims, verdicts) = claims_and_verdicts(judge, case, tally).await?;
    if claims.is_empty() {
        return Ok(vacuous(
            "The response makes no factual claims: nothing is hallucinated.",
        ));
    }
    let details = details(claims, verdicts, |v| {
        v.verdict != Verdict::Supported || v.confidence.is_some_and(|c| c < floor)
    });
    let hallucinated = details.iter().filter(|c| c.failed).count();
    let total = details.len();
    let mut reasoning = match summary(&details, case) {
        Some(verdicts) => format!(
            "{hallucinated} of {} hallucinated (verdicts: {verdicts}).",
            plural(total, "claim", "claims")
        ),
        None => no_context(total),
    };
    let low = details
        .iter()
        .filter(|c| c.verdict == Verdict::Supported && c.failed)
        .count();
    if low > 0 {
        reasoning.push_str(&format!(
            " {} supported with confidence below {floor}.",
            plural(low, "claim is", "claims are")
        ));
    }
    Ok(Scored {
        score: 1.0 - hallucinated as f64 / total as f64,
        reasoning,
        claims: details,
        passages: Vec::new(),
    })
}

fn vacuous(reasoning: &str) -> Scored {
    Scored {
        score: 1.0,
        reasoning: reasoning.to_owned(),
        claims: Vec::new(),
        passages: Vec::new(),
    }
}

pub(super) fn details(
    claims: Vec<String>,
    verdicts: Vec<ParsedVerdict>,
    failed: impl Fn(&ParsedVerdict) -> bool,
) -> Vec<ClaimVerdict> {
    claims
        .into_iter()
        .zip(verdicts)
        .map(|(claim, v)| ClaimVerdict {
            failed: failed(&v),
            claim,
            verdict: v.verdict,
            evidence: v.evidence,
            confidence: v.confidence,
        })
        .collect()
}

/// "3 supported, 1 contradicted"; `None` when there was no context to verify against.
pub(super) fn summary(details: &[ClaimVerdict], case: &RagCase) -> Option<String> {
    if case.context.is_empty() {
        return None;
    }
    let parts: Vec<String> = [
        Verdict::Supported,
        Verdict::PartiallySupported,
        Verdict::NoEvidence,
        Verdict::Contradicted,
    ]
    .into_iter()
    .filter_map(|v| {
        let n = details.iter().filter(|c| c.verdict == v).count();
        (n > 0).then(|| format!("{n} {}", v.label().replace('_', " ")))
    })
    .collect();
    Some(parts.join(", "))
}

fn no_context(claims: usize) -> String {
    format!(
        "No context was retrieved, so none of the {} has evidence.",
        plural(claims, "claim", "claims")
    )
}
