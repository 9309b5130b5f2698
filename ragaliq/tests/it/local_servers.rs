//! What local judges (llama.cpp, llama-cpp-python, vLLM, Ollama) need, on
//! servers on 127.0.0.1 that speak their wire formats: a refused response
//! format steps down once and is remembered; a reply cut off by its token
//! limit is a typed error that names the limit; streamed replies read the
//! same as whole ones; a stalled stream fails on the idle timeout and a call
//! that times out closes its connection, so the server stops generating;
//! absurd `Retry-After` values neither panic nor wait; `RAGALIQ_JUDGE`
//! beats the configuration file.

use crate::common;

use common::{fast_retries, openai_reply, read_request, within};
use ragaliq::Strategy;
use ragaliq::judge::{AnthropicTransport, ApiKey, JsonMode, Judge, OpenAiTransport, RetryPolicy};
use ragaliq::{Config, Error, Metric, RagCase, TransportErrorKind};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

fn case() -> RagCase {
    RagCase::new("How long is the refund window?")
        .context(["Refunds are accepted within 30 days of delivery."])
        .response("Refunds are accepted within 30 days of delivery.")
}

fn relevance() -> Value {
    json!({"reasoning": "Direct answer.", "score": 0.9})
}

/// A server that refuses `json_schema` as llama-cpp-python does (HTTP 500)
/// and answers everything else; every request's `response_format` is kept.
async fn refusing_json_schema() -> (MockServer, Arc<Mutex<Vec<Value>>>) {
    let server = MockServer::start().await;
    let formats = Arc::new(Mutex::new(Vec::new()));
    let seen = formats.clone();
    Mock::given(method("POST"))
        .respond_with(move |req: &Request| {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            let format = body["response_format"].clone();
            seen.lock().unwrap().push(format.clone());
            if format["type"] == "json_schema" {
                return ResponseTemplate::new(500).set_body_json(json!({"error": {
                    "message": "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  Input should be 'text' or 'json_object'",
                    "type": "internal_server_error"}}));
            }
            ResponseTemplate::new(200).set_body_json(openai_reply(&relevance().to_string(), 50, 9))
        })
        .mount(&server)
        .await;
    (server, formats)
}

#[tokio::test]
async fn a_refused_json_schema_steps_down_once_and_is_not_retried() {
    let (server, formats) = refusing_json_schema().await;
    let judge = Judge::builder(OpenAiTransport::new(&format!("{}/v1", server.uri())))
        .with_strategy(Strategy::Json)
        .with_retry(fast_retries(4))
        .build()
        .unwrap();
    let first = within(judge.relevance(&case())).await.unwrap();
    assert_eq!(first.score, 0.9);
    let other = case().response("A different answer about refunds.");
    within(judge.relevance(&other)).await.unwrap();
    let formats = formats.lock().unwrap().clone();
    let types: Vec<&str> = formats
        .iter()
        .map(|f| f["type"].as_str().unwrap())
        .collect();
    // One refused json_schema (not retried), then the schema as a hint to
    // json_object, and the next evaluation starts there.
    assert_eq!(types, ["json_schema", "json_object", "json_object"]);
    assert!(formats[1]["schema"].is_object(), "{:?}", formats[1]);
    assert_eq!(judge.json_mode(), JsonMode::ObjectSchema);
    let refusals = judge.refusals();
    assert_eq!(refusals.len(), 1);
    assert!(
        refusals[0]
            .reason
            .contains("Input should be 'text' or 'json_object'")
    );
    assert!(
        judge
            .describe()
            .contains("the server refused json_mode schema, now object-schema"),
        "{}",
        judge.describe()
    );
}

