//! Criteria: a team's own rule in plain words, judged yes or no (P(yes)
//! read from the answer word) or scored 1 to 5 after evaluation steps
//! written once per criteria text (G-Eval). Either way the judge's reason
//! comes with the answer, in the same call.

use super::decide::{self, Threshold, decide_one};
use super::vocab::{Asker, Interval, Plan, Scored};
use crate::core::{Criteria, CriteriaForm, Kind, Metric, RagCase, ShownBecause};
use crate::error::{Error, Result};
use crate::tasks::{CriteriaMet, CriteriaScore, CriteriaSteps, Judged};

pub(super) async fn criteria(
    ask: &Asker<'_>,
    criteria: &Criteria,
    case: &RagCase,
    plan: &Plan,
) -> Result<Scored> {
    if criteria.text().trim().is_empty() {
        return Err(Error::MissingInput {
            metric: Metric::Criteria,
            what: "criteria text: the rule is empty",
        });
    }
    let context = criteria.uses_context().then_some(&case.context[..]);
    let expected = if criteria.uses_expected() {
        Some(
            case.expected_answer
                .as_deref()
                .filter(|a| !a.trim().is_empty())
                .ok_or(Error::MissingInput {
                    metric: Metric::Criteria,
                    what: "an expected answer: the criteria name it (or set `.with_expected(false)`)",
                })?,
        )
    } else {
        None
    };
    let response = case.response_text();
    let form = criteria.form();
    let d = decide_one(
        ask,
        Kind::Judged,
        Threshold::Test(plan.threshold),
        plan,
        |judge| async move {
            match form {
                CriteriaForm::YesNo => {
                    let question = CriteriaMet {
                        criteria: criteria.text(),
                        query: &case.query,
                        response,
                        context,
                        expected,
                        history: judge.history(),
                    };
                    let question = &question;
                    decide::answer(
                        plan,
                        |s| judge.ask(question, s),
                        |j: &Judged| j.score,
                        |j| j.from_probabilities,
                    )
                    .await
                }
                CriteriaForm::Scored => {
                    // The steps are written once per criteria text (sample
                    // 0) by each judge, whatever the samples: every case
                    // with these criteria is scored by the same steps.
                    let steps = judge
                        .ask(
                            &CriteriaSteps {
                                criteria: criteria.text(),
                            },
                            0,
                        )
                        .await?;
                    let question = CriteriaScore {
                        criteria: criteria.text(),
                        steps: &steps,
                        query: &case.query,
                        response,
                        context,
                        expected,
                        history: judge.history(),
                    };
                    let question = &question;
                    decide::answer(
                        plan,
                        |s| judge.ask(question, s),
                        |j: &Judged| j.score,
                        |j| j.from_probabilities,
                    )
                    .await
                }
            }
        },
        // A person's verdict is kept under what was judged, never how it
        // was asked: the steps are no part of its key.
        || match form {
            CriteriaForm::YesNo => ask.review(
                &CriteriaMet {
                    criteria: criteria.text(),
                    query: &case.query,
                    response,
                    context,
                    expected,
                    history: ask.history(),
                },
                1,
                plan.persons,
            ),
            CriteriaForm::Scored => ask.review(
                &CriteriaScore {
                    criteria: criteria.text(),
                    steps: &[],
                    query: &case.query,
                    response,
                    context,
                    expected,
                    history: ask.history(),
                },
                1,
                plan.persons,
            ),
        },
    )
    .await?;
    let judges = decide::judges_of(&d, ask.judges());
    let review_key = d.review_key.clone();
    if let Some(person) = d.person {
        // A yes or no on a yes/no rule; a score of 1 to 5 on a scored one.
        let score = match form {
            CriteriaForm::YesNo => super::vocab::yes_no(&person)?,
            CriteriaForm::Scored => match person.verdict.parse::<u8>() {
                Ok(n @ 1..=5) => f64::from(n - 1) / 4.0,
                _ => {
                    return Err(Error::Reviewed {
                        problem: format!(
                            "`{}` on scored criteria: give a score from 1 to 5",
                            person.verdict
                        ),
                    });
                }
            },
        };
        let judge = match d.value.as_ref().map(|a| &a.chosen) {
            None => "its reply unreadable".to_owned(),
            Some(read) => {
                let mut judge = match form {
                    CriteriaForm::YesNo => {
                        super::vocab::judge_said(read.score, read.from_probabilities)
                    }
                    CriteriaForm::Scored => format!("score {:.2} of 5", 1.0 + 4.0 * read.score),
                };
                if !read.reason.is_empty() {
                    judge.push_str(&format!(", its reason: \"{}\"", read.reason));
                }
                judge
            }
        };
        let mut scored = Scored {
            review_key,
            name: Some(criteria.name().to_owned()),
            judges,
            ..Scored::by_person(
                person,
                judge,
                score,
                "on whether the response meets the criteria",
            )
        };
        // What the judge was shown decides what its answer, which the
        // person overruled, was about.
        scored.reasoning.push(' ');
        scored.reasoning.push_str(&shown(criteria));
        return Ok(scored);
    }
    let Some(answer) = d.value else {
        unreachable!("decide returns the reply's error when no person decided")
    };
    let read = &answer.chosen;
    let what = match form {
        CriteriaForm::YesNo => "that the response meets the criteria",
        CriteriaForm::Scored => {
            "for how well the response meets the criteria (1 to 5, mapped to 0 to 1)"
        }
    };
    let mut reasoning = if read.reason.is_empty() {
        "The judge gave no reason.".to_owned()
    } else {
        format!("The judge's reason: \"{}\"", read.reason)
    };
    if d.stage > 0 {
        reasoning = format!("`{}` (escalated): {reasoning}", ask.at(d.stage).model());
    }
    reasoning.push_str(&format!(
        " ({} {what}: {}). {}",
        score_name(criteria),
        read.read,
        shown(criteria)
    ));
    let awaiting = d.unsure.is_some();
    Ok(Scored {
        score: d.p,
        reasoning,
        sample_scores: answer.scores,
        name: Some(criteria.name().to_owned()),
        review_key,
        interval: Interval::of(usize::from(awaiting), 0.0, 1.0),
        unsure: d.unsure,
        judges,
        ..Scored::default()
    })
}

