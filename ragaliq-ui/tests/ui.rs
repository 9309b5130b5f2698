//! Compile errors of `#[rag_test]` and the assertion macros: each misuse is
//! an error on the offending token that lists the valid options; every
//! accepted option spelling compiles.
//!
//! The `.stderr` files in `tests/ui/` are what rustc printed, and rustc's
//! wording and layout change from one version to the next. So they are
//! compared whole only on the rustc they were made with, named in
//! `tests/ui/rustc-version` (major.minor). On every rustc, this one
//! included, each case must still fail to compile with the same errors: the
//! same `error: …` lines for ragaliq's own messages, and the same error
//! codes (`error[E0599]`) for rustc's, whose text may differ. A user on
//! Rust 1.89 (the workspace's `rust-version`) runs the second check and
//! gets no failure for a rustc's wording.
//!
//! After a toolchain update that changes the files:
//! `TRYBUILD=overwrite cargo test -p ragaliq-ui --test ui`, read the `.stderr` diff, and
//! write the new `rustc --version`'s major.minor into `tests/ui/rustc-version`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The rustc (major.minor) the `.stderr` files were made with.
fn pinned() -> &'static str {
    include_str!("ui/rustc-version").trim()
}

/// The major.minor of the rustc that cargo runs here (`RUSTC`, else the
/// `rustc` on the path, which a rustup toolchain override also picks).
fn rustc_version() -> Option<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc).arg("--version").output().ok()?;
    major_minor(&String::from_utf8_lossy(&out.stdout))
}

/// "rustc 1.95.0 (59807616e 2026-04-14)" → "1.95".
fn major_minor(version: &str) -> Option<String> {
    let number = version.split_whitespace().nth(1)?;
    let mut parts = number.split('.');
    Some(format!("{}.{}", parts.next()?, parts.next()?))
}

/// What a compiler output says went wrong, in a form that does not depend
/// on the rustc: the `error: …` lines of messages the macros write whole,
/// and only the code of rustc's own (`error[E0599]`).
fn errors(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|line| {
            if let Some(rest) = line.strip_prefix("error[") {
                let code = rest.split(']').next()?;
                Some(format!("error[{code}]"))
            } else {
                line.starts_with("error:")
                    .then(|| line.trim_end().to_owned())
            }
        })
        .collect()
}

fn cases() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir("tests/ui")
        .expect("tests/ui")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    cases.sort();
    cases
}

