//! Support for the code `#[rag_test]` and the assertion macros generate.
//! Not public API: reached only as `::ragaliq::__private`, and free to change.

use crate::config::Config;
use crate::core::Mode;
use crate::core::RagCase;
use crate::core::Samples;
use crate::core::VerdictWeights;
use crate::core::{Assessed, Gradable};
use crate::core::{Evaluation, Metric};
use crate::error::NOT_RECORDED;
use crate::judge::Judge;
use crate::metrics::EvalOptions;
use crate::record::{Binder, Location, Recorder, Site};
use futures_util::future::BoxFuture;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};

pub use crate::recorded::{Here, recorded_judge};
pub use ragaliq_macros::__assertion_options;

/// The type name of `f`: `recorded_judge!` reads the enclosing function's
/// path from a function it defines.
pub fn type_name_of<T>(_: T) -> &'static str {
    std::any::type_name::<T>()
}
pub use tokio;

/// Warns about `#[should_panic]` without `expected` on a `#[rag_test]`: a
/// deprecation note is the one compiler warning a macro can raise.
#[deprecated(
    note = "`#[should_panic]` without `expected` passes on any panic of the test's own code (ragaliq fails it when an assertion failed for any reason but a low score); say what must panic, `#[should_panic(expected = \"failed for case\")]` for a low score, or use `assert_caught!` to test that a bad answer is caught"
)]
pub const fn should_panic_without_expected() {}

/// What `#[rag_test]` knows about the test it wraps, from the user's crate.
#[derive(Clone, Copy, Debug)]
pub struct TestSpec {
    /// The recording's name (the function's name unless `name = "…"`).
    pub name: &'static str,
    /// The function's name.
    pub function: &'static str,
    /// `module_path!()` in the user's crate.
    pub module_path: &'static str,
    /// `file!()` in the user's crate.
    pub file: &'static str,
    /// `line!()` of the attribute.
    pub line: u32,
    /// `env!("CARGO_MANIFEST_DIR")` of the user's crate.
    pub manifest_dir: &'static str,
    /// `env!("CARGO_PKG_NAME")` of the user's crate.
    pub package: &'static str,
    /// `mode = "…"`, already validated.
    pub mode: Option<Mode>,
    /// `judge = "provider:model"`.
    pub judge: Option<&'static str>,
    /// `config = "path/to/judge.toml"`, relative to the package root.
    pub config: Option<&'static str>,
    /// `flavor = "multi_thread"`.
    pub multi_thread: bool,
    /// The test also carries `#[should_panic]`.
    pub should_panic: bool,
}

/// How an assertion ended, for tests that expect a panic: only a score may
/// satisfy `#[should_panic]`, never a judge or configuration failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Failure {
    Score,
    Judge,
}

tokio::task_local! {
    /// How the last assertion of the test whose body is running failed: a
    /// value per test body (the task `run_test` drives), so tests running at
    /// once never see each other's. An assertion in a task the body spawns
    /// is outside it, and not seen.
    static FAILURE: Arc<Mutex<Option<Failure>>>;

    /// The messages of the test body's assertions that await a person,
    /// said when the body ends: an assertion awaiting a person does not
    /// stop the test, so the assertions after it are still asked (and,
    /// while recording, recorded: the verdict a person gives then replays
    /// a whole test, not one that stops at its first unsure item), and
    /// every awaiting item is listed at once.
    static AWAITING: Arc<Mutex<Vec<String>>>;
}

/// Keeps `message` for the end of the test body; `false` outside a
/// `#[rag_test]` body, where the assertion fails at once.
fn defer_awaiting(message: &str) -> bool {
    AWAITING
        .try_with(|cell| crate::core::sync::lock(cell).push(message.to_owned()))
        .is_ok()
}

fn note_failure(failure: Failure) {
    let _ = FAILURE.try_with(|cell| *crate::core::sync::lock(cell) = Some(failure));
}

