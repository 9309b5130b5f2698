//! The assertion macros: `assert_faithful!`, `assert_no_hallucination!`,
//! `assert_relevant!`, `assert_context_precision!`, `assert_context_recall!`,
//! `assert_correct!`, `assert_judged!` (criteria), `assert_metric!` (a
//! metric of one's own), the conversation checks `assert_abstains!`,
//! `assert_consistent!` and `assert_remembers!`, and `assert_caught!` for
//! answers that must fail;
//! and `assert_retrieved!`, which asks no judge (retrieval against labels).
//!
//! Each takes `(judge, case)` and options written `name = value`, must be
//! used inside an async function (it awaits), returns the
//! [`Evaluation`](crate::Evaluation) when it is as expected, and panics with
//! a review-like message when it is not. Three outcomes read differently: a
//! low score (`… failed for case …` and the claims at fault), a judge that
//! could not answer (`… could not evaluate …: the judge failed (this is not a
//! low score)`), and a configuration error (`… configuration error …`: the
//! case or an option cannot be scored this way). A fourth, `… AWAITING A
//! PERSON …`: the judge is unsure (its reading lies in its uncertainty
//! band, its samples split, or its evidence is in no passage), no stronger
//! judge of the cascade decided, and counted with the unsure items each way
//! the score falls on both sides of the threshold; the message gives the
//! command that records a person's verdict. A fifth, `… undecided …`: the
//! judge listed no claim in a response that states something.
//!
//! Every macro also takes `uncertain = "fail"` (the default from
//! `[scoring] uncertain`: the test awaits a person and fails meanwhile),
//! `"pass"` (it awaits a person and passes meanwhile, said on stderr) or
//! `"decide"` (the threshold decides, as if there were no band), or an
//! [`Uncertain`](crate::Uncertain).
//!
//! A misspelled or duplicated option is a compile error at the option that
//! lists the options the macro takes (and the nearest one, for a typo).
//!
//! `samples` above 1 (`samples = 5`, `samples = "auto"`) needs a judge that
//! samples: `strategy = "word"` or `"json"`, with a `temperature` above 0.
//! Under the default `strategy = "probability"` each answer is read from
//! token probabilities, the same at every asking, and more samples are a
//! configuration error (`… configuration error …: samples = "5" is
//! invalid: expected 1 here …`).

/// Asserts the response is faithful to the context (default threshold 0.7).
///
/// Options: `threshold = f64`, `weights = VerdictWeights` (e.g.
/// `VerdictWeights::STRICT`), `samples = 5` or `samples = "auto"` (above 1
/// only for a judge that samples: see [`Samples`](crate::Samples)),
/// `agreement = f64`.
///
/// ```
/// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
/// # use ragaliq::{RagCase, TransportError, VerdictWeights, assert_faithful};
/// # struct Canned;
/// # impl Transport for Canned {
/// #     fn provider(&self) -> &str { "canned" }
/// #     fn complete<'a>(&'a self, r: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
/// #         let text = if r.task == "extract_claims" { r#"{"claims": ["Refunds take 30 days."]}"# }
/// #             else { r#"{"evidence": "Refunds take 30 days.", "verdict": "supported", "confidence": 0.9}"# };
/// #         Box::pin(async move { Ok(JudgeResponse::text(text)) })
/// #     }
/// # }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let judge = Judge::builder(Canned).with_strategy(ragaliq::Strategy::Json).build().unwrap();
/// let case = RagCase::new("How long do refunds take?")
///     .context(["Refunds take 30 days."])
///     .response("Refunds take 30 days.");
/// let eval = assert_faithful!(judge, case, threshold = 0.9, weights = VerdictWeights::STRICT);
/// assert_eq!(eval.score, 1.0);
/// # });
/// ```
#[macro_export]
macro_rules! assert_faithful {
    ($judge:expr, $case:expr $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_faithful, $crate::Metric::Faithfulness, Pass, $judge, $case,
            $crate::__private::__assertion_options!(assert_faithful, $crate::__private::FaithfulnessOptions, [threshold, weights, samples, agreement, uncertain] $(, $key = $value)*))
    };
}

