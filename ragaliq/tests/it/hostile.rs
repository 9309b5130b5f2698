//! A hostile server on 127.0.0.1, misbehaving in every way a judge server or
//! a proxy in front of one can: absurd rate-limit headers and `Retry-After`
//! values, a redirect to another origin, an error body without end, a
//! streamed line that never ends, a streamed event whose `data:` lines never
//! meet a blank line, chunks that carry log-probabilities but no text, a
//! batch result file of many megabytes, a poll that stalls after its
//! headers, and a create whose reply is lost after the batch exists. For each, the call ends within its documented
//! bound with an error that names the cause, nothing panics, the key goes
//! only to the first origin, and memory stays under a stated ceiling.
//!
//! Every test runs under [`within`]: none may hold up the run.

use crate::common;

use common::{fast_retries, within};
use ragaliq::Strategy;
use ragaliq::batch::{BatchApi, BatchProgress, BatchTag};
use ragaliq::judge::{
    AnthropicTransport, ApiKey, JudgeRequest, OpenAiTransport, RetryPolicy, Transport, limits,
};
use ragaliq::{Judge, RagCase, TransportError, TransportErrorKind};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

const KEY: &str = "fake-key-hostile-0123456789";

/// One request as the server saw it: its head (lower-cased) and body.
struct Seen {
    head: String,
}

/// Reads one request's head (and its content-length body).
async fn read_head(stream: &mut TcpStream) -> Option<Seen> {
    let (head, _) = common::read_head_and_body(stream).await?;
    Some(Seen { head })
}

type Handler = Arc<
    dyn Fn(TcpStream, Seen) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>
        + Send
        + Sync,
>;

/// A server on 127.0.0.1 that hands each request to `handler`; counts them.
async fn serve(handler: Handler) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                continue;
            };
            let handler = handler.clone();
            let seen = seen.clone();
            tokio::spawn(async move {
                if let Some(request) = read_head(&mut stream).await {
                    seen.fetch_add(1, Ordering::SeqCst);
                    handler(stream, request).await;
                }
            });
        }
    });
    (port, count)
}

fn handler<F, Fut>(f: F) -> Handler
where
    F: Fn(TcpStream, Seen) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    Arc::new(move |s, r| Box::pin(f(s, r)))
}

/// Writes a whole response with a JSON body.
async fn respond(stream: &mut TcpStream, status: &str, headers: &str, body: &str) {
    let text = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{headers}\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(text.as_bytes()).await;
}

