//! Faults at the transport: servers on 127.0.0.1 that close connections
//! without answering, cut bodies short, stall mid-body or never answer, and
//! a server that fails one request in five under load. Each test states the
//! exact number of attempts, a bound on the time taken and the error named;
//! each runs under a hard timeout, so none can hang.

use crate::common;

use common::{fast_retries, read_request};
use ragaliq::Strategy;
use ragaliq::judge::{Judge, OpenAiTransport};
use ragaliq::{Error, RagCase, TransportError, TransportErrorKind};
use ragaliq_scripted::ScriptedJudge;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

const HARD_LIMIT: Duration = Duration::from_secs(20);

#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Reads the request, then closes the connection without a word.
    Close,
    /// Promises 500 bytes of body, sends 11, closes.
    Truncate,
    /// Sends the headers and part of the body, then goes quiet.
    Stall,
    /// Reads the request and never answers.
    Silent,
}

/// A loopback server with one misbehaviour; counts the requests it read.
async fn faulty(fault: Fault) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let count = count.clone();
            tokio::spawn(async move { serve(stream, fault, &count).await });
        }
    });
    (url, seen)
}

async fn serve(mut stream: TcpStream, fault: Fault, seen: &AtomicUsize) {
    if read_request(&mut stream).await.is_none() {
        return;
    }
    seen.fetch_add(1, Ordering::SeqCst);
    let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n";
    match fault {
        Fault::Close => {}
        Fault::Truncate => {
            let _ = stream
                .write_all(format!("{head}{{\"choices\"").as_bytes())
                .await;
        }
        Fault::Stall => {
            let _ = stream.write_all(format!("{head}{{\"cho").as_bytes()).await;
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
        Fault::Silent => tokio::time::sleep(Duration::from_secs(60)).await,
    }
}

fn case() -> RagCase {
    RagCase::new("What is the refund window?").response("30 days.")
}

async fn relevance_against(url: &str, retries: u32) -> (TransportError, Duration) {
    let judge = Judge::builder(OpenAiTransport::new(url))
        .with_strategy(Strategy::Json)
        .with_timeout(Duration::from_millis(300))
        // One attempt's bound is the timeout plus half a second per token
        // of the reply's limit: 0.3 s + 0.5 s.
        .with_max_tokens(1)
        .with_retry(fast_retries(retries))
        .build()
        .unwrap();
    let start = Instant::now();
    let result = tokio::time::timeout(HARD_LIMIT, judge.relevance(&case()))
        .await
        .expect("the call ended within the hard limit");
    match result.unwrap_err() {
        Error::Transport(e) => {
            // Shown with --nocapture: the observations quoted in issue notes.
            eprintln!(
                "fault at {url}: {} attempts in {:?}: {e}",
                e.attempts,
                start.elapsed()
            );
            (e, start.elapsed())
        }
        other => panic!("expected a transport error, got {other}"),
    }
}

#[tokio::test]
async fn connection_closed_without_an_answer() {
    let (url, seen) = faulty(Fault::Close).await;
    let (e, took) = relevance_against(&url, 2).await;
    assert!(matches!(e.kind, TransportErrorKind::Connect { .. }), "{e}");
    assert_eq!((e.attempts, seen.load(Ordering::SeqCst)), (3, 3));
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(
        e.to_string()
            .starts_with("could not reach the judge server"),
        "{e}"
    );
}

#[tokio::test]
async fn truncated_body() {
    let (url, seen) = faulty(Fault::Truncate).await;
    let (e, took) = relevance_against(&url, 2).await;
    assert!(matches!(e.kind, TransportErrorKind::Body { .. }), "{e}");
    assert_eq!((e.attempts, seen.load(Ordering::SeqCst)), (3, 3));
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(
        e.to_string().starts_with(&format!(
            "the judge server's response at {} broke off",
            url.trim_end_matches("/v1")
        )),
        "{e}"
    );
}

#[tokio::test]
async fn body_that_stalls_midway_times_out() {
    let (url, seen) = faulty(Fault::Stall).await;
    let (e, took) = relevance_against(&url, 1).await;
    assert_eq!(
        e.kind,
        TransportErrorKind::Timeout {
            after: Duration::from_millis(800)
        }
    );
    assert_eq!((e.attempts, seen.load(Ordering::SeqCst)), (2, 2));
    // Two attempts of 800 ms each, plus a short backoff.
    assert!(
        took >= Duration::from_millis(1600) && took < Duration::from_secs(4),
        "{took:?}"
    );
}

#[tokio::test]
async fn server_that_never_answers_times_out() {
    let (url, seen) = faulty(Fault::Silent).await;
    // Up to 2 retries are allowed, but a call that timed out is tried once
    // more at most: a server too slow once is likely too slow again.
    let (e, took) = relevance_against(&url, 2).await;
    assert_eq!(
        e.kind,
        TransportErrorKind::Timeout {
            after: Duration::from_millis(800)
        }
    );
    assert_eq!((e.attempts, seen.load(Ordering::SeqCst)), (2, 2));
    assert!(
        took >= Duration::from_millis(1600) && took < Duration::from_secs(4),
        "{took:?}"
    );
    assert_eq!(
        e.to_string(),
        format!(
            "the judge call at {} timed out after 0.8s (judge.timeout_secs or RAGALIQ_TIMEOUT_SECS, plus half a second per token of the reply's limit) (gave up after 2 attempts in {:.1}s)",
            url.trim_end_matches("/v1"),
            e.elapsed.as_secs_f64()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_evaluations_against_a_server_failing_one_in_five() {
    let server = ScriptedJudge::start().await;
    server.set_fail_every(5);
    server.set_latency(Duration::from_millis(5));
    let judge = Judge::builder(OpenAiTransport::new(&server.base_url()))
        .with_strategy(Strategy::Json)
        .with_concurrency(8)
        .with_retry(fast_retries(0))
        .build()
        .unwrap();
    let cases: Vec<RagCase> = (0..200)
        .map(|i| {
            RagCase::new(format!("What is refund rule {i}?"))
                .response(format!("Refund rule {i} is 30 days."))
        })
        .collect();
    let results = tokio::time::timeout(
        HARD_LIMIT,
        futures_util::future::join_all(cases.iter().map(|c| judge.relevance(c))),
    )
    .await
    .expect("every evaluation ends");
    let failed: Vec<&Error> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(results.len(), 200);
    assert_eq!(server.requests(), 200);
    // Every fifth request failed, and each failure is its own evaluation's error.
    assert_eq!(failed.len(), 40);
    let at = server.base_url().trim_end_matches("/v1").to_owned();
    assert!(failed.iter().all(|e| {
        e.to_string().starts_with(&format!(
            "the judge server at {at} answered HTTP 500: scripted failure of request"
        ))
    }));
    assert!(
        results
            .iter()
            .flatten()
            .all(|e| (0.0..=1.0).contains(&e.score))
    );
    assert!(
        server.max_in_flight() <= 8,
        "limit exceeded: {}",
        server.max_in_flight()
    );

    // With retries, the same storm loses nothing. Each attempt lands on a
    // failing slot (every 5th arrival) with a chance near 1 in 5, whatever
    // the order, so 3 retries would lose one of the 200 in about a quarter
    // of runs (0.2^4 × 200 ≈ 0.3); 8 retries make that about 1 in 10,000.
    let retrying = Judge::builder(OpenAiTransport::new(&server.base_url()))
        .with_strategy(Strategy::Json)
        .with_concurrency(8)
        .with_retry(fast_retries(8))
        .build()
        .unwrap();
    let results = tokio::time::timeout(
        HARD_LIMIT,
        futures_util::future::join_all(cases.iter().map(|c| retrying.relevance(c))),
    )
    .await
    .expect("every evaluation ends");
    let lost: Vec<String> = results
        .iter()
        .filter_map(|r| r.as_ref().err().map(ToString::to_string))
        .collect();
    assert!(lost.is_empty(), "{} lost: {:?}", lost.len(), lost.first());
    assert!(server.max_in_flight() <= 8);
}
