//! Suites used as a user would: case-file errors that name the file and
//! line, trials and their outcomes, reports, baselines, tag filters and the
//! cost budget, against the scripted judge on 127.0.0.1.

use libtest_mimic::Arguments;
use ragaliq::config::Price;
use ragaliq::harness::cases::{load_dir, load_file};
use ragaliq::harness::report::{Outcome, Report};
use ragaliq::judge::{Judge, OpenAiTransport};
use ragaliq::{Metric, Mode};
use ragaliq_scripted::ScriptedJudge;
use std::path::{Path, PathBuf};

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ragaliq-suite-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn quiet() -> Arguments {
    Arguments {
        quiet: true,
        test_threads: Some(2),
        ..Arguments::default()
    }
}

fn judge(server: &ScriptedJudge) -> Judge {
    Judge::builder(OpenAiTransport::new(&server.base_url()))
        .with_model("scripted")
        // A rule, not a model: read at the thresholds (unmeasured, its
        // readings from 0.05 to 0.95 would await a person).
        .with_bands(ragaliq::Bands::OFF)
        .build()
        .unwrap()
}

const GOOD: &str = "- id: ok\n  query: What is the refund window?\n  context: [Refunds are accepted within 30 days of delivery.]\n  response: The refund window is 30 days from delivery.\n";

#[test]
fn broken_yaml_names_file_line_and_column() {
    let dir = temp_dir("yaml");
    let path = write(
        &dir,
        "bad.yaml",
        "- id: a\n  query: Q?\n  context: [unclosed\n",
    );
    let e = load_file(&path).unwrap_err();
    assert_eq!(e.file, path);
    assert!(e.line.is_some(), "{e}");
    assert!(
        e.to_string().starts_with(&format!("{}:", path.display())),
        "{e}"
    );
}

#[test]
fn missing_field_is_named_with_its_line() {
    let dir = temp_dir("missing");
    let path = write(
        &dir,
        "cases.yaml",
        &format!("{GOOD}- id: second\n  response: No query here.\n"),
    );
    let e = load_file(&path).unwrap_err();
    assert!(e.to_string().contains("missing field `query`"), "{e}");
    assert!(
        !e.message.starts_with("error:"),
        "the position is not repeated: {e}"
    );
    assert_eq!(
        e.line,
        Some(5),
        "the line where the faulty case starts: {e}"
    );
    let json = write(
        &dir,
        "cases.json",
        "[\n  {\"id\": \"a\", \"query\": \"Q\"},\n  {\"id\": \"b\"}\n]\n",
    );
    let e = load_file(&json).unwrap_err();
    assert!(e.to_string().contains("missing field `query`"), "{e}");
    assert_eq!(e.line, Some(3), "{e}");
    let jsonl = write(
        &dir,
        "cases.jsonl",
        "{\"id\": \"a\", \"query\": \"Q\"}\n{\"id\": \"b\", \"qeury\": \"Q\"}\n",
    );
    let e = load_file(&jsonl).unwrap_err();
    assert!(e.to_string().contains("unknown field `qeury`"), "{e}");
    assert_eq!(e.line, Some(2));
}

#[test]
fn duplicate_ids_across_files_name_both_places() {
    let dir = temp_dir("dup");
    write(&dir, "a.yaml", GOOD);
    write(
        &dir,
        "b.jsonl",
        "\n{\"id\": \"ok\", \"query\": \"Another?\"}\n",
    );
    let mut e = load_dir(&dir).unwrap_err();
    // Both places, in the order the files are read, named alike.
    e.relativize(&dir);
    assert_eq!(
        e.to_string(),
        "a.yaml:1 and b.jsonl:2: duplicate case id `ok`: ids name the tests and recordings, so they must be unique across the folder"
    );
}

