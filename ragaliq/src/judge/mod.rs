//! The [`Judge`]: an LLM that grades RAG answers, behind one typed request.
//!
//! A judge is a *session* over a *client*. The client (one per configuration
//! and process) owns the transport, retries, timeouts, the concurrency
//! limit, the memo of live answers, the usage ledger and the run's budget;
//! the session (one per test or suite case) owns the recorder, the scoring
//! options and its own usage. Every question goes through one path:
//!
//! ```text
//! evaluator ── JudgeRequest ──► recording ──► memo ──► budget ──► limit ──► retry ──► timeout ──► Transport
//! ```
//!
//! A request already answered in this process (same fingerprint) is not
//! asked again: faithfulness and hallucination on one case share one claim
//! extraction and one verification, and two tests asking the same question
//! pay once.

mod anthropic;
mod budget;
mod builder;
mod client;
mod format;
mod http;
mod openai;
mod request;
mod retry;
mod transport;

pub use anthropic::{ANTHROPIC_VERSION, AnthropicTransport};
pub use builder::JudgeBuilder;
pub use format::{JsonMode, Refusal, refuses_response_format};
pub use http::{ApiKey, endpoint_label};
pub use openai::OpenAiTransport;
pub(crate) use request::canonical_json;
#[cfg(test)]
pub(crate) use request::test_request;
pub use request::{
    Fingerprint, JudgeRequest, JudgeResponse, Message, ResponseFormat, Role, StopReason,
};
pub use retry::RetryPolicy;
pub use transport::{BoxFuture, Transport};

use crate::case::RagCase;
use crate::config::{Config, Provider};
use crate::cost::Price;
use crate::error::{ConfigError, Error, Result};
use crate::evaluation::{Evaluation, Metric, Usage};
use crate::metrics::{self, EvalOptions, Samples, Tally};
use crate::prompts::{SchemaDialect, Shape, Task, Templates};
use crate::record::Recorder;
use crate::sync::lock;
use crate::verdict::VerdictWeights;
use client::{CallError, Client};
use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// An LLM judge. Cheap to clone: clones share everything, including the
/// recording and the usage totals.
///
/// Build one from configuration with [`Judge::from_env`] (reads
/// `ragaliq.toml` and `RAGALIQ_*` variables) or [`Judge::from_config`]: all
/// judges of one configuration in a process share one client (connection
/// pool, concurrency limit, memo, ledger). Or build one around any
/// [`Transport`] with [`Judge::builder`].
#[derive(Clone)]
pub struct Judge {
    session: Arc<Session>,
}

struct Session {
    client: Arc<Client>,
    setup: Arc<Setup>,
    recorder: Option<Arc<Recorder>>,
    usage: Arc<UsageNode>,
    trial: Option<String>,
    /// Exchanges already answered for this recording (by any trial): a
    /// second use is counted as shared, not as another replay or call.
    served: Arc<Mutex<HashSet<Fingerprint>>>,
}

/// The scoring and asking settings of a session.
#[derive(Clone, Debug)]
pub(crate) struct Setup {
    pub model: String,
    pub temperature: f64,
    pub max_tokens: u32,
    pub sized_max_tokens: bool,
    pub templates: Templates,
    pub scoring: Scoring,
    pub dialect: SchemaDialect,
}

/// Usage of a session and the sessions derived from it: a derived session
/// adds to its parent too, so a suite's judge totals its cases.
#[derive(Default)]
struct UsageNode {
    usage: Mutex<Usage>,
    skipped: AtomicU64,
    parent: Option<Arc<UsageNode>>,
}

impl UsageNode {
    fn add(&self, usage: Usage) {
        *lock(&self.usage) += usage;
        if let Some(p) = &self.parent {
            p.add(usage);
        }
    }

    fn skip(&self) {
        self.skipped.fetch_add(1, Ordering::SeqCst);
        if let Some(p) = &self.parent {
            p.skip();
        }
    }
}

