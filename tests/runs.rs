//! A run's limits hold across tests and processes: one concurrency limit and
//! one cost budget for the whole run, whatever the number of tests and
//! processes; locks that cannot be taken fail loudly (or, for a run of one
//! process, fall back with a warning); and tests running at once never see
//! each other's assertion failures. The children are this binary's own
//! ignored tests, run as processes with a controlled environment against the
//! scripted judge on 127.0.0.1.

use ragaliq::prelude::*;
use ragaliq_scripted::ScriptedJudge;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// Three questions at once from one test.
async fn three_at_once(judge: &Judge, test: usize) {
    let cases: Vec<RagCase> = (0..3)
        .map(|i| {
            RagCase::new(format!("What is delivery rule {test}-{i}?"))
                .response(format!("Delivery rule {test}-{i} takes a week."))
        })
        .collect();
    let results = futures_util::future::join_all(cases.iter().map(|c| judge.relevance(c))).await;
    for r in results {
        r.expect("the judge answers");
    }
}

macro_rules! eight_tests {
    ($($name:ident = $n:expr),*) => {$(
        #[rag_test(mode = "live")]
        #[ignore = "run in a child process by `one_concurrency_limit_for_every_test_of_a_process`"]
        async fn $name(judge: Judge) {
            three_at_once(&judge, $n).await;
        }
    )*};
}

eight_tests!(
    t1 = 1,
    t2 = 2,
    t3 = 3,
    t4 = 4,
    t5 = 5,
    t6 = 6,
    t7 = 7,
    t8 = 8
);

/// Child: relevance of `CHILD_CASES` cases, one after the other, counting
/// the ones the budget stopped.
#[rag_test(mode = "live")]
#[ignore = "run in child processes by `one_budget_for_every_process_of_a_run`"]
async fn spend(judge: Judge) {
    let n: usize = std::env::var("CHILD_CASES").unwrap().parse().unwrap();
    let mut stopped = 0;
    for i in 0..n {
        let case = RagCase::new(format!(
            "What is refund rule {i} of {}?",
            std::process::id()
        ))
        .response(format!("Refund rule {i} allows returns."));
        match judge.relevance(&case).await {
            Ok(_) => {}
            Err(e) if e.is_budget() => stopped += 1,
            Err(e) => panic!("{e}"),
        }
    }
    println!("stopped by the budget: {stopped}");
}

/// Child: one relevance evaluation, recorded in auto mode (its recording
/// goes to `RAGALIQ_SNAPSHOT_DIR`).
#[rag_test(mode = "auto")]
#[ignore = "run in child processes by `a_lock_that_cannot_be_taken_fails_loudly_or_falls_back`"]
async fn records(judge: Judge) {
    let case = RagCase::new("What is the delivery rule?").response("Delivery takes a week.");
    judge.relevance(&case).await.expect("the judge answers");
}

/// Lets the two tests below run in a set order.
static GATE: std::sync::Barrier = std::sync::Barrier::new(2);

/// Child: a `#[should_panic]` test that fails with an ordinary panic, while
/// another test of the process fails an assertion because of the judge.
#[rag_test(mode = "live", flavor = "multi_thread")]
#[should_panic(expected = "an ordinary panic")]
#[ignore = "run in a child process by `tests_at_once_never_see_each_others_failures`"]
async fn plain_panic(_judge: Judge) {
    GATE.wait(); // the other test has failed on its judge by now
    panic!("an ordinary panic");
}

/// Child: fails an assertion on a configuration error (a judge-side
/// failure, which must never satisfy a `#[should_panic]`).
#[rag_test(mode = "live", flavor = "multi_thread")]
#[ignore = "run in a child process by `tests_at_once_never_see_each_others_failures`"]
async fn judge_side_failure(judge: Judge) {
    use futures_util::FutureExt;
    let case = RagCase::new("What is the delivery rule?").response("Delivery takes a week.");
    let threshold = 1.5;
    let failed = std::panic::AssertUnwindSafe(async {
        assert_relevant!(judge, case, threshold = threshold);
    })
    .catch_unwind()
    .await;
    assert!(failed.is_err());
    GATE.wait();
    std::thread::sleep(Duration::from_millis(500)); // the other test ends first
}

