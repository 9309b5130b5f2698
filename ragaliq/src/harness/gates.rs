//! Gates on a whole run ([`Gates`]): each gate checked over a [`Report`],
//! with a message that names the gate, the figure and the cases that moved
//! it. The suite checks them at the end of a run; `cargo ragaliq report`
//! over a run's shards.
//!
//! ```
//! use ragaliq::config::Gates;
//! use ragaliq::harness::gates::{self, GateStatus};
//! use ragaliq::harness::report::Report;
//!
//! // A report of four trials, one below its threshold (as a suite writes it).
//! let results: Vec<serde_json::Value> = ["a", "b", "c", "d"].iter().map(|case| serde_json::json!({
//!     "case": case, "metric": "retrieval", "name": "recall@5", "threshold": 0.5,
//!     "score": if *case == "d" { 0.0 } else { 1.0 },
//!     "outcome": if *case == "d" { "failed" } else { "passed" },
//!     "usage": {"calls": 0, "input_tokens": 0, "output_tokens": 0},
//!     "file": "cases.yaml", "line": 1,
//! })).collect();
//! let report: Report = serde_json::from_value(serde_json::json!({
//!     "ragaliq_report": 3, "suite": "cases", "judge": {"provider": "p", "model": "m"},
//!     "mode": "replay", "results": results,
//!     "summary": {"trials": 4, "passed": 3, "failed": 1, "pass_rate": 0.75, "metrics": {},
//!                 "usage": {"calls": 0, "input_tokens": 0, "output_tokens": 0},
//!                 "estimated_cost_usd": null, "budget_usd": null, "skipped_calls": 0},
//! })).unwrap();
//! let gates = Gates::new().pass_rate(0.8);
//! let checked = gates::check(&report, &gates, None);
//! assert_eq!(checked[0].status, GateStatus::Failed);
//! assert_eq!(
//!     checked[0].message,
//!     "gate pass_rate of recall@5 FAILED: 3 of 4 trials passed (75.0%), below the 80% required (at most 0 of 4 may fail); not passed: d (0.00 < 0.50)"
//! );
//! assert!(gates::allowed(&report.results[3], &gates), "d's low score is the gate's to judge");
//! ```

pub use super::gate_result::{GateKind, GateResult, GateStatus};
use super::report::{Outcome, Report, TrialResult};
use crate::core::Gates;
use std::collections::BTreeMap;

/// How a trial counts for a pass-rate gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Count {
    Passed,
    NotPassed,
    /// No verdict yet: counted neither way, and said.
    Neither(&'static str),
}

/// Every outcome is counted here, and a new one must be: a trial awaiting
/// a person's verdict counts neither way, as one whose recording awaits
/// review or whose question is queued does.
fn count(r: &TrialResult) -> Count {
    if r.pending_review {
        return Count::Neither("awaiting review");
    }
    match r.outcome {
        // The judge was unsure: no verdict until a person gives one,
        // whether the trial passes or fails meanwhile.
        Outcome::Awaiting => Count::Neither("awaiting a person's verdict"),
        Outcome::Passed | Outcome::Failed if r.passed() => Count::Passed,
        Outcome::Passed | Outcome::Failed => Count::NotPassed,
        // A broken judge or setup never lifts a run: not passed.
        Outcome::Undecided
        | Outcome::JudgeError
        | Outcome::ConfigError
        | Outcome::RecordingError => Count::NotPassed,
        Outcome::Queued => Count::Neither("queued for a batch"),
    }
}

/// Whether `gates` allow this trial's failure: a score on the wrong side
/// of its threshold (never an error, an undecided judge or a recording
/// that awaits review), on a metric a pass-rate gate holds. Its trial
/// passes, reported as failed and allowed, and the gate decides the run.
#[must_use]
pub fn allowed(r: &TrialResult, gates: &Gates) -> bool {
    count(r) == Count::NotPassed
        && matches!(r.outcome, Outcome::Passed | Outcome::Failed)
        && gates.pass_rate.for_metric(&r.label()).is_some()
}

