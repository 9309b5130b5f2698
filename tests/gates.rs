//! Gates on a whole run, as a suite checks them at the end of `cargo test`:
//! fifty labelled cases, three of which the retriever fails. A pass-rate
//! gate lets a metric fail trials up to its share, and the run fails with a
//! message naming the gate, the figure and the cases when it is not met.
//!
//! 47 of 50 is 94%: a 94% gate passes, and 95% and 96% gates fail naming
//! the three (issue 43 asked for "95% passes, 96% fails" with three of
//! fifty failing, which is 94%: the figures below are the arithmetic's).

use libtest_mimic::Arguments;
use ragaliq::config::Gates;
use ragaliq::harness::gates::GateStatus;
use ragaliq::harness::report::{Outcome, Report};
use ragaliq::retrieval::recall_at;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const FAILING: [usize; 3] = [7, 19, 33];

fn quiet() -> Arguments {
    Arguments {
        quiet: true,
        test_threads: Some(2),
        ..Arguments::default()
    }
}

/// Fifty cases; those of `failing` retrieve their relevant document fourth.
fn fifty(tag: &str, failing: &[usize]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ragaliq-gates-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = String::new();
    for i in 1..=50 {
        let retrieved = if failing.contains(&i) {
            format!("[faq-1, faq-2, faq-3, doc-{i}]")
        } else {
            format!("[doc-{i}, faq-1, faq-2]")
        };
        text.push_str(&format!(
            "- id: case-{i:02}\n  query: Question {i}?\n  retrieved_ids: {retrieved}\n  relevant_ids: [doc-{i}]\n"
        ));
    }
    std::fs::write(dir.join("cases.yaml"), text).unwrap();
    dir
}

fn run(dir: &Path, gates: Option<Gates>, reports: Option<&Path>) -> ragaliq::harness::SuiteOutcome {
    let mut suite = ragaliq::suite(dir)
        .metrics([])
        .retrieval([recall_at(3).threshold(0.5)])
        .with_args(quiet());
    if let Some(g) = gates {
        suite = suite.gates(g);
    }
    if let Some(r) = reports {
        suite = suite.report_dir(r);
    }
    suite.run_for_outcome().unwrap()
}

#[test]
fn without_a_gate_every_failing_trial_fails_the_run() {
    let dir = fifty("none", &FAILING);
    let outcome = run(&dir, None, None);
    assert_eq!(outcome.conclusion.num_failed, 3);
    assert_eq!(outcome.exit_code(), ExitCode::from(101));
    assert!(outcome.gates.is_empty());
}

#[test]
fn a_pass_rate_gate_allows_failures_up_to_its_share() {
    let dir = fifty("rate", &FAILING);
    let passes = run(&dir, Some(Gates::new().pass_rate(0.94)), None);
    assert_eq!(passes.conclusion.num_failed, 0, "the three are allowed");
    assert_eq!(passes.exit_code(), ExitCode::SUCCESS);
    assert_eq!(passes.gates[0].status, GateStatus::Passed);
    let allowed: Vec<&str> = passes
        .report
        .results
        .iter()
        .filter(|r| r.gated)
        .map(|r| r.case.as_str())
        .collect();
    assert_eq!(allowed, ["case-07", "case-19", "case-33"]);
    assert!(
        passes
            .report
            .results
            .iter()
            .filter(|r| r.gated)
            .all(|r| r.outcome == Outcome::Failed && !r.passed()),
        "reported as failed, allowed"
    );

    for share in [0.95, 0.96] {
        let fails = run(&dir, Some(Gates::new().pass_rate(share)), None);
        assert_eq!(fails.exit_code(), ExitCode::from(101), "{share}");
        let gate = &fails.gates[0];
        assert_eq!(gate.status, GateStatus::Failed);
        assert_eq!(gate.cases, ["case-07", "case-19", "case-33"]);
        assert_eq!(
            gate.message,
            format!(
                "gate pass_rate of recall@3 FAILED: 47 of 50 trials passed (94.0%), below the {}% required (at most 2 of 50 may fail); not passed: case-07 (0.00 < 0.50), case-19 (0.00 < 0.50), case-33 (0.00 < 0.50)",
                share * 100.0
            )
        );
    }

    // Two failing of fifty is 96%: the 95% and 96% gates pass, 97% fails.
    let dir = fifty("rate-two", &[7, 19]);
    for (share, status) in [
        (0.95, GateStatus::Passed),
        (0.96, GateStatus::Passed),
        (0.97, GateStatus::Failed),
    ] {
        let outcome = run(&dir, Some(Gates::new().pass_rate(share)), None);
        assert_eq!(outcome.gates[0].status, status, "{share}");
    }
}

