//! Abstention: a turn whose passages cannot answer it is answered by
//! saying so, not by inventing (MTRAG-UN's unanswerable turns).
//!
//! Two yes/no questions, each decided, escalated or left to a person by
//! the one decision step: do the passages contain the answer to the
//! question (not asked where the turn is labelled `answerable`, nor where
//! nothing was retrieved), and does the response say it cannot answer,
//! instead of answering? Both are asked whatever the first reads, so a
//! person's verdict on the first never needs a question that was not
//! asked. The score is 1 where the passages answer the question (nothing
//! to abstain from), else P(yes) that the response says it cannot answer;
//! where whether they answer it is uncertain, the score counted each way
//! lies between the two.

use super::decide::{self, Answer, Decided, Threshold, decide_one};
use super::vocab::{Asker, Interval, Plan, Scored};
use crate::core::{Answerable, Decision, Kind, RagCase};
use crate::error::Result;
use crate::parse::YesNo;
use crate::tasks::{DeclinesToAnswer, PassagesAnswer};

/// P(yes) at which the passages are read to answer the question.
const ANSWERS_AT: f64 = 0.5;

pub(super) async fn abstention(ask: &Asker<'_>, case: &RagCase, plan: &Plan) -> Result<Scored> {
    let response = case.response_text();
    let passages = super::faithfulness::grounded_passages(case, ask.history());
    if case.answerable == Some(true) {
        return Ok(Scored {
            answerable: Some(labelled(true)),
            ..Scored::vacuous(
                "The turn is labelled answerable: its passages answer it, so there is nothing to abstain from.",
            )
        });
    }
    // Whether the passages answer it: the label, nothing retrieved (no
    // call), or the judge.
    let first = if case.answerable == Some(false) || passages.is_empty() {
        None
    } else {
        let question = PassagesAnswer {
            query: &case.query,
            passages: &passages,
            history: ask.history(),
        };
        let question = &question;
        Some(
            decide_one(
                ask,
                Kind::Answers,
                Threshold::Test(ANSWERS_AT),
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
            .await?,
        )
    };
    let declines = DeclinesToAnswer {
        query: &case.query,
        response,
        history: ask.history(),
    };
    let declines = &declines;
    let second = decide_one(
        ask,
        Kind::Answers,
        Threshold::Test(plan.threshold),
        plan,
        |judge| async move {
            decide::answer(
                plan,
                |s| judge.ask(declines, s),
                |r: &YesNo| r.p_yes,
                |r| r.from_probabilities,
            )
            .await
        },
        || ask.review(declines, 1, plan.persons),
    )
    .await?;
    let answerable = match (&first, case.answerable) {
        (_, Some(false)) => labelled(false),
        (None, _) => Answerable {
            answerable: false,
            labelled: false,
            probability: None,
            person: None,
            review_key: None,
            unsure: None,
        },
        (Some(d), _) => read_answerable(d)?,
    };
    combine(ask, answerable, first.as_ref(), second, response)
}

fn labelled(answerable: bool) -> Answerable {
    Answerable {
        answerable,
        labelled: true,
        probability: None,
        person: None,
        review_key: None,
        unsure: None,
    }
}

/// The first question, decided.
fn read_answerable(d: &Decided<Answer<YesNo>>) -> Result<Answerable> {
    let answerable = match &d.person {
        Some(person) => super::vocab::yes_no(person)? >= 0.5,
        None => match d.decision {
            Decision::Yes => true,
            Decision::No => false,
            // Uncertain: what the threshold alone reads.
            Decision::Uncertain => d.p >= ANSWERS_AT,
        },
    };
    Ok(Answerable {
        answerable,
        labelled: false,
        probability: d
            .value
            .as_ref()
            .filter(|a| a.chosen.from_probabilities)
            .map(|_| d.p),
        person: d.person.clone(),
        review_key: d.review_key.clone(),
        unsure: d.unsure.clone(),
    })
}

/// The turn's score from both answers.
fn combine(
    ask: &Asker<'_>,
    answerable: Answerable,
    first: Option<&Decided<Answer<YesNo>>>,
    second: Decided<Answer<YesNo>>,
    response: &str,
) -> Result<Scored> {
    let mut judges = decide::judges_of(&second, ask.judges());
    if let Some(first) = first {
        for (k, (asked, decided)) in decide::judges_of(first, ask.judges())
            .into_iter()
            .enumerate()
        {
            judges[k].0 += asked;
            judges[k].1 += decided;
        }
    }
    // P(it says it cannot answer), a person's word, and how the judge read it.
    let (p_declines, declines_said, person) = match &second.person {
        Some(person) => {
            let mut person = person.clone();
            person.judge = second.value.as_ref().map_or_else(
                || "its reply unreadable".to_owned(),
                |a| super::vocab::judge_said(a.chosen.p_yes, a.chosen.from_probabilities),
            );
            let p = super::vocab::yes_no(&person)?;
            let said = format!("{person} to whether the answer says it cannot answer");
            (p, said, Some(person))
        }
        None => {
            let Some(answer) = &second.value else {
                unreachable!("decide returns the reply's error when no person decided")
            };
            let r = &answer.chosen;
            let said = if r.from_probabilities {
                format!(
                    "P(yes) {:.2} that the answer says it cannot answer",
                    second.p
                )
            } else {
                format!(
                    "the judge answered {} to whether the answer says it cannot answer",
                    if r.p_yes >= 0.5 { "yes" } else { "no" }
                )
            };
            (second.p, said, None)
        }
    };
    let first_said = if answerable.labelled {
        "The turn is labelled unanswerable".to_owned()
    } else if first.is_none() {
        "No passage was retrieved for the turn".to_owned()
    } else if let Some(p) = &answerable.person {
        format!("{p} to whether the passages answer the question")
    } else {
        match answerable.probability {
            Some(p) => format!(
                "P(yes) {p:.2} that the passages answer the question{}",
                if answerable.unsure.is_some() {
                    " (uncertain)"
                } else {
                    ""
                }
            ),
            None => format!(
                "The judge answered {} to whether the passages answer the question",
                if answerable.answerable { "yes" } else { "no" }
            ),
        }
    };
    let quoted = format!(" The answer: {:?}", response.trim());
    let first_open = answerable.unsure.is_some() && answerable.person.is_none();
    let second_open = second.unsure.is_some() && second.person.is_none();
    let (score, reasoning) = if answerable.answerable && !first_open {
        (
            1.0,
            format!("{first_said}: there is nothing to abstain from ({declines_said})."),
        )
    } else if first_open {
        let read = if answerable.answerable {
            1.0
        } else {
            p_declines
        };
        (read, format!("{first_said}; {declines_said}.{quoted}"))
    } else {
        (
            p_declines,
            format!(
                "{first_said}, so the answer must say it cannot answer: {declines_said}.{quoted}"
            ),
        )
    };
    // Counted each way: an open first question spans "answerable" (1)
    // and not (the second's reading, itself 0 to 1 when open).
    let settled = answerable.answerable && !first_open;
    let interval = match (first_open, second_open) {
        _ if settled => None,
        (false, false) => None,
        (false, true) => Interval::of(1, 0.0, 1.0),
        (true, false) => Interval::of(1, p_declines, 1.0),
        (true, true) => Interval::of(2, 0.0, 1.0),
    };
    let scores = second
        .value
        .as_ref()
        .map_or_else(|| vec![score], |a| a.scores.clone());
    Ok(Scored {
        score,
        reasoning,
        sample_scores: if settled { vec![1.0] } else { scores },
        review_key: second.review_key.clone(),
        person,
        interval,
        unsure: if settled {
            None
        } else if second_open {
            second.unsure.clone()
        } else if first_open {
            answerable.unsure.clone()
        } else {
            None
        },
        judges,
        answerable: Some(answerable),
        ..Scored::default()
    })
}