/// Defaults the evaluators apply when an [`EvalOptions`] leaves them open.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Scoring {
    pub thresholds: [f64; 5],
    pub weights: VerdictWeights,
    pub confidence_floor: f64,
    pub samples: Samples,
    pub agreement: f64,
}

impl Default for Scoring {
    fn default() -> Self {
        Scoring {
            thresholds: Metric::ALL.map(Metric::default_threshold),
            weights: VerdictWeights::RATIO,
            confidence_floor: 0.8,
            samples: Samples::default(),
            agreement: metrics::DEFAULT_AGREEMENT,
        }
    }
}

impl Scoring {
    pub(crate) fn threshold(&self, metric: Metric) -> f64 {
        self.thresholds[metric.index()]
    }
}

impl fmt::Debug for Judge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Judge")
            .field("provider", &self.provider())
            .field("model", &self.session.setup.model)
            .field("endpoint", &self.endpoint())
            .field("concurrency", &self.session.client.concurrency)
            .field("timeout", &self.session.client.timeout)
            .finish_non_exhaustive()
    }
}

impl Judge {
    /// A builder around `transport`, with default settings.
    pub fn builder(transport: impl Transport) -> JudgeBuilder {
        JudgeBuilder::new(Arc::new(transport))
    }

    /// A judge from `ragaliq.toml` (at the package root, if present) and the
    /// environment, as [`Config::load`] reads them.
    pub fn from_env() -> Result<Judge, ConfigError> {
        Judge::from_config(&Config::load()?)
    }

    /// A judge as `config` describes it, over this process's shared client
    /// for that configuration.
    pub fn from_config(config: &Config) -> Result<Judge, ConfigError> {
        let builder = JudgeBuilder::from_config(config)?;
        let key = builder.client_key(config);
        let (client, setup) = builder.into_parts()?;
        let client = client::shared(key, move || client);
        Ok(Judge::over(client, Arc::new(setup)))
    }

    fn over(client: Arc<Client>, setup: Arc<Setup>) -> Judge {
        Judge {
            session: Arc::new(Session {
                client,
                setup,
                recorder: None,
                usage: Arc::default(),
                trial: None,
                served: Arc::default(),
            }),
        }
    }

    /// A judge with the same settings and client that serves and records
    /// exchanges through `recorder`. Its usage adds to this judge's.
    #[must_use]
    pub fn with_recorder(&self, recorder: Arc<Recorder>) -> Judge {
        self.derive(Some(recorder), self.session.trial.clone(), Arc::default())
    }

    /// A judge whose exchanges are marked in the recording as used by
    /// `trial` (a suite names each exchange's metrics this way), so a run
    /// that repeats only some trials replaces only their exchanges.
    #[must_use]
    pub fn for_trial(&self, trial: impl Into<String>) -> Judge {
        self.derive(
            self.session.recorder.clone(),
            Some(trial.into()),
            self.session.served.clone(),
        )
    }

    fn derive(
        &self,
        recorder: Option<Arc<Recorder>>,
        trial: Option<String>,
        served: Arc<Mutex<HashSet<Fingerprint>>>,
    ) -> Judge {
        let s = &self.session;
        Judge {
            session: Arc::new(Session {
                client: s.client.clone(),
                setup: s.setup.clone(),
                recorder,
                usage: Arc::new(UsageNode {
                    parent: Some(s.usage.clone()),
                    ..UsageNode::default()
                }),
                trial,
                served,
            }),
        }
    }

    /// The recorder this judge serves exchanges through, if any.
    #[must_use]
    pub fn recorder(&self) -> Option<&Recorder> {
        self.session.recorder.as_deref()
    }

    /// The transport's provider name.
    #[must_use]
    pub fn provider(&self) -> &str {
        self.session.client.transport.provider()
    }

    /// The model asked.
    #[must_use]
    pub fn model(&self) -> &str {
        &self.session.setup.model
    }

    /// Where live calls go: `scheme://host:port` (never a path or key), when
    /// the transport has an address.
    #[must_use]
    pub fn endpoint(&self) -> Option<String> {
        self.session.client.endpoint()
    }