/// What a trial's line in a gate's message says: its case, and its score
/// against its threshold or its outcome.
fn describe(r: &TrialResult) -> String {
    match (r.outcome, r.score) {
        (Outcome::Passed | Outcome::Failed, Some(s)) if r.expect_fail => format!(
            "{} ({s:.2} >= {:.2}, a bad answer not caught)",
            r.case, r.threshold
        ),
        (Outcome::Passed | Outcome::Failed, Some(s)) => {
            format!("{} ({s:.2} < {:.2})", r.case, r.threshold)
        }
        (outcome, _) => format!("{} ({})", r.case, outcome_words(outcome)),
    }
}

fn outcome_words(o: Outcome) -> &'static str {
    match o {
        Outcome::Awaiting => "awaiting a person",
        Outcome::Passed => "passed",
        Outcome::Failed => "failed",
        Outcome::Undecided => "undecided",
        Outcome::JudgeError => "judge error",
        Outcome::ConfigError => "configuration error",
        Outcome::RecordingError => "recording error",
        Outcome::Queued => "queued",
    }
}

/// A share as a percentage, without trailing zeros: `95%`, `95.5%`.
fn percent(x: f64) -> String {
    let p = format!("{:.2}", x * 100.0);
    let p = p.trim_end_matches('0').trim_end_matches('.');
    format!("{p}%")
}

