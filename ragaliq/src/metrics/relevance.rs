//! Answer relevance: one call, a score with reasoning.

use super::{Scored, Tally};
use crate::case::RagCase;
use crate::error::{Error, Result};
use crate::judge::Judge;
use crate::parse;
use crate::prompts::{Task, escape};
use serde_json::json;

pub(super) async fn relevance(judge: &Judge, case: &RagCase, tally: &Tally) -> Result<Scored> {
    if case.response.trim().is_empty() {
        // An empty answer answers nothing; no judge is needed to say so.
        return Ok(Scored {
            score: 0.0,
            reasoning: "The response is empty, so it does not answer the query.".into(),
            claims: Vec::new(),
            passages: Vec::new(),
        });
    }
    let user = judge.templates().render(
        Task::Relevance,
        &[
            ("query", &escape(case.query.trim())),
            ("response", &escape(case.response.trim())),
        ],
    );
    let request = judge.request(
        Task::Relevance,
        user,
        json!({"query": case.query, "response": case.response}),
    );
    let reply = judge.exchange(&request, tally).await?;
    let scored = parse::score(&reply.text).map_err(|source| Error::JudgeResponse {
        task: Task::Relevance.name(),
        source,
    })?;
    Ok(Scored {
        score: scored.score,
        reasoning: scored.reasoning,
        claims: Vec::new(),
        passages: Vec::new(),
    })
}
