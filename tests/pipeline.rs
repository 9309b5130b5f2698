//! The pipeline under test, recorded too: its model calls go through
//! ragaliq's loopback endpoint (`judge.pipeline()`), are recorded into the
//! test's recording, and replay with no upstream request. Upstreams here are
//! the scripted server (its `app…` models answer as a pipeline's model
//! would) and wiremock, both on 127.0.0.1; requests are counted at them.
//!
//! The endpoint is driven directly (a `Recorder` and `Pipeline::start`),
//! and through `#[rag_test]` in child processes of this binary, as CI runs
//! it. The example's own tests (the help desk of
//! `examples/rag_pipeline.rs`, answered by the kit's 0.5B and judged by
//! its 1.5B) replay committed recordings at the end of the file.

#[path = "../examples/rag_pipeline.rs"]
mod rag_pipeline;

use ragaliq::Mode;
use ragaliq::pipeline::{Pipeline, Settings};
use ragaliq::prelude::*;
use ragaliq::record::{Location, Recorder, Recording};
use ragaliq_scripted::ScriptedJudge;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ragaliq-pipeline-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const RECORD: &str = "RAGALIQ_MODE=record cargo test --test pipeline -- app --exact";

fn recorder(dir: &Path, mode: Mode) -> Arc<Recorder> {
    Arc::new(Recorder::new(
        Location::at(dir.join("app.snap"), "pipeline::app", RECORD),
        mode,
    ))
}

/// Writes what `recorder` used as the accepted recording, as a test that
/// passed and was reviewed would leave it.
fn accept(recorder: &Recorder) -> String {
    let snap = recorder.location().snapshot.clone();
    recorder
        .commit(None, true, |r: &Recording| {
            std::fs::write(
                &snap,
                format!("---\nsource: tests/pipeline.rs\n---\n{}", r.to_yaml()),
            )
            .unwrap();
        })
        .unwrap();
    std::fs::read_to_string(&snap).unwrap_or_default()
}

