//! Context precision (are the retrieved passages relevant, best first?) and
//! context recall (does the context hold what a complete answer needs?).

use super::claims::{Verification, details};
use super::sampling::{sample, vote_items};
use super::{Asker, Plan, Scored, claims, plural};
use crate::core::Strategy;
use crate::core::{Metric, PassageVerdict, RagCase, Verdict, VerdictWeights};
use crate::error::{Error, Result};
use crate::parse::{ParseError, ParseErrorKind, ParsedRelevance, ParsedVerdict};
use crate::tasks::{MAX_REASKS, PassageRelevance, PassageRelevant};

/// Average precision over the ranked passages: the mean, over relevant
/// passages, of the precision at each one's rank. 0 when none is relevant.
pub(super) async fn precision(
    ask: &Asker<'_>,
    how: Verification,
    case: &RagCase,
    plan: &Plan,
) -> Result<Scored> {
    if case.context.is_empty() {
        return Err(Error::MissingInput {
            metric: Metric::ContextPrecision,
            what: "at least one context passage",
        });
    }
    let ap = |set: &Vec<ParsedRelevance>| average_precision(set.iter().map(|v| v.relevant));
    let judged = |s| async move {
        if how.strategy == Strategy::Json {
            judge_passages(ask, case, s).await
        } else {
            ask_each_passage(ask, how, case, s).await
        }
    };
    let sampled = sample(plan, judged, ap).await?;
    // A tie counts the passage as not relevant: never in the retriever's favour.
    let mut passages: Vec<PassageVerdict> = vote_items(
        &sampled.answers,
        case.context.len(),
        plan,
        |v| v.relevant,
        i32::from,
    )
    .into_iter()
    .enumerate()
    .map(|(i, vote)| PassageVerdict {
        rank: i + 1,
        relevant: vote.winner,
        reason: vote.agreeing[0].reason.clone(),
        probability: {
            let ps: Vec<f64> = vote.agreeing.iter().filter_map(|v| v.probability).collect();
            (!ps.is_empty()).then(|| ps.iter().sum::<f64>() / ps.len() as f64)
        },
        agreement: vote.agreement,
        undecided: vote.undecided,
        person: None,
        review_key: None,
    })
    .collect();
    // A person's verdict on a passage decides in place of the vote.
    for (p, passage) in passages.iter_mut().zip(&case.context) {
        let question = PassageRelevant {
            query: &case.query,
            expected: case.expected_answer.as_deref(),
            passage,
        };
        let (key, person) = ask.review(&question, 1, plan.persons)?;
        p.review_key = key;
        if let Some(mut person) = person {
            let relevant = super::yes_no(&person)? >= 0.5;
            person.judge = match (p.undecided, p.probability) {
                (true, _) => "undecided".to_owned(),
                (false, Some(prob)) => format!("P(yes) {prob:.2}"),
                (false, None) => if p.relevant { "yes" } else { "no" }.to_owned(),
            };
            p.relevant = relevant;
            p.reason = person.to_string();
            p.undecided = false;
            p.agreement = None;
            p.person = Some(person);
        }
    }
    let undecided = passages.iter().any(|p| p.undecided);
    let score = average_precision(passages.iter().map(|p| p.relevant));
    let relevant = passages.iter().filter(|p| p.relevant).count();
    Ok(Scored {
        score,
        reasoning: format!(
            "{relevant} of {} relevant; average precision over their ranks {score:.2}.",
            plural(passages.len(), "passage", "passages")
        ),
        passages,
        undecided,
        sample_scores: sampled.scores,
        ..Scored::default()
    })
}

/// Every passage's relevance from sample `sample`, one short question each:
/// relevant when P(yes) that it helps answer the question reaches the
/// passage threshold. Asked in rank order.
async fn ask_each_passage(
    ask: &Asker<'_>,
    how: Verification,
    case: &RagCase,
    sample: u32,
) -> Result<Vec<ParsedRelevance>> {
    let mut out = Vec::with_capacity(case.context.len());
    for passage in &case.context {
        let read = ask
            .ask(
                &PassageRelevant {
                    query: &case.query,
                    expected: case.expected_answer.as_deref(),
                    passage,
                },
                sample,
            )
            .await?;
        out.push(ParsedRelevance {
            relevant: read.p_yes >= how.passage_threshold,
            reason: read.read,
            probability: read.from_probabilities.then_some(read.p_yes),
        });
    }
    Ok(out)
}

