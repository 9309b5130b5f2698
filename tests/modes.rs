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

// ── CI never calls a judge unless the job itself says so ──────────────────
//
// The children below each ask the judge one question (relevance), through
// each of the three ways to get a judge; `ci_never_calls_a_judge_it_was_not_told_to`
// runs them with `CI=true` and a configuration file or attribute that asks
// for a mode that calls, and counts the requests at a scripted judge.

/// Each child's own question, so that the process's memo does not answer
/// one child's with another's.
fn ci_case(child: &str) -> RagCase {
    RagCase::new(format!("How long is the refund window ({child})?"))
        .context(["Refunds are accepted within 30 days of delivery."])
        .response("Refunds are accepted within 30 days of delivery.")
}

#[rag_test]
#[ignore = "run in a child process by the CI tests"]
async fn ci_rag_test(judge: Judge) {
    assert_relevant!(judge, ci_case("ci_rag_test"));
}

#[rag_test(mode = "auto")]
#[ignore = "run in a child process by the CI tests"]
async fn ci_attribute_auto(judge: Judge) {
    assert_relevant!(judge, ci_case("ci_attribute_auto"));
}

#[rag_test(mode = "record")]
#[ignore = "run in a child process by the CI tests"]
async fn ci_attribute_record(judge: Judge) {
    assert_relevant!(judge, ci_case("ci_attribute_record"));
}

#[tokio::test]
#[ignore = "run in a child process by the CI tests"]
async fn ci_recorded_judge() {
    let judge = ragaliq::recorded_judge!();
    assert_relevant!(judge, ci_case("ci_recorded_judge"));
}

#[tokio::test]
#[ignore = "run in a child process by the CI tests"]
async fn ci_from_env() {
    let judge = Judge::from_env().expect("configuration");
    assert_relevant!(judge, ci_case("ci_from_env"));
}

