//! `bench pipeline N DIR`: the pipeline's loopback endpoint, replaying N
//! recorded calls, against the same client calling a bare loopback server.
//!
//! N chat completions (each a different question to the scripted `app`
//! model, 10 per recording, as a test of a few calls records them) are
//! recorded once through the endpoint, in record mode, into N / 10
//! recordings under DIR. Then they are replayed as tests replay them: each
//! recording a test of its own, with a tokio runtime of its own as
//! `#[rag_test]` builds one (current-thread by default), in which a
//! `Recorder` reads it (replay mode), an endpoint starts, its 10 calls are
//! asked by the thread's one reqwest client (a connection kept alive per
//! endpoint), and the endpoint stops. Each call's time is taken at the
//! client, from send to the last byte of the body. The baseline: the same
//! client asking a bare hyper server on 127.0.0.1, started on each test's
//! runtime, that answers every request with the same recorded body, no
//! lookup: HTTP itself on this machine. What the endpoint adds is the
//! difference. The tests run one at a time, then on as many threads as
//! `cargo test` would use, then one at a time again with
//! `flavor = "multi_thread"` runtimes (whose test body runs on the test's
//! own thread, so every answer reaches it through a runtime worker: one
//! more hop a call). Building a reqwest client (some milliseconds: its TLS
//! roots) is timed apart: a test that builds one per case pays it against
//! any server.
//!
//! Every endpoint's connections are closed by the endpoint when it stops,
//! so each test leaves a socket in TIME_WAIT for a minute; with tens of
//! thousands of them (runs one after another) binding a port takes longer.
//! BENCHMARKS.md says how many were left from earlier runs when its figures
//! were taken (none, then 917).

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

    // Replayed as tests replay them: each recording a test of its own, on
    // a thread of the test harness, with a runtime of its own as
    // #[rag_test] builds one (current-thread unless the test asks for
    // `flavor = "multi_thread"`). One test at a time first, each
    // recording's calls then asked of a bare server too (on the same
    // runtime, as the endpoint's baseline): taken in turns, so the
    // machine's load weighs on both alike. Then as `cargo test` runs
    // them, on as many threads as it would.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let one = replay_as_tests(
        n,
        dir,
        &settings,
        1,
        Flavor::CurrentThread,
        Some(&sample_reply),
    );
    let parallel = replay_as_tests(n, dir, &settings, threads, Flavor::CurrentThread, None);
    let multi = replay_as_tests(n, dir, &settings, 1, Flavor::MultiThread, None);
    let clients = Instant::now();
    for _ in 0..recordings {
        std::hint::black_box(reqwest::Client::new());
    }
    let clients = clients.elapsed();
    assert_eq!(upstream.requests(), asked, "replay asked nothing upstream");

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
        "  replayed one test at a time (a current-thread runtime each, as #[rag_test] builds): {:.3} s in all ({:.1} µs a call; of it {:.3} s reading the recordings, {:.3} s starting the endpoints); per call p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms; 0 upstream requests",
        one.wall.as_secs_f64(),
        one.wall.as_secs_f64() * 1e6 / n as f64,
        one.reading.as_secs_f64(),
        one.starting.as_secs_f64(),
        ms(percentile(&one.times, 0.5)),
        ms(percentile(&one.times, 0.99)),
        ms(*one.times.last().unwrap()),
    );
    println!(
        "  bare loopback server (one per test, on its runtime), same client and calls: {:.3} s in all; per call p50 {:.3} ms, p99 {:.3} ms",
        one.bare_total.as_secs_f64(),
        ms(percentile(&one.bare, 0.5)),
        ms(percentile(&one.bare, 0.99)),
    );
    println!(
        "  the endpoint adds: p50 {:+.3} ms, p99 {:+.3} ms a call; replay takes {:.2}x the bare server's time",
        ms(percentile(&one.times, 0.5)) - ms(percentile(&one.bare, 0.5)),
        ms(percentile(&one.times, 0.99)) - ms(percentile(&one.bare, 0.99)),
        one.wall.as_secs_f64() / one.bare_total.as_secs_f64(),
    );
    println!(
        "  as `cargo test` runs them ({threads} threads, its default here): {:.3} s in all; per call p50 {:.3} ms, p99 {:.3} ms",
        parallel.wall.as_secs_f64(),
        ms(percentile(&parallel.times, 0.5)),
        ms(percentile(&parallel.times, 0.99)),
    );
    println!(
        "  one at a time, tests with flavor = \"multi_thread\" (the body on the test's thread, outside the runtime's workers): {:.3} s in all; per call p50 {:.3} ms, p99 {:.3} ms",
        multi.wall.as_secs_f64(),
        ms(percentile(&multi.times, 0.5)),
        ms(percentile(&multi.times, 0.99)),
    );
    println!(
        "  not counted above: building a reqwest client, {:.3} s for {recordings} (a test that builds one per case pays it, against any server)",
        clients.as_secs_f64()
    );
}