#[test]
fn ui() {
    let rustc = rustc_version();
    // Only cases that must fail: trybuild then runs `cargo check`, not a
    // build, over ragaliq's dependencies in its own target folder (a build
    // of them all was three minutes of CI on two cores). What must compile
    // is `tests/macro_options.rs`, built as any test file is.
    if rustc.as_deref() == Some(pinned()) {
        // Compared whole: stricter than the check below, which is then not
        // run again.
        let out = trybuild_child("compared_whole", &[]);
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    eprintln!(
        "note: the tests/ui/*.stderr files were made with rustc {}, this is rustc {}: \
         they are not compared whole (rustc's wording changes between versions); \
         each case is checked to fail with the same errors below",
        pinned(),
        rustc.as_deref().unwrap_or("of an unknown version")
    );
    each_case_fails_with_its_own_errors();
}

/// Every rustc: each case fails to compile, with the errors its `.stderr`
/// names. trybuild writes what it got in a child process run with
/// `TRYBUILD=overwrite` on copies of the cases (never on the files here);
/// the errors are compared with [`errors`].
fn each_case_fails_with_its_own_errors() {
    let dir = std::env::temp_dir().join(format!("ragaliq-ui-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for case in cases() {
        std::fs::copy(&case, dir.join(case.file_name().unwrap())).unwrap();
    }
    let out = trybuild_child(
        "written_out",
        &[
            ("TRYBUILD", std::ffi::OsStr::new("overwrite")),
            ("UI_CASE_COPIES", dir.as_os_str()),
        ],
    );
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(
        out.status.success(),
        "a case compiled, or trybuild failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut problems = Vec::new();
    for case in cases() {
        let name = case.file_name().unwrap();
        let pinned = std::fs::read_to_string(case.with_extension("stderr"))
            .unwrap_or_else(|e| panic!("{}: {e}", case.with_extension("stderr").display()));
        let got = std::fs::read_to_string(dir.join(name).with_extension("stderr"))
            .unwrap_or_else(|e| panic!("no compiler output for {}: {e}", case.display()));
        if errors(&got) != errors(&pinned) {
            problems.push(format!(
                "{}: expected the errors\n  {}\nbut rustc printed\n{got}",
                case.display(),
                errors(&pinned).join("\n  ")
            ));
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The flags trybuild gives rustc for the cases. It checks the
/// dependencies with its flags, then the cases with one more
/// (`--diagnostic-width=140`); to cargo, other flags are another build, so
/// every dependency was checked twice (63 s, then 41 s, of a two-core
/// machine's test run). `CARGO_ENCODED_RUSTFLAGS` outranks the `--config`
/// flags trybuild passes: with the cases' flags for both of its cargo calls
/// the dependencies are checked once, and the cases see exactly the flags
/// trybuild gives them (the `.stderr` files compared whole show it).
const TRYBUILD_CASE_FLAGS: &str =
    "--cfg\x1ftrybuild\x1f--verbose\x1f-A\x1fdead_code\x1f--diagnostic-width=140";

/// Runs the ignored test `name` of this file in a child process with
/// [`TRYBUILD_CASE_FLAGS`] and `env` set (environment variables are the
/// process's, not a test's, to set).
fn trybuild_child(name: &str, env: &[(&str, &std::ffi::OsStr)]) -> std::process::Output {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([name, "--exact", "--ignored", "--nocapture"])
        .env("CARGO_ENCODED_RUSTFLAGS", TRYBUILD_CASE_FLAGS);
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

/// Child of [`ui`] on the rustc the `.stderr` files were made with: every
/// case compared whole. The cases run when the `TestCases` is dropped.
#[test]
#[ignore = "run in a child process by `ui`"]
fn compared_whole() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}

/// Child of [`ui`]: trybuild on the copies, writing each one's compiler
/// output beside it.
#[test]
#[ignore = "run in a child process by `ui`"]
fn written_out() {
    let dir = PathBuf::from(std::env::var_os("UI_CASE_COPIES").expect("UI_CASE_COPIES"));
    assert!(Path::new(&dir).is_dir());
    trybuild::TestCases::new().compile_fail(dir.join("*.rs"));
}

#[test]
fn versions_are_read_as_major_and_minor() {
    assert_eq!(
        major_minor("rustc 1.95.0 (59807616e 2026-04-14)").as_deref(),
        Some("1.95")
    );
    assert_eq!(
        major_minor("rustc 1.89.0-nightly (abc 2025-06-01)").as_deref(),
        Some("1.89")
    );
    assert_eq!(major_minor("rustc"), None);
    let pinned = pinned();
    assert!(major_minor(&format!("rustc {pinned}.0")).as_deref() == Some(pinned));
}

#[test]
fn errors_keep_ragaliqs_words_and_only_rustcs_codes() {
    let made_with_one_rustc = "\
error[E0599]: no variant or associated item named `faithfullness` found for enum `ragaliq::__private::MetricName` in the current scope
 --> tests/ui/assert_caught_unknown_metric.rs:4:33
  |
help: there is a variant with a similar name
";
    let another_rustcs_words = "\
error[E0599]: no variant named `faithfullness` found for enum `MetricName`
  --> $DIR/assert_caught_unknown_metric.rs:4:33
";
    assert_eq!(errors(made_with_one_rustc), errors(another_rustcs_words));
    let ours =
        "error: unknown mode `fast`; expected one of: replay, auto, record, live\n --> x.rs:3:19\n";
    let reworded = "error: unknown mode `fast`\n --> x.rs:3:19\n";
    assert_ne!(errors(ours), errors(reworded), "ragaliq's own words count");
    assert_ne!(
        errors(made_with_one_rustc),
        errors("error[E0425]: cannot find value\n"),
        "another error is another error"
    );
    assert!(errors("warning: unused\n").is_empty());
}

/// Every case has its `.stderr`, and each names at least one error: a case
/// without one would be checked for nothing on another rustc.
#[test]
fn every_case_names_its_errors() {
    for case in cases() {
        let stderr = std::fs::read_to_string(case.with_extension("stderr"))
            .unwrap_or_else(|e| panic!("{}: {e}", case.display()));
        assert!(!errors(&stderr).is_empty(), "{}", case.display());
    }
}