/// Asserts the response does not hallucinate (default threshold 0.8).
///
/// Options: `threshold = f64`, `confidence_floor = f64` (none by default:
/// a claim is hallucinated when it is not supported; with a floor, a
/// supported claim whose P(supported) is under it counts too), `samples`
/// ([`Samples`](crate::Samples): above 1 only for a judge that samples),
/// `agreement`.
///
/// ```
/// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
/// # use ragaliq::{RagCase, TransportError, assert_no_hallucination};
/// # struct Canned;
/// # impl Transport for Canned {
/// #     fn provider(&self) -> &str { "canned" }
/// #     fn complete<'a>(&'a self, r: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
/// #         let text = if r.task == "extract_claims" { r#"{"claims": ["Refunds take 30 days."]}"# }
/// #             else { r#"{"evidence": "Refunds take 30 days.", "verdict": "supported", "confidence": 0.95}"# };
/// #         Box::pin(async move { Ok(JudgeResponse::text(text)) })
/// #     }
/// # }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let judge = Judge::builder(Canned).with_strategy(ragaliq::Strategy::Json).build().unwrap();
/// let case = RagCase::new("How long do refunds take?")
///     .context(["Refunds take 30 days."])
///     .response("Refunds take 30 days.");
/// let eval = assert_no_hallucination!(judge, case, threshold = 1.0, confidence_floor = 0.9);
/// assert_eq!(eval.score, 1.0);
/// # });
/// ```
#[macro_export]
macro_rules! assert_no_hallucination {
    ($judge:expr, $case:expr $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_no_hallucination, $crate::Metric::Hallucination, Pass, $judge, $case,
            $crate::__private::__assertion_options!(assert_no_hallucination, $crate::__private::HallucinationOptions, [threshold, confidence_floor, samples, agreement, uncertain] $(, $key = $value)*))
    };
}

/// Asserts the response answers the query (default threshold 0.7).
///
/// Options: `threshold = f64`, `samples` ([`Samples`](crate::Samples): above 1
/// only for a judge that samples), `agreement`.
///
/// ```
/// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
/// # use ragaliq::{RagCase, TransportError, assert_relevant};
/// # struct Canned;
/// # impl Transport for Canned {
/// #     fn provider(&self) -> &str { "canned" }
/// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
/// #         Box::pin(async { Ok(JudgeResponse::text(r#"{"reasoning": "Answers it.", "score": 0.9}"#)) })
/// #     }
/// # }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let judge = Judge::builder(Canned).with_strategy(ragaliq::Strategy::Json).build().unwrap();
/// let case = RagCase::new("How long?").response("30 days.");
/// let eval = assert_relevant!(judge, case, threshold = 0.8);
/// assert_eq!(eval.score, 0.9);
/// # });
/// ```
#[macro_export]
macro_rules! assert_relevant {
    ($judge:expr, $case:expr $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_relevant, $crate::Metric::Relevance, Pass, $judge, $case,
            $crate::__private::__assertion_options!(assert_relevant, $crate::__private::RelevanceOptions, [threshold, samples, agreement, uncertain] $(, $key = $value)*))
    };
}

/// Asserts the relevant passages are retrieved and ranked first (default
/// threshold 0.7). The case needs at least one passage.
///
/// Options: `threshold = f64`, `samples` ([`Samples`](crate::Samples): above 1
/// only for a judge that samples), `agreement`.
///
/// ```
/// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
/// # use ragaliq::{RagCase, TransportError, assert_context_precision};
/// # struct Canned;
/// # impl Transport for Canned {
/// #     fn provider(&self) -> &str { "canned" }
/// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
/// #         Box::pin(async { Ok(JudgeResponse::text(r#"{"verdicts": [{"passage": 1, "relevant": true, "reason": "on topic"}, {"passage": 2, "relevant": false, "reason": "off topic"}]}"#)) })
/// #     }
/// # }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let judge = Judge::builder(Canned).with_strategy(ragaliq::Strategy::Json).build().unwrap();
/// let case = RagCase::new("How long?").context(["Refunds: 30 days.", "Stores open at nine."]);
/// let eval = assert_context_precision!(judge, case);
/// assert_eq!(eval.score, 1.0); // the relevant passage is ranked first
/// # });
/// ```
#[macro_export]
macro_rules! assert_context_precision {
    ($judge:expr, $case:expr $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_context_precision, $crate::Metric::ContextPrecision, Pass, $judge, $case,
            $crate::__private::__assertion_options!(assert_context_precision, $crate::__private::ContextPrecisionOptions, [threshold, samples, agreement, uncertain] $(, $key = $value)*))
    };
}