/// Every passage's relevance from sample `sample`: one call for all of them;
/// a passage whose item cannot be read is asked about again alone (at most
/// [`MAX_REASKS`] of them), and its neighbours stand.
async fn judge_passages(
    ask: &Asker<'_>,
    case: &RagCase,
    sample: u32,
) -> Result<Vec<ParsedRelevance>> {
    fn question<'a>(case: &'a RagCase, passages: &'a [String]) -> PassageRelevance<'a> {
        PassageRelevance {
            query: &case.query,
            expected: case.expected_answer.as_deref(),
            passages,
        }
    }
    let mut got = ask.ask(&question(case, &case.context), sample).await?.items;
    let missing: Vec<usize> = (0..got.len()).filter(|&i| got[i].is_none()).collect();
    if missing.len() > MAX_REASKS {
        return Err(Error::JudgeResponse {
            task: "passage_relevance",
            source: ParseError::new(
                ParseErrorKind::Unmatched {
                    unmatched: missing.len(),
                    limit: MAX_REASKS,
                },
                "",
            ),
        });
    }
    for i in missing {
        let one = std::slice::from_ref(&case.context[i]);
        let mut alone = ask.ask(&question(case, one), sample).await?.items;
        got[i] = alone.pop().flatten();
    }
    got.into_iter()
        .map(|v| {
            v.ok_or_else(|| Error::JudgeResponse {
                task: "passage_relevance",
                source: ParseError::new(
                    ParseErrorKind::Unmatched {
                        unmatched: 1,
                        limit: MAX_REASKS,
                    },
                    "",
                ),
            })
        })
        .collect()
}

pub(super) fn average_precision(relevant: impl IntoIterator<Item = bool>) -> f64 {
    let (mut hits, mut sum, mut seen) = (0usize, 0.0, 0usize);
    for r in relevant {
        seen += 1;
        if r {
            hits += 1;
            sum += hits as f64 / seen as f64;
        }
    }
    if hits == 0 { 0.0 } else { sum / hits as f64 }
}

/// The expected facts (or the claims of the expected answer) verified
/// against the context: the weighted share covered (supported 1, partially
/// supported 0.5).
pub(super) async fn recall(
    ask: &Asker<'_>,
    how: Verification,
    case: &RagCase,
    plan: &Plan,
) -> Result<Scored> {
    // Facts written by hand are taken as they are; claims extracted from
    // the expected answer keep what extraction dropped, for the counts.
    let (facts, extracted) = if !case.expected_facts.is_empty() {
        (case.expected_facts.clone(), None)
    } else if let Some(answer) = case
        .expected_answer
        .as_deref()
        .filter(|a| !a.trim().is_empty())
    {
        let extracted = claims::extract(ask, how, &case.query, answer, "reference").await?;
        (extracted.claims.clone(), Some(extracted))
    } else {
        return Err(Error::MissingInput {
            metric: Metric::ContextRecall,
            what: "expected facts or an expected answer",
        });
    };
    if facts.is_empty() {
        return Err(Error::MissingInput {
            metric: Metric::ContextRecall,
            what: "an expected answer with at least one factual claim",
        });
    }
    let score_of =
        |set: &[ParsedVerdict]| VerdictWeights::RATIO.score(set.iter().map(|v| v.verdict));
    let claims::Checked {
        voted,
        sample_scores: scores,
    } = claims::check(ask, how, &facts, &case.context, plan, score_of).await?;
    let undecided = voted.iter().any(|v| v.undecided);
    let score = VerdictWeights::RATIO.score(voted.iter().map(|v| v.verdict.verdict));
    let details = details(&facts, voted, |v| v.verdict != Verdict::Supported);
    let covered = details.iter().filter(|c| !c.failed).count();
    let mut reasoning = if case.context.is_empty() {
        "No context was retrieved, so no expected fact is covered.".to_owned()
    } else {
        format!(
            "The context covers {covered} of {}.",
            plural(details.len(), "expected fact", "expected facts")
        )
    };
    if let Some(extracted) = &extracted {
        reasoning.push_str(&super::claims::dropped(extracted));
    }
    Ok(Scored {
        score,
        reasoning,
        claims: details,
        undecided,
        sample_scores: scores,
        dropped: extracted.map_or(0, |e| e.dropped.len()),
        ..Scored::default()
    })
}

#[cfg(test)]
mod tests {
    use super::average_precision;

    #[test]
    fn average_precision_rewards_relevant_passages_first() {
        assert_eq!(average_precision([true, true, false]), 1.0);
        assert_eq!(average_precision([false, true]), 0.5);
        assert!((average_precision([true, false, true]) - (1.0 + 2.0 / 3.0) / 2.0).abs() < 1e-12);
        assert_eq!(average_precision([false, false]), 0.0);
    }
}
