//! The judge's metric methods: each evaluates one case, through the
//! judge's session (recording, memo, budget, pace, samples).

use super::Judge;
use crate::core::{Criteria, Evaluation, Gradable, Metric};
#[cfg(feature = "calibration")]
use crate::core::{Samples, Usage};
use crate::error::Result;
#[cfg(feature = "calibration")]
use crate::metrics::Voted;
use crate::metrics::{self, CustomMetric, EvalOptions, Subject};
#[cfg(feature = "generate")]
use crate::{session::Tally, tasks::Ask};

impl Judge {
    /// Faithfulness of the response to the context.
    ///
    /// Claim extraction (one call; none with sentences as claims), then one
    /// short question per claim and, for a claim not supported, whether the
    /// passages contradict it (with the JSON strategy: one batched
    /// verification per `verify_batch` claims, plus re-asks).
    pub async fn faithfulness(&self, case: &(impl Gradable + ?Sized)) -> Result<Evaluation> {
        self.evaluate(Metric::Faithfulness, case).await
    }

    /// Hallucination: the share of claims that are not hallucinated. Shares
    /// its calls with [`faithfulness`](Self::faithfulness) on the same case.
    pub async fn hallucination(&self, case: &(impl Gradable + ?Sized)) -> Result<Evaluation> {
        self.evaluate(Metric::Hallucination, case).await
    }

    /// How well the response answers the query (one call).
    pub async fn relevance(&self, case: &(impl Gradable + ?Sized)) -> Result<Evaluation> {
        self.evaluate(Metric::Relevance, case).await
    }

    /// Rank-weighted precision of the retrieved passages (one short question
    /// per passage; one call with the JSON strategy).
    pub async fn context_precision(&self, case: &(impl Gradable + ?Sized)) -> Result<Evaluation> {
        self.evaluate(Metric::ContextPrecision, case).await
    }

    /// Share of the expected facts the context covers.
    pub async fn context_recall(&self, case: &(impl Gradable + ?Sized)) -> Result<Evaluation> {
        self.evaluate(Metric::ContextRecall, case).await
    }

    /// Answer correctness: the response graded against the case's expected
    /// answer. By default ([`Correctness::Direct`](crate::Correctness)) one
    /// question per answer: does the response give the same answer to the
    /// question as the expected answer, without contradicting it? The score
    /// is P(yes) (1 or 0 from the word written), passing at 0.5 by default;
    /// [`Evaluation::graded`] says what the judge was shown and where the
    /// expected answer's words were found in the response. Found, and not
    /// denied in their clause, they decide the answer correct with no call
    /// (the found rule); denied, the judge is asked.
    ///
    /// Claims both ways, when [`EvalOptions::with_correctness`] or
    /// `scoring.correctness` asks for `f1` (or `claims`), `precision` or
    /// `recall`: the response's claims checked against the reference
    /// (precision: what it says that the reference backs) and the
    /// reference's claims against it (recall: what of the reference it
    /// says); one extraction per text (the response's is shared with
    /// faithfulness, the reference's with context recall), then one short
    /// question per claim of each (the JSON prompts: one batch per
    /// `verify_batch` claims of each).
    ///
    /// ```
    /// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
    /// # use ragaliq::{Correctness, EvalOptions, Metric, RagCase, TransportError};
    /// # struct Canned;
    /// # impl Transport for Canned {
    /// #     fn provider(&self) -> &str { "canned" }
    /// #     fn complete<'a>(&'a self, r: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
    /// #         let user = &r.messages[0].content;
    /// #         let text = match r.task.as_str() {
    /// #             "extract_claims" if user.contains("14 days") => r#"{"claims": ["Refunds take 14 days."]}"#,
    /// #             "extract_claims" => r#"{"claims": ["Refunds take 30 days.", "Refunds go to the card."]}"#,
    /// #             _ => "no",
    /// #         };
    /// #         Box::pin(async move { Ok(JudgeResponse::text(text)) })
    /// #     }
    /// # }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let judge = Judge::builder(Canned).build().unwrap();
    /// let case = RagCase::new("How long do refunds take?")
    ///     .response("Refunds take 14 days.")
    ///     .expected_answer("Refunds take 30 days and go to the card.");
    /// let eval = judge.correctness(&case).await.unwrap();
    /// assert_eq!((eval.score, eval.usage.calls), (0.0, 1));
    /// assert!(!eval.passed);
    /// let options = EvalOptions::default().with_correctness(Correctness::F1);
    /// let eval = judge.evaluate_with(Metric::Correctness, &case, &options).await.unwrap();
    /// assert_eq!((eval.precision, eval.recall), (Some(0.0), Some(0.0)));
    /// # });
    /// ```
    pub async fn correctness(&self, case: &(impl Gradable + ?Sized)) -> Result<Evaluation> {
        self.evaluate(Metric::Correctness, case).await
    }

