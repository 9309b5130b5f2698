//! A person's verdict in a recording: it decides the test in replay, asks
//! the judge nothing and never makes the recording stale; re-recording with
//! another model keeps it; a changed passage drops it, saying which and
//! why. Against the scripted judge on 127.0.0.1.

use ragaliq::record::{self, Location, Recorder, Recording};
use ragaliq::{Judge, Metric, Mode, RagCase};
use ragaliq_scripted::ScriptedJudge;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The scripted judge read at the thresholds (bands off): what these
/// tests show is a person's verdict deciding, beside claims the judge
/// decides (unmeasured, its 0.92 would await a person too).
fn judge(url: &str, model: &str) -> Judge {
    Judge::builder(ragaliq::judge::OpenAiTransport::new(url))
        .with_model(model)
        .with_bands(ragaliq::Bands::OFF)
        .build()
        .unwrap()
}

const POLICY: &str = "Items can be returned within 30 days of delivery for a full refund.";

fn case(policy: &str) -> RagCase {
    RagCase::new("How long do I have to send something back?")
        .context([policy])
        // The second sentence is right, in other words: the scripted judge
        // (word overlap) finds no support for it.
        .response("Items can be returned within 30 days of delivery. You get all your money back.")
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ragaliq-reviewed-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn location(dir: &Path) -> Location {
    Location::at(
        dir.join("t.snap"),
        "reviewed::t",
        "RAGALIQ_MODE=record cargo test",
    )
}

fn pending(dir: &Path) -> PathBuf {
    dir.join("t.snap.new")
}

/// Records `case` with `model` in record mode and writes it as the pending
/// recording; returns the evaluation and the recorder.
async fn record(
    url: &str,
    model: &str,
    dir: &Path,
    case: &RagCase,
) -> (ragaliq::Evaluation, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::new(location(dir), Mode::Record));
    let eval = judge(url, model)
        .with_recorder(recorder.clone())
        .evaluate(Metric::Faithfulness, case)
        .await
        .unwrap();
    recorder
        .save_pending("tests/reviewed.rs")
        .unwrap()
        .expect("a new recording");
    (eval, recorder)
}

fn accept(dir: &Path) {
    std::fs::rename(pending(dir), dir.join("t.snap")).unwrap();
}

fn fingerprints(path: &Path) -> Vec<String> {
    let recording = Recording::read(path).unwrap().unwrap();
    recording
        .exchanges
        .iter()
        .map(|e| e.fingerprint.clone())
        .collect()
}

fn verdicts(path: &Path) -> Vec<(String, String, String)> {
    Recording::read(path)
        .unwrap()
        .unwrap()
        .exchanges
        .iter()
        .flat_map(|e| {
            e.reviewed
                .iter()
                .map(|r| (e.task.clone(), r.verdict.clone(), r.key.clone()))
        })
        .collect()
}

