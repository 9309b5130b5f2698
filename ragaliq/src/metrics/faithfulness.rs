//! Faithfulness and hallucination: the same claims and verdicts, scored two ways.

use super::claims::{self, Verification, Voted};
use super::{Asker, Plan, Scored, plural};
use crate::core::{ClaimVerdict, RagCase, Verdict, VerdictWeights};
use crate::error::Result;
use crate::parse::ParsedVerdict;
use crate::tasks::Extracted;

pub(super) async fn faithfulness(
    ask: &Asker<'_>,
    how: Verification,
    case: &RagCase,
    weights: VerdictWeights,
    plan: &Plan,
) -> Result<Scored> {
    let extracted =
        claims::extract(ask, how, &case.query, case.response_text(), "response").await?;
    if extracted.missed {
        return Ok(Scored::no_claims_listed(&extracted));
    }
    if extracted.claims.is_empty() {
        return Ok(Scored::vacuous(
            "The response makes no factual claims: vacuously faithful.",
        ));
    }
    let score_of = |set: &[ParsedVerdict]| weights.score(set.iter().map(|v| v.verdict));
    let claims::Checked {
        voted,
        sample_scores: scores,
    } = claims::check(ask, how, &extracted.claims, &case.context, plan, score_of).await?;
    let undecided = voted.iter().any(|v| v.undecided);
    let score = weights.score(voted.iter().map(|v| v.verdict.verdict));
    let details = details(&extracted.claims, voted, |v| {
        v.verdict != Verdict::Supported
    });
    let mut reasoning = match summary(&details, case) {
        Some(verdicts) => format!(
            "Verdicts on {}: {verdicts}.",
            plural(details.len(), "claim", "claims")
        ),
        None => no_context(details.len()),
    };
    reasoning.push_str(&dropped(&extracted));
    Ok(Scored {
        score,
        reasoning,
        claims: details,
        passages: Vec::new(),
        undecided,
        sample_scores: scores,
        dropped: extracted.dropped.len(),
        ..Scored::default()
    })
}

/// Whether a verdict counts as hallucinated: one rule for every metric and
/// every way of reading, the claim is not supported (the verdict
/// faithfulness counts). An opt-in confidence floor (none by default)
/// holds a supported claim to a higher bar: its P(supported) where read
/// from probabilities, the confidence a JSON verdict states, and 1 for the
/// word written ("yes" is all the judge said, on every provider alike).
/// (A supported verdict's confidence is its P(supported) when read from
/// probabilities.)
pub(crate) fn hallucinated(v: &ParsedVerdict, floor: Option<f64>) -> bool {
    if v.verdict != Verdict::Supported {
        return true;
    }
    floor.is_some_and(|floor| v.confidence.unwrap_or(1.0) < floor)
}

pub(super) async fn hallucination(
    ask: &Asker<'_>,
    how: Verification,
    case: &RagCase,
    floor: Option<f64>,
    plan: &Plan,
) -> Result<Scored> {
    let extracted =
        claims::extract(ask, how, &case.query, case.response_text(), "response").await?;
    if extracted.missed {
        return Ok(Scored::no_claims_listed(&extracted));
    }
    if extracted.claims.is_empty() {
        return Ok(Scored::vacuous(
            "The response makes no factual claims: nothing is hallucinated.",
        ));
    }
    let score_of = |set: &[ParsedVerdict]| {
        1.0 - set.iter().filter(|v| hallucinated(v, floor)).count() as f64 / set.len() as f64
    };
    let claims::Checked {
        voted,
        sample_scores: scores,
    } = claims::check(ask, how, &extracted.claims, &case.context, plan, score_of).await?;
    let undecided = voted.iter().any(|v| v.undecided);
    let details = details(&extracted.claims, voted, |v| hallucinated(v, floor));
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
    if let Some(floor) = floor
        && low > 0
    {
        reasoning.push_str(&format!(
            " {} supported with confidence below the floor {floor}.",
            plural(low, "claim is", "claims are")
        ));
    }
    reasoning.push_str(&dropped(&extracted));
    Ok(Scored {
        score,
        reasoning,
        claims: details,
        passages: Vec::new(),
        undecided,
        sample_scores: scores,
        dropped: extracted.dropped.len(),
        ..Scored::default()
    })
}

/// The claims with their voted verdicts. A claim fails the metric when
/// `failed` says so of its verdict; an ungrounded verdict fails it too (it
/// is undecided, never a pass).
pub(super) fn details(
    claims: &[String],
    verdicts: Vec<Voted>,
    failed: impl Fn(&ParsedVerdict) -> bool,
) -> Vec<ClaimVerdict> {
    claims
        .iter()
        .zip(verdicts)
        .map(|(claim, v)| ClaimVerdict {
            failed: v.ungrounded || failed(&v.verdict),
            claim: claim.clone(),
            verdict: v.verdict.verdict,
            evidence: v.verdict.evidence,
            confidence: v.verdict.confidence,
            agreement: v.agreement,
            undecided: v.undecided,
            evidence_in: v.found.map(|f| f.passage + 1),
            ungrounded: v.ungrounded,
            probability: v.probability,
            located: v.located,
            from_reference: false,
            person: v.person,
            review_key: v.review_key,
        })
        .collect()
}

/// " 1 claim the judge wrote was dropped: \"…\" (not in the response)."
pub(super) fn dropped(extracted: &Extracted) -> String {
    if extracted.dropped.is_empty() {
        return String::new();
    }
    let listed: Vec<String> = extracted
        .dropped
        .iter()
        .map(|(_, c, why)| format!("{c:?} ({why})"))
        .collect();
    format!(
        " {} the judge extracted {} dropped: {}.",
        plural(extracted.dropped.len(), "claim", "claims"),
        if extracted.dropped.len() == 1 {
            "was"
        } else {
            "were"
        },
        listed.join("; ")
    )
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
    let persons = details.iter().filter(|c| c.person.is_some()).count();
    if persons > 0 {
        out.push_str(&format!(
            "; {} a person's",
            plural(persons, "verdict is", "verdicts are")
        ));
    }
    let ungrounded = details.iter().filter(|c| c.ungrounded).count();
    let split = details
        .iter()
        .filter(|c| c.undecided && !c.ungrounded)
        .count();
    if ungrounded > 0 {
        out.push_str(&format!(
            "; {} evidence in no passage (undecided)",
            plural(ungrounded, "verdict cites its", "verdicts cite their")
        ));
    }
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