    /// How the server is asked for JSON now (after any negotiation).
    #[must_use]
    pub fn json_mode(&self) -> JsonMode {
        self.session.client.formats.current()
    }

    /// The response formats the server refused in this process, and what
    /// was used instead.
    #[must_use]
    pub fn refusals(&self) -> Vec<Refusal> {
        self.session.client.refusals()
    }

    /// One line that says which judge this is and where its calls go:
    ///
    /// ```text
    /// openai-compatible `scripted` at http://127.0.0.1:8787 (json_mode schema)
    /// ```
    #[must_use]
    pub fn describe(&self) -> String {
        let at = self.endpoint().map_or_else(
            || "with no server address".to_owned(),
            |e| format!("at {e}"),
        );
        let mut out = format!(
            "{} `{}` {at} (json_mode {})",
            self.provider(),
            self.model(),
            self.json_mode()
        );
        let samples = self.session.setup.scoring.samples;
        if samples.max() > 1 {
            out.push_str(&format!("; samples {samples}"));
            if self.session.setup.temperature == 0.0 {
                out.push_str(" at temperature 0: a judge that answers the same every time makes every vote unanimous, so the extra samples cost and tell nothing (set temperature above 0)");
            }
        }
        for r in self.refusals() {
            out.push_str(&format!(
                "; the server refused json_mode {}, now {}",
                r.refused, r.now
            ));
        }
        if self.session.client.serial() {
            out.push_str("; the server stopped a streamed reply for another request, so calls now go one at a time");
        }
        out
    }

    /// The sampling temperature.
    #[must_use]
    pub fn temperature(&self) -> f64 {
        self.session.setup.temperature
    }

    /// The most judge requests in flight at once, across every judge of
    /// this client in the process.
    #[must_use]
    pub fn concurrency(&self) -> usize {
        self.session.client.concurrency
    }

    /// Calls and tokens spent by this judge, its clones and the judges
    /// derived from it ([`with_recorder`](Self::with_recorder)) so far.
    #[must_use]
    pub fn usage(&self) -> Usage {
        *lock(&self.session.usage.usage)
    }

    /// The model's price, when known.
    #[must_use]
    pub fn price(&self) -> Option<Price> {
        self.session.client.price
    }

    /// The estimated dollars this judge spent on live calls so far, when the
    /// price is known.
    #[must_use]
    pub fn cost(&self) -> Option<f64> {
        self.price().map(|p| p.cost(&self.usage()))
    }

    /// The run's cost budget in dollars, if any.
    #[must_use]
    pub fn budget(&self) -> Option<f64> {
        self.session.client.budget.as_ref().map(|b| b.max_usd())
    }

    /// Live calls of this judge skipped because the run's budget was spent.
    #[must_use]
    pub fn skipped_calls(&self) -> u64 {
        self.session.usage.skipped.load(Ordering::SeqCst)
    }

    /// The threshold `metric` passes at unless an [`EvalOptions`] says otherwise.
    #[must_use]
    pub fn default_threshold(&self, metric: Metric) -> f64 {
        self.session.setup.scoring.threshold(metric)
    }

    /// How many times each question is asked by default.
    #[must_use]
    pub fn samples(&self) -> Samples {
        self.session.setup.scoring.samples
    }

    /// Faithfulness of the response to the context.
    ///
    /// Two judge calls: claim extraction, then one batched verification.
    pub async fn faithfulness(&self, case: &RagCase) -> Result<Evaluation> {
        self.evaluate(Metric::Faithfulness, case).await
    }

    /// Hallucination: the share of claims that are not hallucinated. Shares
    /// its calls with [`faithfulness`](Self::faithfulness) on the same case.
    pub async fn hallucination(&self, case: &RagCase) -> Result<Evaluation> {
        self.evaluate(Metric::Hallucination, case).await
    }

    /// How well the response answers the query (one call).
    pub async fn relevance(&self, case: &RagCase) -> Result<Evaluation> {
        self.evaluate(Metric::Relevance, case).await
    }