/// Runs one `#[rag_test]`: builds the judge and its recorder, runs the body,
/// then asserts the recording through insta, as the test's own snapshot.
#[track_caller]
pub fn run_test(
    spec: TestSpec,
    body: impl FnOnce(Judge) -> Pin<Box<dyn Future<Output = ()>>> + 'static,
) {
    // Generic only in name: the work is in `run_boxed`, compiled once here
    // rather than once per test in the user's crate.
    run_boxed(spec, Box::new(body));
}

/// A test's body, as [`run_test`] takes it.
type Body = Box<dyn FnOnce(Judge) -> Pin<Box<dyn Future<Output = ()>>>>;

#[track_caller]
fn run_boxed(spec: TestSpec, body: Body) {
    let env = |name: &str| -> Option<String> {
        match (name, spec.judge) {
            ("RAGALIQ_JUDGE", Some(judge)) => Some(judge.to_owned()),
            ("RAGALIQ_CONFIG", _) if spec.config.is_some() => spec.config.map(str::to_owned),
            _ => std::env::var(name).ok(),
        }
    };
    let root = Path::new(spec.manifest_dir);
    // The attribute's mode is its own source, not a stand-in for
    // RAGALIQ_MODE: under CI it may only ask for replay.
    let attribute = spec.mode.map(|mode| (mode, test_label(&spec)));
    let config = match Config::load_with(root, &env, attribute)
        .and_then(|c| Judge::from_config(&c).map(|j| (c, j)))
    {
        Ok(pair) => pair,
        // A panic here would satisfy `#[should_panic]`, and a setup
        // problem is no low score: the test returns, and fails as one that
        // did not panic.
        Err(e) if spec.should_panic => {
            eprintln!(
                "ragaliq configuration error (this test cannot run as configured): {e}; this #[should_panic] test is failed instead of passing on it"
            );
            return;
        }
        Err(e) => panic!("ragaliq configuration error (this test cannot run as configured): {e}"),
    };
    let (config, judge) = config;
    let location = Location {
        snapshot: snapshot_dir(&spec, &env).join(format!(
            "{}__{}.snap",
            spec.module_path.replace("::", "__"),
            spec.name.replace(['/', '\\'], "__")
        )),
        test: test_label(&spec),
        record_command: record_command(&spec),
    };
    // One binder per recording: a `recorded_judge!()` in the body, or
    // another test of the same name, fails here or there with both named.
    // Live mode reads and writes no recording, so binds none.
    let binder = Binder::here("#[rag_test]", spec.file, spec.line, test_label(&spec));
    if config.mode != Mode::Live
        && let Err(e) = crate::record::bind(&location.snapshot, &binder)
    {
        if spec.should_panic {
            eprintln!(
                "ragaliq: {e}\n  this #[should_panic] test is failed instead of passing on it"
            );
            return;
        }
        panic!("{e}");
    }
    let recorder = Arc::new(Recorder::bound(location, config.mode, &binder));
    let judge = judge.with_recorder(recorder.clone());
    // Shares the pipeline's endpoint with the body's judge, if the body
    // starts one: what it served is read after the body.
    let kept = judge.clone();

    let runtime = if spec.multi_thread {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    };
    let runtime = match runtime {
        Ok(rt) => rt,
        Err(e) => panic!("ragaliq: cannot start the test's tokio runtime: {e}"),
    };
    let noted: Arc<Mutex<Option<Failure>>> = Arc::default();
    let awaiting: Arc<Mutex<Vec<String>>> = Arc::default();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        runtime
            .block_on(FAILURE.scope(noted.clone(), AWAITING.scope(awaiting.clone(), body(judge))))
    }));
    drop(runtime);
    let failure = *crate::core::sync::lock(&noted);
    let awaiting = std::mem::take(&mut *crate::core::sync::lock(&awaiting));
    let awaiting = (!awaiting.is_empty()).then(|| awaiting.join("\n\n"));
    // What the pipeline's endpoint could not serve fails the test, whatever
    // the application made of the error it was handed.
    let app = kept.started_pipeline();
    drop(kept);
    let app_failed = app.as_ref().and_then(|p| p.check().err());
    if app.is_some() {
        recorder.calls_finished(None, app_failed.is_none());
    }

    // The recording is asserted whether or not the body passed, so insta
    // sees it in use (`--unreferenced`) and keeps what was paid for.
    let site = Site {
        file: spec.file,
        module_path: spec.module_path,
        function: spec.function,
        line: spec.line,
        manifest_dir: spec.manifest_dir,
    };
    let description = recorder.description();
    let snapshot = recorder.location().snapshot.clone();
    let asserted = catch_unwind(AssertUnwindSafe(|| {
        recorder.commit(None, outcome.is_ok(), |recording| {
            crate::record::assert_snapshot(&snapshot, &recording.to_yaml(), &description, site);
        })
    }));

    // Stops the endpoint once the recording is written.
    let notes = app
        .as_ref()
        .map(crate::pipeline::Pipeline::notes)
        .unwrap_or_default();
    drop(app);
    if let Some(text) = app_failed {
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(
                "\n\nbesides, the pipeline's model answered with errors the application was handed:\n  {}",
                notes.join("\n  ")
            )
        };
        let own = match &outcome {
            // The application was handed the same message as its model's
            // error, and may have failed on it: said once.
            Err(payload)
                if panic_text(payload).contains(&text.chars().take(60).collect::<String>()) =>
            {
                "\n\n(the test failed on it too: the application got this message as its model's error)".to_owned()
            }
            Err(payload) => format!(
                "\n\nthe test's own failure, which may follow from it:\n{}",
                panic_text(payload)
            ),
            Ok(()) => String::new(),
        };
        if spec.should_panic {
            eprintln!(
                "{text}{notes}{own}\nragaliq: the pipeline's calls failed, which says nothing about the answer; this #[should_panic] test is failed instead of passing on it"
            );
            return;
        }
        panic!("{text}{notes}{own}");
    }
    if outcome.is_err() && !notes.is_empty() {
        eprintln!(
            "ragaliq: the pipeline's model answered with errors the application was handed:\n  {}",
            notes.join("\n  ")
        );
    }
    if spec.should_panic {
        // Under `#[should_panic]` any panic passes the test. Only a score
        // may: a judge failure, an item awaiting a person or a recording
        // that awaits review returns normally here, so the test fails
        // with "did not panic".
        if let Some(text) = &awaiting {
            eprintln!(
                "{text}\nragaliq: this #[should_panic] test is failed until a person gives the verdict, instead of passing on an unsure reading"
            );
            return;
        }
        if outcome.is_err() && failure == Some(Failure::Judge) {
            eprintln!(
                "ragaliq: the evaluation failed (see above), which says nothing about the answer; this #[should_panic] test is failed instead of passing on it. Use assert_caught! to test that a bad answer is caught."
            );
            return;
        }
        if let Err(payload) = asserted {
            eprintln!(
                "ragaliq: the test's recording is new or changed and awaits review ({}); this #[should_panic] test is failed until it is accepted: {}",
                snapshot.display(),
                panic_text(&payload)
            );
            return;
        }
        if let Ok(Err(e)) = &asserted {
            eprintln!("ragaliq: {e}; this #[should_panic] test is failed instead of passing on it");
            return;
        }
        if let Err(payload) = outcome {
            resume_unwind(payload);
        }
        return;
    }
    // The body's own failure is the one to report; the recording's only
    // when the body passed.
    if let Err(payload) = outcome {
        if let Some(text) = &awaiting {
            eprintln!("{text}");
        }
        resume_unwind(payload);
    }
    match (asserted, awaiting) {
        (Err(payload), Some(text)) => panic!("{text}\n\n{}", panic_text(&payload)),
        (Err(payload), None) => resume_unwind(payload),
        (Ok(Err(e)), Some(text)) => panic!("{text}\n\n{e}"),
        (Ok(Err(e)), None) => panic!("{e}"),
        (Ok(Ok(_)), Some(text)) => panic!("{text}"),
        (Ok(Ok(_)), None) => say_reviewed(&recorder, &spec),
    }
}

