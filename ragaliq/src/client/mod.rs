//! The judge *client*: what a test process shares between every test and
//! trial that use the same configuration.
//!
//! One transport (and so one HTTP client), one concurrency limit, one memo of
//! live answers, one usage ledger, one negotiated JSON mode, and the run's
//! budget. `#[rag_test]`s and suite trials each get their own
//! [`Judge`](super::Judge) session over it, with their own recording: under
//! `cargo test`, eight tests running at once with `concurrency = 8` have 8
//! requests in flight, not 64, and an answer one test paid for is not paid
//! for again by another.
//!
//! Live calls run on one background runtime of the process, not on the
//! caller's: every `#[rag_test]` has a tokio runtime of its own, and a
//! pooled connection opened on a test's runtime dies with it, so sharing one
//! HTTP client across tests needs one runtime that outlives them. A caller
//! that stops waiting (a test that panics) cancels its call.

mod budget;
mod negotiation;
mod pacing;

pub(crate) use budget::Budget;
pub use negotiation::Refusal;
pub(crate) use negotiation::refuses_probabilities;
pub(crate) use pacing::Rates;

use crate::core::sync::lock;
use crate::core::{Fingerprint, JsonMode, JudgeRequest, JudgeResponse, Price, StopReason, Usage};
use crate::error::Error;
use crate::run::{BatchFolder, QueuedRequest};
use crate::transport::{RetryPolicy, Transport, TransportError, TransportErrorKind};
use negotiation::Negotiation;
use pacing::Pacer;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::sync::{OnceCell, Semaphore};

/// What one configuration shares within a process.
pub(crate) struct Client {
    pub(crate) transport: Arc<dyn Transport>,
    pub(crate) concurrency: usize,
    /// The run's in-flight limit (adapting to overloads) and pace.
    pacer: Pacer,
    /// Set once the server stopped a streamed reply for another request:
    /// from then on calls also wait for `one`, so one runs at a time.
    serial: AtomicBool,
    one: Semaphore,
    pub(crate) timeout: Duration,
    pub(crate) retry: RetryPolicy,
    memo: Mutex<HashMap<Fingerprint, Arc<OnceCell<JudgeResponse>>>>,
    usage: Mutex<Usage>,
    skipped: AtomicU64,
    pub(crate) price: Option<Price>,
    pub(crate) budget: Option<Arc<Budget>>,
    pub(crate) formats: Negotiation,
    /// Collect mode: unrecorded questions are answered from (or queued
    /// in) this batch folder instead of being asked.
    collect: Option<BatchFolder>,
    /// Set once a server answered a request for token probabilities
    /// without them: yes/no answers are read from the word written.
    pub(crate) no_probabilities: AtomicBool,
    /// Set once a server refused a request for token probabilities (a
    /// 4xx naming them): they are not asked for again.
    pub(crate) probabilities_refused: AtomicBool,
}

/// A live call that did not give a usable answer.
pub(crate) enum CallError {
    /// The reply hit its token limit (it was paid for, but is not memoized).
    Truncated(JudgeResponse),
    /// The server refused the response format: ask again in a weaker one.
    FormatRefused(TransportError),
    /// Anything else.
    Failed(Error),
}

/// How a client calls: its limits, retries, price and budget.
pub(crate) struct Settings {
    pub concurrency: usize,
    pub rates: Rates,
    pub timeout: Duration,
    pub retry: RetryPolicy,
    pub price: Option<Price>,
    pub budget: Option<Budget>,
    pub json_mode: JsonMode,
    /// Names the run's concurrency limit: one per server and model.
    pub run_key: String,
    /// Collect mode's batch folder (`RAGALIQ_COLLECT`).
    pub collect: Option<std::path::PathBuf>,
}

impl Client {
    pub(crate) fn new(transport: Arc<dyn Transport>, s: Settings) -> Client {
        Client {
            transport,
            concurrency: s.concurrency,
            pacer: Pacer::for_run(&s.run_key, s.concurrency, s.rates, s.retry.total_budget),
            serial: AtomicBool::new(false),
            one: Semaphore::new(1),
            timeout: s.timeout,
            retry: s.retry,
            memo: Mutex::new(HashMap::new()),
            usage: Mutex::new(Usage::default()),
            skipped: AtomicU64::new(0),
            price: s.price,
            budget: s.budget.map(Arc::new),
            formats: Negotiation::new(s.json_mode, s.json_mode),
            collect: s.collect.map(BatchFolder::new),
            no_probabilities: AtomicBool::new(false),
            probabilities_refused: AtomicBool::new(false),
        }
    }

    /// Where calls go, as messages show it.
    pub(crate) fn endpoint(&self) -> Option<String> {
        self.transport.endpoint()
    }

    pub(crate) fn refusals(&self) -> Vec<Refusal> {
        self.formats.refusals()
    }

    /// Whether calls go one at a time because the server stopped a streamed
    /// reply for another request.
    pub(crate) fn serial(&self) -> bool {
        self.serial.load(Ordering::SeqCst)
    }

