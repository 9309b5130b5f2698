//! Nothing is lost: 8 processes record into one snapshot folder at the same
//! time, and a writer killed mid-write leaves the previous recording whole.
//! The children are this binary's own ignored tests, run as processes.

use ragaliq::record::{Location, Recorder};
use ragaliq::{Judge, Metric, Mode, RagCase};
use ragaliq_scripted::ScriptedJudge;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;

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

async fn grade(judge: &Judge, i: usize) {
    let case = RagCase::new(format!("What is refund rule number {i}?"))
        .context([format!(
            "Refund rule number {i} allows returns within {i} days."
        )])
        .response(format!(
            "Refund rule number {i} allows returns within {i} days."
        ));
    for metric in [
        Metric::Faithfulness,
        Metric::Hallucination,
        Metric::Relevance,
    ] {
        judge.evaluate(metric, &case).await.unwrap();
    }
}

/// Child: records case `CHILD_INDEX` into `CHILD_DIR` as a pending recording.
#[tokio::test]
#[ignore = "run as a child process by `eight_processes_record_into_one_folder`"]
async fn child_records() {
    let dir = PathBuf::from(std::env::var("CHILD_DIR").unwrap());
    let i: usize = std::env::var("CHILD_INDEX").unwrap().parse().unwrap();
    let recorder = Arc::new(Recorder::new(
        location(&dir, &format!("case-{i}")),
        Mode::Record,
    ));
    let judge = judge(&std::env::var("CHILD_URL").unwrap()).with_recorder(recorder.clone());
    grade(&judge, i).await;
    recorder
        .save_pending("tests/concurrent_recording.rs")
        .unwrap()
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
            grade(&judge, i).await;
        }
        recorder
            .save_pending("tests/concurrent_recording.rs")
            .unwrap();
    }
}

fn spawn(test: &str, dir: &Path, url: &str, index: usize) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--ignored", "--quiet"])
        .env("CHILD_DIR", dir)
        .env("CHILD_URL", url)
        .env("CHILD_INDEX", index.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ragaliq-concurrent-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_processes_record_into_one_folder() {
    let server = ScriptedJudge::start().await;
    let dir = temp_dir("eight");
    let children: Vec<Child> = (0..8)
        .map(|i| spawn("child_records", &dir, &server.base_url(), i))
        .collect();
    let statuses = tokio::task::spawn_blocking(move || {
        children
            .into_iter()
            .map(|mut c| c.wait().unwrap())
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    assert!(statuses.iter().all(|s| s.success()), "{statuses:?}");
    assert_eq!(
        server.requests(),
        8 * 3,
        "each child made its own three calls"
    );
    // Every recording is there, parses, and replays all of its case with no call.
    for i in 0..8 {
        let silent = judge("http://127.0.0.1:9/v1");
        let recorder = Arc::new(Recorder::new(
            location(&dir, &format!("case-{i}")),
            Mode::Auto,
        ));
        assert!(
            recorder
                .source()
                .is_some_and(|p| p.ends_with(format!("case-{i}.snap.new")))
        );
        let replaying = silent.with_recorder(recorder);
        grade(&replaying, i).await;
        assert_eq!(replaying.usage().calls, 0);
        assert_eq!(replaying.usage().replayed, 3);
    }
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary file is left behind");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_killed_mid_write_leaves_the_recording_whole() {
    let server = ScriptedJudge::start().await;
    let dir = temp_dir("killed");
    let pending = dir.join("victim.snap.new");
    for round in 0..5u64 {
        let mut child = spawn("child_rewrites_forever", &dir, &server.base_url(), 0);
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
        grade(&replaying, 0).await;
        assert_eq!(replaying.usage().calls, 0, "round {round}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