/// Says, outside the test harness's capture (so it shows in the run's
/// output even for a test that passed), that a test was decided in part by
/// person's verdicts from its recording: never a silent pass.
fn say_reviewed(recorder: &Recorder, spec: &TestSpec) {
    use std::io::Write as _;
    let n = recorder.reviewed_used();
    if n == 0 {
        return;
    }
    let path = relative(&recorder.location().snapshot);
    let line = format!(
        "ragaliq: `{}` used {} from {} in place of the judge's reading\n",
        test_label(spec),
        if n == 1 {
            "1 verdict given by a person".to_owned()
        } else {
            format!("{n} verdicts given by a person")
        },
        path.display()
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// `path` as the person who ran `cargo test` types it: relative to the
/// folder they ran it in when it lies inside it, else absolute. That
/// folder is the shell's `PWD`, which cargo leaves as it was while it runs
/// the test in the package's folder: for `cargo test -p shop` in a
/// workspace, the workspace root, not `shop/`. Without `PWD` (a shell that
/// sets none) the path is absolute, which works from anywhere.
fn relative(path: &Path) -> PathBuf {
    relative_to(path, std::env::var_os("PWD").map(PathBuf::from).as_deref())
}

fn relative_to(path: &Path, pwd: Option<&Path>) -> PathBuf {
    let Some(here) = pwd.filter(|p| p.is_absolute() && p.is_dir()) else {
        return path.to_path_buf();
    };
    if let Ok(inside) = path.strip_prefix(here) {
        return inside.to_path_buf();
    }
    // The shell's folder may name a link the test's paths resolve.
    let (Ok(here), Some(parent)) = (here.canonicalize(), path.parent()) else {
        return path.to_path_buf();
    };
    match (parent.canonicalize(), path.file_name()) {
        (Ok(parent), Some(name)) => parent
            .strip_prefix(&here)
            .map_or_else(|_| path.to_path_buf(), |p| p.join(name)),
        _ => path.to_path_buf(),
    }
}

/// The commands that overrule what failed an evaluation, each on one item
/// (a claim, a passage, the answer), for a failure message: empty when
/// there is no recording to keep a person's verdict in. For a
/// conversation, the items of every turn that failed, each named.
fn overrule_hint(eval: &Evaluation, judge: &Judge, what: &What<'_>, expect: Expect) -> String {
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
fn awaiting_hint(eval: &Evaluation, judge: &Judge, what: &What<'_>) -> String {
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

/// A line on the process's standard error, outside the test harness's
/// capture: an evaluation that awaits a person is never a silent pass.
fn say_awaiting(line: &str) {
    use std::io::Write as _;
    let _ = std::io::stderr().write_all(line.as_bytes());
}

fn panic_text(payload: &Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "snapshot assertion failed".into())
}

/// `RAGALIQ_SNAPSHOT_DIR` (relative to the package), else `snapshots/` beside
/// the test file, as insta places snapshots.
fn snapshot_dir(spec: &TestSpec, env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    let manifest = Path::new(spec.manifest_dir);
    if let Some(dir) = env("RAGALIQ_SNAPSHOT_DIR").filter(|d| !d.is_empty()) {
        return manifest.join(dir);
    }
    source_path(spec)
        .parent()
        .unwrap_or(manifest)
        .join("snapshots")
}

/// The test file's absolute path. `file!()` is relative to the workspace
/// root, which is the package folder or one of its ancestors.
fn source_path(spec: &TestSpec) -> PathBuf {
    crate::record::workspace_root(spec.manifest_dir).join(spec.file)
}

fn test_label(spec: &TestSpec) -> String {
    format!("{}::{}", spec.module_path, spec.function)
}

/// `RAGALIQ_MODE=record cargo test -p pkg --test rag -- refund_policy --exact`.
fn record_command(spec: &TestSpec) -> String {
    let source = source_path(spec);
    let relative = source
        .strip_prefix(spec.manifest_dir)
        .unwrap_or(Path::new(spec.file));
    let mut parts: Vec<String> = vec![
        "RAGALIQ_MODE=record cargo test".into(),
        format!("-p {}", spec.package),
    ];
    let crate_name = spec.module_path.split("::").next().unwrap_or_default();
    match relative
        .components()
        .next()
        .and_then(|c| c.as_os_str().to_str())
    {
        Some("tests") => parts.push(format!("--test {crate_name}")),
        Some("src") => parts.push("--lib".into()),
        _ => {}
    }
    let within: Vec<&str> = spec.module_path.split("::").skip(1).collect();
    let path = if within.is_empty() {
        spec.function.to_owned()
    } else {
        format!("{}::{}", within.join("::"), spec.function)
    };
    parts.push(format!("-- {path} --exact"));
    let command = parts.join(" ");
    // The attribute beats RAGALIQ_MODE: a test pinned to replay cannot be
    // recorded by the variable, so the command alone would not record it.
    if spec.mode == Some(Mode::Replay) {
        return format!(
            "{command} (after removing `mode = \"replay\"` from this test's #[rag_test]: it pins replay over RAGALIQ_MODE)"
        );
    }
    command
}

/// What an assertion macro expects of the evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The score reaches the threshold (`assert_faithful!`, …).
    Pass,
    /// The score stays below it: a bad answer is caught (`assert_caught!`).
    Caught,
}

/// Evaluates for an assertion macro: the evaluation when it is as expected,
/// else the failure message. A low score, an undecided judge, a judge
/// failure and a configuration error each read differently.
/// What an assertion macro evaluates.
pub enum What<'a> {
    /// A built-in metric.
    Metric(Metric),
    /// Criteria (`assert_judged!`).
    Criteria(crate::Criteria),
    /// A metric of one's own (`assert_metric!`).
    Custom(&'a crate::CustomMetric),
}

impl From<Metric> for What<'_> {
    fn from(m: Metric) -> Self {
        What::Metric(m)
    }
}

/// Criteria for `assert_judged!`: a `&str`, a `String` or a [`Criteria`](crate::Criteria).
pub fn criteria<'a>(c: impl Into<crate::Criteria>) -> What<'a> {
    What::Criteria(c.into())
}

/// A metric of one's own for `assert_metric!`.
pub fn custom(m: &crate::CustomMetric) -> What<'_> {
    What::Custom(m)
}

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

