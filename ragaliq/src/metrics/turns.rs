//! Checks only a conversation has, on a follow-up turn read with the
//! earlier turns its judge is shown: consistency (the answer contradicts
//! nothing the assistant said before) and retention (it neither asks again
//! for what the user said, nor goes against it). One yes/no question each,
//! whose P(yes) is what goes wrong: the score is 1 − P(yes). A first turn
//! (or a single question) has nothing before it: it passes with no call.
//! Decided, escalated or left to a person by the one decision step.

use super::decide::{self, Answer, Decided, Threshold, decide_one};
use super::vocab::{Asker, Interval, Plan, Scored};
use crate::core::{Kind, RagCase, Said};
use crate::error::Result;
use crate::evidence;
use crate::parse::YesNo;
use crate::tasks::{Ask, ContradictsEarlier, History, IgnoresUser};

/// What a check looks for in the earlier turns, for its messages.
struct Check {
    /// "contradicts what the assistant said earlier".
    wrong: &'static str,
    /// Which side of the earlier turns a conflict is looked for in.
    side: Side,
}

#[derive(Clone, Copy)]
enum Side {
    Assistant,
    User,
}

pub(super) async fn consistency(ask: &Asker<'_>, case: &RagCase, plan: &Plan) -> Result<Scored> {
    let Some(history) = follow_up(ask) else {
        return Ok(Scored::vacuous(
            "A first turn: there is no earlier answer to contradict.",
        ));
    };
    let question = ContradictsEarlier {
        query: &case.query,
        response: case.response_text(),
        history: Some(history),
    };
    let check = Check {
        wrong: "contradicts what the assistant said earlier",
        side: Side::Assistant,
    };
    asked(ask, case, plan, &question, history, &check).await
}

pub(super) async fn retention(ask: &Asker<'_>, case: &RagCase, plan: &Plan) -> Result<Scored> {
    let Some(history) = follow_up(ask) else {
        return Ok(Scored::vacuous(
            "A first turn: the user has said nothing earlier to ask again or contradict.",
        ));
    };
    let question = IgnoresUser {
        query: &case.query,
        response: case.response_text(),
        history: Some(history),
    };
    let check = Check {
        wrong: "asks again for, or contradicts, what the user said earlier",
        side: Side::User,
    };
    asked(ask, case, plan, &question, history, &check).await
}

/// The turn's history, when the judge is shown some of it.
fn follow_up<'a>(ask: &Asker<'a>) -> Option<&'a History> {
    ask.history().filter(|h| !h.shown.is_empty())
}

/// The question asked and decided: P(yes) is what goes wrong, so the turn
/// fails when it reaches 1 − the test's threshold.
async fn asked<A: Ask<Answer = YesNo>>(
    ask: &Asker<'_>,
    case: &RagCase,
    plan: &Plan,
    question: &A,
    history: &History,
    check: &Check,
) -> Result<Scored> {
    let d = decide_one(
        ask,
        Kind::Answers,
        Threshold::Test(1.0 - plan.threshold),
        plan,
        |judge| async move {
            decide::answer(
                plan,
                |s| judge.ask(question, s),
                // Sampled and voted on what goes right, as the score.
                |r: &YesNo| 1.0 - r.p_yes,
                |r| r.from_probabilities,
            )
            .await
            .map(|mut read| {
                read.p = 1.0 - read.p;
                read
            })
        },
        || ask.review(question, 1, plan.persons),
    )
    .await?;
    scored(ask, d, case, history, check)
}

/// The turn's score from the decided answer: 1 − P(yes), a person's
/// verdict, or an answer awaiting a person; the reasoning quotes the
/// answer and the earlier sentence closest to it.
fn scored(
    ask: &Asker<'_>,
    d: Decided<Answer<YesNo>>,
    case: &RagCase,
    history: &History,
    check: &Check,
) -> Result<Scored> {
    let judges = decide::judges_of(&d, ask.judges());
    let review_key = d.review_key.clone();
    let response = case.response_text().trim();
    let closest = closest_earlier(response, &history.shown.said, check.side);
    if let Some(person) = d.person {
        // A person's "yes" says the answer goes wrong.
        let score = 1.0 - super::vocab::yes_no(&person)?;
        let judge = d.value.as_ref().map_or_else(
            || "its reply unreadable".to_owned(),
            |a| super::vocab::judge_said(a.chosen.p_yes, a.chosen.from_probabilities),
        );
        let about = format!("to whether the answer {}", check.wrong);
        return Ok(Scored {
            review_key,
            judges,
            ..Scored::by_person(person, judge, score, &about)
        });
    }
    let Some(answer) = d.value else {
        unreachable!("decide returns the reply's error when no person decided")
    };
    let read = &answer.chosen;
    let said = if read.from_probabilities {
        format!("P(yes) {:.2} that the answer {}", read.p_yes, check.wrong)
    } else {
        format!(
            "The judge answered {} to whether the answer {}",
            if read.p_yes >= 0.5 { "yes" } else { "no" },
            check.wrong
        )
    };
    let mut reasoning = format!("{said} ({}). The answer: {response:?}", read.read);
    if let Some((turn, sentence)) = closest {
        reasoning.push_str(&format!(
            "; the closest earlier sentence (found by ragaliq), {} in turn {turn}: {sentence:?}",
            match check.side {
                Side::Assistant => "the assistant's",
                Side::User => "the user's",
            }
        ));
    }
    if d.stage > 0 {
        reasoning = format!("`{}` (escalated): {reasoning}", ask.at(d.stage).model());
    }
    let awaiting = d.unsure.is_some();
    Ok(Scored {
        score: 1.0 - d.p,
        reasoning,
        sample_scores: answer.scores,
        review_key,
        interval: Interval::of(usize::from(awaiting), 0.0, 1.0),
        unsure: d.unsure,
        judges,
        ..Scored::default()
    })
}

/// The sentence of the earlier turns shown (the assistant's answers, or
/// the user's messages) that shares the most words with `response`, and
/// its turn: found by ragaliq, to show beside a conflict, never to decide.
fn closest_earlier(response: &str, said: &[Said], side: Side) -> Option<(usize, String)> {
    let texts: Vec<String> = said
        .iter()
        .map(|s| match side {
            Side::Assistant => s.assistant.clone(),
            Side::User => s.user.clone(),
        })
        .collect();
    let found = evidence::closest_sentence(response, &texts)?;
    Some((
        said[found.passage].turn,
        texts[found.passage][found.span].trim().to_owned(),
    ))
}