/// Asserts the context holds the expected facts (default threshold 0.7).
/// The case needs expected facts or an expected answer.
///
/// Options: `threshold = f64`, `samples` ([`Samples`](crate::Samples): above 1
/// only for a judge that samples), `agreement`.
///
/// ```
/// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
/// # use ragaliq::{RagCase, TransportError, assert_context_recall};
/// # struct Canned;
/// # impl Transport for Canned {
/// #     fn provider(&self) -> &str { "canned" }
/// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
/// #         Box::pin(async { Ok(JudgeResponse::text(r#"{"verdicts": [{"claim": 1, "verdict": "supported", "evidence": "30 days", "confidence": 0.9}]}"#)) })
/// #     }
/// # }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let judge = Judge::builder(Canned).with_strategy(ragaliq::Strategy::Json).build().unwrap();
/// let case = RagCase::new("How long?")
///     .context(["Refunds are accepted within 30 days."])
///     .expected_facts(["The refund window is 30 days."]);
/// assert_context_recall!(judge, case, threshold = 1.0);
/// # });
/// ```
#[macro_export]
macro_rules! assert_context_recall {
    ($judge:expr, $case:expr $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_context_recall, $crate::Metric::ContextRecall, Pass, $judge, $case,
            $crate::__private::__assertion_options!(assert_context_recall, $crate::__private::ContextRecallOptions, [threshold, samples, agreement, uncertain] $(, $key = $value)*))
    };
}

/// Asserts the response is correct against the case's expected answer
/// (default threshold 0.5). By default the judge is asked one question
/// (does the response give the expected answer without contradicting it?)
/// and the score is P(yes); a failure shows the question, the expected
/// answer, the response, and whether the expected answer's words were
/// found in it (evidence, never the verdict: "It is not 30 days" holds
/// "30 days").
///
/// Options: `threshold = f64`, `correctness = Correctness::F1` (claims
/// checked both ways, each contradiction quoted from both sides; or
/// `Precision`, `Recall`; default `Direct`), `samples`
/// ([`Samples`](crate::Samples): above 1 only for a judge that samples),
/// `agreement`.
///
/// ```
/// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
/// # use ragaliq::{Correctness, RagCase, TransportError, assert_correct};
/// # struct Canned;
/// # impl Transport for Canned {
/// #     fn provider(&self) -> &str { "canned" }
/// #     fn complete<'a>(&'a self, r: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
/// #         let text = if r.task == "extract_claims" { r#"{"claims": ["Refunds take 30 days."]}"# } else { "yes" };
/// #         Box::pin(async move { Ok(JudgeResponse::text(text)) })
/// #     }
/// # }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let judge = Judge::builder(Canned).build().unwrap();
/// let case = RagCase::new("How long do refunds take?")
///     .response("Refunds take 30 days.")
///     .expected_answer("Refunds take 30 days.");
/// let eval = assert_correct!(judge, case, correctness = Correctness::Recall);
/// assert_eq!(eval.score, 1.0);
/// # });
/// ```
#[macro_export]
macro_rules! assert_correct {
    ($judge:expr, $case:expr $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_correct, $crate::Metric::Correctness, Pass, $judge, $case,
            $crate::__private::__assertion_options!(assert_correct, $crate::__private::CorrectnessOptions, [threshold, correctness, samples, agreement, uncertain] $(, $key = $value)*))
    };
}

