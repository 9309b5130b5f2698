//! `bench pipeline N DIR`: the pipeline's loopback endpoint, replaying N
//! recorded calls, against the same client calling a bare loopback server.
//!
//! N chat completions (each a different question to the scripted `app`
//! model, 10 per recording, as a test of a few calls records them) are
//! recorded once through the endpoint, in record mode, into N / 10
//! recordings under DIR. Then they are replayed as tests replay them: for
//! each recording a `Recorder` reads it (replay mode), an endpoint starts,
//! its 10 calls are asked by the run's one reqwest client (a connection
//! kept alive per endpoint), and the endpoint stops. Each call's time is
//! taken at the client, from send to the last byte of the body. The
//! baseline: the same client asking a bare hyper server on 127.0.0.1,
//! started for each recording, that answers every request with the same
//! recorded body, no lookup: HTTP itself on this machine. What the
//! endpoint adds is the difference. Building a reqwest client (some
//! milliseconds: its TLS roots) is timed apart: a test that builds one
//! per case pays it against any server.

use http_body_util::Full;
use hyper::body::Bytes;
use ragaliq::Mode;
use ragaliq::pipeline::{Pipeline, Settings};
use ragaliq::record::{Location, Recorder, Recording};
use ragaliq_scripted::ScriptedJudge;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const PER_RECORDING: usize = 10;

fn body(i: usize) -> serde_json::Value {
    serde_json::json!({
        "model": "app-scripted",
        "messages": [
            {"role": "system", "content": "Answer from the passages only."},
            {"role": "user", "content": format!("Passages:\nOrder {i} ships within {} days of payment.\nReturns of order {i} are accepted for 30 days.\nQuestion: When does order {i} ship?", 1 + i % 9)},
        ],
        "temperature": 0,
        "max_tokens": 64,
    })
}

fn recorder(dir: &Path, r: usize, mode: Mode) -> Arc<Recorder> {
    Arc::new(Recorder::new(
        Location::at(
            dir.join(format!("pipeline_{r:05}.snap")),
            format!("bench::pipeline_{r}"),
            "cargo run --release --example bench -- pipeline",
        ),
        mode,
    ))
}

/// Asks `url` for `body` and reads the whole answer; the time it took.
async fn timed(client: &reqwest::Client, url: &str, body: &serde_json::Value) -> (Duration, usize) {
    let started = Instant::now();
    let response = client.post(url).json(body).send().await.expect("answered");
    let status = response.status();
    if !status.is_success() {
        panic!("{status}: {}", response.text().await.unwrap_or_default());
    }
    let bytes = response.bytes().await.expect("read").len();
    (started.elapsed(), bytes)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A loopback server answering every request with `reply`.
async fn bare(reply: Bytes) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/v1/chat/completions",
        listener.local_addr().unwrap()
    );
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let reply = reply.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let reply = reply.clone();
                        async move {
                            use http_body_util::BodyExt;
                            let _ = req.into_body().collect().await;
                            let mut r = hyper::Response::new(Full::new(reply));
                            r.headers_mut().insert(
                                hyper::header::CONTENT_TYPE,
                                hyper::header::HeaderValue::from_static("application/json"),
                            );
                            Ok::<_, std::convert::Infallible>(r)
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (url, task)
}