#[tokio::test]
async fn a_persons_verdict_decides_in_replay_and_asks_nothing() {
    let server = ScriptedJudge::start().await;
    let url = server.base_url();
    let dir = temp("replay");
    let (eval, _) = record(&url, "scripted", &dir, &case(POLICY)).await;
    accept(&dir);
    assert!(!eval.passed, "{eval}");
    let wrong = eval
        .claims
        .iter()
        .find(|c| c.failed)
        .expect("a failed claim");
    assert!(wrong.claim.contains("money back"), "{eval}");
    let key = wrong.review_key.clone().expect("a key to overrule it by");

    let snap = dir.join("t.snap");
    let before = fingerprints(&snap);
    let text_before = std::fs::read_to_string(&snap).unwrap();
    record::update(&snap, |r| {
        record::set_verdict(r, &key, "supported", Some("ana".into()), None)
    })
    .unwrap()
    .unwrap();
    // Only the verdict was added: the same exchanges, fingerprints and text
    // around it.
    assert_eq!(fingerprints(&snap), before);
    let text_after = std::fs::read_to_string(&snap).unwrap();
    let block =
        format!("  reviewed:\n  - item: 1\n    verdict: supported\n    by: ana\n    key: {key}\n");
    assert!(text_after.contains(&block), "{text_after}");
    assert_eq!(text_after.replacen(&block, "", 1), text_before);

    // Replay: the recording answers every question (a miss would be an
    // error in this mode), and the person's verdict decides.
    let requests = server.requests();
    let recorder = Arc::new(Recorder::new(location(&dir), Mode::Replay));
    let judge = judge(&url, "scripted").with_recorder(recorder.clone());
    let eval = judge
        .evaluate(Metric::Faithfulness, &case(POLICY))
        .await
        .unwrap();
    assert!(eval.passed, "{eval}");
    assert_eq!(eval.usage.reviewed, 1);
    assert_eq!(eval.usage.calls, 0);
    let text = eval.to_string();
    assert!(
        text.contains("decided by a person's verdict:\n    [2] \"You get all your money back.\" — supported (a person's verdict, by ana; the judge: no_evidence, P(supported) 0.05)"),
        "{text}"
    );
    assert!(
        text.ends_with("replayed from the recording, no tokens spent; 1 verdict from a person"),
        "{text}"
    );
    assert_eq!(recorder.reviewed_used(), 1);
    // Hallucination reads the same claim the same way.
    let h = judge
        .evaluate(Metric::Hallucination, &case(POLICY))
        .await
        .unwrap();
    assert!(h.passed, "{h}");
    assert_eq!(server.requests(), requests, "nothing was asked");

    // Auto mode: nothing new, so nothing pending, and the merged recording
    // is the accepted one, verdict and all.
    let recorder = Arc::new(Recorder::new(location(&dir), Mode::Auto));
    let eval = judge_with(&url, &recorder)
        .evaluate(Metric::Faithfulness, &case(POLICY))
        .await
        .unwrap();
    assert!(eval.passed);
    assert_eq!(recorder.new_exchanges(), 0);
    let merged = recorder
        .commit(None, true, |r: &Recording| r.to_yaml())
        .unwrap()
        .unwrap();
    let accepted = std::fs::read_to_string(&snap).unwrap();
    assert!(accepted.trim_end().ends_with(merged.trim_end()), "{merged}");
    assert!(recorder.dropped_reviews().is_empty());
    assert_eq!(server.requests(), requests, "nothing was asked");
    assert!(!pending(&dir).exists());
}

fn judge_with(url: &str, recorder: &Arc<Recorder>) -> Judge {
    judge(url, "scripted").with_recorder(recorder.clone())
}

#[tokio::test]
async fn another_model_keeps_it_and_a_changed_passage_drops_it_saying_why() {
    let server = ScriptedJudge::start().await;
    let url = server.base_url();
    let dir = temp("carry");
    let (eval, _) = record(&url, "scripted", &dir, &case(POLICY)).await;
    accept(&dir);
    let key = eval
        .claims
        .iter()
        .find(|c| c.failed)
        .and_then(|c| c.review_key.clone())
        .unwrap();
    let snap = dir.join("t.snap");
    record::update(&snap, |r| {
        record::set_verdict(r, &key, "supported", None, Some("a full refund".into()))
    })
    .unwrap()
    .unwrap();

    // Re-recorded with another model: every fingerprint is new, the claim
    // and its passages are not, so the verdict is carried over to the new
    // exchange, in the pending recording a person reviews.
    let (eval, recorder) = record(&url, "scripted-larger", &dir, &case(POLICY)).await;
    assert!(eval.passed, "still decided by the person: {eval}");
    assert!(recorder.dropped_reviews().is_empty());
    let old = fingerprints(&snap);
    let new = fingerprints(&pending(&dir));
    assert!(new.iter().all(|f| !old.contains(f)), "all asked afresh");
    assert_eq!(
        verdicts(&pending(&dir)),
        [(
            "claim_supported".to_owned(),
            "supported".to_owned(),
            key.clone()
        )]
    );
    let text = std::fs::read_to_string(pending(&dir)).unwrap();
    assert!(text.contains("    note: a full refund\n"), "{text}");
    std::fs::remove_file(pending(&dir)).unwrap();

    // A passage changed: nothing judges that claim against those passages
    // any more. The verdict is dropped, and the writer says which and why.
    let changed = "Items can be returned within 45 days of delivery for a full refund.";
    let (eval, recorder) = record(&url, "scripted", &dir, &case(changed)).await;
    assert!(
        !eval.passed,
        "the person's verdict no longer applies: {eval}"
    );
    let dropped = recorder.dropped_reviews();
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(
        dropped[0].to_string(),
        format!(
            "supported on claim \"You get all your money back.\" (key {key}): the passages it was judged against changed"
        )
    );
    assert!(verdicts(&pending(&dir)).is_empty());
    // `cargo ragaliq review` finds the same by comparing the two files.
    let accepted = Recording::read(&snap).unwrap().unwrap();
    let pending = Recording::read(&pending(&dir)).unwrap().unwrap();
    assert_eq!(record::dropped_between(&accepted, &pending), dropped);
}