#[tokio::test]
async fn a_recording_made_after_a_refusal_replays_as_it_was_asked() {
    use ragaliq::Mode;
    use ragaliq::record::{Location, Recorder};
    let (server, _) = refusing_json_schema().await;
    let dir = std::env::temp_dir().join(format!("ragaliq-negotiated-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let at = || Location::at(dir.join("negotiated.snap"), "negotiated", "record");
    let recorder = Arc::new(Recorder::new(at(), Mode::Record));
    let judge = Judge::builder(OpenAiTransport::new(&format!("{}/v1", server.uri())))
        .with_strategy(Strategy::Json)
        .build()
        .unwrap()
        .with_recorder(recorder.clone());
    within(judge.relevance(&case())).await.unwrap();
    let written = recorder
        .save_pending("tests/it/local_servers.rs")
        .unwrap()
        .unwrap();
    let text = std::fs::read_to_string(&written).unwrap();
    assert!(text.contains("format: json_object+schema"), "{text}");
    assert!(text.contains("negotiated_from: json_schema"), "{text}");
    std::fs::rename(&written, dir.join("negotiated.snap")).unwrap();
    // A fresh process (a fresh client) configured for json_schema replays it.
    let replay = Judge::builder(OpenAiTransport::new("http://127.0.0.1:9/v1"))
        .with_strategy(Strategy::Json)
        .build()
        .unwrap()
        .with_recorder(Arc::new(Recorder::new(at(), Mode::Replay)));
    let eval = within(replay.relevance(&case())).await.unwrap();
    assert_eq!(
        (eval.score, eval.usage.calls, eval.usage.replayed),
        (0.9, 0, 1)
    );
    // Configured for json_object, the same recording is stale, and says why.
    let other = Judge::builder(OpenAiTransport::new("http://127.0.0.1:9/v1"))
        .with_strategy(Strategy::Json)
        .with_json_mode(JsonMode::Object)
        .build()
        .unwrap()
        .with_recorder(Arc::new(Recorder::new(at(), Mode::Replay)));
    let e = within(other.relevance(&case())).await.unwrap_err();
    assert!(
        e.to_string()
            .contains("response format json_object+schema → json_object (judge.json_mode)"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_reply_cut_off_by_its_token_limit_is_a_truncation_that_names_the_limit() {
    let server = MockServer::start().await;
    let cut = json!({
        "model": "gemma", "choices": [{"index": 0, "finish_reason": "length",
        "message": {"role": "assistant", "content": "{\"evidence\": \"Refunds are acc"}}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 256}
    });
    Mock::given(method("POST"))
        .respond_with(move |req: &Request| {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            if body["response_format"]["json_schema"]["name"] == "extract_claims" {
                ResponseTemplate::new(200).set_body_json(openai_reply(
                    r#"{"claims": ["Refunds are accepted within 30 days."]}"#,
                    200,
                    12,
                ))
            } else {
                ResponseTemplate::new(200).set_body_json(cut.clone())
            }
        })
        .mount(&server)
        .await;
    let judge = Judge::builder(OpenAiTransport::new(&format!("{}/v1", server.uri())))
        .with_strategy(Strategy::Json)
        .with_retry(RetryPolicy::none())
        .build()
        .unwrap();
    let e = within(judge.faithfulness(&case())).await.unwrap_err();
    let Error::Truncated {
        task,
        limit,
        ceiling,
        ..
    } = &e
    else {
        panic!("expected a truncation, got {e}");
    };
    assert_eq!((*task, *limit, *ceiling), ("verify_claim", 256, 2048));
    let text = e.to_string();
    assert!(
        text.starts_with("verify_claim: the judge's reply was cut off at its token limit of 256, sized for 1 claim under judge.max_tokens = 2048"),
        "{text}"
    );
    assert!(text.contains("RAGALIQ_SIZED_MAX_TOKENS=false"), "{text}");
    // It was paid for, and counted.
    assert_eq!(judge.usage().calls, 2);
}

#[tokio::test]
async fn anthropic_max_tokens_is_a_truncation_too() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg", "type": "message", "role": "assistant", "model": "claude-x",
            "content": [{"type": "tool_use", "id": "t", "name": "submit", "input": {"reasoning": "The resp"}}],
            "stop_reason": "max_tokens", "usage": {"input_tokens": 90, "output_tokens": 256}
        })))
        .mount(&server)
        .await;
    let judge = Judge::builder(
        AnthropicTransport::new(&format!("{}/v1", server.uri()))
            .with_api_key(Some(ApiKey::new("test-key-1")), "ANTHROPIC_API_KEY"),
    )
    .with_strategy(Strategy::Json)
    .with_sized_max_tokens(false)
    .with_max_tokens(256)
    .with_retry(RetryPolicy::none())
    .build()
    .unwrap();
    let e = within(judge.relevance(&case())).await.unwrap_err();
    assert!(matches!(e, Error::Truncated { limit: 256, .. }), "{e}");
    assert!(
        e.to_string()
            .contains("raise judge.max_tokens or RAGALIQ_MAX_TOKENS"),
        "{e}"
    );
}

