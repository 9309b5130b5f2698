//! What `#[rag_test]` knows about the test it wraps, and what follows from
//! it: where its recording lives and the command that records it.

use crate::core::Mode;
use std::path::{Path, PathBuf};

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

/// `RAGALIQ_SNAPSHOT_DIR` (relative to the package), else `snapshots/` beside
/// the test file, as insta places snapshots.
pub(super) fn snapshot_dir(spec: &TestSpec, env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
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

pub(super) fn test_label(spec: &TestSpec) -> String {
    format!("{}::{}", spec.module_path, spec.function)
}

/// `RAGALIQ_MODE=record cargo test -p pkg --test rag -- refund_policy --exact`.
pub(super) fn record_command(spec: &TestSpec) -> String {
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
            record_command(&spec(
                "ragaliq::private::spec::tests",
                "ragaliq/src/private/spec.rs"
            )),
            "RAGALIQ_MODE=record cargo test -p ragaliq --lib -- private::spec::tests::refund_policy --exact"
        );
        // Test files as modules of one binary (`tests/it/main.rs`, as
        // ragaliq's own are): the target is the binary, the module leads
        // the test's path.
        assert_eq!(
            record_command(&spec(
                "it::reply_corpus",
                "ragaliq/tests/it/reply_corpus.rs"
            )),
            "RAGALIQ_MODE=record cargo test -p ragaliq --test it -- reply_corpus::refund_policy --exact"
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
