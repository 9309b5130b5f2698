//! Nothing is lost when many processes write one recording at once (the
//! trials of one suite case under cargo-nextest), and a writer killed
//! mid-write leaves the recording whole. The children are this binary's own
//! ignored tests, run as processes.

use ragaliq::record::{Location, Recorder, Recording};
use ragaliq::{Judge, Metric, Mode, RagCase};
use ragaliq_scripted::ScriptedJudge;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;

/// Processes writing one recording at once, and rounds of that.
const WRITERS: usize = 16;
const ROUNDS: usize = 20;

fn location(dir: &Path, name: &str) -> Location {
    Location::at(
        dir.join(format!("{name}.snap")),
        name,
        "RAGALIQ_MODE=record cargo test",
    )
}

fn judge(url: &str) -> Judge {
    Judge::builder(ragaliq::judge::OpenAiTransport::new(url))
        .with_model("scripted")
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

/// Child: records case `CHILD_INDEX` into the shared recording, as trial
/// `CHILD_TRIAL` (or as the whole test when unset), then merges it in.
#[tokio::test]
#[ignore = "run as a child process by the tests of this file"]
async fn child_records() {
    let dir = PathBuf::from(std::env::var("CHILD_DIR").unwrap());
    let i: usize = std::env::var("CHILD_INDEX").unwrap().parse().unwrap();
    let trial = std::env::var("CHILD_TRIAL").ok();
    let recorder = Arc::new(Recorder::new(location(&dir, "shared"), Mode::Auto));
    let mut judge = judge(&std::env::var("CHILD_URL").unwrap()).with_recorder(recorder.clone());
    if let Some(t) = &trial {
        judge = judge.for_trial(t.clone());
    }
    judge.evaluate(Metric::Relevance, &case(i)).await.unwrap();
    recorder
        .save_pending_for(trial.as_deref(), true, "tests/concurrent_recording.rs")
        .unwrap();
}

/// Child: rewrites one recording over and over until killed.
#[tokio::test]
#[ignore = "run as a child process by `a_writer_killed_mid_write_leaves_the_recording_whole`"]
async fn child_rewrites_forever() {
    let dir = PathBuf::from(std::env::var("CHILD_DIR").unwrap());
    let url = std::env::var("CHILD_URL").unwrap();
    loop {
        let recorder = Arc::new(Recorder::new(location(&dir, "victim"), Mode::Record));
        let judge = judge(&url).with_recorder(recorder.clone());
        for i in 0..20 {
            judge.evaluate(Metric::Relevance, &case(i)).await.unwrap();
        }
        recorder
            .save_pending("tests/concurrent_recording.rs")
            .unwrap();
    }
}

fn spawn(test: &str, dir: &Path, url: &str, index: usize, env: &[(&str, String)]) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([test, "--exact", "--ignored", "--quiet"])
        .env("CHILD_DIR", dir)
        .env("CHILD_URL", url)
        .env("CHILD_INDEX", index.to_string())
        .env_remove("NEXTEST_RUN_ID")
        .env_remove("RAGALIQ_RUN_ID")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ragaliq-concurrent-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `WRITERS` children at once into one recording, `ROUNDS` times, and
/// checks that every round's recording holds every child's exchange.
async fn rounds(tag: &str, env: impl Fn(usize, usize) -> Vec<(&'static str, String)>) {
    let server = ScriptedJudge::start().await;
    let mut lost = 0;
    for round in 0..ROUNDS {
        let dir = temp_dir(&format!("{tag}-{round}"));
        let children: Vec<Child> = (0..WRITERS)
            .map(|i| spawn("child_records", &dir, &server.base_url(), i, &env(round, i)))
            .collect();
        let statuses = tokio::task::spawn_blocking(move || {
            children
                .into_iter()
                .map(|mut c| c.wait().unwrap())
                .collect::<Vec<_>>()
        })
        .await
        .unwrap();
        assert!(
            statuses.iter().all(|s| s.success()),
            "round {round}: {statuses:?}"
        );
        let recording = Recording::read(&dir.join("shared.snap.new"))
            .unwrap_or_else(|e| panic!("round {round}: unreadable: {e}"))
            .unwrap_or_else(|| panic!("round {round}: no recording"));
        lost += WRITERS - recording.exchanges.len();
        // Accepted, every case replays from the merged recording, with no call.
        std::fs::rename(dir.join("shared.snap.new"), dir.join("shared.snap")).unwrap();
        let silent = judge("http://127.0.0.1:9/v1");
        let replay = silent.with_recorder(Arc::new(Recorder::new(
            location(&dir, "shared"),
            Mode::Replay,
        )));
        for i in 0..WRITERS {
            replay.evaluate(Metric::Relevance, &case(i)).await.unwrap();
        }
        assert_eq!(replay.usage().calls, 0);
        let leftovers = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.ends_with(".tmp") || name.ends_with("-tmp")
            })
            .count();
        assert_eq!(
            leftovers, 0,
            "round {round}: no temporary file is left behind"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert_eq!(
        lost, 0,
        "exchanges lost over {ROUNDS} rounds of {WRITERS} writers"
    );
    assert_eq!(server.requests() as usize, ROUNDS * WRITERS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_trials_record_into_one_recording_at_once() {
    // As nextest runs a case's trials: one process per trial.
    rounds("trials", |_, i| vec![("CHILD_TRIAL", format!("trial-{i}"))]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_processes_of_one_run_keep_every_exchange() {
    // The same trial in every process, one run: each keeps the others'.
    rounds("run", |round, _| {
        vec![(
            "RAGALIQ_RUN_ID",
            format!("concurrent-{}-{round}", std::process::id()),
        )]
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_killed_mid_write_leaves_the_recording_whole() {
    let server = ScriptedJudge::start().await;
    let dir = temp_dir("killed");
    let pending = dir.join("victim.snap.new");
    for round in 0..5u64 {
        let mut child = spawn("child_rewrites_forever", &dir, &server.base_url(), 0, &[]);
        // Let it write a few times, then kill it wherever it is.
        let wait = std::time::Duration::from_millis(300 + 37 * round);
        tokio::time::sleep(wait).await;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !pending.exists() && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        // Whatever moment it died at, the recording reads back whole.
        let recorder = Recorder::new(location(&dir, "victim"), Mode::Auto);
        assert!(
            recorder.source().is_some(),
            "round {round}: the recording exists"
        );
        let replaying = judge("http://127.0.0.1:9/v1").with_recorder(Arc::new(recorder));
        for i in 0..20 {
            replaying
                .evaluate(Metric::Relevance, &case(i))
                .await
                .unwrap();
        }
        assert_eq!(replaying.usage().calls, 0, "round {round}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
