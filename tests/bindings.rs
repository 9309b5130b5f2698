//! Two judges never share one recording by accident: a second binding of a
//! recording file by other code or another test fails, naming both call
//! sites, in one process and across the processes of one run; and no
//! recorder drops the exchanges another recorder of the same file used.
//! The children are this binary's own ignored tests, run as processes with
//! a controlled environment (the recordings go to a temporary folder).

use ragaliq::prelude::*;
use ragaliq::record::{Location, Recorder, Recording};
use ragaliq::{Metric, Mode, RecordedJudge};
use ragaliq_scripted::ScriptedJudge;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

// ── children ───────────────────────────────────────────────────────────────
// None asks the judge: a binding is refused when the judge is made.

/// A helper several tests call: its recording is named after the helper.
fn shared_helper() -> RecordedJudge {
    ragaliq::recorded_judge!() // site: helper
}

#[tokio::test]
#[ignore = "run in a child process by the binding tests"]
async fn helper_user_a() {
    let _judge = shared_helper();
}

#[tokio::test]
#[ignore = "run in a child process by the binding tests"]
async fn helper_user_b() {
    let _judge = shared_helper();
}

#[tokio::test]
#[ignore = "run in a child process by the binding tests"]
async fn twice_in_one_fn() {
    let _first = ragaliq::recorded_judge!(); // site: twice-first
    let _second = ragaliq::recorded_judge!(); // site: twice-second
}

#[rag_test] // site: around
#[ignore = "run in a child process by the binding tests"]
async fn inside_rag_test(_judge: Judge) {
    let _again = ragaliq::recorded_judge!(); // site: inside
}

#[tokio::test]
#[ignore = "run in a child process by the binding tests"]
async fn same_name_a() {
    let _judge = ragaliq::recorded_judge!(name = "shared_name"); // site: name-a
}

#[tokio::test]
#[ignore = "run in a child process by the binding tests"]
async fn same_name_b() {
    let _judge = ragaliq::recorded_judge!(name = "shared_name"); // site: name-b
}

#[rag_test(name = "shared_rag_test")] // site: rag-name-a
#[ignore = "run in a child process by the binding tests"]
async fn rag_test_name_a(_judge: Judge) {}

#[rag_test(name = "shared_rag_test")] // site: rag-name-b
#[ignore = "run in a child process by the binding tests"]
async fn rag_test_name_b(_judge: Judge) {}

/// What stays allowed: the same code in the same test binding again (a
/// loop, a test the harness runs again), and clones of one judge.
#[tokio::test]
#[ignore = "run in a child process by the binding tests"]
async fn the_same_binder_again() {
    for _ in 0..2 {
        let judge = ragaliq::recorded_judge!();
        let _clone: Judge = (*judge).clone();
    }
}

// ── the tests ──────────────────────────────────────────────────────────────

