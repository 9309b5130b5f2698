//! The run's page, `report.html`: what a reviewer looks at to see why a
//! case failed without opening a recording.
//!
//! From the top: the summary (trials by outcome, calls, tokens, cost,
//! changes against the baseline); each metric's score distribution; a case
//! × metric grid coloured by outcome, with filters; then every case: its
//! query, its response with each claim marked by its verdict, its passages
//! with each claim's evidence span marked and linked to the claim, and per
//! metric the claims with verdict, evidence, confidence and sample
//! agreement. Ungrounded evidence and judge errors are shown as what they
//! are, never as low scores.

use super::gate_result::GateStatus;
use super::report::{CaseText, Outcome, Report, TrialResult};
use crate::core::{ClaimVerdict, MatchedBy, Metric, Retrieved};
use crate::evidence::{self, Grounding};
use crate::html::{self, Mark, escape, id};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// How a trial reads: its class, symbol and words. The symbol and words
/// say what the colour says.
fn status(t: &TrialResult) -> (&'static str, &'static str, &'static str) {
    match t.outcome {
        _ if t.pending_review => ("pending", "◌", "awaiting review"),
        Outcome::Passed | Outcome::Failed if t.gated => {
            ("o-failed", "✗", "failed, allowed by a gate")
        }
        Outcome::Awaiting if t.passed() => {
            ("o-awaiting", "⚖", "awaiting a person (passes meanwhile)")
        }
        Outcome::Awaiting => ("o-awaiting", "⚖", "awaiting a person"),
        Outcome::Passed if t.passed() => ("o-passed", "✓", "passed"),
        Outcome::Failed if t.passed() => ("o-passed", "✓", "caught"),
        Outcome::Passed => ("o-failed", "✗", "not caught"),
        Outcome::Failed => ("o-failed", "✗", "failed"),
        Outcome::Undecided => ("o-undecided", "?", "undecided"),
        Outcome::JudgeError => ("o-judge_error", "!", "judge error"),
        Outcome::ConfigError => ("o-config_error", "⚙", "configuration error"),
        Outcome::RecordingError => ("o-recording_error", "!", "recording error"),
        Outcome::Queued => ("o-queued", "…", "queued for the batch"),
    }
}

/// The filter key of a trial: one per class of [`status`].
fn key(t: &TrialResult) -> &'static str {
    match status(t).0 {
        "o-passed" => "passed",
        "o-failed" => "failed",
        "o-undecided" => "undecided",
        "o-awaiting" => "awaiting",
        "pending" => "pending",
        "o-queued" => "queued",
        _ => "error",
    }
}

const KEYS: [(&str, &str); 7] = [
    ("passed", "✓ passed"),
    ("failed", "✗ failed"),
    ("awaiting", "⚖ awaiting a person"),
    ("undecided", "? undecided"),
    ("error", "! errors"),
    ("pending", "◌ awaiting review"),
    ("queued", "… queued"),
];

pub(super) fn page(r: &Report) -> String {
    let s = &r.summary;
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>ragaliq: {} of {} trials passed</h1>\n<p class=\"muted\">suite <code>{}</code> · judge {} <code>{}</code> · mode {} · run <code>{}</code> · {} process{}</p>\n",
        s.passed,
        s.trials,
        escape(&r.suite),
        escape(&r.judge.provider),
        escape(&r.judge.model),
        escape(r.mode.name()),
        escape(&r.run),
        s.processes,
        if s.processes == 1 { "" } else { "es" }
    );
    summary(&mut body, r);
    distributions(&mut body, r);
    let by_case = by_case(r);
    grid(&mut body, r, &by_case);
    body.push_str("<h2 id=\"cases\">Cases</h2>\n");
    for (case, trials) in &by_case {
        case_section(&mut body, case, trials, r.cases.get(*case));
    }
    html::page(
        &format!("ragaliq: {} of {} passed — {}", s.passed, s.trials, r.suite),
        &body,
        true,
    )
}

