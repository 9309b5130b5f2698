//! [`JudgeBuilder`]: a judge around any transport, every setting with a default.

use super::Judge;
use crate::client::{self, Budget, Client, Rates};
use crate::config::{Config, Provider};
use crate::core::{ConfigError, JsonMode, Metric, Price, Samples, Strategy, VerdictWeights};
use crate::metrics::{Scoring, Verification};
use crate::prompts::{SchemaDialect, Templates};
use crate::session::Session;
use crate::tasks::Asking;
use crate::transport::{AnthropicTransport, OpenAiTransport, RetryPolicy, Transport};
use std::sync::Arc;
use std::time::Duration;

/// Builds a [`Judge`] around a [`Transport`]. Every setting has a default.
///
/// ```
/// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
/// # use ragaliq::{Metric, TransportError};
/// # struct Canned;
/// # impl Transport for Canned {
/// #     fn provider(&self) -> &str { "canned" }
/// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
/// #         Box::pin(async { Ok(JudgeResponse::text("{}")) })
/// #     }
/// # }
/// use std::time::Duration;
/// let judge = Judge::builder(Canned)
///     .with_model("my-model")
///     .with_concurrency(4)
///     .with_timeout(Duration::from_secs(20))
///     .with_threshold(Metric::Relevance, 0.6)
///     .build()
///     .unwrap();
/// assert_eq!(judge.default_threshold(Metric::Relevance), 0.6);
/// assert!(Judge::builder(Canned).with_concurrency(0).build().is_err());
/// ```
#[must_use = "a builder does nothing until `build` is called"]
pub struct JudgeBuilder {
    transport: Arc<dyn Transport>,
    model: String,
    temperature: f64,
    max_tokens: u32,
    sized_max_tokens: bool,
    templates: Option<Templates>,
    concurrency: usize,
    rates: Rates,
    timeout: Duration,
    retry: RetryPolicy,
    scoring: Scoring,
    price: Option<Price>,
    budget: Option<f64>,
    json_mode: JsonMode,
    collect: Option<std::path::PathBuf>,
}

impl JudgeBuilder {
    pub(crate) fn new(transport: Arc<dyn Transport>) -> Self {
        JudgeBuilder {
            transport,
            model: "default".into(),
            temperature: 0.0,
            max_tokens: 2048,
            sized_max_tokens: true,
            templates: None,
            concurrency: 8,
            rates: Rates::default(),
            timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
            scoring: Scoring::default(),
            price: None,
            budget: None,
            json_mode: JsonMode::Schema,
            collect: None,
        }
    }

    pub(crate) fn from_config(config: &Config) -> Result<Self, ConfigError> {
        let templates = match &config.prompts_dir {
            Some(dir) => Templates::from_dir(dir)?,
            None => Templates::builtin(),
        };
        Ok(JudgeBuilder {
            transport: transport_for(config),
            model: config.model.clone(),
            temperature: config.temperature,
            max_tokens: config.max_tokens,
            sized_max_tokens: config.sized_max_tokens,
            templates: Some(templates),
            concurrency: config.concurrency,
            rates: Rates {
                rpm: config.rpm,
                tpm: config.tpm,
            },
            timeout: config.timeout,
            retry: config.retry.clone(),
            scoring: Scoring {
                thresholds: config.thresholds,
                weights: config.weights,
                confidence_floor: config.confidence_floor,
                samples: config.samples,
                agreement: config.agreement,
                correctness: config.correctness,
                criteria_form: config.criteria_form,
                verification: Verification {
                    strategy: config.strategy,
                    batch: config.verify_batch,
                    evidence_checked: config.evidence_checked,
                    claim_threshold: config.claim_threshold,
                    passage_threshold: config.passage_threshold,
                    contradiction: config.contradiction,
                    contradiction_ratio: config.contradiction_ratio,
                    chunk_chars: config.chunk_chars,
                    sentences: config.sentences,
                },
                fitted_note: config.fitted.as_ref().and_then(|f| f.note(&config.model)),
                reads_probabilities: false,
                bands: config.bands,
                uncertain: config.uncertain,
                found_rule: config.found_rule,
                window: config.history,
                follow_up_history: config.follow_up_history,
            },
            // Every answer collect mode gets comes from a batch, which
            // both providers price at half.
            price: config.price().map(|p| {
                if config.collect.is_some() {
                    p.batch()
                } else {
                    p
                }
            }),
            budget: config.max_cost_usd,
            json_mode: config.json_mode,
            collect: config.collect.clone(),
        })
    }

