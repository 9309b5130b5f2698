//! The run's report counts every trial, however many processes of the run
//! finish at once: each process's fragment is published, and the report
//! built from all fragments and written, under one lock, so a process that
//! read fewer fragments never writes over a report built from more.
//!
//! A `harness = false` target that is its own child: the parent starts
//! `PROCESSES` copies of itself at once, each running one trial of a
//! twelve-case suite (as cargo-nextest does), for `ROUNDS` runs, and reads
//! the run's `report.json` after each.

use ragaliq::harness::report::Report;
use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
use ragaliq::{Metric, Mode, TransportError};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const PROCESSES: usize = 12;
const ROUNDS: usize = 4;

/// A judge that finds every answer relevant, at once.
struct Relevant;

impl Transport for Relevant {
    fn provider(&self) -> &str {
        "canned"
    }
    fn complete<'a>(
        &'a self,
        _: &'a JudgeRequest,
    ) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
        Box::pin(async { Ok(JudgeResponse::text(r#"{"reasoning": "ok", "score": 0.9}"#)) })
    }
}

fn cases(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let mut text = String::new();
    for i in 0..PROCESSES {
        text.push_str(&format!(
            "- id: case-{i}\n  query: What is rule {i}?\n  response: Rule {i} is the rule.\n"
        ));
    }
    std::fs::write(dir.join("cases.yaml"), text).unwrap();
}

fn child(dir: &Path, reports: &Path, trial: &str) -> ExitCode {
    let args = libtest_mimic::Arguments::from_iter(["suite", trial, "--exact", "--quiet"]);
    ragaliq::suite(dir)
        .metrics([Metric::Relevance])
        .judge(
            Judge::builder(Relevant)
                .with_strategy(ragaliq::Strategy::Json)
                .build()
                .unwrap(),
        )
        .mode(Mode::Live)
        .report_dir(reports)
        .with_args(args)
        .run()
}

fn main() -> ExitCode {
    if let (Ok(dir), Ok(reports), Ok(trial)) = (
        std::env::var("CHILD_CASES"),
        std::env::var("CHILD_REPORTS"),
        std::env::var("CHILD_TRIAL"),
    ) {
        return child(Path::new(&dir), Path::new(&reports), &trial);
    }
    // `--list` and filters from cargo: this target has one test.
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        println!("every_trial_of_a_run_is_reported: test");
        return ExitCode::SUCCESS;
    }
    let base: PathBuf =
        std::env::temp_dir().join(format!("ragaliq-suite-runs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let cases_dir = base.join("cases");
    cases(&cases_dir);
    let mut short = Vec::new();
    for round in 0..ROUNDS {
        let reports = base.join(format!("reports-{round}"));
        let run = format!("suite-runs-{}-{round}", std::process::id());
        let children: Vec<_> = (0..PROCESSES)
            .map(|i| {
                Command::new(std::env::current_exe().unwrap())
                    .env("CHILD_CASES", &cases_dir)
                    .env("CHILD_REPORTS", &reports)
                    .env("CHILD_TRIAL", format!("case-{i}::relevance"))
                    .env("RAGALIQ_RUN_ID", &run)
                    .env_remove("NEXTEST_RUN_ID")
                    .env_remove("GITHUB_STEP_SUMMARY")
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut c in children {
            assert!(c.wait().unwrap().success());
        }
        let report = Report::read(&reports.join("report.json")).unwrap();
        if report.results.len() != PROCESSES {
            short.push(format!(
                "round {round}: report.json holds {} of {PROCESSES} trials",
                report.results.len()
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&base);
    if short.is_empty() {
        println!("test every_trial_of_a_run_is_reported ... ok");
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "a report built from fewer fragments was written last:\n{}",
            short.join("\n")
        );
        ExitCode::FAILURE
    }
}