fn summary(body: &mut String, r: &Report) {
    let s = &r.summary;
    body.push_str("<h2 id=\"summary\">Summary</h2>\n<div class=\"cards\">\n");
    let card = |body: &mut String, class: &str, n: String, what: &str| {
        let _ = writeln!(
            body,
            "<div class=\"card {class}\"><b>{}</b>{}</div>",
            escape(&n),
            escape(what)
        );
    };
    card(body, "", s.trials.to_string(), "trials");
    card(body, "o-passed", s.passed.to_string(), "✓ passed");
    card(body, "o-failed", s.failed.to_string(), "✗ failed");
    if s.gated > 0 {
        card(
            body,
            "o-failed",
            s.gated.to_string(),
            "✗ of them allowed by a pass-rate gate",
        );
    }
    if s.awaiting > 0 {
        card(
            body,
            "o-awaiting",
            s.awaiting.to_string(),
            "⚖ awaiting a person",
        );
    }
    if s.by_person > 0 {
        card(
            body,
            "",
            s.by_person.to_string(),
            "decided with a person's verdict",
        );
    }
    if s.undecided > 0 {
        card(body, "o-undecided", s.undecided.to_string(), "? undecided");
    }
    card(
        body,
        "o-judge_error",
        s.judge_errors.to_string(),
        "! judge errors",
    );
    if s.config_errors > 0 {
        card(
            body,
            "o-config_error",
            s.config_errors.to_string(),
            "⚙ configuration errors",
        );
    }
    if s.recording_errors > 0 {
        card(
            body,
            "o-recording_error",
            s.recording_errors.to_string(),
            "! recording errors",
        );
    }
    if s.queued > 0 {
        card(
            body,
            "o-queued",
            s.queued.to_string(),
            "… queued for the batch",
        );
    }
    if s.pending_review > 0 {
        card(
            body,
            "pending",
            s.pending_review.to_string(),
            "◌ awaiting review",
        );
    }
    card(body, "", s.usage.calls.to_string(), "judge calls");
    card(body, "", s.usage.total_tokens().to_string(), "tokens");
    card(body, "", s.usage.replayed.to_string(), "answers replayed");
    if s.usage.reviewed > 0 {
        card(
            body,
            "",
            s.usage.reviewed.to_string(),
            // Summed over trials: one claim's verdict read by faithfulness
            // and by hallucination counts twice, as each trial used it.
            "verdicts from a person (per trial)",
        );
    }
    if let Some(app) = &s.pipeline {
        card(body, "", app.calls.to_string(), "pipeline calls");
        card(body, "", app.total_tokens().to_string(), "pipeline tokens");
        card(
            body,
            "",
            app.replayed.to_string(),
            "pipeline calls replayed",
        );
        card(
            body,
            "",
            s.pipeline_cost_usd
                .map_or_else(|| "unknown".to_owned(), |c| format!("${c:.4}")),
            "pipeline's estimated cost",
        );
    }
    card(
        body,
        "",
        s.estimated_cost_usd
            .map_or_else(|| "unknown".to_owned(), |c| format!("${c:.4}")),
        &match s.budget_usd {
            Some(b) => format!("estimated cost (budget ${b:.2})"),
            None => "estimated cost".to_owned(),
        },
    );
    body.push_str("</div>\n");
    if s.skipped_calls > 0 {
        let _ = writeln!(
            body,
            "<p class=\"error\">The budget was spent: {} live calls were skipped, and their trials failed.</p>",
            s.skipped_calls
        );
    }
    if !r.gates.is_empty() {
        let line = r.gates_line().unwrap_or_default();
        let _ = writeln!(
            body,
            "<h3 id=\"gates\">G{}</h3>\n<ul class=\"gates\">",
            escape(line.strip_prefix('g').unwrap_or(&line))
        );
        for g in &r.gates {
            let (class, mark) = match g.status {
                GateStatus::Passed => ("o-passed", "✓"),
                GateStatus::Failed => ("o-failed", "✗"),
                GateStatus::NotChecked => ("muted", "–"),
            };
            let _ = writeln!(
                body,
                "<li class=\"{class}\">{mark} {}</li>",
                escape(&g.message)
            );
        }
        body.push_str("</ul>\n");
    }
    if !r.changes.is_empty() {
        let regressions = r.changes.iter().filter(|c| c.regression).count();
        let _ = writeln!(
            body,
            "<h3>Against the baseline: {} score{} changed, {regressions} regression{}</h3>\n<table><tr><th>case</th><th>metric</th><th class=\"num\">baseline</th><th class=\"num\">now</th><th class=\"num\">change</th></tr>",
            r.changes.len(),
            if r.changes.len() == 1 { "" } else { "s" },
            if regressions == 1 { "" } else { "s" }
        );
        for c in &r.changes {
            let (class, word) = match (c.regression, c.delta < 0.0) {
                (true, _) => ("o-failed", "▼ regression"),
                (false, true) => ("", "▼ lower"),
                (false, false) => ("o-passed", "▲ higher"),
            };
            let _ = writeln!(
                body,
                "<tr><td><a href=\"#{}\">{}</a></td><td>{}</td><td class=\"num\">{:.2}</td><td class=\"num\">{:.2}</td><td class=\"num {class}\">{:+.2} {word}</td></tr>",
                id(&[&c.case]),
                escape(&c.case),
                c.metric.name(),
                c.baseline,
                c.current,
                c.delta
            );
        }
        body.push_str("</table>\n");
    }
}