    /// What makes two configurations share a client in one process.
    pub(crate) fn client_key(&self, config: &Config) -> String {
        format!(
            "{:?}|{:?}|{:?}|{}|{:?}|{}|{:?}|{:?}|{}|{:?}|{:?}|{:?}|{:?}",
            config.provider,
            config.base_url,
            config.api_key_env,
            config.api_key().map_or(0, |k| {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                k.expose().hash(&mut h);
                h.finish()
            }),
            config.json_mode,
            config.stream,
            config.idle_timeout,
            self.timeout,
            self.concurrency,
            self.retry,
            self.price,
            self.budget,
            config.max_tokens,
        ) + &format!("|{:?}|{:?}", self.rates, self.collect)
    }

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

    /// The most tokens a reply may use (default 2048): the ceiling under
    /// which each task's limit is sized.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Whether each task's reply limit is sized from its input (default
    /// true); `false` allows every reply the full ceiling (for models that
    /// reason before answering).
    pub fn with_sized_max_tokens(mut self, sized: bool) -> Self {
        self.sized_max_tokens = sized;
        self
    }

    /// Prompt templates (default: the built-in ones).
    pub fn with_templates(mut self, templates: Templates) -> Self {
        self.templates = Some(templates);
        self
    }

    /// The most requests in flight at once across all evaluations (default
    /// 8). It is a ceiling: a provider that answers 429 (or 503, 529) cuts
    /// the run's limit, which grows back with successes.
    pub fn with_concurrency(mut self, limit: usize) -> Self {
        self.concurrency = limit;
        self
    }

    /// Paces requests to at most `rpm` requests and `tpm` tokens a minute
    /// (either may be `None`), besides what the provider's rate-limit
    /// headers say. A request's tokens are its prompt's characters / 4 plus
    /// its `max_tokens`.
    ///
    /// ```
    /// # use ragaliq::judge::{Judge, OpenAiTransport};
    /// let judge = Judge::builder(OpenAiTransport::new("http://127.0.0.1:8080/v1"))
    ///     .with_rate_limits(Some(60.0), Some(40_000.0))
    ///     .build()
    ///     .unwrap();
    /// # let _ = judge;
    /// ```
    pub fn with_rate_limits(mut self, rpm: Option<f64>, tpm: Option<f64>) -> Self {
        self.rates = Rates { rpm, tpm };
        self
    }

    /// Time allowed for one attempt (default 120 s), plus half a second per
    /// token of the reply's limit: a slow local model writing at 2 tokens a
    /// second still finishes its answer. A streamed reply that stops for
    /// the idle timeout is cut sooner.
    ///
    /// ```
    /// # use ragaliq::judge::{Judge, OpenAiTransport};
    /// # use std::time::Duration;
    /// // At most 20 s + 50 s for a reply of up to 100 tokens.
    /// let judge = Judge::builder(OpenAiTransport::new("http://127.0.0.1:8080/v1"))
    ///     .with_timeout(Duration::from_secs(20))
    ///     .with_max_tokens(100)
    ///     .build()
    ///     .unwrap();
    /// # let _ = judge;
    /// ```
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The retry policy (default [`RetryPolicy::default`]).
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// How the server is asked for JSON to begin with (default
    /// [`JsonMode::Schema`]); a refused mode steps down on its own.
    pub fn with_json_mode(mut self, mode: JsonMode) -> Self {
        self.json_mode = mode;
        self
    }