/// Runs this binary's ignored tests matching `filter` (all of them in one
/// process) with `CI=true`, the configuration file `config` and `extra`.
fn run_ci_child(filter: &str, dir: &Path, config: &Path, extra: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args([filter, "--ignored", "--test-threads=1"])
        .env("CI", "true")
        .env_remove("TF_BUILD")
        .env_remove("RAGALIQ_MODE")
        .env_remove("RAGALIQ_BASE_URL")
        .env_remove("RAGALIQ_JUDGE")
        .env_remove("RAGALIQ_MODEL")
        .env_remove("RAGALIQ_PROMPTS_DIR")
        .env_remove("NEXTEST_RUN_ID")
        .env_remove("RAGALIQ_RUN_ID")
        .env_remove("INSTA_FORCE_PASS")
        .env("RAGALIQ_CONFIG", config)
        .env("RAGALIQ_SNAPSHOT_DIR", dir)
        .env("RAGALIQ_MAX_RETRIES", "0")
        .env("INSTA_UPDATE", "new");
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

/// A judge file pointing at `url`, with `mode` set when given.
fn judge_file(dir: &Path, mode: Option<&str>, url: &str) -> PathBuf {
    let path = dir.join(format!("ci-{}.toml", mode.unwrap_or("unset")));
    let mode = mode.map_or_else(String::new, |m| format!("mode = \"{m}\"\n"));
    std::fs::write(
        &path,
        format!("{mode}[judge]\nprovider = \"openai-compatible\"\nmodel = \"scripted\"\nbase_url = \"{url}\"\n"),
    )
    .unwrap();
    path
}

/// What each child's failure must say: the command that records it, which
/// under CI sets RAGALIQ_MODE=record (the one setting CI honours).
const CI_CHILDREN: [(&str, &str); 5] = [
    (
        "ci_rag_test",
        "record it with: RAGALIQ_MODE=record cargo test -p ragaliq-tests --test modes -- ci_rag_test --exact",
    ),
    (
        "ci_attribute_auto",
        "record it with: RAGALIQ_MODE=record cargo test -p ragaliq-tests --test modes -- ci_attribute_auto --exact",
    ),
    (
        "ci_attribute_record",
        "record it with: RAGALIQ_MODE=record cargo test -p ragaliq-tests --test modes -- ci_attribute_record --exact",
    ),
    (
        "ci_recorded_judge",
        "record it with: RAGALIQ_MODE=record cargo test -p ragaliq-tests --test modes -- ci_recorded_judge",
    ),
    (
        "ci_from_env",
        "record it with: RAGALIQ_MODE=record cargo test",
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ci_never_calls_a_judge_it_was_not_told_to() {
    let server = ScriptedJudge::start().await;
    let url = server.base_url();
    let dir = temp_dir("ci");
    let snapshots = dir.join("snapshots");
    std::fs::create_dir_all(&snapshots).unwrap();
    // Each file mode that calls the judge, and none (the attributes' case):
    // every child, one process per file, nothing asked.
    for mode in [Some("auto"), Some("record"), Some("live"), None] {
        let config = judge_file(&dir, mode, &url);
        let run = run_ci_child("ci_", &snapshots, &config, &[]);
        let shown = mode.unwrap_or("none");
        println!(
            "CI=true, the file's mode {shown}, children {}: {} requests",
            CI_CHILDREN.map(|(c, _)| c).join(", "),
            server.requests()
        );
        assert!(
            !run.passed,
            "file mode {shown}: nothing is recorded, so every child fails"
        );
        assert_eq!(
            server.requests(),
            0,
            "file mode {shown}: CI called the judge\n{}",
            run.output
        );
        for (child, command) in CI_CHILDREN {
            assert!(
                run.output.contains(&format!("test {child} ... FAILED")),
                "file mode {shown}, {child}:\n{}",
                run.output
            );
            assert!(
                run.output.contains(command),
                "file mode {shown}, {child}: no `{command}`\n{}",
                run.output
            );
        }
        assert!(
            run.output
                .contains("no recording for test `modes::ci_rag_test` (mode replay)"),
            "{}",
            run.output
        );
        // What was ignored is said once for the process, on stderr, with
        // where it came from and how to record in CI on purpose.
        let said: Vec<&str> = run
            .output
            .lines()
            .filter(|l| l.starts_with("ragaliq: CI is set, so "))
            .collect();
        assert_eq!(said.len(), 1, "file mode {shown}:\n{}", run.output);
        // The first test run (in name order) that ignored something says
        // it: the attribute, which would have beaten the file.
        let expected = "ragaliq: CI is set, so #[rag_test(mode = \"auto\")] on test `modes::ci_attribute_auto` is ignored and the mode is replay (CI is set)";
        assert!(
            said[0].starts_with(expected),
            "{}\nnot: {expected}",
            said[0]
        );
        assert!(
            said[0].contains("set RAGALIQ_MODE=record in the job's environment"),
            "{}",
            said[0]
        );
        if let Some(m) = mode {
            // A test without an attribute: the file's mode is the one said,
            // with the file's path.
            let run = run_ci_child("ci_rag_test", &snapshots, &config, &[]);
            let expected = format!(
                "ragaliq: CI is set, so ci-{m}.toml's mode = \"{m}\" ({}) is ignored and the mode is replay (CI is set)",
                config.display()
            );
            assert!(
                run.output.contains(&expected),
                "not: {expected}\n{}",
                run.output
            );
            assert_eq!(server.requests(), 0, "{}", run.output);
        }
        // Judge::from_env says why it refused.
        assert!(
            run.output
                .contains("this judge has no recording, and the mode is replay (CI is set"),
            "{}",
            run.output
        );
    }
    assert_eq!(
        std::fs::read_dir(&snapshots).unwrap().count(),
        0,
        "replay writes nothing"
    );

    // The nightly job that records on purpose says so in its environment:
    // every way to get a judge then asks it (one question each).
    let config = judge_file(&dir, Some("auto"), &url);
    let run = run_ci_child("ci_", &snapshots, &config, &[("RAGALIQ_MODE", "record")]);
    println!(
        "CI=true RAGALIQ_MODE=record, the file's mode auto: {} requests",
        server.requests()
    );
    assert_eq!(server.requests(), 5, "{}", run.output);
    assert!(
        !run.output.contains("no recording for test"),
        "{}",
        run.output
    );

    let _ = std::fs::remove_dir_all(&dir);
}

/// A person's verdict reaches a `#[rag_test]` run the way a user runs it:
/// the test passes or fails by it in replay, asks nothing, and says on
/// stderr that it used one even when it passes (a plain `cargo test` has no
/// suite report to count it in).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rag_test_says_when_a_persons_verdict_decided_it() {
    use ragaliq::record::{self, Recording};
    use ragaliq::review::{Thresholds, items};

    let server = ScriptedJudge::start().await;
    let url = server.base_url();
    let dir = temp_dir("reviewed");
    let snap = dir.join("modes__child_case.snap");
    let run = run_child("record", &url, &dir, &[]);
    assert!(run.output.contains("stored new snapshot"), "{}", run.output);
    std::fs::rename(dir.join("modes__child_case.snap.new"), &snap).unwrap();
    let asked = server.requests();

    // Unreviewed, it passes and says nothing about a person.
    let run = run_child("replay", &url, &dir, &[]);
    assert!(run.passed, "{}", run.output);
    assert!(!run.output.contains("given by a person"), "{}", run.output);

    // The one claim, read by faithfulness and hallucination alike.
    let recording = Recording::read(&snap).unwrap().unwrap();
    let claims: Vec<_> = items(&recording, &Thresholds::default())
        .into_iter()
        .filter(|i| i.task == "claim_supported")
        .collect();
    assert_eq!(claims.len(), 1, "{claims:?}");
    let key = claims[0].judged.key.clone();
    let set = |verdict: &str| {
        record::update(&snap, |r| {
            record::set_verdict(r, &key, verdict, Some("ana".into()), None)
        })
        .unwrap()
        .unwrap();
    };

    // Agreeing with the judge: still passes, and says a person decided it.
    set("supported");
    let run = run_child("replay", &url, &dir, &[]);
    assert!(run.passed, "{}", run.output);
    assert!(
        run.output
            .contains("ragaliq: `modes::child_case` used 1 verdict given by a person from ")
            && run
                .output
                .contains("modes__child_case.snap in place of the judge's reading"),
        "{}",
        run.output
    );

    // Overruling it: the same recording now fails, by the person's word.
    set("no_evidence");
    let run = run_child("replay", &url, &dir, &[]);
    assert!(!run.passed, "{}", run.output);
    assert!(
        run.output
            .contains("no_evidence (a person's verdict, by ana; the judge: supported"),
        "{}",
        run.output
    );
    // The failure message itself counts it (the stderr line is for passes).
    assert!(
        run.output
            .contains("no tokens spent; 1 verdict from a person\n"),
        "{}",
        run.output
    );
    assert_eq!(server.requests(), asked, "replay asked the judge");
}

/// A claim the judge is unsure of (P(supported) 0.92 read inside a band
/// [0.9, 0.95)) awaits a person: the test fails until one gives the
/// verdict, says so first, and prints the command that gives it;
/// run as printed, that command records it, and the replay passes by it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rag_test_the_judge_is_unsure_of_awaits_a_person_until_one_gives_the_verdict() {
    let server = ScriptedJudge::start().await;
    let url = server.base_url();
    let dir = temp_dir("awaiting");
    let band = [("RAGALIQ_BAND_CLAIMS", "0.9,0.95")];
    let run = run_child("record", &url, &dir, &band);
    assert!(!run.passed, "{}", run.output);
    assert!(
        run.output.contains(
            "assert_faithful! AWAITING A PERSON for case `child`: the judge is unsure, so this test fails until a person gives the verdict (not a low score; `uncertain = \"pass\"` would let it pass meanwhile)"
        ),
        "{}",
        run.output
    );
    assert!(
        run.output.contains("faithfulness: AWAITING A PERSON: the judge is unsure of 1 claim; counted each way the score is 0.00 to 1.00, on both sides of the threshold 0.70")
            && run.output.contains("uncertain: P(supported) 0.92, inside the band [0.33, 0.95) of `scripted`"),
        "{}",
        run.output
    );
    // Accepted as recorded, it still awaits a person in CI.
    std::fs::rename(
        dir.join("modes__child_case.snap.new"),
        dir.join("modes__child_case.snap"),
    )
    .unwrap();
    let mut ci = band.to_vec();
    ci.push(("CI", "true"));
    let run = run_child("replay", &url, &dir, &ci);
    assert!(
        !run.passed && run.output.contains("AWAITING A PERSON"),
        "{}",
        run.output
    );
    // The item's command, run as printed, from where the test ran.
    let printed = run
        .output
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("cargo ragaliq review ") && l.contains("--key"))
        .expect("the command that gives the verdict");
    let command = printed.split("   #").next().unwrap().trim();
    let args: Vec<&str> = command.split_whitespace().skip(1).collect();
    let bin = std::env::current_exe()
        .unwrap()
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("cargo-ragaliq");
    let given = Command::new(&bin).args(&args).output().unwrap_or_else(|e| {
        panic!(
            "{} ({e}): `cargo test --workspace` builds it",
            bin.display()
        )
    });
    assert!(
        given.status.success(),
        "{command}\n{}{}",
        String::from_utf8_lossy(&given.stdout),
        String::from_utf8_lossy(&given.stderr)
    );
    let asked = server.requests();
    let run = run_child("replay", &url, &dir, &ci);
    assert!(run.passed, "{}", run.output);
    assert!(
        run.output.contains("used 1 verdict given by a person"),
        "{}",
        run.output
    );
    assert_eq!(server.requests(), asked, "replay asked the judge");
    // `uncertain = "pass"`: the test passes meanwhile, and says so.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut pass = band.to_vec();
    pass.push(("RAGALIQ_UNCERTAIN", "pass"));
    let run = run_child("record", &url, &dir, &pass);
    assert!(
        run.output.contains("assert_faithful! for case `child` awaits a person and passes meanwhile (uncertain = \"pass\")"),
        "{}",
        run.output
    );
}

