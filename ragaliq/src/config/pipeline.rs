//! `[pipeline]` and `RAGALIQ_PIPELINE_*`: where the pipeline under test's
//! own model calls go when they are recorded, and their limits.

use super::env::{Resolver, boolean, float, int, text};
use crate::core::ConfigError;
use crate::transport::redact_url;
use serde::Deserialize;
use std::time::Duration;

/// `[pipeline]`: where the pipeline under test's calls go when recorded.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPipeline {
    openai_base_url: Option<String>,
    anthropic_base_url: Option<String>,
    timeout_secs: Option<f64>,
    idle_timeout_secs: Option<f64>,
    concurrency: Option<i64>,
    shared_limits: Option<bool>,
}

/// The pipeline's settings from `[pipeline]` and `RAGALIQ_PIPELINE_*`,
/// each variable over its key.
pub(super) fn pipeline_settings(
    r: &Resolver<'_>,
    raw: Option<RawPipeline>,
) -> Result<crate::core::pipeline::Settings, ConfigError> {
    let raw = raw.unwrap_or_default();
    let mut s = crate::core::pipeline::Settings::default();
    let is_url = |u: &String| u.starts_with("http://") || u.starts_with("https://");
    let url = |variable: &str, key: &str, value: Option<String>| {
        r.pick(
            variable,
            key,
            value,
            text,
            is_url,
            "an http:// or https:// URL, up to and including /v1",
        )
        .map_err(|e| match e {
            ConfigError::Invalid {
                origin,
                value,
                expected,
            } => ConfigError::Invalid {
                origin,
                value: redact_url(&value),
                expected,
            },
            other => other,
        })
    };
    if let Some(u) = url(
        "RAGALIQ_PIPELINE_OPENAI_BASE_URL",
        "pipeline.openai_base_url",
        raw.openai_base_url,
    )? {
        s.openai_base_url = u;
    }
    if let Some(u) = url(
        "RAGALIQ_PIPELINE_ANTHROPIC_BASE_URL",
        "pipeline.anthropic_base_url",
        raw.anthropic_base_url,
    )? {
        s.anthropic_base_url = u;
    }
    let seconds = |variable: &str, key: &str, value: Option<f64>| {
        r.pick(
            variable,
            key,
            value,
            float,
            |t| *t > 0.0 && *t <= 3600.0,
            "a number of seconds over 0, up to 3600",
        )
    };
    if let Some(t) = seconds(
        "RAGALIQ_PIPELINE_TIMEOUT_SECS",
        "pipeline.timeout_secs",
        raw.timeout_secs,
    )? {
        s.timeout = Duration::from_secs_f64(t);
    }
    if let Some(t) = seconds(
        "RAGALIQ_PIPELINE_IDLE_TIMEOUT_SECS",
        "pipeline.idle_timeout_secs",
        raw.idle_timeout_secs,
    )? {
        s.idle_timeout = Duration::from_secs_f64(t);
    }
    if let Some(n) = r.pick(
        "RAGALIQ_PIPELINE_CONCURRENCY",
        "pipeline.concurrency",
        raw.concurrency,
        int,
        |n| (1..=1024).contains(n),
        "a whole number from 1 to 1024",
    )? {
        s.concurrency = n as usize;
    }
    if let Some(b) = r.pick(
        "RAGALIQ_PIPELINE_SHARED_LIMITS",
        "pipeline.shared_limits",
        raw.shared_limits,
        boolean,
        |_| true,
        "true or false",
    )? {
        s.shared_limits = b;
    }
    Ok(s)
}