#[test]
fn gates_reach_every_report() {
    let dir = fifty("reports", &FAILING);
    let reports = dir.with_extension("reports");
    let gates = Gates::new().pass_rate(0.95).min_mean_of("recall@3", 0.9);
    let outcome = run(&dir, Some(gates), Some(&reports));
    assert_eq!(outcome.exit_code(), ExitCode::from(101));
    let json = Report::read(&reports.join("report.json")).unwrap();
    assert_eq!(json.gates, outcome.gates);
    assert_eq!(json.gates.len(), 2);
    assert_eq!(json.gates[1].status, GateStatus::Passed, "mean 0.94 >= 0.9");
    assert_eq!(json.summary.gated, 3);
    let md = std::fs::read_to_string(reports.join("summary.md")).unwrap();
    assert!(
        md.contains("### Gates\n\n- ❌ gate pass_rate of recall@3 FAILED: 47 of 50 trials passed"),
        "{md}"
    );
    assert!(
        md.contains(
            "| case-07 | recall@3 | 0.00 | 0.50 | ❌ failed (allowed by a pass-rate gate) |"
        ),
        "{md}"
    );
    let xml = std::fs::read_to_string(reports.join("junit.xml")).unwrap();
    let junit = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    assert_eq!(
        (junit.tests, junit.failures),
        (52, 1),
        "50 trials and 2 gates; the failed gate is the one failure"
    );
    let gate = junit.test_suites[0]
        .test_cases
        .iter()
        .find(|t| t.name.as_str() == "gates::pass_rate:recall@3")
        .unwrap();
    assert!(matches!(
        gate.status,
        quick_junit::TestCaseStatus::NonSuccess { .. }
    ));
    let page = std::fs::read_to_string(reports.join("report.html")).unwrap();
    assert!(
        page.contains("Gates: 1 passed, 1 failed"),
        "the page says it"
    );
    assert!(page.contains("failed, allowed by a gate"));
    assert!(
        outcome
            .report
            .console_table()
            .contains("✗ gate = below its threshold, allowed by a pass-rate gate")
    );
}

#[test]
fn a_filtered_run_checks_no_gate() {
    let dir = fifty("filtered", &FAILING);
    let args = Arguments {
        filter: Some("case-0".into()),
        ..quiet()
    };
    let outcome = ragaliq::suite(&dir)
        .metrics([])
        .retrieval([recall_at(3).threshold(0.5)])
        .gates(Gates::new().pass_rate(0.99))
        .with_args(args)
        .run_for_outcome()
        .unwrap();
    assert!(outcome.gates.is_empty(), "nine trials are no whole run");
    assert_eq!(
        outcome.conclusion.num_failed, 0,
        "case-07's failure is still the gate's to judge"
    );
}

/// A judge whose P(yes) is the figure written in the response (`[0.5]`),
/// given as a server gives it: the word, and its token probabilities.
struct ScoreInResponse;

impl ragaliq::judge::Transport for ScoreInResponse {
    fn provider(&self) -> &str {
        "canned"
    }
    fn complete<'a>(
        &'a self,
        req: &'a ragaliq::judge::JudgeRequest,
    ) -> ragaliq::judge::BoxFuture<'a, Result<ragaliq::judge::JudgeResponse, ragaliq::TransportError>>
    {
        let text: String = req.messages.iter().map(|m| m.content.as_str()).collect();
        use ragaliq::judge::{JudgeResponse, TokenLogprob, TopLogprob};
        let p: f64 = ["0.95", "0.9", "0.5", "0.2"]
            .into_iter()
            .find(|s| text.contains(&format!("[{s}]")))
            .unwrap_or("0.9")
            .parse()
            .unwrap();
        let word = if p >= 0.5 { "Yes" } else { "No" };
        let top = vec![
            TopLogprob {
                token: "Yes".into(),
                logprob: p.ln(),
            },
            TopLogprob {
                token: "No".into(),
                logprob: (1.0 - p).ln(),
            },
        ];
        let reply = JudgeResponse::text(word).with_logprobs(vec![TokenLogprob {
            token: word.into(),
            logprob: if p >= 0.5 { p.ln() } else { (1.0 - p).ln() },
            top,
        }]);
        Box::pin(async move { Ok(reply) })
    }
}