/// What `assert_retrieved!` measures: one case (its score), or a set of
/// cases (the mean over them).
pub trait Retrievable {
    /// What the assertion returns: an [`Evaluation`], or the set's
    /// [`Mean`](crate::retrieval::Mean).
    type Output;

    /// The metric against `threshold`: what it measured, or the failure
    /// message.
    fn assert_retrieved(
        &self,
        metric: crate::retrieval::RetrievalMetric,
    ) -> Result<Self::Output, String>;
}

/// How a message names a case: its id, else its query.
fn named(case: &RagCase) -> String {
    match &case.id {
        Some(id) => format!("case `{id}`"),
        None => format!("case {:?}", case.query.trim()),
    }
}

/// An input error as a message says it, after the case is named.
fn problem(error: &crate::retrieval::RetrievalError) -> String {
    match error {
        crate::retrieval::RetrievalError::Case(e) => e.problem.clone(),
        other => other.to_string(),
    }
}

impl Retrievable for RagCase {
    type Output = Evaluation;

    fn assert_retrieved(
        &self,
        metric: crate::retrieval::RetrievalMetric,
    ) -> Result<Evaluation, String> {
        match metric.evaluate(self) {
            Ok(eval) if eval.passed => Ok(eval),
            Ok(eval) => {
                note_failure(Failure::Score);
                Err(format!(
                    "assert_retrieved! failed for {}\n{eval}",
                    named(self)
                ))
            }
            Err(e) => {
                note_failure(Failure::Judge);
                Err(format!(
                    "assert_retrieved! configuration error for {}: {} (this is not a low score: the case cannot be measured this way)",
                    named(self),
                    problem(&e)
                ))
            }
        }
    }
}

