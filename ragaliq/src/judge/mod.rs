//! The [`Judge`]: an LLM that grades RAG answers, behind one typed request.
//!
//! Every question the judge asks goes through one path, so retries, the
//! timeout, the concurrency limit, token accounting and the memo live in
//! one place:
//!
//! ```text
//! evaluator ── JudgeRequest ──► memo ──► retry ──► concurrency limit ──► timeout ──► Transport
//! ```
//!
//! The memo answers a request that was already answered (same fingerprint)
//! without a second call: faithfulness and hallucination on the same case
//! share one claim extraction and one verification.

mod anthropic;
mod http;
mod openai;
mod request;
mod retry;
mod transport;

pub use anthropic::{ANTHROPIC_VERSION, AnthropicTransport};
pub use http::ApiKey;
pub use openai::{JsonMode, OpenAiTransport};
#[cfg(test)]
pub(crate) use request::test_request;
pub use request::{Fingerprint, JudgeRequest, JudgeResponse, Message, ResponseFormat, Role};
pub use retry::RetryPolicy;
pub use transport::{BoxFuture, Transport};

use crate::case::RagCase;
use crate::config::{Config, Provider};
use crate::cost::Price;
use crate::error::{ConfigError, Error, Result, TransportError, TransportErrorKind};
use crate::evaluation::{Evaluation, Metric, Usage};
use crate::metrics::{self, EvalOptions, Tally};
use crate::prompts::{Task, Templates};
use crate::record::Recorder;
use crate::verdict::VerdictWeights;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OnceCell, Semaphore};

/// An LLM judge. Cheap to clone: clones share the transport, the concurrency
/// limit, the memo and the token totals.
///
/// Build one from configuration with [`Judge::from_env`] (reads
/// `ragaliq.toml` and `RAGALIQ_*` variables), or around any [`Transport`]
/// with [`Judge::builder`].
#[derive(Clone)]
pub struct Judge {
    inner: Arc<Inner>,
}

struct Inner {
    transport: Arc<dyn Transport>,
    recorder: Option<Arc<Recorder>>,
    model: String,
    temperature: f64,
    max_tokens: u32,
    templates: Templates,
    concurrency: usize,
    limit: Arc<Semaphore>,
    timeout: Duration,
    retry: RetryPolicy,
    scoring: Scoring,
    price: Option<Price>,
    budget: Option<f64>,
    memo: Mutex<HashMap<Fingerprint, Arc<OnceCell<JudgeResponse>>>>,
    ledger: Arc<Ledger>,
}

/// Spending shared by a judge and every judge derived from it.
#[derive(Default)]
struct Ledger {
    totals: Mutex<Usage>,
    skipped: std::sync::atomic::AtomicU64,
}

/// Defaults the evaluators apply when an [`EvalOptions`] leaves them open.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Scoring {
    pub thresholds: [f64; 5],
    pub weights: VerdictWeights,
    pub confidence_floor: f64,
}

impl Default for Scoring {
    fn default() -> Self {
        Scoring {
            thresholds: Metric::ALL.map(Metric::default_threshold),
            weights: VerdictWeights::RATIO,
            confidence_floor: 0.8,
        }
    }
}

impl Scoring {
    pub(crate) fn threshold(&self, metric: Metric) -> f64 {
        self.thresholds[metric_slot(metric)]
    }
}

fn metric_slot(metric: Metric) -> usize {
    Metric::ALL
        .iter()
        .position(|m| *m == metric)
        .expect("every metric")
}

impl fmt::Debug for Judge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Judge")
            .field("provider", &self.provider())
            .field("model", &self.inner.model)
            .field("concurrency", &self.inner.concurrency)
            .field("timeout", &self.inner.timeout)
            .finish_non_exhaustive()
    }
}

impl Judge {
    /// A builder around `transport`, with default settings.
    pub fn builder(transport: impl Transport) -> JudgeBuilder {
        JudgeBuilder {
            transport: Arc::new(transport),
            model: "default".into(),
            temperature: 0.0,
            max_tokens: 2048,
            templates: None,
            concurrency: 8,
            timeout: Duration::from_secs(60),
            retry: RetryPolicy::default(),
            scoring: Scoring::default(),
            price: None,
            budget: None,
        }
    }

