//! A person's verdict in a recording: it decides the test in replay, asks
//! the judge nothing and never makes the recording stale; re-recording with
//! another model keeps it; a changed passage drops it, saying which and
//! why. Against the scripted judge on 127.0.0.1.

use ragaliq::record::{self, Location, Recorder, Recording};
use ragaliq::{Judge, Metric, Mode, RagCase};
use ragaliq_scripted::ScriptedJudge;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn judge(url: &str, model: &str) -> Judge {
    Judge::builder(ragaliq::judge::OpenAiTransport::new(url))
        .with_model(model)
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
