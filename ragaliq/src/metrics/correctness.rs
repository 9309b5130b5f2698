//! Answer correctness: the response graded against the expected answer.
//!
//! Both texts' claims are extracted (once per text: faithfulness shares the
//! response's, context recall the reference's), then checked through the
//! one claim path: the response's claims against the reference (precision:
//! what it says that the reference backs) and the reference's claims
//! against the response (recall: what of the reference it says). The
//! score is their F1, or one of them ([`Correctness`]).

use super::claims::{self, Checked, Verification, details, dropped};
use super::{Asker, Plan, Scored, plural};
use crate::core::{Correctness, Metric, RagCase, Verdict, VerdictWeights};
use crate::error::{Error, Result};
use crate::parse::ParsedVerdict;

pub(super) async fn correctness(
    ask: &Asker<'_>,
    how: Verification,
    case: &RagCase,
    measure: Correctness,
    plan: &Plan,
) -> Result<Scored> {
    let reference = case
        .expected_answer
        .as_deref()
        .filter(|a| !a.trim().is_empty())
        .ok_or(Error::MissingInput {
            metric: Metric::Correctness,
            what: "an expected answer to grade the response against (set `.expected_answer(…)`, or `expected_answer:` in a case file)",
        })?;
    let response = case.response_text();
    let (answer, expected) = futures_util::future::try_join(
        claims::extract(ask, how, &case.query, response, "response"),
        claims::extract(ask, how, &case.query, reference, "reference"),
    )
    .await?;
    if expected.missed || answer.missed {
        let which = if expected.missed { &expected } else { &answer };
        return Ok(Scored::no_claims_listed(which));
    }
    if answer.claims.is_empty() {
        // "I don't know.": nothing in it can give the reference's answer.
        // Read as claims both ways it would be vacuously precise (nothing
        // said, nothing wrong), and `Correctness::Precision` would pass it.
        return Ok(Scored {
            score: 0.0,
            reasoning: format!(
                "The response makes no claim, so it gives no answer to compare with the reference's: not correct, whatever the measure.{}",
                dropped(&answer)
            ),
            sample_scores: vec![0.0],
            dropped: answer.dropped.len(),
            ..Scored::default()
        });
    }
    if expected.claims.is_empty() {
        return Err(Error::MissingInput {
            metric: Metric::Correctness,
            what: "an expected answer that states something: the judge found no claim in it",
        });
    }
    let score_of =
        |set: &[ParsedVerdict]| VerdictWeights::RATIO.score(set.iter().map(|v| v.verdict));
    // What the answer says, against the reference; what the reference
    // says, against the answer. A response that says nothing checks
    // nothing (precision 1, vacuously) and covers nothing (recall 0).
    let reference_text = [reference.to_owned()];
    let response_text = [response.to_owned()];
    let (said, covered) = futures_util::future::try_join(
        claims::check(ask, how, &answer.claims, &reference_text, plan, score_of),
        claims::check(ask, how, &expected.claims, &response_text, plan, score_of),
    )
    .await?;
    let precision = VerdictWeights::RATIO.score(said.voted.iter().map(|v| v.verdict.verdict));
    let recall = VerdictWeights::RATIO.score(covered.voted.iter().map(|v| v.verdict.verdict));
    let undecided = said.voted.iter().chain(&covered.voted).any(|v| v.undecided);
    let sample_scores = per_sample(&said, &covered, measure);
    let mut claims = details(&answer.claims, said.voted, |v| {
        v.verdict != Verdict::Supported
    });
    let mut missing = details(&expected.claims, covered.voted, |v| {
        v.verdict != Verdict::Supported
    });
    for c in &mut missing {
        c.from_reference = true;
    }
    let backed = claims.iter().filter(|c| !c.failed).count();
    let stated = missing.iter().filter(|c| !c.failed).count();
    let contradicted = claims
        .iter()
        .chain(&missing)
        .filter(|c| c.verdict == Verdict::Contradicted && !c.undecided)
        .count();
    let score = measure.score(precision, recall);
    let mut reasoning = format!(
        "Precision {precision:.2}: the reference backs {backed} of the answer's {}. Recall {recall:.2}: the answer states {stated} of the reference's {}.",
        plural(claims.len(), "claim", "claims"),
        plural(missing.len(), "claim", "claims"),
    );
    if contradicted > 0 {
        reasoning.push_str(&format!(
            " {} the other text contradicts.",
            plural(contradicted, "claim", "claims")
        ));
    }
    reasoning.push_str(&format!(" The score is {measure}."));
    reasoning.push_str(&dropped(&answer));
    reasoning.push_str(&dropped(&expected));
    let dropped_count = answer.dropped.len() + expected.dropped.len();
    claims.append(&mut missing);
    Ok(Scored {
        score,
        reasoning,
        claims,
        undecided,
        sample_scores,
        dropped: dropped_count,
        precision: Some(precision),
        recall: Some(recall),
        ..Scored::default()
    })
}

/// Each sample's score: its precision and recall, as the measure combines
/// them. With `Samples::Auto` the two checks may have asked different
/// numbers of samples; the samples both asked count.
fn per_sample(said: &Checked, covered: &Checked, measure: Correctness) -> Vec<f64> {
    said.sample_scores
        .iter()
        .zip(&covered.sample_scores)
        .map(|(p, r)| measure.score(*p, *r))
        .collect()
}