/// `case-1, case-2 … and 3 more` (at most `shown`).
fn listed(items: &[String], shown: usize) -> String {
    let mut out = items[..items.len().min(shown)].join(", ");
    if items.len() > shown {
        out.push_str(&format!(" … and {} more", items.len() - shown));
    }
    out
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Each trial name of `report`, with its trials, in name order.
fn by_metric(report: &Report) -> BTreeMap<String, Vec<&TrialResult>> {
    let mut out: BTreeMap<String, Vec<&TrialResult>> = BTreeMap::new();
    for r in &report.results {
        out.entry(r.label()).or_default().push(r);
    }
    out
}

/// Checks `gates` over `report` (against `baseline` for `max_drop`): one
/// result per gate and metric it holds, in gate order, then metric order.
/// A gate naming a metric no trial of the run measured fails, naming the
/// ones measured (a misspelled name must not pass unseen).
#[must_use]
pub fn check(report: &Report, gates: &Gates, baseline: Option<&Report>) -> Vec<GateResult> {
    let metrics = by_metric(report);
    let mut out = Vec::new();
    for (kind, rule) in [
        (GateKind::PassRate, &gates.pass_rate),
        (GateKind::MinMean, &gates.min_mean),
        (GateKind::MaxDrop, &gates.max_drop),
    ] {
        for (metric, required) in rule.named() {
            if !metrics.contains_key(metric) {
                let measured: Vec<&str> = metrics.keys().map(String::as_str).collect();
                out.push(GateResult {
                    gate: kind,
                    metric: metric.to_owned(),
                    required,
                    figure: None,
                    status: GateStatus::Failed,
                    cases: Vec::new(),
                    neither: 0,
                    message: format!(
                        "gate {} of {metric} FAILED: no trial of this run measured {metric} (measured: {})",
                        kind.name(),
                        if measured.is_empty() {
                            "nothing".to_owned()
                        } else {
                            measured.join(", ")
                        }
                    ),
                });
            }
        }
        for (metric, trials) in &metrics {
            let Some(required) = rule.for_metric(metric) else {
                continue;
            };
            out.push(match kind {
                GateKind::PassRate => pass_rate(metric, trials, required),
                GateKind::MinMean => min_mean(metric, trials, required),
                GateKind::MaxDrop => max_drop(metric, trials, required, baseline),
            });
        }
    }
    out
}

fn pass_rate(metric: &str, trials: &[&TrialResult], required: f64) -> GateResult {
    let mut passed = 0;
    let mut not_passed: Vec<&TrialResult> = Vec::new();
    let mut neither: BTreeMap<&str, usize> = BTreeMap::new();
    for r in trials {
        match count(r) {
            Count::Passed => passed += 1,
            Count::NotPassed => not_passed.push(r),
            Count::Neither(why) => *neither.entry(why).or_default() += 1,
        }
    }
    let decided = passed + not_passed.len();
    let neither_count: usize = neither.values().sum();
    let neither_words = if neither_count == 0 {
        String::new()
    } else {
        let parts: Vec<String> = neither
            .iter()
            .map(|(why, n)| format!("{n} {why}"))
            .collect();
        format!(
            "; {} counted neither way ({})",
            plural(neither_count, "trial", "trials"),
            parts.join(", ")
        )
    };
    let cases: Vec<String> = not_passed.iter().map(|r| describe(r)).collect();
    let name = format!("gate pass_rate of {metric}");
    if decided == 0 {
        return GateResult {
            gate: GateKind::PassRate,
            metric: metric.to_owned(),
            required,
            figure: None,
            status: GateStatus::Failed,
            cases,
            neither: neither_count,
            message: format!("{name} FAILED: no trial of it has a verdict{neither_words}"),
        };
    }
    let rate = passed as f64 / decided as f64;
    // Counted in trials, not in rounded shares: 48 of 50 is 96% exactly.
    let reached = passed as f64 >= required * decided as f64 - 1e-9;
    let allowed = ((1.0 - required) * decided as f64 + 1e-9).floor() as usize;
    let figure = format!("{passed} of {decided} trials passed ({:.1}%)", rate * 100.0);
    let message = if reached {
        // Only a low score is allowed; an error or an undecided judge
        // fails its own trial whatever the gate (see `allowed`).
        let (low, broken): (Vec<&TrialResult>, Vec<&TrialResult>) = not_passed
            .iter()
            .partition(|r| matches!(r.outcome, Outcome::Passed | Outcome::Failed));
        let said = |rs: &[&TrialResult]| -> String {
            listed(&rs.iter().map(|r| describe(r)).collect::<Vec<_>>(), 20)
        };
        let mut not = String::new();
        if !low.is_empty() {
            not.push_str(&format!("; not passed, allowed: {}", said(&low)));
        }
        if !broken.is_empty() {
            not.push_str(&format!(
                "; not passed and never allowed (each fails its own trial): {}",
                said(&broken)
            ));
        }
        format!(
            "{name} passed: {figure}, at least {} required{not}{neither_words}",
            percent(required),
        )
    } else {
        format!(
            "{name} FAILED: {figure}, below the {} required (at most {allowed} of {decided} may fail); not passed: {}{neither_words}",
            percent(required),
            listed(&cases, 20)
        )
    };
    GateResult {
        gate: GateKind::PassRate,
        metric: metric.to_owned(),
        required,
        figure: Some(rate),
        status: if reached {
            GateStatus::Passed
        } else {
            GateStatus::Failed
        },
        cases: not_passed.iter().map(|r| r.case.clone()).collect(),
        neither: neither_count,
        message,
    }
}

/// What a mean leaves out of `trials`, said: `3 trials awaiting a
/// person's verdict, 1 without a score`; empty when nothing.
fn left_out(awaiting: usize, unscored: usize) -> String {
    let mut parts = Vec::new();
    if awaiting > 0 {
        parts.push(format!(
            "{} awaiting a person's verdict",
            plural(awaiting, "trial", "trials")
        ));
    }
    if unscored > 0 {
        parts.push(format!(
            "{} without a score",
            plural(unscored, "trial", "trials")
        ));
    }
    parts.join(", ")
}

/// The decided scores of `trials` by case, and how many trials awaiting a
/// person and without a score were left out.
fn decided<'r>(trials: &[&'r TrialResult]) -> (Vec<(&'r str, f64)>, usize, usize) {
    let mut scored = Vec::new();
    let (mut awaiting, mut unscored) = (0, 0);
    for r in trials {
        match r.decided_score() {
            Some(s) => scored.push((r.case.as_str(), s)),
            None if r.outcome == Outcome::Awaiting => awaiting += 1,
            None => unscored += 1,
        }
    }
    (scored, awaiting, unscored)
}

fn min_mean(metric: &str, trials: &[&TrialResult], required: f64) -> GateResult {
    // A trial awaiting a person has an interval, not a score: left out of
    // the mean (as a pass rate counts it neither way), and said.
    let (mut scored, awaiting, unscored) = decided(trials);
    let name = format!("gate min_mean of {metric}");
    let left = left_out(awaiting, unscored);
    let left_words = if left.is_empty() {
        String::new()
    } else {
        format!(" ({left} left out)")
    };
    if scored.is_empty() {
        return GateResult {
            gate: GateKind::MinMean,
            metric: metric.to_owned(),
            required,
            figure: None,
            status: GateStatus::Failed,
            cases: Vec::new(),
            neither: awaiting + unscored,
            message: format!(
                "{name} FAILED: no trial of it has a decided score to take the mean of{left_words}"
            ),
        };
    }
    let mean = scored.iter().map(|(_, s)| s).sum::<f64>() / scored.len() as f64;
    let reached = mean >= required - 1e-12;
    // Lowest first; by case among equals, so the message is stable.
    scored.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(b.0)));
    let lowest: Vec<String> = scored
        .iter()
        .take(5)
        .map(|(case, s)| format!("{case} {s:.2}"))
        .collect();
    let figure = format!(
        "the mean is {mean:.4} over {}{left_words}",
        plural(scored.len(), "trial", "trials")
    );
    let message = if reached {
        format!("{name} passed: {figure}, at least {required} required")
    } else {
        format!(
            "{name} FAILED: {figure}, below the {required} required; lowest: {}",
            lowest.join(", ")
        )
    };
    GateResult {
        gate: GateKind::MinMean,
        metric: metric.to_owned(),
        required,
        figure: Some(mean),
        status: if reached {
            GateStatus::Passed
        } else {
            GateStatus::Failed
        },
        cases: scored
            .iter()
            .take(5)
            .map(|(c, _)| (*c).to_owned())
            .collect(),
        neither: awaiting + unscored,
        message,
    }
}