impl Retrievable for [RagCase] {
    type Output = crate::retrieval::Mean;

    fn assert_retrieved(
        &self,
        metric: crate::retrieval::RetrievalMetric,
    ) -> Result<crate::retrieval::Mean, String> {
        match metric.mean(self) {
            Ok(mean) if mean.passed => Ok(mean),
            Ok(mean) => {
                note_failure(Failure::Score);
                Err(format!(
                    "assert_retrieved! failed for {} cases\n{mean}",
                    mean.cases.len()
                ))
            }
            Err(e) => {
                note_failure(Failure::Judge);
                let which = match &e {
                    crate::retrieval::RetrievalError::Case(c) => match &c.id {
                        Some(id) => format!(" (case `{id}`)"),
                        None => String::new(),
                    },
                    _ => String::new(),
                };
                Err(format!(
                    "assert_retrieved! configuration error for a set of {} cases{which}: {} (this is not a low score: the set cannot be measured this way)",
                    self.len(),
                    problem(&e)
                ))
            }
        }
    }
}

impl Retrievable for Vec<RagCase> {
    type Output = crate::retrieval::Mean;

    fn assert_retrieved(
        &self,
        metric: crate::retrieval::RetrievalMetric,
    ) -> Result<crate::retrieval::Mean, String> {
        self.as_slice().assert_retrieved(metric)
    }
}

