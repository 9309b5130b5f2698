//! The commands a failing or awaiting assertion prints: how a person
//! overrules the judge's reading, or gives the verdict it awaits.

use super::expect::{Expect, What};
use super::relative::relative;
use crate::core::{Evaluation, Metric, Mode};
use crate::judge::Judge;

/// The commands that overrule what failed an evaluation, each on one item
/// (a claim, a passage, the answer), for a failure message: empty when
/// there is no recording to keep a person's verdict in. For a
/// conversation, the items of every turn that failed, each named.
pub(super) fn overrule_hint(
    eval: &Evaluation,
    judge: &Judge,
    what: &What<'_>,
    expect: Expect,
) -> String {
    let Some(recorder) = judge.recorder() else {
        return String::new();
    };
    if recorder.mode() == Mode::Live {
        return String::new();
    }
    let file = relative(&recorder.location().snapshot);
    let command = |key: &str, verdict: &str| {
        format!(
            "cargo ragaliq review {} --key {key} --verdict {verdict}",
            file.display()
        )
    };
    // The found rule decided it with no call: no judge read it, and a
    // person's "no" is what overrules it.
    if let (Some(key), None, Some(true)) = (
        &eval.review_key,
        &eval.person,
        eval.graded.as_ref().map(|g| g.by_rule),
    ) {
        let listed = if recorder.judges_key(key) {
            String::new()
        } else {
            "\n  (the recording does not list the decision yet: it was recorded before such decisions were kept; run the test once without CI and accept the recording with `cargo insta review` first)".to_owned()
        };
        return format!(
            "\nthe found rule decided it correct with no call (no judge read it); if that is wrong, overrule it (kept in the recording, replayed in CI):\n  {}{listed}",
            command(key, "no")
        );
    }
    if expect == Expect::Caught {
        // An answer decided by one yes/no answer: the command that says the
        // judge was wrong, per turn that passed.
        let lines: Vec<String> = graded_parts(eval, |t| t.passed)
            .into_iter()
            .filter(|(_, e)| e.person.is_none() && e.claims.is_empty())
            .filter_map(|(turn, e)| {
                let word = failing_word(what)?;
                e.review_key
                    .as_ref()
                    .map(|key| format!("{}{turn}", command(key, word)))
            })
            .collect();
        if !lines.is_empty() {
            return format!(
                "\nif the judge was wrong to let it pass, give your own verdict (kept in the recording, replayed in CI):\n  {}",
                lines.join("\n  ")
            );
        }
        return format!(
            "\nif the judge was wrong to let it pass, give your own verdict on its claims (kept in the recording, replayed in CI): cargo ragaliq review {} --all",
            file.display()
        );
    }
    let mut lines: Vec<String> = Vec::new();
    for (turn, eval) in graded_parts(eval, |t| !t.passed && t.awaiting.is_none()) {
        for line in overrule_lines(eval, what, &command) {
            lines.push(format!("{line}{turn}"));
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    let shown = lines.len().min(5);
    let mut out = format!(
        "\nif the judge is wrong, overrule it with your own verdict (kept in the recording, replayed in CI; `cargo ragaliq review` walks them all):\n  {}",
        lines[..shown].join("\n  ")
    );
    if lines.len() > shown {
        out.push_str(&format!("\n  … and {} more", lines.len() - shown));
    }
    out
}

/// The evaluations whose items a hint lists, each with what names its
/// turn: the evaluation itself, or a conversation's turns that `pick`
/// chooses.
fn graded_parts(
    eval: &Evaluation,
    pick: impl Fn(&Evaluation) -> bool,
) -> Vec<(String, &Evaluation)> {
    if eval.turns.is_empty() {
        return vec![(String::new(), eval)];
    }
    eval.turns
        .iter()
        .filter(|t| pick(t))
        .map(|t| {
            let turn = t.turn.map(|n| format!(" (turn {n})")).unwrap_or_default();
            (turn, t)
        })
        .collect()
}

/// The word a person gives to say the judge was wrong to fail an answer
/// decided by one yes/no answer: `yes`, or `no` for the conversation
/// checks whose question asks what goes wrong.
fn passing_word<'a>(what: &What<'_>) -> &'a str {
    match what {
        What::Metric(Metric::Consistency | Metric::Retention) => "no",
        What::Metric(_) => "yes",
        What::Criteria(c) if c.form() == crate::CriteriaForm::YesNo => "yes",
        What::Criteria(_) => "<1 to 5>",
        What::Custom(_) => "<its answer word>",
    }
}