/// Asserts a turn whose passages cannot answer it is answered by saying
/// so, not by inventing (default threshold 0.5). On a
/// [`Conversation`](crate::Conversation), every turn; on
/// `conversation.turn(n)`, that turn. Per turn: whether the passages
/// answer the question (the turn's `answerable` label, or one question),
/// and P(yes) that the response says it cannot answer; a turn whose
/// passages answer it passes. A failure names the turn, quotes its answer
/// and says what the judge read of each question.
///
/// Options: `threshold = f64`, `samples`, `agreement`, `uncertain`.
///
/// ```
/// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
/// # use ragaliq::{Conversation, TransportError, Turn, assert_abstains};
/// # struct Canned;
/// # impl Transport for Canned {
/// #     fn provider(&self) -> &str { "canned" }
/// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
/// #         Box::pin(async { Ok(JudgeResponse::text("yes")) })
/// #     }
/// # }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let judge = Judge::builder(Canned).build().unwrap();
/// let conversation = Conversation::new([
///     Turn::new("Can I return a jacket?")
///         .context(["Jackets can be returned within 30 days."])
///         .response("Yes, within 30 days."),
///     Turn::new("How much is shipping to Canada?")
///         .context(["Jackets can be returned within 30 days."])
///         .answerable(false)
///         .response("I don't know: the policy does not say."),
/// ]);
/// let eval = assert_abstains!(judge, conversation.turn(2));
/// assert_eq!(eval.score, 1.0);
/// # });
/// ```
#[macro_export]
macro_rules! assert_abstains {
    ($judge:expr, $case:expr $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_abstains, $crate::Metric::Abstention, Pass, $judge, $case,
            $crate::__private::__assertion_options!(assert_abstains, $crate::__private::AbstentionOptions, [threshold, samples, agreement, uncertain] $(, $key = $value)*))
    };
}

/// Asserts no answer of a conversation contradicts an earlier answer
/// (default threshold 0.5): per follow-up turn, 1 − P(yes) that the
/// response contradicts what the assistant said earlier, asked with the
/// earlier turns the judge is shown ([`Window`](crate::Window)); a first
/// turn passes with no call. A failure names the turn, quotes its answer
/// and the closest earlier sentence, and shows the history the judge was
/// given.
///
/// Options: `threshold = f64`, `samples`, `agreement`, `uncertain`.
///
/// ```
/// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
/// # use ragaliq::{Conversation, TransportError, Turn, assert_consistent};
/// # struct Canned;
/// # impl Transport for Canned {
/// #     fn provider(&self) -> &str { "canned" }
/// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
/// #         Box::pin(async { Ok(JudgeResponse::text("no")) })
/// #     }
/// # }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let judge = Judge::builder(Canned).build().unwrap();
/// let conversation = Conversation::new([
///     Turn::new("Can I return a jacket?").response("Yes, within 30 days."),
///     Turn::new("And a coat?").response("Coats too, within 30 days."),
/// ]);
/// let eval = assert_consistent!(judge, conversation);
/// assert_eq!(eval.turns.len(), 2);
/// # });
/// ```
#[macro_export]
macro_rules! assert_consistent {
    ($judge:expr, $case:expr $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_consistent, $crate::Metric::Consistency, Pass, $judge, $case,
            $crate::__private::__assertion_options!(assert_consistent, $crate::__private::ConsistencyOptions, [threshold, samples, agreement, uncertain] $(, $key = $value)*))
    };
}

/// Asserts what the user said earlier in a conversation is neither asked
/// again nor contradicted (default threshold 0.5): per follow-up turn,
/// 1 − P(yes) that the response does either, asked with the earlier turns
/// the judge is shown; a first turn passes with no call. A failure names
/// the turn, quotes its answer and the closest earlier thing the user
/// said.
///
/// Options: `threshold = f64`, `samples`, `agreement`, `uncertain`.
///
/// ```
/// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
/// # use ragaliq::{Conversation, TransportError, Turn, assert_remembers};
/// # struct Canned;
/// # impl Transport for Canned {
/// #     fn provider(&self) -> &str { "canned" }
/// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
/// #         Box::pin(async { Ok(JudgeResponse::text("no")) })
/// #     }
/// # }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let judge = Judge::builder(Canned).build().unwrap();
/// let conversation = Conversation::new([
///     Turn::new("My order number is 4417. Where is it?").response("Order 4417 ships today."),
///     Turn::new("When will it arrive?").response("Order 4417 arrives on Friday."),
/// ]);
/// assert_remembers!(judge, conversation);
/// # });
/// ```
#[macro_export]
macro_rules! assert_remembers {
    ($judge:expr, $case:expr $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_remembers, $crate::Metric::Retention, Pass, $judge, $case,
            $crate::__private::__assertion_options!(assert_remembers, $crate::__private::RetentionOptions, [threshold, samples, agreement, uncertain] $(, $key = $value)*))
    };
}