/// What the judge was shown, and why. The passages and the expected answer
/// reach the judge only when the criteria name them ("passage", "policy
/// text", "reference", …) or are set to, so every verdict says which it
/// saw: a rule about the passages that names none of the words was judged
/// without them.
fn shown(criteria: &Criteria) -> String {
    let mut shown = vec!["the question", "the response", "the criteria"]
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    let mut hidden = Vec::new();
    for (part, pronoun, on, because) in [
        (
            "the passages",
            "them",
            criteria.uses_context(),
            criteria.context_because(),
        ),
        (
            "the expected answer",
            "it",
            criteria.uses_expected(),
            criteria.expected_because(),
        ),
    ] {
        let why = match because {
            ShownBecause::Set => "as set".to_owned(),
            ShownBecause::Named(word) => format!("the criteria say \"{word}\""),
            ShownBecause::NotNamed => format!("the criteria do not name {pronoun}"),
        };
        let item = format!("{part} ({why})");
        if on {
            shown.push(item);
        } else {
            hidden.push(item);
        }
    }
    let last = shown.pop().unwrap_or_default();
    let mut out = format!("Shown to the judge: {} and {last}", shown.join(", "));
    if !hidden.is_empty() {
        out.push_str("; not ");
        out.push_str(&hidden.join(" nor "));
    }
    out.push('.');
    out
}

fn score_name(criteria: &Criteria) -> &'static str {
    match criteria.form() {
        CriteriaForm::YesNo => "P(yes)",
        CriteriaForm::Scored => "score",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_verdict_says_what_the_judge_was_shown_and_why() {
        assert_eq!(
            shown(&Criteria::new("Never promises a refund")),
            "Shown to the judge: the question, the response and the criteria; not the passages (the criteria do not name them) nor the expected answer (the criteria do not name it)."
        );
        assert_eq!(
            shown(&Criteria::new(
                "Quotes the Policy Text and agrees with the reference"
            )),
            "Shown to the judge: the question, the response, the criteria, the passages (the criteria say \"policy text\") and the expected answer (the criteria say \"reference\")."
        );
        assert_eq!(
            shown(
                &Criteria::new("Every figure appears in the passages")
                    .with_context(false)
                    .with_expected(true)
            ),
            "Shown to the judge: the question, the response, the criteria and the expected answer (as set); not the passages (as set)."
        );
    }
}
