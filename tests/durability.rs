//! What a killed writer, an odd file or an odd setting leaves behind never
//! blocks a later run or loses paid-for answers: recordings are replaced
//! whole, a half-written pending recording is set aside and rewritten, token
//! counts cannot overflow, and `INSTA_PENDING_DIR` is where pending
//! recordings are read as well as written.

use ragaliq::record::{Location, Recorder, Recording, Site, assert_snapshot};
use ragaliq::{Judge, Metric, Mode, RagCase};
use ragaliq_scripted::ScriptedJudge;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ragaliq-durability-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn judge(url: &str) -> Judge {
    Judge::builder(ragaliq::judge::OpenAiTransport::new(url))
        .with_model("scripted")
        .build()
        .unwrap()
}

/// Runs the test `name` again in a child process with the CI variables
/// removed, unless this is that child. The tests that call it write pending
/// recordings, which insta (and ragaliq) never do on CI (`CI=true`,
/// `INSTA_UPDATE` unset); without this their outcome would depend on the
/// machine. Returns whether the child ran it (the caller then returns).
fn ran_off_ci(name: &str) -> bool {
    if std::env::var_os("RAGALIQ_DURABILITY_CHILD").is_some() {
        return false;
    }
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    without_insta_settings(&mut cmd);
    let out = cmd
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env("RAGALIQ_DURABILITY_CHILD", "1")
        .env_remove("CI")
        .env_remove("TF_BUILD")
        .env_remove("INSTA_UPDATE")
        .env_remove("INSTA_FORCE_PASS")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "{name} failed in its child process:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

/// Under `cargo insta test` the parent has insta's settings (pending
/// folder, update mode, references file); a child gets only what its test
/// sets.
fn without_insta_settings(cmd: &mut Command) {
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("INSTA_") {
            cmd.env_remove(name);
        }
    }
}

fn case() -> RagCase {
    RagCase::new("How long is the refund window?")
        .context(["Refunds are accepted within 30 days of delivery."])
        .response("Refunds are accepted within 30 days of delivery.")
}

fn site() -> Site<'static> {
    Site {
        file: "tests/durability.rs",
        module_path: "durability",
        function: "case",
        line: 1,
        manifest_dir: env!("CARGO_MANIFEST_DIR"),
    }
}