#[test]
fn csv_bad_list_cell_names_line_and_column() {
    let dir = temp_dir("csv");
    let path = write(
        &dir,
        "cases.csv",
        "id,query,context\na,Q?,P1\nb,Q2?,\"[\"\"unclosed\"\n",
    );
    let e = load_file(&path).unwrap_err();
    assert_eq!(e.line, Some(3), "{e}");
    assert!(
        e.to_string().contains("bad list in column `context`"),
        "{e}"
    );
    let path = write(&dir, "cols.csv", "id,query,answer\na,Q?,x\n");
    assert!(
        load_file(&path)
            .unwrap_err()
            .to_string()
            .contains("unknown column `answer`")
    );
}

#[test]
fn bad_ids_and_thresholds_are_refused() {
    let dir = temp_dir("ids");
    let path = write(&dir, "a.yaml", "- id: has space\n  query: Q?\n");
    assert!(
        load_file(&path)
            .unwrap_err()
            .to_string()
            .contains("case id `has space`")
    );
    let path = write(
        &dir,
        "b.yaml",
        "- id: a\n  query: Q?\n  thresholds:\n    relevance: 1.5\n",
    );
    assert!(
        load_file(&path)
            .unwrap_err()
            .to_string()
            .contains("threshold of relevance is 1.5")
    );
    let path = write(&dir, "c.yaml", "- id: a\n  query: '  '\n");
    assert!(
        load_file(&path)
            .unwrap_err()
            .to_string()
            .contains("the query is empty")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trials_reports_and_a_missing_field_as_a_configuration_error() {
    let server = ScriptedJudge::start().await;
    let judge = judge(&server);
    let dir = temp_dir("run");
    write(&dir, "cases.yaml", GOOD);
    let reports = dir.join("reports");
    let outcome = tokio::task::spawn_blocking(move || {
        ragaliq::suite(&dir)
            .metrics([
                Metric::Faithfulness,
                Metric::Hallucination,
                Metric::ContextRecall,
            ])
            .judge(judge)
            .mode(Mode::Live)
            .report_dir(&reports)
            .with_args(quiet())
            .run_for_outcome()
            .unwrap()
    })
    .await
    .unwrap();
    let c = &outcome.conclusion;
    assert_eq!((c.num_passed, c.num_failed), (2, 1));
    assert_eq!(
        server.requests(),
        2,
        "faithfulness and hallucination share two calls"
    );
    let recall = outcome
        .report
        .results
        .iter()
        .find(|r| r.metric == Metric::ContextRecall)
        .unwrap();
    assert_eq!(recall.outcome, Outcome::ConfigError);
    assert_eq!(
        recall.error.as_deref(),
        Some("context_recall needs expected facts or an expected answer")
    );

    let dir = std::env::temp_dir().join(format!("ragaliq-suite-run-{}", std::process::id()));
    let json: Report = Report::read(&dir.join("reports/report.json")).unwrap();
    assert_eq!(json, outcome.report);
    assert_eq!(
        (
            json.summary.trials,
            json.summary.passed,
            json.summary.config_errors
        ),
        (3, 2, 1)
    );
    assert_eq!(json.summary.metrics["faithfulness"].mean, Some(1.0));
    assert_eq!(json.summary.usage.calls, 2);
    let xml = std::fs::read_to_string(dir.join("reports/junit.xml")).unwrap();
    let junit = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    assert_eq!((junit.tests, junit.failures, junit.errors), (3, 0, 1));
    assert_eq!(junit.test_suites[0].test_cases.len(), 3);
    let md = std::fs::read_to_string(dir.join("reports/summary.md")).unwrap();
    assert!(md.starts_with("## ragaliq: 2 of 3 trials passed"), "{md}");
    assert!(
        md.contains("| ok | context_recall | — | 0.70 | ⚠️ configuration error |"),
        "{md}"
    );
    assert!(outcome.report.console_table().contains("config ✗"));
    // The page beside them: the grid, the case with its texts, and the
    // claim's evidence marked in its passage and linked to the claim.
    assert_eq!(json.cases["ok"].query, "What is the refund window?");
    let page = std::fs::read_to_string(dir.join("reports/report.html")).unwrap();
    assert!(page.starts_with("<!doctype html>"), "{page}");
    assert!(page.contains("<title>ragaliq: 2 of 3 passed"), "{page}");
    assert!(
        page.contains("<a href=\"#ok--context_recall\" title=\"ok context_recall: configuration error\">⚙ configuration error</a>"),
        "{page}"
    );
    assert!(
        page.contains("<sup><a href=\"#ok--faithfulness--c1\">[1]</a></sup></mark>"),
        "the evidence is marked and linked to its claim: {page}"
    );
    assert!(
        page.contains("<a href=\"#ok--p1\">P1</a>"),
        "the claim names its passage: {page}"
    );
}

/// A case whose every text tries to inject markup (case ids cannot: they
/// are refused when loaded): the page shows it as text, and runs no script
/// but its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markup_in_a_case_stays_text_on_the_page() {
    let server = ScriptedJudge::start().await;
    let judge = judge(&server);
    let dir = temp_dir("markup");
    let attack = "<script>alert(1)</script><img src=x onerror=alert(2)>";
    write(
        &dir,
        "cases.yaml",
        &format!(
            "- id: markup\n  query: 'What is the refund window? {attack}'\n  context: ['Refunds are accepted within 30 days of delivery. {attack}']\n  response: 'The refund window is 30 days from delivery. {attack}'\n"
        ),
    );
    let reports = dir.join("reports");
    let page_path = reports.join("report.html");
    tokio::task::spawn_blocking(move || {
        ragaliq::suite(&dir)
            .metrics([Metric::Faithfulness, Metric::ContextPrecision])
            .judge(judge)
            .mode(Mode::Live)
            .report_dir(&reports)
            .with_args(quiet())
            .run_for_outcome()
            .unwrap()
    })
    .await
    .unwrap();
    let page = std::fs::read_to_string(page_path).unwrap();
    assert_eq!(
        page.matches("<script").count(),
        1,
        "only the page's own script"
    );
    for raw in ["<img", "<script>alert"] {
        assert!(!page.contains(raw), "{raw} reached the page as markup");
    }
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;"),
        "the text is shown as written"
    );
}