#[derive(Clone, Copy)]
enum Flavor {
    CurrentThread,
    MultiThread,
}

/// What replaying the recordings as tests took.
#[derive(Default)]
struct Replayed {
    /// From the first test's start to the last one's end.
    wall: Duration,
    /// Summed over the tests: making each recorder (reading its file).
    reading: Duration,
    /// Summed over the tests: starting each endpoint.
    starting: Duration,
    /// Each call's time, sorted.
    times: Vec<Duration>,
    /// Each call's time against the bare server, sorted (when asked).
    bare: Vec<Duration>,
    /// Summed over the tests: the calls against the bare server.
    bare_total: Duration,
}

/// Replays the `n` calls' recordings under `dir`, each as a test of its
/// own: a runtime of `flavor` built for it, a recorder reading it, an
/// endpoint, its calls asked by the thread's one client (a process's
/// shared client: a new endpoint is a new port, so each test still opens
/// its own connection), the endpoint stopped. `threads` take the tests in
/// turn, as the test harness's do. With `bare`, each test's calls are then
/// asked of a bare server answering `bare`, on the test's runtime, and
/// timed apart (not in `wall`).
fn replay_as_tests(
    n: usize,
    dir: &Path,
    settings: &Settings,
    threads: usize,
    flavor: Flavor,
    bare_reply: Option<&Bytes>,
) -> Replayed {
    let recordings = n.div_ceil(PER_RECORDING);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let all = std::sync::Mutex::new(Replayed::default());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut own = Replayed::default();
                let mut client: Option<reqwest::Client> = None;
                loop {
                    let r = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if r >= recordings {
                        break;
                    }
                    let calls = r * PER_RECORDING..((r + 1) * PER_RECORDING).min(n);
                    let test_started = Instant::now();
                    let runtime = match flavor {
                        Flavor::CurrentThread => tokio::runtime::Builder::new_current_thread(),
                        Flavor::MultiThread => tokio::runtime::Builder::new_multi_thread(),
                    }
                    .enable_all()
                    .build()
                    .unwrap();
                    runtime.block_on(async {
                        let at = Instant::now();
                        let rec = recorder(dir, r, Mode::Replay);
                        own.reading += at.elapsed();
                        let at = Instant::now();
                        let app = Pipeline::start(rec, settings.clone()).unwrap();
                        let url = format!("{}/chat/completions", app.openai_base_url());
                        own.starting += at.elapsed();
                        // Built once the endpoint has installed the TLS
                        // provider the workspace's reqwest build needs.
                        let client = client.get_or_insert_with(reqwest::Client::new);
                        for i in calls.clone() {
                            own.times.push(timed(client, &url, &body(i)).await.0);
                        }
                        assert!(app.failures().is_empty(), "{:?}", app.failures());
                    });
                    drop(runtime);
                    if threads == 1 {
                        own.wall += test_started.elapsed();
                    }
                    if let Some(reply) = bare_reply {
                        let runtime = tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()
                            .unwrap();
                        let client = client.as_ref().unwrap();
                        runtime.block_on(async {
                            let (bare_url, task) = bare(reply.clone()).await;
                            let at = Instant::now();
                            for i in calls {
                                own.bare.push(timed(client, &bare_url, &body(i)).await.0);
                            }
                            own.bare_total += at.elapsed();
                            task.abort();
                        });
                    }
                }
                let mut all = all.lock().unwrap();
                all.reading += own.reading;
                all.starting += own.starting;
                all.times.append(&mut own.times);
                all.bare.append(&mut own.bare);
                all.bare_total += own.bare_total;
                all.wall += own.wall;
            });
        }
    });
    let mut all = all.into_inner().unwrap();
    if threads > 1 {
        all.wall = started.elapsed();
    }
    all.times.sort();
    all.bare.sort();
    all
}