/// Child: a `#[should_panic]` test whose judge file is not there. The
/// configuration error comes before the body and must not satisfy
/// `#[should_panic]`, even an `expected` its message holds.
#[rag_test(config = "tests/judges/no-such-judge.toml")]
#[should_panic(expected = "ragaliq configuration error")]
#[ignore = "run in a child process by `a_configuration_error_never_satisfies_should_panic`"]
async fn unloadable_judge_file(_judge: Judge) {}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ragaliq-runs-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn child(args: &[&str], config: &Path, env: &[(&str, String)]) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    // Under `cargo insta test` the parent has insta's settings (pending
    // folder, update mode, references file); the children must not.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("INSTA_") {
            cmd.env_remove(name);
        }
    }
    cmd.args(args)
        .args(["--ignored", "--nocapture"])
        .env("RAGALIQ_CONFIG", config)
        .env_remove("CI")
        .env_remove("NEXTEST_RUN_ID")
        .env_remove("RAGALIQ_RUN_ID")
        .env_remove("RAGALIQ_MODE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn config(dir: &Path, server: &ScriptedJudge, extra: &str) -> PathBuf {
    let path = dir.join("ragaliq.toml");
    std::fs::write(
        &path,
        format!(
            "[judge]\nprovider = \"openai-compatible\"\nmodel = \"scripted\"\nbase_url = \"{}\"\n{extra}",
            server.base_url()
        ),
    )
    .unwrap();
    path
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_concurrency_limit_for_every_test_of_a_process() {
    let server = ScriptedJudge::start().await;
    server.set_latency(Duration::from_millis(150));
    let dir = temp_dir("limit");
    let config = config(&dir, &server, "concurrency = 4\n");
    // Eight tests at once, each with three questions in flight: 24 would
    // be asked at once with a limit per test.
    let out = tokio::task::spawn_blocking(move || {
        child(&["--test-threads=8"], &config, &[])
            .args(["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(server.requests(), 24);
    assert!(
        server.max_in_flight() <= 4,
        "the limit is shared: {} in flight",
        server.max_in_flight()
    );
    assert!(server.max_in_flight() >= 3, "the tests did run at once");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_budget_for_every_process_of_a_run() {
    let server = ScriptedJudge::start().await;
    let dir = temp_dir("budget");
    // Each call costs a little over $1 (about 100 prompt tokens of a short
    // relevance question at $10,000 per million); the run may spend $10.
    let config = config(
        &dir,
        &server,
        "concurrency = 1\n[cost]\nmax_usd = 10.0\n[cost.prices.\"scripted\"]\ninput_per_million = 10000.0\noutput_per_million = 0.0\n",
    );
    let run = format!("budget-{}", std::process::id());
    const PROCESSES: usize = 4;
    let outs = tokio::task::spawn_blocking(move || {
        let children: Vec<_> = (0..PROCESSES)
            .map(|_| {
                child(
                    &["spend", "--exact"],
                    &config,
                    &[("RAGALIQ_RUN_ID", run.clone()), ("CHILD_CASES", "8".into())],
                )
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
            })
            .collect();
        children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    let mut stopped = 0;
    for out in &outs {
        assert!(out.status.success(), "{}", text(out));
        let t = text(out);
        stopped += t
            .lines()
            .find_map(|l| l.strip_prefix("stopped by the budget: "))
            .and_then(|n| n.trim().parse::<u64>().ok())
            .expect("the child reports");
    }
    let calls = server.requests();
    // 32 wanted; about 10 fit the budget. A call already past the check when
    // the budget ran out still finishes: with one concurrency limit for the
    // run (1 here), at most one, whatever the number of processes.
    assert!(
        (8..=11).contains(&calls),
        "{calls} calls for a budget of about 10"
    );
    assert_eq!(
        calls + stopped,
        32,
        "every question was either asked or stopped"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_concurrency_limit_for_every_process_of_a_run() {
    let server = ScriptedJudge::start().await;
    server.set_latency(Duration::from_millis(150));
    let dir = temp_dir("run-limit");
    let config = config(&dir, &server, "concurrency = 4\n");
    let run = format!("limit-{}", std::process::id());
    // Sixteen processes of one run, each with three questions at once: 48
    // would be in flight with a limit per process.
    const PROCESSES: usize = 16;
    let outs = tokio::task::spawn_blocking(move || {
        let children: Vec<_> = (0..PROCESSES)
            .map(|_| {
                child(
                    &["t1", "--exact"],
                    &config,
                    &[("RAGALIQ_RUN_ID", run.clone())],
                )
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
            })
            .collect();
        children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for out in &outs {
        assert!(out.status.success(), "{}", text(out));
    }
    assert_eq!(server.requests(), 3 * PROCESSES as u64);
    assert!(
        server.max_in_flight() <= 4,
        "one limit for the run: {} in flight",
        server.max_in_flight()
    );
    assert!(server.max_in_flight() >= 3, "the processes did run at once");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_that_cannot_be_taken_fails_loudly_or_falls_back() {
    let server = ScriptedJudge::start().await;
    let dir = temp_dir("locks");
    let config = config(&dir, &server, "");
    // A lock folder that cannot exist: its parent is a file.
    std::fs::write(dir.join("a-file"), "").unwrap();
    let locks = dir.join("a-file").join("locks");
    let run_child = |run_id: Option<String>, snapshots: PathBuf| {
        let mut env = vec![
            ("RAGALIQ_LOCK_DIR", locks.display().to_string()),
            ("RAGALIQ_SNAPSHOT_DIR", snapshots.display().to_string()),
        ];
        if let Some(id) = run_id {
            env.push(("RAGALIQ_RUN_ID", id));
        }
        child(&["records", "--exact"], &config, &env)
            .output()
            .unwrap()
    };
    // A run of several processes: a clear error, nothing written unlocked.
    let run = format!("locks-{}", std::process::id());
    let shared = dir.join("shared");
    let out = run_child(Some(run), shared.clone());
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(t.contains("cannot lock"), "{t}");
    assert!(t.contains("RAGALIQ_LOCK_DIR"), "{t}");
    assert!(
        !shared.join("runs__records.snap.new").exists(),
        "nothing is merged without the lock"
    );
    // A run of one process: single-writer mode, said once, and it works.
    let alone = dir.join("alone");
    let out = run_child(None, alone.clone());
    let t = text(&out);
    assert!(t.contains("single-writer mode"), "{t}");
    assert!(t.contains("stored new snapshot"), "{t}");
    assert!(alone.join("runs__records.snap.new").exists(), "{t}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tests_at_once_never_see_each_others_failures() {
    let server = ScriptedJudge::start().await;
    let dir = temp_dir("failures");
    let config = config(&dir, &server, "");
    let out = tokio::task::spawn_blocking(move || {
        child(
            &["plain_panic", "judge_side_failure", "--test-threads=2"],
            &config,
            &[],
        )
        .output()
        .unwrap()
    })
    .await
    .unwrap();
    let t = text(&out);
    // The ordinary panic satisfies its own #[should_panic]; the other
    // test's judge-side failure is not taken for it.
    assert!(t.contains("test plain_panic - should panic ... ok"), "{t}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_configuration_error_never_satisfies_should_panic() {
    let dir = temp_dir("should-panic");
    let out = child(
        &["unloadable_judge_file", "--exact"],
        &dir.join("ragaliq.toml"),
        &[],
    )
    .output()
    .unwrap();
    let t = text(&out);
    assert!(
        t.contains("test unloadable_judge_file - should panic ... FAILED"),
        "{t}"
    );
    assert!(
        t.contains("this #[should_panic] test is failed instead of passing on it"),
        "{t}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
