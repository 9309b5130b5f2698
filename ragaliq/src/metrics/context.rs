//! Context precision (are the retrieved passages relevant, best first?) and
//! context recall (does the context hold what a complete answer needs?).

use super::faithfulness::details;
use super::sampling::vote;
use super::{Plan, Scored, Tally, claims, plural};
use crate::case::RagCase;
use crate::error::{Error, Result};
use crate::evaluation::{Metric, PassageVerdict};
use crate::judge::Judge;
use crate::parse::{self, ParsedRelevance};
use crate::prompts::{Shape, Task, escape, numbered};
use crate::verdict::{Verdict, VerdictWeights};
use futures_util::future::try_join_all;
use serde_json::json;

/// Average precision over the ranked passages: the mean, over relevant
/// passages, of the precision at each one's rank. 0 when none is relevant.
pub(super) async fn precision(
    judge: &Judge,
    case: &RagCase,
    plan: &Plan,
    tally: &Tally,
) -> Result<Scored> {
    if case.context.is_empty() {
        return Err(Error::MissingInput {
            metric: Metric::ContextPrecision,
            what: "at least one context passage",
        });
    }
    let expected = case
        .expected_answer
        .as_deref()
        .map_or_else(|| "(not given)".to_owned(), |a| escape(a.trim()));
    let user = judge.templates().render(
        Task::PassageRelevance,
        &[
            ("query", &escape(case.query.trim())),
            ("expected", &expected),
            ("passages", &numbered("passage", &case.context)),
            ("count", &case.context.len().to_string()),
        ],
    );
    let shape = Shape::items(case.context.len());
    let request = judge.request(
        Task::PassageRelevance,
        user,
        json!({"query": case.query, "expected": case.expected_answer, "passages": case.context}),
        shape,
    );
    let n = case.context.len();
    let ask = |sample: u32| {
        let mut request = request.clone();
        request.sample = sample;
        async move {
            let reply = judge
                .exchange(&request, Task::PassageRelevance, &shape, tally)
                .await?;
            parse::passage_relevance(&reply.text, n).map_err(|source| Error::JudgeResponse {
                task: Task::PassageRelevance.name(),
                source,
            })
        }
    };
    let ap = |set: &[ParsedRelevance]| average_precision(set.iter().map(|v| v.relevant));
    let first = plan.samples.first();
    let mut sets: Vec<Vec<ParsedRelevance>> = try_join_all((0..first).map(ask)).await?;
    if first == 1 && plan.samples.wants_more(ap(&sets[0]), plan.threshold) {
        sets.extend(try_join_all((1..plan.samples.max()).map(ask)).await?);
    }
    let scores: Vec<f64> = sets.iter().map(|s| ap(s)).collect();
    let passages: Vec<PassageVerdict> = (0..n)
        .map(|i| {
            if sets.len() == 1 {
                let v = &sets[0][i];
                return PassageVerdict {
                    rank: i + 1,
                    relevant: v.relevant,
                    reason: v.reason.clone(),
                    agreement: None,
                    undecided: false,
                };
            }
            let votes: Vec<bool> = sets.iter().map(|s| s[i].relevant).collect();
            // A tie counts the passage as not relevant: never in the
            // retriever's favour.
            let (relevant, agreement) = vote(&votes, i32::from);
            PassageVerdict {
                rank: i + 1,
                relevant,
                reason: sets
                    .iter()
                    .map(|s| &s[i])
                    .find(|v| v.relevant == relevant)
                    .map(|v| v.reason.clone())
                    .unwrap_or_default(),
                agreement: Some(agreement),
                undecided: !agreement.reaches(plan.agreement),
            }
        })
        .collect();
    let undecided = passages.iter().any(|p| p.undecided);
    let score = if undecided {
        super::sampling_median(&scores)
    } else {
        average_precision(passages.iter().map(|p| p.relevant))
    };
    let relevant = passages.iter().filter(|p| p.relevant).count();
    Ok(Scored {
        score,
        reasoning: format!(
            "{relevant} of {} relevant; average precision over their ranks {score:.2}.",
            plural(passages.len(), "passage", "passages")
        ),
        passages,
        undecided,
        sample_scores: scores,
        ..Scored::default()
    })
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
    judge: &Judge,
    case: &RagCase,
    plan: &Plan,
    tally: &Tally,
) -> Result<Scored> {
    let facts = if !case.expected_facts.is_empty() {
        case.expected_facts.clone()
    } else if let Some(answer) = case
        .expected_answer
        .as_deref()
        .filter(|a| !a.trim().is_empty())
    {
        claims::extract(judge, &case.query, answer, tally).await?
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
        |set: &[parse::ParsedVerdict]| VerdictWeights::RATIO.score(set.iter().map(|v| v.verdict));
    let (voted, scores) =
        claims::verify_voted(judge, &facts, &case.context, plan, tally, score_of).await?;
    let undecided = voted.iter().any(|v| v.undecided);
    let score = if undecided {
        super::sampling_median(&scores)
    } else {
        VerdictWeights::RATIO.score(voted.iter().map(|v| v.verdict.verdict))
    };
    let details = details(facts, voted, |v| v.verdict != Verdict::Supported);
    let covered = details.iter().filter(|c| !c.failed).count();
    let reasoning = if case.context.is_empty() {
        "No context was retrieved, so no expected fact is covered.".to_owned()
    } else {
        format!(
            "The context covers {covered} of {}.",
            plural(details.len(), "expected fact", "expected facts")
        )
    };
    Ok(Scored {
        score,
        reasoning,
        claims: details,
        undecided,
        sample_scores: scores,
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
