//! Support for the code `#[rag_test]` and the assertion macros generate.
//! Not public API: reached only as `::ragaliq::__private`, and free to change.

use crate::case::RagCase;
use crate::config::{Config, Mode};
use crate::evaluation::{Evaluation, Metric};
use crate::judge::Judge;
use crate::metrics::EvalOptions;
use crate::record::{Location, Recorder, Recording};
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

pub use insta;
pub use tokio;

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
    /// `env!("CARGO_MANIFEST_DIR")` of the user's crate.
    pub manifest_dir: &'static str,
    /// `env!("CARGO_PKG_NAME")` of the user's crate.
    pub package: &'static str,
    /// `mode = "…"`, already validated.
    pub mode: Option<Mode>,
    /// `judge = "provider:model"`.
    pub judge: Option<&'static str>,
    /// `flavor = "multi_thread"`.
    pub multi_thread: bool,
}

/// What the generated snapshot assertion needs.
pub struct SnapshotRequest {
    dir: PathBuf,
    name: &'static str,
    test: String,
    recording: Recording,
}

impl SnapshotRequest {
    /// The absolute snapshot folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// The snapshot's name.
    pub fn name(&self) -> &'static str {
        self.name
    }
    /// The recording to assert.
    pub fn recording(&self) -> &Recording {
        &self.recording
    }
    /// A description for reviewers.
    pub fn description(&self) -> String {
        format!(
            "ragaliq recording of `{}`: judge exchanges replayed in CI. Check each answer before accepting.",
            self.test
        )
    }
}

/// Runs one `#[rag_test]`: builds the judge and its recorder, runs the body,
/// then hands the recording to `assert_snapshot` (insta, in the user's crate).
pub fn run_test(
    spec: TestSpec,
    body: impl FnOnce(Judge) -> Pin<Box<dyn Future<Output = ()>>>,
    assert_snapshot: impl FnOnce(&SnapshotRequest),
) {
    let env = |name: &str| -> Option<String> {
        match (name, spec.mode, spec.judge) {
            ("RAGALIQ_MODE", Some(mode), _) => Some(mode_name(mode).to_owned()),
            ("RAGALIQ_JUDGE", _, Some(judge)) => Some(judge.to_owned()),
            _ => std::env::var(name).ok(),
        }
    };
    let root = Path::new(spec.manifest_dir);
    let config =
        Config::load_from(root, &env).unwrap_or_else(|e| panic!("ragaliq configuration: {e}"));
    let judge =
        Judge::from_config(&config).unwrap_or_else(|e| panic!("ragaliq configuration: {e}"));
    let dir = snapshot_dir(&spec, &env);
    let location = Location {
        snapshot: dir.join(format!(
            "{}__{}.snap",
            spec.module_path.replace("::", "__"),
            spec.name.replace(['/', '\\'], "__")
        )),
        test: test_label(&spec),
        record_command: record_command(&spec),
    };
    let recorder = Arc::new(Recorder::new(location, config.mode));
    let judge = judge.with_recorder(recorder.clone());

    let runtime = if spec.multi_thread {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    }
    .expect("a tokio runtime for the test");
    let outcome = catch_unwind(AssertUnwindSafe(|| runtime.block_on(body(judge))));
    drop(runtime);

    let snapshot = recorder.finish(outcome.is_ok()).map(|recording| {
        let request = SnapshotRequest {
            dir,
            name: spec.name,
            test: test_label(&spec),
            recording,
        };
        catch_unwind(AssertUnwindSafe(|| assert_snapshot(&request)))
    });
    // The body's own failure is the one to report; a snapshot mismatch only
    // when the body passed.
    if let Err(payload) = outcome {
        resume_unwind(payload);
    }
    if let Some(Err(payload)) = snapshot {
        resume_unwind(payload);
    }
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Replay => "replay",
        Mode::Auto => "auto",
        Mode::Record => "record",
        Mode::Live => "live",
    }
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
    let manifest = Path::new(spec.manifest_dir);
    if let Some(root) = std::env::var_os("INSTA_WORKSPACE_ROOT") {
        return Path::new(&root).join(spec.file);
    }
    manifest
        .ancestors()
        .map(|a| a.join(spec.file))
        .find(|p| p.exists())
        .unwrap_or_else(|| manifest.join(spec.file))
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
    parts.join(" ")
}

/// Where a failure's exchanges are recorded, for failure messages.
pub fn recording_line(recorder: &Recorder) -> String {
    if recorder.mode() == Mode::Live {
        return "recording: none (mode live)".to_owned();
    }
    let path = recorder.source().unwrap_or(&recorder.location().snapshot);
    format!(
        "recording: {} (mode {})",
        path.display(),
        mode_name(recorder.mode())
    )
}

/// Evaluates for an assertion macro: the evaluation when it passes, else the
/// failure message (a low score and a judge error read differently).
pub async fn assert_metric(
    macro_name: &str,
    judge: &Judge,
    case: &RagCase,
    metric: Metric,
    options: EvalOptions,
) -> Result<Evaluation, String> {
    let subject = match &case.id {
        Some(id) => format!("case `{id}`"),
        None => format!("case {:?}", case.query.trim()),
    };
    let recording = judge.recorder().map(|r| format!("\n{}", recording_line(r)));
    match judge.evaluate_with(metric, case, &options).await {
        Ok(eval) if eval.passed => Ok(eval),
        Ok(eval) => Err(format!(
            "{macro_name}! failed for {subject}\n{eval}{}",
            recording.unwrap_or_default()
        )),
        Err(error) => Err(format!(
            "{macro_name}! could not evaluate {metric} for {subject}: the judge failed (this is not a low score)\n{error}{}",
            recording.unwrap_or_default()
        )),
    }
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
            manifest_dir: env!("CARGO_MANIFEST_DIR"),
            package: "ragaliq",
            mode: None,
            judge: None,
            multi_thread: false,
        }
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
}
