//! The seam between the judge and a model server: the [`Transport`] trait,
//! and the transports ragaliq ships — OpenAI-compatible chat completions and
//! Anthropic Messages over HTTP (streamed as server-sent events or not) —
//! with their retry policy and error classification.
//!
//! This layer sees one request at a time. It knows nothing of recordings,
//! budgets, sessions or metrics.

mod anthropic;
#[cfg(feature = "batch")]
mod batch;
mod error;
mod http;
pub mod limits;
mod openai;
mod refusal;
mod retry;
mod tls;

pub use anthropic::{ANTHROPIC_VERSION, AnthropicTransport};
#[cfg(feature = "batch")]
pub use batch::{
    BatchApi, BatchKind, BatchLine, BatchProgress, BatchTag, Candidate, LineResult, Lookup,
};
pub use error::{TransportError, TransportErrorKind};
pub use http::endpoint_label;
pub(crate) use http::{
    client as http_client, error_chain, is_loopback as is_local, join_path, redact_url,
};
pub use openai::OpenAiTransport;
pub use refusal::refuses_response_format;
pub use retry::RetryPolicy;
pub(crate) use tls::install_provider;

use crate::core::{JudgeRequest, JudgeResponse};
use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future, as [`Transport::complete`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Sends one [`JudgeRequest`] to a model and returns its reply.
///
/// ragaliq ships transports for OpenAI-compatible chat completions and the
/// Anthropic Messages API. Implement this trait to plug in anything else — a
/// local model, a company gateway, a canned fake. The judge wraps every
/// transport with the same retries, timeout, concurrency limit, token
/// accounting, memo and recorder, so a transport makes exactly one attempt
/// and reports retryable failures with [`TransportError`]s whose
/// [`is_retryable`](TransportError::is_retryable) is true.
///
/// ```
/// use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
/// use ragaliq::{RagCase, TransportError};
///
/// /// A judge that finds every claim supported (a fake for illustration).
/// struct Agreeable;
///
/// impl Transport for Agreeable {
///     fn provider(&self) -> &str {
///         "agreeable"
///     }
///     fn complete<'a>(
///         &'a self,
///         request: &'a JudgeRequest,
///     ) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
///         Box::pin(async move {
///             let text = match request.task.as_str() {
///                 "extract_claims" => r#"{"claims": ["Refunds take 30 days."]}"#,
///                 // Each claim is asked about alone, answered in one word.
///                 "claim_supported" => "yes",
///                 other => return Err(TransportError::other(format!("no answer for {other}"))),
///             };
///             Ok(JudgeResponse::text(text))
///         })
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let judge = Judge::builder(Agreeable).build().unwrap();
/// let case = RagCase::new("How long do refunds take?")
///     .context(["Refunds are processed within 30 days."])
///     .response("Refunds take 30 days.");
/// let eval = judge.faithfulness(&case).await.unwrap();
/// assert_eq!(eval.score, 1.0);
/// assert!(eval.passed);
/// # });
/// ```
pub trait Transport: Send + Sync + 'static {
    /// A short provider name (`openai`, `anthropic`, …), part of every fingerprint.
    fn provider(&self) -> &str;

    /// Where calls go, for banners and messages: `scheme://host:port`, never
    /// a path or a key. `None` (the default) for transports without one.
    fn endpoint(&self) -> Option<String> {
        None
    }

    /// Makes one attempt at `request`.
    fn complete<'a>(
        &'a self,
        request: &'a JudgeRequest,
    ) -> BoxFuture<'a, Result<JudgeResponse, TransportError>>;
}