    /// The threshold `metric` passes at by default.
    pub fn with_threshold(mut self, metric: Metric, threshold: f64) -> Self {
        self.scoring.thresholds[metric.index()] = threshold;
        self
    }

    /// Verdict weights for faithfulness (default [`VerdictWeights::RATIO`]).
    pub fn with_weights(mut self, weights: VerdictWeights) -> Self {
        self.scoring.weights = weights;
        self
    }

    /// The confidence under which a supported claim still counts as
    /// hallucinated (default: none, so hallucination counts exactly the
    /// claims faithfulness finds unsupported). P(supported) where read
    /// from probabilities, the stated confidence of a JSON verdict, 1 for
    /// the word written.
    pub fn with_confidence_floor(mut self, floor: f64) -> Self {
        self.scoring.confidence_floor = Some(floor);
        self
    }

    /// The form plain-text criteria take where nothing else says
    /// (calibration; case files without `form`): yes/no by default.
    pub fn with_criteria_form(mut self, form: crate::core::CriteriaForm) -> Self {
        self.scoring.criteria_form = form;
        self
    }

    /// How answer correctness is decided (default
    /// [`Correctness::Direct`](crate::Correctness::Direct): one question per answer).
    pub fn with_correctness(mut self, correctness: crate::core::Correctness) -> Self {
        self.scoring.correctness = correctness;
        self
    }

    /// The uncertainty band for one kind of reading (default
    /// [`Bands::DEFAULT`](crate::Bands::DEFAULT)): a reading inside it
    /// decides nothing, and the item goes to the next judge of the cascade,
    /// then to a person.
    ///
    /// ```
    /// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
    /// # use ragaliq::TransportError;
    /// # struct Canned;
    /// # impl Transport for Canned {
    /// #     fn provider(&self) -> &str { "canned" }
    /// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
    /// #         Box::pin(async { Ok(JudgeResponse::text("yes")) })
    /// #     }
    /// # }
    /// use ragaliq::{Band, Kind, Uncertain};
    /// let judge = Judge::builder(Canned)
    ///     .with_band(Kind::Claims, Band::between(0.1, 0.5).unwrap())
    ///     .with_uncertain(Uncertain::Fail)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(judge.band(Kind::Claims), Band::between(0.1, 0.5).unwrap());
    /// ```
    pub fn with_band(mut self, kind: crate::core::Kind, band: crate::core::Band) -> Self {
        self.scoring.bands.set(kind, band);
        self
    }

    /// Whether answer correctness decides, with no call, a response that
    /// gives the expected answer with nothing in it that casts doubt on it
    /// (the found rule, on by default; its decisions are kept in the
    /// recording for a person to overrule). Off, the judge is asked about
    /// every answer.
    ///
    /// ```
    /// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
    /// # use ragaliq::TransportError;
    /// # struct Canned;
    /// # impl Transport for Canned {
    /// #     fn provider(&self) -> &str { "canned" }
    /// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
    /// #         Box::pin(async { Ok(JudgeResponse::text("yes")) })
    /// #     }
    /// # }
    /// let judge = Judge::builder(Canned).with_found_rule(false).build().unwrap();
    /// assert!(!judge.found_rule());
    /// ```
    pub fn with_found_rule(mut self, on: bool) -> Self {
        self.scoring.found_rule = on;
        self
    }