fn relevance_run(
    dir: PathBuf,
    judge: Judge,
    baseline: Option<PathBuf>,
) -> ragaliq::harness::SuiteOutcome {
    let mut suite = ragaliq::suite(dir)
        .metrics([Metric::Relevance])
        .judge(judge)
        .mode(Mode::Live)
        .with_args(quiet());
    if let Some(b) = baseline {
        suite = suite.baseline(b).fail_on_regression(0.05);
    }
    suite.run_for_outcome().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_regression_against_the_baseline_fails_the_run() {
    let server = ScriptedJudge::start().await;
    let dir = temp_dir("baseline");
    write(&dir, "cases.yaml", GOOD);
    // First run, against the scripted judge: relevance 0.99 (P(yes) that the
    // answer answers, at the scripted judge's ceiling). Its report is the baseline.
    let first = tokio::task::spawn_blocking({
        let (dir, judge) = (dir.clone(), judge(&server));
        move || relevance_run(dir, judge, None)
    })
    .await
    .unwrap();
    assert_eq!(
        (first.regressions, first.report.results[0].score),
        (0, Some(0.99))
    );
    // Beside the case folder, not in it: every .json file in it is a case file.
    let baseline = dir.with_extension("baseline.json");
    std::fs::write(&baseline, serde_json::to_string(&first.report).unwrap()).unwrap();
    // Second run, with a judge that scores lower.
    let lower = Judge::builder(Canned(r#"{"reasoning": "Partly.", "score": 0.5}"#))
        .with_strategy(ragaliq::Strategy::Json)
        .build()
        .unwrap();
    let second = tokio::task::spawn_blocking(move || relevance_run(dir, lower, Some(baseline)))
        .await
        .unwrap();
    assert!(
        second.conclusion.has_failed(),
        "0.5 is under the 0.7 threshold"
    );
    assert_eq!(second.regressions, 1);
    assert_eq!(second.exit_code(), std::process::ExitCode::from(101));
    let change = &second.report.changes[0];
    assert_eq!(
        (change.baseline, change.current, change.regression),
        (0.99, 0.5, true)
    );
    assert!(
        second
            .report
            .console_table()
            .contains("REGRESSED ok::relevance: 0.99 → 0.50 (-0.49)")
    );
}

struct Canned(&'static str);

impl ragaliq::judge::Transport for Canned {
    fn provider(&self) -> &str {
        "canned"
    }
    fn complete<'a>(
        &'a self,
        _: &'a ragaliq::judge::JudgeRequest,
    ) -> ragaliq::judge::BoxFuture<'a, Result<ragaliq::judge::JudgeResponse, ragaliq::TransportError>>
    {
        Box::pin(async move { Ok(ragaliq::judge::JudgeResponse::text(self.0)) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tags_select_cases() {
    let server = ScriptedJudge::start().await;
    let judge = judge(&server);
    let dir = temp_dir("tags");
    write(
        &dir,
        "cases.yaml",
        &format!(
            "{GOOD}  tags: [refunds]\n- id: other\n  query: Q?\n  response: R.\n  tags: [misc]\n"
        ),
    );
    let outcome = tokio::task::spawn_blocking(move || {
        ragaliq::suite(&dir)
            .metrics([Metric::Relevance])
            .tags(["refunds"])
            .judge(judge)
            .mode(Mode::Live)
            .with_args(quiet())
            .run_for_outcome()
            .unwrap()
    })
    .await
    .unwrap();
    let cases: Vec<&str> = outcome
        .report
        .results
        .iter()
        .map(|r| r.case.as_str())
        .collect();
    assert_eq!(cases, ["ok"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_budget_stops_live_calls() {
    let server = ScriptedJudge::start().await;
    // An absurd price: the first call alone spends the budget.
    let judge = Judge::builder(OpenAiTransport::new(&server.base_url()))
        .with_model("scripted")
        // A rule, not a model: read at the thresholds (unmeasured, its
        // readings from 0.05 to 0.95 would await a person).
        .with_bands(ragaliq::Bands::OFF)
        .with_concurrency(1)
        .with_price(Price {
            input_per_million: 1_000_000.0,
            output_per_million: 1_000_000.0,
        })
        .with_budget(1.0)
        .build()
        .unwrap();
    let dir = temp_dir("budget");
    let cases: String = (0..5)
        .map(|i| format!("- id: c{i}\n  query: What is the refund window {i}?\n  context: [Refunds are accepted within 30 days.]\n  response: Refunds are accepted within 30 days.\n"))
        .collect();
    write(&dir, "cases.yaml", &cases);
    let outcome = tokio::task::spawn_blocking(move || {
        ragaliq::suite(&dir)
            .metrics([Metric::Relevance])
            .judge(judge)
            .mode(Mode::Live)
            .with_args(Arguments {
                test_threads: Some(1),
                ..quiet()
            })
            .run_for_outcome()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(server.requests(), 1, "no call after the budget was spent");
    let summary = &outcome.report.summary;
    assert_eq!(
        (
            summary.passed + summary.failed,
            summary.judge_errors,
            summary.skipped_calls
        ),
        (1, 4, 4)
    );
    let skipped = outcome
        .report
        .results
        .iter()
        .find(|r| r.outcome == Outcome::JudgeError)
        .unwrap();
    assert!(
        skipped
            .error
            .as_deref()
            .unwrap()
            .starts_with("cost budget reached: $"),
        "{skipped:?}"
    );
    assert!(summary.estimated_cost_usd.unwrap() >= 1.0);
}

/// A budget for a model with no price (a local model) does not stop a
/// replay, which spends nothing; a live call is refused as a configuration
/// error naming the model, and never sent. (It was a configuration error
/// when the judge was built, so a team's `cost.max_usd` failed CI's replay
/// of a local model's recordings.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_without_a_price_replays_and_refuses_only_live_calls() {
    use ragaliq::RagCase;
    use ragaliq::record::{Location, Recorder};
    use std::sync::Arc;
    let server = ScriptedJudge::start().await;
    let dir = temp_dir("unpriced");
    let snap = dir.join("unpriced.snap");
    let location = || Location::at(&snap, "tests/suite.rs", "RAGALIQ_MODE=record cargo test");
    let case = RagCase::new("What is the refund window?").response("The refund window is 30 days.");
    let judge = |budget: Option<f64>| {
        let b = Judge::builder(OpenAiTransport::new(&server.base_url())).with_model("local-model");
        match budget {
            Some(usd) => b.with_budget(usd),
            None => b,
        }
        .build()
    };
    let recorder = Arc::new(Recorder::new(location(), Mode::Record));
    judge(None)
        .unwrap()
        .with_recorder(recorder.clone())
        .relevance(&case)
        .await
        .unwrap();
    let pending = recorder.save_pending("tests/suite.rs").unwrap().unwrap();
    std::fs::rename(pending, &snap).unwrap();
    let asked = server.requests();

    let budgeted = judge(Some(5.0)).expect("a budget needs no price until a live call");
    let replayed = budgeted
        .with_recorder(Arc::new(Recorder::new(location(), Mode::Replay)))
        .relevance(&case)
        .await
        .unwrap();
    assert_eq!((replayed.usage.replayed, replayed.usage.calls), (1, 0));

    let refused = budgeted.relevance(&case).await.unwrap_err();
    assert!(refused.is_configuration(), "{refused}");
    assert!(
        refused
            .to_string()
            .contains("a price for model `local-model` before a live call"),
        "{refused}"
    );
    assert_eq!(server.requests(), asked, "the refused call was not sent");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_missing_recording_is_a_recording_error_not_the_judges() {
    let dir = temp_dir("unrecorded");
    write(&dir, "cases.yaml", GOOD);
    // Replay with no recording, and a judge that cannot be reached: the
    // trial needs a recording, and the judge is never asked.
    let silent = Judge::builder(OpenAiTransport::new("http://127.0.0.1:9/v1"))
        .with_model("scripted")
        // A rule, not a model: read at the thresholds (unmeasured, its
        // readings from 0.05 to 0.95 would await a person).
        .with_bands(ragaliq::Bands::OFF)
        .build()
        .unwrap();
    let outcome = ragaliq::suite(&dir)
        .metrics([Metric::Relevance])
        .judge(silent.clone())
        .mode(Mode::Replay)
        .with_args(quiet())
        .run_for_outcome()
        .unwrap();
    let r = &outcome.report.results[0];
    assert_eq!(r.outcome, Outcome::RecordingError);
    assert!(
        r.error
            .as_deref()
            .unwrap()
            .starts_with("no recording for test"),
        "{r:?}"
    );
    assert_eq!(outcome.report.summary.recording_errors, 1);
    assert_eq!(outcome.report.summary.judge_errors, 0);
    assert!(
        outcome.report.totals_line().contains("1 recording error"),
        "{}",
        outcome.report.totals_line()
    );
    assert_eq!(silent.usage().calls, 0);
}

/// A suite whose code asks for a mode that calls the judge, run as a
/// committed test would run under CI: by the parent test below, in a child
/// process whose environment it controls.
#[test]
#[ignore = "run in a child process by ci_ignores_the_mode_a_suites_code_asks_for"]
fn child_suite_asking_for_auto() {
    let dir = std::env::var("RAGALIQ_CHILD_SUITE_DIR").expect("set by the parent test");
    let outcome = ragaliq::suite(&dir)
        .metrics([Metric::Faithfulness])
        .mode(Mode::Auto)
        .with_args(quiet())
        .run_for_outcome();
    println!("outcome: {:?}", outcome.map(|o| o.conclusion.num_failed));
}

/// `Suite::mode(Mode::Auto)` is a committed setting, as a file's mode is:
/// under CI it may only ask for replay. The judge is not called, and one
/// line on stderr says what was ignored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ci_ignores_the_mode_a_suites_code_asks_for() {
    let server = ScriptedJudge::start().await;
    let dir = temp_dir("ci-code-mode");
    write(&dir, "cases.yaml", GOOD);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "child_suite_asking_for_auto",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("CI", "true")
        .env_remove("RAGALIQ_MODE")
        .env_remove("NEXTEST_RUN_ID")
        .env_remove("RAGALIQ_RUN_ID")
        .env_remove("RAGALIQ_SNAPSHOT_DIR")
        .env("RAGALIQ_JUDGE", server.base_url())
        .env("RAGALIQ_MODEL", "scripted")
        .env("RAGALIQ_CHILD_SUITE_DIR", &dir)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(server.requests(), 0, "CI called the judge:\n{text}");
    let said: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("ragaliq: CI is set, so "))
        .collect();
    assert_eq!(said.len(), 1, "{text}");
    assert!(
        said[0].starts_with("ragaliq: CI is set, so mode auto (set by the program) is ignored and the mode is replay (CI is set)"),
        "{}",
        said[0]
    );
    assert!(
        !dir.join("snapshots").exists()
            || std::fs::read_dir(dir.join("snapshots")).unwrap().count() == 0,
        "nothing recorded"
    );
}

/// The pipeline a suite is given: it retrieves two passages and has the
/// scripted `app` model answer from them, with a plain reqwest call.
async fn help_desk(
    input: ragaliq::pipeline::Input,
    app: ragaliq::pipeline::Pipeline,
) -> Result<ragaliq::pipeline::Answered, String> {
    let passages = [
        "Refunds are accepted within 30 days of delivery.",
        "Shipping is free on orders over 50 euros.",
    ];
    let body = serde_json::json!({
        "model": "app-scripted",
        "messages": [
            {"role": "system", "content": "Answer from the passages only."},
            {"role": "user", "content": format!("Passages:\n{}\nQuestion: {}", passages.join("\n"), input.query)},
        ],
        "temperature": 0,
    });
    let reply: serde_json::Value = reqwest::Client::new()
        .post(format!("{}/chat/completions", app.openai_base_url()))
        .json(&body)
        .send()
        .await
        .map_err(|e| e.to_string())?
        .error_for_status()
        .map_err(|e| e.to_string())?
        .json()
        .await
        .map_err(|e| e.to_string())?;
    let text = reply["choices"][0]["message"]["content"]
        .as_str()
        .ok_or("no answer")?;
    Ok(ragaliq::pipeline::Answered::new(text).context(passages))
}

/// A suite with a pipeline, run by the parent test below in a child
/// process whose environment (mode, CI, insta) it controls.
#[test]
#[ignore = "run in a child process by a_suite_runs_the_pipeline_recorded_then_replayed"]
fn child_suite_with_a_pipeline() {
    let dir = std::env::var("RAGALIQ_CHILD_SUITE_DIR").expect("set by the parent test");
    let url = std::env::var("RAGALIQ_CHILD_URL").expect("set by the parent test");
    let mode = std::env::var("RAGALIQ_CHILD_MODE").expect("set by the parent test");
    let judge = Judge::builder(OpenAiTransport::new(&url))
        .with_model("scripted")
        // A rule, not a model: read at the thresholds (unmeasured, its
        // readings from 0.05 to 0.95 would await a person).
        .with_bands(ragaliq::Bands::OFF)
        .build()
        .unwrap()
        .with_pipeline_settings(ragaliq::pipeline::Settings::default().openai(&url));
    let outcome = ragaliq::suite(Path::new(&dir).join("cases"))
        .metrics([Metric::Faithfulness, Metric::Relevance])
        // The scripted judge's P(yes) for relevance is the share of the
        // question's words in the answer: half, for the refund window.
        .threshold(Metric::Relevance, 0.4)
        .judge(judge)
        .pipeline(help_desk)
        .mode(Mode::from_name(&mode).unwrap())
        .report_dir(Path::new(&dir).join("report"))
        .with_args(quiet())
        .run_for_outcome()
        .unwrap();
    println!(
        "outcome: {} passed, {} failed",
        outcome.conclusion.num_passed, outcome.conclusion.num_failed
    );
}

fn run_child_suite(dir: &Path, url: &str, mode: &str, ci: bool) -> String {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "child_suite_with_a_pipeline",
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env_remove("CI")
    .env_remove("TF_BUILD")
    .env_remove("RAGALIQ_MODE")
    .env_remove("NEXTEST_RUN_ID")
    .env_remove("RAGALIQ_RUN_ID")
    .env_remove("RAGALIQ_SNAPSHOT_DIR")
    .env("INSTA_UPDATE", "new")
    .env("RAGALIQ_CHILD_SUITE_DIR", dir)
    .env("RAGALIQ_CHILD_URL", url)
    .env("RAGALIQ_CHILD_MODE", mode);
    if ci {
        cmd.env("CI", "true");
    }
    let out = cmd.output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Case files that hold questions and labels, not answers: the suite's
/// pipeline answers them, its calls are recorded with the judge's in each
/// case's recording, and the recording replays under CI with no request.
/// A case with a frozen response is graded as it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suite_runs_the_pipeline_recorded_then_replayed() {
    let server = ScriptedJudge::start().await;
    let url = server.base_url();
    let dir = temp_dir("pipeline");
    std::fs::create_dir_all(dir.join("cases")).unwrap();
    write(
        &dir.join("cases"),
        "cases.yaml",
        "- id: refund\n  query: What is the refund window?\n- id: shipping\n  query: Is shipping free?\n- id: frozen\n  query: What is the refund window?\n  context: [Refunds are accepted within 30 days of delivery.]\n  response: Refunds are accepted within 30 days of delivery.\n",
    );
    let text = run_child_suite(&dir, &url, "record", false);
    assert!(
        text.contains("outcome: 0 passed, 6 failed"),
        "new recordings await review:\n{text}"
    );
    let recorded = server.requests();
    // The pipeline once per case it answered (2), whatever the metrics.
    let snapshots = dir.join("cases/snapshots");
    for id in ["refund", "shipping", "frozen"] {
        std::fs::rename(
            snapshots.join(format!("{id}.snap.new")),
            snapshots.join(format!("{id}.snap")),
        )
        .unwrap();
    }
    let refund = std::fs::read_to_string(snapshots.join("refund.snap")).unwrap();
    assert!(
        refund.contains("pipeline:") && refund.contains("used_by:\n  - pipeline"),
        "{refund}"
    );
    assert!(
        refund.contains("answer: Refunds are accepted within 30 days of delivery."),
        "{refund}"
    );
    let frozen = std::fs::read_to_string(snapshots.join("frozen.snap")).unwrap();
    assert!(
        !frozen.contains("pipeline:"),
        "a frozen response runs no pipeline:\n{frozen}"
    );
    let report = Report::read(&dir.join("report/report.json")).unwrap();
    let app = report
        .summary
        .pipeline
        .expect("the pipeline's calls are counted");
    assert_eq!((app.calls, app.replayed), (2, 0));
    assert!(app.total_tokens() > 0);
    assert_eq!(
        report.summary.pipeline_cost_usd, None,
        "the scripted model has no price"
    );
    assert!(
        report
            .totals_line()
            .contains("pipeline under test: 2 calls"),
        "{}",
        report.totals_line()
    );
    assert_eq!(
        recorded - app.calls,
        report.summary.usage.calls,
        "the judge's calls apart"
    );

    let text = run_child_suite(&dir, &url, "replay", true);
    assert!(
        text.contains("outcome: 6 passed, 0 failed"),
        "replayed under CI:\n{text}"
    );
    assert_eq!(server.requests(), recorded, "CI asked nothing");
    let report = Report::read(&dir.join("report/report.json")).unwrap();
    let app = report.summary.pipeline.unwrap();
    assert_eq!((app.calls, app.replayed), (0, 2));
    let summary = std::fs::read_to_string(dir.join("report/summary.md")).unwrap();
    assert!(
        summary.contains("pipeline under test: 0 calls"),
        "{summary}"
    );
    let html = std::fs::read_to_string(dir.join("report/report.html")).unwrap();
    assert!(
        html.contains("pipeline calls replayed"),
        "the page counts them too"
    );
}

/// Issue 48: a conversation in a case file (`turns:` in YAML, rows with
/// `conversation` and `turn` in CSV) is one trial per metric, graded turn
/// by turn; the report carries each turn's result and the page each turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversations_are_one_trial_per_metric_with_per_turn_results() {
    let server = ScriptedJudge::start().await;
    let judge = judge(&server);
    let dir = temp_dir("conversations");
    write(
        &dir,
        "jackets.yaml",
        "- id: jacket-return\n  tags: [returns]\n  turns:\n  - query: Can I return a jacket?\n    context: [Jackets can be returned within 30 days of delivery.]\n    response: Yes, jackets can be returned within 30 days of delivery.\n  - query: And how long do I have?\n    context: [Jackets can be returned within 30 days of delivery.]\n    response: You have 30 days from delivery to return the jacket.\n  - query: What about international returns?\n    context: [Standard shipping takes five business days.]\n    response: International returns are free and jackets can be returned within 90 days of delivery.\n",
    );
    write(
        &dir,
        "orders.csv",
        "conversation,turn,query,context,response,tags\norder-status,2,When will it arrive?,Standard shipping takes five business days.,What is your order number?,\norder-status,1,My order number is 4417. Where is my jacket?,Order 4417 shipped on Monday.,Order 4417 shipped on Monday.,orders\n",
    );
    let loaded = load_dir(&dir).unwrap();
    assert_eq!(loaded.len(), 2);
    let orders = loaded.iter().find(|c| c.id() == "order-status").unwrap();
    let conversation = orders.conversation.as_ref().unwrap();
    assert_eq!(
        conversation.turns[0].query, "My order number is 4417. Where is my jacket?",
        "rows in any order, by turn"
    );
    assert_eq!(conversation.tags, ["orders"]);
    assert_eq!(orders.line, 2);
    let reports = dir.join("reports");
    let page_path = reports.join("report.html");
    let outcome = tokio::task::spawn_blocking(move || {
        ragaliq::suite(&dir)
            .metrics([Metric::Faithfulness, Metric::Consistency, Metric::Retention])
            .judge(judge)
            .mode(Mode::Live)
            .report_dir(&reports)
            .with_args(quiet())
            .run_for_outcome()
            .unwrap()
    })
    .await
    .unwrap();
    let result = |case: &str, metric: Metric| {
        outcome
            .report
            .results
            .iter()
            .find(|r| r.case == case && r.metric == metric)
            .unwrap_or_else(|| panic!("{case}::{metric}"))
    };
    assert_eq!(
        outcome.report.results.len(),
        6,
        "one trial per conversation and metric"
    );
    let faithful = result("jacket-return", Metric::Faithfulness);
    assert_eq!(faithful.outcome, Outcome::Failed);
    assert_eq!(
        faithful
            .turns
            .iter()
            .map(|t| (t.turn, t.outcome))
            .collect::<Vec<_>>(),
        [
            (1, Outcome::Passed),
            (2, Outcome::Passed),
            (3, Outcome::Failed)
        ]
    );
    assert_eq!(faithful.score, Some(faithful.turns[2].score));
    let shown = faithful.turns[2].history.as_ref().unwrap();
    assert_eq!(shown.said.len(), 2);
    assert_eq!(
        result("jacket-return", Metric::Consistency).outcome,
        Outcome::Failed
    );
    assert_eq!(
        result("order-status", Metric::Retention).outcome,
        Outcome::Failed
    );
    assert_eq!(
        result("order-status", Metric::Consistency).outcome,
        Outcome::Passed
    );
    let text = &outcome.report.cases["jacket-return"];
    assert_eq!(text.turns.len(), 3);
    assert_eq!(text.turns[1].query, "And how long do I have?");
    // The page: the conversation's turns, and each trial turn by turn.
    let page = std::fs::read_to_string(page_path).unwrap();
    assert!(page.contains("<b>Conversation</b>"), "{page}");
    assert!(
        page.contains(
            "<li id=\"jacket-.return--t3\"><p><b>User</b> What about international returns?</p>"
        ),
        "{page}"
    );
    assert!(
        page.contains("<td class=\"o-failed\">✗ failed</td>")
            && page.contains("the judge was shown before it:"),
        "{page}"
    );
}
