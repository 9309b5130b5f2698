//! Answer relevance: one call (per sample). With short questions, the
//! score is P(yes) that the response answers the question (from token
//! probabilities; 1 or 0 from the word written); with the JSON prompt, the
//! score the judge writes, with its reasoning. Decided, escalated or left
//! to a person by the one decision step ([`super::decide`]).

use super::decide::{self, Answer, Decided, Threshold, decide_one};
use super::vocab::{Asker, Interval, Plan, Scored};
use crate::core::{Kind, RagCase, Strategy};
use crate::error::Result;
use crate::parse::{ScoredReply, YesNo};
use crate::tasks::{AnswersQuery, Relevance};

const ABOUT: &str = "to whether the response answers the question";

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
    if ask.scoring().verification.strategy != Strategy::Json {
        let question = AnswersQuery {
            query: &case.query,
            response,
            history: ask.history(),
        };
        let question = &question;
        let d = decide_one(
            ask,
            Kind::Answers,
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
        return scored(ask, d, |read: &YesNo| {
            let said = super::vocab::judge_said(read.p_yes, read.from_probabilities);
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
            (said, reasoning)
        });
    }
    let question = Relevance {
        query: &case.query,
        response,
        history: ask.history(),
    };
    let question = &question;
    let d = decide_one(
        ask,
        Kind::Answers,
        Threshold::Test(plan.threshold),
        plan,
        |judge| async move {
            decide::answer(
                plan,
                |s| judge.ask(question, s),
                |r: &ScoredReply| r.score,
                |_| false,
            )
            .await
        },
        || ask.review(question, 1, plan.persons),
    )
    .await?;
    scored(ask, d, |reply: &ScoredReply| {
        (format!("score {:.2}", reply.score), reply.reasoning.clone())
    })
}

/// The evaluation's figures from the decided answer: a person's verdict,
/// the judge's reading, or an answer awaiting a person. `said` gives the
/// judge's reading in a few words (beside a person's verdict) and the
/// reasoning.
fn scored<T>(
    ask: &Asker<'_>,
    d: Decided<Answer<T>>,
    said: impl Fn(&T) -> (String, String),
) -> Result<Scored> {
    let judges = decide::judges_of(&d, ask.judges());
    let review_key = d.review_key.clone();
    if let Some(person) = d.person {
        let score = super::vocab::yes_no(&person)?;
        let judge = d
            .value
            .as_ref()
            .map_or_else(|| "its reply unreadable".to_owned(), |a| said(&a.chosen).0);
        return Ok(Scored {
            review_key,
            judges,
            ..Scored::by_person(person, judge, score, ABOUT)
        });
    }
    let Some(answer) = d.value else {
        unreachable!("decide returns the reply's error when no person decided")
    };
    let (_, mut reasoning) = said(&answer.chosen);
    if d.stage > 0 {
        reasoning = format!("`{}` (escalated): {reasoning}", ask.at(d.stage).model());
    }
    let awaiting = d.unsure.is_some();
    Ok(Scored {
        score: d.p,
        reasoning,
        sample_scores: answer.scores,
        review_key,
        interval: Interval::of(usize::from(awaiting), 0.0, 1.0),
        unsure: d.unsure,
        judges,
        ..Scored::default()
    })
}