    /// Every kind's band at once (default
    /// [`Bands::DEFAULT`](crate::Bands::DEFAULT), unmeasured): with
    /// [`Bands::OFF`](crate::Bands::OFF), every reading decides by its
    /// threshold, as before bands.
    ///
    /// ```
    /// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
    /// # use ragaliq::TransportError;
    /// # struct Canned;
    /// # impl Transport for Canned {
    /// #     fn provider(&self) -> &str { "canned" }
    /// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
    /// #         Box::pin(async { Ok(JudgeResponse::text("yes")) })
    /// #     }
    /// # }
    /// use ragaliq::{Band, Bands, Kind};
    /// let judge = Judge::builder(Canned).build().unwrap();
    /// assert_eq!(judge.band(Kind::Claims), Band::Unmeasured);
    /// let judge = Judge::builder(Canned).with_bands(Bands::OFF).build().unwrap();
    /// assert_eq!(judge.band(Kind::Claims), Band::Off);
    /// ```
    pub fn with_bands(mut self, bands: crate::core::Bands) -> Self {
        self.scoring.bands = bands;
        self
    }

    /// What a test does when an item is still uncertain after the last
    /// judge (default [`Uncertain::Fail`](crate::Uncertain::Fail)).
    pub fn with_uncertain(mut self, uncertain: crate::core::Uncertain) -> Self {
        self.scoring.uncertain = uncertain;
        self
    }

    /// How many times each question is asked (default once).
    pub fn with_samples(mut self, samples: Samples) -> Self {
        self.scoring.samples = samples;
        self
    }

    /// The share of samples that must agree for a verdict to stand
    /// (default 0.6: 3 of 5); below it the evaluation is *undecided*.
    pub fn with_agreement(mut self, agreement: f64) -> Self {
        self.scoring.agreement = agreement;
        self
    }

    /// Claims asked about in one verification call (default 4; 1 asks each
    /// claim alone).
    pub fn with_verify_batch(mut self, claims: usize) -> Self {
        self.scoring.verification.batch = claims;
        self
    }

    /// Whether a verdict's evidence must be found in the passages (default
    /// true): an ungrounded verdict is asked again alone, then undecided.
    pub fn with_evidence_checked(mut self, checked: bool) -> Self {
        self.scoring.verification.evidence_checked = checked;
        self
    }

    /// How verdicts and scores are asked for (default
    /// [`Strategy::Probability`]).
    ///
    /// ```
    /// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
    /// # use ragaliq::TransportError;
    /// # struct Canned;
    /// # impl Transport for Canned {
    /// #     fn provider(&self) -> &str { "canned" }
    /// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
    /// #         Box::pin(async { Ok(JudgeResponse::text("{}")) })
    /// #     }
    /// # }
    /// use ragaliq::Strategy;
    /// let judge = Judge::builder(Canned)
    ///     .with_strategy(Strategy::Word)
    ///     .with_claim_threshold(0.4)
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(judge.strategy(), Strategy::Word);
    /// assert!(Judge::builder(Canned).with_claim_threshold(1.5).build().is_err());
    /// ```
    pub fn with_strategy(mut self, strategy: Strategy) -> Self {
        self.scoring.verification.strategy = strategy;
        self
    }

    /// P(supported) at or above which a claim is supported (default 0.5;
    /// fit it with `cargo ragaliq calibrate --fit`).
    pub fn with_claim_threshold(mut self, p: f64) -> Self {
        self.scoring.verification.claim_threshold = p;
        self
    }

    /// P(relevant) at or above which a passage is relevant (default 0.5).
    pub fn with_passage_threshold(mut self, p: f64) -> Self {
        self.scoring.verification.passage_threshold = p;
        self
    }

    /// Whether an unsupported claim is asked whether the passages
    /// contradict it (default true; false calls every unsupported claim
    /// `no_evidence`, one call fewer each).
    pub fn with_contradiction(mut self, ask: bool) -> Self {
        self.scoring.verification.contradiction = ask;
        self
    }