/// Each metric's scores as a histogram against its usual threshold.
fn distributions(body: &mut String, r: &Report) {
    let mut by_metric: BTreeMap<(Metric, String), Vec<&TrialResult>> = BTreeMap::new();
    for t in &r.results {
        by_metric.entry((t.metric, t.label())).or_default().push(t);
    }
    if by_metric
        .values()
        .all(|ts| ts.iter().all(|t| t.score.is_none()))
    {
        return;
    }
    body.push_str("<h2 id=\"scores\">Scores</h2>\n<div class=\"cards\">\n");
    for ((metric, label), trials) in &by_metric {
        // A trial awaiting a person has an interval, not a score: left out
        // of the mean and the chart, and counted beside them.
        let scores: Vec<f64> = trials
            .iter()
            .filter(|t| t.awaiting.is_none())
            .filter_map(|t| t.score)
            .collect();
        let awaiting = trials.iter().filter(|t| t.awaiting.is_some()).count();
        let beside = match awaiting {
            0 => String::new(),
            n => format!("; {n} awaiting a person, not counted"),
        };
        if scores.is_empty() {
            let _ = writeln!(
                body,
                "<div class=\"card\"><strong>{}</strong> <span class=\"muted\">no decided score{beside}</span></div>",
                escape(label)
            );
            continue;
        }
        // The threshold most trials of the metric use (cases may set their own).
        let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
        for t in trials {
            *counts.entry(t.threshold.to_bits()).or_default() += 1;
        }
        let threshold = counts
            .iter()
            .max_by_key(|(_, n)| **n)
            .map_or(metric.default_threshold(), |(bits, _)| {
                f64::from_bits(*bits)
            });
        let mean = scores.iter().sum::<f64>() / scores.len() as f64;
        let _ = writeln!(
            body,
            "<div class=\"card\"><strong>{}</strong> <span class=\"muted\">mean {mean:.2} of {}{beside}</span><br>{}</div>",
            escape(label),
            scores.len(),
            html::histogram(&scores, threshold, label)
        );
    }
    body.push_str("</div>\n");
}

/// The trials of each case, cases in order, metrics in order.
fn by_case(r: &Report) -> BTreeMap<&str, Vec<&TrialResult>> {
    let mut out: BTreeMap<&str, Vec<&TrialResult>> = BTreeMap::new();
    for t in &r.results {
        out.entry(t.case.as_str()).or_default().push(t);
    }
    for trials in out.values_mut() {
        trials.sort_by_key(|t| (t.metric, t.label()));
    }
    out
}

