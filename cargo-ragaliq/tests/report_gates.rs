//! `cargo ragaliq report` checks a run's gates over its shards: three
//! processes, each a shard of a nextest-like run of its own (its own
//! `NEXTEST_RUN_ID`, so none can check a gate), each writing its report
//! folder; then the binary combines them, checks `[gates]` from the
//! `ragaliq.toml` where it runs, against `--baseline`, and exits with 1 on
//! a failed gate, with a message naming the gate, the figure and the cases.
//!
//! Fifty labelled cases, two relevant IDs each. The baseline run retrieves
//! both within the top 3 everywhere (mean recall@3 1.0); then five cases
//! lose one (recall@3 0.5 each): the mean falls 0.05.
//!
//! A `harness = false` target that is its own child, as `tests/suite_runs.rs`.

use libtest_mimic::{Arguments, Failed, Trial};
use ragaliq::config::Gates;
use ragaliq::retrieval::recall_at;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const SHARDS: usize = 3;
const FALLEN: [usize; 5] = [3, 9, 12, 40, 41];

/// Fifty cases, each tagged with its shard; those of `fallen` retrieve one
/// of their two relevant IDs fourth.
fn cases(dir: &Path, fallen: &[usize]) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let mut text = String::new();
    for i in 1..=50 {
        let retrieved = if fallen.contains(&i) {
            format!("[doc-{i}, faq-1, faq-2, ref-{i}]")
        } else {
            format!("[doc-{i}, ref-{i}, faq-1]")
        };
        text.push_str(&format!(
            "- id: case-{i:02}\n  query: Question {i}?\n  tags: [shard-{}]\n  retrieved_ids: {retrieved}\n  relevant_ids: [doc-{i}, ref-{i}]\n",
            i % SHARDS + 1
        ));
    }
    std::fs::write(dir.join("cases.yaml"), text).unwrap();
}

/// A shard: its cases' trials, in a process of a run of its own.
fn child(cases: &Path, reports: &Path, shard: &str) -> ExitCode {
    let mut suite = ragaliq::suite(cases)
        .metrics([])
        .retrieval([recall_at(3).threshold(1.0)])
        .tags([shard])
        .report_dir(reports)
        .with_args(Arguments::from_iter(["shard", "--quiet"]));
    if let Ok(share) = std::env::var("CHILD_PASS_RATE") {
        suite = suite.gates(Gates::new().pass_rate(share.parse().unwrap()));
    }
    suite.run()
}

struct Run {
    base: PathBuf,
}

impl Run {
    /// Runs the shards over `cases` into `<name>/1`, `<name>/2`, `<name>/3`;
    /// each shard's exit code.
    fn shards(&self, name: &str, fallen: &[usize], pass_rate: Option<f64>) -> Vec<bool> {
        let cases_dir = self.base.join("cases");
        cases(&cases_dir, fallen);
        (1..=SHARDS)
            .map(|k| {
                let mut cmd = Command::new(std::env::current_exe().unwrap());
                cmd.env("CHILD_CASES", &cases_dir)
                    .env("CHILD_REPORTS", self.base.join(name).join(k.to_string()))
                    .env("CHILD_SHARD", format!("shard-{k}"))
                    // Each shard a nextest run on a machine of its own.
                    .env(
                        "NEXTEST_RUN_ID",
                        format!("{name}-{k}-{}", std::process::id()),
                    )
                    .env_remove("RAGALIQ_RUN_ID")
                    .env_remove("GITHUB_STEP_SUMMARY")
                    .env_remove("CHILD_PASS_RATE")
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null());
                if let Some(share) = pass_rate {
                    cmd.env("CHILD_PASS_RATE", share.to_string());
                }
                cmd.status().unwrap().success()
            })
            .collect()
    }

    /// `cargo ragaliq report <name>/1 <name>/2 <name>/3 --out <name>/all`
    /// where `ragaliq.toml` holds `gates`: its exit code and output.
    fn report(&self, name: &str, gates: &str, extra: &[&str]) -> (i32, String) {
        let cwd = self.base.join(format!("{name}-cwd"));
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::write(cwd.join("ragaliq.toml"), format!("[gates]\n{gates}\n")).unwrap();
        let shards: Vec<PathBuf> = (1..=SHARDS)
            .map(|k| self.base.join(name).join(k.to_string()))
            .collect();
        let out = Command::new(env!("CARGO_BIN_EXE_cargo-ragaliq"))
            .current_dir(&cwd)
            .arg("ragaliq")
            .arg("report")
            .args(&shards)
            .arg("--out")
            .arg(self.base.join(name).join("all"))
            .args(extra)
            .env_remove("RAGALIQ_BASELINE")
            .env_remove("RAGALIQ_CONFIG")
            .env_remove("GITHUB_STEP_SUMMARY")
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    }
}