/// The word a person gives to say an answer decided by one yes/no
/// answer should have failed: `no`, or `yes` for the conversation checks
/// whose question asks what goes wrong; `None` where no one word says it.
fn failing_word<'a>(what: &What<'_>) -> Option<&'a str> {
    match passing_word(what) {
        "yes" => Some("no"),
        "no" => Some("yes"),
        _ => None,
    }
}

fn overrule_lines(
    eval: &Evaluation,
    what: &What<'_>,
    command: &dyn Fn(&str, &str) -> String,
) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for (i, c) in eval.failed_claims() {
        if c.person.is_some() {
            continue;
        }
        if let Some(key) = &c.review_key {
            lines.push(format!(
                "{}   # [{i}] {:?}",
                command(key, "supported"),
                c.claim
            ));
        }
    }
    for p in eval
        .passages
        .iter()
        .filter(|p| !p.relevant && p.person.is_none())
    {
        if let Some(key) = &p.review_key {
            lines.push(format!("{}   # passage {}", command(key, "yes"), p.rank));
        }
    }
    if let Some(a) = &eval.answerable
        && !a.answerable
        && a.person.is_none()
        && let Some(key) = &a.review_key
    {
        lines.push(format!(
            "{}   # the passages answer the question",
            command(key, "yes")
        ));
    }
    if eval.person.is_none()
        && let Some(key) = &eval.review_key
    {
        lines.push(command(key, passing_word(what)));
    }
    lines
}

/// The commands that give a person's verdict on what an evaluation awaits:
/// the review walk (which shows the items awaiting a person first), then
/// one `--key` command per uncertain item (of every turn awaiting, for a
/// conversation).
pub(super) fn awaiting_hint(eval: &Evaluation, judge: &Judge, what: &What<'_>) -> String {
    let Some(recorder) = judge.recorder() else {
        return String::new();
    };
    if recorder.mode() == Mode::Live {
        return "\nno recording keeps a person's verdict in live mode: record the test, then review it".to_owned();
    }
    let file = relative(&recorder.location().snapshot);
    let command = |key: &str, verdict: &str| {
        format!(
            "cargo ragaliq review {} --key {key} --verdict {verdict}",
            file.display()
        )
    };
    let mut lines: Vec<String> = Vec::new();
    for (turn, eval) in graded_parts(eval, |t| t.awaiting.is_some()) {
        for line in awaiting_lines(eval, what, &command) {
            lines.push(format!("{line}{turn}"));
        }
    }
    let mut out = format!(
        "\ngive the verdict (kept in the recording, replayed in CI): cargo ragaliq review {}",
        file.display()
    );
    if !lines.is_empty() {
        let shown = lines.len().min(5);
        out.push_str(&format!(
            "\n  or item by item:\n  {}",
            lines[..shown].join("\n  ")
        ));
        if lines.len() > shown {
            out.push_str(&format!("\n  … and {} more", lines.len() - shown));
        }
    }
    out
}

fn awaiting_lines(
    eval: &Evaluation,
    what: &What<'_>,
    command: &dyn Fn(&str, &str) -> String,
) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for (i, c) in eval.claims.iter().enumerate() {
        if c.unsure.is_none() || c.person.is_some() {
            continue;
        }
        if let Some(key) = &c.review_key {
            lines.push(format!(
                "{}   # [{}] {:?}; or no_evidence, contradicted",
                command(key, "supported"),
                i + 1,
                c.claim
            ));
        }
    }
    for p in eval.passages.iter().filter(|p| p.unsure.is_some()) {
        if let Some(key) = &p.review_key {
            lines.push(format!(
                "{}   # passage {}; or no",
                command(key, "yes"),
                p.rank
            ));
        }
    }
    if let Some(a) = &eval.answerable
        && a.unsure.is_some()
        && a.person.is_none()
        && let Some(key) = &a.review_key
    {
        lines.push(format!(
            "{}   # the passages answer the question; or no",
            command(key, "yes")
        ));
    }
    if eval.unsure.is_some()
        && let Some(key) = &eval.review_key
    {
        let verdict = match passing_word(what) {
            "yes" => "yes   # or no",
            "no" => "no   # or yes",
            other => other,
        };
        lines.push(command(key, verdict));
    }
    lines
}