/// Asserts the response meets criteria in plain words (default threshold
/// 0.45): a `&str` is judged yes or no (P(yes) from the answer word); a
/// [`Criteria::scored`](crate::Criteria::scored) is scored 1 to 5 after
/// evaluation steps written once per criteria text (G-Eval). The failure
/// message quotes the judge's reason.
///
/// Options: `threshold = f64`, `samples` ([`Samples`](crate::Samples): above 1
/// only for a judge that samples), `agreement`.
///
/// ```
/// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
/// # use ragaliq::{Criteria, RagCase, TransportError, assert_judged};
/// # struct Canned;
/// # impl Transport for Canned {
/// #     fn provider(&self) -> &str { "canned" }
/// #     fn complete<'a>(&'a self, r: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
/// #         let text = match r.task.as_str() {
/// #             "criteria_steps" => r#"{"steps": ["Find the policy number.", "Look for any promise of a refund."]}"#,
/// #             "criteria_score" => "5. It cites policy 4.2 and promises nothing.",
/// #             _ => "yes. It cites policy 4.2.",
/// #         };
/// #         Box::pin(async move { Ok(JudgeResponse::text(text)) })
/// #     }
/// # }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let judge = Judge::builder(Canned).build().unwrap();
/// let case = RagCase::new("Can I return this?")
///     .response("Returns follow policy 4.2: within 30 days, with the receipt.");
/// assert_judged!(judge, case, "Cites the policy number and never promises a refund");
/// let eval = assert_judged!(
///     judge,
///     case,
///     Criteria::scored("Cites the policy number and never promises a refund"),
///     threshold = 0.8
/// );
/// assert_eq!(eval.score, 1.0);
/// # });
/// ```
#[macro_export]
macro_rules! assert_judged {
    ($judge:expr, $case:expr, $criteria:expr $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_judged, $crate::__private::criteria($criteria), Pass, $judge, $case,
            $crate::__private::__assertion_options!(assert_judged, $crate::__private::CriteriaOptions, [threshold, samples, agreement, uncertain] $(, $key = $value)*))
    };
}

/// Asserts a metric of one's own ([`CustomMetric`](crate::CustomMetric))
/// passes (its own threshold, default 0.7).
///
/// Options: `threshold = f64`, `samples` ([`Samples`](crate::Samples): above 1
/// only for a judge that samples), `agreement`.
///
/// ```
/// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
/// # use ragaliq::{CustomMetric, RagCase, TransportError, assert_metric};
/// # struct Canned;
/// # impl Transport for Canned {
/// #     fn provider(&self) -> &str { "canned" }
/// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
/// #         Box::pin(async { Ok(JudgeResponse::text("yes. It thanks the customer.")) })
/// #     }
/// # }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let judge = Judge::builder(Canned).build().unwrap();
/// let polite = CustomMetric::new(
///     "polite",
///     "<response>{{response}}</response>\n\nIs the response polite? Answer \"yes\" or \"no\" first, then give your reason in one sentence.",
/// )
/// .unwrap();
/// let case = RagCase::new("Where is my order?").response("Thanks for asking! It ships today.");
/// let eval = assert_metric!(judge, case, &polite);
/// assert_eq!(eval.title(), "polite");
/// # });
/// ```
#[macro_export]
macro_rules! assert_metric {
    ($judge:expr, $case:expr, $metric:expr $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_metric, $crate::__private::custom($metric), Pass, $judge, $case,
            $crate::__private::__assertion_options!(assert_metric, $crate::__private::CustomOptions, [threshold, samples, agreement, uncertain] $(, $key = $value)*))
    };
}

