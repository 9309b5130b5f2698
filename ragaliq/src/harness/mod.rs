//! Data-driven suites: a folder of case files becomes one
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
//! default, asserted through insta after every trial. A new or changed
//! recording fails the trial until `cargo insta review` accepts it, as a
//! `#[rag_test]`'s does; each exchange notes the metrics that use it, so a
//! trial run alone (a filter, a nextest partition) replaces only its own.
//!
//! Under cargo-nextest every trial is a process of its own. Each process
//! adds its results to the run's folder (see [`run`](crate::run)) and
//! rewrites `report.json`, `junit.xml`, `summary.md` and `report.html` from
//! all of them, so
//! the report in the folder counts every trial of the run once, and
//! `GITHUB_STEP_SUMMARY` holds one table for the run. Shards on other
//! machines are combined with `cargo ragaliq report`.
//!
//! # Known limitations
//!
//! - Trials of one case share answers through the judge's memo only within
//!   one process: under nextest, `case::hallucination` replays (or pays for)
//!   the two exchanges `case::faithfulness` also uses.
//! - libtest-mimic does not capture a trial's output: insta's summary of a
//!   new recording is printed as it happens.

pub mod cases;
mod fragments;
mod gate_result;
pub mod gates;
mod html;
mod junit;
pub mod report;

use crate::config::Config;
use crate::core::{Assessed, ConfigError, Criteria, Evaluation, Gates, Metric, Mode};
use crate::error::Error;
use crate::judge::Judge;
use crate::metrics::EvalOptions;
use crate::record::{Location, Recorder, Site};
use crate::retrieval::RetrievalMetric;
use cases::LoadedCase;
use libtest_mimic::{Arguments, Failed, Trial};
use report::{CaseText, JudgeInfo, Outcome, Report, Spending, TrialResult};
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
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
        criteria: Vec::new(),
        retrieval: Vec::new(),
        tags: Vec::new(),
        judge: None,
        report_dir: None,
        baseline: None,
        regression_tolerance: None,
        gates: None,
        args: None,
        mode: None,
        pipeline: None,
    }
}