/// Evaluates `metrics` through a recorder in auto mode and commits the
/// recording as a test would (a new one "fails" as awaiting review).
async fn record(dir: &Path, url: &str, metrics: &[Metric]) -> Judge {
    let recorder = Arc::new(Recorder::new(
        Location::at(dir.join("case.snap"), "durability::case", "record it"),
        Mode::Auto,
    ));
    let judge = judge(url).with_recorder(recorder.clone());
    for m in metrics {
        judge
            .evaluate(*m, &case())
            .await
            .expect("the judge answers");
    }
    let snapshot = dir.join("case.snap");
    let _ = catch_unwind(AssertUnwindSafe(|| {
        recorder.commit(None, true, |r| {
            assert_snapshot(&snapshot, &r.to_yaml(), "a recording", site());
        })
    }));
    judge
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_written_pending_recording_is_set_aside_and_rewritten() {
    if ran_off_ci("a_half_written_pending_recording_is_set_aside_and_rewritten") {
        return;
    }
    let server = ScriptedJudge::start().await;
    let dir = temp_dir("half");
    let (snap, pending) = (dir.join("case.snap"), dir.join("case.snap.new"));
    // Recorded and accepted: faithfulness (2 exchanges).
    record(&dir, &server.base_url(), &[Metric::Faithfulness]).await;
    std::fs::rename(&pending, &snap).unwrap();
    // Relevance added and pending (3 exchanges), then the pending file is
    // cut in half, as a writer killed mid-write would leave it.
    record(
        &dir,
        &server.base_url(),
        &[Metric::Faithfulness, Metric::Relevance],
    )
    .await;
    assert_eq!(server.requests(), 3);
    let text = std::fs::read_to_string(&pending).unwrap();
    std::fs::write(&pending, &text[..text.len() / 2]).unwrap();

    // The next run is not blocked: the accepted exchanges replay, the lost
    // pending one is asked again, and the pending file is whole again.
    let judge = record(
        &dir,
        &server.base_url(),
        &[Metric::Faithfulness, Metric::Relevance],
    )
    .await;
    assert_eq!(
        server.requests(),
        4,
        "only the lost exchange is asked again"
    );
    assert_eq!(judge.usage().replayed, 2);
    let rewritten = Recording::read(&pending).unwrap().unwrap();
    assert_eq!(rewritten.exchanges.len(), 3);
    // The unreadable file was paid-for work: moved aside, never overwritten.
    let aside: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains("case.snap.new.unreadable-"))
        .collect();
    assert_eq!(
        aside.len(),
        1,
        "the unreadable pending file was not kept aside"
    );
    assert_eq!(
        std::fs::read_to_string(&aside[0]).unwrap(),
        text[..text.len() / 2],
        "kept as it was"
    );
    std::fs::remove_file(&aside[0]).unwrap();

    // An unreadable *accepted* recording stays an error: a person reviewed it.
    std::fs::write(
        &snap,
        "---\nsource: x\n---\nragaliq_recording: 2\nexchanges: [",
    )
    .unwrap();
    std::fs::remove_file(&pending).unwrap();
    let recorder = Arc::new(Recorder::new(
        Location::at(&snap, "durability::case", "record it"),
        Mode::Auto,
    ));
    let e = judge_with(&server, recorder)
        .relevance(&case())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("is unreadable"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn judge_with(server: &ScriptedJudge, recorder: Arc<Recorder>) -> Judge {
    judge(&server.base_url()).with_recorder(recorder)
}

#[cfg(unix)]
#[test]
fn recordings_are_replaced_whole_never_rewritten_in_place() {
    if ran_off_ci("recordings_are_replaced_whole_never_rewritten_in_place") {
        return;
    }
    use std::io::Read;
    let dir = temp_dir("inode");
    let snap = dir.join("r.snap");
    let pending = dir.join("r.snap.new");
    let write = |contents: &str| {
        let _ = catch_unwind(|| assert_snapshot(&snap, contents, "d", site()));
    };
    write("ragaliq_recording: 2\nexchanges: []\n# the first version, longer than the second\n");
    // A reader (another process's replay) that opened the pending file...
    let mut reader = std::fs::File::open(&pending).unwrap();
    write("ragaliq_recording: 2\nexchanges: []\n");
    // ...keeps reading the version it opened, whole: the new one was
    // renamed into place, not written over it.
    let mut seen = String::new();
    reader.read_to_string(&mut seen).unwrap();
    assert!(seen.contains("the first version"), "{seen}");
    assert!(
        !std::fs::read_to_string(&pending)
            .unwrap()
            .contains("first version")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn token_counts_from_a_recording_cannot_overflow() {
    if ran_off_ci("token_counts_from_a_recording_cannot_overflow") {
        return;
    }
    let server = ScriptedJudge::start().await;
    let dir = temp_dir("tokens");
    record(&dir, &server.base_url(), &[Metric::Relevance]).await;
    let pending = dir.join("case.snap.new");
    let huge = u64::MAX - 1;
    let text = std::fs::read_to_string(&pending).unwrap();
    let start = text.find("\n  tokens:").unwrap() + 3;
    let end = start + text[start..].find("fingerprint:").unwrap();
    let text = format!(
        "{}tokens:\n    input: {huge}\n    output: {huge}\n  {}",
        &text[..start],
        &text[end..]
    );
    std::fs::write(&pending, text).unwrap();
    let judge = judge("http://127.0.0.1:9/v1").with_recorder(Arc::new(Recorder::new(
        Location::at(dir.join("case.snap"), "durability::case", "record it"),
        Mode::Auto,
    )));
    let eval = judge.relevance(&case()).await.unwrap();
    assert_eq!(eval.usage.replayed_tokens, u64::MAX);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Child: relevance of the case, recorded in auto mode under the test's own
/// recording (in `RAGALIQ_SNAPSHOT_DIR`).
#[ragaliq::rag_test(mode = "auto")]
#[ignore = "run in a child process by `insta_pending_dir_is_where_pending_recordings_are_read`"]
async fn pending_child(judge: Judge) {
    judge.relevance(&case()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insta_pending_dir_is_where_pending_recordings_are_read() {
    let server = ScriptedJudge::start().await;
    let dir = temp_dir("pending-dir");
    let snapshots = dir.join("snapshots");
    let pending_dir = dir.join("pending");
    let config = dir.join("ragaliq.toml");
    std::fs::write(
        &config,
        format!(
            "[judge]\nprovider = \"openai-compatible\"\nmodel = \"scripted\"\nbase_url = \"{}\"\n",
            server.base_url()
        ),
    )
    .unwrap();
    let (c, sn, pd, d) = (
        config.clone(),
        snapshots.clone(),
        pending_dir.clone(),
        dir.clone(),
    );
    let run = move || {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        without_insta_settings(&mut cmd);
        cmd.args(["pending_child", "--exact", "--ignored"])
            .env("RAGALIQ_CONFIG", &c)
            .env("RAGALIQ_SNAPSHOT_DIR", &sn)
            .env("INSTA_PENDING_DIR", &pd)
            .env("INSTA_WORKSPACE_ROOT", &d)
            .env_remove("CI")
            .env_remove("NEXTEST_RUN_ID")
            .env_remove("RAGALIQ_RUN_ID")
            .env_remove("RAGALIQ_MODE")
            .output()
            .unwrap()
    };
    let first = tokio::task::spawn_blocking(run.clone()).await.unwrap();
    let written = pending_dir.join("snapshots/durability__pending_child.snap.new");
    assert!(
        written.exists(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(
        !snapshots
            .join("durability__pending_child.snap.new")
            .exists()
    );
    assert_eq!(server.requests(), 1);
    // The second run finds the pending recording where it was written:
    // nobody pays twice before review.
    tokio::task::spawn_blocking(run).await.unwrap();
    assert_eq!(server.requests(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}