    /// Rank-weighted precision of the retrieved passages (one call).
    pub async fn context_precision(&self, case: &RagCase) -> Result<Evaluation> {
        self.evaluate(Metric::ContextPrecision, case).await
    }

    /// Share of the expected facts the context covers.
    pub async fn context_recall(&self, case: &RagCase) -> Result<Evaluation> {
        self.evaluate(Metric::ContextRecall, case).await
    }

    /// `metric` on `case` with the judge's default threshold and weights.
    pub async fn evaluate(&self, metric: Metric, case: &RagCase) -> Result<Evaluation> {
        self.evaluate_with(metric, case, &EvalOptions::default())
            .await
    }

    /// `metric` on `case` with `options` overriding the defaults.
    ///
    /// ```
    /// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
    /// # use ragaliq::{EvalOptions, Metric, RagCase, TransportError, VerdictWeights};
    /// # struct Canned;
    /// # impl Transport for Canned {
    /// #     fn provider(&self) -> &str { "canned" }
    /// #     fn complete<'a>(&'a self, r: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
    /// #         let text = if r.task == "extract_claims" { r#"{"claims": ["A", "B"]}"# }
    /// #             else { r#"{"verdicts": [{"claim": 1, "verdict": "supported"}, {"claim": 2, "verdict": "no_evidence"}]}"# };
    /// #         Box::pin(async move { Ok(JudgeResponse::text(text)) })
    /// #     }
    /// # }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let judge = Judge::builder(Canned).build().unwrap();
    /// # let case = RagCase::new("q").context(["p"]).response("A. B.");
    /// let strict = EvalOptions::default()
    ///     .with_threshold(0.9)
    ///     .with_weights(VerdictWeights::STRICT);
    /// let eval = judge.evaluate_with(Metric::Faithfulness, &case, &strict).await.unwrap();
    /// assert_eq!(eval.score, 0.0); // (1 + -1) / 2, clamped
    /// assert!(!eval.passed);
    /// # });
    /// ```
    pub async fn evaluate_with(
        &self,
        metric: Metric,
        case: &RagCase,
        options: &EvalOptions,
    ) -> Result<Evaluation> {
        metrics::evaluate(self, metric, case, options).await
    }

    pub(crate) fn scoring(&self) -> &Scoring {
        &self.session.setup.scoring
    }

    pub(crate) fn templates(&self) -> &Templates {
        &self.session.setup.templates
    }

    /// A request for `task` with the user turn `user`: the task's schema
    /// bounded for `shape`, asked in the client's current JSON mode, with a
    /// reply limit sized for `shape` under the configured ceiling.
    pub(crate) fn request(
        &self,
        task: Task,
        user: String,
        subject: serde_json::Value,
        shape: Shape,
    ) -> JudgeRequest {
        let setup = &self.session.setup;
        let schema = task.schema(&shape, setup.dialect);
        let max_tokens = if setup.sized_max_tokens {
            task.reply_tokens(&shape).min(setup.max_tokens)
        } else {
            setup.max_tokens
        };
        JudgeRequest {
            task: task.name().to_owned(),
            template_version: setup.templates.version_label(task),
            model: setup.model.clone(),
            system: setup.templates.system().body.clone(),
            messages: vec![request::Message::user(user)],
            temperature: setup.temperature,
            max_tokens,
            response_format: self
                .session
                .client
                .formats
                .current()
                .format(task.name(), &schema),
            sample: 0,
            subject,
        }
    }