/// Upgrading across the change of correctness's default: a recording that
/// graded an answer by claims both ways is stale for the direct question,
/// and the message says so and names both ways out (re-record, or keep
/// claims both ways), not just "the test asks something new".
#[tokio::test]
async fn a_claims_both_ways_recording_says_why_the_direct_question_is_stale() {
    use ragaliq::Mode;
    use ragaliq::record::{Location, Recorder};
    let server = ScriptedJudge::start().await;
    let dir = temp_dir("upgrade");
    let location = || {
        Location::at(
            dir.join("t.snap"),
            "modes::t",
            "RAGALIQ_MODE=record cargo test",
        )
    };
    let case = RagCase::new("How long is the return window?")
        .expected_answer("30 days from delivery.")
        .response("You can return online orders for up to 30 days after they are delivered.");
    let judge = |recorder: &Arc<Recorder>, correctness| {
        Judge::builder(ragaliq::judge::OpenAiTransport::new(&server.base_url()))
            .with_model("scripted")
            .with_correctness(correctness)
            .build()
            .unwrap()
            .with_recorder(recorder.clone())
    };
    let recorder = Arc::new(Recorder::new(location(), Mode::Record));
    judge(&recorder, Correctness::F1)
        .evaluate(Metric::Correctness, &case)
        .await
        .unwrap();
    recorder.save_pending("tests/modes.rs").unwrap().unwrap();
    std::fs::rename(dir.join("t.snap.new"), dir.join("t.snap")).unwrap();

    // The same recording still replays claims both ways ...
    let recorder = Arc::new(Recorder::new(location(), Mode::Replay));
    judge(&recorder, Correctness::F1)
        .evaluate(Metric::Correctness, &case)
        .await
        .unwrap();
    // ... and is stale for the direct question, saying why.
    let recorder = Arc::new(Recorder::new(location(), Mode::Replay));
    let err = judge(&recorder, Correctness::Direct)
        .evaluate(Metric::Correctness, &case)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("stale recording for test `modes::t`: answer_correct"),
        "{err}"
    );
    assert!(
        err.contains("the recording graded correctness by claims both ways (the reference's claims extracted and checked)")
            && err.contains("`[scoring] correctness = \"f1\"` in ragaliq.toml"),
        "{err}"
    );
}

