//! The judged assertions: evaluates for an assertion macro, and words
//! each way it can end (a low score, awaiting a person, undecided, a judge
//! failure, a configuration error) as its own message.

use super::expect::{Expect, What};
use super::hints::{awaiting_hint, overrule_hint};
use super::outcome::{Failure, defer_awaiting, note_failure};
use crate::core::{Assessed, Evaluation, Gradable};
use crate::error::NOT_RECORDED;
use crate::judge::Judge;
use crate::metrics::EvalOptions;
use futures_util::future::BoxFuture;

/// Evaluates for an assertion macro: the evaluation when it is as expected,
/// else the failure message. A low score, an undecided judge, a judge
/// failure and a configuration error each read differently.
pub fn assert_metric<'a>(
    macro_name: &'a str,
    judge: &'a Judge,
    case: &'a (impl Gradable + ?Sized),
    what: impl Into<What<'a>>,
    options: Result<EvalOptions, String>,
    expect: Expect,
) -> BoxFuture<'a, Result<Evaluation, String>> {
    assert_boxed(
        macro_name,
        judge,
        case.assessed(),
        what.into(),
        options,
        expect,
    )
}

/// Boxed in a function that is not generic, so that its state machine,
/// and the evaluation's under it, are compiled once in ragaliq, not in
/// every test crate.
fn assert_boxed<'a>(
    macro_name: &'a str,
    judge: &'a Judge,
    case: Assessed<'a>,
    what: What<'a>,
    options: Result<EvalOptions, String>,
    expect: Expect,
) -> BoxFuture<'a, Result<Evaluation, String>> {
    Box::pin(assert_here(macro_name, judge, case, what, options, expect))
}

/// How a message names what an assertion graded: `case `refund-window``,
/// `conversation `jacket-return``, `turn 3 of conversation `jacket-return``
/// (a case or conversation without an id, by its first question).
fn subject_of(case: Assessed<'_>) -> String {
    let named = |id: &Option<String>, query: &str| match id {
        Some(id) => format!("`{id}`"),
        None => format!("{:?}", query.trim()),
    };
    let first = |c: &crate::core::Conversation| {
        c.turns.first().map(|t| t.query.clone()).unwrap_or_default()
    };
    match case {
        Assessed::Case(c) if c.history.is_empty() => format!("case {}", named(&c.id, &c.query)),
        Assessed::Case(c) => format!(
            "turn {} of case {}",
            c.turn_number(),
            named(&c.id, &c.query)
        ),
        Assessed::Conversation(c) => format!("conversation {}", named(&c.id, &first(c))),
        Assessed::Turn(c, n) => format!("turn {n} of conversation {}", named(&c.id, &first(c))),
    }
}

