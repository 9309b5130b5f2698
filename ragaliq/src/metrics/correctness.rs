//! Answer correctness: the response graded against the expected answer.
//!
//! By default ([`Correctness::Direct`]) the judge is asked one question per
//! answer: given the question and the expected answer, does the response
//! give the same answer without contradicting it? The score is P(yes),
//! read from the answer word, decided outside the judge's band for graded
//! answers. Before it, the found rule ([`evidence::answer`]): where the
//! expected answer stands in the response as whole words and is not
//! denied there, the answer is correct and nothing is asked; "It is not 30
//! days; it is 14." holds "30 days" denied, and the judge decides (the
//! rule, the band and the threshold were chosen leave-one-source-out on
//! public sets, BENCHMARKS.md).
//!
//! Claims both ways ([`Correctness::F1`], `Precision`, `Recall`), a named
//! option: both texts' claims are extracted (once per text: faithfulness
//! shares the response's, context recall the reference's), then checked
//! through the one claim path: the response's claims against the
//! reference (precision: what it says that the reference backs) and the
//! reference's claims against the response (recall: what of the reference
//! it says). The score is their F1, or one of them.

use super::claims::{self, Checked, Voted, details, dropped};
use super::decide::{self, Threshold, decide_one};
use super::vocab::{Asker, Interval, Plan, Scored, Verification, plural};
use crate::core::{
    AnswerFound, Correctness, Graded, Kind, Metric, RagCase, Verdict, VerdictWeights,
};
use crate::error::{Error, Result};
use crate::evidence;
use crate::parse::{ParsedVerdict, YesNo};
use crate::tasks::AnswerCorrect;

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
    if !measure.checks_claims() {
        return direct(ask, case, reference, response, plan).await;
    }
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
        claims::check(ask, &answer.claims, &reference_text, plan, score_of),
        claims::check(ask, &expected.claims, &response_text, plan, score_of),
    )
    .await?;
    // An item a person said is no claim leaves its side's score.
    let counted = |c: &claims::Checked| {
        VerdictWeights::RATIO.score(c.voted.iter().filter(|v| v.is_claim()).map(Voted::counted))
    };
    let precision = counted(&said);
    let recall = counted(&covered);
    // Counted each way: the uncertain claims of both texts at once.
    let interval = {
        let (p, r) = (said.interval(score_of), covered.interval(score_of));
        let ends = |i: Option<Interval>, at: f64| i.map_or((at, at), |i| (i.low, i.high));
        let ((p_low, p_high), (r_low, r_high)) = (ends(p, precision), ends(r, recall));
        Interval::of(
            said.awaiting() + covered.awaiting(),
            measure.score(p_low, r_low),
            measure.score(p_high, r_high),
        )
    };
    let judges = said
        .judges
        .iter()
        .zip(&covered.judges)
        .map(|(a, b)| (a.0 + b.0, a.1 + b.1))
        .collect();
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
    let backed = claims
        .iter()
        .filter(|c| !c.failed && c.no_claim.is_none())
        .count();
    let stated = missing
        .iter()
        .filter(|c| !c.failed && c.no_claim.is_none())
        .count();
    let contradicted = claims
        .iter()
        .chain(&missing)
        .filter(|c| c.verdict == Verdict::Contradicted && !c.undecided)
        .count();
    let score = measure.score(precision, recall);
    let mut reasoning = format!(
        "Precision {precision:.2}: the reference backs {backed} of the answer's {}. Recall {recall:.2}: the answer states {stated} of the reference's {}.",
        plural(
            claims.iter().filter(|c| c.no_claim.is_none()).count(),
            "claim",
            "claims"
        ),
        plural(
            missing.iter().filter(|c| c.no_claim.is_none()).count(),
            "claim",
            "claims"
        ),
    );
    let none = claims::no_claims(claims.iter().chain(&missing));
    if !none.is_empty() {
        reasoning.push_str(&format!(
            " {} no claim, left out: {}.",
            plural(none.len(), "item is", "items are"),
            none.join(", ")
        ));
    }
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
        sample_scores,
        dropped: dropped_count,
        precision: Some(precision),
        recall: Some(recall),
        interval,
        judges,
        ..Scored::default()
    })
}