impl<const N: usize> Retrievable for [RagCase; N] {
    type Output = crate::retrieval::Mean;

    fn assert_retrieved(
        &self,
        metric: crate::retrieval::RetrievalMetric,
    ) -> Result<crate::retrieval::Mean, String> {
        self.as_slice().assert_retrieved(metric)
    }
}

impl<T: Retrievable + ?Sized> Retrievable for &T {
    type Output = T::Output;

    fn assert_retrieved(
        &self,
        metric: crate::retrieval::RetrievalMetric,
    ) -> Result<T::Output, String> {
        (**self).assert_retrieved(metric)
    }
}

/// `assert_retrieved!`: the comparison `metric >= threshold` on `subject`.
pub fn assert_retrieved<S: Retrievable + ?Sized>(
    subject: &S,
    (metric, threshold): (crate::retrieval::RetrievalMetric, impl Into<f64>),
) -> Result<S::Output, String> {
    subject.assert_retrieved(metric.threshold(threshold.into()))
}

pub use crate::retrieval;
pub use ragaliq_macros::__retrieval_comparison;

/// `samples = 5`, `samples = "auto"` or `samples = Samples::…` in a macro.
#[derive(Clone, Debug, PartialEq)]
pub enum SamplesArg {
    /// A count.
    Count(u32),
    /// A spelling, checked when the assertion runs.
    Text(&'static str),
    /// A value.
    Value(Samples),
}

impl From<u32> for SamplesArg {
    fn from(n: u32) -> Self {
        SamplesArg::Count(n)
    }
}

impl From<&'static str> for SamplesArg {
    fn from(s: &'static str) -> Self {
        SamplesArg::Text(s)
    }
}

impl From<Samples> for SamplesArg {
    fn from(s: Samples) -> Self {
        SamplesArg::Value(s)
    }
}