/// An OpenAI-style stream of `text` in `pieces`, with usage in the last chunk.
fn openai_stream(text: &str, pieces: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(pieces);
    let mut out = String::new();
    for piece in chars.chunks(size) {
        let s: String = piece.iter().collect();
        let chunk = json!({"model": "gpt-test", "choices": [{"index": 0, "delta": {"content": s}, "finish_reason": null}]});
        out.push_str(&format!("data: {chunk}\n\n"));
    }
    let end = json!({"model": "gpt-test", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    out.push_str(&format!("data: {end}\n\n"));
    let usage = json!({"model": "gpt-test", "choices": [], "usage": {"prompt_tokens": 77, "completion_tokens": 12}});
    out.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    out
}

#[tokio::test]
async fn a_streamed_reply_is_the_same_reply() {
    let reply = relevance().to_string();
    let server = MockServer::start().await;
    let body = openai_stream(&reply, 5);
    Mock::given(method("POST"))
        .respond_with(move |req: &Request| {
            let sent: Value = serde_json::from_slice(&req.body).unwrap();
            assert_eq!(sent["stream"], true);
            assert_eq!(sent["stream_options"]["include_usage"], true);
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(body.clone())
        })
        .mount(&server)
        .await;
    let streamed =
        Judge::builder(OpenAiTransport::new(&format!("{}/v1", server.uri())).with_streaming(true))
            .with_strategy(Strategy::Json)
            .build()
            .unwrap();
    let eval = within(streamed.relevance(&case())).await.unwrap();
    assert_eq!(
        (eval.score, eval.reasoning.as_str()),
        (0.9, "Direct answer.")
    );
    assert_eq!(
        (eval.usage.input_tokens, eval.usage.output_tokens),
        (77, 12)
    );
}

#[tokio::test]
async fn a_streamed_anthropic_tool_reply_is_the_same_reply() {
    let server = MockServer::start().await;
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {"model": "claude-x", "usage": {"input_tokens": 88, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "submit", "input": {}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"score\": 0.9, \"reas"}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "oning\": \"Direct answer.\"}"}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 15}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    let body: String = events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect();
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(body),
        )
        .mount(&server)
        .await;
    let judge = Judge::builder(
        AnthropicTransport::new(&format!("{}/v1", server.uri()))
            .with_api_key(Some(ApiKey::new("test-key-1")), "ANTHROPIC_API_KEY")
            .with_streaming(true),
    )
    .with_strategy(Strategy::Json)
    .build()
    .unwrap();
    let eval = within(judge.relevance(&case())).await.unwrap();
    assert_eq!(
        (
            eval.score,
            eval.usage.input_tokens,
            eval.usage.output_tokens
        ),
        (0.9, 88, 15)
    );
}

/// A raw server that answers with a stream: the headers, `chunks` of a
/// streamed reply, then silence; it reports when the client closes.
async fn stalling_stream(chunks: usize) -> (String, tokio::sync::oneshot::Receiver<Duration>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let (closed, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        read_request(&mut stream).await.unwrap();
        let started = Instant::now();
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
            .await;
        for i in 0..chunks {
            let data = format!(
                "data: {}\n\n",
                json!({"choices": [{"index": 0, "delta": {"content": format!("{{\"reasoning\": \"part {i}")}}]})
            );
            let _ = stream
                .write_all(format!("{:x}\r\n{data}\r\n", data.len()).as_bytes())
                .await;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // Silence; wait for the client to close the connection.
        let mut buf = [0u8; 64];
        loop {
            use tokio::io::AsyncReadExt;
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        let _ = closed.send(started.elapsed());
    });
    (url, rx)
}

#[tokio::test]
async fn a_stream_that_stalls_fails_on_the_idle_timeout_and_closes_the_connection() {
    let (url, closed) = stalling_stream(3).await;
    let judge = Judge::builder(
        OpenAiTransport::new(&url)
            .with_streaming(true)
            .with_idle_timeout(Duration::from_millis(400)),
    )
    .with_strategy(Strategy::Json)
    .with_timeout(Duration::from_secs(20))
    .with_retry(RetryPolicy::none())
    .build()
    .unwrap();
    let started = Instant::now();
    let e = within(judge.relevance(&case())).await.unwrap_err();
    let Error::Transport(t) = &e else {
        panic!("{e}")
    };
    assert_eq!(
        t.kind,
        TransportErrorKind::IdleTimeout {
            after: Duration::from_millis(400)
        }
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "not the 20 s total timeout"
    );
    assert!(
        e.to_string()
            .contains("stopped sending for 0.4s in the middle of its answer"),
        "{e}"
    );
    // The connection is closed, so a real server stops generating.
    let after = tokio::time::timeout(Duration::from_secs(5), closed)
        .await
        .expect("the client closed the connection")
        .unwrap();
    assert!(after < Duration::from_secs(2), "{after:?}");
}

#[tokio::test]
async fn a_call_that_times_out_closes_its_connection() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let (closed, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        read_request(&mut stream).await.unwrap();
        let started = Instant::now();
        // Generating, silently; notice when the client hangs up.
        let mut buf = [0u8; 64];
        loop {
            use tokio::io::AsyncReadExt;
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        let _ = closed.send(started.elapsed());
    });
    let judge = Judge::builder(OpenAiTransport::new(&url).with_streaming(true))
        .with_strategy(Strategy::Json)
        .with_timeout(Duration::from_millis(500))
        .with_max_tokens(1)
        .with_retry(RetryPolicy::none())
        .build()
        .unwrap();
    let e = within(judge.relevance(&case())).await.unwrap_err();
    // 0.5 s, plus half a second for the reply's one token.
    assert!(e.to_string().contains("timed out after 1.0s"), "{e}");
    let after = tokio::time::timeout(Duration::from_secs(5), rx)
        .await
        .expect("the connection was closed at the timeout")
        .unwrap();
    assert!(
        after < Duration::from_millis(2000),
        "closed {after:?} after the request"
    );
}