/// The found rule, then the direct question: one call per sample, P(yes)
/// the score, decided, escalated or left to a person by the one decision
/// step.
async fn direct(
    ask: &Asker<'_>,
    case: &RagCase,
    reference: &str,
    response: &str,
    plan: &Plan,
) -> Result<Scored> {
    let question = AnswerCorrect {
        query: &case.query,
        expected: reference,
        response,
        history: ask.history(),
    };
    let question = &question;
    let answer_in = evidence::answer_in(&case.query, reference, response);
    let by_rule = ask.scoring().found_rule && answer_in.decides_correct();
    let graded = Graded {
        query: case.query.clone(),
        expected: reference.to_owned(),
        response: response.to_owned(),
        found: answer_in.found.clone(),
        doubt: answer_in.doubt.clone(),
        by_rule,
    };
    // The found rule: the expected answer standing in the response with
    // nothing in it that casts doubt on it is correct, with no question
    // asked; the decision is kept in the recording as an item a person
    // can overrule (keyed as the direct question on the same answer).
    if let Some(found) = answer_in.found.as_ref().filter(|_| by_rule) {
        return found_rule(ask, question, found, graded, plan);
    }
    let d = decide_one(
        ask,
        Kind::Graded,
        Threshold::Test(plan.threshold),
        plan,
        |judge| async move {
            decide::answer(
                plan,
                |s| judge.ask(question, s),
                |r: &YesNo| r.p_yes,
                |r| r.from_probabilities,
            )
            .await
        },
        || ask.review(question, 1, plan.persons),
    )
    .await?;
    let judges = decide::judges_of(&d, ask.judges());
    let review_key = d.review_key.clone();
    if let Some(person) = d.person {
        let score = super::vocab::yes_no(&person)?;
        let judge = d.value.as_ref().map_or_else(
            || "its reply unreadable".to_owned(),
            |a| super::vocab::judge_said(a.chosen.p_yes, a.chosen.from_probabilities),
        );
        return Ok(Scored {
            review_key,
            graded: Some(graded),
            judges,
            ..Scored::by_person(
                person,
                judge,
                score,
                "on whether the response gives the expected answer",
            )
        });
    }
    let Some(answer) = d.value else {
        unreachable!("decide returns the reply's error when no person decided")
    };
    let read = &answer.chosen;
    let mut reasoning = if read.from_probabilities {
        format!(
            "P(yes) {:.2} that the response gives the expected answer without contradicting it ({}).",
            read.p_yes, read.read
        )
    } else {
        format!(
            "The judge answered {} to whether the response gives the expected answer without contradicting it ({}).",
            if read.p_yes >= 0.5 { "yes" } else { "no" },
            read.read
        )
    };
    if d.stage > 0 {
        reasoning = format!("`{}` (escalated): {reasoning}", ask.at(d.stage).model());
    }
    let awaiting = d.unsure.is_some();
    Ok(Scored {
        score: d.p,
        reasoning,
        sample_scores: answer.scores,
        review_key,
        graded: Some(graded),
        interval: Interval::of(usize::from(awaiting), 0.0, 1.0),
        unsure: d.unsure,
        judges,
        ..Scored::default()
    })
}

/// The task of a found-rule decision in a recording, the rule's name (kept
/// as the model) and its version.
pub(crate) const FOUND_TASK: &str = "answer_found";
const FOUND_RULE: &str = "found rule";
const FOUND_VERSION: &str = "found_rule@2";

/// The found rule decided the answer correct: the decision is kept in the
/// recording (an `answer_found` exchange, no call, keyed as the direct
/// question on the same answer), then a person's verdict on the answer,
/// if the recording holds one, decides in its place.
fn found_rule(
    ask: &Asker<'_>,
    question: &AnswerCorrect<'_>,
    found: &AnswerFound,
    graded: Graded,
    plan: &Plan,
) -> Result<Scored> {
    let at = match found.words {
        (a, b) if a == b => format!("word {a}"),
        (a, b) => format!("words {a}–{b}"),
    };
    ask.rule_decided(
        question,
        FOUND_TASK,
        FOUND_RULE,
        FOUND_VERSION,
        &serde_json::json!({
            "decided": "correct, with no call",
            "found": found.text,
            "at": at,
            "accepted_answer": found.answer,
        }),
    );
    let (review_key, person) = ask.review(question, 1, plan.persons)?;
    let judges = vec![(0, 0); ask.judges()];
    if let Some(person) = person {
        let score = super::vocab::yes_no(&person)?;
        return Ok(Scored {
            review_key,
            graded: Some(graded),
            judges,
            ..Scored::by_person(
                person,
                format!("the found rule: correct, {found}"),
                score,
                "on whether the response gives the expected answer",
            )
        });
    }
    Ok(Scored {
        score: 1.0,
        reasoning: format!(
            "The expected answer stands in the response, {found}, with nothing in it that casts doubt on it: decided correct with no question asked (the found rule; a person may overrule it)."
        ),
        sample_scores: vec![1.0],
        graded: Some(graded),
        review_key,
        judges,
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