// ── The found rule's decisions: kept, overruled, replayed ─────────────────

const MOLECH: &str = "What does the name Molech mean?";

/// Right by the found rule: the reference alone in a sentence.
#[rag_test]
#[ignore = "run in a child process by the found-rule test"]
async fn child_found_right(judge: Judge) {
    let case = RagCase::new("How long is the refund window?")
        .id("found_right")
        .response("You have thirty days to return your order.")
        .expected_answer("30 days");
    assert_correct!(judge, case);
}

/// The gold answer itself, which people judged wrong (NQ301, paraphrased:
/// the question meant something else): the rule decides it correct, and
/// only a person can say otherwise.
#[rag_test]
#[ignore = "run in a child process by the found-rule test"]
async fn child_found_wrong(judge: Judge) {
    let case = RagCase::new(MOLECH)
        .id("found_wrong")
        .response("A king.")
        .expected_answer("king");
    assert_caught!(judge, case, correctness);
}

/// A wrong answer written to fool the rule (the first): it holds
/// the reference, asks it back and denies it. The rule leaves it to the
/// judge, which catches it.
#[rag_test]
#[ignore = "run in a child process by the found-rule test"]
async fn child_found_trap(judge: Judge) {
    let case = RagCase::new("How long is the refund window?")
        .id("found_trap")
        .response("30 days? No: you have 14 days.")
        .expected_answer("30 days");
    let eval = assert_caught!(judge, case, correctness);
    let graded = eval.graded.as_ref().unwrap();
    assert!(graded.found.is_some() && !graded.by_rule, "{eval}");
}

