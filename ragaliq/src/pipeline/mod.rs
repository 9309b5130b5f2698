//! The pipeline under test, recorded too: a loopback endpoint that speaks
//! the model providers' wire formats, so the application's own model calls
//! (its answer, its embeddings) are recorded in the test's recording beside
//! the judge's verdicts on that answer, and replayed in CI with no key and
//! no network.
//!
//! A test hands the endpoint's URL to whatever client its pipeline uses
//! (async-openai, an Anthropic SDK, a hand-written reqwest call: anything
//! that takes a base URL), and changes nothing else:
//!
//! ```no_run
//! use ragaliq::prelude::*;
//!
//! # mod my_rag { pub async fn answer(_: &str, _: &str) -> (Vec<String>, String) { unimplemented!() } }
//! #[rag_test]
//! async fn refund_window(judge: Judge) {
//!     let app = judge.pipeline();          // the endpoint, bound to this test's recording
//!     let question = "What is the refund window?";
//!     let (passages, answer) = my_rag::answer(&app.openai_base_url(), question).await;
//!     let case = RagCase::new(question).context(passages).response(answer);
//!     assert_faithful!(judge, case);
//! }
//! ```
//!
//! It answers `POST /v1/chat/completions`, `/v1/completions`,
//! `/v1/embeddings`, `GET /v1/models` (OpenAI-compatible) and
//! `POST /v1/messages` (Anthropic), streamed (server-sent events) or not,
//! by the test's mode, as the judge is:
//!
//! | mode | a call the recording holds | a call it does not |
//! | --- | --- | --- |
//! | `replay` (CI) | answered from it: the same body, or the same streamed events | refused (404), and the test fails saying what changed against the closest recorded call and the command that records it again |
//! | `auto` | answered from it | forwarded, and recorded |
//! | `record` | forwarded, and recorded afresh | forwarded, and recorded |
//! | `live` | forwarded, not recorded | forwarded, not recorded |
//!
//! Forwarded calls go to the configured upstream only (`[pipeline]`
//! `openai_base_url` and `anthropic_base_url`, OpenAI's and Anthropic's
//! APIs by default), with the application's own `Authorization` or
//! `x-api-key` header, which is written nowhere; redirects to another
//! origin are not followed. A call is bounded by `[pipeline] timeout_secs`
//! (a streamed answer also by `idle_timeout_secs` between bytes); an
//! upstream that fails, answers garbage or hangs gets the application a
//! 502 or 504 in its provider's error format, and fails the test with what
//! happened. An upstream's own error status (a 429, a 401) is handed to
//! the application as it came, and not recorded.
//!
//! The same request asked twice in a test is recorded twice and replayed in
//! order. Each call is kept in the recording's `pipeline:` section, above
//! the judge's exchanges: the model, the messages and parameters, the
//! answer's text, the response (or the streamed events), the tokens (see
//! [`Call`](crate::record::Call)).

mod api;
mod changed;
mod server;

pub use crate::core::pipeline::{
    ANTHROPIC_UPSTREAM, Answered, Input, OPENAI_UPSTREAM, Settings, Turn,
};

use crate::client::Client;
use crate::core::sync::lock;
use crate::core::{Price, Usage, price_for};
use crate::record::Recorder;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;

/// The loopback endpoint of one test (or one suite case): its URLs for the
/// pipeline's client, and what it served. Cheap to clone: clones share the
/// server, which stops when the last clone is dropped.
///
/// Get one from the judge `#[rag_test]` hands in
/// ([`Judge::pipeline`](crate::Judge::pipeline)), from a suite's
/// [`pipeline`](crate::harness::Suite::pipeline) function, or, in a harness
/// of one's own, with [`Pipeline::start`].
#[derive(Clone)]
pub struct Pipeline {
    state: Arc<State>,
    server: Arc<Server>,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("url", &self.url())
            .field("mode", &self.state.recorder.mode())
            .field("settings", &self.state.settings)
            .finish_non_exhaustive()
    }
}