    /// The earlier turns of a conversation a follow-up's questions show
    /// (default [`Window::DEFAULT`](crate::Window::DEFAULT): the last 3
    /// turns within 2,000 characters). Part of what is asked: another
    /// window records anew.
    ///
    /// ```
    /// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
    /// # use ragaliq::TransportError;
    /// # struct Canned;
    /// # impl Transport for Canned {
    /// #     fn provider(&self) -> &str { "canned" }
    /// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
    /// #         Box::pin(async { Ok(JudgeResponse::text("yes")) })
    /// #     }
    /// # }
    /// let judge = Judge::builder(Canned)
    ///     .with_history_window(ragaliq::Window { turns: 1, chars: 800 })
    ///     .build()
    ///     .unwrap();
    /// # let _ = judge;
    /// ```
    pub fn with_history_window(mut self, window: crate::core::Window) -> Self {
        self.scoring.window = window;
        self
    }

    /// Whether every question about a follow-up turn shows the
    /// conversation before it (default `false`: relevance, abstention's
    /// questions whether the passages contain the answer and whether the
    /// answer says it cannot answer, and context precision's passage
    /// questions are asked as a single case's are, which agreed with the
    /// labels as often or more often on the worst of the public multi-turn
    /// sets measured, see `bench/conversations/README.md`; see
    /// [`Task::bare_for_follow_ups`](crate::prompts::Task::bare_for_follow_ups)).
    /// Every other question that reads the user's question shows it
    /// either way. Part of what is asked: turning it on records those
    /// follow-ups anew.
    ///
    /// ```
    /// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
    /// # use ragaliq::TransportError;
    /// # struct Canned;
    /// # impl Transport for Canned {
    /// #     fn provider(&self) -> &str { "canned" }
    /// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
    /// #         Box::pin(async { Ok(JudgeResponse::text("yes")) })
    /// #     }
    /// # }
    /// let judge = Judge::builder(Canned).with_follow_up_history(true).build().unwrap();
    /// assert!(judge.follow_up_history());
    /// ```
    pub fn with_follow_up_history(mut self, on: bool) -> Self {
        self.scoring.follow_up_history = on;
        self
    }

    /// How many times P(supported) P(contradicted) must reach for an
    /// unsupported claim to be contradicted (default 3: "contradicted" is
    /// said only when the judge's case for it clearly beats its case for
    /// support; `cargo ragaliq calibrate --fit` fits it with the claim
    /// threshold).
    pub fn with_contradiction_ratio(mut self, ratio: f64) -> Self {
        self.scoring.verification.contradiction_ratio = ratio;
        self
    }

    /// Claims are the response's sentences, with no judge call (`true`), or
    /// the atomic claims the judge extracts (`false`, the default).
    pub fn with_sentences_as_claims(mut self, sentences: bool) -> Self {
        self.scoring.verification.sentences = sentences;
        self
    }

    /// Passages longer than `chars` characters are asked about in chunks
    /// (whole passages, or sentences of a long one), and the chunk that
    /// supports a claim best decides it (default 0: never).
    pub fn with_chunk_chars(mut self, chars: usize) -> Self {
        self.scoring.verification.chunk_chars = chars;
        self
    }

    /// The model's price, for cost estimates and the budget.
    pub fn with_price(mut self, price: Price) -> Self {
        self.price = Some(price);
        self
    }

    /// Stops live calls once this many dollars are spent in the run. Without
    /// a price ([`with_price`](Self::with_price), or the model's in
    /// `cost.prices` or the built-in table) every live call is refused as a
    /// configuration error; replay needs no price.
    pub fn with_budget(mut self, dollars: f64) -> Self {
        self.budget = Some(dollars);
        self
    }

    /// Checks the settings and builds the judge, with a client of its own.
    pub fn build(self) -> Result<Judge, ConfigError> {
        let (client, asking, scoring) = self.into_parts()?;
        Ok(Judge::over(
            Session::new(Arc::new(client), Arc::new(asking)),
            scoring,
        ))
    }