/// Asserts a bad answer is caught: the metric scores it *below* its
/// threshold. It fails when the answer passes, and also when the judge
/// cannot answer or is undecided, so a broken judge or a missing recording
/// never passes for a caught answer; unlike a `#[should_panic]` test, no
/// other panic passes it either, and the test goes on. It records like any
/// other assertion and returns the [`Evaluation`](crate::Evaluation).
///
/// The metric is named after the case: `faithfulness`, `hallucination`,
/// `relevance`, `context_precision` or `context_recall`; the options are
/// that metric's.
///
/// ```
/// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
/// # use ragaliq::{RagCase, TransportError, assert_caught};
/// # struct Canned;
/// # impl Transport for Canned {
/// #     fn provider(&self) -> &str { "canned" }
/// #     fn complete<'a>(&'a self, r: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
/// #         let text = if r.task == "extract_claims" { r#"{"claims": ["Refunds are paid in gold."]}"# }
/// #             else { r#"{"verdicts": [{"claim": 1, "verdict": "no_evidence", "evidence": "", "confidence": 0.9}]}"# };
/// #         Box::pin(async move { Ok(JudgeResponse::text(text)) })
/// #     }
/// # }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let judge = Judge::builder(Canned).with_strategy(ragaliq::Strategy::Json).build().unwrap();
/// let case = RagCase::new("How are refunds paid?")
///     .context(["Refunds go to the original card."])
///     .response("Refunds are paid in gold.");
/// let eval = assert_caught!(judge, case, faithfulness, threshold = 0.7);
/// assert_eq!(eval.score, 0.0);
/// # });
/// ```
#[macro_export]
macro_rules! assert_caught {
    ($judge:expr, $case:expr, faithfulness $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_caught, $crate::Metric::Faithfulness, Caught, $judge, $case,
            $crate::__private::__assertion_options!(assert_caught, $crate::__private::FaithfulnessOptions, [threshold, weights, samples, agreement, uncertain] $(, $key = $value)*))
    };
    ($judge:expr, $case:expr, hallucination $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_caught, $crate::Metric::Hallucination, Caught, $judge, $case,
            $crate::__private::__assertion_options!(assert_caught, $crate::__private::HallucinationOptions, [threshold, confidence_floor, samples, agreement, uncertain] $(, $key = $value)*))
    };
    ($judge:expr, $case:expr, relevance $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_caught, $crate::Metric::Relevance, Caught, $judge, $case,
            $crate::__private::__assertion_options!(assert_caught, $crate::__private::RelevanceOptions, [threshold, samples, agreement, uncertain] $(, $key = $value)*))
    };
    ($judge:expr, $case:expr, context_precision $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_caught, $crate::Metric::ContextPrecision, Caught, $judge, $case,
            $crate::__private::__assertion_options!(assert_caught, $crate::__private::ContextPrecisionOptions, [threshold, samples, agreement, uncertain] $(, $key = $value)*))
    };
    ($judge:expr, $case:expr, correctness $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_caught, $crate::Metric::Correctness, Caught, $judge, $case,
            $crate::__private::__assertion_options!(assert_caught, $crate::__private::CorrectnessOptions, [threshold, correctness, samples, agreement, uncertain] $(, $key = $value)*))
    };
    ($judge:expr, $case:expr, context_recall $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_caught, $crate::Metric::ContextRecall, Caught, $judge, $case,
            $crate::__private::__assertion_options!(assert_caught, $crate::__private::ContextRecallOptions, [threshold, samples, agreement, uncertain] $(, $key = $value)*))
    };
    ($judge:expr, $case:expr, abstention $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_caught, $crate::Metric::Abstention, Caught, $judge, $case,
            $crate::__private::__assertion_options!(assert_caught, $crate::__private::AbstentionOptions, [threshold, samples, agreement, uncertain] $(, $key = $value)*))
    };
    ($judge:expr, $case:expr, consistency $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_caught, $crate::Metric::Consistency, Caught, $judge, $case,
            $crate::__private::__assertion_options!(assert_caught, $crate::__private::ConsistencyOptions, [threshold, samples, agreement, uncertain] $(, $key = $value)*))
    };
    ($judge:expr, $case:expr, retention $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_caught, $crate::Metric::Retention, Caught, $judge, $case,
            $crate::__private::__assertion_options!(assert_caught, $crate::__private::RetentionOptions, [threshold, samples, agreement, uncertain] $(, $key = $value)*))
    };
    ($judge:expr, $case:expr, $metric:ident $($rest:tt)*) => {{
        // An unknown metric: the compiler names it and lists the known ones.
        let _ = $crate::__private::MetricName::$metric;
        ::core::unreachable!()
    }};
}