fn grid(body: &mut String, r: &Report, by_case: &BTreeMap<&str, Vec<&TrialResult>>) {
    // One column per trial name: a suite's criteria and retrieval metrics
    // are columns of their own, in the order of their metric.
    let mut metrics: Vec<(Metric, String)> =
        r.results.iter().map(|t| (t.metric, t.label())).collect();
    metrics.sort();
    metrics.dedup();
    body.push_str("<h2 id=\"grid\">Cases × metrics</h2>\n<div class=\"filters\">");
    for (k, label) in KEYS {
        if r.results.iter().any(|t| key(t) == k) {
            let _ = write!(
                body,
                "<label><input type=\"checkbox\" data-outcome=\"{k}\" checked> {label}</label>"
            );
        }
    }
    body.push_str("<label>find <input type=\"search\" id=\"filter-text\" placeholder=\"case or query\"></label></div>\n");
    body.push_str("<table class=\"grid\"><tr><th>case</th>");
    for (_, label) in &metrics {
        let _ = write!(body, "<th>{}</th>", escape(label));
    }
    body.push_str("</tr>\n");
    for (case, trials) in by_case {
        let query = r.cases.get(*case).map_or("", |c| c.query.as_str());
        let keys: Vec<&str> = trials.iter().map(|t| key(t)).collect();
        let _ = write!(
            body,
            "<tr data-filter=\"{} {}\" data-outcomes=\"{}\"><th><a href=\"#{}\">{}</a></th>",
            escape(case),
            escape(query),
            keys.join(" "),
            id(&[case]),
            escape(case)
        );
        for (m, label) in &metrics {
            match trials
                .iter()
                .find(|t| t.metric == *m && t.label() == *label)
            {
                Some(t) => {
                    let (class, symbol, word) = status(t);
                    // A trial awaiting a person has no one score: the
                    // interval its unsure items leave, each way.
                    let score = match (t.score, &t.awaiting) {
                        (Some(_), Some(a)) => format!("{:.2}–{:.2} ", a.low, a.high),
                        (Some(s), None) => format!("{s:.2} "),
                        (None, _) => String::new(),
                    };
                    let _ = write!(
                        body,
                        "<td class=\"cell {class}\"><a href=\"#{}\" title=\"{} {}: {word}\">{symbol} {score}{word}</a></td>",
                        id(&[case, label]),
                        escape(case),
                        escape(label)
                    );
                }
                None => body.push_str("<td class=\"muted\">—</td>"),
            }
        }
        body.push_str("</tr>\n");
    }
    body.push_str("</table>\n<p class=\"muted\">✓ passed · ✓ caught: a bad answer scored below its threshold, as its case expects · ✗ failed · ⚖ awaiting a person: the judge is unsure, and a person's verdict (<code>cargo ragaliq review</code>) decides · ? undecided: the judge listed no claim in a response that states something · ! judge or recording error, ⚙ configuration error: no score, not a low one · ◌ the recording awaits review · … queued for a batch (<code>cargo ragaliq record --batch</code>): no score yet</p>\n");
}

/// Where `c`'s evidence is: its passage (0-based) and byte span there.
fn evidence_span(c: &ClaimVerdict, passages: &[String]) -> Option<(usize, std::ops::Range<usize>)> {
    if c.evidence.trim().is_empty() || c.ungrounded {
        return None;
    }
    let (offset, search) = match c.evidence_in {
        Some(p) if p >= 1 && p <= passages.len() => (p - 1, &passages[p - 1..p]),
        _ => (0, passages),
    };
    match evidence::locate(&c.evidence, search) {
        Grounding::Found(f) => Some((offset + f.passage, f.span)),
        _ => None,
    }
}

/// The verdict's class and words, with undecided and ungrounded said so.
fn verdict_words(c: &ClaimVerdict) -> (String, String) {
    if let (Some(u), None) = (&c.unsure, &c.person) {
        return ("v-uncertain".into(), format!("⚖ awaiting a person: {u}"));
    }
    if c.ungrounded {
        return (
            "v-ungrounded".into(),
            format!(
                "? undecided: said {} but its evidence is in no passage",
                c.verdict.label()
            ),
        );
    }
    let symbol = match c.verdict.label() {
        "supported" => "✓",
        "contradicted" => "✗",
        "partially_supported" => "◐",
        _ => "○",
    };
    let mut words = format!("{symbol} {}", c.verdict.label());
    if c.undecided {
        words = format!("? undecided (most said {})", c.verdict.label());
    }
    if let Some(p) = &c.person {
        words = format!("{symbol} {p}");
    }
    (format!("v-{}", c.verdict.label()), words)
}

/// The trial whose claims mark the response and passages: faithfulness's,
/// else hallucination's (the same claims); context recall's claims are the
/// expected facts, marked apart.
fn marking_trials<'a>(trials: &[&'a TrialResult]) -> Vec<(&'a TrialResult, &'static str)> {
    let mut out = Vec::new();
    if let Some(t) = trials
        .iter()
        .find(|t| t.metric == Metric::Faithfulness && !t.claims.is_empty())
        .or_else(|| {
            trials
                .iter()
                .find(|t| t.metric == Metric::Hallucination && !t.claims.is_empty())
        })
    {
        out.push((*t, ""));
    }
    if let Some(t) = trials
        .iter()
        .find(|t| t.metric == Metric::ContextRecall && !t.claims.is_empty())
    {
        out.push((*t, "R"));
    }
    out
}

