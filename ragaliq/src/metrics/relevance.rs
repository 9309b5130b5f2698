//! Answer relevance: one call (per sample), a score with reasoning.

use super::sampling::vote;
use super::{Plan, Scored, Tally};
use crate::case::RagCase;
use crate::error::{Error, Result};
use crate::judge::Judge;
use crate::parse::{self, ScoredReply};
use crate::prompts::{Shape, Task, escape};
use futures_util::future::try_join_all;
use serde_json::json;

pub(super) async fn relevance(
    judge: &Judge,
    case: &RagCase,
    plan: &Plan,
    tally: &Tally,
) -> Result<Scored> {
    let response = case.response_text();
    if response.trim().is_empty() {
        // An empty answer answers nothing; no judge is needed to say so.
        return Ok(Scored {
            score: 0.0,
            reasoning: "The response is empty, so it does not answer the query.".into(),
            ..Scored::default()
        });
    }
    let user = judge.templates().render(
        Task::Relevance,
        &[
            ("query", &escape(case.query.trim())),
            ("response", &escape(response.trim())),
        ],
    );
    let shape = Shape::items(1);
    let request = judge.request(
        Task::Relevance,
        user,
        json!({"query": case.query, "response": response}),
        shape,
    );
    let ask = |sample: u32| {
        let mut request = request.clone();
        request.sample = sample;
        async move {
            let reply = judge
                .exchange(&request, Task::Relevance, &shape, tally)
                .await?;
            parse::score(&reply.text).map_err(|source| Error::JudgeResponse {
                task: Task::Relevance.name(),
                source,
            })
        }
    };
    let first = plan.samples.first();
    let mut replies: Vec<ScoredReply> = try_join_all((0..first).map(ask)).await?;
    if first == 1 && plan.samples.wants_more(replies[0].score, plan.threshold) {
        replies.extend(try_join_all((1..plan.samples.max()).map(ask)).await?);
    }
    let scores: Vec<f64> = replies.iter().map(|r| r.score).collect();
    if replies.len() == 1 {
        let reply = replies.remove(0);
        return Ok(Scored {
            score: reply.score,
            reasoning: reply.reasoning,
            sample_scores: scores,
            ..Scored::default()
        });
    }
    // A score's samples vote on the side of the threshold they fall; the
    // score is their median, the reasoning the median sample's.
    let sides: Vec<bool> = scores.iter().map(|s| *s >= plan.threshold).collect();
    let (_, agreement) = vote(&sides, i32::from);
    let median = super::sampling_median(&scores);
    let reasoning = replies
        .iter()
        .find(|r| r.score == median)
        .map(|r| r.reasoning.clone())
        .unwrap_or_default();
    Ok(Scored {
        score: median,
        reasoning,
        undecided: !agreement.reaches(plan.agreement),
        sample_scores: scores,
        ..Scored::default()
    })
}
