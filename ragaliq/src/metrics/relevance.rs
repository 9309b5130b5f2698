//! Answer relevance: one call (per sample). With short questions, the
//! score is P(yes) that the response answers the question (from token
//! probabilities; 1 or 0 from the word written); with the JSON prompt, the
//! score the judge writes, with its reasoning.

use super::claims::Verification;
use super::sampling::sample;
use super::{Asker, Plan, Scored};
use crate::core::{RagCase, Strategy};
use crate::error::Result;
use crate::parse::{ScoredReply, YesNo};
use crate::stats;
use crate::tasks::{AnswersQuery, Relevance};

pub(super) async fn relevance(
    ask: &Asker<'_>,
    how: Verification,
    case: &RagCase,
    plan: &Plan,
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
    if how.strategy != Strategy::Json {
        let question = AnswersQuery {
            query: &case.query,
            response,
        };
        let sampled = sample(plan, |s| ask.ask(&question, s), |r: &YesNo| r.p_yes).await?;
        let scores = sampled.scores;
        let median = stats::median(&scores);
        let read = sampled
            .answers
            .iter()
            .find(|r| r.p_yes == median)
            .unwrap_or(&sampled.answers[0]);
        let (review_key, person) = ask.review(&question, 1, plan.persons)?;
        if let Some(person) = person {
            let score = super::yes_no(&person)?;
            let judge = super::judge_said(read.p_yes, read.from_probabilities);
            return Ok(Scored {
                review_key,
                ..Scored::by_person(
                    person,
                    judge,
                    score,
                    "to whether the response answers the question",
                )
            });
        }
        let reasoning = if read.from_probabilities {
            format!(
                "P(yes) {:.2} that the response answers the question ({}).",
                read.p_yes, read.read
            )
        } else {
            format!(
                "The judge answered {} to whether the response answers the question ({}).",
                if read.p_yes >= 0.5 { "yes" } else { "no" },
                read.read
            )
        };
        let undecided = scores.len() > 1 && {
            let sides: Vec<bool> = scores.iter().map(|s| *s >= plan.threshold).collect();
            !stats::vote(&sides, i32::from).1.reaches(plan.agreement)
        };
        return Ok(Scored {
            score: median,
            reasoning,
            undecided,
            sample_scores: scores,
            review_key,
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
    let (review_key, person) = ask.review(&question, 1, plan.persons)?;
    if let Some(person) = person {
        let score = super::yes_no(&person)?;
        let judge = format!("score {:.2}", stats::median(&scores));
        return Ok(Scored {
            review_key,
            ..Scored::by_person(
                person,
                judge,
                score,
                "to whether the response answers the question",
            )
        });
    }
    if replies.len() == 1 {
        let reply = replies.remove(0);
        return Ok(Scored {
            score: reply.score,
            reasoning: reply.reasoning,
            sample_scores: scores,
            review_key,
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
        review_key,
        ..Scored::default()
    })
}