    /// A judge from `ragaliq.toml` (at the package root, if present) and the
    /// environment, as [`Config::load`] reads them.
    pub fn from_env() -> Result<Judge, ConfigError> {
        Judge::from_config(&Config::load()?)
    }

    /// A judge as `config` describes it.
    pub fn from_config(config: &Config) -> Result<Judge, ConfigError> {
        let key = config.api_key();
        let key_var = config.api_key_env.as_deref().unwrap_or("");
        let transport: Arc<dyn Transport> = match config.provider {
            Provider::Anthropic => {
                Arc::new(AnthropicTransport::new(&config.base_url).with_api_key(key, key_var))
            }
            provider => Arc::new(
                OpenAiTransport::new(&config.base_url)
                    .with_provider_name(provider.name())
                    .with_api_key(key, key_var)
                    .with_json_mode(config.json_mode),
            ),
        };
        let templates = match &config.prompts_dir {
            Some(dir) => Templates::from_dir(dir)?,
            None => Templates::builtin(),
        };
        JudgeBuilder {
            transport,
            model: config.model.clone(),
            temperature: config.temperature,
            max_tokens: config.max_tokens,
            templates: Some(templates),
            concurrency: config.concurrency,
            timeout: config.timeout,
            retry: config.retry.clone(),
            scoring: Scoring {
                thresholds: config.thresholds,
                weights: config.weights,
                confidence_floor: config.confidence_floor,
            },
            price: config.price(),
            budget: config.max_cost_usd,
        }
        .build()
    }

    /// A judge with the same settings and transport that serves and records
    /// exchanges through `recorder`. It shares this judge's concurrency limit,
    /// token totals and budget, and has its own memo, so every exchange a
    /// recording needs is asked through (or replayed from) that recording.
    #[must_use]
    pub fn with_recorder(&self, recorder: Arc<Recorder>) -> Judge {
        let i = &self.inner;
        Judge {
            inner: Arc::new(Inner {
                transport: i.transport.clone(),
                recorder: Some(recorder),
                model: i.model.clone(),
                temperature: i.temperature,
                max_tokens: i.max_tokens,
                templates: i.templates.clone(),
                concurrency: i.concurrency,
                limit: i.limit.clone(),
                timeout: i.timeout,
                retry: i.retry.clone(),
                scoring: i.scoring.clone(),
                price: i.price,
                budget: i.budget,
                memo: Mutex::new(HashMap::new()),
                ledger: i.ledger.clone(),
            }),
        }
    }

    /// The recorder this judge serves exchanges through, if any.
    #[must_use]
    pub fn recorder(&self) -> Option<&Recorder> {
        self.inner.recorder.as_deref()
    }

    /// The transport's provider name.
    #[must_use]
    pub fn provider(&self) -> &str {
        self.inner.transport.provider()
    }

    /// The model asked.
    #[must_use]
    pub fn model(&self) -> &str {
        &self.inner.model
    }

    /// The most judge requests in flight at once, across every clone.
    #[must_use]
    pub fn concurrency(&self) -> usize {
        self.inner.concurrency
    }

    /// Calls and tokens spent by this judge (and its clones and derived
    /// judges) so far.
    #[must_use]
    pub fn usage(&self) -> Usage {
        *lock(&self.inner.ledger.totals)
    }

    /// The model's price, when known.
    #[must_use]
    pub fn price(&self) -> Option<Price> {
        self.inner.price
    }

    /// The estimated dollars spent on live calls so far, when the price is known.
    #[must_use]
    pub fn cost(&self) -> Option<f64> {
        self.inner.price.map(|p| p.cost(&self.usage()))
    }

    /// The cost budget in dollars, if any.
    #[must_use]
    pub fn budget(&self) -> Option<f64> {
        self.inner.budget
    }

    /// Live calls skipped because the budget was spent.
    #[must_use]
    pub fn skipped_calls(&self) -> u64 {
        self.inner
            .ledger
            .skipped
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The threshold `metric` passes at unless an [`EvalOptions`] says otherwise.
    #[must_use]
    pub fn default_threshold(&self, metric: Metric) -> f64 {
        self.inner.scoring.threshold(metric)
    }

    /// Faithfulness of the response to the context (SPEC §4).
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
    /// assert_eq!(eval.score, 0.0); // (1 + -1) / 2
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
        &self.inner.scoring
    }