fn check(ok: bool, what: impl Into<String>) -> Result<(), Failed> {
    if ok { Ok(()) } else { Err(what.into().into()) }
}

/// A baseline gate catches the mean that fell 0.05 across the shards.
fn max_drop_across_shards(run: &Run) -> Result<(), Failed> {
    let shards = run.shards("baseline", &[], None);
    check(shards.iter().all(|ok| *ok), "the baseline shards pass")?;
    let (code, out) = run.report("baseline", "max_drop = { \"recall@3\" = 0.04 }", &[]);
    check(code == 0, format!("baseline combined, exit {code}:\n{out}"))?;
    check(
        out.contains("gate max_drop of recall@3 not checked: no baseline run was given"),
        format!("without a baseline the gate is said not checked:\n{out}"),
    )?;
    let baseline = run.base.join("baseline/all");

    // Five cases lose one relevant ID each: their trials fail (threshold 1),
    // and so do their shards, as a nextest shard would.
    let shards = run.shards("current", &FALLEN, None);
    check(
        shards.iter().any(|ok| !ok),
        "a shard with a fallen case fails",
    )?;
    let (code, out) = run.report(
        "current",
        "max_drop = { \"recall@3\" = 0.04 }",
        &["--baseline", baseline.to_str().unwrap()],
    );
    eprintln!("{out}");
    check(code == 1, format!("exit {code}"))?;
    check(
        out.contains("gate max_drop of recall@3 FAILED: the mean fell 0.0500 against the baseline (1.0000 → 0.9500 over the 50 cases both runs scored), more than the 0.04 allowed; fell most: case-03 1.00 → 0.50 (-0.50), case-09 1.00 → 0.50 (-0.50), case-12 1.00 → 0.50 (-0.50), case-40 1.00 → 0.50 (-0.50), case-41 1.00 → 0.50 (-0.50)"),
        format!("the gate's message:\n{out}"),
    )?;
    check(
        out.contains("gates: 0 passed, 1 failed"),
        "the count of gates",
    )?;
    let combined =
        ragaliq::harness::report::Report::read(&run.base.join("current/all/report.json")).unwrap();
    check(
        combined.summary.trials == 50 && combined.summary.processes == SHARDS,
        "every trial once, from three processes",
    )?;
    check(
        combined.gates_failed(),
        "the combined report carries the gate",
    )?;
    Ok(())
}

/// Over the same shards, a pass-rate gate the shards knew allowed their
/// low scores: the shards pass, and the combined run fails only below it.
fn pass_rate_across_shards(run: &Run) -> Result<(), Failed> {
    let shards = run.shards("rated", &FALLEN, Some(0.9));
    check(
        shards.iter().all(|ok| *ok),
        "each shard passes: its low scores are the gate's to judge",
    )?;
    let (code, out) = run.report("rated", "pass_rate = 0.9", &[]);
    check(code == 0, format!("45 of 50 is 90%, exit {code}:\n{out}"))?;
    let (code, out) = run.report("rated", "pass_rate = 0.95", &[]);
    eprintln!("{out}");
    check(code == 1, format!("exit {code}"))?;
    check(
        out.contains("gate pass_rate of recall@3 FAILED: 45 of 50 trials passed (90.0%), below the 95% required (at most 2 of 50 may fail); not passed: case-03 (0.50 < 1.00), case-09 (0.50 < 1.00), case-12 (0.50 < 1.00), case-40 (0.50 < 1.00), case-41 (0.50 < 1.00)"),
        format!("the gate's message:\n{out}"),
    )?;
    // No gate where the report runs: the low scores are failures again.
    let (code, out) = run.report("rated", "", &[]);
    check(
        code == 1 && out.contains("5 trials failed"),
        format!("without a pass-rate gate, exit {code}:\n{out}"),
    )?;
    Ok(())
}

fn main() -> ExitCode {
    if let (Ok(cases), Ok(reports), Ok(shard)) = (
        std::env::var("CHILD_CASES"),
        std::env::var("CHILD_REPORTS"),
        std::env::var("CHILD_SHARD"),
    ) {
        return child(Path::new(&cases), Path::new(&reports), &shard);
    }
    let args = Arguments::from_args();
    let base = std::env::temp_dir().join(format!("ragaliq-report-gates-{}", std::process::id()));
    let trials = vec![
        Trial::test("max_drop_across_shards", {
            let run = Run {
                base: base.join("drop"),
            };
            move || max_drop_across_shards(&run)
        }),
        Trial::test("pass_rate_across_shards", {
            let run = Run {
                base: base.join("rate"),
            };
            move || pass_rate_across_shards(&run)
        }),
    ];
    let conclusion = libtest_mimic::run(&args, trials);
    let _ = std::fs::remove_dir_all(&base);
    conclusion.exit_code()
}