async fn assert_here(
    macro_name: &str,
    judge: &Judge,
    case: Assessed<'_>,
    what: What<'_>,
    options: Result<EvalOptions, String>,
    expect: Expect,
) -> Result<Evaluation, String> {
    let metric = match &what {
        What::Metric(m) => m.to_string(),
        What::Criteria(c) => format!("criteria {:?}", c.name()),
        What::Custom(m) => m.name().to_owned(),
    };
    let subject = subject_of(case);
    let recording = judge
        .recorder()
        .map(|r| format!("\n{}", r.where_line()))
        .unwrap_or_default();
    let options = match options {
        Ok(o) => o,
        Err(problem) => {
            note_failure(Failure::Judge);
            return Err(format!(
                "{macro_name}! configuration error for {subject}: {problem} (this is not a low score: fix the assertion)"
            ));
        }
    };
    if let Some(samples) = options.samples
        && samples.max() > 1
        && judge.temperature() == 0.0
    {
        eprintln!(
            "warning: {macro_name}! asks {samples} samples at temperature 0: a judge that answers the same every time makes every vote unanimous, so the extra samples cost and tell nothing (set `temperature` above 0 in ragaliq.toml or RAGALIQ_TEMPERATURE)"
        );
    }
    let result = match &what {
        What::Metric(m) => judge.evaluate_with(*m, &case, &options).await,
        What::Criteria(c) => judge.criteria_with(&case, c.clone(), &options).await,
        What::Custom(m) => judge.custom_with(m, &case, &options).await,
    };
    let judge_line = format!("\njudge: {}", judge.describe());
    match (result, expect) {
        // Awaiting a person is no low score: said first, with the command
        // that gives the verdict. The test fails until a person gives it
        // (`uncertain = "fail"`, the default); `"pass"` lets it pass
        // meanwhile, and says so outside the capture.
        (Ok(eval), _) if eval.awaiting.is_some() => {
            let hint = awaiting_hint(&eval, judge, &what);
            if eval.passed {
                say_awaiting(&format!(
                    "ragaliq: {macro_name}! for {subject} awaits a person and passes meanwhile (uncertain = \"pass\"){hint}\n"
                ));
                return Ok(eval);
            }
            let message = format!(
                "{macro_name}! AWAITING A PERSON for {subject}: the judge is unsure, so this test fails until a person gives the verdict (not a low score; `uncertain = \"pass\"` would let it pass meanwhile){hint}\n{eval}{judge_line}{recording}"
            );
            if defer_awaiting(&message) {
                return Ok(eval);
            }
            note_failure(Failure::Judge);
            Err(message)
        }
        (Ok(eval), Expect::Pass) if eval.passed => Ok(eval),
        (Ok(eval), Expect::Caught) if !eval.passed && !eval.undecided => Ok(eval),
        (Ok(eval), _) if eval.undecided => {
            note_failure(Failure::Judge);
            let reason = eval.undecided_reason().unwrap_or_default();
            Err(format!(
                "{macro_name}! undecided for {subject}: {reason}, so this test cannot tell whether the answer is good (not a low score)\n{eval}{judge_line}{recording}"
            ))
        }
        (Ok(eval), Expect::Pass) => {
            note_failure(Failure::Score);
            let hint = overrule_hint(&eval, judge, &what, expect);
            Err(format!(
                "{macro_name}! failed for {subject}\n{eval}{recording}{hint}"
            ))
        }
        (Ok(eval), Expect::Caught) => {
            note_failure(Failure::Score);
            let hint = overrule_hint(&eval, judge, &what, expect);
            Err(format!(
                "{macro_name}! failed for {subject}: the answer was not caught: {metric} {:.2} >= threshold {:.2}\n{eval}{recording}{hint}",
                eval.score, eval.threshold
            ))
        }
        (Err(error), _) if error.is_configuration() => {
            note_failure(Failure::Judge);
            Err(format!(
                "{macro_name}! configuration error for {subject}: {error} (this is not a low score: the case or the options cannot be scored this way)"
            ))
        }
        (Err(error), _) if error.is_budget() => {
            note_failure(Failure::Judge);
            Err(format!(
                "{macro_name}! not evaluated for {subject}: {error}{recording}"
            ))
        }
        (Err(error), _) if error.is_queued() => {
            note_failure(Failure::Judge);
            Err(format!(
                "{macro_name}! queued {metric} for {subject}: no score yet (collect mode)\n{error}"
            ))
        }
        (Err(error), _) if error.is_recording() => {
            note_failure(Failure::Judge);
            Err(format!(
                "{macro_name}! could not evaluate {metric} for {subject}: {NOT_RECORDED}\n{error}{recording}"
            ))
        }
        (Err(error), _) => {
            note_failure(Failure::Judge);
            Err(format!(
                "{macro_name}! could not evaluate {metric} for {subject}: the judge failed (this is not a low score)\n{error}{judge_line}{recording}"
            ))
        }
    }
}

/// A line on the process's standard error, outside the test harness's
/// capture: an evaluation that awaits a person is never a silent pass.
fn say_awaiting(line: &str) {
    use std::io::Write as _;
    let _ = std::io::stderr().write_all(line.as_bytes());
}
