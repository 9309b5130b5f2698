//! Recording through a provider's batch API: what `cargo ragaliq record
//! --batch` is built from.
//!
//! Recording through a batch goes in rounds, because verification asks about
//! the claims extraction produced. Each round runs the tests in *collect*
//! mode ([`RAGALIQ_COLLECT`](crate::config) names a [`BatchFolder`]): a
//! question no recording answers is queued under its fingerprint instead of
//! asked, and the trial reports *queued*. The driver submits the queue as
//! batches ([`BatchApi`]), polls them, writes each answer into the folder by
//! its `custom_id`, and runs the tests again: the questions answered now
//! take the path a live answer takes, into pending recordings exactly as a
//! live record writes them, and the next stage's questions are queued.
//! When a round queues nothing, every recording is written; review them
//! with `cargo insta review` as usual.
//!
//! OpenAI and Anthropic have batch APIs; Ollama, llama.cpp, vLLM and other
//! OpenAI-compatible servers do not, and [`api_for`] says so.
//!
//! ```
//! let env = |name: &str| (name == "RAGALIQ_JUDGE").then(|| "ollama:llama3.1".to_owned());
//! let config = ragaliq::Config::from_sources(None, std::path::Path::new("."), &env)
//! .unwrap();
//! let refused = ragaliq::batch::api_for(&config).unwrap_err();
//! assert!(refused.to_string().contains("ollama has no batch API"));
//! ```

pub use crate::run::{BatchFolder, DriverLock, Prepared, QueuedRequest, is_batch_state};
pub use crate::transport::{
    BatchApi, BatchKind, BatchLine, BatchProgress, BatchTag, Candidate, LineResult, Lookup,
};

use crate::config::{Config, Provider};

/// A provider without a batch API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{provider} has no batch API (only openai and anthropic have one): record live instead, with RAGALIQ_MODE=record cargo test"
)]
pub struct NoBatchApi {
    /// The provider's name.
    pub provider: &'static str,
}

/// The batch API of the judge `config` describes: its base URL and key.
///
/// # Errors
///
/// The provider has no batch API.
pub fn api_for(config: &Config) -> Result<BatchApi, NoBatchApi> {
    let variable = config.api_key_env.as_deref().unwrap_or("");
    match config.provider {
        Provider::OpenAi => Ok(BatchApi::openai(
            config
                .base_url
                .as_deref()
                .unwrap_or("https://api.openai.com/v1"),
            config.api_key(),
            variable,
        )
        .with_retry(config.retry.clone())),
        Provider::Anthropic => Ok(BatchApi::anthropic(
            config
                .base_url
                .as_deref()
                .unwrap_or("https://api.anthropic.com/v1"),
            config.api_key(),
            variable,
        )
        .with_retry(config.retry.clone())),
        other => Err(NoBatchApi {
            provider: other.name(),
        }),
    }
}