/// A judge that says no to everything (and scores 2 of 5), in words, with
/// no token probabilities.
struct SaysNo;

impl ragaliq::judge::Transport for SaysNo {
    fn provider(&self) -> &str {
        "canned"
    }

    fn complete<'a>(
        &'a self,
        req: &'a ragaliq::judge::JudgeRequest,
    ) -> ragaliq::judge::BoxFuture<'a, Result<ragaliq::judge::JudgeResponse, ragaliq::TransportError>>
    {
        let reply = match req.task.as_str() {
            "criteria_steps" => r#"{"steps": ["Read the answer.", "Check its tone."]}"#,
            "criteria_score" => "2. It is curt.",
            _ => "no. It does not.",
        };
        Box::pin(async move { Ok(ragaliq::judge::JudgeResponse::text(reply)) })
    }
}

/// Every kind of verdict a person can give on one answer (or passage):
/// the key an evaluation names is the one a person's verdict is kept
/// under, and replayed, that verdict decides (a new yes/no question gets
/// the same for free: the rule reads only the task and what it asked).
#[tokio::test]
async fn one_answer_metrics_take_a_persons_verdict_too() {
    use ragaliq::{Criteria, CustomMetric, Evaluation};
    let dir = temp("one-answer");
    let case = RagCase::new("Can I return shoes?")
        .context(["Shoes can be returned within 30 days."])
        .expected_answer("Yes, for 30 days.")
        .response("Yes, within 30 days.");
    let polite = CustomMetric::new(
        "polite",
        "<response>{{response}}</response>\nIs it polite? Answer \"yes\" or \"no\", then why.",
    )
    .unwrap()
    .answered_by(["yes", "no"]);
    let scored = Criteria::scored("The answer is friendly.");
    async fn all(
        judge: &Judge,
        case: &RagCase,
        polite: &CustomMetric,
        scored: &Criteria,
    ) -> Vec<Evaluation> {
        vec![
            judge.relevance(case).await.unwrap(),
            judge.context_precision(case).await.unwrap(),
            judge.criteria(case, "The answer is polite.").await.unwrap(),
            judge.criteria(case, scored.clone()).await.unwrap(),
            judge.custom(polite, case).await.unwrap(),
            judge.correctness(case).await.unwrap(),
        ]
    }
    let recorder = Arc::new(Recorder::new(location(&dir), Mode::Record));
    let judge = Judge::builder(SaysNo).build().unwrap();
    let judged = all(
        &judge.with_recorder(recorder.clone()),
        &case,
        &polite,
        &scored,
    )
    .await;
    assert!(judged.iter().all(|e| !e.passed), "the judge said no");
    recorder.save_pending("tests/reviewed.rs").unwrap();
    accept(&dir);
    let keys: Vec<String> = judged
        .iter()
        .map(|e| {
            e.review_key
                .clone()
                .or_else(|| e.passages.first().and_then(|p| p.review_key.clone()))
                .expect("a key")
        })
        .collect();
    let words = ["yes", "yes", "yes", "5", "yes", "yes"];
    record::update(&dir.join("t.snap"), |r| {
        for (key, word) in keys.iter().zip(words) {
            record::set_verdict(r, key, word, None, None).unwrap();
        }
    })
    .unwrap();

    let recorder = Arc::new(Recorder::new(location(&dir), Mode::Replay));
    let replayed = all(&judge.with_recorder(recorder), &case, &polite, &scored).await;
    for e in &replayed {
        assert!(e.passed && e.score == 1.0, "{e}");
        assert_eq!(e.usage.reviewed, 1, "{e}");
        assert_eq!(e.usage.calls, 0);
    }
    assert_eq!(
        replayed[0].reasoning,
        "yes (a person's verdict; the judge: no) to whether the response answers the question."
    );
    assert!(replayed[0].person.is_some());
    assert!(replayed[1].passages[0].person.is_some(), "{}", replayed[1]);
    // Correctness's direct question, as relevance: the person's yes.
    assert_eq!(
        replayed[5].reasoning,
        "yes (a person's verdict; the judge: no) on whether the response gives the expected answer."
    );
    assert!(replayed[5].graded.is_some(), "{}", replayed[5]);
    assert!(
        replayed[3].reasoning.starts_with(
            "5 (a person's verdict; the judge: score 2.00 of 5, its reason: \"It is curt.\")"
        ),
        "{}",
        replayed[3].reasoning
    );

    // A word the metric does not take is refused, as a recording problem
    // (never read as the judge's, never a low score).
    record::update(&dir.join("t.snap"), |r| {
        record::set_verdict(r, &keys[4], "maybe", None, None).unwrap();
    })
    .unwrap();
    let recorder = Arc::new(Recorder::new(location(&dir), Mode::Replay));
    let e = judge
        .with_recorder(recorder)
        .custom(&polite, &case)
        .await
        .unwrap_err();
    assert!(e.is_recording(), "{e}");
    assert_eq!(
        e.to_string(),
        "a person's verdict in the recording cannot be used: `maybe` on metric `polite`: it takes yes, no"
    );
}