fn case_section(body: &mut String, case: &str, trials: &[&TrialResult], text: Option<&CaseText>) {
    // Open unless every trial simply passed: failures, undecided and
    // errors, and bad answers that were caught, are what a reviewer reads.
    let all_passed = trials
        .iter()
        .all(|t| t.passed() && t.outcome == Outcome::Passed);
    let keys: Vec<&str> = trials.iter().map(|t| key(t)).collect();
    let first = trials[0];
    let _ = write!(
        body,
        "<details class=\"case\" id=\"{}\" data-filter=\"{} {}\" data-outcomes=\"{}\"{}><summary>{} <span class=\"muted mono\">{}:{}</span> ",
        id(&[case]),
        escape(case),
        escape(text.map_or("", |t| t.query.as_str())),
        keys.join(" "),
        if all_passed { "" } else { " open" },
        escape(case),
        escape(&first.file),
        first.line
    );
    for t in trials {
        let (class, symbol, word) = status(t);
        let _ = write!(
            body,
            "<span class=\"{class}\" title=\"{word}\"> {symbol} {}</span> ",
            escape(&t.label())
        );
    }
    body.push_str("</summary>\n");
    let Some(text) = text else {
        body.push_str("<p class=\"muted\">This report does not carry the case's texts (written by an older ragaliq).</p>\n");
        for t in trials {
            trial_section(body, case, t, &[]);
        }
        body.push_str("</details>\n");
        return;
    };
    if !text.turns.is_empty() {
        conversation_section(body, case, text);
        for t in trials {
            trial_section(body, case, t, &[]);
        }
        body.push_str("</details>\n");
        return;
    }
    let _ = writeln!(body, "<p><b>Query</b> {}</p>", escape(&text.query));
    // Claims marked in the response, evidence marked in the passages.
    let marking = marking_trials(trials);
    let mut response_marks = Vec::new();
    let mut passage_marks: Vec<Vec<Mark>> = vec![Vec::new(); text.passages.len()];
    for (t, prefix) in &marking {
        for (i, c) in t.claims.iter().enumerate() {
            let label = format!("{prefix}{}", i + 1);
            let href = id(&[case, t.metric.name(), &format!("c{}", i + 1)]);
            let (class, words) = verdict_words(c);
            let title = format!("{} claim {label}: {words}", t.metric.name());
            if prefix.is_empty()
                && let Some(response) = &text.response
                && let Grounding::Found(f) =
                    evidence::locate(&c.claim, std::slice::from_ref(response))
            {
                response_marks.push(Mark {
                    span: f.span,
                    class: class.clone(),
                    title: title.clone(),
                    refs: vec![(label.clone(), href.clone())],
                });
            }
            if let Some((p, span)) = evidence_span(c, &text.passages) {
                passage_marks[p].push(Mark {
                    span,
                    class,
                    title: format!("evidence for {title}"),
                    refs: vec![(label, href)],
                });
            }
        }
    }
    match &text.response {
        Some(response) => {
            let _ = writeln!(
                body,
                "<p><b>Response</b></p><div class=\"response\">{}</div>",
                html::marked(response, &response_marks)
            );
        }
        // A case measured only against its retrieval labels has no answer
        // to grade, and lacks none.
        None if trials.iter().all(|t| t.metric == Metric::Retrieval) => {}
        None => body.push_str("<p><b>Response</b> <span class=\"muted\">none given</span></p>\n"),
    }
    if !text.passages.is_empty() {
        let precision = trials.iter().find(|t| t.metric == Metric::ContextPrecision);
        // Passages a label found by text: the case's own relevant passages.
        let labelled = trials
            .iter()
            .filter_map(|t| t.retrieval.as_ref())
            .find(|r| r.matched_by == MatchedBy::Text);
        body.push_str("<p><b>Passages</b> <span class=\"muted\">(in rank order; marked: the judge's evidence, linked to its claim)</span></p><ol>\n");
        for (i, p) in text.passages.iter().enumerate() {
            let relevance = precision
                .and_then(|t| t.passages.iter().find(|v| v.rank == i + 1))
                .map(|v| {
                    let (class, words) = match (v.undecided, v.relevant) {
                        (true, _) if v.unsure.is_some() => ("o-awaiting", "⚖ awaiting a person"),
                        (true, _) => ("o-undecided", "? undecided"),
                        (false, true) => ("o-passed", "✓ relevant"),
                        (false, false) => ("o-failed", "✗ not relevant"),
                    };
                    format!(
                        " <span class=\"{class}\">{words}{}</span> <span class=\"muted\">{}</span>",
                        v.agreement.map(|a| format!(" ({a})")).unwrap_or_default(),
                        escape(&v.reason)
                    )
                })
                .unwrap_or_default();
            let labelled = labelled
                .and_then(|r| r.relevant.iter().position(|l| l.rank == Some(i + 1)))
                .map(|l| {
                    format!(
                        " <span class=\"o-passed\">✓ labelled relevant (R{})</span>",
                        l + 1
                    )
                })
                .unwrap_or_default();
            let _ = writeln!(
                body,
                "<li id=\"{}\"><div class=\"passage\">{}</div>{relevance}{labelled}</li>",
                id(&[case, &format!("p{}", i + 1)]),
                html::marked(p, &passage_marks[i])
            );
        }
        body.push_str("</ol>\n");
    }
    if let Some(expected) = &text.expected_answer {
        let _ = writeln!(body, "<p><b>Expected answer</b> {}</p>", escape(expected));
    }
    if !text.expected_facts.is_empty() {
        body.push_str("<p><b>Expected facts</b></p><ul>");
        for f in &text.expected_facts {
            let _ = write!(body, "<li>{}</li>", escape(f));
        }
        body.push_str("</ul>\n");
    }
    for t in trials {
        trial_section(body, case, t, &text.passages);
    }
    body.push_str("</details>\n");
}