fn max_drop(
    metric: &str,
    trials: &[&TrialResult],
    allowed: f64,
    baseline: Option<&Report>,
) -> GateResult {
    let name = format!("gate max_drop of {metric}");
    let not_checked = |why: String| GateResult {
        gate: GateKind::MaxDrop,
        metric: metric.to_owned(),
        required: allowed,
        figure: None,
        status: GateStatus::NotChecked,
        cases: Vec::new(),
        neither: 0,
        message: format!("{name} not checked: {why}"),
    };
    let Some(baseline) = baseline else {
        return not_checked("no baseline run was given (a suite's `.baseline(…)`, RAGALIQ_BASELINE, `gates.baseline`, or `cargo ragaliq report --baseline`)".into());
    };
    // Decided scores only, on both sides: a trial awaiting a person has an
    // interval, not a score, and is left out (and said).
    let then_trials: Vec<&TrialResult> = baseline
        .results
        .iter()
        .filter(|r| r.label() == metric)
        .collect();
    let (then_scored, then_awaiting, _) = decided(&then_trials);
    let before: BTreeMap<&str, f64> = then_scored.into_iter().collect();
    let (now_scored, awaiting, unscored) = decided(trials);
    if now_scored.is_empty() {
        let left = left_out(awaiting, unscored);
        return GateResult {
            gate: GateKind::MaxDrop,
            metric: metric.to_owned(),
            required: allowed,
            figure: None,
            status: GateStatus::Failed,
            cases: Vec::new(),
            neither: awaiting + unscored,
            message: format!(
                "{name} FAILED: no trial of it has a decided score to compare with the baseline{}",
                if left.is_empty() {
                    String::new()
                } else {
                    format!(" ({left} left out)")
                }
            ),
        };
    }
    // Paired by case: a case added or removed since moves no mean.
    let mut pairs: Vec<(&str, f64, f64)> = now_scored
        .iter()
        .filter_map(|(case, now)| Some((*case, *before.get(case)?, *now)))
        .collect();
    let left_here = left_out(awaiting, 0);
    let left_words = match (awaiting, then_awaiting) {
        (0, 0) => String::new(),
        (_, 0) => format!("; {left_here} left out"),
        (0, n) => format!(
            "; {} of the baseline awaiting a person's verdict left out",
            plural(n, "trial", "trials")
        ),
        (_, n) => {
            format!("; {left_here} left out, and {n} of the baseline awaiting a person's verdict")
        }
    };
    if pairs.is_empty() {
        return not_checked(format!(
            "the baseline run has no decided score of {metric} for a case this run decided{left_words}"
        ));
    }
    let n = pairs.len() as f64;
    let then = pairs.iter().map(|p| p.1).sum::<f64>() / n;
    let now = pairs.iter().map(|p| p.2).sum::<f64>() / n;
    let drop = then - now;
    let reached = drop <= allowed + 1e-9;
    pairs.sort_by(|a, b| (a.2 - a.1).total_cmp(&(b.2 - b.1)).then(a.0.cmp(b.0)));
    let fell: Vec<String> = pairs
        .iter()
        .filter(|p| p.2 < p.1)
        .map(|(case, then, now)| format!("{case} {then:.2} → {now:.2} ({:+.2})", now - then))
        .collect();
    let moved = if drop >= 0.0 {
        format!("the mean fell {drop:.4}")
    } else {
        format!("the mean rose {:.4}", -drop)
    };
    let figure = format!(
        "{moved} against the baseline ({then:.4} → {now:.4} over the {} both runs scored{left_words})",
        plural(pairs.len(), "case", "cases")
    );
    let message = if reached {
        format!("{name} passed: {figure}, at most {allowed} allowed")
    } else {
        format!(
            "{name} FAILED: {figure}, more than the {allowed} allowed; fell most: {}",
            listed(&fell, 10)
        )
    };
    GateResult {
        gate: GateKind::MaxDrop,
        metric: metric.to_owned(),
        required: allowed,
        figure: Some(drop),
        status: if reached {
            GateStatus::Passed
        } else {
            GateStatus::Failed
        },
        cases: pairs
            .iter()
            .filter(|p| p.2 < p.1)
            .map(|p| p.0.to_owned())
            .collect(),
        neither: awaiting + unscored,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{Metric, Mode, Usage};
    use crate::harness::report::{JudgeInfo, Spending};

    fn trial(case: &str, score: f64, threshold: f64) -> TrialResult {
        serde_json::from_value(serde_json::json!({
            "case": case, "metric": "retrieval", "name": "recall@3", "score": score,
            "threshold": threshold,
            "outcome": if score >= threshold { "passed" } else { "failed" },
            "usage": Usage::default(), "file": "cases.yaml", "line": 1
        }))
        .unwrap()
    }

    fn report(results: Vec<TrialResult>) -> Report {
        Report::new(
            "s",
            JudgeInfo {
                provider: "p".into(),
                model: "m".into(),
            },
            Mode::Replay,
            "run",
            results,
            &[Spending::default()],
        )
    }

    /// Fifty trials, those of `failing` below their threshold.
    fn fifty(failing: &[usize]) -> Report {
        report(
            (1..=50)
                .map(|i| {
                    trial(
                        &format!("case-{i:02}"),
                        if failing.contains(&i) { 0.0 } else { 1.0 },
                        0.5,
                    )
                })
                .collect(),
        )
    }

    #[test]
    fn pass_rate_counts_trials_exactly() {
        let three = fifty(&[7, 19, 33]);
        let at = |share: f64, r: &Report| check(r, &Gates::new().pass_rate(share), None).remove(0);
        assert_eq!(
            at(0.94, &three).status,
            GateStatus::Passed,
            "47 of 50 is 94%"
        );
        let failed = at(0.95, &three);
        assert_eq!(
            failed.message,
            "gate pass_rate of recall@3 FAILED: 47 of 50 trials passed (94.0%), below the 95% required (at most 2 of 50 may fail); not passed: case-07 (0.00 < 0.50), case-19 (0.00 < 0.50), case-33 (0.00 < 0.50)"
        );
        assert_eq!(failed.cases, ["case-07", "case-19", "case-33"]);
        assert_eq!(at(0.96, &three).status, GateStatus::Failed);
        let two = fifty(&[7, 19]);
        assert_eq!(
            at(0.96, &two).status,
            GateStatus::Passed,
            "48 of 50 is 96% exactly"
        );
        assert_eq!(at(0.97, &two).status, GateStatus::Failed);
        assert_eq!(
            at(0.95, &two).message,
            "gate pass_rate of recall@3 passed: 48 of 50 trials passed (96.0%), at least 95% required; not passed, allowed: case-07 (0.00 < 0.50), case-19 (0.00 < 0.50)"
        );
    }

    #[test]
    fn trials_with_no_verdict_yet_count_neither_way_and_are_said() {
        let mut r = fifty(&[7]);
        r.results[1].pending_review = true;
        r.results[2].outcome = Outcome::Queued;
        r.results[2].score = None;
        let g = check(&r, &Gates::new().pass_rate(0.98), None).remove(0);
        assert_eq!(g.neither, 2);
        assert_eq!(g.figure, Some(47.0 / 48.0));
        assert!(
            g.message.ends_with(
                "; 2 trials counted neither way (1 awaiting review, 1 queued for a batch)"
            ),
            "{}",
            g.message
        );
        // Errors are never a pass, and never allowed.
        r.results[3].outcome = Outcome::JudgeError;
        r.results[3].score = None;
        let gates = Gates::new().pass_rate(0.5);
        assert!(!allowed(&r.results[3], &gates));
        assert!(allowed(&r.results[6], &gates), "case-07's low score is");
        assert!(
            !allowed(&r.results[1], &gates),
            "awaiting review is not a low score"
        );
        assert!(
            !allowed(&r.results[6], &Gates::new().min_mean(0.5)),
            "only a pass-rate gate allows"
        );
    }

    #[test]
    fn min_mean_names_the_lowest_cases() {
        let r = fifty(&[7, 19, 33]);
        let g = check(&r, &Gates::new().min_mean_of("recall@3", 0.95), None).remove(0);
        assert_eq!(
            g.message,
            "gate min_mean of recall@3 FAILED: the mean is 0.9400 over 50 trials, below the 0.95 required; lowest: case-07 0.00, case-19 0.00, case-33 0.00, case-01 1.00, case-02 1.00"
        );
    }

    #[test]
    fn max_drop_pairs_cases_with_the_baseline() {
        let before = fifty(&[]);
        // Five cases fall by a half: the mean falls 0.05.
        let mut after = fifty(&[]);
        for i in [3, 9, 12, 40, 41] {
            after.results[i - 1].score = Some(0.5);
        }
        // A case new since the baseline moves nothing.
        after.results.push(trial("case-51", 0.0, 0.5));
        let at = |drop: f64| check(&after, &Gates::new().max_drop(drop), Some(&before)).remove(0);
        let caught = at(0.04);
        assert_eq!(caught.status, GateStatus::Failed);
        assert_eq!(
            caught.message,
            "gate max_drop of recall@3 FAILED: the mean fell 0.0500 against the baseline (1.0000 → 0.9500 over the 50 cases both runs scored), more than the 0.04 allowed; fell most: case-03 1.00 → 0.50 (-0.50), case-09 1.00 → 0.50 (-0.50), case-12 1.00 → 0.50 (-0.50), case-40 1.00 → 0.50 (-0.50), case-41 1.00 → 0.50 (-0.50)"
        );
        assert_eq!(
            at(0.05).status,
            GateStatus::Passed,
            "at most 0.05: a fall of 0.05 is allowed"
        );
        let unchecked = check(&after, &Gates::new().max_drop(0.04), None).remove(0);
        assert_eq!(unchecked.status, GateStatus::NotChecked);
        assert!(unchecked.message.contains("no baseline run was given"));
    }

    /// A trial awaiting a person, read at `score` inside the band.
    fn awaiting(case: &str, score: f64) -> TrialResult {
        let mut t = trial(case, score, 0.5);
        t.outcome = Outcome::Awaiting;
        t.awaiting = Some(crate::core::Awaiting {
            low: 0.0,
            high: 1.0,
            items: 1,
            meanwhile: crate::core::Uncertain::Pass,
        });
        t
    }

    /// Issue 49: three trials awaiting a person, read at 0.95, made
    /// "gate min_mean passed: the mean is 0.9500".
    #[test]
    fn trials_awaiting_a_person_are_left_out_of_means_and_said() {
        let three = report(vec![
            awaiting("a", 0.95),
            awaiting("b", 0.95),
            awaiting("c", 0.95),
        ]);
        let g = check(&three, &Gates::new().min_mean(0.9), None).remove(0);
        assert_eq!(g.status, GateStatus::Failed);
        assert_eq!(g.figure, None);
        assert_eq!(g.neither, 3);
        assert_eq!(
            g.message,
            "gate min_mean of recall@3 FAILED: no trial of it has a decided score to take the mean of (3 trials awaiting a person's verdict left out)"
        );
        let baseline = report(vec![trial("a", 1.0, 0.5), trial("b", 1.0, 0.5)]);
        let g = check(&three, &Gates::new().max_drop(0.1), Some(&baseline)).remove(0);
        assert_eq!(g.status, GateStatus::Failed, "{}", g.message);
        assert_eq!(
            g.message,
            "gate max_drop of recall@3 FAILED: no trial of it has a decided score to compare with the baseline (3 trials awaiting a person's verdict left out)"
        );
        // Beside decided trials: the mean is theirs, and the awaiting one
        // is said.
        let mixed = report(vec![
            trial("a", 0.5, 0.5),
            trial("b", 0.7, 0.5),
            awaiting("c", 0.95),
        ]);
        let g = check(&mixed, &Gates::new().min_mean(0.7), None).remove(0);
        assert_eq!(g.status, GateStatus::Failed);
        assert_eq!(g.figure, Some(0.6));
        assert_eq!(
            g.message,
            "gate min_mean of recall@3 FAILED: the mean is 0.6000 over 2 trials (1 trial awaiting a person's verdict left out), below the 0.7 required; lowest: a 0.50, b 0.70"
        );
        assert_eq!(
            mixed.summary.metrics["recall@3"],
            crate::harness::report::MetricSummary {
                count: 2,
                mean: Some(0.6),
                awaiting: 1
            }
        );
        // A baseline's awaiting trial is no figure to fall from.
        let before = report(vec![
            trial("a", 0.5, 0.5),
            trial("b", 0.7, 0.5),
            trial("c", 0.2, 0.5),
        ]);
        let mut after = before.clone();
        after.results[2] = awaiting("c", 0.95);
        let g = check(&before, &Gates::new().max_drop(0.0), Some(&after)).remove(0);
        assert_eq!(g.status, GateStatus::Passed, "{}", g.message);
        assert_eq!(
            g.message,
            "gate max_drop of recall@3 passed: the mean fell 0.0000 against the baseline (0.6000 → 0.6000 over the 2 cases both runs scored; 1 trial of the baseline awaiting a person's verdict left out), at most 0 allowed"
        );
        let g = check(&after, &Gates::new().max_drop(0.0), Some(&before)).remove(0);
        assert!(
            g.message.contains(
                "over the 2 cases both runs scored; 1 trial awaiting a person's verdict left out)"
            ),
            "{}",
            g.message
        );
    }

    /// A gate line called a recording error "allowed", where errors are
    /// never allowed: each fails its own trial, and the line says so.
    #[test]
    fn an_error_is_never_said_to_be_allowed() {
        let mut r = fifty(&[7]);
        r.results[2].outcome = Outcome::RecordingError;
        r.results[2].score = None;
        let g = check(&r, &Gates::new().pass_rate(0.95), None).remove(0);
        assert_eq!(g.status, GateStatus::Passed);
        assert_eq!(
            g.message,
            "gate pass_rate of recall@3 passed: 48 of 50 trials passed (96.0%), at least 95% required; not passed, allowed: case-07 (0.00 < 0.50); not passed and never allowed (each fails its own trial): case-03 (recording error)"
        );
        assert!(!allowed(&r.results[2], &Gates::new().pass_rate(0.95)));
    }

    #[test]
    fn a_gate_on_a_metric_the_run_never_measured_fails() {
        let r = fifty(&[]);
        let g = check(&r, &Gates::new().pass_rate_of("recal@3", 0.9), None).remove(0);
        assert_eq!(
            g.message,
            "gate pass_rate of recal@3 FAILED: no trial of this run measured recal@3 (measured: recall@3)"
        );
        assert_eq!(Metric::Retrieval.name(), "retrieval");
    }
}