    /// A request for `task` with the user turn `user`.
    pub(crate) fn request(
        &self,
        task: Task,
        user: String,
        subject: serde_json::Value,
    ) -> JudgeRequest {
        let templates = &self.inner.templates;
        JudgeRequest {
            task: task.name().to_owned(),
            template_version: templates.version_label(task),
            model: self.inner.model.clone(),
            system: templates.system().body.clone(),
            messages: vec![Message::user(user)],
            temperature: self.inner.temperature,
            max_tokens: self.inner.max_tokens,
            response_format: ResponseFormat::JsonSchema {
                name: task.name().to_owned(),
                schema: task.schema(),
            },
            sample: 0,
            subject,
        }
    }

    pub(crate) fn templates(&self) -> &Templates {
        &self.inner.templates
    }

    /// Answers `request`: from the memo when the same request was answered
    /// before (concurrent identical requests wait for one answer), else from
    /// the recording when the mode allows, else from the transport.
    pub(crate) async fn exchange(
        &self,
        request: &JudgeRequest,
        tally: &Tally,
    ) -> Result<JudgeResponse> {
        let provider = self.provider();
        let fingerprint = request.fingerprint(provider);
        let cell = lock(&self.inner.memo)
            .entry(fingerprint)
            .or_default()
            .clone();
        cell.get_or_try_init(|| async {
            let recorder = self.inner.recorder.as_deref();
            let recorded = match recorder {
                Some(r) => r.lookup(&fingerprint, provider, request)?,
                None => None,
            };
            if let Some(response) = recorded {
                let replayed = Usage {
                    replayed: 1,
                    ..Usage::default()
                };
                tally.add(replayed);
                *lock(&self.inner.ledger.totals) += replayed;
                return Ok(response);
            }
            let response = self.call(request, tally).await?;
            if let Some(recorder) = recorder {
                recorder.store(&fingerprint, provider, request, &response);
            }
            Ok::<_, Error>(response)
        })
        .await
        .cloned()
    }

    async fn call(&self, request: &JudgeRequest, tally: &Tally) -> Result<JudgeResponse> {
        let inner = &self.inner;
        if let (Some(budget), Some(spent)) = (inner.budget, self.cost())
            && spent >= budget
        {
            inner
                .ledger
                .skipped
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            return Err(Error::BudgetExhausted {
                budget,
                spent,
                calls: self.usage().calls,
            });
        }
        let response = inner
            .retry
            .run(|| async {
                let _permit = inner.limit.acquire().await.map_err(|_| {
                    TransportError::other("the judge's concurrency limit was closed")
                })?;
                match tokio::time::timeout(inner.timeout, inner.transport.complete(request)).await {
                    Ok(result) => result,
                    Err(_) => Err(TransportError::new(TransportErrorKind::Timeout {
                        after: inner.timeout,
                    })),
                }
            })
            .await?;
        let spent = Usage {
            calls: 1,
            input_tokens: response.input_tokens,
            output_tokens: response.output_tokens,
            replayed: 0,
        };
        tally.add(spent);
        *lock(&inner.ledger.totals) += spent;
        Ok(response)
    }
}

/// A poisoned lock only means another thread panicked while holding it; the
/// data (a memo, counters) is still consistent, so carry on.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Builds a [`Judge`] around a [`Transport`]. Every setting has a default.
#[must_use = "a builder does nothing until `build` is called"]
pub struct JudgeBuilder {
    transport: Arc<dyn Transport>,
    model: String,
    temperature: f64,
    max_tokens: u32,
    templates: Option<Templates>,
    concurrency: usize,
    timeout: Duration,
    retry: RetryPolicy,
    scoring: Scoring,
    price: Option<Price>,
    budget: Option<f64>,
}

