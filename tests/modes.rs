//! The record/replay modes end to end. Each step re-runs this binary's own
//! ignored `#[rag_test]` in a child process with a controlled environment
//! (no CI variables, insta's update behaviour set), so insta writes and
//! reads real snapshot files in a temporary folder, and judge calls are
//! counted at a scripted server on 127.0.0.1.

use ragaliq::prelude::*;
use ragaliq_scripted::ScriptedJudge;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[rag_test]
#[ignore = "run in a child process by the mode tests"]
async fn child_case(judge: Judge) {
    let case = RagCase::new("How long is the refund window?")
        .id("child")
        .context(["Refunds are accepted within 30 days of delivery."])
        .response("Refunds are accepted within 30 days of delivery.");
    assert_faithful!(judge, case);
    assert_no_hallucination!(judge, case);
}

struct Run {
    passed: bool,
    output: String,
}

fn run_child(mode: &str, base_url: &str, dir: &Path, extra: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args(["child_case", "--exact", "--ignored", "--test-threads=1"])
        .env_remove("CI")
        .env_remove("TF_BUILD")
        .env_remove("RAGALIQ_PROMPTS_DIR")
        .env_remove("INSTA_FORCE_PASS")
        .env("RAGALIQ_MODE", mode)
        .env("RAGALIQ_BASE_URL", base_url)
        .env("RAGALIQ_SNAPSHOT_DIR", dir)
        .env("RAGALIQ_MAX_RETRIES", "0")
        .env("INSTA_UPDATE", "new");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run the child test");
    Run {
        passed: out.status.success(),
        output: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ragaliq-modes-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A loopback port that counts connection attempts and answers none.
async fn counting_port() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (url, count)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modes_end_to_end() {
    let server = ScriptedJudge::start().await;
    let url = server.base_url();
    let dir = temp_dir("e2e");
    let snap = dir.join("modes__child_case.snap");
    let pending = dir.join("modes__child_case.snap.new");

    // replay with nothing recorded: a clear failure, no call.
    let run = run_child("replay", &url, &dir, &[]);
    assert!(!run.passed);
    assert!(
        run.output
            .contains("no recording for test `modes::child_case` (mode replay)"),
        "{}",
        run.output
    );
    assert!(run.output.contains("the judge would be asked extract_claims (claims of the response \"Refunds are accepted within 30 days of delivery.\")"), "{}", run.output);
    assert!(
        run.output.contains("record it with: RAGALIQ_MODE=record cargo test -p ragaliq-tests --test modes -- child_case --exact"),
        "{}",
        run.output
    );
    // A missing recording is a setup problem, not the judge's failure.
    assert!(
        run.output.contains(
            "no usable recording (a setup problem: this is not a low score, and the judge was not asked)"
        ),
        "{}",
        run.output
    );
    assert!(!run.output.contains("the judge failed"), "{}", run.output);
    assert_eq!(server.requests(), 0);
    assert!(!snap.exists() && !pending.exists(), "replay writes nothing");

    // auto: calls the judge (2 calls for both metrics) and leaves a pending snapshot.
    let run = run_child("auto", &url, &dir, &[]);
    assert!(!run.passed, "a new snapshot awaits review");
    assert!(run.output.contains("stored new snapshot"), "{}", run.output);
    assert_eq!(server.requests(), 2);
    assert!(pending.exists() && !snap.exists());

    // auto again: the pending recording is replayed; nobody pays twice.
    let run = run_child("auto", &url, &dir, &[]);
    assert!(!run.output.contains("could not evaluate"), "{}", run.output);
    assert_eq!(server.requests(), 2);

    // Accept it (what `cargo insta review` does), then replay against a port
    // that counts connection attempts: none is made.
    std::fs::rename(&pending, &snap).unwrap();
    let (silent, attempts) = counting_port().await;
    let run = run_child("replay", &silent, &dir, &[]);
    assert!(run.passed, "{}", run.output);
    assert_eq!(
        attempts.load(Ordering::SeqCst),
        0,
        "replay touched the network"
    );
    assert_eq!(server.requests(), 2);

    // A changed prompt makes the recording stale, named as such.
    let prompts = temp_dir("prompts");
    // The case makes one claim, supported: one `claim_supported` question.
    let builtin = include_str!("../prompts/claim_supported.txt");
    let version = builtin
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("version: "))
        .expect("a template starts with its version")
        .trim();
    std::fs::write(
        prompts.join("claim_supported.txt"),
        builtin.replacen(
            &format!("version: {version}"),
            &format!("version: {version}.1"),
            1,
        ),
    )
    .unwrap();
    let run = run_child(
        "replay",
        &url,
        &dir,
        &[("RAGALIQ_PROMPTS_DIR", prompts.to_str().unwrap())],
    );
    assert!(!run.passed);
    assert!(
        run.output
            .contains("stale recording for test `modes::child_case`"),
        "{}",
        run.output
    );
    assert!(
        run.output.contains(&format!(
            "changed since it was recorded: prompt template claim_supported@{version}+system_word@1 → claim_supported@{version}.1+system_word@1"
        )),
        "{}",
        run.output
    );
    assert_eq!(server.requests(), 2);

    // record asks everything afresh and rewrites the recording: a hand-edited
    // answer is replaced by the judge's own.
    let accepted = std::fs::read_to_string(&snap).unwrap();
    // Make "no" the likelier answer to "is the claim supported?".
    let edited = accepted.replacen("\"No\": -2.525728644308256", "\"No\": -0.001", 1);
    assert_ne!(edited, accepted);
    std::fs::write(&snap, &edited).unwrap();
    assert!(
        !run_child("replay", &url, &dir, &[]).passed,
        "the edited answer fails the test"
    );
    let run = run_child("record", &url, &dir, &[("INSTA_UPDATE", "always")]);
    assert!(run.passed, "{}", run.output);
    assert_eq!(server.requests(), 4);
    let rewritten = std::fs::read_to_string(&snap).unwrap();
    assert!(!rewritten.contains("\"No\": -0.001"), "{rewritten}");
    assert!(run_child("replay", &url, &dir, &[]).passed);

    // live calls the judge and writes nothing.
    let empty = temp_dir("live");
    let run = run_child("live", &url, &empty, &[]);
    assert!(run.passed, "{}", run.output);
    assert_eq!(server.requests(), 6);
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);

    // A recording edited into invalid JSON fails with its path and the
    // parser's message, and replay leaves it as it was.
    std::fs::write(
        &snap,
        "---\nsource: tests/modes.rs\n---\n{\"ragaliq_recording\": 1, \"exchanges\": [",
    )
    .unwrap();
    let run = run_child("replay", &url, &dir, &[]);
    assert!(!run.passed);
    assert!(
        run.output
            .contains(&format!("recording {} is unreadable", snap.display())),
        "{}",
        run.output
    );
    assert!(run.output.contains("EOF while parsing"), "{}", run.output);
    assert!(
        std::fs::read_to_string(&snap)
            .unwrap()
            .ends_with("\"exchanges\": [")
    );
    assert_eq!(server.requests(), 6);

    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&prompts);
    let _ = std::fs::remove_dir_all(&empty);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_reaches_a_recording_or_a_message() {
    const SECRET: &str = "zz-secret-value-9f8e7d6c5b4a";
    let server = ScriptedJudge::start().await;
    let dir = temp_dir("secret");
    let key = [
        ("RAGALIQ_API_KEY_ENV", "MY_JUDGE_KEY"),
        ("MY_JUDGE_KEY", SECRET),
    ];
    // Record with the key set: the judge is called with it (as a bearer token).
    let run = run_child("auto", &server.base_url(), &dir, &key);
    assert!(run.output.contains("stored new snapshot"), "{}", run.output);
    assert_eq!(server.requests(), 2);
    // And fail with it set: a server that echoes the key in its error.
    let echo = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let echo_url = format!("http://{}/v1", echo.local_addr().unwrap());
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut s, _)) = echo.accept().await {
            let mut buf = vec![0u8; 65536];
            let _ = s.read(&mut buf).await;
            let body =
                format!("{{\"error\": {{\"message\": \"Incorrect API key provided: {SECRET}\"}}}}");
            let reply = format!(
                "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = s.write_all(reply.as_bytes()).await;
        }
    });
    let failing = run_child("live", &echo_url, &dir, &key);
    assert!(!failing.passed);
    assert!(
        failing.output.contains("Incorrect API key provided: ***"),
        "{}",
        failing.output
    );
    for (what, text) in [
        ("recording run", &run.output),
        ("failing run", &failing.output),
    ] {
        assert!(
            !text.contains(SECRET),
            "the key leaked into the {what}'s output"
        );
    }
    let mut scanned = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(
            !text.contains(SECRET) && !text.contains("Bearer"),
            "the key leaked into a recording"
        );
        scanned += 1;
    }
    assert!(scanned >= 1);
    let _ = std::fs::remove_dir_all(&dir);
}
