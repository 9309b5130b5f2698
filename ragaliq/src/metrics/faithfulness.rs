//! Faithfulness and hallucination: the same claims and verdicts, scored two ways.

use super::claims::{self, Voted};
use super::{Asker, Plan, Scored, plural};
use crate::core::{ClaimVerdict, RagCase, Verdict, VerdictWeights};
use crate::error::Result;
use crate::parse::ParsedVerdict;

pub(super) async fn faithfulness(
    ask: &Asker<'_>,
    case: &RagCase,
    weights: VerdictWeights,
    plan: &Plan,
) -> Result<Scored> {
    let claims = claims::extract(ask, &case.query, case.response_text()).await?;
    if claims.is_empty() {
        return Ok(Scored::vacuous(
            "The response makes no factual claims: vacuously faithful.",
        ));
    }
    let score_of = |set: &[ParsedVerdict]| weights.score(set.iter().map(|v| v.verdict));
    let (voted, scores) = claims::verify_voted(ask, &claims, &case.context, plan, score_of).await?;
    let undecided = voted.iter().any(|v| v.undecided);
    let score = weights.score(voted.iter().map(|v| v.verdict.verdict));
    let details = details(claims, voted, |v| v.verdict != Verdict::Supported);
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
        undecided,
        sample_scores: scores,
    })
}

/// Whether a verdict counts as hallucinated: anything but supported, and
/// supported with a confidence under the floor. A supported verdict that
/// gives no confidence is not held against the answer: the floor applies to
/// the confidence a judge states, and a judge (or custom transport) that
/// states none has not said it is unsure.
pub(crate) fn hallucinated(v: &ParsedVerdict, floor: f64) -> bool {
    v.verdict != Verdict::Supported || v.confidence.is_some_and(|c| c < floor)
}

pub(super) async fn hallucination(
    ask: &Asker<'_>,
    case: &RagCase,
    floor: f64,
    plan: &Plan,
) -> Result<Scored> {
    let claims = claims::extract(ask, &case.query, case.response_text()).await?;
    if claims.is_empty() {
        return Ok(Scored::vacuous(
            "The response makes no factual claims: nothing is hallucinated.",
        ));
    }
    let score_of = |set: &[ParsedVerdict]| {
        1.0 - set.iter().filter(|v| hallucinated(v, floor)).count() as f64 / set.len() as f64
    };
    let (voted, scores) = claims::verify_voted(ask, &claims, &case.context, plan, score_of).await?;
    let undecided = voted.iter().any(|v| v.undecided);
    let details = details(claims, voted, |v| hallucinated(v, floor));
    let hallucinated_count = details.iter().filter(|c| c.failed).count();
    let total = details.len();
    let score = 1.0 - hallucinated_count as f64 / total as f64;
    let mut reasoning = match summary(&details, case) {
        Some(verdicts) => format!(
            "{hallucinated_count} of {} hallucinated (verdicts: {verdicts}).",
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
        score,
        reasoning,
        claims: details,
        passages: Vec::new(),
        undecided,
        sample_scores: scores,
    })
}

pub(super) fn details(
    claims: Vec<String>,
    verdicts: Vec<Voted>,
    failed: impl Fn(&ParsedVerdict) -> bool,
) -> Vec<ClaimVerdict> {
    claims
        .into_iter()
        .zip(verdicts)
        .map(|(claim, v)| ClaimVerdict {
            failed: failed(&v.verdict),
            claim,
            verdict: v.verdict.verdict,
            evidence: v.verdict.evidence,
            confidence: v.verdict.confidence,
            agreement: v.agreement,
            undecided: v.undecided,
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
    let mut out = parts.join(", ");
    let split = details.iter().filter(|c| c.undecided).count();
    if split > 0 {
        out.push_str(&format!("; {split} split below the required agreement"));
    }
    Some(out)
}

fn no_context(claims: usize) -> String {
    format!(
        "No context was retrieved, so none of the {} has evidence.",
        plural(claims, "claim", "claims")
    )
}