pub async fn run(n: usize, dir: &Path) {
    let n = n.max(PER_RECORDING);
    let recordings = n.div_ceil(PER_RECORDING);
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let upstream = ScriptedJudge::start().await;
    let settings = Settings::default().openai(upstream.base_url());

    // Record once.
    let started = Instant::now();
    for r in 0..recordings {
        let rec = recorder(dir, r, Mode::Record);
        let app = Pipeline::start(rec.clone(), settings.clone()).unwrap();
        let client = reqwest::Client::new();
        let url = format!("{}/chat/completions", app.openai_base_url());
        for i in r * PER_RECORDING..((r + 1) * PER_RECORDING).min(n) {
            timed(&client, &url, &body(i)).await;
        }
        drop(app);
        let snap = rec.location().snapshot.clone();
        rec.commit(None, true, |recording: &Recording| {
            let text = format!(
                "---\nsource: examples/bench.rs\n---\n{}",
                recording.to_yaml()
            );
            std::fs::write(&snap, text).unwrap();
        })
        .unwrap();
    }
    let recorded = started.elapsed();
    let asked = upstream.requests();

    // A bare loopback server answering every call with a recorded body.
    let sample_reply = Bytes::from(
        Recording::read(&dir.join("pipeline_00000.snap"))
            .unwrap()
            .unwrap()
            .pipeline[0]
            .response
            .clone()
            .unwrap(),
    );

    // Replay as tests do (a recorder reading the recording and an
    // endpoint, for each recording), each recording's calls then asked of
    // a bare server too: taken in turns, so the machine's load weighs on
    // both alike.
    //
    // One client serves every recording, as a process's shared client
    // would: a new endpoint is a new port, so each recording still opens
    // its own connection. What building a reqwest client costs (a test
    // that builds one per case pays it, against any server) is timed
    // apart, below, so that it is not counted as the endpoint's.
    let mut times = Vec::with_capacity(n);
    let mut base = Vec::with_capacity(n);
    let (mut replayed, mut reading, mut starting, mut bare_total) = (
        Duration::ZERO,
        Duration::ZERO,
        Duration::ZERO,
        Duration::ZERO,
    );
    let client = reqwest::Client::new();
    for r in 0..recordings {
        let started = Instant::now();
        let rec = recorder(dir, r, Mode::Replay);
        reading += started.elapsed();
        let at = Instant::now();
        let app = Pipeline::start(rec, settings.clone()).unwrap();
        let url = format!("{}/chat/completions", app.openai_base_url());
        starting += at.elapsed();
        for i in r * PER_RECORDING..((r + 1) * PER_RECORDING).min(n) {
            let (t, _) = timed(&client, &url, &body(i)).await;
            times.push(t);
        }
        assert!(app.failures().is_empty(), "{:?}", app.failures());
        drop(app);
        replayed += started.elapsed();
        // A bare server of its own for each recording, as the endpoint is:
        // the same one client then opens a connection to each, as it does
        // to each endpoint.
        let (bare_url, task) = bare(sample_reply.clone()).await;
        let started = Instant::now();
        for i in r * PER_RECORDING..((r + 1) * PER_RECORDING).min(n) {
            base.push(timed(&client, &bare_url, &body(i)).await.0);
        }
        bare_total += started.elapsed();
        task.abort();
    }
    let clients = Instant::now();
    for _ in 0..recordings {
        std::hint::black_box(reqwest::Client::new());
    }
    let clients = clients.elapsed();
    assert_eq!(upstream.requests(), asked, "replay asked nothing upstream");

    times.sort();
    base.sort();
    let size: u64 = (0..recordings)
        .map(|r| {
            std::fs::metadata(dir.join(format!("pipeline_{r:05}.snap"))).map_or(0, |m| m.len())
        })
        .sum();
    println!(
        "pipeline: {n} calls in {recordings} recordings ({:.1} MB): recorded in {:.2} s ({asked} upstream requests)",
        size as f64 / 1e6,
        recorded.as_secs_f64()
    );
    println!(
        "  replayed through the endpoint: {:.3} s in all ({:.1} µs a call; of it {:.3} s reading the recordings, {:.3} s starting the endpoints); per call p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms; 0 upstream requests",
        replayed.as_secs_f64(),
        replayed.as_secs_f64() * 1e6 / n as f64,
        reading.as_secs_f64(),
        starting.as_secs_f64(),
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.99)),
        ms(*times.last().unwrap()),
    );
    println!(
        "  bare loopback server (one per recording), same client and calls: {:.3} s in all; per call p50 {:.3} ms, p99 {:.3} ms",
        bare_total.as_secs_f64(),
        ms(percentile(&base, 0.5)),
        ms(percentile(&base, 0.99)),
    );
    println!(
        "  the endpoint adds: p50 {:+.3} ms, p99 {:+.3} ms a call; replay takes {:.2}x the bare server's time",
        ms(percentile(&times, 0.5)) - ms(percentile(&base, 0.5)),
        ms(percentile(&times, 0.99)) - ms(percentile(&base, 0.99)),
        replayed.as_secs_f64() / bare_total.as_secs_f64(),
    );
    println!(
        "  not counted above: building a reqwest client, {:.3} s for {recordings} (a test that builds one per case pays it, against any server)",
        clients.as_secs_f64()
    );
}