    /// The checked settings: the client, how requests are written, and the
    /// metrics' defaults.
    pub(crate) fn into_parts(mut self) -> Result<(Client, Asking, Scoring), ConfigError> {
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
        for (name, value) in [("rpm", self.rates.rpm), ("tpm", self.rates.tpm)] {
            if let Some(v) = value
                && !(v > 0.0 && v.is_finite())
            {
                return Err(invalid(name, v.to_string(), "a number over 0 (per minute)"));
            }
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(invalid(
                "temperature",
                self.temperature.to_string(),
                "a number from 0 to 2",
            ));
        }
        if self.scoring.verification.batch == 0 {
            return Err(invalid(
                "verify_batch",
                "0".into(),
                "a whole number of claims, at least 1",
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
        if let Some(floor) = self.scoring.confidence_floor
            && !(0.0..=1.0).contains(&floor)
        {
            return Err(invalid(
                "confidence_floor",
                floor.to_string(),
                "a number from 0 to 1",
            ));
        }
        self.scoring
            .samples
            .check()
            .map_err(|e| invalid("samples", e.0, &e.1))?;
        if !(self.scoring.agreement > 0.5 && self.scoring.agreement <= 1.0) {
            return Err(invalid(
                "agreement",
                self.scoring.agreement.to_string(),
                "a share over 0.5 and up to 1 (0.6: 3 of 5 samples must agree)",
            ));
        }
        let budget = match self.budget {
            None => None,
            Some(budget) => {
                if !(budget.is_finite() && budget >= 0.0) {
                    return Err(invalid(
                        "budget",
                        budget.to_string(),
                        "a number of dollars, 0 or more",
                    ));
                }
                // Without a price the budget refuses live calls only:
                // replay spends nothing and needs none.
                Some(match self.price {
                    Some(price) => Budget::for_run(budget, price),
                    None => Budget::unpriced(budget, &self.model),
                })
            }
        };
        if let Some(price) = self.price.filter(|p| !p.is_valid()) {
            return Err(invalid(
                "price",
                format!("{price:?}"),
                "finite prices, 0 or more",
            ));
        }
        let dialect = if self.transport.provider() == "openai" {
            SchemaDialect::OpenAiStrict
        } else {
            SchemaDialect::Full
        };
        // The run's concurrency limit is one per server and model, whatever
        // else the judges of the run's processes configure.
        let run_key = format!(
            "{}|{}|{}",
            self.transport.provider(),
            self.transport.endpoint().unwrap_or_default(),
            self.model
        );
        // Anthropic returns no token probabilities: its yes/no answers are
        // read from the word, and asking for more would only change the
        // fingerprints.
        let probabilities = self.scoring.verification.strategy == Strategy::Probability
            && self.transport.provider() != "anthropic";
        if probabilities && self.scoring.samples.max() > 1 {
            return Err(invalid(
                "samples",
                self.scoring.samples.to_string(),
                crate::metrics::SAMPLES_UNDER_PROBABILITIES,
            ));
        }
        self.scoring.reads_probabilities = probabilities;
        let client = Client::new(
            self.transport,
            client::Settings {
                concurrency: self.concurrency,
                rates: self.rates,
                timeout: self.timeout,
                retry: self.retry,
                price: self.price,
                budget,
                json_mode: self.json_mode,
                run_key,
                collect: self.collect,
            },
        );
        let v = self.scoring.verification;
        for (name, p) in [
            ("claim_threshold", v.claim_threshold),
            ("passage_threshold", v.passage_threshold),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(invalid(name, p.to_string(), "a probability from 0 to 1"));
            }
        }
        if !(1.0..=100.0).contains(&v.contradiction_ratio) {
            return Err(invalid(
                "contradiction_ratio",
                v.contradiction_ratio.to_string(),
                "a ratio from 1 to 100",
            ));
        }
        let asking = Asking {
            model: self.model,
            temperature: self.temperature,
            probabilities,
            max_tokens: self.max_tokens,
            sized_max_tokens: self.sized_max_tokens,
            templates: self.templates.unwrap_or_default(),
            dialect,
        };
        Ok((client, asking, self.scoring))
    }
}

/// The transport a configuration describes.
fn transport_for(config: &Config) -> Arc<dyn Transport> {
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
