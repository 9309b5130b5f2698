//! Data-driven suites (SPEC §8): a folder of case files becomes one
//! libtest-mimic trial per case and metric, named `case_id::metric`, so
//! cargo's and nextest's filters, `--list`, `--exact`, `--skip`,
//! `--ignored` and `--test-threads` work as for any test.
//!
//! Use it from a `harness = false` test target:
//!
//! ```toml
//! [[test]]
//! name = "rag_suite"
//! harness = false
//! ```
//!
//! ```no_run
//! // tests/rag_suite.rs
//! use ragaliq::Metric;
//!
//! fn main() -> std::process::ExitCode {
//!     ragaliq::suite("tests/rag_cases")
//!         .metrics([Metric::Faithfulness, Metric::Hallucination, Metric::Relevance])
//!         .run()
//! }
//! ```
//!
//! Each case records and replays like a `#[rag_test]`: one recording per
//! case, `<folder>/snapshots/<case_id>.snap`, with the same modes and CI
//! default. New exchanges are written (atomically) as a pending `.snap.new`
//! for `cargo insta review` once the case's last trial has run.
//!
//! # Known limitations
//!
//! - In replay mode a suite does not notice recorded exchanges that no
//!   trial asks for any more; `#[rag_test]` does (through insta).
//! - Trials of one case share the judge's memo, so when a filter runs only
//!   `case::hallucination`, that trial pays for the calls faithfulness would
//!   otherwise have shared.

pub mod cases;
pub mod report;

use crate::config::{Config, Mode};
use crate::error::{ConfigError, Error};
use crate::evaluation::{Evaluation, Metric};
use crate::judge::Judge;
use crate::metrics::EvalOptions;
use crate::record::{Location, Recorder};
use cases::LoadedCase;
use libtest_mimic::{Arguments, Failed, Trial};
use report::{Outcome, Report, TrialResult};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A suite over the case files in `dir` (relative to the package root).
///
/// ```
/// let suite = ragaliq::suite("tests/rag_cases").metrics([ragaliq::Metric::Relevance]);
/// # let _ = suite;
/// ```
pub fn suite(dir: impl AsRef<Path>) -> Suite {
    Suite {
        dir: dir.as_ref().to_owned(),
        metrics: vec![
            Metric::Faithfulness,
            Metric::Hallucination,
            Metric::Relevance,
        ],
        thresholds: BTreeMap::new(),
        tags: Vec::new(),
        judge: None,
        report_dir: None,
        baseline: None,
        regression_tolerance: None,
        args: None,
        mode: None,
    }
}

/// A configured suite; [`run`](Suite::run) it from `main`.
#[must_use = "a suite does nothing until `run` is called"]
pub struct Suite {
    dir: PathBuf,
    metrics: Vec<Metric>,
    thresholds: BTreeMap<Metric, f64>,
    tags: Vec<String>,
    judge: Option<Judge>,
    report_dir: Option<PathBuf>,
    baseline: Option<PathBuf>,
    regression_tolerance: Option<f64>,
    args: Option<Arguments>,
    mode: Option<Mode>,
}