    /// The answer to `request`: the memo's when the same request was
    /// answered live before in this process (concurrent identical requests
    /// wait for one call), else a live call. `charge` is told what a live
    /// call cost; the flag says whether this request made it. `word`: the
    /// answer is read at the reply's start (a word, or a word then a
    /// reason), so a reply that stops at its token limit is whole.
    pub(crate) async fn answer(
        self: &Arc<Self>,
        fingerprint: Fingerprint,
        request: &JudgeRequest,
        word: bool,
        charge: &(dyn Fn(Usage) + Send + Sync),
    ) -> Result<(JudgeResponse, bool), CallError> {
        let cell = lock(&self.memo).entry(fingerprint).or_default().clone();
        let made_call = AtomicBool::new(false);
        let truncated: Mutex<Option<JudgeResponse>> = Mutex::new(None);
        let result = cell
            .get_or_try_init(|| async {
                made_call.store(true, Ordering::SeqCst);
                let response = match &self.collect {
                    Some(folder) => self.collected(folder, fingerprint, request).await?,
                    None => self.call(request).await?,
                };
                let spent = Usage {
                    calls: 1,
                    input_tokens: response.input_tokens,
                    output_tokens: response.output_tokens,
                    ..Usage::default()
                };
                *lock(&self.usage) += spent;
                charge(spent);
                if response.stop == StopReason::MaxTokens && !word {
                    *lock(&truncated) = Some(response);
                    // Not memoized: a cut-off reply is an error, and a later
                    // request (with a larger limit) must ask again.
                    return Err(Error::Transport(TransportError::other("truncated")));
                }
                Ok::<_, Error>(response)
            })
            .await;
        match result {
            Ok(response) => Ok((response.clone(), made_call.load(Ordering::SeqCst))),
            Err(e) => match (lock(&truncated).take(), e) {
                (Some(response), _) => Err(CallError::Truncated(response)),
                (None, Error::Transport(e))
                    if matches!(e.kind, TransportErrorKind::FormatRefused { .. }) =>
                {
                    Err(CallError::FormatRefused(e))
                }
                (None, e) => Err(CallError::Failed(e)),
            },
        }
    }

    /// Collect mode: the batch's answer to `request`, or
    /// [`Error::Queued`] once it is queued. Neither the budget nor the
    /// pace applies: the round driver spent both when it submitted the
    /// batch.
    async fn collected(
        &self,
        folder: &BatchFolder,
        fingerprint: Fingerprint,
        request: &JudgeRequest,
    ) -> Result<JudgeResponse, Error> {
        let folder = folder.clone();
        let question = QueuedRequest {
            provider: self.transport.provider().to_owned(),
            request: request.clone(),
        };
        off_runtime(move || {
            let unusable = |e: std::io::Error| Error::RunState {
                problem: format!(
                    "the batch folder {} cannot be used: {e}",
                    folder.dir().display()
                ),
            };
            if let Some(answer) = folder.answer(&fingerprint).map_err(unusable)? {
                return Ok(answer);
            }
            folder.queue(&fingerprint, &question).map_err(unusable)?;
            Err(Error::Queued {
                task: question.request.task,
                folder: folder.dir().to_owned(),
            })
        })
        .await
    }

    /// One live call, on the background runtime.
    async fn call(self: &Arc<Self>, request: &JudgeRequest) -> Result<JudgeResponse, Error> {
        let Some(runtime) = background() else {
            return self.call_here(request).await;
        };
        let client = self.clone();
        let request = request.clone();
        let mut task = AbortOnDrop(runtime.spawn(async move { client.call_here(&request).await }));
        match (&mut task.0).await {
            Ok(result) => result,
            Err(e) => Err(Error::Transport(TransportError::other(format!(
                "the judge call stopped: {e}"
            )))),
        }
    }

