//! Faithfulness and hallucination: the same claims and verdicts, scored two ways.

use super::claims::{self, Voted, details, dropped, summary};
use super::vocab::{Asker, Plan, Scored, Verification, plural};
use crate::core::{RagCase, Verdict, VerdictWeights};
use crate::error::Result;
use crate::parse::ParsedVerdict;
use crate::tasks::History;

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
        return Ok(Scored::vacuous(&format!(
            "The response makes no factual claims: vacuously faithful.{}",
            dropped(&extracted)
        )));
    }
    let score_of = |set: &[ParsedVerdict]| weights.score(set.iter().map(|v| v.verdict));
    let against = grounded_passages(case, ask.history());
    let checked = claims::check(ask, &extracted.claims, &against, plan, score_of).await?;
    let interval = checked.interval(score_of);
    let claims::Checked {
        voted,
        sample_scores: scores,
        judges,
    } = checked;
    let score = weights.score(voted.iter().filter(|v| v.is_claim()).map(Voted::counted));
    let details = details(&extracted.claims, voted, |v| {
        v.verdict != Verdict::Supported
    });
    let mut reasoning = match summary(&details, &against) {
        Some(verdicts) => format!(
            "Verdicts on {}: {verdicts}.",
            plural(
                details.iter().filter(|c| c.no_claim.is_none()).count(),
                "claim",
                "claims"
            )
        ),
        None => no_context(details.len()),
    };
    reasoning.push_str(&dropped(&extracted));
    reasoning.push_str(&all_set_aside(&details));
    Ok(Scored {
        score,
        reasoning,
        claims: details,
        passages: Vec::new(),
        sample_scores: scores,
        dropped: extracted.dropped.len(),
        interval,
        judges,
        ..Scored::default()
    })
}

/// What a turn's answer may rest on: its own passages and, where the case
/// says so ([`Grounding`](crate::Grounding)), the passages of the earlier
/// turns the judge is shown (each once, newest turn first) and what the
/// user said in them and in this turn, as `User (turn N): …`.
pub(super) fn grounded_passages(case: &RagCase, history: Option<&History>) -> Vec<String> {
    let mut out = case.context.clone();
    let Some(history) = history.filter(|_| !case.grounding.is_none()) else {
        return out;
    };
    if case.grounding.earlier_passages {
        for said in history.shown.said.iter().rev() {
            let Some(turn) = case.history.get(said.turn - 1) else {
                continue;
            };
            for p in &turn.context {
                if !out.contains(p) {
                    out.push(p.clone());
                }
            }
        }
    }
    if case.grounding.user_messages {
        for said in &history.shown.said {
            out.push(format!("User (turn {}): {}", said.turn, said.user));
        }
        out.push(format!(
            "User (turn {}): {}",
            history.turn,
            case.query.trim()
        ));
    }
    out
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
        return Ok(Scored::vacuous(&format!(
            "The response makes no factual claims: nothing is hallucinated.{}",
            dropped(&extracted)
        )));
    }
    let score_of = |set: &[ParsedVerdict]| {
        if set.is_empty() {
            return 1.0;
        }
        1.0 - set.iter().filter(|v| hallucinated(v, floor)).count() as f64 / set.len() as f64
    };
    let against = grounded_passages(case, ask.history());
    let checked = claims::check(ask, &extracted.claims, &against, plan, score_of).await?;
    let interval = checked.interval(score_of);
    let claims::Checked {
        voted,
        sample_scores: scores,
        judges,
    } = checked;
    let details = details(&extracted.claims, voted, |v| hallucinated(v, floor));
    let hallucinated_count = details.iter().filter(|c| c.failed).count();
    // What a person did not take for no claim: the denominator.
    let total = details.iter().filter(|c| c.no_claim.is_none()).count();
    let score = if total == 0 {
        1.0
    } else {
        1.0 - hallucinated_count as f64 / total as f64
    };
    let mut reasoning = match summary(&details, &against) {
        Some(verdicts) => format!(
            "{hallucinated_count} of {} hallucinated (verdicts: {verdicts}).",
            plural(total, "claim", "claims")
        ),
        None => no_context(details.len()),
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
    reasoning.push_str(&all_set_aside(&details));
    Ok(Scored {
        score,
        reasoning,
        claims: details,
        passages: Vec::new(),
        sample_scores: scores,
        dropped: extracted.dropped.len(),
        interval,
        judges,
        ..Scored::default()
    })
}

/// What the reasoning adds where a person said every item is no claim
/// (the score is then 1, as for a response that claims nothing); empty
/// otherwise.
pub(super) fn all_set_aside(details: &[crate::core::ClaimVerdict]) -> String {
    if !details.is_empty() && details.iter().all(|c| c.no_claim.is_some()) {
        " No item is a claim: nothing to score, as for a response that claims nothing.".to_owned()
    } else {
        String::new()
    }
}

fn no_context(claims: usize) -> String {
    format!(
        "No context was retrieved, so none of the {} has evidence.",
        plural(claims, "claim", "claims")
    )
}