#[tokio::test]
async fn absurd_retry_after_values_neither_panic_nor_wait() {
    for value in ["1e20", "99999999999999999999999999999", "1e308", "inf"] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(429).insert_header("retry-after", value))
            .mount(&server)
            .await;
        // A model of its own: in a run that spans processes (nextest, or
        // RAGALIQ_RUN_ID) the pace is the run's, per server and model, and
        // wiremock hands the next server the port of the last, so the day
        // long pause the previous value asked for would refuse this one
        // before it is sent. This test is about one call's own reading.
        let model = format!("m-{}-{value}", std::process::id());
        let judge = Judge::builder(OpenAiTransport::new(&format!("{}/v1", server.uri())))
            .with_model(model)
            .with_strategy(Strategy::Json)
            .with_retry(fast_retries(3).with_total_budget(Duration::from_secs(10)))
            .build()
            .unwrap();
        let started = Instant::now();
        let e = within(judge.relevance(&case())).await.unwrap_err();
        let Error::Transport(t) = &e else {
            panic!("{e}")
        };
        assert_eq!(
            t.attempts, 1,
            "{value}: no retry can start within the budget"
        );
        assert!(t.budget_exhausted, "{value}");
        assert!(started.elapsed() < Duration::from_secs(2), "{value}");
    }
}

#[tokio::test]
async fn ragaliq_judge_beats_the_file_and_the_calls_go_there() {
    let file_server = MockServer::start().await;
    let env_server = MockServer::start().await;
    for s in [&file_server, &env_server] {
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(openai_reply(
                &relevance().to_string(),
                1,
                1,
            )))
            .mount(s)
            .await;
    }
    let toml = format!(
        "[judge]\nprovider = \"openai-compatible\"\nmodel = \"scripted\"\nbase_url = \"{}/v1\"\nstrategy = \"json\"\n",
        file_server.uri()
    );
    let env_url = format!("{}/v1", env_server.uri());
    let env = |name: &str| (name == "RAGALIQ_JUDGE").then(|| env_url.clone());
    let config = Config::from_sources(
        Some((&toml, Path::new("ragaliq.toml"))),
        Path::new("."),
        &env,
    )
    .unwrap();
    let judge = Judge::from_config(&config).unwrap();
    let at = env_server.uri().replace("http://", "");
    assert_eq!(
        judge.endpoint().as_deref(),
        Some(format!("http://{at}").as_str())
    );
    assert!(
        judge
            .describe()
            .starts_with(&format!("openai-compatible `scripted` at http://{at}")),
        "{}",
        judge.describe()
    );
    within(judge.evaluate(Metric::Relevance, &case()))
        .await
        .unwrap();
    assert_eq!(env_server.received_requests().await.unwrap().len(), 1);
    assert!(
        file_server.received_requests().await.unwrap().is_empty(),
        "the file's server was not asked"
    );
}

#[tokio::test]
async fn a_stream_stopped_for_another_request_is_not_a_reply() {
    // llama-cpp-python's answer to a streamed request when another arrives:
    // a few tokens, no finish_reason, then [DONE].
    let cut = "data: {\"choices\": [{\"index\": 0, \"delta\": {\"role\": \"assistant\"}, \"finish_reason\": null}]}\n\n\
               data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"{\\\"reas\"}, \"finish_reason\": null}]}\n\n\
               data: [DONE]\n\n";
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_string(cut)
                .insert_header("content-type", "text/event-stream"),
        )
        .mount(&server)
        .await;
    let judge =
        Judge::builder(OpenAiTransport::new(&format!("{}/v1", server.uri())).with_streaming(true))
            .with_strategy(Strategy::Json)
            .with_retry(fast_retries(1))
            .build()
            .unwrap();
    let e = within(judge.relevance(&case())).await.unwrap_err();
    let Error::Transport(t) = &e else {
        panic!("{e}")
    };
    assert!(
        matches!(t.kind, TransportErrorKind::Interrupted { .. }),
        "{e}"
    );
    assert_eq!(t.attempts, 2, "retried: the next attempt runs alone");
    assert!(e.to_string().contains("set judge.concurrency = 1"), "{e}");
    assert!(
        judge.describe().contains("calls now go one at a time"),
        "{}",
        judge.describe()
    );
}