/// `uncertain = "pass"` or `uncertain = Uncertain::Pass` in a macro.
#[derive(Clone, Debug, PartialEq)]
pub enum UncertainArg {
    /// A spelling, checked when the assertion runs.
    Text(&'static str),
    /// A value.
    Value(crate::Uncertain),
}

impl From<&'static str> for UncertainArg {
    fn from(s: &'static str) -> Self {
        UncertainArg::Text(s)
    }
}

impl From<crate::Uncertain> for UncertainArg {
    fn from(u: crate::Uncertain) -> Self {
        UncertainArg::Value(u)
    }
}

fn resolve_uncertain(arg: Option<UncertainArg>) -> Result<Option<crate::Uncertain>, String> {
    match arg {
        None => Ok(None),
        Some(UncertainArg::Value(u)) => Ok(Some(u)),
        Some(UncertainArg::Text(t)) => t
            .parse()
            .map(Some)
            .map_err(|e: String| format!("uncertain = {e}")),
    }
}

/// The options every assertion macro takes, and the ones only some do. The
/// struct names and fields are what the compiler shows when an option is
/// misspelled: "struct `FaithfulnessOptions` has no field named `treshold`".
macro_rules! options {
    ($( $(#[$doc:meta])* $name:ident { $($field:ident: $ty:ty),* } )*) => {$(
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq)]
        #[allow(missing_docs)]
        pub struct $name {
            pub threshold: Option<f64>,
            pub samples: Option<SamplesArg>,
            pub agreement: Option<f64>,
            pub uncertain: Option<UncertainArg>,
            $(pub $field: Option<$ty>,)*
        }

        impl $name {
            /// The options, checked.
            pub fn resolve(self) -> Result<EvalOptions, String> {
                #[allow(unused_mut)]
                let mut o = EvalOptions {
                    threshold: self.threshold,
                    agreement: self.agreement,
                    samples: resolve_samples(self.samples)?,
                    uncertain: resolve_uncertain(self.uncertain)?,
                    ..EvalOptions::default()
                };
                $(o.$field = self.$field;)*
                Ok(o)
            }
        }
    )*};
}

options! {
    /// `assert_faithful!`'s options.
    FaithfulnessOptions { weights: VerdictWeights }
    /// `assert_correct!`'s options.
    CorrectnessOptions { correctness: crate::Correctness }
    /// `assert_judged!`'s options.
    CriteriaOptions {}
    /// `assert_metric!`'s options.
    CustomOptions {}
    /// `assert_no_hallucination!`'s options.
    HallucinationOptions { confidence_floor: f64 }
    /// `assert_relevant!`'s options.
    RelevanceOptions {}
    /// `assert_context_precision!`'s options.
    ContextPrecisionOptions {}
    /// `assert_context_recall!`'s options.
    ContextRecallOptions {}
    /// `assert_abstains!`'s options.
    AbstentionOptions {}
    /// `assert_consistent!`'s options.
    ConsistencyOptions {}
    /// `assert_remembers!`'s options.
    RetentionOptions {}
}

fn resolve_samples(arg: Option<SamplesArg>) -> Result<Option<Samples>, String> {
    let bad = |v: String| format!("samples = {v} is invalid: expected {}", Samples::EXPECTED);
    match arg {
        None => Ok(None),
        Some(SamplesArg::Value(s)) => s.check().map(|()| Some(s)).map_err(|(v, _)| bad(v)),
        Some(SamplesArg::Count(n)) => Samples::parse(&n.to_string())
            .map(Some)
            .ok_or_else(|| bad(n.to_string())),
        Some(SamplesArg::Text(t)) => Samples::parse(t)
            .map(Some)
            .ok_or_else(|| bad(format!("{t:?}"))),
    }
}