struct Run {
    passed: bool,
    output: String,
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ragaliq-bindings-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs this binary's ignored tests matching `filter`, one after the other
/// in one process, in replay mode with recordings in `dir`.
fn run_child(filter: &str, exact: bool, dir: &Path, extra: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args([filter, "--ignored", "--test-threads=1"]);
    if exact {
        cmd.arg("--exact");
    }
    cmd.env_remove("CI")
        .env_remove("TF_BUILD")
        .env_remove("NEXTEST_RUN_ID")
        .env_remove("RAGALIQ_RUN_ID")
        .env_remove("INSTA_FORCE_PASS")
        .env("RAGALIQ_MODE", "replay")
        .env("RAGALIQ_SNAPSHOT_DIR", dir)
        .env("INSTA_UPDATE", "no");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run the child tests");
    Run {
        passed: out.status.success(),
        output: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// `tests/bindings.rs:<line>` of the line marked `// site: <marker>`.
fn site(marker: &str) -> String {
    let source = include_str!("bindings.rs");
    let tag = format!("// site: {marker}");
    let line = source
        .lines()
        .position(|l| l.trim_end().ends_with(&tag))
        .unwrap_or_else(|| panic!("no line marked {tag}"));
    format!("tests/bindings.rs:{}", line + 1)
}

/// The failure of the second binding: both binders named, and the way out.
fn assert_refused(run: &Run, recording: &str, first: &str, second: &str) {
    assert!(!run.passed, "{}", run.output);
    for expected in [
        format!("recording {recording} is bound by two judges: first by {first}, and again by {second};"),
        "give each judge a recording of its own (`recorded_judge!(name = \"…\")`, `#[rag_test(name = \"…\")]`), or make the judge once and pass it to the code that needs it".to_owned(),
    ] {
        assert!(
            run.output.contains(&expected),
            "expected: {expected}\n{}",
            run.output
        );
    }
}

#[test]
fn two_judges_of_one_recording_fail_with_both_call_sites() {
    let dir = temp_dir("one-process");
    let path = |name: &str| {
        dir.join(format!("bindings__{name}.snap"))
            .display()
            .to_string()
    };

    // Twice in one function.
    let run = run_child("twice_in_one_fn", true, &dir, &[]);
    assert_refused(
        &run,
        &path("twice_in_one_fn"),
        &format!(
            "`recorded_judge!()` at {} in `bindings::twice_in_one_fn`, run by test `twice_in_one_fn`",
            site("twice-first")
        ),
        &format!(
            "`recorded_judge!()` at {} in `bindings::twice_in_one_fn`, run by test `twice_in_one_fn`",
            site("twice-second")
        ),
    );
    println!("{}", run.output);

    // A helper two tests call: the first test passes, the second fails.
    let run = run_child("helper_user_", false, &dir, &[]);
    assert!(
        run.output.contains("test helper_user_a ... ok"),
        "{}",
        run.output
    );
    assert!(
        run.output.contains("test helper_user_b ... FAILED"),
        "{}",
        run.output
    );
    let helper = |test: &str| {
        format!(
            "`recorded_judge!()` at {} in `bindings::shared_helper`, run by test `{test}`",
            site("helper")
        )
    };
    assert_refused(
        &run,
        &path("shared_helper"),
        &helper("helper_user_a"),
        &helper("helper_user_b"),
    );

    // recorded_judge!() inside a #[rag_test] of the same name.
    let run = run_child("inside_rag_test", true, &dir, &[]);
    assert_refused(
        &run,
        &path("inside_rag_test"),
        &format!(
            "`#[rag_test]` at {} in `bindings::inside_rag_test`, run by test `inside_rag_test`",
            site("around")
        ),
        &format!(
            "`recorded_judge!()` at {} in `bindings::inside_rag_test`, run by test `inside_rag_test`",
            site("inside")
        ),
    );

    // The same name in two tests of one module, with either macro.
    let run = run_child("same_name_", false, &dir, &[]);
    assert_refused(
        &run,
        &path("shared_name"),
        &format!(
            "`recorded_judge!()` at {} in `bindings::same_name_a`, run by test `same_name_a`",
            site("name-a")
        ),
        &format!(
            "`recorded_judge!()` at {} in `bindings::same_name_b`, run by test `same_name_b`",
            site("name-b")
        ),
    );
    let run = run_child("rag_test_name_", false, &dir, &[]);
    assert_refused(
        &run,
        &path("shared_rag_test"),
        &format!(
            "`#[rag_test]` at {} in `bindings::rag_test_name_a`, run by test `rag_test_name_a`",
            site("rag-name-a")
        ),
        &format!(
            "`#[rag_test]` at {} in `bindings::rag_test_name_b`, run by test `rag_test_name_b`",
            site("rag-name-b")
        ),
    );

    // What stays allowed.
    let run = run_child("the_same_binder_again", true, &dir, &[]);
    assert!(run.passed, "{}", run.output);
    let _ = std::fs::remove_dir_all(&dir);
}

/// In live mode no recording is read or written, so two judges of one
/// recording's name share nothing: no binding is refused.
#[test]
fn live_mode_binds_no_recording() {
    let dir = temp_dir("live");
    let live = [("RAGALIQ_MODE", "live")];
    for (filter, exact) in [
        ("twice_in_one_fn", true),
        ("helper_user_", false),
        ("inside_rag_test", true),
        ("same_name_", false),
        ("rag_test_name_", false),
    ] {
        let run = run_child(filter, exact, &dir, &live);
        assert!(run.passed, "{filter} in live mode:\n{}", run.output);
        assert!(
            !run.output.contains("is bound by two judges"),
            "{}",
            run.output
        );
    }
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "live mode writes no recording"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_second_process_of_the_run_binding_from_elsewhere_fails_with_both_named() {
    let dir = temp_dir("run");
    let id = format!("bindings-{}", std::process::id());
    let run_id = [("RAGALIQ_RUN_ID", id.as_str())];
    let first = run_child("helper_user_a", true, &dir, &run_id);
    assert!(first.passed, "{}", first.output);
    // The same test again in another process of the run (nextest's retry).
    let again = run_child("helper_user_a", true, &dir, &run_id);
    assert!(again.passed, "{}", again.output);
    // Another test through the same helper, in a third process.
    let second = run_child("helper_user_b", true, &dir, &run_id);
    let helper = format!(
        "`recorded_judge!()` at {} in `bindings::shared_helper`, run by test",
        site("helper")
    );
    // The holder is named with its process and the run.
    let pid = second
        .output
        .split(&format!("{helper} `helper_user_a` (process "))
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_default()
        .to_owned();
    assert!(pid.parse::<u32>().is_ok(), "{}", second.output);
    assert_refused(
        &second,
        &dir.join("bindings__shared_helper.snap")
            .display()
            .to_string(),
        &format!("{helper} `helper_user_a` (process {pid} of run `{id}`)"),
        &format!("{helper} `helper_user_b`"),
    );
    println!("{}", second.output);
    // Another run is not bound by this one's holders.
    let other = format!("{id}-other");
    let elsewhere = run_child("helper_user_b", true, &dir, &[("RAGALIQ_RUN_ID", &other)]);
    assert!(elsewhere.passed, "{}", elsewhere.output);

    let runs = ragaliq::run::state_dir().join("runs");
    let _ = std::fs::remove_dir_all(runs.join(&id));
    let _ = std::fs::remove_dir_all(runs.join(&other));
    let _ = std::fs::remove_dir_all(&dir);
}

fn judge(url: &str) -> Judge {
    Judge::builder(ragaliq::judge::OpenAiTransport::new(url))
        .with_model("scripted")
        // A rule, not a model: read at the thresholds (unmeasured, its
        // readings from 0.05 to 0.95 would await a person).
        .with_bands(ragaliq::Bands::OFF)
        .build()
        .unwrap()
}

fn case(i: usize) -> RagCase {
    RagCase::new(format!("What is refund rule number {i}?"))
        .context([format!(
            "Refund rule number {i} allows returns within {i} days."
        )])
        .response(format!(
            "Refund rule number {i} allows returns within {i} days."
        ))
}

/// Two recorders of one file (made in code, where nothing refuses the
/// second): neither drops what the other used, whichever writes first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_recorders_of_one_file_keep_each_others_exchanges() {
    let server = ScriptedJudge::start().await;
    let dir = temp_dir("merge");
    let at = || {
        Location::at(
            dir.join("shared.snap"),
            "bindings::shared",
            "RAGALIQ_MODE=record cargo test",
        )
    };
    // Record mode: both record their own question; each write is a whole
    // recording, complete, of what its writer asked.
    let a = Arc::new(Recorder::new(at(), Mode::Record));
    let b = Arc::new(Recorder::new(at(), Mode::Record));
    let url = server.base_url();
    let judge_a = judge(&url).with_recorder(a.clone());
    let judge_b = judge(&url).with_recorder(b.clone());
    judge_a.evaluate(Metric::Relevance, &case(1)).await.unwrap();
    judge_b.evaluate(Metric::Relevance, &case(2)).await.unwrap();
    a.save_pending("tests/bindings.rs").unwrap();
    b.save_pending("tests/bindings.rs").unwrap();
    let pending = dir.join("shared.snap.new");
    let written = Recording::read(&pending).unwrap().unwrap();
    assert_eq!(
        written.exchanges.len(),
        2,
        "the first writer's answer was dropped"
    );
    std::fs::rename(&pending, dir.join("shared.snap")).unwrap();

    // Replay: each replays its own from the accepted file, and the merge
    // of the first to finish keeps what the other used.
    let a = Arc::new(Recorder::new(at(), Mode::Replay));
    let b = Arc::new(Recorder::new(at(), Mode::Replay));
    let silent = judge("http://127.0.0.1:9/v1");
    silent
        .with_recorder(a.clone())
        .evaluate(Metric::Relevance, &case(1))
        .await
        .unwrap();
    silent
        .with_recorder(b.clone())
        .evaluate(Metric::Relevance, &case(2))
        .await
        .unwrap();
    for (who, recorder) in [("a", &a), ("b", &b)] {
        let merged = recorder
            .commit(None, true, |r| r.exchanges.len())
            .unwrap()
            .unwrap();
        assert_eq!(merged, 2, "{who}'s merge drops the other's exchange");
    }
    assert_eq!(silent.usage().calls, 0);
    assert_eq!(server.requests(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}
