//! `cargo ragaliq record --batch` end to end, through the fake OpenAI and
//! Anthropic batch APIs of the scripted judge on 127.0.0.1: a suite is
//! recorded in rounds, through per-line errors, a `status_code` 0 line, a
//! batch that expires part way, a failed poll and results out of order;
//! the recordings equal a live record of the same answers; they replay with
//! `CI=true` and no judge; a driver killed while waiting resumes without
//! submitting a batch twice.
//!
//! This file is its own test command, too: with `BATCH_TEST_SUITE` set it
//! runs the suite over that folder, as `cargo test` would run a user's.

use libtest_mimic::{Arguments, Failed, Trial};
use ragaliq::Metric;
use ragaliq_scripted::{BatchFaults, ScriptedJudge};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output, Stdio};
use std::time::{Duration, Instant};

const SUITE: &str = "BATCH_TEST_SUITE";

fn main() -> ExitCode {
    if let Ok(dir) = std::env::var(SUITE) {
        return ragaliq::suite(dir)
            .metrics([
                Metric::Faithfulness,
                Metric::Hallucination,
                Metric::Relevance,
            ])
            .with_args(Arguments::from_iter(["suite", "--test-threads", "2"]))
            .run();
    }
    let args = Arguments::from_args();
    let trials = vec![
        Trial::test("a_suite_is_recorded_through_openais_batch_api", || {
            record_through(Provider::OpenAi)
        }),
        Trial::test("a_suite_is_recorded_through_anthropics_batch_api", || {
            record_through(Provider::Anthropic)
        }),
        Trial::test(
            "a_driver_killed_while_waiting_resumes_without_submitting_twice",
            crash_and_resume,
        ),
        Trial::test(
            "providers_without_a_batch_api_are_not_offered_it",
            no_batch_api,
        ),
        Trial::test("the_budget_applies_to_what_is_submitted", budget),
        Trial::test(
            "a_cascade_is_recorded_in_rounds_each_judge_after_the_one_it_escalates_from",
            cascade,
        ),
        Trial::test(
            "a_test_command_that_runs_no_test_is_not_a_finished_record",
            no_test_ran,
        ),
        Trial::test(
            "a_folder_that_is_not_a_batch_folder_is_never_emptied",
            not_a_batch_folder,
        ),
        Trial::test(
            "answers_paid_for_without_a_state_file_are_kept",
            answers_without_state,
        ),
        Trial::test(
            "a_second_driver_on_one_folder_is_refused_naming_the_first",
            second_driver,
        ),
        Trial::test("a_lost_create_reply_is_adopted_openai", || {
            lost_create(Provider::OpenAi)
        }),
        Trial::test(
            "a_lost_create_never_takes_another_shards_batch_anthropic",
            shards_anthropic,
        ),
        Trial::test(
            "a_lost_create_made_at_the_provider_is_adopted_when_named_anthropic",
            adopt_named_anthropic,
        ),
        Trial::test(
            "a_crash_after_the_create_resumes_by_the_tag_not_submitting_again",
            crash_after_create,
        ),
        Trial::test(
            "a_crash_after_the_answers_counts_their_cost_on_resume",
            crash_after_answers,
        ),
        Trial::test("absurd_poll_intervals_are_refused", absurd_poll),
    ];
    libtest_mimic::run(&args, trials).exit_code()
}

#[derive(Clone, Copy, PartialEq)]
enum Provider {
    OpenAi,
    Anthropic,
}

/// Cases with one, two and three claims, a hallucination the suite must
/// catch, and an off-topic answer.
const CASES: &str = r#"
- id: refund-window
  query: What is the refund window?
  context:
    - Refunds are accepted within 30 days of delivery.
    - Refund requests need the order number.
  response: The refund window is 30 days from delivery. Refund requests need the order number.
- id: refund-gold
  query: What is the refund window?
  context:
    - Refunds are accepted within 30 days of delivery.
    - Refunds are paid to the original payment method.
  response: The refund window is 30 days from delivery. Refunds are paid in gold coins.
  expect:
    faithfulness: fail
    hallucination: fail
- id: shipping-time
  query: How long does shipping take?
  context:
    - Standard shipping takes 3 to 5 business days.
    - Express shipping arrives the next business day.
    - Shipping is free over 50 dollars.
  response: Standard shipping takes 3 to 5 business days. Express shipping arrives the next business day. Shipping is free over 50 dollars.
- id: warranty-off-topic
  query: How long is the warranty?
  context:
    - The warranty lasts two years from purchase.
  response: Our stores open at nine in the morning.
  expect:
    relevance: fail
    faithfulness: fail
    hallucination: fail
"#;