    /// Whether the response meets `criteria`, a team's own rule in plain
    /// words (a `&str`, or a [`Criteria`] for the scored form, a name, or
    /// the passages shown). The failure message quotes the judge's reason.
    ///
    /// Calls: one (yes/no); scored, one more per criteria text for its
    /// evaluation steps, shared by every case with the same criteria.
    ///
    /// ```
    /// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
    /// # use ragaliq::{RagCase, TransportError};
    /// # struct Canned;
    /// # impl Transport for Canned {
    /// #     fn provider(&self) -> &str { "canned" }
    /// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
    /// #         Box::pin(async { Ok(JudgeResponse::text("no. It promises a full refund.")) })
    /// #     }
    /// # }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let judge = Judge::builder(Canned).build().unwrap();
    /// let case = RagCase::new("Can I get my money back?")
    ///     .response("Yes, we will refund you in full, no questions asked.");
    /// let eval = judge
    ///     .criteria(&case, "Never promises a refund")
    ///     .await
    ///     .unwrap();
    /// assert!(!eval.passed);
    /// assert!(eval.reasoning.contains("It promises a full refund."));
    /// # });
    /// ```
    pub async fn criteria(
        &self,
        case: &(impl Gradable + ?Sized),
        criteria: impl Into<Criteria>,
    ) -> Result<Evaluation> {
        self.criteria_with(case, criteria, &EvalOptions::default())
            .await
    }

    /// [`criteria`](Self::criteria) with `options` overriding the defaults.
    pub async fn criteria_with(
        &self,
        case: &(impl Gradable + ?Sized),
        criteria: impl Into<Criteria>,
        options: &EvalOptions,
    ) -> Result<Evaluation> {
        let criteria = criteria.into();
        metrics::evaluate(
            self.judges(),
            Subject::Criteria(&criteria),
            case.assessed(),
            options,
        )
        .await
    }

    /// A metric of one's own ([`CustomMetric`]) on `case`.
    pub async fn custom(
        &self,
        metric: &CustomMetric,
        case: &(impl Gradable + ?Sized),
    ) -> Result<Evaluation> {
        self.custom_with(metric, case, &EvalOptions::default())
            .await
    }

    /// [`custom`](Self::custom) with `options` overriding the defaults.
    pub async fn custom_with(
        &self,
        metric: &CustomMetric,
        case: &(impl Gradable + ?Sized),
        options: &EvalOptions,
    ) -> Result<Evaluation> {
        metrics::evaluate(
            self.judges(),
            Subject::Custom(metric),
            case.assessed(),
            options,
        )
        .await
    }

    /// Abstention: a turn whose passages cannot answer it is answered by
    /// saying so, not by inventing. Per turn, whether the passages answer
    /// the question (the turn's `answerable` label, else one question) and
    /// whether the response says it cannot answer (one question); the
    /// score is 1 where the passages answer it, else P(yes) that it says
    /// so. On a conversation, every turn.
    pub async fn abstention(&self, case: &(impl Gradable + ?Sized)) -> Result<Evaluation> {
        self.evaluate(Metric::Abstention, case).await
    }

    /// Consistency: no answer contradicts an earlier answer of the
    /// conversation. Per follow-up turn, one question with the earlier
    /// turns the judge is shown; the score is 1 − P(yes) that it
    /// contradicts them (a first turn passes with no call).
    ///
    /// ```
    /// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
    /// # use ragaliq::{Conversation, TransportError, Turn};
    /// # struct Canned;
    /// # impl Transport for Canned {
    /// #     fn provider(&self) -> &str { "canned" }
    /// #     fn complete<'a>(&'a self, r: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
    /// #         let text = if r.messages[0].content.contains("14 days") { "yes" } else { "no" };
    /// #         Box::pin(async move { Ok(JudgeResponse::text(text)) })
    /// #     }
    /// # }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let judge = Judge::builder(Canned).build().unwrap();
    /// let conversation = Conversation::new([
    ///     Turn::new("Can I return a jacket?").response("Yes, within 30 days of delivery."),
    ///     Turn::new("And shoes?").response("Shoes too, within 14 days of delivery."),
    /// ]);
    /// let eval = judge.consistency(&conversation).await.unwrap();
    /// assert!(!eval.passed);
    /// assert_eq!(eval.turns[0].score, 1.0, "a first turn contradicts nothing");
    /// assert_eq!(eval.turns[1].score, 0.0);
    /// assert_eq!(judge.usage().calls, 1);
    /// # });
    /// ```
    pub async fn consistency(&self, case: &(impl Gradable + ?Sized)) -> Result<Evaluation> {
        self.evaluate(Metric::Consistency, case).await
    }

    /// Retention: what the user said earlier is not asked again or
    /// contradicted. Per follow-up turn, one question with the earlier
    /// turns the judge is shown; the score is 1 − P(yes) (a first turn
    /// passes with no call).
    pub async fn retention(&self, case: &(impl Gradable + ?Sized)) -> Result<Evaluation> {
        self.evaluate(Metric::Retention, case).await
    }

