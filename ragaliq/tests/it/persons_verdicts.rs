//! A person's verdict where the judge's reading is not one to trust, over
//! the wire: with passages asked about in chunks, the best verdict a person
//! gave on any chunk decides the claim (as the judge's likeliest chunk
//! does), and the key a failure names is the chunk the judge's reading came
//! from; and a reply the judge wrote that no parser can read is decided by
//! the person's verdict on it, once one is given (issue 41, items 8, 9).

use crate::common;

use common::{fast_retries, within};
use ragaliq::judge::{Judge, OpenAiTransport};
use ragaliq::record::{self, Location, Recorder, Recording};
use ragaliq::review::{Thresholds, items};
use ragaliq::{Mode, RagCase, Verdict};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use wiremock::{Mock, MockServer, Request, ResponseTemplate, matchers::method};

const DAYS: &str = "Refunds are accepted within 30 days of delivery.";
const HOURS: &str = "Our stores open at nine in the morning on weekdays.";

fn case() -> RagCase {
    RagCase::new("How long is the refund window?")
        .context([HOURS, DAYS])
        .response("Refunds are accepted within 30 days.")
}

fn yes_no(p: f64) -> Value {
    let word = if p >= 0.5 { "yes" } else { "no" };
    json!({"model": "m", "choices": [{"index": 0, "finish_reason": "length",
        "message": {"role": "assistant", "content": word},
        "logprobs": {"content": [{"token": word, "logprob": -0.1, "top_logprobs": [
            {"token": "yes", "logprob": p.ln()}, {"token": "no", "logprob": (1.0 - p).ln()}]}]}}],
        "usage": {"prompt_tokens": 80, "completion_tokens": 1}})
}

fn plain(content: &str) -> Value {
    json!({"model": "m", "choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 80, "completion_tokens": 10}})
}

/// A server listing the response's one claim, answering whether the chunk
/// holding `DAYS` supports it with `days`, the other chunk with `hours`,
/// and whether a chunk contradicts it with P(yes) 0.05.
async fn server(days: Value, hours: Value) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(move |req: &Request| {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            let user = body["messages"][1]["content"].as_str().unwrap_or_default();
            let reply = if user.contains("atomic claims") {
                plain(r#"{"claims": ["Refunds are accepted within 30 days."]}"#)
            } else if user.contains("contradict") {
                yes_no(0.05)
            } else if user.contains("30 days of delivery") {
                days.clone()
            } else {
                hours.clone()
            };
            ResponseTemplate::new(200).set_body_json(reply)
        })
        .mount(&server)
        .await;
    server
}

fn judge(url: &str) -> Judge {
    Judge::builder(OpenAiTransport::new(url))
        .with_model("m")
        .with_retry(fast_retries(0))
        .with_timeout(Duration::from_secs(5))
        // Each passage a chunk of its own.
        .with_chunk_chars(60)
        .build()
        .unwrap()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ragaliq-persons-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("t.snap")
}

/// Records `case()` against `server` into `snap` (kept even when the
/// evaluation fails, as a failing test's recording is).
async fn record(server: &MockServer, snap: &Path) -> Result<ragaliq::Evaluation, ragaliq::Error> {
    let recorder = Arc::new(Recorder::new(
        Location::at(snap, "persons", "record it"),
        Mode::Record,
    ));
    let eval = within(
        judge(&format!("{}/v1", server.uri()))
            .with_recorder(recorder.clone())
            .faithfulness(&case()),
    )
    .await;
    let written = recorder
        .save_pending_after(true, "ragaliq/tests/it/persons_verdicts.rs")
        .unwrap()
        .unwrap();
    std::fs::rename(written, snap).unwrap();
    eval
}

fn replay(snap: &Path) -> Judge {
    judge("http://127.0.0.1:9/v1").with_recorder(Arc::new(Recorder::new(
        Location::at(snap, "persons", "record it"),
        Mode::Replay,
    )))
}

/// The key of the chunk `passage` was asked in.
fn key_of(snap: &Path, passage: &str) -> String {
    let recording = Recording::read(snap).unwrap().unwrap();
    items(&recording, &Thresholds::default())
        .into_iter()
        .find(|i| i.judged.family == "claim" && i.passages().iter().any(|p| p == passage))
        .map(|i| i.judged.key)
        .expect("the chunk's item")
}

fn give(snap: &Path, key: &str, verdict: &str) {
    record::update(snap, |r| {
        record::set_verdict(r, key, verdict, Some("ana".into()), None)
    })
    .unwrap()
    .unwrap();
}

#[tokio::test]
async fn with_passages_in_chunks_the_best_verdict_a_person_gave_decides() {
    // The judge reads the claim as not supported by either chunk (0.2 on
    // the chunk that holds it, 0.1 on the other).
    let server = server(yes_no(0.2), yes_no(0.1)).await;
    let snap = temp("chunks");
    let eval = record(&server, &snap).await.unwrap();
    assert!(!eval.passed);
    let (days, hours) = (key_of(&snap, DAYS), key_of(&snap, HOURS));
    assert_ne!(days, hours);
    // The failure names the chunk the judge's reading came from (its
    // likeliest, the one that holds the claim), not the first.
    assert_eq!(
        eval.claims[0].review_key.as_deref(),
        Some(days.as_str()),
        "{eval}"
    );
    // A person: the first chunk says nothing of it, the second supports
    // it. The claim is supported, as the judge's reading would be.
    give(&snap, &hours, "no_evidence");
    give(&snap, &days, "supported");
    let eval = within(replay(&snap).faithfulness(&case())).await.unwrap();
    assert_eq!(eval.claims[0].verdict, Verdict::Supported, "{eval}");
    assert!(eval.passed, "{eval}");
    let _ = std::fs::remove_dir_all(snap.parent().unwrap());
}

#[tokio::test]
async fn a_reply_no_parser_reads_is_decided_by_the_persons_verdict_on_it() {
    // The chunk that holds the claim gets an answer that is no yes or no.
    let server = server(plain("Perhaps, in a sense."), yes_no(0.1)).await;
    let snap = temp("unreadable");
    let error = record(&server, &snap).await.unwrap_err();
    assert!(
        matches!(error, ragaliq::Error::JudgeResponse { .. }),
        "{error}"
    );
    // Offered for review, and, once a person has given a verdict, decided
    // by it: replay reads the reply, fails to, and takes the person's word.
    let days = key_of(&snap, DAYS);
    let error = within(replay(&snap).faithfulness(&case()))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ragaliq::Error::JudgeResponse { .. }),
        "no verdict yet: {error}"
    );
    give(&snap, &days, "supported");
    let eval = within(replay(&snap).faithfulness(&case())).await.unwrap();
    assert!(eval.passed, "{eval}");
    assert!(eval.claims[0].person.is_some(), "{eval}");
    assert!(
        eval.to_string()
            .contains("supported (a person's verdict, by ana"),
        "{eval}"
    );
    let _ = std::fs::remove_dir_all(snap.parent().unwrap());
}