fn reply(content: &str) -> String {
    serde_json::json!({
        "model": "m", "choices": [{"message": {"content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2}
    })
    .to_string()
}

fn case() -> RagCase {
    RagCase::new("How long is the refund window?")
        .context(["Refunds are accepted within 30 days of delivery."])
        .response("The refund window is 30 days.")
}

fn judge(transport: impl ragaliq::judge::Transport, retry: RetryPolicy) -> Judge {
    Judge::builder(transport)
        .with_strategy(Strategy::Json)
        .with_retry(retry)
        .with_timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

fn transport_error(e: ragaliq::Error) -> TransportError {
    match e {
        ragaliq::Error::Transport(t) => t,
        other => panic!("expected a transport error, got: {other}"),
    }
}

/// `x-ratelimit-reset-tokens: 5000000000000000h` (two billion years) with
/// nothing left, then a 429 with a `Retry-After` of a day: before, the
/// first made the window refill at ~5e-19 a second (a wait of 2^64 s, which
/// panics in `Duration::from_secs_f64` or sleeps for ever), and the second
/// held every later call of the run for a day. Now each call ends at once,
/// naming the header.
#[tokio::test]
async fn absurd_rate_limit_headers_and_retry_after_end_calls_naming_the_header() {
    let calls = Arc::new(AtomicUsize::new(0));
    let n = calls.clone();
    let (port, _) = serve(handler(move |mut s, _| {
        let k = n.fetch_add(1, Ordering::SeqCst);
        async move {
            if k == 0 {
                let headers = "x-ratelimit-limit-tokens: 10\r\nx-ratelimit-remaining-tokens: 0\r\nx-ratelimit-reset-tokens: 5000000000000000h\r\n";
                respond(&mut s, "200 OK", headers, &reply(r#"{"reasoning": "r", "score": 1}"#)).await;
            } else {
                respond(&mut s, "429 Too Many Requests", "retry-after: 86400\r\n", r#"{"error": {"message": "slow down"}}"#).await;
            }
        }
    }))
    .await;
    let url = format!("http://127.0.0.1:{port}/v1");
    let judge = judge(OpenAiTransport::new(&url), fast_retries(2));
    // The first call is answered; its headers say the window refills at a
    // trickle (a day, at most, is believed).
    within(judge.relevance(&case())).await.unwrap();
    let started = Instant::now();
    let second = within(judge.relevance(&case().id("second").response("Thirty days.")))
        .await
        .unwrap_err();
    let message = transport_error(second).to_string();
    assert!(
        message.contains("rate-limit headers for tokens") && message.contains("retry budget"),
        "{message}"
    );
    assert!(started.elapsed() < Duration::from_secs(5), "it waited");
    println!("window that refills at a trickle: {message}");

    // A fresh judge (another run's pace: its own process state) meets the 429.
    let (port, _) = serve(handler(|mut s, _| async move {
        respond(
            &mut s,
            "429 Too Many Requests",
            "retry-after: 86400\r\n",
            r#"{"error": {"message": "slow down"}}"#,
        )
        .await;
    }))
    .await;
    let judge = judge_for(port, 2);
    let started = Instant::now();
    let first = transport_error(within(judge.relevance(&case())).await.unwrap_err());
    assert!(
        matches!(first.kind, TransportErrorKind::Status { status: 429, .. })
            && first.budget_exhausted,
        "{first}"
    );
    // Every later call of the run fails at once, naming the header.
    let later = transport_error(
        within(judge.relevance(&case().id("later")))
            .await
            .unwrap_err(),
    );
    let message = later.to_string();
    assert!(
        message.contains("Retry-After") && message.contains("86400 s"),
        "{message}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a call waited for the day"
    );
    println!("Retry-After of a day: {message}");
}

fn judge_for(port: u16, retries: u32) -> Judge {
    judge(
        OpenAiTransport::new(&format!("http://127.0.0.1:{port}/v1")),
        fast_retries(retries),
    )
}

/// A redirect to another origin (another port, and `localhost` for
/// `127.0.0.1`): reqwest's default would follow it, keeping Anthropic's
/// `x-api-key`. Not followed, live or batch: the key reaches only the
/// first origin, and the error says where the redirect pointed.
#[tokio::test]
async fn a_redirect_to_another_origin_is_not_followed_and_the_key_stays_home() {
    let (elsewhere, reached) = serve(handler(|mut s, seen: Seen| async move {
        // The stranger keeps what it was sent, to fail the test loudly.
        assert!(!seen.head.contains(KEY), "the key reached another origin");
        respond(&mut s, "200 OK", "", "{}").await;
    }))
    .await;
    let (port, _) = serve(handler(move |mut s, _| async move {
        let location = format!("location: http://localhost:{elsewhere}/v1/messages\r\n");
        respond(&mut s, "307 Temporary Redirect", &location, "").await;
    }))
    .await;
    let base = format!("http://127.0.0.1:{port}/v1");
    let anthropic =
        AnthropicTransport::new(&base).with_api_key(Some(ApiKey::new(KEY)), "ANTHROPIC_API_KEY");
    let judge = judge(anthropic, RetryPolicy::none());
    let e = transport_error(within(judge.relevance(&case())).await.unwrap_err());
    let message = e.to_string();
    assert!(
        matches!(e.kind, TransportErrorKind::Redirected { status: 307, .. })
            && message.contains(&format!("localhost:{elsewhere}"))
            && !message.contains(KEY),
        "{message}"
    );
    // The batch API, too.
    let api = BatchApi::anthropic(&base, Some(ApiKey::new(KEY)), "ANTHROPIC_API_KEY")
        .with_retry(RetryPolicy::none());
    let poll = within(api.progress("msgbatch_1")).await.unwrap_err();
    assert!(
        matches!(poll.kind, TransportErrorKind::Redirected { .. }),
        "{poll}"
    );
    assert_eq!(
        reached.load(Ordering::SeqCst),
        0,
        "another origin was called"
    );
    println!("redirect: {message}");
}

/// An error status whose body never ends: the message is read from its
/// first bytes ([`limits::MAX_ERROR_BYTES`]); the rest is never read.
#[tokio::test]
async fn an_error_body_without_end_is_read_only_so_far() {
    let (port, _) = serve(handler(|mut s, _| async move {
        let head = "HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n";
        if s.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        let chunk = format!("{:x}\r\n{}\r\n", 8192, "e".repeat(8192));
        // Until the client hangs up, or a gigabyte.
        for _ in 0..131_072 {
            if s.write_all(chunk.as_bytes()).await.is_err() {
                return;
            }
        }
    }))
    .await;
    let started = Instant::now();
    let e = transport_error(
        within(judge_for(port, 0).relevance(&case()))
            .await
            .unwrap_err(),
    );
    let message = e.to_string();
    assert!(
        message.contains("HTTP 500") && message.len() < 2_000,
        "{}",
        &message[..message.len().min(400)]
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    println!(
        "endless error body: ended in {:.2} s with {} characters of message",
        started.elapsed().as_secs_f64(),
        message.len()
    );
}

/// A streamed reply whose line never ends: cut at
/// [`limits::MAX_EVENT_LINE_BYTES`], scanned once (not quadratically).
#[tokio::test]
async fn a_streamed_line_that_never_ends_is_cut_at_its_limit() {
    let (port, _) = serve(handler(|mut s, _| async move {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        if s.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        let first = "data: {\"choices\": [{\"delta\": {\"content\": \"";
        let _ = s
            .write_all(format!("{:x}\r\n{first}\r\n", first.len()).as_bytes())
            .await;
        let chunk = format!("{:x}\r\n{}\r\n", 16_384, "a".repeat(16_384));
        for _ in 0..65_536 {
            if s.write_all(chunk.as_bytes()).await.is_err() {
                return;
            }
        }
    }))
    .await;
    let transport =
        OpenAiTransport::new(&format!("http://127.0.0.1:{port}/v1")).with_streaming(true);
    let started = Instant::now();
    let e = transport_error(
        within(judge(transport, RetryPolicy::none()).relevance(&case()))
            .await
            .unwrap_err(),
    );
    assert!(
        matches!(
            e.kind,
            TransportErrorKind::TooLarge { limit, .. } if limit == limits::MAX_EVENT_LINE_BYTES
        ),
        "{e}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    println!(
        "endless streamed line: {e} ({:.2} s)",
        started.elapsed().as_secs_f64()
    );
}

/// A streamed request to `server` as the judge sends a yes/no question:
/// `max_tokens` of reply, ten alternatives per position.
fn streamed_question(max_tokens: u32) -> JudgeRequest {
    serde_json::from_value(serde_json::json!({
        "task": "claim_supported", "template_version": "claim_supported@1", "model": "m",
        "system": "s", "messages": [{"role": "user", "content": "u"}],
        "temperature": 0.0, "max_tokens": max_tokens, "response_format": {"type": "text"},
        "sample": 0, "top_logprobs": 10
    }))
    .unwrap()
}

/// A wiremock server on 127.0.0.1 whose every POST is answered with the
/// server-sent events `body`.
async fn streaming(body: String) -> wiremock::MockServer {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(
            wiremock::ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(body),
        )
        .mount(&server)
        .await;
    server
}

/// One event's `data:` lines that never meet the blank line ending an
/// event: each line is short (under [`limits::MAX_EVENT_LINE_BYTES`]), so
/// only a bound on the event as a whole stops them. Before, the lines piled
/// up for as long as the server sent them (here 12 MiB, then a decode
/// error; from an endless server, until memory ran out).
#[tokio::test]
async fn a_streamed_event_without_end_is_cut_at_its_limit() {
    let line = format!("data: {}\n", "x".repeat(1000));
    let body = line.repeat(12 * 1024 * 1024 / line.len());
    let server = streaming(body).await;
    let transport = OpenAiTransport::new(&format!("{}/v1", server.uri())).with_streaming(true);
    let e = within(transport.complete(&streamed_question(3)))
        .await
        .unwrap_err();
    assert!(
        matches!(
            e.kind,
            TransportErrorKind::TooLarge { limit, name: "MAX_EVENT_BYTES", .. }
                if limit == limits::MAX_EVENT_BYTES
        ),
        "{e}"
    );
    assert!(e.to_string().contains("MAX_EVENT_BYTES"), "{e}");
    println!("endless streamed event: {e}");
}

/// Chunks with no text but a position of log-probabilities each: the text
/// never grows, so the reply's byte limit never stopped them, and every
/// position was kept. Now a reply keeps as many positions as its
/// `max_tokens` allows (the answer word is read at the first ones), and
/// never more than [`limits::MAX_LOGPROB_TOKENS`].
#[tokio::test]
async fn log_probabilities_without_text_are_kept_only_to_the_reply_limit() {
    let position = |token: &str| {
        serde_json::json!({"token": token, "logprob": -0.1, "top_logprobs": [
            {"token": token, "logprob": -0.1}, {"token": "No", "logprob": -2.4}]})
    };
    let chunk = |content: &str, token: &str| {
        format!(
            "data: {}\n\n",
            serde_json::json!({"model": "m", "choices": [{"index": 0, "delta": {"content": content},
                "logprobs": {"content": [position(token)]}}]})
        )
    };
    let stream = |empty_chunks: usize| {
        let mut body = chunk("Yes", "Yes");
        body.push_str(&chunk("", " ").repeat(empty_chunks));
        body.push_str(&format!(
            "data: {}\n\ndata: [DONE]\n\n",
            serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})
        ));
        body
    };
    // A yes/no question's three tokens.
    let server = streaming(stream(5_000)).await;
    let transport = OpenAiTransport::new(&format!("{}/v1", server.uri())).with_streaming(true);
    let reply = within(transport.complete(&streamed_question(3)))
        .await
        .unwrap();
    let kept = reply.logprobs.unwrap();
    assert_eq!(kept.len(), 3, "as many positions as max_tokens");
    assert_eq!(
        kept[0].token, "Yes",
        "the first positions are the ones kept"
    );
    assert_eq!(reply.text, "Yes");
    // A reply allowed a million tokens keeps no more than the fixed cap.
    let server = streaming(stream(limits::MAX_LOGPROB_TOKENS + 100)).await;
    let transport = OpenAiTransport::new(&format!("{}/v1", server.uri())).with_streaming(true);
    let reply = within(transport.complete(&streamed_question(1_000_000)))
        .await
        .unwrap();
    assert_eq!(
        reply.logprobs.unwrap().len(),
        limits::MAX_LOGPROB_TOKENS,
        "never more than the cap"
    );
}

/// A poll that sends its headers and then nothing: it ends at the call
/// timeout (one attempt here), never hangs the record.
#[tokio::test]
async fn a_poll_that_stalls_after_its_headers_times_out() {
    let (port, _) = serve(handler(|mut s, _| async move {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{\"id\":";
        let _ = s.write_all(head.as_bytes()).await;
        tokio::time::sleep(Duration::from_secs(120)).await;
    }))
    .await;
    let api = BatchApi::anthropic(
        &format!("http://127.0.0.1:{port}/v1"),
        Some(ApiKey::new(KEY)),
        "ANTHROPIC_API_KEY",
    )
    .with_retry(RetryPolicy::none())
    .with_timeouts(Duration::from_secs(1), Duration::from_secs(1));
    let started = Instant::now();
    let e = within(api.progress("msgbatch_1")).await.unwrap_err();
    assert!(e.is_retryable(), "a stalled poll is tried again: {e}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    println!(
        "stalled poll: {e} ({:.2} s)",
        started.elapsed().as_secs_f64()
    );
}

/// The batch exists but the reply to its create is lost (a proxy's 502):
/// the create is not sent again, the batch is found by its tag.
#[tokio::test]
async fn a_create_reply_lost_after_the_batch_exists_is_found_not_paid_twice() {
    let judge = ragaliq_scripted::ScriptedJudge::start().await;
    judge.set_batch_faults(ragaliq_scripted::BatchFaults {
        lost_creates: 1,
        ..Default::default()
    });
    let api = BatchApi::openai(&judge.base_url(), Some(ApiKey::new(KEY)), "OPENAI_API_KEY")
        .with_retry(fast_retries(3));
    let request: JudgeRequest = serde_json::from_value(serde_json::json!({
        "task": "relevance", "template_version": "relevance@1", "model": "scripted",
        "system": "s", "messages": [{"role": "user", "content": "<query>q</query><response>r</response>"}],
        "temperature": 0.0, "max_tokens": 50, "response_format": {"type": "text"}, "sample": 0
    }))
    .unwrap();
    let lines = vec![ragaliq::batch::BatchLine {
        custom_id: "a".repeat(64),
        request,
    }];
    let tag = BatchTag::new("hostile", 1, &["a".repeat(64)]);
    let id = within(api.submit(&lines, &tag, &[])).await.unwrap();
    assert_eq!(judge.batches(), (1, 1), "one batch at the provider: {id}");
    println!(
        "lost create reply: adopted {id}, {} batch at the provider",
        judge.batches().0
    );
}

/// A result file of many megabytes (lines of other requests, ours last):
/// read line by line, in a child process whose peak memory is measured.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_result_file_of_many_megabytes_is_read_in_bounded_memory() {
    let exe = std::env::current_exe().unwrap();
    let output = within(
        tokio::process::Command::new(exe)
            .args([
                "hostile::big_result_file_child",
                "--exact",
                "--ignored",
                "--nocapture",
            ])
            .env("RAGALIQ_HOSTILE_CHILD", "1")
            .output(),
    )
    .await
    .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let peak: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("peak-rss-kib "))
        .and_then(|v| v.trim().parse().ok())
        .expect("the child reports its peak");
    println!("{text}");
    // The file is 96 MiB; read whole (as before) it alone would be more.
    assert!(
        peak < 80 * 1024,
        "peak RSS {peak} KiB over the 80 MiB ceiling"
    );
}

/// The child of the test above: serves a 96 MiB result file and reads it.
#[cfg(target_os = "linux")]
#[tokio::test]
#[ignore = "run in a child process by `a_result_file_of_many_megabytes_is_read_in_bounded_memory`"]
async fn big_result_file_child() {
    if std::env::var_os("RAGALIQ_HOSTILE_CHILD").is_none() {
        return;
    }
    const MIB: usize = 1024 * 1024;
    let ours = "b".repeat(64);
    let (port, _) = serve(handler(move |mut s, _| {
        let ours = ours.clone();
        async move {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: application/x-jsonl\r\ntransfer-encoding: chunked\r\n\r\n";
            let _ = s.write_all(head.as_bytes()).await;
            let other = format!(
                "{{\"custom_id\": \"{}\", \"result\": {{\"type\": \"succeeded\", \"message\": {{\"content\": [{{\"type\": \"text\", \"text\": \"{}\"}}]}}}}}}\n",
                "c".repeat(64),
                "x".repeat(4000)
            );
            let mut block = String::new();
            while block.len() < MIB {
                block.push_str(&other);
            }
            let chunk = format!("{:x}\r\n{block}\r\n", block.len());
            for _ in 0..96 {
                if s.write_all(chunk.as_bytes()).await.is_err() {
                    return;
                }
            }
            let mine = format!(
                "{{\"custom_id\": \"{ours}\", \"result\": {{\"type\": \"succeeded\", \"message\": {{\"content\": [{{\"type\": \"tool_use\", \"input\": {{\"score\": 1}}}}], \"stop_reason\": \"tool_use\"}}}}}}\n"
            );
            let _ = s
                .write_all(format!("{:x}\r\n{mine}\r\n0\r\n\r\n", mine.len()).as_bytes())
                .await;
        }
    }))
    .await;
    let api = BatchApi::anthropic(
        &format!("http://127.0.0.1:{port}/v1"),
        Some(ApiKey::new(KEY)),
        "ANTHROPIC_API_KEY",
    );
    let request: JudgeRequest = serde_json::from_value(serde_json::json!({
        "task": "relevance", "template_version": "relevance@1", "model": "m",
        "system": "s", "messages": [{"role": "user", "content": "u"}],
        "temperature": 0.0, "max_tokens": 50,
        "response_format": {"type": "json_schema", "name": "relevance", "schema": {}}, "sample": 0
    }))
    .unwrap();
    let requests = BTreeMap::from([("b".repeat(64), request)]);
    let progress = BatchProgress {
        id: "msgbatch_big".into(),
        status: "ended".into(),
        ended: true,
        total: 1,
        succeeded: 1,
        failed: 0,
        files: Vec::new(),
        message: None,
    };
    let started = Instant::now();
    let results = api.results(&progress, &requests).await.unwrap();
    assert_eq!(results.len(), 1, "our line is found after 96 MiB of others");
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let peak = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap();
    println!(
        "96 MiB result file read in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    println!("peak-rss-kib {peak}");
}