/// A conversation's turns, each with its message, passages, answer and
/// reference, in order.
fn conversation_section(body: &mut String, case: &str, text: &CaseText) {
    let _ = writeln!(
        body,
        "<p><b>Conversation</b> <span class=\"muted\">({} turns; each graded with the turns before it)</span></p><ol class=\"turns\">",
        text.turns.len()
    );
    for (i, turn) in text.turns.iter().enumerate() {
        let _ = write!(
            body,
            "<li id=\"{}\"><p><b>User</b> {}</p>",
            id(&[case, &format!("t{}", i + 1)]),
            escape(&turn.query)
        );
        if !turn.passages.is_empty() {
            body.push_str("<details><summary class=\"muted\">passages retrieved</summary><ol>");
            for p in &turn.passages {
                let _ = write!(body, "<li><div class=\"passage\">{}</div></li>", escape(p));
            }
            body.push_str("</ol></details>");
        }
        match &turn.response {
            Some(r) => {
                let _ = write!(
                    body,
                    "<p><b>Assistant</b></p><div class=\"response\">{}</div>",
                    escape(r)
                );
            }
            None => body
                .push_str("<p><b>Assistant</b> <span class=\"muted\">no answer given</span></p>"),
        }
        if let Some(e) = &turn.expected_answer {
            let _ = write!(body, "<p class=\"muted\">expected: {}</p>", escape(e));
        }
        body.push_str("</li>\n");
    }
    body.push_str("</ol>\n");
}

/// A conversation's trial, turn by turn: outcome, score and reasoning,
/// the claims of a turn that did not pass, and the earlier turns its judge
/// was shown.
fn turns_table(body: &mut String, case: &str, t: &TrialResult) {
    body.push_str(
        "<table><tr><th>turn</th><th>outcome</th><th class=\"num\">score</th><th>why</th></tr>\n",
    );
    for turn in &t.turns {
        let (class, words) = match turn.outcome {
            Outcome::Passed => ("o-passed", "✓ passed"),
            Outcome::Failed => ("o-failed", "✗ failed"),
            Outcome::Awaiting => ("o-awaiting", "⚖ awaiting a person"),
            Outcome::Undecided => ("o-undecided", "? undecided"),
            _ => ("o-judge_error", "! error"),
        };
        let mut why = escape(&turn.reasoning);
        if turn.outcome != Outcome::Passed {
            for c in turn.claims.iter().filter(|c| c.failed || c.undecided) {
                let (vclass, vwords) = verdict_words(c);
                let _ = write!(
                    why,
                    "<br>“{}” <span class=\"{vclass}\">{}</span>",
                    escape(&c.claim),
                    escape(&vwords)
                );
            }
            if let Some(h) = turn.history.as_ref().filter(|h| !h.is_empty()) {
                why.push_str("<br><span class=\"muted\">the judge was shown before it:</span>");
                for said in &h.said {
                    let _ = write!(
                        why,
                        "<br><span class=\"muted\">turn {}</span> User: {} · Assistant: {}",
                        said.turn,
                        escape(&said.user),
                        escape(&said.assistant)
                    );
                }
            }
        }
        let _ = writeln!(
            body,
            "<tr><td class=\"num\"><a href=\"#{}\">{}</a></td><td class=\"{class}\">{words}</td><td class=\"num\">{:.2}</td><td>{why}</td></tr>",
            id(&[case, &format!("t{}", turn.turn)]),
            turn.turn,
            turn.score
        );
    }
    body.push_str("</table>\n");
}

