//! Answer relevance: one call (per sample), a score with reasoning.

use super::sampling::sample;
use super::{Asker, Plan, Scored};
use crate::core::RagCase;
use crate::error::Result;
use crate::parse::ScoredReply;
use crate::stats;
use crate::tasks::Relevance;

pub(super) async fn relevance(ask: &Asker<'_>, case: &RagCase, plan: &Plan) -> Result<Scored> {
    let response = case.response_text();
    if response.trim().is_empty() {
        // An empty answer answers nothing; no judge is needed to say so.
        return Ok(Scored {
            score: 0.0,
            reasoning: "The response is empty, so it does not answer the query.".into(),
            ..Scored::default()
        });
    }
    let question = Relevance {
        query: &case.query,
        response,
    };
    let sampled = sample(plan, |s| ask.ask(&question, s), |r: &ScoredReply| r.score).await?;
    let mut replies = sampled.answers;
    let scores = sampled.scores;
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
    let (_, agreement) = stats::vote(&sides, i32::from);
    let median = stats::median(&scores);
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