/// The guide's sample of a hand-written person's verdict parses, its key
/// left out and filled in with the key of what the exchange judged.
#[test]
fn the_guides_hand_written_verdict_reads() {
    let guide = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide/recording-and-review.md"),
    )
    .unwrap();
    let marker =
        "<!-- a recording with a person's verdict: tests/reviewed.rs parses this block -->";
    let after = &guide[guide.find(marker).expect("the marked block") + marker.len()..];
    let start = after.find("```yaml\n").unwrap() + "```yaml\n".len();
    let yaml = &after[start..start + after[start..].find("```").unwrap()];
    let dir = temp("guide");
    let path = dir.join("sample.snap");
    // As a .snap holds it: insta's header, then the recording.
    std::fs::write(&path, format!("---\nsource: docs\n---\n{yaml}")).unwrap();
    let recording = Recording::read(&path).unwrap().unwrap();
    let e = &recording.exchanges[0];
    let r = &e.reviewed[0];
    assert_eq!(
        (
            r.item,
            r.verdict.as_str(),
            r.by.as_deref(),
            r.note.as_deref()
        ),
        (
            1,
            "supported",
            Some("ana"),
            Some("a full refund is all of the money")
        )
    );
    assert_eq!(
        r.key,
        e.judged()[0].key,
        "keyed to what the exchange judged"
    );
    assert_eq!(
        r.key,
        ragaliq::judged::items(
            "claim_supported",
            &serde_json::json!({
                "claim": "You get all your money back",
                "passages": ["Items bought online can be returned within 30 days of delivery for a full refund."]
            })
        )[0]
        .key
    );
}