fn trial_section(body: &mut String, case: &str, t: &TrialResult, passages: &[String]) {
    let (class, symbol, word) = status(t);
    let score = match (t.score, &t.awaiting) {
        (Some(_), Some(a)) => format!(
            "{:.2} to {:.2} counted each way, on both sides of the threshold {:.2}",
            a.low, a.high, t.threshold
        ),
        (Some(s), None) => format!(
            "{s:.2} {} threshold {:.2}",
            if s >= t.threshold { "≥" } else { "<" },
            t.threshold
        ),
        (None, _) => "no score".to_owned(),
    };
    let label = t.label();
    let _ = writeln!(
        body,
        "<h3 id=\"{}\">{} <span class=\"{class}\">{symbol} {word}</span> <span class=\"muted\">{score}{}</span></h3>",
        id(&[case, &label]),
        escape(&label),
        if t.expect_fail {
            " · the case expects a low score"
        } else {
            ""
        }
    );
    if let Some(error) = &t.error {
        let _ = writeln!(
            body,
            "<div class=\"error\">{} — not a low score: {}</div>",
            word,
            escape(error)
        );
    }
    if !t.reasoning.is_empty() {
        let _ = writeln!(body, "<p class=\"muted\">{}</p>", escape(&t.reasoning));
    }
    if t.awaiting.is_some() {
        let _ = writeln!(
            body,
            "<p class=\"o-awaiting\">The judge is unsure of what decides this trial: give your verdict with <code>cargo ragaliq review</code> (it shows the items awaiting a person first), and the recording keeps it.</p>"
        );
    }
    if !t.judges.is_empty() {
        let rows: Vec<String> = t
            .judges
            .iter()
            .map(|j| {
                format!(
                    "<code>{}</code> asked {} decided {} ({} calls, {} replayed)",
                    escape(&j.model),
                    j.asked,
                    j.decided,
                    j.usage.calls,
                    j.usage.replayed
                )
            })
            .collect();
        let _ = writeln!(
            body,
            "<p class=\"muted\">judges, in the order asked: {}</p>",
            rows.join(" · ")
        );
    }
    if let Some(spread) = &t.spread {
        let _ = writeln!(
            body,
            "<p class=\"muted\">{}: min {:.2}, median {:.2}, max {:.2}; {} of {} samples on the other side of the threshold</p>",
            if spread.samples == 1 {
                "1 sample".to_owned()
            } else {
                format!("{} samples", spread.samples)
            },
            spread.min,
            spread.median,
            spread.max,
            spread.flips,
            spread.samples
        );
    }
    if let Some(r) = &t.retrieval {
        retrieval_section(body, r);
    }
    if !t.turns.is_empty() {
        turns_table(body, case, t);
    }
    if let Some(c) = &t.counts {
        let _ = writeln!(
            body,
            "<p class=\"counts\">claims: {} supported, {} partially supported, {} no evidence, {} contradicted, {} undecided; {} dropped</p>",
            c.supported,
            c.partially_supported,
            c.no_evidence,
            c.contradicted,
            c.undecided,
            c.dropped
        );
    }
    if !t.claims.is_empty() {
        body.push_str("<table><tr><th>#</th><th>claim</th><th>verdict</th><th>evidence</th><th class=\"num\">P(supported) or confidence</th><th>samples</th></tr>\n");
        for (i, c) in t.claims.iter().enumerate() {
            let (vclass, words) = verdict_words(c);
            let evidence = if c.evidence.trim().is_empty() {
                "<span class=\"muted\">—</span>".to_owned()
            } else if c.ungrounded {
                format!(
                    "<span class=\"v-ungrounded\">in no passage:</span> “{}”",
                    escape(&c.evidence)
                )
            } else {
                let located = if c.located {
                    "<span class=\"muted\">closest sentence, found by ragaliq:</span> "
                } else {
                    ""
                };
                match evidence_span(c, passages) {
                    Some((p, _)) => format!(
                        "{located}<a href=\"#{}\">P{}</a> “{}”",
                        id(&[case, &format!("p{}", p + 1)]),
                        p + 1,
                        escape(&c.evidence)
                    ),
                    None => format!("{located}“{}”", escape(&c.evidence)),
                }
            };
            let _ = writeln!(
                body,
                "<tr id=\"{}\"><td class=\"num\">{}{}</td><td>{}</td><td class=\"{vclass}\">{}</td><td>{evidence}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                id(&[case, t.metric.name(), &format!("c{}", i + 1)]),
                i + 1,
                if c.failed { " ✗" } else { "" },
                escape(&c.claim),
                escape(&words),
                c.probability
                    .or(c.confidence)
                    .map_or_else(String::new, |x| format!("{x:.2}")),
                c.agreement
                    .map_or_else(String::new, |a| format!("{a} agree"))
            );
        }
        body.push_str("</table>\n");
    }
}

