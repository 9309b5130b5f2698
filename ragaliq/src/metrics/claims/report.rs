//! What every claim-based metric prints about its claims: each claim with
//! its voted verdict ([`details`]), the claims extraction dropped
//! ([`dropped`]), and the count of verdicts ([`summary`]). Faithfulness,
//! hallucination, context recall, correctness and claim checks of one's
//! own all report through here, so the next metric on the claim path
//! reports as they do.

use super::Voted;
use crate::core::{ClaimVerdict, UnsureWhy, Verdict};
use crate::metrics::vocab::{Scored, plural};
use crate::parse::ParsedVerdict;
use crate::tasks::Extracted;

/// The claims with their voted verdicts. A claim fails the metric when
/// `failed` says so of its verdict; an ungrounded verdict fails it too (it
/// is undecided, never a pass).
pub(crate) fn details(
    claims: &[String],
    verdicts: Vec<Voted>,
    failed: impl Fn(&ParsedVerdict) -> bool,
) -> Vec<ClaimVerdict> {
    claims
        .iter()
        .zip(verdicts)
        .map(|(claim, v)| ClaimVerdict {
            // No claim never fails: it leaves the score.
            failed: v.no_claim.is_none() && (v.ungrounded || failed(&v.verdict)),
            no_claim: v.no_claim.map(super::NoClaim::describe),
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
            unsure: v.unsure,
            judge: v.judge,
        })
        .collect()
}

/// " 1 claim the judge wrote was dropped: \"…\" (not in the response)."
pub(crate) fn dropped(extracted: &Extracted) -> String {
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

/// "3 supported, 1 contradicted"; `None` when there was nothing to verify
/// against (`against`: the passages the claims were checked against).
pub(crate) fn summary(details: &[ClaimVerdict], against: &[String]) -> Option<String> {
    if against.is_empty() {
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
        let n = details
            .iter()
            .filter(|c| c.verdict == v && c.no_claim.is_none())
            .count();
        (n > 0).then(|| format!("{n} {}", v.label().replace('_', " ")))
    })
    .collect();
    let mut out = parts.join(", ");
    let none = no_claims(details);
    if !none.is_empty() {
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(&format!(
            "{} no claim, left out of the score: {}",
            plural(none.len(), "item is", "items are"),
            none.join(", ")
        ));
    }
    let persons = details.iter().filter(|c| c.person.is_some()).count();
    if persons > 0 {
        out.push_str(&format!(
            "; {} a person's",
            plural(persons, "verdict is", "verdicts are")
        ));
    }
    let why = |w: UnsureWhy| {
        details
            .iter()
            .filter(|c| c.person.is_none() && c.unsure.as_ref().is_some_and(|u| u.why == w))
            .count()
    };
    let (in_band, split) = (why(UnsureWhy::InBand), why(UnsureWhy::Split));
    if in_band > 0 {
        out.push_str(&format!(
            "; {in_band} read inside the judge's band (unsure: awaiting a person)"
        ));
    }
    let ungrounded = details.iter().filter(|c| c.ungrounded).count();
    if ungrounded > 0 {
        out.push_str(&format!(
            "; {} evidence in no passage (it decides nothing)",
            plural(ungrounded, "verdict cites its", "verdicts cite their")
        ));
    }
    if split > 0 {
        out.push_str(&format!("; {split} split below the required agreement"));
    }
    let unread = why(UnsureWhy::Unreadable);
    if unread > 0 {
        out.push_str(&format!(
            "; {unread} sent to a judge escalated to whose reply could not be read (unsure: awaiting a person)"
        ));
    }
    Some(out)
}

/// The reasoning of an evaluation left undecided because the judge listed
/// no claim in a response that states something.
/// Why an evaluation is undecided when the judge listed no claim in a text
/// (`response` or `reference`) that states something.
pub(crate) fn no_claims_listed(of: &str) -> String {
    format!(
        "The judge listed no claim in a {of} that states something, even asked again: there is nothing to score it by, so it is undecided (never vacuously {}).",
        if of == "response" {
            "faithful"
        } else {
            "complete"
        }
    )
}

impl Scored {
    /// The judge listed no claim in a text that states something, even
    /// asked again: undecided, with its own reason, and what the judge
    /// wrote that was not the text's, listed and counted.
    pub(crate) fn no_claims_listed(extracted: &crate::tasks::Extracted) -> Scored {
        Scored {
            score: 0.0,
            reasoning: format!("{}{}", no_claims_listed(extracted.of), dropped(extracted)),
            undecided: true,
            sample_scores: vec![0.0],
            dropped: extracted.dropped.len(),
            ..Scored::default()
        }
    }
}

/// The items a person said are no claim, each quoted with whose word that
/// was (`"Hello!" (a person's verdict)`), for a reasoning to list.
pub(crate) fn no_claims<'a>(items: impl IntoIterator<Item = &'a ClaimVerdict>) -> Vec<String> {
    items
        .into_iter()
        .filter_map(|c| {
            c.no_claim
                .as_ref()
                .map(|why| format!("{:?} ({why})", c.claim))
        })
        .collect()
}