/// A scripted judge on its own runtime, for as long as the value lives.
struct Judge {
    judge: ScriptedJudge,
    _runtime: tokio::runtime::Runtime,
}

fn start_judge() -> Judge {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let judge = runtime.block_on(ScriptedJudge::start());
    Judge {
        judge,
        _runtime: runtime,
    }
}

/// Bands off for the scripted judge: what these tests score is the batch
/// round trip, read at the thresholds (`scripted` is a judge nothing was
/// measured for, whose readings from 0.05 to 0.95 would await a person).
const BANDS_OFF: &str = "[bands]\nclaims = \"off\"\nanswers = \"off\"\npassages = \"off\"\ngraded = \"off\"\njudged = \"off\"\ncustom = \"off\"\n";

/// A project folder: the cases and a ragaliq.toml for `provider`.
fn project(name: &str, provider: Provider, base_url: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("ragaliq-batch-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("cases")).unwrap();
    std::fs::write(root.join("cases/support.yaml"), CASES).unwrap();
    let (provider, key) = match provider {
        Provider::OpenAi => ("openai", "fake-key-for-the-loopback-batch-test"),
        Provider::Anthropic => (
            "anthropic",
            "fake-anthropic-key-for-the-loopback-batch-test",
        ),
    };
    std::fs::write(
        root.join("ragaliq.toml"),
        format!(
            "[judge]\nprovider = \"{provider}\"\nmodel = \"scripted\"\nbase_url = \"{base_url}\"\napi_key_env = \"BATCH_TEST_KEY\"\nstream = false\n\n{BANDS_OFF}"
        ),
    )
    .unwrap();
    std::fs::write(root.join("key"), key).unwrap();
    root
}

/// A command with the environment a developer's shell would give it: no
/// CI, no insta settings, this project's configuration and key.
fn command(program: impl AsRef<std::ffi::OsStr>, root: &Path) -> Command {
    let mut cmd = Command::new(program);
    for var in [
        "CI",
        "TF_BUILD",
        "INSTA_UPDATE",
        "INSTA_FORCE_PASS",
        "INSTA_PENDING_DIR",
        "INSTA_WORKSPACE_ROOT",
        "CARGO_MANIFEST_DIR",
        "RAGALIQ_MODE",
        "RAGALIQ_COLLECT",
        "RAGALIQ_RUN_ID",
        "NEXTEST_RUN_ID",
        "RAGALIQ_JUDGE",
        "RAGALIQ_BASE_URL",
    ] {
        cmd.env_remove(var);
    }
    cmd.current_dir(root)
        .env("RAGALIQ_CONFIG", root.join("ragaliq.toml"))
        .env(
            "BATCH_TEST_KEY",
            std::fs::read_to_string(root.join("key")).unwrap(),
        )
        .env("INSTA_WORKSPACE_ROOT", root);
    cmd
}

/// `cargo ragaliq record --batch …` over the project, with this file as
/// the test command.
fn driver(root: &Path, extra: &[&str]) -> Command {
    let mut cmd = command(env!("CARGO_BIN_EXE_cargo-ragaliq"), root);
    cmd.args(["ragaliq", "record", "--batch", "--poll-secs", "0.05"])
        .args(extra)
        .arg("--")
        .arg(std::env::current_exe().unwrap())
        .env(SUITE, root.join("cases"));
    cmd
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The recordings in `dir`: (file name, contents), sorted.
fn recordings(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read_to_string(e.path()).unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn check(ok: bool, what: impl FnOnce() -> String) -> Result<(), Failed> {
    if ok { Ok(()) } else { Err(what().into()) }
}

fn record_through(provider: Provider) -> Result<(), Failed> {
    let judge = start_judge();
    let name = match provider {
        Provider::OpenAi => "openai",
        Provider::Anthropic => "anthropic",
    };
    let root = project(name, provider, &judge.judge.base_url());
    // Everything a client must survive, in the first round's batch.
    judge.judge.set_batch_faults(BatchFaults {
        polls_to_end: 3,
        line_errors: 1,
        status_zero: 1,
        expire_after: Some(3),
        poll_errors: 1,
        ..BatchFaults::default()
    });
    let started = Instant::now();
    let output = driver(&root, &[]).output().unwrap();
    let log = text(&output);
    println!("{log}");
    check(output.status.success(), || {
        format!("the batch record failed:\n{log}")
    })?;
    check(judge.judge.requests() == 0, || {
        format!(
            "{} live calls were made: every answer must come from a batch",
            judge.judge.requests()
        )
    })?;
    let (batches, lines) = judge.judge.batches();
    println!(
        "{name}: {batches} batches, {lines} lines, {} polls, {:.1} s",
        judge.judge.batch_polls(),
        started.elapsed().as_secs_f64()
    );
    check(log.contains("failed (asked again next round)"), || {
        format!("the faulty lines were not asked again:\n{log}")
    })?;
    // The failed poll is retried inside the poll call (the retry policy),
    // so the record goes on: it succeeded above.
    // Rounds: extraction, then verification (and relevance), then nothing.
    check(
        log.contains("round 3:") && log.contains("nothing queued"),
        || format!("expected at least three rounds:\n{log}"),
    )?;

    let snapshots = root.join("cases/snapshots");
    let batch = recordings(&snapshots);
    check(
        batch.len() == 4 && batch.iter().all(|(n, _)| n.ends_with(".snap.new")),
        || {
            format!(
                "expected 4 pending recordings, found {:?}",
                batch.iter().map(|b| &b.0).collect::<Vec<_>>()
            )
        },
    )?;

    // A live record of the same answers writes the same recordings.
    std::fs::rename(&snapshots, root.join("batch-snapshots")).unwrap();
    let live = command(std::env::current_exe().unwrap(), &root)
        .env(SUITE, root.join("cases"))
        .env("RAGALIQ_MODE", "record")
        .env("INSTA_UPDATE", "new")
        .output()
        .unwrap();
    check(judge.judge.requests() > 0, || {
        "the live record made no call".into()
    })?;
    let live_recordings = recordings(&snapshots);
    check(live_recordings == batch, || {
        let first = live_recordings
            .iter()
            .zip(&batch)
            .find(|(a, b)| a != b)
            .map(|(a, b)| format!("--- live {}\n{}\n--- batch {}\n{}", a.0, a.1, b.0, b.1))
            .unwrap_or_default();
        format!(
            "the batch recordings differ from a live record's (live exit {:?})\n{first}",
            live.status.code()
        )
    })?;

    // Accepted (as `cargo insta accept` does) and replayed on CI, with no
    // judge to reach.
    std::fs::remove_dir_all(&snapshots).unwrap();
    std::fs::rename(root.join("batch-snapshots"), &snapshots).unwrap();
    for (name, _) in &batch {
        let from = snapshots.join(name);
        std::fs::rename(&from, from.with_extension("")).unwrap();
    }
    let calls_before = judge.judge.requests();
    drop(judge);
    let replay = command(std::env::current_exe().unwrap(), &root)
        .env(SUITE, root.join("cases"))
        .env("CI", "true")
        .output()
        .unwrap();
    let replay_log = text(&replay);
    println!("{replay_log}");
    // The replay scores what the recordings say, with no call. Through
    // OpenAI every trial passes but one, `shipping-time::relevance`: the
    // scripted judge gives P(yes) 0.67 that the answer answers (it uses 2 of
    // the query's 3 key terms), under the 0.7 threshold, a borderline
    // failure kept on purpose; the live record scored it alike. Anthropic
    // returns no token probabilities: its answer is the word, yes, so 1.0.
    let expected = match provider {
        Provider::OpenAi => {
            "12 trials: 11 passed, 1 failed, 0 judge errors, 0 configuration errors; judge: 0 calls, 0 tokens, 18 answers replayed"
        }
        Provider::Anthropic => {
            "12 trials: 12 passed, 0 failed, 0 judge errors, 0 configuration errors; judge: 0 calls, 0 tokens, 18 answers replayed"
        }
    };
    let exit = if provider == Provider::OpenAi { 101 } else { 0 };
    check(
        replay_log.contains(expected) && replay.status.code() == Some(exit),
        || {
            format!(
                "the replay on CI did not score the recordings (live calls before it: {calls_before}):\n{replay_log}"
            )
        },
    )?;
    let _ = std::fs::remove_dir_all(&root);
    Ok(())
}

fn crash_and_resume() -> Result<(), Failed> {
    let judge = start_judge();
    let root = project("resume", Provider::OpenAi, &judge.judge.base_url());
    // A batch that takes many polls: the driver is killed while it waits.
    judge.judge.set_batch_faults(BatchFaults {
        polls_to_end: 1_000_000,
        ..BatchFaults::default()
    });
    let mut child = driver(&root, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let state = root.join("target/ragaliq/batch/state.json");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let polled = std::fs::read_to_string(&state).is_ok_and(|s| s.contains("\"progress\": {"));
        if polled || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    let _ = child.wait();
    check(judge.judge.batches().0 == 1, || {
        format!(
            "expected one batch before the kill, found {:?}",
            judge.judge.batches()
        )
    })?;

    // What a person sees, and a second record refused while one is open.
    let status = command(env!("CARGO_BIN_EXE_cargo-ragaliq"), &root)
        .args(["ragaliq", "record", "--status"])
        .output()
        .unwrap();
    let status_text = text(&status);
    println!("{status_text}");
    check(status_text.contains("waiting for 1 batch(es)"), || {
        format!("--status does not show the waiting batch:\n{status_text}")
    })?;
    let again = driver(&root, &[]).output().unwrap();
    check(
        again.status.code() == Some(2) && text(&again).contains("--resume"),
        || format!("a second record was not refused:\n{}", text(&again)),
    )?;

    judge.judge.set_batch_faults(BatchFaults {
        polls_to_end: 2,
        ..BatchFaults::default()
    });
    let resumed = driver(&root, &["--resume"]).output().unwrap();
    let log = text(&resumed);
    println!("{log}");
    check(resumed.status.success(), || {
        format!("--resume failed:\n{log}")
    })?;
    let recorded: u64 = std::fs::read_to_string(&state)
        .ok()
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
        .and_then(|v| v["batches"].as_u64())
        .unwrap_or(0);
    check(judge.judge.batches().0 == recorded, || {
        format!(
            "the provider saw {} batches, the record submitted {recorded}: one was submitted twice",
            judge.judge.batches().0
        )
    })?;
    check(
        recordings(&root.join("cases/snapshots")).len() == 4 && judge.judge.requests() == 0,
        || "the resumed record did not write every recording through batches".into(),
    )?;
    let _ = std::fs::remove_dir_all(&root);
    Ok(())
}

fn no_batch_api() -> Result<(), Failed> {
    let root = project("local", Provider::OpenAi, "http://127.0.0.1:9/v1");
    std::fs::write(
        root.join("ragaliq.toml"),
        "[judge]\nprovider = \"openai-compatible\"\nmodel = \"qwen\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    )
    .unwrap();
    let output = driver(&root, &[]).output().unwrap();
    let log = text(&output);
    let _ = std::fs::remove_dir_all(&root);
    check(
        output.status.code() == Some(2) && log.contains("openai-compatible has no batch API"),
        || format!("expected a refusal naming the provider:\n{log}"),
    )
}

/// A cascade through the batch API: the judge (`scripted`) is unsure of
/// the claim it reads at P 0.2 ("Refunds are paid in gold coins": half its
/// words in a passage), inside its band [0.1, 0.5); that claim goes to the
/// judge it escalates to (`scripted-sure`, the same answers at 0.01 or
/// 0.99) in a later round, and the replay decides it with no judge at all.
fn cascade() -> Result<(), Failed> {
    let judge = start_judge();
    let root = project("cascade", Provider::OpenAi, &judge.judge.base_url());
    let toml = std::fs::read_to_string(root.join("ragaliq.toml"))
        .unwrap()
        .replace("claims = \"off\"", "claims = [0.1, 0.5]");
    let url = judge.judge.base_url();
    std::fs::write(
        root.join("ragaliq.toml"),
        format!(
            "{toml}\n[[escalate]]\nprovider = \"openai\"\nmodel = \"scripted-sure\"\nbase_url = \"{url}\"\napi_key_env = \"BATCH_TEST_KEY\"\nstream = false\n"
        ),
    )
    .unwrap();
    let output = driver(&root, &[]).output().unwrap();
    let log = text(&output);
    println!("{log}");
    check(output.status.success(), || {
        format!("the batch record failed:\n{log}")
    })?;
    check(judge.judge.requests() == 0, || {
        "every answer must come from a batch".into()
    })?;
    // Extraction; support (and relevance); contradiction; then the
    // escalated claim's support and contradiction: five rounds of
    // questions, then nothing queued.
    check(
        log.contains("round 5:") && log.contains("nothing queued"),
        || format!("expected the escalated questions in rounds of their own:\n{log}"),
    )?;
    let snapshots = root.join("cases/snapshots");
    let gold = std::fs::read_to_string(snapshots.join("refund-gold.snap.new")).unwrap_or_default();
    check(gold.contains("model: scripted-sure"), || {
        format!("the escalated judge's answers are in the case's recording:\n{gold}")
    })?;
    // Accepted, then replayed on CI with no judge: decided, not awaiting.
    for (name, _) in recordings(&snapshots) {
        if let Some(accepted) = name.strip_suffix(".new") {
            std::fs::rename(snapshots.join(&name), snapshots.join(accepted)).unwrap();
        }
    }
    drop(judge);
    let replay = command(std::env::current_exe().unwrap(), &root)
        .env(SUITE, root.join("cases"))
        .env("CI", "true")
        .output()
        .unwrap();
    let replayed = text(&replay);
    let _ = std::fs::remove_dir_all(&root);
    // (shipping-time's relevance fails at 0.67 by the scripted rule, as it
    // does without a cascade.)
    check(
        !replayed.contains("AWAITING")
            && replayed.contains("refund-gold               0.50 caught"),
        || {
            format!(
                "the escalated judge decided every claim, and the bad answer is caught:\n{replayed}"
            )
        },
    )
}

fn budget() -> Result<(), Failed> {
    let judge = start_judge();
    let root = project("budget", Provider::OpenAi, &judge.judge.base_url());
    // $1,000 per million tokens, so $500 at the batch price: an extraction
    // (about 300 prompt tokens and a 256-token reply limit) is estimated at
    // about $0.28, a yes/no question (about 100 prompt tokens, a 3-token
    // reply) at about $0.05. A $1 budget submits five of round 1's eight
    // questions, then stops when the next question's estimate no longer fits.
    let toml = std::fs::read_to_string(root.join("ragaliq.toml")).unwrap();
    std::fs::write(
        root.join("ragaliq.toml"),
        format!(
            "{toml}\n[cost]\nmax_usd = 1.0\n[cost.prices.\"scripted\"]\ninput_per_million = 1000.0\noutput_per_million = 1000.0\n"
        ),
    )
    .unwrap();
    let output = driver(&root, &[]).output().unwrap();
    let log = text(&output);
    println!("{log}");
    let (batches, lines) = judge.judge.batches();
    let state: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("target/ragaliq/batch/state.json")).unwrap(),
    )
    .unwrap();
    let spent = state["spent_usd"].as_f64().unwrap_or(f64::NAN);
    let _ = std::fs::remove_dir_all(&root);
    check(
        output.status.code() == Some(2) && log.contains("the budget of $1.00"),
        || format!("expected the budget to stop the record:\n{log}"),
    )?;
    // Estimates take each reply's whole limit, so the first round submits
    // five and later rounds fit what the estimates left over: never all
    // eighteen questions of the suite.
    check(
        log.contains("submitted batch_000002 (5 request(s)") && lines < 18,
        || {
            format!(
                "expected 5 requests in the first batch and fewer than 18 in all, the provider saw {batches} batches with {lines}"
            )
        },
    )?;
    check(spent > 0.0 && spent <= 1.0, || {
        format!("spent ${spent} at the batch price, beyond the $1 budget")
    })
}

fn no_test_ran() -> Result<(), Failed> {
    let root = project("broken", Provider::OpenAi, "http://127.0.0.1:9/v1");
    // A command that fails before any test runs, as a build error does.
    let mut cmd = command(env!("CARGO_BIN_EXE_cargo-ragaliq"), &root);
    let output = cmd
        .args(["ragaliq", "record", "--batch", "--", "sh", "-c"])
        .arg("echo 'error[E0425]: cannot find value `x` in this scope' >&2; exit 101")
        .output()
        .unwrap();
    let log = text(&output);
    let _ = std::fs::remove_dir_all(&root);
    check(
        output.status.code() == Some(2) && log.contains("ran no test") && log.contains("E0425"),
        || format!("a round where no test ran was taken for a finished record:\n{log}"),
    )
}

/// `--dir` naming a folder of something else (a typo: `.`, `cases`, a
/// folder of files): refused before anything is written, nothing removed.
fn not_a_batch_folder() -> Result<(), Failed> {
    let root = project("not-a-batch", Provider::OpenAi, "http://127.0.0.1:9/v1");
    std::fs::create_dir_all(root.join("notes")).unwrap();
    std::fs::write(root.join("notes/todo.txt"), "mine").unwrap();
    let before = tree(&root);
    for dir in [".", "cases", "notes"] {
        let output = driver(&root, &["--dir", dir]).output().unwrap();
        let log = text(&output);
        println!("--dir {dir}: {log}");
        check(
            output.status.code() == Some(2) && log.contains("is not a ragaliq batch folder"),
            || format!("--dir {dir} was not refused:\n{log}"),
        )?;
    }
    let after = tree(&root);
    let _ = std::fs::remove_dir_all(&root);
    check(before == after, || {
        format!("files changed:\nbefore {before:?}\nafter {after:?}")
    })
}

/// Every file under `root`, with its contents.
fn tree(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

/// A batch folder whose `state.json` was lost while paid answers remain:
/// a new record keeps them, and says so.
fn answers_without_state() -> Result<(), Failed> {
    let judge = start_judge();
    let root = project("kept-answers", Provider::OpenAi, &judge.judge.base_url());
    let answers = root.join("target/ragaliq/batch/answers");
    std::fs::create_dir_all(&answers).unwrap();
    let paid = answers.join(format!("{}.json", "ab".repeat(32)));
    std::fs::write(
        &paid,
        r#"{"text": "{}", "input_tokens": 1, "output_tokens": 1}"#,
    )
    .unwrap();
    let output = driver(&root, &[]).output().unwrap();
    let log = text(&output);
    println!("{log}");
    let kept = paid.is_file();
    let _ = std::fs::remove_dir_all(&root);
    check(output.status.success(), || {
        format!("the record failed:\n{log}")
    })?;
    check(
        kept && log.contains("kept 1 answer(s) of an earlier record"),
        || format!("the paid answer was not kept (still there: {kept}):\n{log}"),
    )
}

/// Polls `state` until it shows a polled batch (or a minute passes).
fn wait_for_poll(state: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if std::fs::read_to_string(state).is_ok_and(|s| s.contains("\"progress\": {")) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn second_driver() -> Result<(), Failed> {
    let judge = start_judge();
    let root = project("two-drivers", Provider::OpenAi, &judge.judge.base_url());
    judge.judge.set_batch_faults(BatchFaults {
        polls_to_end: 1_000_000,
        ..BatchFaults::default()
    });
    let mut first = driver(&root, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_poll(&root.join("target/ragaliq/batch/state.json"));
    let second = driver(&root, &["--resume"]).output().unwrap();
    let log = text(&second);
    println!("{log}");
    let pid = first.id();
    let _ = first.kill();
    let _ = first.wait();
    let batches = judge.judge.batches().0;
    let _ = std::fs::remove_dir_all(&root);
    check(
        second.status.code() == Some(2)
            && log.contains("is at work on")
            && log.contains(&format!("process {pid}")),
        || format!("the second driver was not refused naming the first ({pid}):\n{log}"),
    )?;
    check(batches == 1, || {
        format!("{batches} batches were submitted: the second driver submitted again")
    })
}

/// `n` cases of shard `shard`, each its own question (so its own
/// fingerprints): `2 n` questions in the first round (an extraction and a
/// relevance question each).
fn shard_cases(shard: &str, n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "- id: {shard}-{i}\n  query: How long is the return window of plan {shard}{i}?\n  context:\n    - Plan {shard}{i} allows returns within {} days of delivery.\n  response: Plan {shard}{i} allows returns within {} days of delivery.\n",
                i + 10,
                i + 10
            )
        })
        .collect()
}

/// A project for one shard of a suite: its own 20 cases.
fn shard_project(name: &str, shard: &str, base_url: &str) -> PathBuf {
    let root = project(name, Provider::Anthropic, base_url);
    std::fs::write(root.join("cases/support.yaml"), shard_cases(shard, 20)).unwrap();
    root
}

/// The batch ids a record's state knows.
fn batch_ids(root: &Path) -> Vec<String> {
    read_state(root)["batch_ids"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Two shards of one suite record through Anthropic's batch API, 40
/// requests in each first round; shard B's record ran, and the reply to
/// shard A's first create is lost before the provider made the batch.
/// Before, A's driver took B's batch of 40 requests, made minutes ago, as
/// its own. Now it takes none, submits nothing again and stops naming B's
/// batch and what to do; `--resume` names it again; `--resume
/// --submit-again` submits A's questions and the record ends, with no
/// batch of B's among A's.
fn shards_anthropic() -> Result<(), Failed> {
    let judge = start_judge();
    let root_b = shard_project("shard-b", "b", &judge.judge.base_url());
    let root_a = shard_project("shard-a", "a", &judge.judge.base_url());
    let b = driver(&root_b, &[]).output().unwrap();
    check(b.status.success(), || {
        format!("shard B's record failed:\n{}", text(&b))
    })?;
    let b_ids = batch_ids(&root_b);
    check(text(&b).contains("(40 request(s)"), || {
        format!("shard B's first round is not of 40 requests:\n{}", text(&b))
    })?;
    let made_by_b = judge.judge.batches().0;

    judge.judge.set_batch_faults(BatchFaults {
        dropped_creates: 1,
        ..BatchFaults::default()
    });
    let lost = driver(&root_a, &[]).output().unwrap();
    let log = text(&lost);
    println!("{log}");
    check(
        lost.status.code() == Some(2)
            && log.contains(&b_ids[0])
            && log.contains("none is taken")
            && log.contains("--adopt <id>")
            && log.contains("--submit-again"),
        || {
            format!(
                "shard A's lost create did not stop naming B's batch {}:\n{log}",
                b_ids[0]
            )
        },
    )?;
    check(
        judge.judge.batches().0 == made_by_b && batch_ids(&root_a).is_empty(),
        || {
            format!(
                "shard A took or made a batch: the provider made {}, B knows {made_by_b}, A knows {:?}",
                judge.judge.batches().0,
                batch_ids(&root_a)
            )
        },
    )?;

    let again = driver(&root_a, &["--resume"]).output().unwrap();
    let again_log = text(&again);
    println!("{again_log}");
    check(
        again.status.code() == Some(2) && again_log.contains(&b_ids[0]),
        || format!("--resume took a batch or submitted:\n{again_log}"),
    )?;
    check(judge.judge.batches().0 == made_by_b, || {
        "--resume made a batch".into()
    })?;

    let resumed = driver(&root_a, &["--resume", "--submit-again"])
        .output()
        .unwrap();
    let resumed_log = text(&resumed);
    println!("{resumed_log}");
    let a_ids = batch_ids(&root_a);
    let made = judge.judge.batches().0;
    let _ = std::fs::remove_dir_all(&root_a);
    let _ = std::fs::remove_dir_all(&root_b);
    check(resumed.status.success(), || {
        format!("--resume --submit-again failed:\n{resumed_log}")
    })?;
    check(
        !a_ids.is_empty() && a_ids.iter().all(|id| !b_ids.contains(id)),
        || format!("shard A's batches {a_ids:?} include shard B's {b_ids:?}"),
    )?;
    check(made as usize == a_ids.len() + b_ids.len(), || {
        format!(
            "the provider made {made} batches, the shards know {} and {}",
            a_ids.len(),
            b_ids.len()
        )
    })
}

/// The provider makes the batch and the reply is lost: the driver names
/// it (Anthropic's batches carry no tag, so it cannot know it is this
/// record's) and stops; `--resume --adopt <id>` takes it, and the record
/// ends having paid for each batch once.
fn adopt_named_anthropic() -> Result<(), Failed> {
    let judge = start_judge();
    let root = project(
        "lost-anthropic",
        Provider::Anthropic,
        &judge.judge.base_url(),
    );
    judge.judge.set_batch_faults(BatchFaults {
        lost_creates: 1,
        ..BatchFaults::default()
    });
    let lost = driver(&root, &[]).output().unwrap();
    let log = text(&lost);
    println!("{log}");
    let named: Option<String> = log
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|w| w.starts_with("msgbatch_"))
        .map(str::to_owned);
    check(lost.status.code() == Some(2) && named.is_some(), || {
        format!("the lost create did not stop naming the batch:\n{log}")
    })?;
    let id = named.unwrap_or_default();
    // A batch that is not the submission's (another size) is refused.
    let wrong = driver(&root, &["--resume", "--adopt", "msgbatch_nope"])
        .output()
        .unwrap();
    check(
        wrong.status.code() == Some(2) && text(&wrong).contains("--adopt msgbatch_nope"),
        || {
            format!(
                "--adopt of an unknown batch was not refused:\n{}",
                text(&wrong)
            )
        },
    )?;
    let resumed = driver(&root, &["--resume", "--adopt", &id])
        .output()
        .unwrap();
    let resumed_log = text(&resumed);
    println!("{resumed_log}");
    let state = read_state(&root);
    let (batches, lines) = judge.judge.batches();
    let _ = std::fs::remove_dir_all(&root);
    check(
        resumed.status.success() && resumed_log.contains(&format!("adopted {id}")),
        || format!("--resume --adopt {id} failed:\n{resumed_log}"),
    )?;
    check(
        state["batches"].as_u64() == Some(batches) && state["submitted"].as_u64() == Some(lines),
        || {
            format!(
                "the provider made {batches} batches ({lines} lines), the record knows {} ({})",
                state["batches"], state["submitted"]
            )
        },
    )
}

/// The provider makes the batch but its reply is lost (a proxy's 502):
/// the driver finds the batch by its tag instead of paying twice.
fn lost_create(provider: Provider) -> Result<(), Failed> {
    let judge = start_judge();
    let name = match provider {
        Provider::OpenAi => "lost-openai",
        Provider::Anthropic => "lost-anthropic",
    };
    let root = project(name, provider, &judge.judge.base_url());
    judge.judge.set_batch_faults(BatchFaults {
        lost_creates: 2,
        ..BatchFaults::default()
    });
    let output = driver(&root, &[]).output().unwrap();
    let log = text(&output);
    println!("{log}");
    let state = read_state(&root);
    let (batches, lines) = judge.judge.batches();
    let _ = std::fs::remove_dir_all(&root);
    check(output.status.success(), || {
        format!("the record failed:\n{log}")
    })?;
    check(state["batches"].as_u64() == Some(batches), || {
        format!(
            "the provider made {batches} batches ({lines} lines), the record knows {}: a lost reply was paid twice",
            state["batches"]
        )
    })?;
    check(state["submitted"].as_u64() == Some(lines), || {
        format!(
            "{lines} lines at the provider, {} submitted",
            state["submitted"]
        )
    })
}

fn read_state(root: &Path) -> serde_json::Value {
    std::fs::read_to_string(root.join("target/ragaliq/batch/state.json"))
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default()
}

/// The driver stops between the provider making a batch and the state
/// naming it: `--resume` adopts that batch by its tag.
fn crash_after_create() -> Result<(), Failed> {
    let judge = start_judge();
    let root = project("crash-create", Provider::OpenAi, &judge.judge.base_url());
    let crashed = driver(&root, &[])
        .env("RAGALIQ_TEST_STOP_AFTER_CREATE", "1")
        .output()
        .unwrap();
    check(crashed.status.code() == Some(9), || {
        format!(
            "the driver did not stop after the create:\n{}",
            text(&crashed)
        )
    })?;
    let status = command(env!("CARGO_BIN_EXE_cargo-ragaliq"), &root)
        .args(["ragaliq", "record", "--status"])
        .output()
        .unwrap();
    let status_text = text(&status);
    println!("{status_text}");
    let resumed = driver(&root, &["--resume"]).output().unwrap();
    let log = text(&resumed);
    println!("{log}");
    let state = read_state(&root);
    let (batches, _) = judge.judge.batches();
    let _ = std::fs::remove_dir_all(&root);
    check(status_text.contains("was being submitted"), || {
        format!("--status does not show the interrupted submission:\n{status_text}")
    })?;
    check(
        resumed.status.success() && log.contains("adopted batch_"),
        || format!("--resume did not adopt the batch:\n{log}"),
    )?;
    check(state["batches"].as_u64() == Some(batches), || {
        format!(
            "the provider made {batches} batches, the record knows {}",
            state["batches"]
        )
    })
}

/// The driver stops after writing a batch's answers but before the state
/// counts them: `--resume` counts their tokens and dollars all the same.
fn crash_after_answers() -> Result<(), Failed> {
    let judge = start_judge();
    let root = project("crash-answers", Provider::OpenAi, &judge.judge.base_url());
    let toml = std::fs::read_to_string(root.join("ragaliq.toml")).unwrap();
    std::fs::write(
        root.join("ragaliq.toml"),
        format!(
            "{toml}\n[cost.prices.\"scripted\"]\ninput_per_million = 1000.0\noutput_per_million = 1000.0\n"
        ),
    )
    .unwrap();
    let crashed = driver(&root, &[])
        .env("RAGALIQ_TEST_STOP_AFTER_ANSWERS", "1")
        .output()
        .unwrap();
    check(crashed.status.code() == Some(9), || {
        format!(
            "the driver did not stop after the answers:\n{}",
            text(&crashed)
        )
    })?;
    let resumed = driver(&root, &["--resume"]).output().unwrap();
    let log = text(&resumed);
    println!("{log}");
    let state = read_state(&root);
    // What every kept answer says it cost.
    let (mut input, mut output) = (0u64, 0u64);
    for entry in std::fs::read_dir(root.join("target/ragaliq/batch/answers"))
        .unwrap()
        .flatten()
    {
        let answer: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(entry.path()).unwrap()).unwrap();
        input += answer["input_tokens"].as_u64().unwrap_or(0);
        output += answer["output_tokens"].as_u64().unwrap_or(0);
    }
    let _ = std::fs::remove_dir_all(&root);
    check(resumed.status.success(), || {
        format!("--resume failed:\n{log}")
    })?;
    check(
        state["input_tokens"].as_u64() == Some(input)
            && state["output_tokens"].as_u64() == Some(output)
            && input > 0,
        || {
            format!(
                "the state counts {} in, {} out; the answers cost {input} in, {output} out",
                state["input_tokens"], state["output_tokens"]
            )
        },
    )?;
    let expected = (input + output) as f64 * 500.0 / 1e6;
    let spent = state["spent_usd"].as_f64().unwrap_or(0.0);
    check((spent - expected).abs() < 1e-9, || {
        format!("spent ${spent}, the answers cost ${expected} at the batch price")
    })
}

fn absurd_poll() -> Result<(), Failed> {
    let root = project("poll", Provider::OpenAi, "http://127.0.0.1:9/v1");
    let mut results = Vec::new();
    for bad in ["inf", "NaN", "-1", "1e300"] {
        let output = command(env!("CARGO_BIN_EXE_cargo-ragaliq"), &root)
            .args([
                "ragaliq",
                "record",
                "--batch",
                &format!("--poll-secs={bad}"),
            ])
            .output()
            .unwrap();
        results.push((bad, output.status.code(), text(&output)));
    }
    let _ = std::fs::remove_dir_all(&root);
    for (bad, code, log) in results {
        check(code == Some(2) && log.contains("--poll-secs"), || {
            format!("--poll-secs {bad} was not refused ({code:?}):\n{log}")
        })?;
    }
    Ok(())
}
