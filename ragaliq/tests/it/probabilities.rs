//! Verdicts read from token probabilities, over the wire: the request asks
//! for them (`logprobs`, `top_logprobs`, one word of reply, plain text), the
//! reply's first answer token is read in any spelling, streamed replies
//! carry them too, a server that returns none or refuses them steps down to
//! the word written and says so, Anthropic answers in the word, and a
//! recording replays to the same verdict.

use crate::common;

use common::{fast_retries, within};
use ragaliq::judge::{AnthropicTransport, ApiKey, Judge, OpenAiTransport};
use ragaliq::record::{Location, Recorder};
use ragaliq::{Mode, RagCase, Verdict};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wiremock::{Mock, MockServer, Request, ResponseTemplate, matchers::method};

fn case() -> RagCase {
    RagCase::new("How long is the refund window?")
        .context(["Refunds are accepted within 30 days of delivery."])
        .response("Refunds are accepted within 30 days. Refunds are paid in gold.")
}

/// A chat completion whose one token is `word`, with `alternatives`
/// (token, probability) at that position.
fn reply(word: &str, alternatives: &[(&str, f64)]) -> Value {
    json!({
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "length",
            "message": {"role": "assistant", "content": word},
            "logprobs": {"content": [{
                "token": word,
                "logprob": alternatives.iter().find(|(t, _)| *t == word).map_or(-5.0, |(_, p)| p.ln()),
                "top_logprobs": alternatives.iter().map(|(t, p)| json!({"token": t, "logprob": p.ln()})).collect::<Vec<_>>()
            }]}}],
        "usage": {"prompt_tokens": 80, "completion_tokens": 1}
    })
}