/// Trials awaiting a person's verdict count neither passed nor failed, and
/// the gate says how many: 7 passed, 1 failed and 2 awaiting is 7 of 8
/// decided (87.5%), which a 85% gate passes; counted as failures they would
/// make 7 of 10.
#[test]
fn trials_awaiting_a_person_count_neither_way() {
    use ragaliq::{Band, Kind, Metric, Mode};
    let dir = std::env::temp_dir().join(format!("ragaliq-gates-awaiting-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let scores = [
        "0.9", "0.9", "0.9", "0.5", "0.9", "0.9", "0.2", "0.9", "0.5", "0.9",
    ];
    let mut text = String::new();
    for (i, s) in scores.iter().enumerate() {
        text.push_str(&format!(
            "- id: case-{i:02}\n  query: Question {i}?\n  response: 'Answer {i} [{s}]'\n"
        ));
    }
    std::fs::write(dir.join("cases.yaml"), text).unwrap();
    // Relevance read from 0.4 up to its threshold, 0.7, is uncertain.
    let judge = ragaliq::Judge::builder(ScoreInResponse)
        .with_band(Kind::Answers, Band::between(0.4, 0.6).unwrap())
        .build()
        .unwrap();
    let outcome = ragaliq::suite(&dir)
        .metrics([Metric::Relevance])
        .judge(judge)
        .mode(Mode::Live)
        .gates(Gates::new().pass_rate(0.85))
        .with_args(quiet())
        .run_for_outcome()
        .unwrap();
    let outcomes: Vec<Outcome> = outcome.report.results.iter().map(|r| r.outcome).collect();
    assert_eq!(
        outcomes.iter().filter(|o| **o == Outcome::Awaiting).count(),
        2,
        "{outcomes:?}"
    );
    let gate = &outcome.gates[0];
    assert_eq!(gate.status, GateStatus::Passed, "{}", gate.message);
    assert_eq!(gate.neither, 2);
    assert_eq!(
        gate.message,
        "gate pass_rate of relevance passed: 7 of 8 trials passed (87.5%), at least 85% required; not passed, allowed: case-06 (0.20 < 0.70); 2 trials counted neither way (2 awaiting a person's verdict)"
    );
    // The awaiting trials are no low scores: never allowed, and they fail
    // their tests meanwhile (`uncertain = "fail"`, the default).
    assert_eq!(outcome.conclusion.num_failed, 2);
}

/// Issue 49: three trials awaiting a person, read at P 0.95 inside the
/// band, passed "gate min_mean … the mean is 0.9500" and the run exited 0
/// under `uncertain = "pass"`. Awaiting counts neither way for a mean too:
/// the gate has nothing decided to take the mean of, says so and fails the
/// run, and report.json's mean leaves them out, counted.
#[test]
fn a_mean_over_trials_awaiting_a_person_fails_and_says_so() {
    use ragaliq::{Band, Kind, Metric, Mode, Uncertain};
    let dir = std::env::temp_dir().join(format!("ragaliq-gates-mean-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = String::new();
    for i in 0..3 {
        text.push_str(&format!(
            "- id: case-{i}\n  query: Question {i}?\n  response: 'Answer {i} [0.95]'\n"
        ));
    }
    std::fs::write(dir.join("cases.yaml"), text).unwrap();
    let reports = dir.join("reports");
    let judge = ragaliq::Judge::builder(ScoreInResponse)
        .with_band(Kind::Answers, Band::between(0.4, 0.99).unwrap())
        .with_uncertain(Uncertain::Pass)
        .build()
        .unwrap();
    let outcome = ragaliq::suite(&dir)
        .metrics([Metric::Relevance])
        .judge(judge)
        .mode(Mode::Live)
        .gates(Gates::new().min_mean(0.9))
        .report_dir(&reports)
        .with_args(quiet())
        .run_for_outcome()
        .unwrap();
    assert!(
        outcome
            .report
            .results
            .iter()
            .all(|r| r.outcome == Outcome::Awaiting && r.score == Some(0.95)),
        "{:?}",
        outcome.report.results
    );
    assert_eq!(outcome.conclusion.num_failed, 0, "they pass meanwhile");
    let gate = &outcome.gates[0];
    assert_eq!(gate.status, GateStatus::Failed, "{}", gate.message);
    assert_eq!(
        gate.message,
        "gate min_mean of relevance FAILED: no trial of it has a decided score to take the mean of (3 trials awaiting a person's verdict left out)"
    );
    assert_ne!(outcome.exit_code(), ExitCode::SUCCESS);
    let json = Report::read(&reports.join("report.json")).unwrap();
    let m = json.summary.metrics["relevance"];
    assert_eq!((m.count, m.mean, m.awaiting), (0, None, 3));
    let junit = std::fs::read_to_string(reports.join("junit.xml")).unwrap();
    assert!(
        junit.contains("gates::min_mean:relevance")
            && junit.contains("no trial of it has a decided score"),
        "{junit}"
    );
    let md = std::fs::read_to_string(reports.join("summary.md")).unwrap();
    assert!(md.contains("0.00–1.00"), "{md}");
    assert!(md.contains("3 awaiting a person"), "{md}");
}