/// A verdict given on a claim asked as a yes/no question still decides it
/// when the judge is asked the JSON way (another strategy: other tasks,
/// other questions): it is keyed by the claim and its passages, not by
/// how they were asked.
#[tokio::test]
async fn a_verdict_outlives_another_way_of_asking() {
    let server = ScriptedJudge::start().await;
    let url = server.base_url();
    let dir = temp("strategy");
    let (eval, _) = record(&url, "scripted", &dir, &case(POLICY)).await;
    accept(&dir);
    let key = eval
        .claims
        .iter()
        .find(|c| c.failed)
        .and_then(|c| c.review_key.clone())
        .unwrap();
    record::update(&dir.join("t.snap"), |r| {
        record::set_verdict(r, &key, "supported", None, None)
    })
    .unwrap()
    .unwrap();
    let recorder = Arc::new(Recorder::new(location(&dir), Mode::Record));
    let json = Judge::builder(ragaliq::judge::OpenAiTransport::new(&url))
        .with_model("scripted")
        .with_strategy(ragaliq::Strategy::Json)
        .with_verify_batch(4)
        .build()
        .unwrap()
        .with_recorder(recorder.clone());
    let eval = json
        .evaluate(Metric::Faithfulness, &case(POLICY))
        .await
        .unwrap();
    assert!(eval.passed, "{eval}");
    assert_eq!(eval.usage.reviewed, 1);
    recorder.save_pending("tests/reviewed.rs").unwrap().unwrap();
    assert!(recorder.dropped_reviews().is_empty());
    let verdicts = verdicts(&pending(&dir));
    assert_eq!(verdicts.len(), 1);
    assert_eq!(verdicts[0].2, key);
    assert!(
        verdicts[0].0 == "verify_claims" || verdicts[0].0 == "verify_claim",
        "on the JSON question now: {verdicts:?}"
    );
}

/// A hand-edited `reviewed:` entry that cannot be read makes the recording
/// unwritable: in record mode that is said before the judge is asked, not
/// after every answer was paid for and could not be kept.
#[tokio::test]
async fn a_malformed_verdict_is_refused_before_record_mode_pays() {
    let server = ScriptedJudge::start().await;
    let url = server.base_url();
    let dir = temp("malformed");
    let (eval, _) = record(&url, "scripted", &dir, &case(POLICY)).await;
    accept(&dir);
    let key = eval
        .claims
        .iter()
        .find(|c| c.failed)
        .and_then(|c| c.review_key.clone())
        .unwrap();
    let snap = dir.join("t.snap");
    record::update(&snap, |r| {
        record::set_verdict(r, &key, "supported", None, None)
    })
    .unwrap()
    .unwrap();
    // The hand edit: a word no claim takes.
    let text = std::fs::read_to_string(&snap).unwrap();
    std::fs::write(&snap, text.replace("verdict: supported", "verdict: maybe")).unwrap();

    let requests = server.requests();
    let recorder = Arc::new(Recorder::new(location(&dir), Mode::Record));
    let e = judge_with(&url, &recorder)
        .evaluate(Metric::Faithfulness, &case(POLICY))
        .await
        .unwrap_err();
    assert_eq!(server.requests(), requests, "nothing was paid for: {e}");
    assert!(e.is_recording(), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("t.snap is unreadable") && text.contains("`maybe`"),
        "{text}"
    );
    assert!(!pending(&dir).exists());
}

// ── the overrule command a failing #[rag_test] prints ──────────────────────

/// The README's case the scripted judge gets wrong: the second claim is
/// right in other words.
#[ragaliq::rag_test]
#[ignore = "run in a child process by the_printed_overrule_path_works_from_where_cargo_test_ran"]
async fn overruled_child(judge: Judge) {
    ragaliq::assert_faithful!(judge, case(POLICY));
}

/// The overrule command names the recording by a path that works from
/// where `cargo test` ran (the shell's folder, `PWD`: the workspace root
/// for `cargo test -p shop`), not from the member package the test
/// process runs in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_printed_overrule_path_works_from_where_cargo_test_ran() {
    let server = ScriptedJudge::start().await;
    // A workspace folder holding a member package `shop`, whose recordings
    // go to `shop/tests/snapshots`; the test process runs in `shop` (as
    // cargo runs it), and the person typed `cargo test -p shop` in the
    // workspace folder.
    let workspace = temp("printed-path");
    let package = workspace.join("shop");
    let snapshots = package.join("tests/snapshots");
    std::fs::create_dir_all(&snapshots).unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "overruled_child",
            "--exact",
            "--ignored",
            "--test-threads=1",
        ])
        .current_dir(&package)
        .env("PWD", &workspace)
        .env_remove("CI")
        .env_remove("TF_BUILD")
        .env_remove("NEXTEST_RUN_ID")
        .env_remove("RAGALIQ_RUN_ID")
        .env_remove("INSTA_FORCE_PASS")
        .env_remove("INSTA_PENDING_DIR")
        .env("RAGALIQ_MODE", "auto")
        .env("RAGALIQ_JUDGE", server.base_url())
        .env("RAGALIQ_MODEL", "scripted")
        .env("RAGALIQ_SNAPSHOT_DIR", &snapshots)
        .env("INSTA_UPDATE", "new")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success(),
        "the judge is wrong, so it fails:\n{text}"
    );
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("cargo ragaliq review "))
        .unwrap_or_else(|| panic!("no overrule command:\n{text}"));
    let path = line
        .trim_start()
        .strip_prefix("cargo ragaliq review ")
        .and_then(|rest| rest.split(" --key ").next())
        .unwrap();
    assert_eq!(
        path, "shop/tests/snapshots/reviewed__overruled_child.snap",
        "{line}"
    );
    // From the workspace folder that names the recording, whose pending
    // twin holds the new exchanges.
    let named = workspace.join(path);
    assert!(
        named.with_extension("snap.new").exists(),
        "{}",
        named.display()
    );
    let _ = std::fs::remove_dir_all(&workspace);
}