    /// Answers `request`: from the recording when the mode allows and it
    /// holds the answer, else from the process's memo, else live (recording
    /// the answer). A refused response format steps down and asks again.
    pub(crate) async fn exchange(
        &self,
        request: &JudgeRequest,
        task: Task,
        shape: &Shape,
        tally: &Tally,
    ) -> Result<JudgeResponse> {
        let session = &self.session;
        let provider = self.provider();
        let trial = session.trial.as_deref();
        let schema = task.schema(shape, session.setup.dialect);
        let requested = session.client.formats.configured();
        let mut request = request.clone();
        loop {
            let fingerprint = request.fingerprint(provider);
            if let Some(recorder) = session.recorder.as_deref() {
                let mut found = recorder.lookup_only(&fingerprint, trial);
                if found.is_none() {
                    // A recording made after the server refused the
                    // configured format holds the answers to the format
                    // actually used; ask for exactly that again.
                    let current = JsonMode::of(&request.response_format);
                    if let Some(mode) = recorder.negotiated(requested).filter(|m| *m != current) {
                        let mut alt = request.clone();
                        alt.response_format = mode.format(task.name(), &schema);
                        found = recorder.lookup_only(&alt.fingerprint(provider), trial);
                    }
                }
                if found.is_none() {
                    // Missing or stale in replay mode; `None` when a live
                    // call may answer.
                    found = recorder.lookup(&fingerprint, provider, &request, trial)?;
                }
                if let Some(response) = found {
                    let first = lock(&session.served).insert(fingerprint);
                    let replayed = if first {
                        Usage {
                            replayed: 1,
                            replayed_tokens: response.input_tokens + response.output_tokens,
                            ..Usage::default()
                        }
                    } else {
                        Usage {
                            shared: 1,
                            ..Usage::default()
                        }
                    };
                    tally.add(replayed);
                    session.usage.add(replayed);
                    return Ok(response);
                }
            }
            let charge = |spent: Usage| {
                tally.add(spent);
                session.usage.add(spent);
            };
            match session.client.answer(fingerprint, &request, &charge).await {
                Ok((response, made_call)) => {
                    lock(&session.served).insert(fingerprint);
                    if !made_call {
                        let shared = Usage {
                            shared: 1,
                            ..Usage::default()
                        };
                        tally.add(shared);
                        session.usage.add(shared);
                    }
                    if let Some(recorder) = session.recorder.as_deref() {
                        recorder.store(
                            &fingerprint,
                            provider,
                            &request,
                            &response,
                            requested,
                            trial,
                        );
                    }
                    return Ok(response);
                }
                Err(CallError::Truncated(response)) => {
                    return Err(Error::Truncated {
                        task: task.name(),
                        limit: request.max_tokens,
                        ceiling: session.setup.max_tokens,
                        items: if session.setup.sized_max_tokens {
                            shape.describe(task)
                        } else {
                            String::new()
                        },
                        raw: response.text,
                    });
                }
                Err(CallError::Failed(Error::Transport(e)))
                    if matches!(
                        e.kind,
                        crate::error::TransportErrorKind::FormatRefused { .. }
                    ) =>
                {
                    let refused = JsonMode::of(&request.response_format);
                    match session.client.formats.step_down(refused, &e.to_string()) {
                        Some(next) => {
                            request.response_format = next.format(task.name(), &schema);
                        }
                        None => return Err(Error::Transport(e)),
                    }
                }
                Err(CallError::Failed(e)) => {
                    if e.is_budget() {
                        session.usage.skip();
                    }
                    return Err(e);
                }
            }
        }
    }
}

/// The transport a configuration describes.
pub(crate) fn transport_for(config: &Config) -> Arc<dyn Transport> {
    let key = config.api_key();
    let key_var = config.api_key_env.as_deref().unwrap_or("");
    let idle = config.idle_timeout;
    match (config.provider, config.base_url.as_deref()) {
        (Provider::Anthropic, url) => Arc::new(
            AnthropicTransport::new(url.unwrap_or("https://api.anthropic.com/v1"))
                .with_api_key(key, key_var)
                .with_streaming(config.stream)
                .with_idle_timeout(idle),
        ),
        (provider, Some(url)) => Arc::new(
            OpenAiTransport::new(url)
                .with_provider_name(provider.name())
                .with_api_key(key, key_var)
                .with_max_completion_tokens(provider == Provider::OpenAi)
                .with_streaming(config.stream)
                .with_idle_timeout(idle),
        ),
        (provider, None) => Arc::new(OpenAiTransport::without_address(provider.name())),
    }
}
