//! The [`Judge`]: an LLM that grades RAG answers.
//!
//! A judge is a thin facade: its settings, a session over the process's
//! client for its configuration, and the public metric methods. What a
//! custom judge needs is here too: the [`Transport`] trait, the request and
//! response types, and the transports ragaliq ships.

mod about;
mod builder;

pub use crate::client::Refusal;
pub use crate::core::{AUTO_BAND, DEFAULT_AGREEMENT};
pub use crate::core::{
    ApiKey, Fingerprint, JsonMode, JudgeRequest, JudgeResponse, Message, RateLimits, RateWindow,
    ResponseFormat, Role, StopReason, TokenLogprob, TopLogprob,
};
pub use crate::tasks::MAX_REASKS;
pub use crate::transport::limits;
pub use crate::transport::{
    ANTHROPIC_VERSION, AnthropicTransport, BoxFuture, OpenAiTransport, RetryPolicy, Transport,
    endpoint_label, refuses_response_format,
};
pub use builder::JudgeBuilder;

use crate::client;
use crate::config::Config;
use crate::core::{ConfigError, Evaluation, Metric, RagCase, Samples, Usage};
use crate::error::Result;
use crate::metrics::{self, EvalOptions, Scoring, Voted};
use crate::record::Recorder;
use crate::session::{Session, Tally};
use crate::tasks::Ask;
use std::fmt;
use std::sync::Arc;

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
    session: Session,
    scoring: Arc<Scoring>,
}

impl fmt::Debug for Judge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let client = self.session.client();
        f.debug_struct("Judge")
            .field("provider", &self.provider())
            .field("model", &self.model())
            .field("endpoint", &self.endpoint())
            .field("concurrency", &client.concurrency)
            .field("timeout", &client.timeout)
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
        let (client, asking, scoring) = builder.into_parts()?;
        let client = client::shared(key, move || client);
        Ok(Judge::over(Session::new(client, Arc::new(asking)), scoring))
    }

    fn over(session: Session, scoring: Scoring) -> Judge {
        Judge {
            session,
            scoring: Arc::new(scoring),
        }
    }

    /// A judge with the same settings and client that serves and records
    /// exchanges through `recorder`. Its usage adds to this judge's.
    #[must_use]
    pub fn with_recorder(&self, recorder: Arc<Recorder>) -> Judge {
        self.with_session(self.session.with_recorder(recorder))
    }

    /// A judge whose exchanges are marked in the recording as used by
    /// `trial` (a suite names each exchange's metrics this way), so a run
    /// that repeats only some trials replaces only their exchanges.
    #[must_use]
    pub fn for_trial(&self, trial: impl Into<String>) -> Judge {
        self.with_session(self.session.for_trial(trial.into()))
    }

    fn with_session(&self, session: Session) -> Judge {
        Judge {
            session,
            scoring: self.scoring.clone(),
        }
    }

    /// Faithfulness of the response to the context.
    ///
    /// Claim extraction (one call; none with sentences as claims), then one
    /// short question per claim and, for a claim not supported, whether the
    /// passages contradict it (with the JSON strategy: one batched
    /// verification per `verify_batch` claims, plus re-asks).
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

    /// Rank-weighted precision of the retrieved passages (one short question
    /// per passage; one call with the JSON strategy).
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
    /// #         let text = if r.task == "extract_claims" { r#"{"claims": ["Refunds take 30 days.", "Refunds are free."]}"# }
    /// #             else { r#"{"verdicts": [{"claim": 1, "evidence": "Refunds take 30 days.", "verdict": "supported"}, {"claim": 2, "evidence": "", "verdict": "no_evidence"}]}"# };
    /// #         Box::pin(async move { Ok(JudgeResponse::text(text)) })
    /// #     }
    /// # }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let judge = Judge::builder(Canned).with_strategy(ragaliq::Strategy::Json).build().unwrap();
    /// # let case = RagCase::new("How long do refunds take?")
    /// #     .context(["Refunds take 30 days."])
    /// #     .response("Refunds take 30 days. Refunds are free.");
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
        metrics::evaluate(&self.session, &self.scoring, metric, case, options).await
    }

    /// Labelled claims verified against their passages and voted over the
    /// judge's samples (for calibration).
    pub(crate) async fn verify_labelled(
        &self,
        claims: &[String],
        passages: &[String],
    ) -> Result<(Vec<Voted>, Usage)> {
        metrics::verify_labelled(&self.session, &self.scoring, claims, passages).await
    }

    /// The atomic claims of `text` (a response to `query`, or an expected
    /// answer), as the metrics take them: listed by the judge (one call,
    /// recorded and memoised like any other; claims it writes that are not
    /// in the text are left out), or the text's sentences when the judge
    /// takes sentences as claims (`[judge] claims = "sentences"`).
    ///
    /// ```
    /// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
    /// # use ragaliq::TransportError;
    /// # struct Canned;
    /// # impl Transport for Canned {
    /// #     fn provider(&self) -> &str { "canned" }
    /// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
    /// #         Box::pin(async { Ok(JudgeResponse::text(r#"{"claims": ["Refunds take 30 days.", "Refunds are free."]}"#)) })
    /// #     }
    /// # }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let judge = Judge::builder(Canned).build().unwrap();
    /// let claims = judge
    ///     .extract_claims("How do refunds work?", "Refunds take 30 days and are free.")
    ///     .await
    ///     .unwrap();
    /// assert_eq!(claims, ["Refunds take 30 days.", "Refunds are free."]);
    /// let sentences = Judge::builder(Canned).with_sentences_as_claims(true).build().unwrap();
    /// let claims = sentences.extract_claims("Why?", "It rains. Is it cold? Yes.").await.unwrap();
    /// assert_eq!(claims, ["It rains.", "Yes."]);
    /// assert_eq!(sentences.usage().calls, 0);
    /// # });
    /// ```
    pub async fn extract_claims(&self, query: &str, text: &str) -> Result<Vec<String>> {
        metrics::extract_claims(&self.session, &self.scoring, query, text)
            .await
            .map(|(claims, _)| claims)
    }

    /// A labelled answer's relevance (for calibration), every sample asked.
    pub(crate) async fn relevance_labelled(
        &self,
        query: &str,
        response: &str,
    ) -> Result<Evaluation> {
        let case = RagCase::new(query).response(response);
        let options = EvalOptions::default().with_samples(Samples::Fixed(self.samples().max()));
        self.evaluate_with(Metric::Relevance, &case, &options).await
    }

    /// A labelled passage's relevance (for calibration): context precision
    /// over that one passage, every sample asked.
    pub(crate) async fn passage_labelled(&self, query: &str, passage: &str) -> Result<Evaluation> {
        let case = RagCase::new(query).context([passage]);
        let options = EvalOptions::default().with_samples(Samples::Fixed(self.samples().max()));
        self.evaluate_with(Metric::ContextPrecision, &case, &options)
            .await
    }

    /// P(relevant) at or above which a passage is relevant (short
    /// questions).
    #[must_use]
    pub fn passage_threshold(&self) -> f64 {
        self.scoring.verification.passage_threshold
    }

    /// Asks one task outside any metric (case generation); its usage counts
    /// for this judge.
    pub(crate) async fn ask<A: Ask>(&self, ask: &A) -> Result<A::Answer> {
        self.session.ask(&Tally::default(), ask, 0).await
    }
}
