//! `[judge]` and `[retry]`: which judge is asked (provider, model, server,
//! key) and how (format, limits, the claim path's settings).

use super::env::{Resolver, boolean, float, int, text};
use super::fitted::Fitted;
use super::scoring::RawThresholds;
use crate::core::{ConfigError, JsonMode, Strategy};
use crate::transport::{RetryPolicy, redact_url};
use serde::Deserialize;
use std::path::Path;
use std::time::Duration;

/// A judge provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI's chat completions.
    OpenAi,
    /// Anthropic's Messages API.
    Anthropic,
    /// A local Ollama server's OpenAI-compatible endpoint.
    Ollama,
    /// Any other OpenAI-compatible server (vLLM, llama.cpp, LM Studio, OpenRouter, …).
    OpenAiCompatible,
}

impl Provider {
    /// The accepted spellings.
    pub const NAMES: &'static str = "openai, anthropic, ollama, openai-compatible";

    /// Parses a provider name.
    #[must_use]
    pub fn from_name(s: &str) -> Option<Provider> {
        match s {
            "openai" => Some(Provider::OpenAi),
            "anthropic" => Some(Provider::Anthropic),
            "ollama" => Some(Provider::Ollama),
            "openai-compatible" => Some(Provider::OpenAiCompatible),
            _ => None,
        }
    }

    /// The provider's name, as in fingerprints.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Ollama => "ollama",
            Provider::OpenAiCompatible => "openai-compatible",
        }
    }

    pub(super) fn default_base_url(self) -> Option<&'static str> {
        match self {
            Provider::OpenAi => Some("https://api.openai.com/v1"),
            Provider::Anthropic => Some("https://api.anthropic.com/v1"),
            Provider::Ollama => Some("http://localhost:11434/v1"),
            Provider::OpenAiCompatible => None,
        }
    }

    pub(super) fn default_model(self) -> Option<&'static str> {
        match self {
            Provider::OpenAi => Some("gpt-4o-mini"),
            Provider::Anthropic => Some("claude-haiku-4-5"),
            Provider::Ollama => Some("llama3.1"),
            Provider::OpenAiCompatible => None,
        }
    }

    pub(super) fn default_key_env(self) -> Option<&'static str> {
        match self {
            Provider::OpenAi => Some("OPENAI_API_KEY"),
            Provider::Anthropic => Some("ANTHROPIC_API_KEY"),
            Provider::Ollama | Provider::OpenAiCompatible => None,
        }
    }

    pub(super) fn default_json_mode(self) -> JsonMode {
        JsonMode::Schema
    }
}