    /// One live call: the budget, the concurrency limit, retries and the
    /// per-attempt timeout around the transport.
    async fn call_here(&self, request: &JudgeRequest) -> Result<JudgeResponse, Error> {
        let refused: Mutex<Option<Error>> = Mutex::new(None);
        let first = AtomicBool::new(true);
        let closed = || TransportError::other("the judge's concurrency limit was closed");
        let result = self
            .retry
            .run(|| async {
                // The run's limit, across its processes (each request in
                // flight holds one of its slots), and its pace.
                let _permit = match self.pacer.enter(request).await {
                    Ok(permit) => permit,
                    Err(pacing::Refused::Paused(e)) => return Err(e),
                    Err(pacing::Refused::Slots(e)) => {
                        *lock(&refused) = Some(Error::RunState {
                            problem: format!(
                                "the run's concurrency limit cannot be kept: its slot files cannot be locked ({e})"
                            ),
                        });
                        return Err(TransportError::other("slots"));
                    }
                };
                let _alone = if self.serial.load(Ordering::SeqCst) {
                    Some(self.one.acquire().await.map_err(|_| closed())?)
                } else {
                    None
                };
                // Checked once the call holds its place under the limit, so
                // at most the limit's worth of calls are in flight past it.
                if first.swap(false, Ordering::SeqCst)
                    && let Some(budget) = &self.budget
                {
                    let budget = budget.clone();
                    if let Err(e) = off_runtime(move || budget.check()).await {
                        if e.is_budget() {
                            self.skipped.fetch_add(1, Ordering::SeqCst);
                        }
                        *lock(&refused) = Some(e);
                        return Err(TransportError::other("budget"));
                    }
                }
                let bound = self.attempt_bound(request);
                let result = match tokio::time::timeout(bound, self.transport.complete(request))
                    .await
                {
                    Ok(result) => result,
                    Err(_) => Err(TransportError::new(TransportErrorKind::Timeout {
                        after: bound,
                    })),
                };
                if let Err(e) = &result
                    && matches!(e.kind, TransportErrorKind::Interrupted { .. })
                {
                    self.serial.store(true, Ordering::SeqCst);
                }
                match &result {
                    Ok(response) => self.pacer.succeeded(response.rate).await,
                    Err(e) => self.pacer.failed(e).await,
                }
                // Booked before the call gives up its place under the limit:
                // the next call's check must see it.
                if let (Ok(response), Some(budget)) = (&result, &self.budget) {
                    let spent = Usage {
                        calls: 1,
                        input_tokens: response.input_tokens,
                        output_tokens: response.output_tokens,
                        ..Usage::default()
                    };
                    let budget = budget.clone();
                    off_runtime(move || budget.charge(&spent)).await;
                }
                result
            })
            .await;
        if let Some(e) = lock(&refused).take() {
            return Err(e);
        }
        result.map_err(|e| Error::Transport(e.with_endpoint(self.endpoint())))
    }
}

/// A place for one live call of the pipeline under test under a judge's
/// run-wide limit and pace (the team's one limit for both); given back
/// when dropped.
pub(crate) struct PipelinePlace<'a> {
    _permit: pacing::Permit<'a>,
}

impl Client {
    /// Waits for a place under this judge's run-wide limit and pace for a
    /// live call of the pipeline under test of about `tokens` tokens, once
    /// the run's budget allows another call.
    pub(crate) async fn admit_pipeline(&self, tokens: u64) -> Result<PipelinePlace<'_>, Error> {
        if let Some(budget) = &self.budget {
            let budget = budget.clone();
            off_runtime(move || budget.check()).await?;
        }
        match self.pacer.enter_tokens(tokens as f64).await {
            Ok(permit) => Ok(PipelinePlace { _permit: permit }),
            Err(pacing::Refused::Paused(e)) => Err(Error::Transport(e)),
            Err(pacing::Refused::Slots(e)) => Err(Error::RunState {
                problem: format!(
                    "the run's concurrency limit cannot be kept: its slot files cannot be locked ({e})"
                ),
            }),
        }
    }

    /// Books a live call of the pipeline under test, at its own model's
    /// price, against this judge's budget.
    pub(crate) async fn charge_pipeline(&self, usd: f64) {
        if let Some(budget) = &self.budget {
            let budget = budget.clone();
            off_runtime(move || budget.charge_usd(usd, 1)).await;
        }
    }
}

/// The slowest rate a judge may write its reply at before an attempt is
/// given up: 2 tokens a second.
pub(crate) const FLOOR_TOKENS_PER_SEC: f64 = 2.0;

impl Client {
    /// How long one attempt at `request` may take: the configured timeout
    /// for the reply to start, plus half a second per token of the reply's
    /// limit ([`FLOOR_TOKENS_PER_SEC`]). A slow local model under load
    /// finishes its answer; a stream that stops is cut by the idle timeout.
    pub(crate) fn attempt_bound(&self, request: &JudgeRequest) -> Duration {
        self.timeout + Duration::from_secs_f64(f64::from(request.max_tokens) / FLOOR_TOKENS_PER_SEC)
    }
}

/// Runs blocking file work (the run's ledger, under its file lock) on
/// tokio's blocking pool, so a wait for another process's lock never holds
/// up the runtime's workers.
async fn off_runtime<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => match handle.spawn_blocking(work).await {
            Ok(out) => out,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => panic!("ragaliq: blocking work was cancelled: {e}"),
        },
        Err(_) => work(),
    }
}

/// The process's runtime for live calls, built on the first one; `None`
/// when it cannot start (calls then run on the caller's runtime).
pub(crate) fn background() -> Option<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("ragaliq-judge")
                .enable_all()
                .build()
                .ok()
        })
        .as_ref()
}

/// Aborts the task when the caller stops waiting for it.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The process's clients, one per configuration (see [`Client`]).
pub(crate) fn shared(key: String, build: impl FnOnce() -> Client) -> Arc<Client> {
    static CLIENTS: OnceLock<Mutex<HashMap<String, Arc<Client>>>> = OnceLock::new();
    let mut clients = lock(CLIENTS.get_or_init(Mutex::default));
    clients
        .entry(key)
        .or_insert_with(|| Arc::new(build()))
        .clone()
}