/// The application: one POST (or GET) to the endpoint, with its own key.
async fn call(url: &str, body: Option<&Value>) -> (u16, String) {
    let http = reqwest::Client::new();
    let request = match body {
        Some(b) => http.post(url).json(b),
        None => http.get(url),
    };
    let response = request
        .header("authorization", "Bearer sk-test-NEVER-WRITTEN-4242")
        .header("x-api-key", "sk-ant-NEVER-WRITTEN-4242")
        .send()
        .await
        .expect("the endpoint answers");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

fn chat(question: &str, stream: bool) -> Value {
    json!({
        "model": "app-scripted",
        "messages": [
            {"role": "system", "content": "Answer from the passages only."},
            {"role": "user", "content": format!("Passages:\nRefunds are accepted within 30 days of delivery.\nShipping is free on orders over 50 euros.\nQuestion: {question}")},
        ],
        "temperature": 0,
        "stream": stream,
        "stream_options": if stream { json!({"include_usage": true}) } else { Value::Null },
    })
}

/// The streamed text the client read: the `data:` events' content pieces.
fn streamed_text(sse: &str) -> String {
    sse.split("\n\n")
        .flat_map(|e| e.lines())
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .map(|v| {
            v["choices"][0]["delta"]["content"]
                .as_str()
                .or_else(|| v["delta"]["text"].as_str())
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_calls_are_recorded_then_replayed_with_no_upstream_request() {
    let upstream = ScriptedJudge::start().await;
    let settings = Settings::default().openai(upstream.base_url());
    let dir = temp_dir("openai");

    // Record: every call goes to the upstream and into the recording.
    let rec = recorder(&dir, Mode::Record);
    let app = Pipeline::start(rec.clone(), settings.clone()).unwrap();
    let base = app.openai_base_url();
    let whole = call(
        &format!("{base}/chat/completions"),
        Some(&chat("What is the refund window?", false)),
    )
    .await;
    let streamed = call(
        &format!("{base}/chat/completions"),
        Some(&chat("Is shipping free?", true)),
    )
    .await;
    let completion = call(
        &format!("{base}/completions"),
        Some(&json!({"model": "app-scripted", "prompt": "Shipping is free.\nQuestion: Is shipping free?", "max_tokens": 10})),
    )
    .await;
    let embeddings = call(
        &format!("{base}/embeddings"),
        Some(&json!({"model": "app-embed", "input": ["refund window", "opening hours"]})),
    )
    .await;
    let models = call(&format!("{base}/models"), None).await;
    assert_eq!(
        [whole.0, streamed.0, completion.0, embeddings.0, models.0],
        [200; 5],
        "{whole:?} {streamed:?}"
    );
    assert_eq!(upstream.requests(), 5);
    assert!(
        whole
            .1
            .contains("Refunds are accepted within 30 days of delivery."),
        "{}",
        whole.1
    );
    assert_eq!(
        streamed_text(&streamed.1),
        "Shipping is free on orders over 50 euros."
    );
    let usage = app.usage();
    assert_eq!((usage.calls, usage.replayed), (5, 0));
    assert!(
        usage.input_tokens > 0 && usage.output_tokens > 0,
        "{usage:?}"
    );
    assert!(app.failures().is_empty(), "{:?}", app.failures());
    drop(app);
    let snap = accept(&rec);
    // Readable: the model, the messages, the answer; streams as events.
    for expected in [
        "pipeline:",
        "api: chat/completions",
        "model: app-scripted",
        "content: Answer from the passages only.",
        "answer: Refunds are accepted within 30 days of delivery.",
        "answer: Shipping is free on orders over 50 euros.",
        "chunks:",
        "data: [DONE]",
        "api: embeddings",
        "answer: 2 vectors of 16 dimensions",
        "api: models",
        "answer: scripted, app-scripted",
    ] {
        assert!(snap.contains(expected), "{expected:?} not in\n{snap}");
    }

    // Replay: the same answers, byte for byte and event for event, and not
    // one request upstream.
    let rec = recorder(&dir, Mode::Replay);
    let app = Pipeline::start(rec, settings).unwrap();
    let base = app.openai_base_url();
    let again = call(
        &format!("{base}/chat/completions"),
        Some(&chat("What is the refund window?", false)),
    )
    .await;
    assert_eq!(again, whole);
    let again = call(
        &format!("{base}/chat/completions"),
        Some(&chat("Is shipping free?", true)),
    )
    .await;
    assert_eq!(again, streamed, "the same events the client saw");
    assert_eq!(
        call(&format!("{base}/completions"), Some(&json!({"model": "app-scripted", "prompt": "Shipping is free.\nQuestion: Is shipping free?", "max_tokens": 10}))).await,
        completion
    );
    assert_eq!(
        call(
            &format!("{base}/embeddings"),
            Some(&json!({"model": "app-embed", "input": ["refund window", "opening hours"]}))
        )
        .await,
        embeddings
    );
    assert_eq!(call(&format!("{base}/models"), None).await, models);
    assert_eq!(upstream.requests(), 5, "replay asks nothing upstream");
    let usage = app.usage();
    assert_eq!((usage.calls, usage.replayed), (0, 5));
    assert!(app.failures().is_empty(), "{:?}", app.failures());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_messages_are_recorded_then_replayed_streamed_or_not() {
    let upstream = ScriptedJudge::start().await;
    let settings = Settings::default().anthropic(upstream.base_url());
    let dir = temp_dir("anthropic");
    let ask = |stream: bool| {
        json!({"model": "app-claude", "max_tokens": 64, "stream": stream,
               "system": "Answer from the passages only.",
               "messages": [{"role": "user", "content": "Passages:\nRefunds are accepted within 30 days of delivery.\nQuestion: What is the refund window?"}]})
    };
    let rec = recorder(&dir, Mode::Auto);
    let app = Pipeline::start(rec.clone(), settings.clone()).unwrap();
    let url = format!("{}/v1/messages", app.anthropic_base_url());
    let whole = call(&url, Some(&ask(false))).await;
    let streamed = call(&url, Some(&ask(true))).await;
    assert_eq!((whole.0, streamed.0), (200, 200), "{whole:?}");
    let v: Value = serde_json::from_str(&whole.1).unwrap();
    assert_eq!(
        v["content"][0]["text"],
        "Refunds are accepted within 30 days of delivery."
    );
    assert!(
        streamed.1.contains("event: message_start"),
        "{}",
        streamed.1
    );
    assert_eq!(
        streamed_text(&streamed.1),
        "Refunds are accepted within 30 days of delivery."
    );
    drop(app);
    let snap = accept(&rec);
    assert!(
        snap.contains("api: messages") && snap.contains("event: content_block_delta"),
        "{snap}"
    );
    let tokens = Recording::read(&dir.join("app.snap"))
        .unwrap()
        .unwrap()
        .pipeline[1]
        .tokens;
    assert!(tokens.input > 0 && tokens.output > 0, "{tokens:?}");

    let app = Pipeline::start(recorder(&dir, Mode::Replay), settings).unwrap();
    let url = format!("{}/v1/messages", app.anthropic_base_url());
    assert_eq!(call(&url, Some(&ask(false))).await, whole);
    assert_eq!(call(&url, Some(&ask(true))).await, streamed);
    assert_eq!(upstream.requests(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_request_twice_replays_in_order_and_a_third_asking_is_refused() {
    let upstream = MockServer::start().await;
    for (n, text) in [(1, "first answer"), (2, "second answer")] {
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "id": format!("c{n}"), "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2}})))
            .up_to_n_times(1)
            .with_priority(n)
            .mount(&upstream)
            .await;
    }
    let settings = Settings::default().openai(format!("{}/v1", upstream.uri()));
    let dir = temp_dir("twice");
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "Say something."}], "temperature": 1});
    let rec = recorder(&dir, Mode::Record);
    let app = Pipeline::start(rec.clone(), settings.clone()).unwrap();
    let url = format!("{}/chat/completions", app.openai_base_url());
    assert!(call(&url, Some(&body)).await.1.contains("first answer"));
    assert!(call(&url, Some(&body)).await.1.contains("second answer"));
    drop(app);
    let snap = accept(&rec);
    assert!(snap.contains("occurrence: 2"), "{snap}");

    let app = Pipeline::start(recorder(&dir, Mode::Replay), settings).unwrap();
    let url = format!("{}/chat/completions", app.openai_base_url());
    assert!(call(&url, Some(&body)).await.1.contains("first answer"));
    assert!(call(&url, Some(&body)).await.1.contains("second answer"));
    let (status, text) = call(&url, Some(&body)).await;
    assert_eq!(status, 404);
    assert!(text.contains("asked the same request 3 times"), "{text}");
    assert_eq!(app.failures().len(), 1);
    assert_eq!(upstream.received_requests().await.unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_prompt_fails_replay_with_the_diff_and_the_command() {
    let upstream = ScriptedJudge::start().await;
    let settings = Settings::default().openai(upstream.base_url());
    let dir = temp_dir("changed");
    let rec = recorder(&dir, Mode::Record);
    let app = Pipeline::start(rec.clone(), settings.clone()).unwrap();
    let url = format!("{}/chat/completions", app.openai_base_url());
    call(&url, Some(&chat("What is the refund window?", false))).await;
    drop(app);
    accept(&rec);

    let app = Pipeline::start(recorder(&dir, Mode::Replay), settings).unwrap();
    let url = format!("{}/chat/completions", app.openai_base_url());
    let mut edited = chat("What is the refund window?", false);
    edited["messages"][0]["content"] = json!("Answer from the passages only, in one sentence.");
    edited["temperature"] = json!(0.2);
    let (status, text) = call(&url, Some(&edited)).await;
    assert_eq!(status, 404);
    // The application's client reads the message as its provider's error.
    let error: Value = serde_json::from_str(&text).unwrap();
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("messages[0] (system) changed")
    );
    let failures = app.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    let message = &failures[0];
    for expected in [
        "the pipeline under test asked its model something the recording of test `pipeline::app`",
        "chat completion of `app-scripted` (\"Question: What is the refund window?\")\n  changed since it was recorded, against the closest recorded call:",
        "messages[0] (system) changed:\n      - Answer from the passages only.\n      + Answer from the passages only, in one sentence.",
        "temperature 0 → 0.2",
        "the judge's exchanges on the pipeline's old answer are stale too; record both again with: RAGALIQ_MODE=record cargo test --test pipeline -- app --exact",
    ] {
        assert!(message.contains(expected), "{expected:?} not in\n{message}");
    }
    assert!(app.unrecorded());
    assert_eq!(upstream.requests(), 1, "replay asked nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_asks_only_what_is_new_and_live_records_nothing() {
    let upstream = ScriptedJudge::start().await;
    let settings = Settings::default().openai(upstream.base_url());
    let dir = temp_dir("auto");
    let rec = recorder(&dir, Mode::Record);
    let app = Pipeline::start(rec.clone(), settings.clone()).unwrap();
    let url = format!("{}/chat/completions", app.openai_base_url());
    call(&url, Some(&chat("What is the refund window?", false))).await;
    drop(app);
    accept(&rec);
    assert_eq!(upstream.requests(), 1);

    let rec = recorder(&dir, Mode::Auto);
    let app = Pipeline::start(rec.clone(), settings.clone()).unwrap();
    let url = format!("{}/chat/completions", app.openai_base_url());
    call(&url, Some(&chat("What is the refund window?", false))).await;
    call(&url, Some(&chat("Is shipping free?", false))).await;
    assert_eq!(upstream.requests(), 2, "only the new question was asked");
    assert_eq!((app.usage().calls, app.usage().replayed), (1, 1));
    drop(app);
    assert_eq!(accept(&rec).matches("api: chat/completions").count(), 2);

    let live = Arc::new(Recorder::new(
        Location::at(dir.join("live.snap"), "pipeline::live", RECORD),
        Mode::Live,
    ));
    let app = Pipeline::start(live.clone(), settings).unwrap();
    let url = format!("{}/chat/completions", app.openai_base_url());
    call(&url, Some(&chat("What is the refund window?", false))).await;
    assert_eq!(upstream.requests(), 3);
    assert!(live.finish(true).is_none(), "live mode keeps no recording");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_is_forwarded_and_never_reaches_the_recording_or_a_message() {
    let upstream = MockServer::start().await;
    // Only a request carrying the application's own key is answered.
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer sk-test-NEVER-WRITTEN-4242"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}]})))
        .mount(&upstream)
        .await;
    // An upstream that echoes the key in its error, and one in garbage.
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(ResponseTemplate::new(401).set_body_string(
            "{\"error\": {\"message\": \"Incorrect API key provided: sk-test-NEVER-WRITTEN-4242\"}}",
        ))
        .mount(&upstream)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/completions"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_string("<html>key sk-test-NEVER-WRITTEN-4242</html>"),
        )
        .mount(&upstream)
        .await;
    let settings = Settings::default().openai(format!("{}/v1", upstream.uri()));
    let dir = temp_dir("key");
    let rec = recorder(&dir, Mode::Record);
    let app = Pipeline::start(rec.clone(), settings).unwrap();
    let base = app.openai_base_url();
    assert_eq!(
        call(
            &format!("{base}/chat/completions"),
            Some(&json!({"model": "m", "messages": []}))
        )
        .await
        .0,
        200
    );
    let (status, _) = call(
        &format!("{base}/embeddings"),
        Some(&json!({"model": "e", "input": "x"})),
    )
    .await;
    assert_eq!(
        status, 401,
        "the upstream's own error status reaches the application as it came"
    );
    let (status, _) = call(
        &format!("{base}/completions"),
        Some(&json!({"model": "m", "prompt": "x"})),
    )
    .await;
    assert_eq!(status, 502);
    let said = format!("{:?} {:?}", app.failures(), app.notes());
    assert!(said.contains("401") && said.contains("not JSON"), "{said}");
    drop(app);
    let snap = accept(&rec);
    for text in [&snap, &said] {
        assert!(!text.contains("NEVER-WRITTEN"), "the key leaked:\n{text}");
        assert!(!text.to_lowercase().contains("authorization"), "{text}");
    }
    assert_eq!(
        snap.matches("api:").count(),
        1,
        "only the answered call is recorded:\n{snap}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misbehaving_upstream_is_bounded_and_said() {
    let upstream = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(500).set_body_string("{\"error\": {\"message\": \"boom\"}}"),
        )
        .mount(&upstream)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/completions"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(30)))
        .mount(&upstream)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(ResponseTemplate::new(200).set_body_string("not json at all"))
        .mount(&upstream)
        .await;
    let settings = Settings::default()
        .openai(format!("{}/v1", upstream.uri()))
        .timeout(Duration::from_millis(800));
    let dir = temp_dir("faults");
    let rec = recorder(&dir, Mode::Record);
    let app = Pipeline::start(rec.clone(), settings).unwrap();
    let base = app.openai_base_url();
    let (status, text) = call(
        &format!("{base}/chat/completions"),
        Some(&json!({"model": "m", "messages": []})),
    )
    .await;
    assert_eq!(
        (status, text.contains("boom")),
        (500, true),
        "handed on as it came"
    );
    assert!(
        app.failures().is_empty(),
        "the application may handle a 500: {:?}",
        app.failures()
    );
    let started = Instant::now();
    let (status, text) = call(
        &format!("{base}/completions"),
        Some(&json!({"model": "m", "prompt": "x"})),
    )
    .await;
    assert_eq!(status, 504, "{text}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "bounded by the timeout"
    );
    assert!(text.contains("gave no answer within"), "{text}");
    let (status, text) = call(
        &format!("{base}/embeddings"),
        Some(&json!({"model": "e", "input": "x"})),
    )
    .await;
    assert_eq!(status, 502);
    assert!(text.contains("not JSON: not json at all"), "{text}");
    let failures = app.failures();
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert!(
        !app.unrecorded(),
        "an upstream's failure is not the recording's"
    );
    // A body that is not JSON is the application's own fault, said as such.
    let raw = reqwest::Client::new()
        .post(format!("{base}/chat/completions"))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status().as_u16(), 400);
    drop(app);
    let snap = accept(&rec);
    assert!(!snap.contains("pipeline:"), "nothing was recorded:\n{snap}");

    // An upstream that is not there names the setting to fix.
    let nowhere = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let app = Pipeline::start(
        recorder(&temp_dir("nowhere"), Mode::Record),
        Settings::default().openai(format!("http://{nowhere}/v1")),
    )
    .unwrap();
    let (status, text) = call(
        &format!("{}/chat/completions", app.openai_base_url()),
        Some(&json!({"model": "m", "messages": []})),
    )
    .await;
    assert_eq!(status, 502);
    assert!(
        text.contains("cannot be reached") && text.contains("RAGALIQ_PIPELINE_OPENAI_BASE_URL"),
        "{text}"
    );
    // A wrong path names the base URL to check.
    let (status, text) = call(&format!("{}/v1/v1/messages", app.url()), Some(&json!({}))).await;
    assert_eq!(status, 404);
    assert!(text.contains("check the base URL"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_stalls_is_cut_by_the_idle_timeout() {
    // A server that sends one event and then nothing, holding the line.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let _ = stream.read(&mut buf).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                let event = "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n";
                let chunk = format!("{:x}\r\n{event}\r\n", event.len());
                let _ = stream.write_all(head.as_bytes()).await;
                let _ = stream.write_all(chunk.as_bytes()).await;
                tokio::time::sleep(Duration::from_secs(60)).await;
            });
        }
    });
    let mut settings = Settings::default().openai(format!("http://{addr}/v1"));
    settings.idle_timeout = Duration::from_millis(500);
    let rec = recorder(&temp_dir("stall"), Mode::Record);
    let app = Pipeline::start(rec.clone(), settings).unwrap();
    let started = Instant::now();
    let response = reqwest::Client::new()
        .post(format!("{}/chat/completions", app.openai_base_url()))
        .json(&json!({"model": "m", "stream": true, "messages": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let body = response.text().await;
    assert!(
        body.is_err(),
        "the stream is broken off, not ended as if whole: {body:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    let failures = app.failures();
    assert!(
        failures[0].contains("mid-stream ([pipeline] idle_timeout_secs)"),
        "{failures:?}"
    );
    assert!(
        rec.finish(true).is_none(),
        "a broken stream is not recorded"
    );
}

/// With `[pipeline] shared_limits = true` the judge's run-wide concurrency
/// limit and cost budget hold the pipeline's live calls too; without it the
/// pipeline has its own limit and no budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_limits_hold_the_pipeline_to_the_judges_concurrency_and_budget() {
    let upstream = ScriptedJudge::start().await;
    upstream.set_latency(Duration::from_millis(300));
    let url = upstream.base_url();
    let config = |shared: bool, budget: &str| {
        let toml = format!(
            "[judge]\nprovider = \"openai-compatible\"\nmodel = \"scripted\"\nbase_url = \"{url}\"\nconcurrency = 1\n\n[pipeline]\nopenai_base_url = \"{url}\"\nshared_limits = {shared}\n\n{budget}"
        );
        let file = std::env::temp_dir().join("ragaliq-pipeline-limits.toml");
        ragaliq::Config::from_sources(Some((&toml, &file)), Path::new("."), &|_| None).unwrap()
    };
    let asked_at_once = |judge: ragaliq::Judge, dir: PathBuf| async move {
        let judge = judge.with_recorder(recorder(&dir, Mode::Record));
        let app = judge.pipeline();
        let url = format!("{}/chat/completions", app.openai_base_url());
        let questions = [
            "What is the refund window?",
            "Is shipping free?",
            "Refund?",
            "Shipping?",
        ];
        let calls = questions.map(|q| {
            let url = url.clone();
            tokio::spawn(async move { call(&url, Some(&chat(q, false))).await.0 })
        });
        let mut statuses = Vec::new();
        for c in calls {
            statuses.push(c.await.unwrap());
        }
        (statuses, app.failures())
    };

    // The judge's limit of 1 in flight: one pipeline call at a time.
    let shared = ragaliq::Judge::from_config(&config(true, "")).unwrap();
    let (statuses, failures) = asked_at_once(shared, temp_dir("limits-shared")).await;
    assert_eq!(statuses, [200; 4], "{failures:?}");
    assert_eq!(upstream.max_in_flight(), 1);

    // Its own limit (8): all four at once.
    let own = ragaliq::Judge::from_config(&config(false, "")).unwrap();
    let (statuses, _) = asked_at_once(own, temp_dir("limits-own")).await;
    assert_eq!(statuses, [200; 4]);
    assert!(upstream.max_in_flight() > 1, "{}", upstream.max_in_flight());

    // The judge's budget: spent by the first call (about 45 tokens at
    // $1,000 a million is $0.045), the next is refused, saying why.
    upstream.set_latency(Duration::ZERO);
    let budget = "[cost]\nmax_usd = 0.01\n\n[cost.prices.\"app-scripted\"]\ninput_per_million = 1000.0\noutput_per_million = 1000.0\n\n[cost.prices.\"scripted\"]\ninput_per_million = 0.0\noutput_per_million = 0.0\n";
    let judge = ragaliq::Judge::from_config(&config(true, budget))
        .unwrap()
        .with_recorder(recorder(&temp_dir("limits-budget"), Mode::Record));
    let app = judge.pipeline();
    let url = format!("{}/chat/completions", app.openai_base_url());
    let before = upstream.requests();
    assert_eq!(
        call(&url, Some(&chat("What is the refund window?", false)))
            .await
            .0,
        200
    );
    let (status, text) = call(&url, Some(&chat("Is shipping free?", false))).await;
    assert_eq!(status, 429, "{text}");
    assert!(text.contains("cost budget reached"), "{text}");
    assert_eq!(
        upstream.requests(),
        before + 1,
        "the refused call was not made"
    );
    let cost = app.cost().expect("the app model has a price");
    assert!(cost > 0.01 && cost < 0.1, "{cost}");
}

// ---------------------------------------------------------------------
// Through #[rag_test], as a team's test runs, in child processes.
// ---------------------------------------------------------------------

/// A team's test: its help desk is pointed at the endpoint and judged.
#[rag_test]
#[ignore = "run in a child process by the tests below"]
async fn child_pipeline(judge: Judge) {
    let app = judge.pipeline();
    let question = std::env::var("CHILD_QUESTION")
        .unwrap_or_else(|_| "How long do I have to return an item?".to_owned());
    let mut desk = rag_pipeline::HelpDesk::new(app.openai_base_url(), "app-scripted");
    if let Ok(prompt) = std::env::var("CHILD_PROMPT") {
        desk = desk.with_prompt(prompt);
    }
    let answer = desk.answer(&question).await.expect("the help desk answers");
    let case = RagCase::new(question)
        .context(answer.passages)
        .response(answer.text);
    assert_faithful!(judge, case);
}

struct Run {
    passed: bool,
    output: String,
}

fn run_child(dir: &Path, env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args(["child_pipeline", "--exact", "--ignored", "--test-threads=1"])
        .env_remove("CI")
        .env_remove("TF_BUILD")
        .env_remove("RAGALIQ_MODE")
        .env_remove("RAGALIQ_PROMPTS_DIR")
        .env_remove("INSTA_FORCE_PASS")
        .env_remove("NEXTEST_RUN_ID")
        .env_remove("RAGALIQ_RUN_ID")
        .env("RAGALIQ_SNAPSHOT_DIR", dir)
        .env("RAGALIQ_MAX_RETRIES", "0")
        .env("INSTA_UPDATE", "new");
    for (k, v) in env {
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

/// Accepts the pending recording, as `cargo insta accept` does.
fn accept_pending(dir: &Path) {
    let snap = dir.join("pipeline__child_pipeline.snap");
    std::fs::rename(dir.join("pipeline__child_pipeline.snap.new"), &snap)
        .expect("a pending recording");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ci_replays_the_pipeline_and_fails_on_a_changed_prompt_until_one_recording_run() {
    let server = ScriptedJudge::start().await;
    let url = server.base_url();
    let dir = temp_dir("ci");
    let judge_and_app = [
        ("RAGALIQ_BASE_URL", url.as_str()),
        ("RAGALIQ_PIPELINE_OPENAI_BASE_URL", url.as_str()),
    ];

    // Recorded once (the pipeline's answer, and the judge's on it).
    let mut env = judge_and_app.to_vec();
    env.push(("RAGALIQ_MODE", "record"));
    let run = run_child(&dir, &env);
    assert!(
        !run.passed,
        "a new recording awaits review:\n{}",
        run.output
    );
    let asked = server.requests();
    assert!(asked >= 3, "the pipeline's call and the judge's: {asked}");
    accept_pending(&dir);
    let snap = std::fs::read_to_string(dir.join("pipeline__child_pipeline.snap")).unwrap();
    let (app_part, judge_part) = snap
        .split_once("exchanges:")
        .expect("the judge's exchanges");
    assert!(
        app_part.contains("pipeline:")
            && app_part.contains("Question: How long do I have to return an item?"),
        "the pipeline's call comes first:\n{snap}"
    );
    assert!(
        judge_part.contains("Items can be returned within 30 days of delivery for a full refund."),
        "{snap}"
    );

    // CI: replayed, with no request anywhere.
    let mut ci = judge_and_app.to_vec();
    ci.push(("CI", "true"));
    let run = run_child(&dir, &ci);
    assert!(run.passed, "{}", run.output);
    assert_eq!(server.requests(), asked, "CI asked nothing");

    // The prompt edited: CI fails saying what changed and how to record.
    let mut edited = ci.clone();
    edited.push(("CHILD_PROMPT", "You answer customers' questions for an online shop.\nAnswer briefly, using only the passages you are given.\nIf the passages do not say, answer: I don't know."));
    let run = run_child(&dir, &edited);
    assert!(!run.passed);
    for expected in [
        "the pipeline under test asked its model something the recording of test `pipeline::child_pipeline`",
        "messages[0] (system) changed:",
        "- Answer in one sentence, using only the passages you are given.",
        "+ Answer briefly, using only the passages you are given.",
        "record both again with: RAGALIQ_MODE=record cargo test -p ragaliq-tests --test pipeline -- child_pipeline --exact",
    ] {
        assert!(
            run.output.contains(expected),
            "{expected:?} not in\n{}",
            run.output
        );
    }
    assert_eq!(server.requests(), asked, "CI asked nothing");

    // One recording run records both again; CI then replays the edit.
    let mut again = edited.clone();
    again.retain(|(k, _)| *k != "CI");
    again.push(("RAGALIQ_MODE", "record"));
    let run = run_child(&dir, &again);
    assert!(
        !run.passed,
        "the changed recording awaits review:\n{}",
        run.output
    );
    accept_pending(&dir);
    let run = run_child(&dir, &edited);
    assert!(run.passed, "{}", run.output);
    let snap = std::fs::read_to_string(dir.join("pipeline__child_pipeline.snap")).unwrap();
    assert!(
        snap.contains("Answer briefly") && !snap.contains("Answer in one sentence"),
        "the old call is gone:\n{snap}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_recording_one_file_keep_both_pipelines_calls() {
    let server = ScriptedJudge::start().await;
    let url = server.base_url();
    let dir = temp_dir("processes");
    let run_id = format!("pipeline-processes-{}", std::process::id());
    let spawn = |question: &'static str| {
        let (dir, url, run_id) = (dir.clone(), url.clone(), run_id.clone());
        std::thread::spawn(move || {
            run_child(
                &dir,
                &[
                    ("RAGALIQ_MODE", "auto"),
                    ("RAGALIQ_BASE_URL", &url),
                    ("RAGALIQ_PIPELINE_OPENAI_BASE_URL", &url),
                    ("RAGALIQ_RUN_ID", &run_id),
                    ("CHILD_QUESTION", question),
                ],
            )
        })
    };
    let a = spawn("How long do I have to return an item?");
    let b = spawn("Is shipping free?");
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    for run in [&a, &b] {
        assert!(
            run.output.contains("stored new snapshot") || run.output.contains(".snap.new"),
            "{}",
            run.output
        );
    }
    let pending = std::fs::read_to_string(dir.join("pipeline__child_pipeline.snap.new")).unwrap();
    assert!(
        pending.contains("Question: How long do I have to return an item?"),
        "{pending}"
    );
    assert!(pending.contains("Question: Is shipping free?"), "{pending}");
    assert_eq!(
        pending.matches("api: chat/completions").count(),
        2,
        "{pending}"
    );
}

// ---------------------------------------------------------------------
// The example: examples/rag_pipeline.rs, answered by the kit's
// Qwen2.5-Coder-0.5B and judged by its 1.5B, recorded once.
// ---------------------------------------------------------------------

/// The help desk, its model's client pointed at this test's endpoint: the
/// only change a team makes to test its pipeline.
fn help_desk(judge: &Judge) -> rag_pipeline::HelpDesk {
    rag_pipeline::HelpDesk::new(judge.pipeline().openai_base_url(), "qwen2.5-coder-0.5b")
}

#[rag_test(config = "examples/rag_pipeline.toml")]
async fn help_desk_return_window(judge: Judge) {
    let question = "How long do I have to return an item?";
    let answer = help_desk(&judge)
        .answer(question)
        .await
        .expect("the help desk answers");
    let case = RagCase::new(question)
        .context(answer.passages)
        .retrieved_ids(answer.ids)
        .relevant_ids(["returns-1"])
        .expected_answer("Within 30 days of delivery.")
        .response(answer.text);
    assert_retrieved!(case, hit_rate_at(1) >= 1.0);
    assert_faithful!(judge, case);
    assert_relevant!(judge, case);
    assert_correct!(judge, case);
}

#[rag_test(config = "examples/rag_pipeline.toml")]
async fn help_desk_free_shipping(judge: Judge) {
    let question = "Is shipping free?";
    let answer = help_desk(&judge)
        .answer(question)
        .await
        .expect("the help desk answers");
    let case = RagCase::new(question)
        .context(answer.passages)
        .retrieved_ids(answer.ids)
        .relevant_ids(["shipping-2"])
        .expected_answer("Only on orders over 50 euros.")
        .response(answer.text);
    assert_retrieved!(case, hit_rate_at(1) >= 1.0);
    assert_faithful!(judge, case);
    assert_relevant!(judge, case);
    assert_correct!(judge, case);
}

#[rag_test(config = "examples/rag_pipeline.toml")]
async fn help_desk_store_hours(judge: Judge) {
    let question = "When do your stores open?";
    let answer = help_desk(&judge)
        .answer(question)
        .await
        .expect("the help desk answers");
    let case = RagCase::new(question)
        .context(answer.passages)
        .retrieved_ids(answer.ids)
        .relevant_ids(["stores-1"])
        .expected_answer("At nine in the morning, Monday to Saturday.")
        .response(answer.text);
    assert_retrieved!(case, hit_rate_at(1) >= 1.0);
    assert_faithful!(judge, case);
    assert_relevant!(judge, case);
    assert_correct!(judge, case);
}