/// The metric names `assert_caught!` takes; a misspelled one is reported
/// by the compiler against this list.
#[allow(non_camel_case_types, missing_docs)]
#[derive(Clone, Copy, Debug)]
pub enum MetricName {
    faithfulness,
    hallucination,
    relevance,
    context_precision,
    context_recall,
    correctness,
    abstention,
    consistency,
    retention,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(module_path: &'static str, file: &'static str) -> TestSpec {
        TestSpec {
            name: "refund_policy",
            function: "refund_policy",
            module_path,
            file,
            line: 1,
            manifest_dir: env!("CARGO_MANIFEST_DIR"),
            package: "ragaliq",
            mode: None,
            judge: None,
            config: None,
            multi_thread: false,
            should_panic: false,
        }
    }

    #[test]
    fn a_test_pinned_to_replay_is_told_to_unpin_before_recording() {
        let mut pinned = spec("reply_corpus", "ragaliq/tests/reply_corpus.rs");
        pinned.mode = Some(Mode::Replay);
        let command = record_command(&pinned);
        assert!(
            command.starts_with("RAGALIQ_MODE=record cargo test -p ragaliq --test reply_corpus")
                && command.contains("after removing `mode = \"replay\"`"),
            "{command}"
        );
    }

    #[test]
    fn record_commands_name_the_target_and_test() {
        assert_eq!(
            record_command(&spec("reply_corpus", "ragaliq/tests/reply_corpus.rs")),
            "RAGALIQ_MODE=record cargo test -p ragaliq --test reply_corpus -- refund_policy --exact"
        );
        assert_eq!(
            record_command(&spec("ragaliq::private::tests", "ragaliq/src/private.rs")),
            "RAGALIQ_MODE=record cargo test -p ragaliq --lib -- private::tests::refund_policy --exact"
        );
    }

    #[test]
    fn snapshots_sit_beside_the_test_file() {
        let s = spec("reply_corpus", "ragaliq/tests/reply_corpus.rs");
        let dir = snapshot_dir(&s, &|_| None);
        assert_eq!(
            dir,
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
        );
        let dir = snapshot_dir(&s, &|k| (k == "RAGALIQ_SNAPSHOT_DIR").then(|| "rec".into()));
        assert_eq!(dir, Path::new(env!("CARGO_MANIFEST_DIR")).join("rec"));
    }

    #[test]
    fn paths_are_shown_from_where_cargo_test_ran() {
        let dir = std::env::temp_dir().join(format!("ragaliq-relative-{}", std::process::id()));
        let snapshots = dir.join("shop/tests/snapshots");
        std::fs::create_dir_all(&snapshots).unwrap();
        let snap = snapshots.join("returns__x.snap");
        // `cargo test -p shop` in the workspace folder.
        assert_eq!(
            relative_to(&snap, Some(&dir)),
            Path::new("shop/tests/snapshots/returns__x.snap")
        );
        // `cargo test` in the package's folder.
        assert_eq!(
            relative_to(&snap, Some(&dir.join("shop"))),
            Path::new("tests/snapshots/returns__x.snap")
        );
        // Through `..` (a folder named by a link resolves the same way).
        assert_eq!(
            relative_to(&snap, Some(&snapshots.join("../.."))),
            Path::new("tests/snapshots/returns__x.snap")
        );
        // Elsewhere, or no PWD: absolute, which works from anywhere.
        std::fs::create_dir_all(dir.join("other")).unwrap();
        assert_eq!(relative_to(&snap, Some(&dir.join("other"))), snap);
        assert_eq!(
            relative_to(&snap, Some(Path::new("/nonexistent-ragaliq"))),
            snap
        );
        assert_eq!(relative_to(&snap, None), snap);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn samples_options_are_checked_when_they_run() {
        assert_eq!(resolve_samples(Some(5.into())), Ok(Some(Samples::Fixed(5))));
        assert_eq!(
            resolve_samples(Some("auto".into())),
            Ok(Some(Samples::Auto { max: 5 }))
        );
        let e = resolve_samples(Some("five".into())).unwrap_err();
        assert!(e.starts_with("samples = \"five\" is invalid"), "{e}");
        assert!(resolve_samples(Some(0.into())).is_err());
    }
}