fn run_found(child: &str, mode: &str, url: &str, dir: &Path, extra: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args([child, "--exact", "--ignored", "--test-threads=1"])
        .env_remove("CI")
        .env_remove("TF_BUILD")
        .env_remove("RAGALIQ_PROMPTS_DIR")
        .env_remove("RAGALIQ_FOUND_RULE")
        .env_remove("INSTA_FORCE_PASS")
        .env("RAGALIQ_MODE", mode)
        .env("RAGALIQ_BASE_URL", url)
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

/// A decision of the found rule is an item of the recording (an
/// `answer_found` exchange, no call): a recording made before such
/// decisions were kept still replays (the decision needs no answer) and
/// says it does not list it; `auto` adds it without a call; a failing
/// `assert_caught!` prints the command that overrules it; run as printed,
/// that command keeps a person's "no", and `CI=true` replays it. With
/// `found_rule = false` the judge is asked instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_found_rule_decision_is_an_item_a_person_overrules() {
    use ragaliq::record::Recording;
    let server = ScriptedJudge::start().await;
    let url = server.base_url();
    let dir = temp_dir("found");
    let ci = [("CI", "true")];

    // Replay with no recording (as one made before): decided, nothing
    // written, and said.
    let run = run_found("child_found_right", "replay", &url, &dir, &ci);
    assert!(run.passed, "{}", run.output);
    assert!(
        run.output
            .contains("the found rule decided 1 answer with no call that ")
            && run.output.contains("does not list"),
        "{}",
        run.output
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "replay wrote");

    // Auto: the decision is added, with no call, as a pending recording.
    let run = run_found("child_found_right", "auto", &url, &dir, &[]);
    assert!(run.output.contains("stored new snapshot"), "{}", run.output);
    let pending = dir.join("modes__child_found_right.snap.new");
    let recording = Recording::read(&pending).unwrap().unwrap();
    assert_eq!(recording.exchanges.len(), 1, "{recording:?}");
    let entry = &recording.exchanges[0];
    assert_eq!(
        (
            entry.task.as_str(),
            entry.model.as_str(),
            entry.tokens.input + entry.tokens.output
        ),
        ("answer_found", "found rule", 0)
    );
    assert!(entry.is_rule());
    let yaml = std::fs::read_to_string(&pending).unwrap();
    assert!(
        yaml.contains("found: thirty days") && yaml.contains("at: words 3–4"),
        "{yaml}"
    );
    std::fs::rename(&pending, dir.join("modes__child_found_right.snap")).unwrap();
    let run = run_found("child_found_right", "replay", &url, &dir, &ci);
    assert!(
        run.passed && !run.output.contains("does not list"),
        "{}",
        run.output
    );

    // The wrong answer the rule lets through: recorded, and the failing
    // assertion prints the command that overrules the rule.
    let run = run_found("child_found_wrong", "auto", &url, &dir, &[]);
    assert!(!run.passed, "{}", run.output);
    std::fs::rename(
        dir.join("modes__child_found_wrong.snap.new"),
        dir.join("modes__child_found_wrong.snap"),
    )
    .unwrap();
    let run = run_found("child_found_wrong", "replay", &url, &dir, &ci);
    assert!(!run.passed, "{}", run.output);
    assert!(
        run.output.contains("the answer was not caught")
            && run.output.contains(
                "the found rule decided it correct with no call (no judge read it); if that is wrong, overrule it"
            ),
        "{}",
        run.output
    );
    let printed = run
        .output
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("cargo ragaliq review ") && l.contains("--key"))
        .expect("the command that overrules the rule");
    assert!(printed.ends_with("--verdict no"), "{printed}");
    let args: Vec<&str> = printed.split_whitespace().skip(1).collect();
    let bin = std::env::current_exe()
        .unwrap()
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("cargo-ragaliq");
    let given = Command::new(&bin).args(&args).output().unwrap_or_else(|e| {
        panic!(
            "{} ({e}): `cargo test --workspace` builds it",
            bin.display()
        )
    });
    assert!(
        given.status.success(),
        "{printed}\n{}{}",
        String::from_utf8_lossy(&given.stdout),
        String::from_utf8_lossy(&given.stderr)
    );
    let run = run_found("child_found_wrong", "replay", &url, &dir, &ci);
    assert!(run.passed, "{}", run.output);
    assert!(
        run.output.contains("used 1 verdict given by a person"),
        "{}",
        run.output
    );
    assert_eq!(server.requests(), 0, "the found rule asked the judge");

    // A trap holding the reference: not decided by the rule, asked, and
    // the judge's no catches it.
    let run = run_found("child_found_trap", "auto", &url, &dir, &[]);
    assert!(run.output.contains("stored new snapshot"), "{}", run.output);
    assert_eq!(server.requests(), 1, "the trap was not asked about");
    let trap = Recording::read(&dir.join("modes__child_found_trap.snap.new"))
        .unwrap()
        .unwrap();
    let tasks: Vec<&str> = trap.exchanges.iter().map(|e| e.task.as_str()).collect();
    assert_eq!(tasks, ["answer_correct"]);

    // The rule off: the judge is asked (a request reaches it), and in
    // replay the recording lacks that answer.
    let off = [("RAGALIQ_FOUND_RULE", "false")];
    let run = run_found("child_found_right", "replay", &url, &dir, &off);
    assert!(
        !run.passed && run.output.contains("answer_correct"),
        "{}",
        run.output
    );
    let _ = run_found("child_found_right", "auto", &url, &dir, &off);
    assert_eq!(server.requests(), 2, "the rule off asked nothing");
    let _ = std::fs::remove_dir_all(&dir);
}