/// Why a suite could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SuiteError {
    /// A case file could not be loaded.
    #[error(transparent)]
    Load(#[from] cases::LoadError),
    /// Configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A report or baseline could not be written or read.
    #[error("{path}: {message}", path = .path.display())]
    Report {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// What a suite run concluded.
#[derive(Debug)]
pub struct SuiteOutcome {
    /// libtest-mimic's conclusion (counts of passed, failed, filtered out).
    pub conclusion: libtest_mimic::Conclusion,
    /// The report of the trials that ran.
    pub report: Report,
    /// Regressions beyond the tolerance, when a baseline was given.
    pub regressions: usize,
}

impl SuiteOutcome {
    /// 0 when every trial passed and no regression exceeded the tolerance, else 101.
    #[must_use]
    pub fn exit_code(&self) -> ExitCode {
        if self.conclusion.has_failed() || self.regressions > 0 {
            ExitCode::from(101)
        } else {
            ExitCode::SUCCESS
        }
    }
}

impl Suite {
    /// The metrics to run on every case (default: faithfulness, hallucination, relevance).
    pub fn metrics(mut self, metrics: impl IntoIterator<Item = Metric>) -> Self {
        self.metrics = metrics.into_iter().collect();
        self
    }

    /// The suite's threshold for `metric` (a case's own thresholds win).
    pub fn threshold(mut self, metric: Metric, threshold: f64) -> Self {
        self.thresholds.insert(metric, threshold);
        self
    }

    /// Runs only cases with at least one of these tags (also `RAGALIQ_TAGS`, comma-separated).
    pub fn tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// The judge to use (default: from `ragaliq.toml` and the environment).
    pub fn judge(mut self, judge: Judge) -> Self {
        self.judge = Some(judge);
        self
    }

    /// Writes `report.json`, `junit.xml` and `summary.md` here (also `RAGALIQ_REPORT_DIR`).
    pub fn report_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.report_dir = Some(dir.into());
        self
    }

    /// Compares scores with a previous `report.json` (also `RAGALIQ_BASELINE`).
    pub fn baseline(mut self, report: impl Into<PathBuf>) -> Self {
        self.baseline = Some(report.into());
        self
    }

    /// Fails the run when a score drops by more than `tolerance` against the baseline.
    pub fn fail_on_regression(mut self, tolerance: f64) -> Self {
        self.regression_tolerance = Some(tolerance);
        self
    }

    /// The recording mode, instead of the configured one.
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// Command-line arguments to use instead of the process's.
    pub fn with_args(mut self, args: Arguments) -> Self {
        self.args = Some(args);
        self
    }

    /// Runs the suite and prints the console summary; the exit code for `main`.
    pub fn run(self) -> ExitCode {
        match self.run_for_outcome() {
            Ok(outcome) => outcome.exit_code(),
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(101)
            }
        }
    }

    /// Runs the suite and returns what happened, for callers that want the report.
    pub fn run_for_outcome(self) -> Result<SuiteOutcome, SuiteError> {
        let env = |name: &str| std::env::var(name).ok();
        let root = env("CARGO_MANIFEST_DIR").map_or_else(|| PathBuf::from("."), PathBuf::from);
        let mut config = Config::load_from(&root, &env)?;
        if let Some(mode) = self.mode {
            config.mode = mode;
        }
        let judge = match self.judge {
            Some(j) => j,
            None => Judge::from_config(&config)?,
        };
        let dir = root.join(&self.dir);
        let tags: Vec<String> = if self.tags.is_empty() {
            env("RAGALIQ_TAGS")
                .map(|t| {
                    t.split(',')
                        .map(|s| s.trim().to_owned())
                        .filter(|s| !s.is_empty())
                        .collect()
                })
                .unwrap_or_default()
        } else {
            self.tags
        };
        // Paths relative to the package read the same on every machine, in
        // messages, reports and recordings.
        let relative = |p: &Path| {
            p.strip_prefix(&root)
                .map(Path::to_path_buf)
                .unwrap_or_else(|_| p.to_owned())
        };
        let cases: Vec<LoadedCase> = cases::load_dir(&dir)
            .map_err(|mut e| {
                e.file = relative(&e.file);
                e
            })?
            .into_iter()
            .filter(|c| tags.is_empty() || c.case.tags.iter().any(|t| tags.contains(t)))
            .map(|mut c| {
                c.file = relative(&c.file);
                c
            })
            .collect();
        for (metric, t) in &self.thresholds {
            if !(0.0..=1.0).contains(t) {
                return Err(ConfigError::Invalid {
                    origin: format!("suite threshold of {metric}"),
                    value: t.to_string(),
                    expected: "a number from 0 to 1".into(),
                }
                .into());
            }
        }

        let mut args = self.args.unwrap_or_else(Arguments::from_args);
        if args.test_threads.is_none() {
            // Trials block while they wait for the judge: run as many as the
            // judge may have requests in flight.
            args.test_threads = Some(judge.concurrency().max(1));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| SuiteError::Report {
                path: dir.clone(),
                message: format!("cannot start the async runtime: {e}"),
            })?;
        let binary = binary_name();
        let results: Arc<Mutex<Vec<TrialResult>>> = Arc::default();
        let mut trials = Vec::new();
        for loaded in cases {
            let id = loaded.id().to_owned();
            let names: Vec<(Metric, String)> = self
                .metrics
                .iter()
                .map(|m| (*m, format!("{id}::{m}")))
                .collect();
            let running = names
                .iter()
                .filter(|(_, name)| {
                    let probe = Trial::test(name.clone(), || Ok(()));
                    !args.is_filtered_out(&probe) && !args.is_ignored(&probe)
                })
                .count();
            let location = Location {
                snapshot: dir.join("snapshots").join(format!("{id}.snap")),
                test: format!("{binary}::{id}"),
                record_command: format!("RAGALIQ_MODE=record cargo test --test {binary} -- {id}::"),
            };
            let recorder = Arc::new(Recorder::new(location, config.mode));
            let state = Arc::new(CaseState {
                judge: judge.with_recorder(recorder.clone()),
                recorder,
                remaining: AtomicUsize::new(running),
                all_passed: std::sync::atomic::AtomicBool::new(true),
                loaded,
            });
            for (metric, name) in names {
                let threshold = state
                    .loaded
                    .thresholds
                    .get(&metric)
                    .or_else(|| self.thresholds.get(&metric))
                    .copied();
                let state = state.clone();
                let results = results.clone();
                let handle = runtime.handle().clone();
                trials.push(Trial::test(name, move || {
                    let options = EvalOptions {
                        threshold,
                        ..EvalOptions::default()
                    };
                    let outcome = handle.block_on(state.judge.evaluate_with(
                        metric,
                        &state.loaded.case,
                        &options,
                    ));
                    let verdict = state.conclude(metric, outcome, threshold, &results);
                    state.finish_one();
                    verdict
                }));
            }
        }

        let conclusion = libtest_mimic::run(&args, trials);
        drop(runtime);
        let mut results = std::mem::take(
            &mut *results
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        results.sort_by(|a, b| (a.case.as_str(), a.metric).cmp(&(b.case.as_str(), b.metric)));
        let mode = config.mode;
        let mut report = Report::new(&self.dir, &judge, mode, results);
        let baseline = self
            .baseline
            .or_else(|| env("RAGALIQ_BASELINE").map(PathBuf::from))
            .map(|p| root.join(p));
        let mut regressions = 0;
        if let Some(path) = &baseline {
            let previous = Report::read(path).map_err(|message| SuiteError::Report {
                path: path.clone(),
                message,
            })?;
            regressions = report.compare(&previous, self.regression_tolerance);
        }
        if !args.list && !report.results.is_empty() {
            println!("\n{}", report.console_table());
            if let Some(budget) = judge.budget().filter(|_| judge.skipped_calls() > 0) {
                println!(
                    "cost budget of ${budget:.2} reached: {} live calls skipped; their trials failed",
                    judge.skipped_calls()
                );
            }
        }
        let report_dir = self.report_dir.map(|d| root.join(d)).or(config.report_dir);
        if let Some(dir) = report_dir.filter(|_| !args.list) {
            report
                .write_all(&dir)
                .map_err(|(path, message)| SuiteError::Report { path, message })?;
        }
        if let Some(summary) =
            env("GITHUB_STEP_SUMMARY").filter(|_| !args.list && !report.results.is_empty())
        {
            report
                .append_markdown(Path::new(&summary))
                .map_err(|(path, message)| SuiteError::Report { path, message })?;
        }
        Ok(SuiteOutcome {
            conclusion,
            report,
            regressions,
        })
    }
}

struct CaseState {
    loaded: LoadedCase,
    judge: Judge,
    recorder: Arc<Recorder>,
    remaining: AtomicUsize,
    all_passed: std::sync::atomic::AtomicBool,
}

impl CaseState {
    fn conclude(
        &self,
        metric: Metric,
        outcome: Result<Evaluation, Error>,
        threshold: Option<f64>,
        results: &Mutex<Vec<TrialResult>>,
    ) -> Result<(), Failed> {
        let case = &self.loaded;
        let place = format!(
            "case `{}` ({}:{})",
            case.id(),
            case.file.display(),
            case.line
        );
        let recording = crate::__private::recording_line(&self.recorder);
        let (result, verdict) = match outcome {
            Ok(eval) => {
                let verdict = if eval.passed {
                    Ok(())
                } else {
                    Err(Failed::from(format!("{place}\n{eval}\n{recording}")))
                };
                (TrialResult::from_evaluation(case, eval), verdict)
            }
            Err(error) => {
                let kind = match &error {
                    Error::MissingInput { .. } | Error::Case(_) | Error::Config(_) => {
                        "configuration error (the case cannot be scored this way)"
                    }
                    Error::BudgetExhausted { .. } => "not evaluated: the cost budget is spent",
                    _ => "the judge failed (this is not a low score)",
                };
                let threshold = threshold.unwrap_or_else(|| self.judge.default_threshold(metric));
                let message = format!("{place}: {metric}: {kind}\n{error}\n{recording}");
                (
                    TrialResult::from_error(case, metric, threshold, &error),
                    Err(Failed::from(message)),
                )
            }
        };
        if !matches!(result.outcome, Outcome::Passed) {
            self.all_passed.store(false, Ordering::SeqCst);
        }
        results
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(result);
        verdict
    }

    /// After the case's last trial: keep what was paid for, as a pending recording.
    fn finish_one(&self) {
        if self.remaining.fetch_sub(1, Ordering::SeqCst) != 1 {
            return;
        }
        if !matches!(self.recorder.mode(), Mode::Auto | Mode::Record)
            || self.recorder.new_exchanges() == 0
        {
            return;
        }
        let passed = self.all_passed.load(Ordering::SeqCst);
        if let Err(e) = self
            .recorder
            .save_pending_after(passed, &self.loaded.file.display().to_string())
        {
            eprintln!(
                "warning: could not write the recording of case `{}`: {e}",
                self.loaded.id()
            );
        }
    }
}

/// The test binary's name, without cargo's hash suffix.
fn binary_name() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|s| match s.rsplit_once('-') {
            Some((name, hash))
                if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) =>
            {
                name.to_owned()
            }
            _ => s,
        })
        .unwrap_or_else(|| "suite".into())
}
