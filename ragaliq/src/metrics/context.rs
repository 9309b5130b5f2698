//! Context precision (are the retrieved passages relevant, best first?) and
//! context recall (does the context hold what a complete answer needs?).

use super::faithfulness::details;
use super::{Scored, Tally, claims, plural};
use crate::case::RagCase;
use crate::error::{Error, Result};
use crate::evaluation::{Metric, PassageVerdict};
use crate::judge::Judge;
use crate::parse;
use crate::prompts::{Task, escape, numbered};
use crate::verdict::{Verdict, VerdictWeights};
use serde_json::json;

/// Average precision over the ranked passages: the mean, over relevant
/// passages, of the precision at each one's rank. 0 when none is relevant.
pub(super) async fn precision(judge: &Judge, case: &RagCase, tally: &Tally) -> Result<Scored> {
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
        ],
    );
    let request = judge.request(
        Task::PassageRelevance,
        user,
        json!({"query": case.query, "passages": case.context.len()}),
    );
    let reply = judge.exchange(&request, tally).await?;
    let verdicts = parse::passage_relevance(&reply.text, case.context.len()).map_err(|source| {
        Error::JudgeResponse {
            task: Task::PassageRelevance.name(),
            source,
        }
    })?;
    let passages: Vec<PassageVerdict> = verdicts
        .into_iter()
        .enumerate()
        .map(|(i, v)| PassageVerdict {
            rank: i + 1,
            relevant: v.relevant,
            reason: v.reason,
        })
        .collect();
    let score = average_precision(passages.iter().map(|p| p.relevant));
    let relevant = passages.iter().filter(|p| p.relevant).count();
    Ok(Scored {
        score,
        reasoning: format!(
            "{relevant} of {} relevant; average precision over their ranks {score:.2}.",
            plural(passages.len(), "passage", "passages")
        ),
        claims: Vec::new(),
        passages,
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
pub(super) async fn recall(judge: &Judge, case: &RagCase, tally: &Tally) -> Result<Scored> {
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
    let verdicts = claims::verify(judge, &facts, &case.context, tally).await?;
    let score = VerdictWeights::RATIO.score(verdicts.iter().map(|v| v.verdict));
    let details = details(facts, verdicts, |v| v.verdict != Verdict::Supported);
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
        passages: Vec::new(),
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