/// A person's `not_a_claim` takes an item out of the score, for
/// faithfulness and hallucination alike: never failed, never counted,
/// named in the reasoning; where it was every item, the score is 1, as for
/// a response that claims nothing.
#[tokio::test]
async fn not_a_claim_leaves_the_score_and_says_so() {
    let server = ScriptedJudge::start().await;
    let url = server.base_url();
    let dir = temp("not-a-claim");
    let (eval, _) = record(&url, "scripted", &dir, &case(POLICY)).await;
    accept(&dir);
    assert!(!eval.passed, "{eval}");
    let keys: Vec<(String, bool)> = eval
        .claims
        .iter()
        .map(|c| (c.review_key.clone().expect("a key"), c.failed))
        .collect();
    let (wrong, _) = keys.iter().find(|(_, failed)| *failed).unwrap();
    let snap = dir.join("t.snap");
    record::update(&snap, |r| {
        record::set_verdict(r, wrong, "not_a_claim", None, None)
    })
    .unwrap()
    .unwrap();

    let replayed = |metric| {
        let recorder = Arc::new(Recorder::new(location(&dir), Mode::Replay));
        let judge = judge(&url, "scripted").with_recorder(recorder);
        async move { judge.evaluate(metric, &case(POLICY)).await.unwrap() }
    };
    let eval = replayed(Metric::Faithfulness).await;
    assert!(eval.passed, "{eval}");
    assert_eq!(eval.score, 1.0, "the one claim left is supported: {eval}");
    let set_aside = eval.claims.iter().find(|c| c.no_claim.is_some()).unwrap();
    assert!(set_aside.claim.contains("money back") && !set_aside.failed);
    assert!(
        eval.reasoning.contains(
            "1 item is no claim, left out of the score: \"You get all your money back.\" (a person's verdict)"
        ),
        "{}",
        eval.reasoning
    );
    let h = replayed(Metric::Hallucination).await;
    assert!(h.passed && h.score == 1.0, "{h}");
    assert!(
        h.reasoning.starts_with("0 of 1 claim hallucinated"),
        "{}",
        h.reasoning
    );

    // Every item no claim: nothing to score.
    let (right, _) = keys.iter().find(|(_, failed)| !*failed).unwrap();
    record::update(&snap, |r| {
        record::set_verdict(r, right, "not_a_claim", None, None)
    })
    .unwrap()
    .unwrap();
    for metric in [Metric::Faithfulness, Metric::Hallucination] {
        let eval = replayed(metric).await;
        assert_eq!((eval.score, eval.passed), (1.0, true), "{eval}");
        assert!(eval.score.is_finite());
        assert!(
            eval.reasoning
                .contains("No item is a claim: nothing to score"),
            "{}",
            eval.reasoning
        );
    }
    // A word no claim takes is refused, naming the words it takes.
    record::update(&snap, |r| {
        record::set_verdict(r, right, "not_claim", None, None)
    })
    .unwrap()
    .unwrap_err();
    let _ = std::fs::remove_dir_all(&dir);
}