/// Asserts a case's retrieval reaches a threshold, measured against its
/// labels with no judge: `assert_retrieved!(case, recall_at(5) >= 0.8)`.
///
/// The comparison is a retrieval metric ([`ragaliq::retrieval`](crate::retrieval):
/// `hit_rate_at(k)`, `recall_at(k)`, `precision_at(k)`, `mrr()`,
/// `average_precision()`, `ndcg_at(k)`, `ndcg_at(k).exponential()`, each
/// also without a cutoff or, for MRR and AP, with one), named bare or as any
/// expression of type [`RetrievalMetric`](crate::retrieval::RetrievalMetric),
/// then `>=` and the threshold. Given a case, it returns its
/// [`Evaluation`](crate::Evaluation); given a slice, array or `Vec` of
/// cases (a small labelled set), it asserts their mean (the hit rate, MRR,
/// mean recall@5 …) and returns the [`Mean`](crate::retrieval::Mean).
///
/// It needs no judge, no recording and no async function: it works in a
/// plain `#[test]`, and in a `#[rag_test]` beside the judge's assertions.
/// A failure says which relevant IDs were missed and at which ranks they
/// came (for a set, the lowest cases and theirs); a case that cannot be
/// measured (no relevant IDs, relevant IDs but no retrieved IDs) fails as
/// a configuration error, never as a low score. Another comparison than
/// `>=`, or a misspelled metric, is a compile error that says so.
///
/// ```
/// use ragaliq::{RagCase, assert_retrieved};
///
/// let case = RagCase::new("What is the refund window?")
///     .id("refund-window")
///     .retrieved_ids(["policy-12", "faq-3", "terms-1", "policy-7"])
///     .relevant_ids(["policy-12", "policy-7"]);
/// let eval = assert_retrieved!(case, recall_at(5) >= 0.8);
/// assert_eq!(eval.score, 1.0);
/// assert_retrieved!(case, ndcg_at(3).exponential() >= 0.6);
///
/// let other = RagCase::new("Who pays return shipping?")
///     .id("shipping")
///     .retrieved_ids(["faq-9", "policy-3"])
///     .relevant_ids(["policy-3"]);
/// let mean = assert_retrieved!([case, other], mrr() >= 0.7);
/// assert_eq!(mean.score, 0.75);
/// ```
///
/// A failure reads:
///
/// ```should_panic
/// # use ragaliq::{RagCase, assert_retrieved};
/// let case = RagCase::new("q").id("refund-window")
///     .retrieved_ids(["faq-3", "policy-12", "terms-1"])
///     .relevant_ids(["policy-12", "policy-7"]);
/// // assert_retrieved! failed for case `refund-window`
/// // recall@3: 0.50 < threshold 0.80 (FAILED)
/// //   reasoning: 1 of 2 relevant IDs within the top 3.
/// //   relevant IDs found: policy-12 at rank 2
/// //   relevant IDs missed (1 of 2): policy-7 not retrieved
/// //   top 3 retrieved (✓ relevant): 1 faq-3 · 2 policy-12 ✓ · 3 terms-1
/// //   no judge: computed from the case's labels
/// assert_retrieved!(case, recall_at(3) >= 0.8);
/// ```
#[macro_export]
macro_rules! assert_retrieved {
    ($case:expr, $($comparison:tt)+) => {
        match $crate::__private::assert_retrieved(
            &$case,
            $crate::__private::__retrieval_comparison!($crate::__private::retrieval, $($comparison)+),
        ) {
            ::core::result::Result::Ok(measured) => measured,
            ::core::result::Result::Err(message) => ::core::panic!("{}", message),
        }
    };
    ($($anything:tt)*) => {
        ::core::compile_error!("assert_retrieved! takes a case (or a slice of cases) and a comparison `metric >= threshold`, e.g. `assert_retrieved!(case, recall_at(5) >= 0.8)`")
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __assert_metric {
    ($name:ident, $what:expr, $expect:ident, $judge:expr, $case:expr, $options:expr) => {{
        let __ragaliq_options = $options;
        match $crate::__private::assert_metric(
            ::core::stringify!($name),
            &$judge,
            &$case,
            $what,
            __ragaliq_options.resolve(),
            $crate::__private::Expect::$expect,
        )
        .await
        {
            ::core::result::Result::Ok(evaluation) => evaluation,
            ::core::result::Result::Err(message) => ::core::panic!("{}", message),
        }
    }};
}