fn plain(content: &str) -> Value {
    json!({"model": "m", "choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 80, "completion_tokens": 1}})
}

/// A server that answers extraction with two claims, and each yes/no
/// question with `answer(task, user message, request body)`; every request
/// body is kept.
async fn server(
    answer: impl Fn(&str, &str, &Value) -> ResponseTemplate + Send + Sync + 'static,
) -> (MockServer, Arc<Mutex<Vec<Value>>>) {
    let server = MockServer::start().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    Mock::given(method("POST"))
        .respond_with(move |req: &Request| {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            kept.lock().unwrap().push(body.clone());
            let user = body["messages"][1]["content"].as_str().unwrap_or_default();
            if user.contains("atomic claims") {
                let claims = json!({"claims": ["Refunds are accepted within 30 days.", "Refunds are paid in gold."]});
                return ResponseTemplate::new(200).set_body_json(plain(&claims.to_string()));
            }
            let task = if user.contains("supported by the document") {
                "claim_supported"
            } else if user.contains("contradict") {
                "claim_contradicted"
            } else {
                "other"
            };
            answer(task, user, &body)
        })
        .mount(&server)
        .await;
    (server, seen)
}

/// A judge on `server` whose readings decide by the threshold alone: what
/// this file tests is how a reading is made, not where a band puts it (a
/// model named `m` is unmeasured, and would await a person between 0.05
/// and 0.95; `tests/cascade.rs` and `core/band.rs` test bands).
fn judge(server: &MockServer) -> Judge {
    Judge::builder(OpenAiTransport::new(&format!("{}/v1", server.uri())))
        .with_model("m")
        .with_bands(ragaliq::Bands::OFF)
        .with_retry(fast_retries(0))
        .with_timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

/// "30 days" is supported with P(yes) 0.9 (from " Yes", "yes" and "YES"
/// together); "gold" with 0.2, and contradicted with P(yes) 0.7.
fn answers(task: &str, user: &str, _: &Value) -> ResponseTemplate {
    let body = match (task, user.contains("gold")) {
        ("claim_supported", false) => reply(
            " Yes",
            &[(" Yes", 0.6), ("yes", 0.2), ("YES", 0.1), ("No", 0.1)],
        ),
        ("claim_supported", true) => reply("No", &[("No", 0.8), (" yes", 0.2)]),
        ("claim_contradicted", _) => reply("Yes", &[("Yes", 0.7), ("no", 0.3)]),
        _ => plain("no"),
    };
    ResponseTemplate::new(200).set_body_json(body)
}

#[tokio::test]
async fn verdicts_come_from_the_answer_tokens_probabilities() {
    let (server, seen) = server(answers).await;
    let judge = judge(&server);
    let eval = within(judge.faithfulness(&case())).await.unwrap();
    // What was asked: one word, plain text, ten alternatives.
    let bodies = seen.lock().unwrap().clone();
    let question = bodies
        .iter()
        .find(|b| {
            b["messages"][1]["content"]
                .as_str()
                .unwrap()
                .contains("supported by the document")
        })
        .unwrap();
    assert_eq!(question["logprobs"], true);
    assert_eq!(question["top_logprobs"], 10);
    assert_eq!(question["max_tokens"], 3);
    assert!(question.get("response_format").is_none(), "no JSON grammar");
    let content = question["messages"][1]["content"].as_str().unwrap();
    assert!(
        content.find("<document>").unwrap() < content.find("<claim>").unwrap(),
        "passages first, the claim last: {content}"
    );
    // What was read.
    assert_eq!(eval.claims[0].verdict, Verdict::Supported);
    assert!((eval.claims[0].probability.unwrap() - 0.9).abs() < 1e-9);
    assert_eq!(eval.claims[1].verdict, Verdict::Contradicted);
    assert!((eval.claims[1].probability.unwrap() - 0.2).abs() < 1e-9);
    assert_eq!(eval.score, 0.5);
    // The failure message shows P and the passage sentence ragaliq found.
    let shown = eval.to_string();
    assert!(
        shown.contains("contradicted (P(supported) 0.20)"),
        "{shown}"
    );
    assert!(
        shown.contains("closest passage sentence (found by ragaliq): P1 \"Refunds are accepted within 30 days of delivery.\""),
        "{shown}"
    );
    // A threshold fitted below 0.2 makes the same answers supported.
    let low = Judge::builder(OpenAiTransport::new(&format!("{}/v1", server.uri())))
        .with_model("m")
        .with_claim_threshold(0.15)
        .build()
        .unwrap();
    let eval = within(low.faithfulness(&case())).await.unwrap();
    assert_eq!(eval.score, 1.0);
}

#[tokio::test]
async fn streamed_replies_carry_their_probabilities() {
    let (server, _) = server(|task, user, body| {
        assert_eq!(body["stream"], true);
        let (word, alts) = match (task, user.contains("gold")) {
            ("claim_supported", false) => ("Yes", json!([{"token": "Yes", "logprob": (0.75f64).ln()}, {"token": "No", "logprob": (0.25f64).ln()}])),
            _ => ("No", json!([{"token": "No", "logprob": (0.9f64).ln()}, {"token": "Yes", "logprob": (0.1f64).ln()}])),
        };
        let chunk = |v: Value| format!("data: {v}\n\n");
        let stream = [
            chunk(json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": null}}]})),
            chunk(json!({"choices": [{"index": 0, "delta": {"content": word},
                "logprobs": {"content": [{"token": word, "logprob": -0.1, "top_logprobs": alts}]}}]})),
            chunk(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})),
            "data: [DONE]\n\n".to_owned(),
        ]
        .concat();
        ResponseTemplate::new(200).set_body_raw(stream, "text/event-stream")
    })
    .await;
    let judge =
        Judge::builder(OpenAiTransport::new(&format!("{}/v1", server.uri())).with_streaming(true))
            .with_model("m")
            .build()
            .unwrap();
    let case = case().response("Refunds are accepted within 30 days.");
    // Extraction is answered whole (JSON), the question as a stream.
    let eval = within(judge.faithfulness(&case)).await;
    let eval = eval.unwrap();
    assert!(
        (eval.claims[0].probability.unwrap() - 0.75).abs() < 1e-9,
        "{eval}"
    );
}

#[tokio::test]
async fn a_server_that_returns_no_probabilities_is_read_from_the_word_and_says_so() {
    let (server, _) = server(|task, user, _| {
        let word = if task == "claim_supported" && !user.contains("gold") {
            "Yes"
        } else {
            "No"
        };
        // llama-cpp-python sends `logprobs: null`.
        let mut body = plain(word);
        body["choices"][0]["logprobs"] = Value::Null;
        ResponseTemplate::new(200).set_body_json(body)
    })
    .await;
    let judge = judge(&server);
    let before = judge.describe();
    assert!(before.contains("read from token probabilities"), "{before}");
    let eval = within(judge.faithfulness(&case())).await.unwrap();
    assert_eq!(
        (eval.claims[0].verdict, eval.claims[1].verdict),
        (Verdict::Supported, Verdict::NoEvidence)
    );
    assert_eq!(
        eval.claims[0].probability, None,
        "no probability, no P shown"
    );
    let after = judge.describe();
    assert!(
        after.contains("the server returned no token probabilities, so the word written is read"),
        "{after}"
    );
}

#[tokio::test]
async fn a_server_that_refuses_probabilities_is_asked_once_more_without_them() {
    let (server, seen) = server(|task, user, body| {
        if body.get("logprobs").is_some() {
            return ResponseTemplate::new(400).set_body_json(json!({"error": {
                "message": "logprobs is not supported with this model", "type": "invalid_request_error"}}));
        }
        let word = if task == "claim_supported" && !user.contains("gold") { "yes" } else { "no" };
        ResponseTemplate::new(200).set_body_json(plain(word))
    })
    .await;
    let judge = judge(&server);
    let eval = within(judge.faithfulness(&case())).await.unwrap();
    assert_eq!(eval.claims[0].verdict, Verdict::Supported);
    let bodies = seen.lock().unwrap().clone();
    // The two claims' questions may go out together, and then both carry
    // probabilities; the second may even reach the server after the first
    // was refused and asked again without them (seen: at [1, 3] of 6).
    // What must hold: no more than the two questions in flight at the
    // refusal ever ask for probabilities, and each is asked again without.
    let with: Vec<usize> = bodies
        .iter()
        .enumerate()
        .filter(|(_, b)| b.get("logprobs").is_some())
        .map(|(i, _)| i)
        .collect();
    assert!(
        !with.is_empty() && with.len() <= 2,
        "refused, then never asked for again: asked with probabilities at {with:?} of {}",
        bodies.len()
    );
    let without = |i: usize| {
        let question = &bodies[i]["messages"][1]["content"];
        bodies[i + 1..]
            .iter()
            .any(|b| b.get("logprobs").is_none() && b["messages"][1]["content"] == *question)
    };
    assert!(
        with.iter().all(|&i| without(i)),
        "each refused question is asked again without probabilities"
    );
    assert!(bodies.len() > with.len(), "asked again without them");
    let contradiction = bodies
        .iter()
        .find(|b| {
            b["messages"][1]["content"]
                .as_str()
                .unwrap()
                .contains("contradict")
        })
        .expect("the unsupported claim is asked whether it is contradicted");
    assert!(contradiction.get("logprobs").is_none());
    assert!(
        judge.describe().contains("no token probabilities"),
        "{}",
        judge.describe()
    );
}

#[tokio::test]
async fn anthropic_answers_in_the_word() {
    let server = MockServer::start().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    Mock::given(method("POST"))
        .respond_with(move |req: &Request| {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            kept.lock().unwrap().push(body.clone());
            let user = body["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
            let message = if user.contains("atomic claims") {
                json!({"content": [{"type": "tool_use", "name": "submit", "input": {"claims": ["Refunds are accepted within 30 days."]}}],
                       "stop_reason": "tool_use", "usage": {"input_tokens": 50, "output_tokens": 10}})
            } else {
                json!({"content": [{"type": "text", "text": "Yes"}], "stop_reason": "end_turn",
                       "usage": {"input_tokens": 50, "output_tokens": 1}})
            };
            ResponseTemplate::new(200).set_body_json(message)
        })
        .mount(&server)
        .await;
    let transport = AnthropicTransport::new(&format!("{}/v1", server.uri()))
        .with_api_key(Some(ApiKey::new("fake-anthropic-key")), "ANTHROPIC_API_KEY");
    let judge = Judge::builder(transport)
        .with_model("claude-test")
        .build()
        .unwrap();
    assert!(
        judge
            .describe()
            .contains("anthropic returns no token probabilities"),
        "{}",
        judge.describe()
    );
    let eval = within(judge.faithfulness(&case().response("Refunds are accepted within 30 days.")))
        .await
        .unwrap();
    assert_eq!(
        (eval.score, eval.claims[0].verdict),
        (1.0, Verdict::Supported)
    );
    let bodies = seen.lock().unwrap().clone();
    let question = bodies
        .iter()
        .find(|b| b.get("tools").is_none())
        .expect("a plain question");
    assert!(question.get("logprobs").is_none() && question.get("top_logprobs").is_none());
}

#[tokio::test]
async fn a_recorded_probability_replays_to_the_same_verdict() {
    let dir = std::env::temp_dir().join(format!("ragaliq-prob-replay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let snapshot = dir.join("probabilities.snap");
    let (server, _) = server(answers).await;
    let recorder = Arc::new(Recorder::new(
        Location::at(&snapshot, "probabilities", "record it"),
        Mode::Record,
    ));
    let live = judge(&server).with_recorder(recorder.clone());
    let first = within(live.faithfulness(&case())).await.unwrap();
    let written = recorder
        .save_pending_after(true, "tests/it/probabilities.rs")
        .unwrap()
        .unwrap();
    let text = std::fs::read_to_string(&written).unwrap();
    // A reviewer sees the alternatives and what was read from them.
    assert!(
        text.contains("probabilities:") && text.contains("top:"),
        "{text}"
    );
    assert!(
        text.contains("read: P(yes) 0.900 from the first token's 4 likeliest"),
        "{text}"
    );
    std::fs::rename(&written, &snapshot).unwrap();
    drop(server);
    let replay = Judge::builder(OpenAiTransport::new("http://127.0.0.1:9/v1"))
        .with_model("m")
        .with_bands(ragaliq::Bands::OFF)
        .build()
        .unwrap()
        .with_recorder(Arc::new(Recorder::new(
            Location::at(&snapshot, "probabilities", "record it"),
            Mode::Replay,
        )));
    let again = within(replay.faithfulness(&case())).await.unwrap();
    assert_eq!(again.claims, first.claims);
    assert_eq!(again.score, first.score);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Records `case()` from `server` with `judge`, and returns the snapshot.
async fn record(judge: Judge, name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ragaliq-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let snapshot = dir.join(format!("{name}.snap"));
    let recorder = Arc::new(Recorder::new(
        Location::at(&snapshot, name, "record it"),
        Mode::Record,
    ));
    within(judge.with_recorder(recorder.clone()).faithfulness(&case()))
        .await
        .unwrap();
    let written = recorder
        .save_pending_after(true, "tests/it/probabilities.rs")
        .unwrap()
        .unwrap();
    std::fs::rename(&written, &snapshot).unwrap();
    snapshot
}

fn replaying(snapshot: &std::path::Path, strategy: ragaliq::Strategy) -> Judge {
    Judge::builder(OpenAiTransport::new("http://127.0.0.1:9/v1"))
        .with_model("m")
        .with_strategy(strategy)
        .build()
        .unwrap()
        .with_recorder(Arc::new(Recorder::new(
            Location::at(snapshot, "replayed", "record it"),
            Mode::Replay,
        )))
}

#[tokio::test]
async fn only_answers_recorded_because_probabilities_were_refused_stand_in_for_them() {
    // Recorded from a server that refused probabilities: marked so, and it
    // replays for a judge that asks for them.
    let (refusing, _) = server(|_, user, body| {
        if body.get("logprobs").is_some() {
            return ResponseTemplate::new(400).set_body_json(json!({"error": {
                "message": "logprobs is not supported with this model", "type": "invalid_request_error"}}));
        }
        ResponseTemplate::new(200).set_body_json(plain(if user.contains("gold") { "no" } else { "yes" }))
    })
    .await;
    let refused = record(judge(&refusing), "refused").await;
    let text = std::fs::read_to_string(&refused).unwrap();
    assert!(text.contains("probabilities_refused: true"), "{text}");
    let eval = within(replaying(&refused, ragaliq::Strategy::Probability).faithfulness(&case()))
        .await
        .expect("the refused answers replay where probabilities are asked for");
    assert_eq!(eval.claims[0].verdict, Verdict::Supported);

    // Recorded under strategy = "word" (no probabilities asked for, by
    // choice): not a refused answer, so a judge asking for probabilities
    // finds nothing to replay.
    let (plain_server, _) = server(|_, user, _| {
        ResponseTemplate::new(200).set_body_json(plain(if user.contains("gold") {
            "no"
        } else {
            "yes"
        }))
    })
    .await;
    let word = Judge::builder(OpenAiTransport::new(&format!("{}/v1", plain_server.uri())))
        .with_model("m")
        .with_strategy(ragaliq::Strategy::Word)
        .with_retry(fast_retries(0))
        .build()
        .unwrap();
    let worded = record(word, "worded").await;
    let text = std::fs::read_to_string(&worded).unwrap();
    assert!(!text.contains("probabilities_refused"), "{text}");
    let err = within(replaying(&worded, ragaliq::Strategy::Probability).faithfulness(&case()))
        .await
        .expect_err("a word answer is not a probability answer");
    assert!(err.to_string().contains("claim_supported"), "{err}");
    // It still replays for a judge that asks in the word.
    within(replaying(&worded, ragaliq::Strategy::Word).faithfulness(&case()))
        .await
        .unwrap();
}

/// A chat completion of `tokens` (each with its alternatives), stopped for
/// `finish`.
fn tokens_reply(tokens: &[(&str, &[(&str, f64)])], finish: &str) -> Value {
    let content: String = tokens.iter().map(|(t, _)| *t).collect();
    let positions: Vec<Value> = tokens
        .iter()
        .map(|(t, alts)| {
            let own = alts.iter().find(|(a, _)| a == t).map_or(0.0, |(_, p)| p.ln());
            json!({"token": t, "logprob": own,
                   "top_logprobs": alts.iter().map(|(a, p)| json!({"token": a, "logprob": p.ln()})).collect::<Vec<_>>()})
        })
        .collect();
    json!({"model": "m", "choices": [{"index": 0, "finish_reason": finish,
        "message": {"role": "assistant", "content": content},
        "logprobs": {"content": positions}}],
        "usage": {"prompt_tokens": 80, "completion_tokens": tokens.len()}})
}

/// The reason first, with a "yes" in it; the answer last, after "Answer:".
const REASON_THEN_NO: &[(&str, &[(&str, f64)])] = &[
    ("The", &[("The", 0.9), ("Yes", 0.06), ("No", 0.04)]),
    (" reply", &[]),
    (" says", &[]),
    (" '", &[]),
    ("yes", &[("yes", 0.8), ("no", 0.2)]),
    (",", &[]),
    (" full", &[]),
    (" refund", &[]),
    ("'.", &[]),
    ("\n", &[]),
    ("Answer", &[]),
    (":", &[]),
    (" no", &[(" no", 0.75), (" yes", 0.25)]),
];

fn no_refund_promise() -> ragaliq::CustomMetric {
    ragaliq::CustomMetric::new(
        "no-refund-promise",
        "<response>{{response}}</response>\n\nDoes the response promise a refund? Give your reason in one sentence, then end with \"Answer: yes\" or \"Answer: no\".",
    )
    .unwrap()
    .answered_by(["no", "yes"])
    .answered_at(ragaliq::parse::AnswerAt::after("Answer:"))
}

#[tokio::test]
async fn a_metric_of_ones_own_is_read_after_its_marker_and_nowhere_else() {
    let (server, seen) = server(|_, _, _| {
        ResponseTemplate::new(200).set_body_json(tokens_reply(REASON_THEN_NO, "stop"))
    })
    .await;
    let case = RagCase::new("Can I return it?").response("We will look into it.");
    let eval = within(judge(&server).custom(&no_refund_promise(), &case))
        .await
        .unwrap();
    println!("{eval}");
    // P(no) 0.75, read at " no" after the marker: not the "yes" of the
    // reason, nor the "The" that starts the reply.
    assert!((eval.score - 0.75).abs() < 1e-9, "{eval}");
    let shown = eval.to_string();
    assert!(shown.contains("token 13"), "{shown}");
    assert!(
        shown.contains("The judge's reason: \"The reply says 'yes, full refund'.\""),
        "{shown}"
    );
    // Asked with room for the reason before the word, and a system prompt
    // that puts the answer last.
    let body = seen.lock().unwrap()[0].clone();
    assert_eq!(body["max_tokens"], 192);
    assert!(
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("then the answer in the form the question asks for, last"),
        "{body}"
    );

    // The same reply to a metric that asks for the word first: "The" is no
    // answer (the "yes" inside is never read), so a judge error, carrying
    // the reply.
    let first = ragaliq::CustomMetric::new(
        "no-refund-promise-first",
        "<response>{{response}}</response>\n\nDoes the response promise a refund? Answer \"yes\" or \"no\" first, then give your reason in one sentence.",
    )
    .unwrap();
    let e = within(judge(&server).custom(&first, &case))
        .await
        .unwrap_err();
    println!("{e}");
    assert!(
        e.to_string()
            .contains("`The` stands where the question asked for its answer word"),
        "{e}"
    );
}

#[tokio::test]
async fn an_answer_after_its_marker_cut_off_at_the_limit_is_truncated_not_read() {
    // The reason runs to the limit; the marker never comes.
    let (server, _) = server(|_, _, _| {
        ResponseTemplate::new(200).set_body_json(tokens_reply(&REASON_THEN_NO[..9], "length"))
    })
    .await;
    let case = RagCase::new("Can I return it?").response("We will look into it.");
    let e = within(judge(&server).custom(&no_refund_promise(), &case))
        .await
        .unwrap_err();
    assert!(
        matches!(e, ragaliq::Error::Truncated { limit: 192, .. }),
        "{e}"
    );
    // A marker that cannot be found is refused before any call.
    let blank = no_refund_promise().answered_at(ragaliq::parse::AnswerAt::after("  "));
    let e = within(judge(&server).custom(&blank, &case))
        .await
        .unwrap_err();
    assert!(e.is_configuration(), "{e}");
}

/// A judge that opens a reasoning block before its one word (Qwen3 with
/// `/no_think`, on a server that does not strip the empty block) fills
/// the word's token limit with it: the question is asked once more with
/// room for the block, and the word after it is read.
#[tokio::test]
async fn a_word_answer_after_a_reasoning_block_gets_room_for_it() {
    let (server, seen) = server(|task, _, body| {
        let room = body["max_tokens"]
            .as_u64()
            .or_else(|| body["max_completion_tokens"].as_u64())
            .unwrap_or(0);
        let body = match task {
            "claim_supported" | "claim_contradicted" if room <= 3 => json!({
                "model": "m",
                "choices": [{"index": 0, "finish_reason": "length",
                    "message": {"role": "assistant", "content": "<think>\n\n"}}],
                "usage": {"prompt_tokens": 80, "completion_tokens": 3}
            }),
            "claim_supported" => plain("<think>\n\n</think>\n\nYes"),
            _ => plain("<think>\n\n</think>\n\nNo"),
        };
        ResponseTemplate::new(200).set_body_json(body)
    })
    .await;
    let judge = judge(&server);
    let eval = within(judge.faithfulness(&case())).await.unwrap();
    assert_eq!(eval.score, 1.0, "{eval}");
    let limits: Vec<u64> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|b| {
            b["messages"][1]["content"]
                .as_str()
                .unwrap()
                .contains("supported by the document")
        })
        .filter_map(|b| b["max_tokens"].as_u64())
        .collect();
    // Each claim: once at the word's limit, once more with room.
    assert_eq!(limits.len(), 4, "{limits:?}");
    assert_eq!(limits.iter().filter(|l| **l == 3).count(), 2, "{limits:?}");
    assert!(limits.iter().filter(|l| **l > 3).count() == 2, "{limits:?}");

    // Recorded, both exchanges of each question are kept, and replay reads
    // the same without asking.
    let dir = std::env::temp_dir().join(format!("ragaliq-reasoning-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let at = || Location::at(dir.join("t.snap"), "t", "RAGALIQ_MODE=record cargo test");
    let recorder = Arc::new(Recorder::new(at(), Mode::Record));
    let recorded = within(judge.with_recorder(recorder.clone()).faithfulness(&case()))
        .await
        .unwrap();
    assert_eq!(recorded.score, 1.0, "{recorded}");
    let pending = recorder
        .save_pending("tests/it/probabilities.rs")
        .unwrap()
        .unwrap();
    std::fs::rename(pending, dir.join("t.snap")).unwrap();
    let asked = seen.lock().unwrap().len();
    let replayed = within(
        judge
            .with_recorder(Arc::new(Recorder::new(at(), Mode::Replay)))
            .faithfulness(&case()),
    )
    .await
    .unwrap();
    assert_eq!(replayed.score, 1.0, "{replayed}");
    assert_eq!(seen.lock().unwrap().len(), asked, "replay asked nothing");
    let _ = std::fs::remove_dir_all(&dir);
}

/// First hour (issue 49): a criteria exchange kept the ten likeliest tokens
/// of every token of the reply (774 lines for one answer). Only the answer
/// word's token is read, so only it is kept; the fingerprint is the same,
/// and the recording replays to the same evaluation, to the last digit.
#[tokio::test]
async fn a_recording_keeps_the_probabilities_up_to_the_answer_word_only() {
    const NO_AND_A_REASON: &[(&str, &[(&str, f64)])] = &[
        (
            "no",
            &[("no", 0.48), ("No", 0.32), ("yes", 0.1), ("Yes", 0.09)],
        ),
        ("\n", &[("\n", 0.78), ("\n\n", 0.07)]),
        ("The", &[("The", 0.95), ("Reason", 0.01)]),
        (" response", &[(" response", 0.99)]),
        (" does", &[(" does", 0.74), (" \"", 0.11)]),
        (" not", &[(" not", 0.99)]),
        (" cite", &[(" cite", 0.72), (" meet", 0.1)]),
        (" the", &[(" the", 0.99)]),
        (" policy", &[(" policy", 0.9)]),
        (".", &[(".", 0.9)]),
    ];
    let (server, _) = server(|_, _, _| {
        ResponseTemplate::new(200).set_body_json(tokens_reply(NO_AND_A_REASON, "stop"))
    })
    .await;
    let dir = std::env::temp_dir().join(format!("ragaliq-prob-kept-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let snapshot = dir.join("kept.snap");
    let case = RagCase::new("Can I return it?")
        .response("Sure, send it back and you will get a full refund.");
    let rule = "Cites the policy number and never promises a refund";
    let recorder = Arc::new(Recorder::new(
        Location::at(&snapshot, "kept", "record it"),
        Mode::Record,
    ));
    let live = judge(&server).with_recorder(recorder.clone());
    let first = within(live.criteria(&case, rule)).await.unwrap();
    let written = recorder
        .save_pending_after(true, "tests/it/probabilities.rs")
        .unwrap()
        .unwrap();
    let text = std::fs::read_to_string(&written).unwrap();
    assert_eq!(
        text.matches("- token:").count(),
        1,
        "the answer word's token only:\n{text}"
    );
    assert!(
        text.contains("The response does not cite the policy."),
        "the reply itself is kept whole:\n{text}"
    );
    std::fs::rename(&written, &snapshot).unwrap();
    drop(server);
    let replay = Judge::builder(OpenAiTransport::new("http://127.0.0.1:9/v1"))
        .with_model("m")
        .build()
        .unwrap()
        .with_recorder(Arc::new(Recorder::new(
            Location::at(&snapshot, "kept", "record it"),
            Mode::Replay,
        )));
    let again = within(replay.criteria(&case, rule))
        .await
        .expect("the same fingerprint, answered from the recording");
    assert_eq!(again.score, first.score);
    assert_eq!(again.reasoning, first.reasoning);
    assert!(
        (first.score - 0.19 / 0.99).abs() < 1e-9,
        "P(yes) from the word's token: {first}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