/// What the endpoint serves from: the recorder, where it forwards, its
/// limits and what it counted. Shared by the server's connections.
pub(crate) struct State {
    recorder: Arc<Recorder>,
    trial: Option<String>,
    settings: Settings,
    prices: BTreeMap<String, Price>,
    /// The judge's client, when its limits cover the pipeline too.
    shared: Option<Arc<Client>>,
    /// This process's limit on forwarded calls in flight.
    own: Arc<Semaphore>,
    /// How often each request was asked so far, by fingerprint.
    askings: Mutex<HashMap<String, u32>>,
    counts: Mutex<Counts>,
    /// What failed the test: a call the recording does not hold in replay,
    /// an upstream that failed, answered garbage or hung.
    failures: Mutex<Vec<String>>,
    /// Whether a failure was the recording's: it could not serve a call.
    unrecorded: std::sync::atomic::AtomicBool,
    /// What the application was told that it may well have handled (an
    /// upstream's own error status), shown when the test fails.
    notes: Mutex<Vec<String>>,
}

/// What the endpoint served.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    usage: Usage,
    cost_usd: f64,
    /// Live calls to a model with no known price.
    unpriced: u64,
}

/// Stops the server when dropped.
struct Server {
    addr: SocketAddr,
    task: tokio::task::AbortHandle,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Why the endpoint could not start.
#[derive(Clone, Debug, thiserror::Error)]
#[error("the pipeline's loopback endpoint cannot start: {0}")]
pub struct StartError(String);

impl Pipeline {
    /// Starts an endpoint on an ephemeral port of 127.0.0.1, serving the
    /// pipeline's calls through `recorder` in its mode (for harnesses of
    /// one's own; `#[rag_test]` and suites start theirs). Calls go to
    /// `settings`' upstreams when the mode asks for them.
    ///
    /// ```
    /// use ragaliq::Mode;
    /// use ragaliq::pipeline::{Pipeline, Settings};
    /// use ragaliq::record::{Location, Recorder};
    /// use std::sync::Arc;
    /// let at = Location::at(std::env::temp_dir().join("ragaliq-doc-pipeline.snap"), "doc", "cargo test");
    /// let recorder = Arc::new(Recorder::new(at, Mode::Replay));
    /// let app = Pipeline::start(recorder, Settings::default()).unwrap();
    /// assert!(app.openai_base_url().starts_with("http://127.0.0.1:"));
    /// assert!(app.openai_base_url().ends_with("/v1"));
    /// assert_eq!(app.usage().calls, 0);
    /// ```
    ///
    /// # Errors
    ///
    /// No loopback port can be bound, or no runtime started for the server.
    pub fn start(recorder: Arc<Recorder>, settings: Settings) -> Result<Pipeline, StartError> {
        Pipeline::starting(recorder, None, settings, BTreeMap::new(), None)
    }

    /// [`start`](Self::start) for a judge: its calls kept under `trial`
    /// (a suite's), priced by `prices`, under the judge's limits when
    /// `shared` is given.
    pub(crate) fn starting(
        recorder: Arc<Recorder>,
        trial: Option<String>,
        settings: Settings,
        prices: BTreeMap<String, Price>,
        shared: Option<Arc<Client>>,
    ) -> Result<Pipeline, StartError> {
        // The pipeline's own client is usually built right after this: in
        // a build whose reqwest has no TLS provider of its own (ragaliq's
        // `rustls-no-provider`, unified into it), building it would panic
        // without one.
        crate::transport::install_provider();
        let state = Arc::new(State {
            recorder,
            trial,
            own: own_limit(settings.concurrency),
            shared: shared.filter(|_| settings.shared_limits),
            settings,
            prices,
            askings: Mutex::default(),
            counts: Mutex::default(),
            failures: Mutex::default(),
            unrecorded: std::sync::atomic::AtomicBool::new(false),
            notes: Mutex::default(),
        });
        let (addr, task) = server::start(state.clone()).map_err(StartError)?;
        Ok(Pipeline {
            state,
            server: Arc::new(Server { addr, task }),
        })
    }

    /// The endpoint's root, `http://127.0.0.1:PORT`.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}", self.server.addr)
    }

    /// The base URL an OpenAI client takes, `http://127.0.0.1:PORT/v1`
    /// (async-openai's `with_api_base`, the `base_url` of most SDKs).
    #[must_use]
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// The base URL an Anthropic client takes, `http://127.0.0.1:PORT`
    /// (Anthropic's SDKs add `/v1/messages` themselves).
    #[must_use]
    pub fn anthropic_base_url(&self) -> String {
        self.url()
    }

