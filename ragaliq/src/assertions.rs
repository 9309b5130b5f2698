//! The assertion macros: `assert_faithful!`, `assert_no_hallucination!`,
//! `assert_relevant!`, `assert_context_precision!`, `assert_context_recall!`.
//!
//! Each takes `(judge, case)` and options `threshold = x` (and, where they
//! apply, `weights = …` or `confidence_floor = x`), must be used inside an
//! async function (it awaits), returns the [`Evaluation`](crate::Evaluation)
//! when it passes, and panics with a review-like message when it does not.
//! A judge failure (network, unreadable reply, missing recording) panics
//! with a message that says so, distinct from a low score.

/// Asserts the response is faithful to the context (default threshold 0.7).
///
/// Options: `threshold = f64`, `weights = VerdictWeights`.
///
/// ```
/// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
/// # use ragaliq::{RagCase, TransportError, VerdictWeights, assert_faithful};
/// # struct Canned;
/// # impl Transport for Canned {
/// #     fn provider(&self) -> &str { "canned" }
/// #     fn complete<'a>(&'a self, r: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
/// #         let text = if r.task == "extract_claims" { r#"{"claims": ["A."]}"# }
/// #             else { r#"{"verdicts": [{"claim": 1, "verdict": "supported"}]}"# };
/// #         Box::pin(async move { Ok(JudgeResponse::text(text)) })
/// #     }
/// # }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// # let judge = Judge::builder(Canned).build().unwrap();
/// let case = RagCase::new("q").context(["A."]).response("A.");
/// let eval = assert_faithful!(judge, case, threshold = 0.9, weights = VerdictWeights::STRICT);
/// assert_eq!(eval.score, 1.0);
/// # });
/// ```
#[macro_export]
macro_rules! assert_faithful {
    ($judge:expr, $case:expr $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_faithful, faithfulness, Faithfulness, $judge, $case $(, $key = $value)*)
    };
}

/// Asserts the response does not hallucinate (default threshold 0.8).
///
/// Options: `threshold = f64`, `confidence_floor = f64`.
#[macro_export]
macro_rules! assert_no_hallucination {
    ($judge:expr, $case:expr $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_no_hallucination, hallucination, Hallucination, $judge, $case $(, $key = $value)*)
    };
}

/// Asserts the response answers the query (default threshold 0.7).
///
/// Options: `threshold = f64`.
#[macro_export]
macro_rules! assert_relevant {
    ($judge:expr, $case:expr $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_relevant, other, Relevance, $judge, $case $(, $key = $value)*)
    };
}

/// Asserts the relevant passages are retrieved and ranked first (default threshold 0.7).
///
/// Options: `threshold = f64`.
#[macro_export]
macro_rules! assert_context_precision {
    ($judge:expr, $case:expr $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_context_precision, other, ContextPrecision, $judge, $case $(, $key = $value)*)
    };
}

/// Asserts the context holds the expected facts (default threshold 0.7).
///
/// Options: `threshold = f64`.
#[macro_export]
macro_rules! assert_context_recall {
    ($judge:expr, $case:expr $(, $key:ident = $value:expr)* $(,)?) => {
        $crate::__assert_metric!(assert_context_recall, other, ContextRecall, $judge, $case $(, $key = $value)*)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __assert_metric {
    ($name:ident, $family:ident, $metric:ident, $judge:expr, $case:expr $(, $key:ident = $value:expr)*) => {{
        #[allow(unused_mut)]
        let mut __ragaliq_options = $crate::EvalOptions::default();
        $( $crate::__assert_option!($name, $family, __ragaliq_options, $key, $value); )*
        match $crate::__private::assert_metric(
            ::core::stringify!($name),
            &$judge,
            &$case,
            $crate::Metric::$metric,
            __ragaliq_options,
        )
        .await
        {
            ::core::result::Result::Ok(evaluation) => evaluation,
            ::core::result::Result::Err(message) => ::core::panic!("{}", message),
        }
    }};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __assert_option {
    ($name:ident, $family:ident, $o:ident, threshold, $v:expr) => {
        $o.threshold = ::core::option::Option::Some($v);
    };
    ($name:ident, faithfulness, $o:ident, weights, $v:expr) => {
        $o.weights = ::core::option::Option::Some($v);
    };
    ($name:ident, hallucination, $o:ident, confidence_floor, $v:expr) => {
        $o.confidence_floor = ::core::option::Option::Some($v);
    };
    ($name:ident, faithfulness, $o:ident, $key:ident, $v:expr) => {
        ::core::compile_error!(::core::concat!(
            "unknown option `",
            ::core::stringify!($key),
            "` for ",
            ::core::stringify!($name),
            "!; expected `threshold = …` or `weights = …`"
        ));
    };
    ($name:ident, hallucination, $o:ident, $key:ident, $v:expr) => {
        ::core::compile_error!(::core::concat!(
            "unknown option `",
            ::core::stringify!($key),
            "` for ",
            ::core::stringify!($name),
            "!; expected `threshold = …` or `confidence_floor = …`"
        ));
    };
    ($name:ident, other, $o:ident, $key:ident, $v:expr) => {
        ::core::compile_error!(::core::concat!(
            "unknown option `",
            ::core::stringify!($key),
            "` for ",
            ::core::stringify!($name),
            "!; expected `threshold = …`"
        ));
    };
}