    /// One claim checked against `passages`, as every metric that verifies
    /// claims checks them: its verdict, the probability it was read with
    /// and the passage sentence closest to it. The piece to build an
    /// evaluator of one's own from.
    ///
    /// ```
    /// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
    /// # use ragaliq::{TransportError, Verdict};
    /// # struct Canned;
    /// # impl Transport for Canned {
    /// #     fn provider(&self) -> &str { "canned" }
    /// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
    /// #         Box::pin(async { Ok(JudgeResponse::text("yes")) })
    /// #     }
    /// # }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let judge = Judge::builder(Canned).build().unwrap();
    /// let v = judge
    ///     .verify_claim("Refunds take 30 days.", &["Refunds are accepted within 30 days.".into()])
    ///     .await
    ///     .unwrap();
    /// assert_eq!(v.verdict, Verdict::Supported);
    /// # });
    /// ```
    pub async fn verify_claim(
        &self,
        claim: &str,
        passages: &[String],
    ) -> Result<crate::core::ClaimVerdict> {
        metrics::verify_claim(&self.session, &self.scoring, claim, passages).await
    }

    /// `metric` on `case` (a [`RagCase`](crate::RagCase), a [`Conversation`](crate::Conversation),
    /// or one turn of it) with the judge's default threshold and weights.
    pub async fn evaluate(
        &self,
        metric: Metric,
        case: &(impl Gradable + ?Sized),
    ) -> Result<Evaluation> {
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
        case: &(impl Gradable + ?Sized),
        options: &EvalOptions,
    ) -> Result<Evaluation> {
        metrics::evaluate(
            self.judges(),
            metrics::Subject::Metric(metric),
            case.assessed(),
            options,
        )
        .await
    }

    #[cfg(feature = "calibration")]
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

    #[cfg(feature = "calibration")]
    /// A labelled answer's relevance (for calibration), every sample asked.
    pub(crate) async fn relevance_labelled(
        &self,
        query: &str,
        response: &str,
    ) -> Result<Evaluation> {
        let case = crate::core::RagCase::new(query).response(response);
        // Calibration reads the judge's reading at the threshold; what its
        // band would leave to a person is counted apart (`by the band`).
        let options = EvalOptions::default()
            .with_samples(Samples::Fixed(self.samples().max()))
            .with_uncertain(crate::Uncertain::Decide);
        self.evaluate_with(Metric::Relevance, &case, &options).await
    }

    #[cfg(feature = "calibration")]
    /// A labelled answer's correctness against its reference (for
    /// calibration), every sample asked.
    pub(crate) async fn correctness_labelled(
        &self,
        query: &str,
        response: &str,
        reference: &str,
    ) -> Result<Evaluation> {
        let case = crate::core::RagCase::new(query)
            .response(response)
            .expected_answer(reference);
        // Calibration reads the judge's reading at the threshold; what its
        // band would leave to a person is counted apart (`by the band`).
        let options = EvalOptions::default()
            .with_samples(Samples::Fixed(self.samples().max()))
            .with_uncertain(crate::Uncertain::Decide);
        self.evaluate_with(Metric::Correctness, &case, &options)
            .await
    }

    #[cfg(feature = "calibration")]
    /// A labelled response judged against its criteria (for calibration),
    /// in the judge's criteria form, every sample asked. The passages are
    /// shown when the item has them.
    pub(crate) async fn criteria_labelled(
        &self,
        query: &str,
        passages: &[String],
        response: &str,
        criteria: &str,
    ) -> Result<Evaluation> {
        let case = crate::core::RagCase::new(query)
            .context(passages.to_vec())
            .response(response);
        let criteria = Criteria::new(criteria)
            .with_form(self.scoring.criteria_form)
            .with_context(!passages.is_empty());
        // Calibration reads the judge's reading at the threshold; what its
        // band would leave to a person is counted apart (`by the band`).
        let options = EvalOptions::default()
            .with_samples(Samples::Fixed(self.samples().max()))
            .with_uncertain(crate::Uncertain::Decide);
        self.criteria_with(&case, criteria, &options).await
    }

    #[cfg(feature = "calibration")]
    /// A labelled passage's relevance (for calibration): context precision
    /// over that one passage, every sample asked.
    pub(crate) async fn passage_labelled(&self, query: &str, passage: &str) -> Result<Evaluation> {
        let case = crate::core::RagCase::new(query).context([passage]);
        // Calibration reads the judge's reading at the threshold; what its
        // band would leave to a person is counted apart (`by the band`).
        let options = EvalOptions::default()
            .with_samples(Samples::Fixed(self.samples().max()))
            .with_uncertain(crate::Uncertain::Decide);
        self.evaluate_with(Metric::ContextPrecision, &case, &options)
            .await
    }

    /// P(relevant) at or above which a passage is relevant (short
    /// questions).
    #[must_use]
    pub fn passage_threshold(&self) -> f64 {
        self.scoring.verification.passage_threshold
    }

    #[cfg(feature = "generate")]
    /// Asks one task outside any metric (case generation); its usage counts
    /// for this judge.
    pub(crate) async fn ask<A: Ask>(&self, ask: &A) -> Result<A::Answer> {
        self.session.ask(&Tally::default(), ask, 0).await
    }
}