    /// The pipeline's calls so far: `calls` forwarded to its model (live),
    /// `replayed` answered from the recording, and their tokens (a
    /// replayed call's under `replayed_tokens`).
    #[must_use]
    pub fn usage(&self) -> Usage {
        lock(&self.state.counts).usage
    }

    /// The estimated cost of the live calls, in dollars, from each
    /// model's price (`[cost.prices]`, or the built-in table); `None` when
    /// a live call's model has no price.
    #[must_use]
    pub fn cost(&self) -> Option<f64> {
        let counts = *lock(&self.state.counts);
        (counts.unpriced == 0).then_some(counts.cost_usd)
    }

    /// What failed so far: each a message naming the call and what to do
    /// (a call the recording does not hold, an upstream that failed,
    /// answered garbage or hung). `#[rag_test]` and suites fail the test
    /// with them, whatever the application made of the error it got.
    #[must_use]
    pub fn failures(&self) -> Vec<String> {
        lock(&self.state.failures).clone()
    }

    /// Upstream error statuses handed to the application as they came (a
    /// 429, a 401): the application may have handled them; a failing test
    /// shows them.
    #[must_use]
    pub fn notes(&self) -> Vec<String> {
        lock(&self.state.notes).clone()
    }

    /// `Err` with every failure's message when something failed.
    ///
    /// # Errors
    ///
    /// [`failures`](Self::failures) is not empty.
    pub fn check(&self) -> Result<(), String> {
        let failures = self.failures();
        if failures.is_empty() {
            Ok(())
        } else {
            Err(failures.join("\n\n"))
        }
    }

    /// Whether a failure was the recording's (it could not serve a call,
    /// in replay): a setup problem, counted with the recording errors.
    #[must_use]
    pub fn unrecorded(&self) -> bool {
        self.state
            .unrecorded
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The recorder the endpoint serves through.
    #[must_use]
    pub fn recorder(&self) -> &Arc<Recorder> {
        &self.state.recorder
    }
}

/// The process's limit on forwarded calls in flight, one per configured
/// size (the settings of every test of a process are usually one).
fn own_limit(concurrency: usize) -> Arc<Semaphore> {
    static LIMITS: std::sync::OnceLock<Mutex<HashMap<usize, Arc<Semaphore>>>> =
        std::sync::OnceLock::new();
    let n = concurrency.clamp(1, Semaphore::MAX_PERMITS);
    lock(LIMITS.get_or_init(Mutex::default))
        .entry(n)
        .or_insert_with(|| Arc::new(Semaphore::new(n)))
        .clone()
}

impl State {
    /// Counts a call answered from the recording.
    fn replayed(&self, input: u64, output: u64) {
        let mut c = lock(&self.counts);
        c.usage.replayed = c.usage.replayed.saturating_add(1);
        c.usage.replayed_tokens = c
            .usage
            .replayed_tokens
            .saturating_add(input.saturating_add(output));
    }

    /// Counts a live call of `model`; returns its cost, when priced.
    fn spent(&self, model: &str, input: u64, output: u64) -> Option<f64> {
        let spent = Usage {
            calls: 1,
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        };
        let price = price_for(model, &self.prices);
        let mut c = lock(&self.counts);
        c.usage += spent;
        match price {
            Some(p) => {
                let usd = p.cost(&spent);
                c.cost_usd += usd;
                Some(usd)
            }
            None => {
                c.unpriced += 1;
                None
            }
        }
    }

    fn fail(&self, message: String) {
        lock(&self.failures).push(message);
    }

    /// A failure of the recording: it could not serve a call.
    fn fail_unrecorded(&self, message: String) {
        self.unrecorded
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.fail(message);
    }

    fn note(&self, message: String) {
        lock(&self.notes).push(message);
    }

    /// The next asking of the request `fingerprint` (1 for the first).
    fn asking(&self, fingerprint: &str) -> u32 {
        let mut askings = lock(&self.askings);
        let n = askings.entry(fingerprint.to_owned()).or_insert(0);
        *n += 1;
        *n
    }
}