pub(super) fn valid_var_name(v: &str) -> bool {
    !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawJudge {
    pub(super) provider: Option<String>,
    pub(super) model: Option<String>,
    pub(super) base_url: Option<String>,
    pub(super) api_key_env: Option<String>,
    pub(super) json_mode: Option<String>,
    pub(super) temperature: Option<f64>,
    pub(super) max_tokens: Option<i64>,
    pub(super) concurrency: Option<i64>,
    pub(super) rpm: Option<f64>,
    pub(super) tpm: Option<f64>,
    pub(super) timeout_secs: Option<f64>,
    pub(super) idle_timeout_secs: Option<f64>,
    pub(super) stream: Option<bool>,
    pub(super) sized_max_tokens: Option<bool>,
    pub(super) verify_batch: Option<i64>,
    pub(super) strategy: Option<String>,
    pub(super) claim_threshold: Option<f64>,
    pub(super) passage_threshold: Option<f64>,
    pub(super) contradiction: Option<bool>,
    pub(super) contradiction_threshold: Option<f64>,
    pub(super) contradiction_ratio: Option<f64>,
    pub(super) chunk_chars: Option<i64>,
    pub(super) history_turns: Option<i64>,
    pub(super) history_chars: Option<i64>,
    pub(super) follow_up_history: Option<bool>,
    pub(super) claims: Option<String>,
    pub(super) criteria_form: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRetry {
    pub(super) max_retries: Option<i64>,
    pub(super) initial_backoff_ms: Option<i64>,
    pub(super) max_backoff_ms: Option<i64>,
    pub(super) budget_secs: Option<f64>,
}

/// What `[judge]` and its variables say, read and checked.
pub(super) struct JudgeSettings {
    pub provider: Provider,
    pub model: String,
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
    pub json_mode: JsonMode,
    pub temperature: f64,
    pub max_tokens: i64,
    pub concurrency: i64,
    pub rpm: Option<f64>,
    pub tpm: Option<f64>,
    pub timeout: f64,
    pub idle_timeout: f64,
    pub stream: bool,
    pub sized_max_tokens: bool,
    pub verify_batch: usize,
    pub strategy: Strategy,
    pub claim_threshold: f64,
    pub passage_threshold: f64,
    pub contradiction: bool,
    pub contradiction_ratio: f64,
    pub chunk_chars: usize,
    pub history: crate::core::Window,
    pub follow_up_history: bool,
    pub sentences: bool,
    /// The file's `[fitted]` table, read for the model.
    pub fitted: Option<Fitted>,
}

/// `[judge]` (`judge`) and its variables. Thresholds fitted for another
/// model than the one configured are dropped, here and in
/// `thresholds` (`fitted_table`: the file's `[fitted]`); `file` and
/// `root` name the file in messages.
pub(super) fn read_judge(
    r: &Resolver<'_>,
    mut judge: RawJudge,
    thresholds: &mut RawThresholds,
    fitted_table: Option<&toml::Table>,
    (file, root): (Option<(&str, &Path)>, &Path),
) -> Result<JudgeSettings, ConfigError> {
    let file_name = r.file;
    // RAGALIQ_JUDGE: `provider`, `provider:model`, or a base URL.
    let file_provider = r
        .pick_file(
            "judge.provider",
            judge.provider,
            |p| Provider::from_name(p).is_some(),
            Provider::NAMES,
        )?
        .map(|p| Provider::from_name(&p).expect("checked"));
    let (env_provider, env_model, env_url) = match (r.env)("RAGALIQ_JUDGE") {
        None => (None, None, None),
        Some(v) if v.starts_with("http://") || v.starts_with("https://") => {
            (Some(Provider::OpenAiCompatible), None, Some(v))
        }
        Some(v) => {
            let (name, model) = match v.split_once(':') {
                Some((n, m)) => (n, Some(m.to_owned()).filter(|m| !m.is_empty())),
                None => (v.as_str(), None),
            };
            let provider = Provider::from_name(name).ok_or_else(|| ConfigError::Invalid {
                origin: "RAGALIQ_JUDGE".into(),
                value: v.clone(),
                expected: format!(
                    "`provider:model` with provider one of {}, or an http(s) base URL",
                    Provider::NAMES
                ),
            })?;
            (Some(provider), model, None)
        }
    };
    let provider = env_provider.or(file_provider).unwrap_or(Provider::OpenAi);
    // The file's provider-specific settings apply only to the file's provider.
    let same_provider = file_provider.is_none_or(|p| p == provider);
    let file_model = judge.model.filter(|_| same_provider);
    let file_url = judge.base_url.filter(|_| same_provider);

    let model = env_model
        .or_else(|| (r.env)("RAGALIQ_MODEL"))
        .or(file_model)
        .or_else(|| provider.default_model().map(str::to_owned))
        .ok_or_else(|| ConfigError::Missing {
            what: "the judge's model".into(),
            // `openai-compatible:<model>` would drop the URL: a
            // server's URL goes with RAGALIQ_MODEL.
            how: if let Some(url) = &env_url {
                format!(
                    "RAGALIQ_JUDGE={} names a server, not a model; set RAGALIQ_MODEL=<model> beside it (the name every exchange is recorded under, so replay needs it too: the model the server loaded, e.g. its --alias), or `model` under [judge] in {}",
                    redact_url(url),
                    file.map_or_else(
                        || root.join("ragaliq.toml").display().to_string(),
                        |(_, p)| p.display().to_string()
                    ),
                )
            } else { format!(
                "{provider} has no default model; set `model` under [judge] in {}, or RAGALIQ_MODEL, or RAGALIQ_JUDGE={provider}:<model>",
                file.map_or_else(
                    || root.join("ragaliq.toml").display().to_string(),
                    |(_, p)| p.display().to_string()
                ),
                provider = provider.name()
            ) },
        })?;
    // Thresholds fitted for one model apply to that model only: a file
    // fitted for the 1.5B read with RAGALIQ_MODEL=gpt-4o-mini falls back
    // to the defaults for what was fitted, and says so.
    let fitted = fitted_table.map(|table| Fitted::read(table, &model));
    for kind in fitted.iter().flat_map(|f| &f.kinds).filter(|k| !k.applied) {
        for key in &kind.keys {
            match *key {
                "judge.claim_threshold" => judge.claim_threshold = None,
                "judge.contradiction_ratio" => judge.contradiction_ratio = None,
                "judge.passage_threshold" => judge.passage_threshold = None,
                "thresholds.relevance" => thresholds.relevance = None,
                "thresholds.correctness" => thresholds.correctness = None,
                "thresholds.criteria" => thresholds.criteria = None,
                _ => {}
            }
        }
    }
    let is_url = |u: &String| u.starts_with("http://") || u.starts_with("https://");
    let picked_url = r
        .pick(
            "RAGALIQ_BASE_URL",
            "judge.base_url",
            file_url,
            text,
            is_url,
            "an http:// or https:// URL",
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
        })?;
    // Replay never contacts a server: a missing URL is reported at the
    // first live call, not here.
    let base_url = env_url
        .or(picked_url)
        .or_else(|| provider.default_base_url().map(str::to_owned));
    // Never echo this value when it is wrong: people paste the key itself.
    let hidden = |origin: String| {
        ConfigError::Hidden {
        origin,
        problem: "expected the *name* of an environment variable that holds the key (like OPENAI_API_KEY), not the key itself".into(),
    }
    };
    let api_key_env = match ((r.env)("RAGALIQ_API_KEY_ENV"), judge.api_key_env) {
        (Some(v), _) if !valid_var_name(v.trim()) => {
            return Err(hidden("RAGALIQ_API_KEY_ENV".into()));
        }
        (Some(v), _) => Some(v.trim().to_owned()),
        (None, Some(v)) if !valid_var_name(v.trim()) => {
            return Err(hidden(format!("{file_name}: judge.api_key_env")));
        }
        (None, Some(v)) => Some(v.trim().to_owned()),
        (None, None) => None,
    }
    .or_else(|| provider.default_key_env().map(str::to_owned));
    let json_mode = r
        .pick(
            "RAGALIQ_JSON_MODE",
            "judge.json_mode",
            judge.json_mode,
            text,
            |m| JsonMode::from_name(m).is_some(),
            JsonMode::NAMES,
        )?
        .map_or(provider.default_json_mode(), |m| {
            JsonMode::from_name(&m).expect("checked")
        });
    let temperature = r
        .pick(
            "RAGALIQ_TEMPERATURE",
            "judge.temperature",
            judge.temperature,
            float,
            |t| (0.0..=2.0).contains(t),
            "a number from 0 to 2",
        )?
        .unwrap_or(0.0);
    let max_tokens = r
        .pick(
            "RAGALIQ_MAX_TOKENS",
            "judge.max_tokens",
            judge.max_tokens,
            int,
            |n| (1..=1_000_000).contains(n),
            "a whole number from 1 to 1000000",
        )?
        .unwrap_or(2048);
    // A server on this machine usually decodes one request at a time and
    // queues the others, whose wait would count against their timeout.
    let local = base_url.as_deref().is_some_and(crate::transport::is_local);
    let concurrency = r
        .pick(
            "RAGALIQ_CONCURRENCY",
            "judge.concurrency",
            judge.concurrency,
            int,
            |n| (1..=1024).contains(n),
            "a whole number from 1 to 1024",
        )?
        .unwrap_or(if local { 1 } else { 8 });
    let rate = |variable: &'static str, key: &'static str, value: Option<f64>| {
        r.pick(
            variable,
            key,
            value,
            float,
            |n| *n > 0.0 && n.is_finite(),
            "a number over 0 (per minute)",
        )
    };
    let rpm = rate("RAGALIQ_RPM", "judge.rpm", judge.rpm)?;
    let tpm = rate("RAGALIQ_TPM", "judge.tpm", judge.tpm)?;
    let timeout = r
        .pick(
            "RAGALIQ_TIMEOUT_SECS",
            "judge.timeout_secs",
            judge.timeout_secs,
            float,
            |t| *t > 0.0 && *t <= 3600.0,
            "a number of seconds over 0, up to 3600",
        )?
        .unwrap_or(120.0);
    let idle_timeout = r
        .pick(
            "RAGALIQ_IDLE_TIMEOUT_SECS",
            "judge.idle_timeout_secs",
            judge.idle_timeout_secs,
            float,
            |t| *t > 0.0 && *t <= 3600.0,
            "a number of seconds over 0, up to 3600",
        )?
        .unwrap_or(30.0);
    let stream = r
        .pick(
            "RAGALIQ_STREAM",
            "judge.stream",
            judge.stream,
            boolean,
            |_| true,
            "true or false",
        )?
        .unwrap_or(true);
    let sized_max_tokens = r
        .pick(
            "RAGALIQ_SIZED_MAX_TOKENS",
            "judge.sized_max_tokens",
            judge.sized_max_tokens,
            boolean,
            |_| true,
            "true or false",
        )?
        .unwrap_or(true);
    let verify_batch = r
        .pick(
            "RAGALIQ_VERIFY_BATCH",
            "judge.verify_batch",
            judge.verify_batch,
            int,
            |n| (1..=64).contains(n),
            "a whole number of claims from 1 to 64",
        )?
        .map_or(crate::core::DEFAULT_VERIFY_BATCH, |n| n as usize);
    let strategy = r
        .pick(
            "RAGALIQ_STRATEGY",
            "judge.strategy",
            judge.strategy,
            text,
            |s| Strategy::from_name(s).is_some(),
            Strategy::NAMES,
        )?
        .map_or(Strategy::default(), |s| {
            Strategy::from_name(&s).expect("checked")
        });
    let probability = |var: &'static str, key: &'static str, value: Option<f64>| {
        r.pick(
            var,
            key,
            value,
            float,
            |t| (0.0..=1.0).contains(t),
            "a probability from 0 to 1",
        )
    };
    let claim_threshold = probability(
        "RAGALIQ_CLAIM_THRESHOLD",
        "judge.claim_threshold",
        judge.claim_threshold,
    )?
    .unwrap_or(crate::core::DEFAULT_CLAIM_THRESHOLD);
    let passage_threshold = probability(
        "RAGALIQ_PASSAGE_THRESHOLD",
        "judge.passage_threshold",
        judge.passage_threshold,
    )?
    .unwrap_or(crate::core::DEFAULT_PROBABILITY_THRESHOLD);
    let contradiction = r
        .pick(
            "RAGALIQ_CONTRADICTION",
            "judge.contradiction",
            judge.contradiction,
            boolean,
            |_| true,
            "true or false",
        )?
        .unwrap_or(true);
    // A retired key: refused with what replaced it, never ignored.
    let retired = match (
        judge.contradiction_threshold,
        (r.env)("RAGALIQ_CONTRADICTION_THRESHOLD"),
    ) {
        (Some(t), _) => Some((
            format!("{file_name}: judge.contradiction_threshold"),
            t.to_string(),
        )),
        (None, Some(v)) => Some(("RAGALIQ_CONTRADICTION_THRESHOLD".into(), v)),
        (None, None) => None,
    };
    if let Some((origin, value)) = retired {
        return Err(ConfigError::Invalid {
            origin,
            value,
            expected: "judge.contradiction_ratio instead: a claim is contradicted when P(contradicted) is more than that many times P(supported) (default 3); `cargo ragaliq calibrate --fit` fits it".into(),
        });
    }
    let contradiction_ratio = r
        .pick(
            "RAGALIQ_CONTRADICTION_RATIO",
            "judge.contradiction_ratio",
            judge.contradiction_ratio,
            float,
            |x| (1.0..=100.0).contains(x),
            "a ratio from 1 to 100",
        )?
        .unwrap_or(crate::core::DEFAULT_CONTRADICTION_RATIO);
    let chunk_chars = r
        .pick(
            "RAGALIQ_CHUNK_CHARS",
            "judge.chunk_chars",
            judge.chunk_chars,
            int,
            |n| (0..=1_000_000).contains(n),
            "a whole number of characters from 0 (never) to 1000000",
        )?
        .map_or(0, |n| n as usize);
    let history = crate::core::Window {
        turns: r
            .pick(
                "RAGALIQ_HISTORY_TURNS",
                "judge.history_turns",
                judge.history_turns,
                int,
                |n| (1..=100).contains(n),
                "a whole number of turns from 1 to 100",
            )?
            .map_or(crate::core::HISTORY_TURNS, |n| n as usize),
        chars: r
            .pick(
                "RAGALIQ_HISTORY_CHARS",
                "judge.history_chars",
                judge.history_chars,
                int,
                |n| (100..=1_000_000).contains(n),
                "a whole number of characters from 100 to 1000000",
            )?
            .map_or(crate::core::HISTORY_CHARS, |n| n as usize),
    };
    // Off by default: measured against people (bench/conversations), the
    // bare relevance and decline questions agreed with them more often
    // than those shown the conversation, on later and unanswerable turns.
    let follow_up_history = r
        .pick(
            "RAGALIQ_FOLLOW_UP_HISTORY",
            "judge.follow_up_history",
            judge.follow_up_history,
            boolean,
            |_| true,
            "true or false",
        )?
        .unwrap_or(false);
    let sentences = r
        .pick(
            "RAGALIQ_CLAIMS",
            "judge.claims",
            judge.claims,
            text,
            |v| v == "extract" || v == "sentences",
            "extract or sentences",
        )?
        .is_some_and(|v| v == "sentences");
    Ok(JudgeSettings {
        provider,
        model,
        base_url,
        api_key_env,
        json_mode,
        temperature,
        max_tokens,
        concurrency,
        rpm,
        tpm,
        timeout,
        idle_timeout,
        stream,
        sized_max_tokens,
        verify_batch,
        strategy,
        claim_threshold,
        passage_threshold,
        contradiction,
        contradiction_ratio,
        chunk_chars,
        history,
        follow_up_history,
        sentences,
        fitted,
    })
}

/// `[retry]` and its variables, over [`RetryPolicy::default`].
pub(super) fn read_retry(r: &Resolver<'_>, retry: RawRetry) -> Result<RetryPolicy, ConfigError> {
    let defaults = RetryPolicy::default();
    let max_retries = r
        .pick(
            "RAGALIQ_MAX_RETRIES",
            "retry.max_retries",
            retry.max_retries,
            int,
            |n| (0..=100).contains(n),
            "a whole number from 0 to 100",
        )?
        .map_or(defaults.max_retries, |n| n as u32);
    let initial_ms = r.pick_file(
        "retry.initial_backoff_ms",
        retry.initial_backoff_ms,
        |n| (0..=600_000).contains(n),
        "a whole number of milliseconds from 0 to 600000",
    )?;
    let max_ms = r.pick_file(
        "retry.max_backoff_ms",
        retry.max_backoff_ms,
        |n| (0..=600_000).contains(n),
        "a whole number of milliseconds from 0 to 600000",
    )?;
    let budget = r.pick(
        "RAGALIQ_RETRY_BUDGET_SECS",
        "retry.budget_secs",
        retry.budget_secs,
        float,
        |t| (0.0..=86_400.0).contains(t),
        "a number of seconds from 0 to 86400",
    )?;
    Ok(RetryPolicy::default()
        .with_max_retries(max_retries)
        .with_backoff(
            initial_ms.map_or(defaults.initial_backoff, |ms| {
                Duration::from_millis(ms as u64)
            }),
            max_ms.map_or(defaults.max_backoff, |ms| Duration::from_millis(ms as u64)),
        )
        .with_total_budget(budget.map_or(defaults.total_budget, Duration::from_secs_f64)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::testing::{err, load};
    use crate::core::Mode;

    #[test]
    fn judge_variable_forms() {
        let c = load(None, &[("RAGALIQ_JUDGE", "anthropic:claude-x")]).unwrap();
        assert_eq!(
            (c.provider, c.model.as_str()),
            (Provider::Anthropic, "claude-x")
        );
        assert_eq!(c.api_key_env.as_deref(), Some("ANTHROPIC_API_KEY"));
        let c = load(None, &[("RAGALIQ_JUDGE", "ollama:llama3.1:8b")]).unwrap();
        assert_eq!(
            (c.model.as_str(), c.api_key_env.as_deref()),
            ("llama3.1:8b", None)
        );
        let c = load(
            None,
            &[
                ("RAGALIQ_JUDGE", "http://127.0.0.1:8000/v1"),
                ("RAGALIQ_MODEL", "qwen"),
            ],
        )
        .unwrap();
        assert_eq!(
            (c.provider, c.base_url.as_deref()),
            (Provider::OpenAiCompatible, Some("http://127.0.0.1:8000/v1"))
        );
        // A server's URL names no model, and `openai-compatible:<model>`
        // would drop the URL: the message says what goes with it.
        let e = err(None, &[("RAGALIQ_JUDGE", "http://127.0.0.1:8000/v1")]);
        assert_eq!(
            e,
            "the judge's model is not set: RAGALIQ_JUDGE=http://127.0.0.1:8000/v1 names a server, not a model; set RAGALIQ_MODEL=<model> beside it (the name every exchange is recorded under, so replay needs it too: the model the server loaded, e.g. its --alias), or `model` under [judge] in /pkg/ragaliq.toml"
        );
        let e = err(None, &[("RAGALIQ_JUDGE", "openai-compatible")]);
        assert_eq!(
            e,
            "the judge's model is not set: openai-compatible has no default model; set `model` under [judge] in /pkg/ragaliq.toml, or RAGALIQ_MODEL, or RAGALIQ_JUDGE=openai-compatible:<model>"
        );
        let e = err(None, &[("RAGALIQ_JUDGE", "gemini:pro")]);
        assert!(
            e.contains("RAGALIQ_JUDGE")
                && e.contains("openai, anthropic, ollama, openai-compatible"),
            "{e}"
        );
    }

    #[test]
    fn replay_needs_no_server_address() {
        let c = load(
            Some("[judge]\nprovider = \"openai-compatible\"\nmodel = \"scripted\"\n"),
            &[("CI", "true")],
        )
        .unwrap();
        assert_eq!((c.mode, c.base_url), (Mode::Replay, None));
    }

    #[test]
    fn a_key_pasted_as_the_variable_name_is_never_echoed() {
        for (toml, vars) in [
            (
                Some("[judge]\napi_key_env = \"pasted-key-FAKE-0000\"\n"),
                vec![],
            ),
            (None, vec![("RAGALIQ_API_KEY_ENV", "pasted-key-FAKE-0000")]),
        ] {
            let e = err(toml, &vars);
            assert!(!e.contains("FAKE-0000"), "{e}");
            assert!(
                e.contains("api_key_env") || e.contains("RAGALIQ_API_KEY_ENV"),
                "{e}"
            );
            assert!(e.contains("not the key itself"), "{e}");
        }
    }

    #[test]
    fn file_model_does_not_leak_to_another_provider() {
        let toml = "[judge]\nprovider = \"openai\"\nmodel = \"gpt-4o\"\n";
        let c = load(Some(toml), &[("RAGALIQ_JUDGE", "anthropic")]).unwrap();
        assert_eq!(c.model, "claude-haiku-4-5");
        assert_eq!(load(Some(toml), &[]).unwrap().model, "gpt-4o");
    }

    #[test]
    fn key_is_read_from_the_named_variable_only() {
        let c = load(
            Some("[judge]\napi_key_env = \"MY_KEY\"\n"),
            &[("MY_KEY", "sk-123456"), ("OPENAI_API_KEY", "sk-other")],
        )
        .unwrap();
        assert_eq!(c.api_key().unwrap().expose(), "sk-123456");
        assert!(!format!("{c:?}").contains("sk-123456"));
    }
}