/// The pipeline under test, as a suite keeps it.
type PipelineFn = dyn Fn(
        crate::pipeline::Input,
        crate::pipeline::Pipeline,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<crate::pipeline::Answered, String>>>,
    > + Send
    + Sync;

/// A configured suite; [`run`](Suite::run) it from `main`.
#[must_use = "a suite does nothing until `run` is called"]
pub struct Suite {
    dir: PathBuf,
    metrics: Vec<Metric>,
    thresholds: BTreeMap<Metric, f64>,
    criteria: Vec<Criteria>,
    retrieval: Vec<RetrievalMetric>,
    tags: Vec<String>,
    judge: Option<Judge>,
    report_dir: Option<PathBuf>,
    baseline: Option<PathBuf>,
    regression_tolerance: Option<f64>,
    gates: Option<Gates>,
    args: Option<Arguments>,
    mode: Option<Mode>,
    pipeline: Option<Arc<PipelineFn>>,
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
    /// The report of the trials this process ran.
    pub report: Report,
    /// The report of the whole run: every process's trials, each once.
    pub run_report: Report,
    /// Regressions beyond the tolerance among this process's trials, when a
    /// baseline was given.
    pub regressions: usize,
    /// The gates checked over the whole run (also in `run_report`); empty
    /// when none were set or the run was not whole here (filtered, or one
    /// process of a nextest run: `cargo ragaliq report` checks those).
    pub gates: Vec<gates::GateResult>,
}

impl SuiteOutcome {
    /// 0 when every trial passed (or failed as a pass-rate gate allows), no
    /// regression exceeded the tolerance and every gate checked passed,
    /// else 101.
    #[must_use]
    pub fn exit_code(&self) -> ExitCode {
        if self.conclusion.has_failed()
            || self.regressions > 0
            || self.gates.iter().any(gates::GateResult::failed)
        {
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

    /// Criteria every case is judged against, each its own trial
    /// (`case::criteria:<name>`), beside the criteria a case file gives
    /// (`criteria: {name: "…"}`).
    ///
    /// ```
    /// use ragaliq::Criteria;
    /// let suite = ragaliq::suite("tests/rag_cases")
    ///     .criteria(Criteria::new("Never promises a refund").named("no-promise"));
    /// # let _ = suite;
    /// ```
    pub fn criteria(mut self, criteria: impl Into<Criteria>) -> Self {
        self.criteria.push(criteria.into());
        self
    }

    /// Retrieval metrics measured on every case against its labels, each its
    /// own trial named after the metric (`case::recall@5`), with no judge
    /// and no recording. A metric's own threshold
    /// (`recall_at(5).threshold(0.8)`) fails a case below it; without one
    /// the metric is measured (every case passes, the run's mean is
    /// reported, and a gate may hold it). A case's `thresholds: {retrieval:
    /// …}` wins over both; `.threshold(Metric::Retrieval, …)` and
    /// `thresholds.retrieval` set it for metrics that name none. A case
    /// without retrieval labels fails these trials as a configuration
    /// error.
    ///
    /// ```
    /// use ragaliq::retrieval::{mrr, ndcg_at, recall_at};
    /// let suite = ragaliq::suite("tests/rag_cases")
    ///     .metrics([])
    ///     .retrieval([recall_at(5).threshold(0.8), mrr(), ndcg_at(10)]);
    /// # let _ = suite;
    /// ```
    pub fn retrieval(mut self, metrics: impl IntoIterator<Item = RetrievalMetric>) -> Self {
        self.retrieval = metrics.into_iter().collect();
        self
    }

    /// The suite's threshold for `metric` (a case's own thresholds win).
    pub fn threshold(mut self, metric: Metric, threshold: f64) -> Self {
        self.thresholds.insert(metric, threshold);
        self
    }

    /// Runs only cases with at least one of these tags. Set here, they are
    /// the suite's own: `RAGALIQ_TAGS` (comma-separated) chooses the tags
    /// only for a suite that sets none, as what code sets wins over a
    /// variable.
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

    /// Writes `report.json`, `junit.xml`, `summary.md` and `report.html`
    /// here. `RAGALIQ_REPORT_DIR` names the folder only for a suite that
    /// sets none, as what code sets wins over a variable.
    pub fn report_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.report_dir = Some(dir.into());
        self
    }

    /// Compares scores with a previous `report.json`. `RAGALIQ_BASELINE`
    /// names one only for a suite that sets none, as what code sets wins
    /// over a variable.
    pub fn baseline(mut self, report: impl Into<PathBuf>) -> Self {
        self.baseline = Some(report.into());
        self
    }

    /// Fails the run when a score drops by more than `tolerance` against the baseline.
    pub fn fail_on_regression(mut self, tolerance: f64) -> Self {
        self.regression_tolerance = Some(tolerance);
        self
    }

    /// What the whole run must reach, instead of `ragaliq.toml`'s `[gates]`
    /// (see [`Gates`]): under `cargo test` checked at the end of the run,
    /// each gate's result printed and written into every report, and the
    /// exit code 101 when one fails. A metric under a pass-rate gate may
    /// fail trials on their score: each such trial passes, reported as
    /// failed and allowed, and the gate decides. Not checked on a filtered
    /// run, nor in a process of a cargo-nextest run (one trial each): run
    /// `cargo ragaliq report` over the run's report folder, or its shards'.
    ///
    /// ```
    /// use ragaliq::config::Gates;
    /// use ragaliq::retrieval::recall_at;
    /// let suite = ragaliq::suite("tests/rag_cases")
    ///     .retrieval([recall_at(5).threshold(0.8)])
    ///     .gates(Gates::new().pass_rate(0.95).max_drop_of("recall@5", 0.02));
    /// # let _ = suite;
    /// ```
    pub fn gates(mut self, gates: Gates) -> Self {
        self.gates = Some(gates);
        self
    }

    /// The recording mode, instead of the configured one. Under `CI` a
    /// mode that calls the judge (anything but replay) is ignored, as a
    /// file's `mode` is, with one line on stderr: a committed setting never
    /// makes CI call a judge. A judge built in code and given with
    /// [`judge`](Self::judge) takes the mode whatever `CI` says (its
    /// caller chose what it calls).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// The pipeline under test: for each case whose file gives no
    /// `response`, `pipeline` is called with the case's query (and the
    /// conversation before it, where there is one) and the case's loopback
    /// endpoint, and what it retrieved and answered is graded. Its model
    /// calls through the endpoint are recorded in the case's recording with
    /// the judge's exchanges (kept under the trial `pipeline`), replayed in
    /// CI, and counted apart from the judge's in the reports. It runs once
    /// per case and process, whatever the number of metrics. A case file's
    /// frozen `response` is graded as it is, without the pipeline; the
    /// passages the pipeline returns replace the file's `context` (and its
    /// IDs the file's `retrieved_ids`) when it returns any.
    ///
    /// ```no_run
    /// use ragaliq::pipeline::Answered;
    /// # async fn my_answer(_: &str, _: &str) -> Result<(Vec<String>, String), std::io::Error> { unimplemented!() }
    /// fn main() -> std::process::ExitCode {
    ///     ragaliq::suite("tests/rag_cases")
    ///         .pipeline(|input, app| async move {
    ///             let (passages, answer) = my_answer(&app.openai_base_url(), &input.query).await?;
    ///             Ok::<_, std::io::Error>(Answered::new(answer).context(passages))
    ///         })
    ///         .run()
    /// }
    /// ```
    pub fn pipeline<F, Fut, E>(mut self, pipeline: F) -> Self
    where
        F: Fn(crate::pipeline::Input, crate::pipeline::Pipeline) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<crate::pipeline::Answered, E>> + 'static,
        E: std::fmt::Display + 'static,
    {
        self.pipeline = Some(Arc::new(move |input, app| {
            let answered = pipeline(input, app);
            Box::pin(async move { answered.await.map_err(|e| e.to_string()) })
        }));
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
            match &self.judge {
                // A judge built in code over a transport of its caller's
                // (a server on 127.0.0.1, a canned one): the caller chose
                // what it calls, and the mode with it.
                Some(j) if !j.configured() => config.set_mode_for_own_judges(mode),
                // A committed setting like a file's mode: under CI it may
                // only ask for replay (`Config::set_mode`).
                _ => config.set_mode(mode),
            }
        }
        let judge = match self.judge {
            Some(j) => {
                crate::judge::say_mode_warning(&config);
                j
            }
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
                e.relativize(&root);
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

        let gates = Arc::new(self.gates.unwrap_or_else(|| config.gates.clone()));
        gates.check("the suite's gates")?;
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
        let manifest_dir: &'static str = Box::leak(root.display().to_string().into_boxed_str());
        let workspace = crate::record::workspace_root(manifest_dir);
        let package_in_workspace = root
            .strip_prefix(&workspace)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        // Recordings beside the cases, or where RAGALIQ_SNAPSHOT_DIR says
        // (as for `#[rag_test]`).
        let snapshots = env("RAGALIQ_SNAPSHOT_DIR")
            .filter(|d| !d.is_empty())
            .map_or_else(|| dir.join("snapshots"), |d| root.join(d));
        let results: Arc<Mutex<Vec<TrialResult>>> = Arc::default();
        // What the pipeline under test spent, over every case.
        let app_spent: Arc<Mutex<AppSpent>> = Arc::default();
        let mut trials = Vec::new();
        // Each case's texts, for the report's page.
        let texts: BTreeMap<String, CaseText> = cases
            .iter()
            .map(|c| (c.id().to_owned(), CaseText::of(c)))
            .collect();
        for loaded in cases {
            let id = loaded.id().to_owned();
            let location = Location {
                snapshot: snapshots.join(format!("{id}.snap")),
                test: format!("{binary}::{id}"),
                record_command: format!("RAGALIQ_MODE=record cargo test --test {binary} -- {id}::"),
            };
            let recorder = Arc::new(Recorder::new(location, config.mode));
            let state = Arc::new(CaseState {
                judge: judge.with_recorder(recorder.clone()),
                recorder,
                pipeline: self.pipeline.clone(),
                answered: std::sync::OnceLock::new(),
                app_spent: app_spent.clone(),
                source_file: package_in_workspace
                    .join(&loaded.file)
                    .display()
                    .to_string(),
                module_path: binary.clone(),
                manifest_dir,
                loaded,
                gates: gates.clone(),
            });
            let criteria = self.criteria.iter().chain(&state.loaded.criteria);
            let subjects: Vec<TrialOf> = self
                .metrics
                .iter()
                .map(|m| TrialOf::Metric(*m))
                .chain(criteria.map(|c| TrialOf::Criteria(c.clone())))
                .chain(self.retrieval.iter().map(|m| TrialOf::Retrieval(*m)))
                .collect();
            for subject in subjects {
                let metric = subject.metric();
                let own = match &subject {
                    TrialOf::Retrieval(m) => m.threshold_given(),
                    _ => None,
                };
                let threshold = state
                    .loaded
                    .thresholds
                    .get(&metric)
                    .copied()
                    .or(own)
                    .or_else(|| self.thresholds.get(&metric).copied())
                    .or_else(|| {
                        // Measured without a judge: the configured default
                        // is read here, not by the judge.
                        (metric == Metric::Retrieval).then(|| config.threshold(metric))
                    });
                let state = state.clone();
                let results = results.clone();
                let handle = runtime.handle().clone();
                trials.push(Trial::test(
                    format!("{id}::{}", subject.label()),
                    move || state.run_trial(&subject, threshold, &handle, &results),
                ));
            }
        }

        let conclusion = libtest_mimic::run(&args, trials);
        drop(runtime);
        let results = std::mem::take(&mut *crate::core::sync::lock(&results));
        let suite_name = self.dir.display().to_string();
        let info = JudgeInfo {
            provider: judge.provider().to_owned(),
            model: judge.model().to_owned(),
        };
        let app = *crate::core::sync::lock(&app_spent);
        let spending = Spending {
            usage: judge.usage(),
            cost_usd: judge.cost(),
            budget_usd: judge.budget(),
            skipped_calls: judge.skipped_calls(),
            pipeline: app.ran.then_some(report::PipelineSpending {
                usage: app.usage,
                cost_usd: (!app.unpriced).then_some(app.cost_usd),
            }),
        };
        let mut report = Report::new(
            &suite_name,
            info.clone(),
            config.mode,
            &crate::run::current().id,
            results.clone(),
            &[spending],
        )
        .with_cases(&texts);
        let baseline = self
            .baseline
            .or_else(|| env("RAGALIQ_BASELINE").map(PathBuf::from))
            .or_else(|| gates.baseline.clone())
            .map(|p| root.join(p));
        let previous = match &baseline {
            Some(path) => Some(read_report(path)?),
            None => None,
        };
        // Gates hold a whole run: not a filtered one, nor one process of a
        // nextest run (which runs one trial per process).
        let whole = if args.filter.is_some() || !args.skip.is_empty() {
            Err("the run was filtered; they hold a whole run")
        } else if env("NEXTEST_RUN_ID").is_some() {
            Err("each process of a cargo-nextest run runs one trial")
        } else {
            Ok(())
        };
        let check_gates = !gates.is_empty() && !args.list && whole.is_ok();
        let tolerance = self.regression_tolerance;
        let regressions = previous
            .as_ref()
            .map_or(0, |p| report.compare(p, tolerance));
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
        let step_summary = env("GITHUB_STEP_SUMMARY").map(PathBuf::from);
        // The run's report, compared and written: called with the run's
        // fragments' lock held, so it is built from every fragment written
        // so far and no process that saw fewer can write after it.
        let write_run_report = |run_report: &mut Report| -> Result<(), SuiteError> {
            if let Some(p) = &previous {
                run_report.compare(p, tolerance);
            }
            if check_gates {
                run_report.gates = gates::check(run_report, &gates, previous.as_ref());
            }
            if let Some(dir) = &report_dir {
                let _guard = crate::run::lock::exclusive(dir).map_err(|e| SuiteError::Report {
                    path: dir.clone(),
                    message: e.to_string(),
                })?;
                run_report
                    .write_all(dir)
                    .map_err(|(path, message)| SuiteError::Report { path, message })?;
            }
            if let Some(summary) = &step_summary {
                run_report
                    .write_step_summary(summary)
                    .map_err(|(path, message)| SuiteError::Report { path, message })?;
            }
            Ok(())
        };
        let mut run_report = report.clone();
        if !args.list && !results.is_empty() {
            let fragment = fragments::Fragment {
                pid: std::process::id(),
                seq: 0,
                results,
                spending,
            };
            match fragments::dir(&suite_name) {
                Some(dir) => {
                    run_report = fragments::publish(&dir, fragment, |all| {
                        let mut run = fragments::report(&suite_name, info, config.mode, all)
                            .with_cases(&texts);
                        write_run_report(&mut run).map(|()| run)
                    })
                    .map_err(|message| SuiteError::Report { path: dir, message })??;
                }
                None => {
                    eprintln!(
                        "warning: the run's folder cannot be used, so this process's results are not shared with the run; the report holds this process's trials only"
                    );
                    write_run_report(&mut run_report)?;
                }
            }
        }
        if !args.list && !run_report.results.is_empty() {
            match whole {
                _ if gates.is_empty() => {}
                Ok(()) => {
                    if let Some(line) = run_report.gates_line() {
                        println!("\n{line}");
                    }
                    for g in &run_report.gates {
                        println!("{g}");
                    }
                }
                Err(why) => println!(
                    "\ngates not checked here: {why}; `cargo ragaliq report` checks them over a run's report folder"
                ),
            }
        }
        let gates = run_report.gates.clone();
        Ok(SuiteOutcome {
            conclusion,
            report,
            run_report,
            regressions,
            gates,
        })
    }
}

/// A previous run's report: a `report.json`, or the folder holding one.
fn read_report(path: &Path) -> Result<Report, SuiteError> {
    let file = if path.is_dir() {
        path.join("report.json")
    } else {
        path.to_owned()
    };
    Report::read(&file).map_err(|message| SuiteError::Report {
        path: file,
        message,
    })
}

/// What one trial measures.
enum TrialOf {
    Metric(Metric),
    Criteria(Criteria),
    /// Against the case's labels, with no judge.
    Retrieval(RetrievalMetric),
}

impl TrialOf {
    fn metric(&self) -> Metric {
        match self {
            TrialOf::Metric(m) => *m,
            TrialOf::Criteria(_) => Metric::Criteria,
            TrialOf::Retrieval(_) => Metric::Retrieval,
        }
    }

    fn name(&self) -> Option<String> {
        match self {
            TrialOf::Metric(_) => None,
            TrialOf::Criteria(c) => Some(c.name().to_owned()),
            TrialOf::Retrieval(m) => Some(m.name()),
        }
    }

    /// `faithfulness`, `criteria:<name>`: the trial's name after the case.
    fn label(&self) -> String {
        report::label(self.metric(), self.name().as_deref())
    }
}

/// What the pipeline under test spent over a suite's cases.
#[derive(Clone, Copy, Debug, Default)]
struct AppSpent {
    usage: crate::core::Usage,
    cost_usd: f64,
    /// Live calls to a model with no known price.
    unpriced: bool,
    /// Whether any case ran the pipeline.
    ran: bool,
}

struct CaseState {
    loaded: LoadedCase,
    judge: Judge,
    recorder: Arc<Recorder>,
    /// The pipeline under test, when the suite has one.
    pipeline: Option<Arc<PipelineFn>>,
    /// The case as the pipeline answered it, once per process.
    answered: std::sync::OnceLock<Result<crate::core::RagCase, (String, bool)>>,
    app_spent: Arc<Mutex<AppSpent>>,
    /// The run's gates: a pass-rate gate allows its metric's low scores.
    gates: Arc<Gates>,
    /// The case file, relative to the workspace (insta's `source:`).
    source_file: String,
    module_path: String,
    manifest_dir: &'static str,
}

impl CaseState {
    /// One trial: the evaluation, then the case's recording through insta.
    fn run_trial(
        &self,
        subject: &TrialOf,
        threshold: Option<f64>,
        handle: &tokio::runtime::Handle,
        results: &Mutex<Vec<TrialResult>>,
    ) -> Result<(), Failed> {
        let options = EvalOptions {
            threshold,
            ..EvalOptions::default()
        };
        // A retrieval metric asks no judge and touches no recording.
        if let TrialOf::Retrieval(m) = subject {
            let metric = match threshold {
                Some(t) => m.threshold(t),
                None => *m,
            };
            let outcome = match &self.loaded.conversation {
                Some(c) => retrieval_by_turn(&metric, c),
                None => metric.evaluate(&self.loaded.case).map_err(Error::from),
            };
            return self.conclude(subject, outcome, threshold, None, results);
        }
        let label = subject.label();
        let judge = self.judge.for_trial(label.clone());
        // A conversation's trial grades every turn, as its case file holds
        // them: a suite's pipeline answers single questions only.
        let answered = match &self.loaded.conversation {
            Some(c) => Ok(Assessed::Conversation(c)),
            None => self.answered(handle).as_ref().map(Assessed::Case).map_err(
                |(message, not_recorded)| Error::Pipeline {
                    message: message.clone(),
                    not_recorded: *not_recorded,
                },
            ),
        };
        let outcome = answered.and_then(|case| {
            handle.block_on(async {
                match subject {
                    TrialOf::Metric(m) => judge.evaluate_with(*m, &case, &options).await,
                    TrialOf::Criteria(c) => judge.criteria_with(&case, c, &options).await,
                    TrialOf::Retrieval(_) => unreachable!("measured without a judge, above"),
                }
            })
        });
        // A trial the judge could not finish keeps its earlier exchanges.
        let complete = match &outcome {
            Ok(_) => true,
            Err(e) => e.is_configuration(),
        };
        let function = format!("{}::{label}", self.loaded.id());
        let site = Site {
            file: &self.source_file,
            module_path: &self.module_path,
            function: &function,
            line: u32::try_from(self.loaded.line).unwrap_or(u32::MAX),
            manifest_dir: self.manifest_dir,
        };
        let snapshot = self.recorder.location().snapshot.clone();
        let description = self.recorder.description();
        let asserted = catch_unwind(AssertUnwindSafe(|| {
            self.recorder.commit(Some(&label), complete, |recording| {
                crate::record::assert_snapshot(&snapshot, &recording.to_yaml(), &description, site);
            })
        }));
        let review = match asserted {
            Ok(Ok(_)) => None,
            Ok(Err(e)) => Some(format!("the case's recording cannot be merged: {e}")),
            Err(_) => Some(format!(
                "the case's recording is new or changed and awaits review: run `cargo insta review` (pending beside {}), then commit it; CI replays accepted recordings only",
                snapshot.display()
            )),
        };
        self.conclude(subject, outcome, threshold, review, results)
    }

    /// The case to grade: as its file gives it, or, for a case with no
    /// `response` in a suite with a pipeline, as the pipeline answered it
    /// (run once per process, its calls recorded under the trial
    /// `pipeline`); or what failed, and whether it was the recording.
    fn answered(
        &self,
        handle: &tokio::runtime::Handle,
    ) -> &Result<crate::core::RagCase, (String, bool)> {
        self.answered.get_or_init(|| {
            let case = self.loaded.case.clone();
            let Some(pipeline) = self.pipeline.as_ref().filter(|_| case.response.is_none()) else {
                return Ok(case);
            };
            let app = self
                .judge
                .start_pipeline(Some(PIPELINE_TRIAL.to_owned()))
                .map_err(|e| (e.to_string(), false))?;
            let input = crate::pipeline::Input::new(case.query.clone());
            let result = handle.block_on(pipeline(input, app.clone()));
            let failed = app.check().err();
            self.recorder
                .calls_finished(Some(PIPELINE_TRIAL), result.is_ok() && failed.is_none());
            {
                let mut spent = crate::core::sync::lock(&self.app_spent);
                spent.ran = true;
                spent.usage += app.usage();
                match app.cost() {
                    Some(usd) => spent.cost_usd += usd,
                    None => spent.unpriced = true,
                }
            }
            let notes = app.notes();
            let unrecorded = app.unrecorded();
            drop(app);
            let notes = if notes.is_empty() {
                String::new()
            } else {
                format!(
                    "\nbesides, the pipeline's model answered with errors the application was handed:\n  {}",
                    notes.join("\n  ")
                )
            };
            // What the endpoint could not serve comes first: the
            // application's own error may only follow from it.
            if let Some(text) = failed {
                let own = match &result {
                    Err(e) => format!("\nthe pipeline's own error, which may follow from it: {e}"),
                    Ok(_) => String::new(),
                };
                return Err((format!("{text}{own}{notes}"), unrecorded));
            }
            let answered = result.map_err(|e| {
                (
                    format!("the pipeline under test failed on the case's query: {e}{notes}"),
                    false,
                )
            })?;
            let mut case = case.response(answered.response);
            if !answered.context.is_empty() {
                case.context = answered.context;
            }
            if answered.retrieved_ids.is_some() {
                case.retrieved_ids = answered.retrieved_ids;
            }
            Ok(case)
        })
    }

    fn conclude(
        &self,
        subject: &TrialOf,
        outcome: Result<Evaluation, Error>,
        threshold: Option<f64>,
        review: Option<String>,
        results: &Mutex<Vec<TrialResult>>,
    ) -> Result<(), Failed> {
        let case = &self.loaded;
        let place = format!(
            "case `{}` ({}:{})",
            case.id(),
            case.file.display(),
            case.line
        );
        let metric_kind = subject.metric();
        // What a failure says of the judge and the recording: nothing, for
        // a metric that asks no judge.
        let recording = if metric_kind == Metric::Retrieval {
            String::new()
        } else {
            format!("\n{}", self.recorder.where_line())
        };
        let judge = if metric_kind == Metric::Retrieval {
            String::new()
        } else {
            format!("\njudge: {}", self.judge.describe())
        };
        let metric = subject.label();
        let expect_fail = case.expect_fail.contains(&metric_kind);
        let (mut result, mut message) = match outcome {
            Ok(eval) => {
                let message = if let Some(reason) = eval.undecided_reason() {
                    Some(format!(
                        "{place}: {metric}: {reason} (not a low score)\n{eval}{recording}"
                    ))
                } else if eval.awaiting.is_some() {
                    let walk = format!(
                        "give the verdict (kept in the recording, replayed in CI): cargo ragaliq review {}",
                        self.recorder.location().snapshot.display()
                    );
                    if eval.passed {
                        use std::io::Write as _;
                        let _ = writeln!(
                            std::io::stderr(),
                            "ragaliq: {place}: {metric} awaits a person and passes meanwhile (uncertain = \"pass\"); {walk}"
                        );
                        None
                    } else {
                        Some(format!(
                            "{place}: {metric}: AWAITING A PERSON: the judge is unsure, so this trial fails until a person gives the verdict (not a low score)\n{walk}\n{eval}\n{recording}"
                        ))
                    }
                } else if eval.passed != expect_fail {
                    None
                } else if expect_fail {
                    Some(format!(
                        "{place}: {metric}: a bad answer was not caught (the case expects it to fail): {:.2} >= threshold {:.2}\n{eval}{recording}",
                        eval.score, eval.threshold
                    ))
                } else {
                    Some(format!("{place}\n{eval}{recording}"))
                };
                (TrialResult::from_evaluation(case, eval), message)
            }
            Err(error) => {
                let kind = if error.is_configuration() {
                    "configuration error (the case cannot be scored this way; this is not a low score)"
                } else if error.is_budget() {
                    "not evaluated: the cost budget is spent"
                } else if error.is_pipeline() && error.is_recording() {
                    "the pipeline's recording could not serve its call (a setup problem: this is not a low score, and the judge was not asked)"
                } else if error.is_pipeline() {
                    "the pipeline under test could not answer (this is not a low score, and the judge was not asked)"
                } else if error.is_recording() {
                    crate::error::NOT_RECORDED
                } else if error.is_queued() {
                    "queued for the batch (no score yet: the next round of `cargo ragaliq record --batch` scores it)"
                } else {
                    "the judge failed (this is not a low score)"
                };
                let threshold =
                    threshold.unwrap_or_else(|| self.judge.default_threshold(metric_kind));
                let message = format!("{place}: {metric}: {kind}\n{error}{judge}{recording}");
                (
                    TrialResult::from_error(case, metric_kind, subject.name(), threshold, &error),
                    Some(message),
                )
            }
        };
        if let Some(review) = review {
            result.pending_review = matches!(result.outcome, Outcome::Passed | Outcome::Failed);
            message = Some(match message {
                Some(m) => format!("{m}\n{review}"),
                None => format!("{place}: {metric}: {review}"),
            });
        }
        // A low score on a metric a pass-rate gate holds: said, and left to
        // the gate (the trial passes; the report says it failed, allowed).
        if message.is_some() && gates::allowed(&result, &self.gates) {
            result.gated = true;
            if let Some(m) = message.take() {
                eprintln!(
                    "{m}\n(allowed: a pass-rate gate holds {metric}, and decides the run at its end)"
                );
            }
        }
        crate::core::sync::lock(results).push(result);
        match message {
            Some(m) => Err(Failed::from(m)),
            None => Ok(()),
        }
    }
}

/// The trial a suite's pipeline calls are kept under in a case's recording.
const PIPELINE_TRIAL: &str = "pipeline";
/// A retrieval metric on every turn of a conversation, against each turn's
/// labels: one evaluation over the turns (each must pass).
fn retrieval_by_turn(
    metric: &RetrievalMetric,
    conversation: &crate::core::Conversation,
) -> Result<Evaluation, Error> {
    let mut turns = Vec::with_capacity(conversation.turns.len());
    for n in 1..=conversation.turns.len() {
        let case = conversation.case(n)?;
        let mut e = metric.evaluate(&case).map_err(|e| Error::InTurn {
            turn: n,
            source: Box::new(e.into()),
        })?;
        e.turn = Some(n);
        e.question = Some(case.query);
        turns.push(e);
    }
    Ok(Evaluation::of_turns(turns))
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