impl JudgeBuilder {
    /// The model to ask (default `"default"`, for transports that ignore it).
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// Sampling temperature, 0 to 2 (default 0).
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = temperature;
        self
    }

    /// Most tokens per reply (default 2048).
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Prompt templates (default: the built-in ones).
    pub fn with_templates(mut self, templates: Templates) -> Self {
        self.templates = Some(templates);
        self
    }

    /// The most requests in flight at once across all evaluations (default 8).
    pub fn with_concurrency(mut self, limit: usize) -> Self {
        self.concurrency = limit;
        self
    }

    /// Time allowed for one attempt (default 60 s).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The retry policy (default [`RetryPolicy::default`]).
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The threshold `metric` passes at by default.
    pub fn with_threshold(mut self, metric: Metric, threshold: f64) -> Self {
        self.scoring.thresholds[metric_slot(metric)] = threshold;
        self
    }

    /// Verdict weights for faithfulness (default [`VerdictWeights::RATIO`]).
    pub fn with_weights(mut self, weights: VerdictWeights) -> Self {
        self.scoring.weights = weights;
        self
    }

    /// The confidence under which a supported claim still counts as
    /// hallucinated (default 0.8).
    pub fn with_confidence_floor(mut self, floor: f64) -> Self {
        self.scoring.confidence_floor = floor;
        self
    }

    /// The model's price, for cost estimates and the budget.
    pub fn with_price(mut self, price: Price) -> Self {
        self.price = Some(price);
        self
    }

    /// Stops live calls once this many dollars are spent (needs a price).
    pub fn with_budget(mut self, dollars: f64) -> Self {
        self.budget = Some(dollars);
        self
    }

    /// Checks the settings and builds the judge.
    pub fn build(self) -> Result<Judge, ConfigError> {
        let invalid = |origin: &str, value: String, expected: &str| ConfigError::Invalid {
            origin: origin.into(),
            value,
            expected: expected.into(),
        };
        if self.concurrency == 0 {
            return Err(invalid(
                "concurrency",
                "0".into(),
                "a whole number of at least 1",
            ));
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(invalid(
                "temperature",
                self.temperature.to_string(),
                "a number from 0 to 2",
            ));
        }
        if self.max_tokens == 0 {
            return Err(invalid(
                "max_tokens",
                "0".into(),
                "a whole number of at least 1",
            ));
        }
        if self.timeout.is_zero() {
            return Err(invalid("timeout", "0".into(), "a positive duration"));
        }
        for (metric, t) in Metric::ALL.iter().zip(self.scoring.thresholds) {
            if !(0.0..=1.0).contains(&t) {
                return Err(invalid(
                    &format!("threshold of {metric}"),
                    t.to_string(),
                    "a number from 0 to 1",
                ));
            }
        }
        if !self.scoring.weights.is_finite() {
            return Err(invalid(
                "weights",
                format!("{:?}", self.scoring.weights),
                "finite numbers",
            ));
        }
        if !(0.0..=1.0).contains(&self.scoring.confidence_floor) {
            return Err(invalid(
                "confidence_floor",
                self.scoring.confidence_floor.to_string(),
                "a number from 0 to 1",
            ));
        }
        if let Some(budget) = self.budget {
            if !(budget.is_finite() && budget >= 0.0) {
                return Err(invalid(
                    "budget",
                    budget.to_string(),
                    "a number of dollars, 0 or more",
                ));
            }
            if self.price.is_none() {
                return Err(invalid(
                    "budget",
                    budget.to_string(),
                    &format!(
                        "a price for model `{}` first: add [cost.prices.\"{}\"] to ragaliq.toml",
                        self.model, self.model
                    ),
                ));
            }
        }
        if let Some(price) = self.price.filter(|p| !p.is_valid()) {
            return Err(invalid(
                "price",
                format!("{price:?}"),
                "finite prices, 0 or more",
            ));
        }
        Ok(Judge {
            inner: Arc::new(Inner {
                transport: self.transport,
                recorder: None,
                model: self.model,
                temperature: self.temperature,
                max_tokens: self.max_tokens,
                templates: self.templates.unwrap_or_default(),
                concurrency: self.concurrency,
                limit: Arc::new(Semaphore::new(self.concurrency)),
                timeout: self.timeout,
                retry: self.retry,
                scoring: self.scoring,
                price: self.price,
                budget: self.budget,
                memo: Mutex::new(HashMap::new()),
                ledger: Arc::default(),
            }),
        })
    }
}