/// A retrieval trial: each relevant label with the rank it came at
/// (missed ones first marked), then the top of the list.
fn retrieval_section(body: &mut String, r: &Retrieved) {
    let noun = match r.matched_by {
        MatchedBy::Ids => "ID",
        MatchedBy::Text => "passage",
    };
    let graded = r.relevant.iter().any(|l| l.grade != 1.0);
    let _ = writeln!(
        body,
        "<table><tr><th>relevant {noun}</th>{}<th class=\"num\">rank</th><th>within {}</th></tr>",
        if graded {
            "<th class=\"num\">grade</th>"
        } else {
            ""
        },
        escape(&r.scope())
    );
    for (i, l) in r.relevant.iter().enumerate() {
        let (class, words) = match l.rank {
            Some(rank) if r.within(rank) => ("o-passed", "✓ found".to_owned()),
            Some(_) => ("o-failed", "✗ missed: below the cutoff".to_owned()),
            None => ("o-failed", "✗ missed: not retrieved".to_owned()),
        };
        let name = match r.matched_by {
            MatchedBy::Ids => format!("<code>{}</code>", escape(&l.id)),
            MatchedBy::Text => format!("R{} “{}”", i + 1, escape(&l.id)),
        };
        let _ = writeln!(
            body,
            "<tr><td>{name}</td>{}<td class=\"num\">{}</td><td class=\"{class}\">{words}</td></tr>",
            if graded {
                format!("<td class=\"num\">{}</td>", l.grade)
            } else {
                String::new()
            },
            l.rank.map_or_else(|| "—".to_owned(), |n| n.to_string())
        );
    }
    body.push_str("</table>\n");
    if r.top.is_empty() {
        body.push_str("<p class=\"muted\">Nothing was retrieved.</p>\n");
        return;
    }
    let _ = write!(
        body,
        "<p class=\"muted\">{} of {} retrieved, in rank order:</p><ol class=\"ranked\">",
        if r.top.len() < r.listed {
            format!("The top {}", r.top.len())
        } else {
            "All".to_owned()
        },
        r.listed
    );
    for p in &r.top {
        let mark = match (p.repeat_of, p.grade > 0.0) {
            (Some(first), _) => {
                format!(" <span class=\"muted\">repeats rank {first}: earns nothing</span>")
            }
            (None, true) if graded => format!(
                " <span class=\"o-passed\">✓ relevant, grade {}</span>",
                p.grade
            ),
            (None, true) => " <span class=\"o-passed\">✓ relevant</span>".to_owned(),
            (None, false) => String::new(),
        };
        let _ = write!(body, "<li><code>{}</code>{mark}</li>", escape(&p.id));
    }
    body.push_str("</ol>\n");
}

// The page is rendered here, from the report's data: the report module
// knows nothing of HTML, so the two never import each other.
impl Report {
    /// The run as one self-contained HTML page (`report.html`): the
    /// summary, a case × metric grid, each case with its claims marked in
    /// the response and their evidence in the passages, and each metric's
    /// score distribution. See [`crate::harness`](mod@crate::harness)'s docs for a picture.
    #[must_use]
    pub fn html(&self) -> String {
        page(self)
    }
}
