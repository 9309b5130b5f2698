//! Configuration: `ragaliq.toml` at the package root, optional, with
//! `RAGALIQ_*` environment variables overriding it.
//!
//! **Precedence, key by key:** an environment variable beats the file, the
//! file beats the default. `RAGALIQ_JUDGE` names the provider and, after a
//! colon, the model (`anthropic:claude-haiku-4-5`), or an OpenAI-compatible
//! server's base URL (`http://127.0.0.1:8080/v1`), which then also sets the
//! base URL. What `RAGALIQ_JUDGE` says beats `RAGALIQ_MODEL` and
//! `RAGALIQ_BASE_URL`, which beat the file. The file's model and base URL
//! apply only while the provider is the file's own.
//!
//! **The mode under CI.** Where `CI` is set (as insta detects it: `CI` set
//! to anything but `false`, `0` or nothing, else `TF_BUILD` set) the mode
//! is `replay` unless `RAGALIQ_MODE` in the job's environment says
//! otherwise (a nightly job that records on purpose). A `mode` in the file
//! or in `#[rag_test(mode = "…")]` that asks for anything but `replay` is
//! ignored there, and one line on stderr per process says so, so a
//! committed setting never makes CI call a judge. Elsewhere the attribute
//! beats `RAGALIQ_MODE`, which beats the file. [`Config::mode_origin`]
//! and [`Config::mode_reason`] say what decided.
//!
//! | key in `ragaliq.toml` | variable | accepted | default |
//! | --- | --- | --- | --- |
//! | `mode` | `RAGALIQ_MODE` | `replay`, `auto`, `record`, `live` | `replay` on CI, else `auto`; under CI only `RAGALIQ_MODE` picks another mode (a file's or `#[rag_test]`'s other than `replay` is ignored, said once on stderr) |
//! | `judge.provider` | `RAGALIQ_JUDGE` (`provider:model`, or a base URL) | `openai`, `anthropic`, `ollama`, `openai-compatible` | `openai` |
//! | `judge.model` | `RAGALIQ_MODEL` | any model name | per provider |
//! | `judge.base_url` | `RAGALIQ_BASE_URL` (or `RAGALIQ_JUDGE=http://…`) | `http://…` or `https://…` | per provider; none for `openai-compatible` (replay needs none) |
//! | `judge.api_key_env` | `RAGALIQ_API_KEY_ENV` | a variable name | `OPENAI_API_KEY` / `ANTHROPIC_API_KEY` |
//! | `judge.json_mode` | `RAGALIQ_JSON_MODE` | `schema`, `object-schema`, `object`, `none` | `schema` (a refused mode steps down by itself) |
//! | `judge.temperature` | `RAGALIQ_TEMPERATURE` | 0 to 2 | 0 |
//! | `judge.max_tokens` | `RAGALIQ_MAX_TOKENS` | 1 to 1,000,000 | 2048 (the ceiling) |
//! | `judge.sized_max_tokens` | `RAGALIQ_SIZED_MAX_TOKENS` | `true`, `false` | `true`: each reply's limit is sized for its task |
//! | `judge.concurrency` | `RAGALIQ_CONCURRENCY` | 1 to 1024 | 8; 1 for a server on this machine (local servers usually answer one request at a time and queue the rest) |
//! | `judge.timeout_secs` | `RAGALIQ_TIMEOUT_SECS` | over 0, up to 3600 | 120, plus half a second per token of the reply's limit (a floor of 2 tokens/s): one attempt's bound |
//! | `judge.rpm` | `RAGALIQ_RPM` | over 0 | none: requests per minute to pace to, besides what the provider's rate-limit headers say |
//! | `judge.tpm` | `RAGALIQ_TPM` | over 0 | none: tokens per minute (prompt characters / 4 plus `max_tokens` per request) |
//! | `judge.idle_timeout_secs` | `RAGALIQ_IDLE_TIMEOUT_SECS` | over 0, up to 3600 | 30 (streamed replies) |
//! | `judge.stream` | `RAGALIQ_STREAM` | `true`, `false` | `true` |
//! | `retry.max_retries` | `RAGALIQ_MAX_RETRIES` | 0 to 100 | 4 |
//! | `retry.initial_backoff_ms` | — | 0 to 600,000 | 500 |
//! | `retry.max_backoff_ms` | — | 0 to 600,000 | 20,000 |
//! | `retry.budget_secs` | `RAGALIQ_RETRY_BUDGET_SECS` | 0 to 86,400 | 120 |
//! | `thresholds.<metric>` | `RAGALIQ_THRESHOLD_<METRIC>` | 0 to 1 | faithfulness, relevance, context precision and recall 0.7; hallucination 0.8; correctness 0.5; criteria 0.45; retrieval 0 (a suite's retrieval metrics that name no threshold of their own are measured, and fail no case); abstention, consistency, retention 0.5 |
//! | `scoring.weights` | `RAGALIQ_WEIGHTS` | `ratio`, `weighted`, `strict`, or four numbers | `ratio` |
//! | `judge.strategy` | `RAGALIQ_STRATEGY` | `probability`, `word`, `json` | `probability`: short yes/no questions read from token probabilities (see [`Strategy`]) |
//! | `judge.claim_threshold` | `RAGALIQ_CLAIM_THRESHOLD` | 0 to 1 | 0.33: P(supported) at or above which a claim is supported (`cargo ragaliq calibrate --fit` fits it) |
//! | `judge.passage_threshold` | `RAGALIQ_PASSAGE_THRESHOLD` | 0 to 1 | 0.5: P(relevant) at or above which a passage counts as relevant (context precision) |
//! | `judge.contradiction` | `RAGALIQ_CONTRADICTION` | `true`, `false` | `true`: a claim the judge answers no to is asked whether the passages contradict it |
//! | `judge.contradiction_ratio` | `RAGALIQ_CONTRADICTION_RATIO` | 1 to 100 | 3: an unsupported claim is contradicted when P(contradicted) is more than this many times P(supported) (`--fit` fits it) |
//! | `judge.claims` | `RAGALIQ_CLAIMS` | `extract`, `sentences` | `extract`: the judge lists the response's atomic claims; `sentences` takes its sentences, with no call |
//! | `judge.chunk_chars` | `RAGALIQ_CHUNK_CHARS` | 0 to 1,000,000 | 0 (never): passages longer than this are asked about in chunks, and the best chunk counts |
//! | `judge.history_turns` | `RAGALIQ_HISTORY_TURNS` | 1 to 100 | 3: the most earlier turns of a conversation a follow-up's questions show |
//! | `judge.history_chars` | `RAGALIQ_HISTORY_CHARS` | 100 to 1,000,000 | 2000: the most characters of earlier turns they show (older turns dropped first) |
//! | `judge.verify_batch` | `RAGALIQ_VERIFY_BATCH` | 1 to 64 | 4 (claims per verification call with `strategy = "json"`; 1 asks each claim alone) |
//! | `scoring.confidence_floor` | `RAGALIQ_CONFIDENCE_FLOOR` | 0 to 1 | none: hallucination counts the claims that are not supported; when set, a supported claim whose P(supported) (or stated confidence) is under it counts too |
//! | `scoring.correctness` | `RAGALIQ_CORRECTNESS` | `direct`; claims both ways: `f1` (or `claims`), `precision`, `recall` | `direct`: one question per answer, P(yes) against `thresholds.correctness` |
//! | `judge.criteria_form` | `RAGALIQ_CRITERIA_FORM` | `yes_no`, `scored` | `yes_no`: the form `cargo ragaliq calibrate` judges labelled criteria in |
//! | `scoring.evidence` | `RAGALIQ_EVIDENCE` | `checked`, `off` | `checked`: a verdict's quote must be in a passage |
//! | `scoring.samples` | `RAGALIQ_SAMPLES` | 1 to 25, or `"auto"`; above 1 only with `strategy = "word"` or `"json"` | 1 |
//! | `scoring.agreement` | `RAGALIQ_AGREEMENT` | over 0.5, up to 1 | 0.6 (3 of 5) |
//! | `scoring.found_rule` | `RAGALIQ_FOUND_RULE` | `true`, `false` | `true`: a response that gives the expected answer with nothing in it that casts doubt on it is decided correct with no call, kept in the recording for a person to overrule; `false` asks the judge about every answer (see [`evidence::answer`](crate::evidence::answer)) |
//! | `scoring.uncertain` | `RAGALIQ_UNCERTAIN` | `fail`, `pass`, `decide` | `fail`: a test whose judges are unsure awaits a person, and fails meanwhile (see [`Uncertain`]) |
//! | `bands.<kind>` (`claims`, `answers`, `passages`, `graded`, `judged`, `custom`) | `RAGALIQ_BAND_<KIND>` | `[low, high]` from 0 to 1 (`"never"` for a side that decides nothing: `[0.1, "never"]`), `"off"` (every reading decides), `"all"` (none does), `"unmeasured"` | measured for the kit's models, else unmeasured, [0.05, 0.95): [`Bands::measured`](crate::Bands::measured) |
//! | `[[escalate]]` | — | a judge's keys (as `[judge]`), with its own `[escalate.bands]` | none: an item the judge is unsure of awaits a person |
//! | `prompts.dir` | `RAGALIQ_PROMPTS_DIR` | a folder (relative to the package root) | built-in |
//! | `cost.max_usd` | `RAGALIQ_MAX_COST_USD` | dollars, 0 or more | no budget; one per run (a `cargo nextest run`, the processes sharing `RAGALIQ_RUN_ID`, else each test binary); live calls need the model's price, replay none |
//! | `cost.prices."<model>"` | — | `{ input_per_million = …, output_per_million = … }` | built-in table |
//! | `gates.pass_rate` | — | 0 to 1, or a table of metrics (as trials name them: `faithfulness`, `"recall@5"`; `"*"` for the others) to shares | none: every trial must pass; with it, a metric's trials may fail on their score as long as this share of them passes (see [`Gates`]) |
//! | `gates.min_mean` | — | 0 to 1, or a table of metrics to means | none: the least a metric's mean score over the run may be |
//! | `gates.max_drop` | — | 0 to 1, or a table of metrics to drops | none: the most a metric's mean may fall against the baseline run, over the cases both scored |
//! | `gates.baseline` | — | a previous run's `report.json` or its folder (relative to this file) | none; a suite's `.baseline(…)`, `RAGALIQ_BASELINE` and `cargo ragaliq report --baseline` win |
//! | — | `RAGALIQ_REPORT_DIR` | a folder for suite reports | none; a suite's `.report_dir(…)` wins |
//! | — | `RAGALIQ_COLLECT` | a batch folder (set by `cargo ragaliq record --batch`) | none: unrecorded questions are asked |
//! | `pipeline.openai_base_url` | `RAGALIQ_PIPELINE_OPENAI_BASE_URL` | `http://…` or `https://…`, up to and including `/v1` | `https://api.openai.com/v1`: where the pipeline's OpenAI-compatible calls go when recorded (see [`pipeline`](crate::pipeline)) |
//! | `pipeline.anthropic_base_url` | `RAGALIQ_PIPELINE_ANTHROPIC_BASE_URL` | `http://…` or `https://…`, up to and including `/v1` | `https://api.anthropic.com/v1`: where the pipeline's `/v1/messages` calls go when recorded |
//! | `pipeline.timeout_secs` | `RAGALIQ_PIPELINE_TIMEOUT_SECS` | over 0, up to 3600 | 120: the longest one forwarded call may take, to its last byte |
//! | `pipeline.idle_timeout_secs` | `RAGALIQ_PIPELINE_IDLE_TIMEOUT_SECS` | over 0, up to 3600 | 30: the longest a streamed answer may go without a byte |
//! | `pipeline.concurrency` | `RAGALIQ_PIPELINE_CONCURRENCY` | 1 to 1024 | 8: forwarded calls in flight at once, per process |
//! | `pipeline.shared_limits` | `RAGALIQ_PIPELINE_SHARED_LIMITS` | `true`, `false` | `false`: with `true`, the judge's run-wide concurrency limit, pace (`judge.rpm`, `judge.tpm`) and `cost.max_usd` count the pipeline's live calls too |
//!
//! A `[fitted]` table (per kind fitted: the model, the set, the date, the
//! kappa) says where the thresholds in the file were fitted; `cargo ragaliq
//! calibrate --fit` writes it. ragaliq reads only the models from it: each
//! kind's thresholds apply to its own model only (see [`Fitted`]).
//!
//! `RAGALIQ_CONFIG` names another file to read instead of `ragaliq.toml`.
//! API keys are read only from the variable `api_key_env` names, never from
//! the file.

pub use crate::core::Mode;
pub use crate::core::{BUILTIN_PRICES, GateRule, Gates, Price};

use crate::core::{
    ApiKey, Band, Bands, ConfigError, DEFAULT_AGREEMENT, JsonMode, Kind, Metric, Samples, Strategy,
    Uncertain, VerdictWeights, price_for,
};
use crate::transport::{RetryPolicy, redact_url};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Display;
use std::path::{Path, PathBuf};
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

    fn default_base_url(self) -> Option<&'static str> {
        match self {
            Provider::OpenAi => Some("https://api.openai.com/v1"),
            Provider::Anthropic => Some("https://api.anthropic.com/v1"),
            Provider::Ollama => Some("http://localhost:11434/v1"),
            Provider::OpenAiCompatible => None,
        }
    }

    fn default_model(self) -> Option<&'static str> {
        match self {
            Provider::OpenAi => Some("gpt-4o-mini"),
            Provider::Anthropic => Some("claude-haiku-4-5"),
            Provider::Ollama => Some("llama3.1"),
            Provider::OpenAiCompatible => None,
        }
    }

    fn default_key_env(self) -> Option<&'static str> {
        match self {
            Provider::OpenAi => Some("OPENAI_API_KEY"),
            Provider::Anthropic => Some("ANTHROPIC_API_KEY"),
            Provider::Ollama | Provider::OpenAiCompatible => None,
        }
    }

    fn default_json_mode(self) -> JsonMode {
        JsonMode::Schema
    }
}

/// Resolved, validated configuration.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct Config {
    /// The mode recordings are used in.
    pub mode: Mode,
    /// What decided [`mode`](Self::mode) (see [`Config::mode_reason`]).
    pub mode_origin: ModeOrigin,
    /// A mode the file, a test's attribute or code ([`set_mode`](Self::set_mode))
    /// asked for and that was ignored because `CI` is set: under CI only
    /// `RAGALIQ_MODE` picks a mode other than replay.
    pub mode_ignored: Option<IgnoredMode>,
    /// The provider.
    pub provider: Provider,
    /// The model.
    pub model: String,
    /// The server's base URL, up to and including `/v1`; `None` when no
    /// setting gives one (fine for replay, an error at the first live call).
    pub base_url: Option<String>,
    /// The variable holding the API key; `None` when the server needs none.
    pub api_key_env: Option<String>,
    /// How OpenAI-compatible servers are asked for JSON.
    pub json_mode: JsonMode,
    /// Sampling temperature.
    pub temperature: f64,
    /// Most tokens per reply.
    pub max_tokens: u32,
    /// Most requests in flight at once.
    pub concurrency: usize,
    /// Requests per minute to pace to (besides the provider's headers).
    pub rpm: Option<f64>,
    /// Tokens per minute to pace to.
    pub tpm: Option<f64>,
    /// Time allowed for one attempt.
    pub timeout: Duration,
    /// Time a streamed reply may go without data.
    pub idle_timeout: Duration,
    /// Whether replies are streamed (server-sent events).
    pub stream: bool,
    /// Whether each task's reply limit is sized from its input, under `max_tokens`.
    pub sized_max_tokens: bool,
    /// Claims asked about in one verification call.
    pub verify_batch: usize,
    /// How verdicts and scores are asked for.
    pub strategy: Strategy,
    /// P(supported) at or above which a claim is supported.
    pub claim_threshold: f64,
    /// P(relevant) at or above which a passage is relevant.
    pub passage_threshold: f64,
    /// Whether an unsupported claim is asked whether it is contradicted.
    pub contradiction: bool,
    /// How many times P(supported) P(contradicted) must reach for an
    /// unsupported claim to be contradicted.
    pub contradiction_ratio: f64,
    /// Passages longer than this (characters) are asked about in chunks; 0
    /// never chunks.
    pub chunk_chars: usize,
    /// The earlier turns of a conversation a follow-up's questions show.
    pub history: crate::core::Window,
    /// Claims are the response's sentences (no judge call) instead of the
    /// atomic claims the judge extracts.
    pub sentences: bool,
    /// Whether a verdict's evidence must be found in the passages.
    pub evidence_checked: bool,
    /// How many times each question is asked.
    pub samples: Samples,
    /// The share of samples that must agree for a verdict to stand.
    pub agreement: f64,
    /// Retries.
    pub retry: RetryPolicy,
    /// Thresholds, in the order of [`Metric::ALL`].
    pub thresholds: [f64; Metric::ALL.len()],
    /// Verdict weights for faithfulness.
    pub weights: VerdictWeights,
    /// Hallucination's confidence floor: none by default (a claim is
    /// hallucinated when it is not supported, the one rule faithfulness
    /// uses); when set, a supported claim whose P(supported) (or stated
    /// confidence) is under it counts as hallucinated too.
    pub confidence_floor: Option<f64>,
    /// How answer correctness scores.
    pub correctness: crate::core::Correctness,
    /// The form criteria given as plain text take where nothing else says.
    pub criteria_form: crate::core::CriteriaForm,
    /// A folder of prompt templates overriding the built-in ones.
    pub prompts_dir: Option<PathBuf>,
    /// The configuration file that was read, if any.
    pub file: Option<PathBuf>,
    /// Stop live calls once this many dollars are spent (estimated).
    pub max_cost_usd: Option<f64>,
    /// Price overrides by model (`[cost.prices."<model>"]`).
    pub prices: BTreeMap<String, Price>,
    /// Where suites write their reports (`RAGALIQ_REPORT_DIR`).
    pub report_dir: Option<PathBuf>,
    /// Collect mode (`RAGALIQ_COLLECT`, set by `cargo ragaliq record
    /// --batch`): the batch folder where unrecorded questions are queued
    /// instead of asked, and their answers read once the batch ends.
    pub collect: Option<PathBuf>,
    /// The file's `[fitted]` table: for each kind fitted, the model its
    /// thresholds were fitted for, and whether they apply to this judge's
    /// model.
    pub fitted: Option<Fitted>,
    /// What a whole run must reach (`[gates]`): checked by suites and
    /// `cargo ragaliq report`.
    pub gates: Gates,
    /// Where this judge's readings of each kind are uncertain.
    pub bands: Bands,
    /// What a test does when an item is still uncertain after the last
    /// judge.
    pub uncertain: Uncertain,
    /// Whether answer correctness decides, with no call, an answer that
    /// gives the expected answer with nothing against it (the found rule;
    /// `[scoring] found_rule`, on by default).
    pub found_rule: bool,
    /// The judges an uncertain item is escalated to, in order (each
    /// `[[escalate]]` table, resolved as a `[judge]` of its own with the
    /// file's other settings; `RAGALIQ_*` variables other than the mode's
    /// set the first judge only).
    pub escalate: Vec<Config>,
    /// Where the pipeline under test's own model calls go when they are
    /// recorded, and their limits (`[pipeline]`).
    pub pipeline: crate::core::pipeline::Settings,
    api_key: Option<ApiKey>,
    /// `CI` is set (as insta detects it): a mode code sets may then only be
    /// replay ([`set_mode`](Self::set_mode)).
    ci: bool,
}

/// The configuration, with the base URL's query string and user
/// information hidden (a gateway may take its token there) and the key
/// never shown.
impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("mode", &self.mode)
            .field("mode_origin", &self.mode_origin)
            .field("mode_ignored", &self.mode_ignored)
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("base_url", &self.base_url.as_deref().map(redact_url))
            .field("api_key_env", &self.api_key_env)
            .field("json_mode", &self.json_mode)
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("concurrency", &self.concurrency)
            .field("rpm", &self.rpm)
            .field("tpm", &self.tpm)
            .field("timeout", &self.timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("stream", &self.stream)
            .field("sized_max_tokens", &self.sized_max_tokens)
            .field("verify_batch", &self.verify_batch)
            .field("strategy", &self.strategy)
            .field("claim_threshold", &self.claim_threshold)
            .field("passage_threshold", &self.passage_threshold)
            .field("contradiction", &self.contradiction)
            .field("contradiction_ratio", &self.contradiction_ratio)
            .field("chunk_chars", &self.chunk_chars)
            .field("history", &self.history)
            .field("sentences", &self.sentences)
            .field("evidence_checked", &self.evidence_checked)
            .field("samples", &self.samples)
            .field("agreement", &self.agreement)
            .field("retry", &self.retry)
            .field("thresholds", &self.thresholds)
            .field("weights", &self.weights)
            .field("confidence_floor", &self.confidence_floor)
            .field("prompts_dir", &self.prompts_dir)
            .field("file", &self.file)
            .field("max_cost_usd", &self.max_cost_usd)
            .field("prices", &self.prices)
            .field("report_dir", &self.report_dir)
            .field("collect", &self.collect)
            .field("gates", &self.gates)
            .field("bands", &self.bands)
            .field("uncertain", &self.uncertain)
            .field("found_rule", &self.found_rule)
            .field("escalate", &self.escalate)
            .field("pipeline", &self.pipeline)
            .field("api_key", &self.api_key)
            .finish()
    }
}

impl Config {
    /// Reads `ragaliq.toml` (or the file `RAGALIQ_CONFIG` names) from the
    /// package root — `CARGO_MANIFEST_DIR`, which cargo sets for tests and
    /// examples, else the current folder — and the process environment.
    pub fn load() -> Result<Config, ConfigError> {
        let env = |name: &str| std::env::var(name).ok();
        let root = env("CARGO_MANIFEST_DIR").map_or_else(|| PathBuf::from("."), PathBuf::from);
        Config::load_from(&root, &env)
    }

    /// Reads `ragaliq.toml` (or the file `RAGALIQ_CONFIG` names) from the
    /// package root `root`, with `env` as the environment.
    pub fn load_from(
        root: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        Config::load_with(root, env, None)
    }

    /// [`load_from`](Self::load_from) for a `#[rag_test]` whose attribute
    /// asks for `attribute`'s mode (the mode, and the test it is on). The
    /// attribute beats `RAGALIQ_MODE` and the file, except under `CI`,
    /// where it may only ask for replay.
    pub(crate) fn load_with(
        root: &Path,
        env: &dyn Fn(&str) -> Option<String>,
        attribute: Option<(Mode, String)>,
    ) -> Result<Config, ConfigError> {
        let path = match env("RAGALIQ_CONFIG").filter(|p| !p.is_empty()) {
            Some(p) => {
                let p = root.join(p);
                if !p.is_file() {
                    return Err(ConfigError::Invalid {
                        origin: "RAGALIQ_CONFIG".into(),
                        value: p.display().to_string(),
                        expected: "the path of an existing TOML file".into(),
                    });
                }
                p
            }
            None => root.join("ragaliq.toml"),
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(ConfigError::File {
                    path: path.display().to_string(),
                    message: e.to_string(),
                });
            }
        };
        Config::resolve(
            text.as_deref().map(|t| (t, path.as_path())),
            root,
            env,
            attribute,
            None,
        )
    }

    /// Resolves configuration from a file's text (with its path, for
    /// messages and relative folders), a package root, and an environment
    /// lookup. [`Config::load`] calls it with the real ones; tests with fakes.
    ///
    /// ```
    /// use ragaliq::config::{Config, Provider};
    /// use std::path::Path;
    /// let toml = "[judge]\nprovider = \"anthropic\"\nconcurrency = 4\n";
    /// let env = |name: &str| match name {
    ///     "RAGALIQ_CONCURRENCY" => Some("16".to_string()),
    ///     _ => None,
    /// };
    /// let c = Config::from_sources(Some((toml, Path::new("ragaliq.toml"))), Path::new("."), &env).unwrap();
    /// assert_eq!(c.provider, Provider::Anthropic);
    /// assert_eq!(c.concurrency, 16); // the variable overrides the file
    ///
    /// let env = |name: &str| (name == "RAGALIQ_CONCURRENCY").then(|| "lots".to_string());
    /// let err = Config::from_sources(None, Path::new("."), &env).unwrap_err();
    /// assert_eq!(err.to_string(),
    ///     "RAGALIQ_CONCURRENCY = \"lots\" is invalid: expected a whole number from 1 to 1024");
    /// ```
    pub fn from_sources(
        file: Option<(&str, &Path)>,
        root: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        Config::resolve(file, root, env, None, None)
    }

    /// `parsed`: the file's table, already read (an `[[escalate]]` judge's,
    /// made from the file); else the file's text is parsed.
    fn resolve(
        file: Option<(&str, &Path)>,
        root: &Path,
        env: &dyn Fn(&str) -> Option<String>,
        attribute: Option<(Mode, String)>,
        parsed: Option<toml::Table>,
    ) -> Result<Config, ConfigError> {
        let raw: RawFile = match (file, parsed) {
            (Some((_, path)), Some(table)) => {
                table
                    .try_into()
                    .map_err(|e: toml::de::Error| ConfigError::File {
                        path: path.display().to_string(),
                        message: e.to_string().trim_end().to_owned(),
                    })?
            }
            (Some((text, path)), None) => toml::from_str(text).map_err(|e| ConfigError::File {
                path: path.display().to_string(),
                message: e.to_string().trim_end().to_owned(),
            })?,
            (None, _) => RawFile::default(),
        };
        let file_name = file.map_or_else(
            || "ragaliq.toml".to_owned(),
            |(_, p)| {
                p.file_name().map_or_else(
                    || p.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                )
            },
        );
        let file_dir = file
            .and_then(|(_, p)| p.parent())
            .map_or_else(|| root.to_path_buf(), Path::to_path_buf);
        let r = Resolver {
            env: &|name| env(name).filter(|v| !v.trim().is_empty()),
            file: &file_name,
        };
        let mut judge = raw.judge.unwrap_or_default();
        let retry = raw.retry.unwrap_or_default();
        let mut thresholds = raw.thresholds.unwrap_or_default();
        let scoring = raw.scoring.unwrap_or_default();

        let valid_mode = |m: &String| Mode::from_name(m).is_some();
        let variable_mode = r
            .pick("RAGALIQ_MODE", "mode", None, text, valid_mode, Mode::NAMES)?
            .map(|m| Mode::from_name(&m).expect("checked"));
        // The variable beats the file: the file's mode is read (and
        // checked) only when the variable does not set one.
        let file_mode = match variable_mode {
            Some(_) => None,
            None => r
                .pick_file("mode", raw.mode, valid_mode, Mode::NAMES)?
                .map(|m| Mode::from_name(&m).expect("checked")),
        };
        let file_path = file.map_or_else(|| root.join("ragaliq.toml"), |(_, p)| p.to_path_buf());
        let (mode, mode_origin, mode_ignored) = pick_mode(
            [
                attribute.map(|(m, test)| (m, ModeOrigin::Attribute(test))),
                variable_mode.map(|m| (m, ModeOrigin::Variable)),
                file_mode.map(|m| (m, ModeOrigin::File(file_path))),
            ],
            Mode::default_for(env) == Mode::Replay,
        );

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
        let mut fitted = raw.fitted.as_ref().map(|table| Fitted::read(table, &model));
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
        let retry = RetryPolicy::default()
            .with_max_retries(max_retries)
            .with_backoff(
                initial_ms.map_or(defaults.initial_backoff, |ms| {
                    Duration::from_millis(ms as u64)
                }),
                max_ms.map_or(defaults.max_backoff, |ms| Duration::from_millis(ms as u64)),
            )
            .with_total_budget(budget.map_or(defaults.total_budget, Duration::from_secs_f64));

        let mut threshold_values = Metric::ALL.map(Metric::default_threshold);
        for (slot, metric) in threshold_values.iter_mut().zip(Metric::ALL) {
            let var = format!("RAGALIQ_THRESHOLD_{}", metric.name().to_uppercase());
            let key = format!("thresholds.{}", metric.name());
            if let Some(t) = r.pick(
                &var,
                &key,
                thresholds.get(metric),
                float,
                |t| (0.0..=1.0).contains(t),
                "a number from 0 to 1",
            )? {
                *slot = t;
            }
        }

        let weights = match ((r.env)("RAGALIQ_WEIGHTS"), scoring.weights) {
            (Some(v), _) => parse_weights(&v).ok_or_else(|| ConfigError::Invalid {
                origin: "RAGALIQ_WEIGHTS".into(),
                value: v,
                expected: WEIGHTS_EXPECTED.into(),
            })?,
            (None, Some(RawWeights::Preset(name))) => {
                VerdictWeights::preset(&name).ok_or_else(|| ConfigError::Invalid {
                    origin: format!("{file_name}: scoring.weights"),
                    value: name,
                    expected: WEIGHTS_EXPECTED.into(),
                })?
            }
            (None, Some(RawWeights::Table(t))) => {
                let w = VerdictWeights::new(
                    t.supported,
                    t.partially_supported,
                    t.no_evidence,
                    t.contradicted,
                );
                if !w.is_finite() {
                    return Err(ConfigError::Invalid {
                        origin: format!("{file_name}: scoring.weights"),
                        value: format!("{w:?}"),
                        expected: "finite numbers".into(),
                    });
                }
                w
            }
            (None, None) => VerdictWeights::RATIO,
        };
        let confidence_floor = r.pick(
            "RAGALIQ_CONFIDENCE_FLOOR",
            "scoring.confidence_floor",
            scoring.confidence_floor,
            float,
            |t| (0.0..=1.0).contains(t),
            "a number from 0 to 1",
        )?;
        let correctness = r
            .pick(
                "RAGALIQ_CORRECTNESS",
                "scoring.correctness",
                scoring.correctness,
                text,
                |v| v.parse::<crate::core::Correctness>().is_ok(),
                crate::core::Correctness::NAMES,
            )?
            .map_or(crate::core::Correctness::default(), |v| {
                v.parse().expect("checked")
            });
        let criteria_form = r
            .pick(
                "RAGALIQ_CRITERIA_FORM",
                "judge.criteria_form",
                judge.criteria_form.take(),
                text,
                |v| crate::core::CriteriaForm::from_name(v).is_some(),
                crate::core::CriteriaForm::NAMES,
            )?
            .map_or(crate::core::CriteriaForm::YesNo, |v| {
                crate::core::CriteriaForm::from_name(&v).expect("checked")
            });
        let samples = match ((r.env)("RAGALIQ_SAMPLES"), scoring.samples) {
            (Some(v), _) => Samples::parse(&v).ok_or_else(|| ConfigError::Invalid {
                origin: "RAGALIQ_SAMPLES".into(),
                value: v.clone(),
                expected: Samples::EXPECTED.into(),
            })?,
            (None, Some(raw)) => {
                let text = match &raw {
                    RawSamples::Count(n) => n.to_string(),
                    RawSamples::Name(s) => s.clone(),
                };
                Samples::parse(&text).ok_or_else(|| ConfigError::Invalid {
                    origin: format!("{file_name}: scoring.samples"),
                    value: text,
                    expected: Samples::EXPECTED.into(),
                })?
            }
            (None, None) => Samples::default(),
        };
        let evidence_checked = r
            .pick(
                "RAGALIQ_EVIDENCE",
                "scoring.evidence",
                scoring.evidence,
                text,
                |v| v == "checked" || v == "off",
                "checked or off",
            )?
            .is_none_or(|v| v == "checked");
        let agreement = r
            .pick(
                "RAGALIQ_AGREEMENT",
                "scoring.agreement",
                scoring.agreement,
                float,
                |a| *a > 0.5 && *a <= 1.0,
                "a share over 0.5 and up to 1 (0.6: 3 of 5 samples must agree)",
            )?
            .unwrap_or(DEFAULT_AGREEMENT);

        let uncertain = r
            .pick(
                "RAGALIQ_UNCERTAIN",
                "scoring.uncertain",
                scoring.uncertain,
                text,
                |v| v.parse::<Uncertain>().is_ok(),
                "fail, pass or decide",
            )?
            .map_or(Uncertain::default(), |v| v.parse().expect("checked"));
        let found_rule = r
            .pick(
                "RAGALIQ_FOUND_RULE",
                "scoring.found_rule",
                scoring.found_rule,
                boolean,
                |_| true,
                "true (a found answer with nothing against it is decided with no call) or false (the judge is asked about every answer)",
            )?
            .unwrap_or(true);
        let mut bands = read_bands(&r, raw.bands.as_ref(), &model)?;
        // A band fitted for one model applies to that model only, as a
        // threshold does: another model gets the default band, and the
        // judge's description says so. A variable setting it stands.
        if let (Some(table), Some(fitted)) = (&raw.fitted, fitted.as_mut()) {
            for kind in Kind::ALL {
                let var = format!("RAGALIQ_BAND_{}", kind.name().to_ascii_uppercase());
                if let Some(fitted_for) = table
                    .get(&format!("{}_band_model", kind.name()))
                    .and_then(toml::Value::as_str)
                    && fitted_for != model
                    && (r.env)(&var).is_none()
                {
                    bands.set(kind, Bands::measured(&model).get(kind));
                    fitted.bands_not_applied.push((kind, fitted_for.to_owned()));
                }
            }
        }
        let escalate = match &raw.escalate {
            None => Vec::new(),
            Some(list) => {
                let whole: toml::Table = match file {
                    Some((text, _)) => toml::from_str(text).unwrap_or_default(),
                    None => toml::Table::new(),
                };
                let mut out = Vec::with_capacity(list.len());
                for (i, entry) in list.iter().enumerate() {
                    out.push(escalation(&whole, entry, i + 1, file, root, env)?);
                }
                out
            }
        };

        let cost = raw.cost.unwrap_or_default();
        let max_cost_usd = r.pick(
            "RAGALIQ_MAX_COST_USD",
            "cost.max_usd",
            cost.max_usd,
            float,
            |x| *x >= 0.0,
            "a number of dollars, 0 or more",
        )?;
        let prices = cost.prices.unwrap_or_default();
        if let Some((model, price)) = prices.iter().find(|(_, p)| !p.is_valid()) {
            return Err(ConfigError::Invalid {
                origin: format!("{file_name}: cost.prices.\"{model}\""),
                value: format!("{price:?}"),
                expected: "prices that are finite and not negative".into(),
            });
        }
        let report_dir = (r.env)("RAGALIQ_REPORT_DIR").map(|d| root.join(d));
        let collect = (r.env)("RAGALIQ_COLLECT")
            .filter(|d| !d.trim().is_empty())
            .map(|d| root.join(d));
        if collect.is_some() && matches!(mode, Mode::Replay | Mode::Live) {
            return Err(ConfigError::Invalid {
                origin: "RAGALIQ_COLLECT".into(),
                value: format!("set, with mode {mode}"),
                expected: "mode auto or record: collect mode queues what recordings do not answer (`cargo ragaliq record --batch` sets both)".into(),
            });
        }
        let prompts_dir = match (
            (r.env)("RAGALIQ_PROMPTS_DIR"),
            raw.prompts.and_then(|p| p.dir),
        ) {
            (Some(dir), _) => Some(root.join(dir)),
            (None, Some(dir)) => Some(file_dir.join(dir)),
            (None, None) => None,
        };

        let gates = match raw.gates {
            None => Gates::default(),
            Some(g) => {
                let rule = |raw: Option<RawRule>| match raw {
                    None => GateRule::default(),
                    Some(RawRule::Every(v)) => GateRule::every(v),
                    Some(RawRule::Each(map)) => {
                        let mut rule = map
                            .get("*")
                            .map_or_else(GateRule::default, |v| GateRule::every(*v));
                        for (metric, v) in map.into_iter().filter(|(m, _)| m != "*") {
                            rule = rule.with(metric, v);
                        }
                        rule
                    }
                };
                let mut gates = Gates::new();
                gates.pass_rate = rule(g.pass_rate);
                gates.min_mean = rule(g.min_mean);
                gates.max_drop = rule(g.max_drop);
                gates.baseline = g.baseline.map(|b| file_dir.join(b));
                gates.check(&format!("{file_name}: gates"))?;
                gates
            }
        };
        let api_key = api_key_env
            .as_deref()
            .and_then(env)
            .filter(|k| !k.trim().is_empty())
            .map(|k| ApiKey::new(k.trim()));
        let pipeline = pipeline_settings(&r, raw.pipeline)?;
        Ok(Config {
            ci: Mode::default_for(env) == Mode::Replay,
            mode,
            mode_origin,
            mode_ignored,
            provider,
            model,
            base_url,
            api_key_env,
            json_mode,
            temperature,
            max_tokens: max_tokens as u32,
            concurrency: concurrency as usize,
            rpm,
            tpm,
            timeout: Duration::from_secs_f64(timeout),
            idle_timeout: Duration::from_secs_f64(idle_timeout),
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
            sentences,
            evidence_checked,
            samples,
            agreement,
            retry,
            thresholds: threshold_values,
            weights,
            confidence_floor,
            correctness,
            criteria_form,
            prompts_dir,
            file: file.map(|(_, p)| p.to_path_buf()),
            max_cost_usd,
            prices,
            report_dir,
            collect,
            fitted,
            gates,
            bands,
            uncertain,
            found_rule,
            escalate,
            pipeline,
            api_key,
        })
    }

    /// Why the mode is what it is, in words for banners and messages:
    /// `CI is set`, `RAGALIQ_MODE`, `ragaliq.toml's mode`, or, when CI made
    /// ragaliq ignore a mode, `CI is set; ragaliq.toml's mode = "auto"
    /// ignored`.
    ///
    /// ```
    /// use ragaliq::{Config, Mode};
    /// use std::path::Path;
    /// let ci = |name: &str| (name == "CI").then(|| "true".to_string());
    /// let file = Some(("mode = \"auto\"\n", Path::new("ragaliq.toml")));
    /// let c = Config::from_sources(file, Path::new("."), &ci).unwrap();
    /// assert_eq!(c.mode, Mode::Replay);
    /// assert_eq!(c.mode_reason(), "CI is set; ragaliq.toml's mode = \"auto\" ignored");
    /// ```
    #[must_use]
    pub fn mode_reason(&self) -> String {
        let because = self.mode_origin.to_string();
        match (&self.mode_ignored, &self.mode_origin) {
            (None, _) => because,
            (Some(ignored), ModeOrigin::Ci) => format!("{because}; {ignored} ignored"),
            (Some(ignored), _) => format!("{because}; CI is set, so {ignored} is ignored"),
        }
    }

    /// The one line to say, once per process, that CI made ragaliq ignore
    /// the mode a file or an attribute asked for; `None` when nothing was
    /// ignored.
    #[must_use]
    pub fn mode_warning(&self) -> Option<String> {
        let ignored = self.mode_ignored.as_ref()?;
        let from = match &ignored.origin {
            ModeOrigin::File(path) => format!(" ({})", path.display()),
            _ => String::new(),
        };
        Some(format!(
            "ragaliq: CI is set, so {ignored}{from} is ignored and the mode is {} ({}): under CI a file, #[rag_test] or the program (Suite::mode, Calibration::with_mode) may only ask for replay, so no judge is called unless the job says so; to record in CI on purpose, set RAGALIQ_MODE=record in the job's environment (said once per process)",
            self.mode, self.mode_origin
        ))
    }

    /// Sets the mode from code (a suite's or a calibration's own choice),
    /// which then owns it: what the configuration said about the mode no
    /// longer applies. Except under `CI`, where code is a committed setting
    /// like a file's `mode` or `#[rag_test(mode)]`: it may only ask for
    /// replay there. A mode that calls the judge is then ignored, kept as
    /// [`mode_ignored`](Self::mode_ignored) for
    /// [`mode_warning`](Self::mode_warning) to say, and the mode stays what
    /// `RAGALIQ_MODE` or CI made it.
    ///
    /// ```
    /// use ragaliq::{Config, Mode};
    /// use std::path::Path;
    /// let ci = |name: &str| (name == "CI").then(|| "true".to_string());
    /// let mut c = Config::from_sources(None, Path::new("."), &ci).unwrap();
    /// c.set_mode(Mode::Auto);
    /// assert_eq!(c.mode, Mode::Replay);
    /// assert!(c.mode_warning().unwrap().starts_with("ragaliq: CI is set, so mode auto (set by the program) is ignored"));
    /// ```
    pub fn set_mode(&mut self, mode: Mode) {
        if self.ci && mode != Mode::Replay {
            self.mode_ignored = Some(IgnoredMode {
                mode,
                origin: ModeOrigin::Code,
            });
            return;
        }
        self.mode = mode;
        self.mode_origin = ModeOrigin::Code;
        self.mode_ignored = None;
    }

    /// Sets the mode for judges built in code over a transport of the
    /// caller's (a server on 127.0.0.1, a canned one): the caller chose
    /// what they call, so even under `CI` the mode is taken as asked.
    /// Code that uses configured judges calls [`set_mode`](Self::set_mode).
    #[cfg(any(feature = "suite", feature = "calibration"))]
    pub(crate) fn set_mode_for_own_judges(&mut self, mode: Mode) {
        self.mode = mode;
        self.mode_origin = ModeOrigin::Code;
        self.mode_ignored = None;
    }

    /// The API key read from [`api_key_env`](Self::api_key_env), if set.
    #[must_use]
    pub fn api_key(&self) -> Option<ApiKey> {
        self.api_key.clone()
    }

    /// The price of the configured model: an override, else the built-in
    /// table ([`BUILTIN_PRICES`]), else `None`.
    #[must_use]
    pub fn price(&self) -> Option<Price> {
        price_for(&self.model, &self.prices)
    }

    /// The threshold for `metric`.
    #[must_use]
    pub fn threshold(&self, metric: Metric) -> f64 {
        self.thresholds[Metric::ALL
            .iter()
            .position(|m| *m == metric)
            .expect("every metric")]
    }
}

const WEIGHTS_EXPECTED: &str =
    "ratio, weighted, strict, or four numbers \"supported,partial,no_evidence,contradicted\"";

fn parse_weights(v: &str) -> Option<VerdictWeights> {
    if let Some(w) = VerdictWeights::preset(v.trim()) {
        return Some(w);
    }
    let n: Vec<f64> = v
        .split(',')
        .map(|x| x.trim().parse().ok())
        .collect::<Option<_>>()?;
    let w = match n[..] {
        [a, b, c, d] => VerdictWeights::new(a, b, c, d),
        _ => return None,
    };
    w.is_finite().then_some(w)
}

fn valid_var_name(v: &str) -> bool {
    !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn float(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|x| x.is_finite())
}

fn text(s: &str) -> Option<String> {
    Some(s.trim().to_owned())
}

fn boolean(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Some(true),
        "false" | "0" | "no" | "off" => Some(false),
        _ => None,
    }
}

fn int(s: &str) -> Option<i64> {
    s.trim().parse().ok()
}

/// Picks a setting from the environment, else the file, checking it and
/// naming its origin when it is invalid.
struct Resolver<'a> {
    env: &'a dyn Fn(&str) -> Option<String>,
    file: &'a str,
}

impl Resolver<'_> {
    fn pick<T: Display>(
        &self,
        var: &str,
        key: &str,
        from_file: Option<T>,
        parse: impl Fn(&str) -> Option<T>,
        check: impl Fn(&T) -> bool,
        expected: &str,
    ) -> Result<Option<T>, ConfigError> {
        if let Some(text) = (self.env)(var) {
            return match parse(&text) {
                Some(v) if check(&v) => Ok(Some(v)),
                _ => Err(ConfigError::Invalid {
                    origin: var.to_owned(),
                    value: text,
                    expected: expected.to_owned(),
                }),
            };
        }
        self.pick_file(key, from_file, check, expected)
    }

    fn pick_file<T: Display>(
        &self,
        key: &str,
        from_file: Option<T>,
        check: impl Fn(&T) -> bool,
        expected: &str,
    ) -> Result<Option<T>, ConfigError> {
        match from_file {
            Some(v) if !check(&v) => Err(ConfigError::Invalid {
                origin: format!("{}: {key}", self.file),
                value: v.to_string(),
                expected: expected.to_owned(),
            }),
            other => Ok(other),
        }
    }
}

/// What decided a [`Config`]'s mode. Its `Display` is the reason in words
/// (`CI is set`, `RAGALIQ_MODE`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModeOrigin {
    /// `RAGALIQ_MODE` in the environment.
    Variable,
    /// `mode` in the configuration file at this path.
    File(PathBuf),
    /// `#[rag_test(mode = "…")]` on this test (`module::test`).
    Attribute(String),
    /// Code set it after loading ([`Config::set_mode`]; under CI, replay
    /// only).
    Code,
    /// Nothing asked for a mode (or only what CI made ragaliq ignore), and
    /// `CI` is set: replay.
    Ci,
    /// Nothing asked for a mode, and `CI` is not set: auto.
    Default,
}

impl std::fmt::Display for ModeOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModeOrigin::Variable => f.write_str("RAGALIQ_MODE"),
            ModeOrigin::File(path) => write!(f, "{}'s mode", file_label(path)),
            ModeOrigin::Attribute(test) => write!(f, "#[rag_test(mode = …)] on `{test}`"),
            ModeOrigin::Code => f.write_str("set by the program"),
            ModeOrigin::Ci => f.write_str("CI is set"),
            ModeOrigin::Default => f.write_str("the default outside CI"),
        }
    }
}

/// A mode that was asked for and ignored because `CI` is set.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct IgnoredMode {
    /// The mode asked for.
    pub mode: Mode,
    /// Who asked: the file or a test's attribute.
    pub origin: ModeOrigin,
}

/// `ragaliq.toml's mode = "auto"`, `#[rag_test(mode = "auto")] on test
/// `rag::refund``.
impl std::fmt::Display for IgnoredMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.origin {
            ModeOrigin::File(path) => {
                write!(f, "{}'s mode = \"{}\"", file_label(path), self.mode)
            }
            ModeOrigin::Attribute(test) => {
                write!(f, "#[rag_test(mode = \"{}\")] on test `{test}`", self.mode)
            }
            other => write!(f, "mode {} ({other})", self.mode),
        }
    }
}

/// A configuration file's name, as messages call it.
fn file_label(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The mode from what asked for one, in precedence order (a test's
/// attribute, `RAGALIQ_MODE`, the file): the first that asked, else the
/// default (`replay` under CI, `auto` elsewhere).
///
/// Under CI, only `RAGALIQ_MODE` may ask for a mode that calls the judge: a
/// file or an attribute that asks for anything but replay is skipped, and
/// the first one skipped that would otherwise have decided is returned as
/// ignored, so that it can be said. A CI job that records on purpose says
/// so in its own environment.
fn pick_mode(
    asked: [Option<(Mode, ModeOrigin)>; 3],
    ci: bool,
) -> (Mode, ModeOrigin, Option<IgnoredMode>) {
    let mut ignored = None;
    for (mode, origin) in asked.into_iter().flatten() {
        if ci && mode != Mode::Replay && origin != ModeOrigin::Variable {
            ignored.get_or_insert(IgnoredMode { mode, origin });
            continue;
        }
        return (mode, origin, ignored);
    }
    if ci {
        (Mode::Replay, ModeOrigin::Ci, ignored)
    } else {
        (Mode::Auto, ModeOrigin::Default, ignored)
    }
}

/// Where a file's fitted thresholds came from (its `[fitted]` table,
/// written by `cargo ragaliq calibrate --fit`), and whether they apply.
///
/// Thresholds fitted for one model do not carry over to another, kind by
/// kind: each kind `--fit` wrote (claims, answers, passages, graded
/// answers, judged responses) names the model it was fitted for
/// (`claims_model`, `passages_model`, …). A kind fitted for another model
/// than the one configured (by the file, `RAGALIQ_MODEL` or
/// `RAGALIQ_JUDGE`) takes its defaults (a variable that sets one still
/// wins), and the judge's description says so. Files written before the
/// model was kept per kind have one `model` for every kind.
///
/// ```
/// use ragaliq::Config;
/// use std::path::Path;
/// // Claims fitted on `small`, then passages on `large`.
/// let file = "[judge]\nprovider = \"openai-compatible\"\nmodel = \"large\"\nclaim_threshold = 0.31\npassage_threshold = 0.42\n\n[fitted]\nclaims_model = \"small\"\nclaims_kappa = 0.6\npassages_model = \"large\"\npassages_kappa = 0.5\n";
/// let read = |env: &dyn Fn(&str) -> Option<String>| {
///     Config::from_sources(Some((file, Path::new("judge.toml"))), Path::new("."), env).unwrap()
/// };
/// let large = read(&|_| None);
/// assert_eq!(large.claim_threshold, 0.33, "the default, not small's fit");
/// assert_eq!(large.passage_threshold, 0.42, "large's own fit");
/// let small = read(&|v| (v == "RAGALIQ_MODEL").then(|| "small".to_string()));
/// assert_eq!((small.claim_threshold, small.passage_threshold), (0.31, 0.5));
/// assert!(!small.fitted.unwrap().applied());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Fitted {
    /// Each kind the table says was fitted, in the order claims, answers,
    /// passages, graded, judged.
    pub kinds: Vec<FittedKind>,
    /// Bands fitted for another model (`<kind>_band_model`), with that
    /// model: the default band stands for each.
    pub bands_not_applied: Vec<(Kind, String)>,
}

/// One kind of threshold a `[fitted]` table says was fitted.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FittedKind {
    /// The kind, as its keys begin: `claims`, `answers`, `passages`,
    /// `graded`, `judged`.
    pub kind: &'static str,
    /// The model it was fitted for (`<kind>_model`, else the table's
    /// `model` in files written before); `None` when neither says, and then
    /// it applies.
    pub model: Option<String>,
    /// Whether it applies to the configured model.
    pub applied: bool,
    /// The keys `--fit` wrote for it (`judge.claim_threshold`, …).
    pub keys: Vec<&'static str>,
}

/// Each kind `--fit` writes: the prefix of its `[fitted]` entries, and the
/// keys its thresholds live in.
pub const FITTED_KINDS: [(&str, &[&str]); 5] = [
    (
        "claims",
        &["judge.claim_threshold", "judge.contradiction_ratio"],
    ),
    ("answers", &["thresholds.relevance"]),
    ("passages", &["judge.passage_threshold"]),
    ("graded", &["thresholds.correctness"]),
    ("judged", &["thresholds.criteria"]),
];

impl Fitted {
    /// Reads a `[fitted]` table for the configured `model`.
    fn read(table: &toml::Table, model: &str) -> Fitted {
        let legacy = table.get("model").and_then(toml::Value::as_str);
        let kinds = FITTED_KINDS
            .iter()
            .filter(|(kind, _)| {
                let prefix = format!("{kind}_");
                // `contradiction_kappa` is written with a claims fit.
                table.keys().any(|k| k.starts_with(&prefix))
                    || (*kind == "claims" && table.keys().any(|k| k.starts_with("contradiction_")))
            })
            .map(|(kind, keys)| {
                let fitted_for = table
                    .get(&format!("{kind}_model"))
                    .and_then(toml::Value::as_str)
                    .or(legacy)
                    .map(str::to_owned);
                FittedKind {
                    kind,
                    applied: fitted_for.as_deref().is_none_or(|m| m == model),
                    model: fitted_for,
                    keys: keys.to_vec(),
                }
            })
            .collect();
        Fitted {
            kinds,
            bands_not_applied: Vec::new(),
        }
    }

    /// Whether every fitted kind applies to the configured model.
    #[must_use]
    pub fn applied(&self) -> bool {
        self.kinds.iter().all(|k| k.applied) && self.bands_not_applied.is_empty()
    }

    /// The line a judge's description adds when some fitted thresholds do
    /// not apply, else `None`.
    #[must_use]
    pub fn note(&self, model: &str) -> Option<String> {
        // One clause per model the thresholds were fitted for, in the
        // order the kinds come.
        let mut by_model: Vec<(&str, Vec<&str>)> = Vec::new();
        for k in self.kinds.iter().filter(|k| !k.applied) {
            let fitted_for = k.model.as_deref().unwrap_or("another model");
            match by_model.iter_mut().find(|(m, _)| *m == fitted_for) {
                Some((_, keys)) => keys.extend(&k.keys),
                None => by_model.push((fitted_for, k.keys.clone())),
            }
        }
        let clauses: Vec<String> = by_model
            .iter()
            .map(|(fitted_for, keys)| {
                format!(
                    "thresholds fitted for `{fitted_for}` not applied to `{model}`: the defaults stand for {}",
                    keys.join(", ")
                )
            })
            .collect();
        let mut clauses = clauses;
        for (kind, fitted_for) in &self.bands_not_applied {
            clauses.push(format!(
                "the {kind} band fitted for `{fitted_for}` not applied to `{model}`: the default band stands"
            ));
        }
        (!clauses.is_empty()).then(|| clauses.join("; "))
    }
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    mode: Option<String>,
    judge: Option<RawJudge>,
    retry: Option<RawRetry>,
    thresholds: Option<RawThresholds>,
    scoring: Option<RawScoring>,
    prompts: Option<RawPrompts>,
    cost: Option<RawCost>,
    /// Where fitted thresholds came from (written by `calibrate --fit`):
    /// the model they were fitted for decides whether they apply.
    fitted: Option<toml::Table>,
    gates: Option<RawGates>,
    bands: Option<RawBands>,
    /// Each a judge of its own, read by [`escalation`].
    escalate: Option<Vec<toml::Table>>,
    pipeline: Option<RawPipeline>,
}

/// `[pipeline]`: where the pipeline under test's calls go when recorded.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPipeline {
    openai_base_url: Option<String>,
    anthropic_base_url: Option<String>,
    timeout_secs: Option<f64>,
    idle_timeout_secs: Option<f64>,
    concurrency: Option<i64>,
    shared_limits: Option<bool>,
}

/// The pipeline's settings from `[pipeline]` and `RAGALIQ_PIPELINE_*`,
/// each variable over its key.
fn pipeline_settings(
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

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGates {
    pass_rate: Option<RawRule>,
    min_mean: Option<RawRule>,
    max_drop: Option<RawRule>,
    baseline: Option<String>,
}

/// A gate's figure: one number for every metric, or a table of metrics
/// (`"*"` for the others) to figures.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawRule {
    Every(f64),
    Each(BTreeMap<String, f64>),
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBands {
    claims: Option<toml::Value>,
    answers: Option<toml::Value>,
    passages: Option<toml::Value>,
    graded: Option<toml::Value>,
    judged: Option<toml::Value>,
    custom: Option<toml::Value>,
}

impl RawBands {
    fn get(&self, kind: Kind) -> Option<&toml::Value> {
        match kind {
            Kind::Claims => self.claims.as_ref(),
            Kind::Answers => self.answers.as_ref(),
            Kind::Passages => self.passages.as_ref(),
            Kind::Graded => self.graded.as_ref(),
            Kind::Judged => self.judged.as_ref(),
            Kind::Custom => self.custom.as_ref(),
        }
    }
}

const BAND_EXPECTED: &str = "[low, high] with 0 <= low <= high <= 1 (readings from low up to high are uncertain; \"never\" for a side that decides nothing: [0.1, \"never\"] decides no under 0.1 and never yes), \"off\" (every reading decides by the threshold), \"all\" (no reading decides) or \"unmeasured\" (the starting band of a judge nothing was measured for, [0.05, 0.95))";

/// A band as a variable writes it: `off`, `all`, `unmeasured`, `0.1,0.5`,
/// `[0.1, 0.5]` or `0.1,never`.
fn parse_band(text: &str) -> Option<Band> {
    match text.trim() {
        "off" => return Some(Band::Off),
        "all" => return Some(Band::All),
        "unmeasured" => return Some(Band::Unmeasured),
        _ => {}
    }
    let inner = text
        .trim()
        .trim_start_matches('[')
        .trim_end_matches([']', ')']);
    let ends: Vec<Option<f64>> = inner
        .split(',')
        .map(|x| match x.trim().trim_matches('"') {
            "never" => Some(None),
            x => x.parse().ok().map(Some),
        })
        .collect::<Option<_>>()?;
    match ends[..] {
        [low, high] => Band::sides(low, high).ok(),
        _ => None,
    }
}

/// A band as `ragaliq.toml` writes it: `[0.1, 0.5]`, `[0.1, "never"]`,
/// `"off"`, `"all"`, `"unmeasured"`.
fn band_value(value: &toml::Value) -> Option<Band> {
    match value {
        toml::Value::String(s) if ["off", "all", "unmeasured"].contains(&s.as_str()) => {
            parse_band(s)
        }
        toml::Value::Array(a) => {
            let ends: Vec<Option<f64>> = a
                .iter()
                .map(|v| match v {
                    toml::Value::String(s) if s == "never" => Some(None),
                    v => v
                        .as_float()
                        .or_else(|| v.as_integer().map(|i| i as f64))
                        .map(Some),
                })
                .collect::<Option<_>>()?;
            match ends[..] {
                [low, high] => Band::sides(low, high).ok(),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A TOML value as the file writes it, for messages.
fn show_value(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => format!("{s:?}"),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Array(a) => {
            let items: Vec<String> = a.iter().map(show_value).collect();
            format!("[{}]", items.join(", "))
        }
        other => format!("{other:?}"),
    }
}

/// The bands of `[bands]` and the `RAGALIQ_BAND_<KIND>` variables, over
/// the defaults of the judge serving `model` ([`Bands::measured`]).
fn read_bands(r: &Resolver<'_>, raw: Option<&RawBands>, model: &str) -> Result<Bands, ConfigError> {
    let mut bands = Bands::measured(model);
    for kind in Kind::ALL {
        let var = format!("RAGALIQ_BAND_{}", kind.name().to_ascii_uppercase());
        if let Some(text) = (r.env)(&var) {
            let band = parse_band(&text).ok_or_else(|| ConfigError::Invalid {
                origin: var.clone(),
                value: text.clone(),
                expected: BAND_EXPECTED.into(),
            })?;
            bands.set(kind, band);
            continue;
        }
        if let Some(value) = raw.and_then(|b| b.get(kind)) {
            let band = band_value(value).ok_or_else(|| ConfigError::Invalid {
                origin: format!("{}: bands.{}", r.file, kind.name()),
                value: show_value(value),
                expected: BAND_EXPECTED.into(),
            })?;
            bands.set(kind, band);
        }
    }
    Ok(bands)
}

/// The judge of `[[escalate]]` number `n` (`entry`): resolved as the file
/// `whole` with `entry` (less its `bands`) as its `[judge]` and the
/// entry's `bands` as its `[bands]`, nothing else escalated, and of the
/// `RAGALIQ_*` variables only those that set the mode and collect mode
/// (the rest set the first judge).
fn escalation(
    whole: &toml::Table,
    entry: &toml::Table,
    n: usize,
    file: Option<(&str, &Path)>,
    root: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Config, ConfigError> {
    let mut table = whole.clone();
    table.remove("escalate");
    table.remove("fitted");
    table.remove("bands");
    let mut judge = entry.clone();
    if let Some(bands) = judge.remove("bands") {
        table.insert("bands".into(), bands);
    }
    table.insert("judge".into(), toml::Value::Table(judge));
    let path = file.map_or_else(|| root.join("ragaliq.toml"), |(_, p)| p.to_path_buf());
    let only = |name: &str| {
        let kept =
            !name.starts_with("RAGALIQ_") || matches!(name, "RAGALIQ_MODE" | "RAGALIQ_COLLECT");
        if kept { env(name) } else { None }
    };
    Config::resolve(Some(("", &path)), root, &only, None, Some(table)).map_err(|e| match e {
        ConfigError::Invalid {
            origin,
            value,
            expected,
        } => ConfigError::Invalid {
            origin: format!("escalate #{n} ({origin})"),
            value,
            expected,
        },
        ConfigError::File { path, message } => ConfigError::File {
            path,
            message: format!("escalate #{n}: {message}"),
        },
        // The first judge's fixes (`[judge]`, RAGALIQ_MODEL, RAGALIQ_JUDGE)
        // do not reach this judge: name it, and the fix that does.
        ConfigError::Missing { what, .. } if what == "the judge's model" => {
            let text = |key: &str| entry.get(key).and_then(toml::Value::as_str);
            let provider = text("provider").unwrap_or(Provider::OpenAi.name());
            let at = text("base_url").map_or_else(String::new, |u| format!(" at {}", redact_url(u)));
            ConfigError::Missing {
                what: format!(
                    "the model of the judge escalated to (`[[escalate]]` #{n} in {}: {provider}{at})",
                    path.display()
                ),
                how: "add `model = \"<model>\"` to that table, on a line below its `[[escalate]]` and above any `[escalate.bands]` (the name its answers are recorded under: the model its server loaded, e.g. its --alias); `[judge]`'s model, RAGALIQ_MODEL and RAGALIQ_JUDGE set the first judge only".to_owned(),
            }
        }
        ConfigError::Missing { what, how } => ConfigError::Missing {
            what: format!("escalate #{n}: {what}"),
            how,
        },
        other => other,
    })
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCost {
    max_usd: Option<f64>,
    prices: Option<BTreeMap<String, Price>>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJudge {
    provider: Option<String>,
    model: Option<String>,
    base_url: Option<String>,
    api_key_env: Option<String>,
    json_mode: Option<String>,
    temperature: Option<f64>,
    max_tokens: Option<i64>,
    concurrency: Option<i64>,
    rpm: Option<f64>,
    tpm: Option<f64>,
    timeout_secs: Option<f64>,
    idle_timeout_secs: Option<f64>,
    stream: Option<bool>,
    sized_max_tokens: Option<bool>,
    verify_batch: Option<i64>,
    strategy: Option<String>,
    claim_threshold: Option<f64>,
    passage_threshold: Option<f64>,
    contradiction: Option<bool>,
    contradiction_threshold: Option<f64>,
    contradiction_ratio: Option<f64>,
    chunk_chars: Option<i64>,
    history_turns: Option<i64>,
    history_chars: Option<i64>,
    claims: Option<String>,
    criteria_form: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRetry {
    max_retries: Option<i64>,
    initial_backoff_ms: Option<i64>,
    max_backoff_ms: Option<i64>,
    budget_secs: Option<f64>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawThresholds {
    faithfulness: Option<f64>,
    hallucination: Option<f64>,
    relevance: Option<f64>,
    context_precision: Option<f64>,
    context_recall: Option<f64>,
    correctness: Option<f64>,
    criteria: Option<f64>,
    custom: Option<f64>,
    retrieval: Option<f64>,
    abstention: Option<f64>,
    consistency: Option<f64>,
    retention: Option<f64>,
}

impl RawThresholds {
    fn get(&self, metric: Metric) -> Option<f64> {
        match metric {
            Metric::Faithfulness => self.faithfulness,
            Metric::Hallucination => self.hallucination,
            Metric::Relevance => self.relevance,
            Metric::ContextPrecision => self.context_precision,
            Metric::ContextRecall => self.context_recall,
            Metric::Correctness => self.correctness,
            Metric::Criteria => self.criteria,
            Metric::Custom => self.custom,
            Metric::Retrieval => self.retrieval,
            Metric::Abstention => self.abstention,
            Metric::Consistency => self.consistency,
            Metric::Retention => self.retention,
        }
    }
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScoring {
    weights: Option<RawWeights>,
    confidence_floor: Option<f64>,
    correctness: Option<String>,
    samples: Option<RawSamples>,
    agreement: Option<f64>,
    evidence: Option<String>,
    uncertain: Option<String>,
    found_rule: Option<bool>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawSamples {
    Count(i64),
    Name(String),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawWeights {
    Preset(String),
    Table(RawWeightTable),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWeightTable {
    supported: f64,
    partially_supported: f64,
    no_evidence: f64,
    contradicted: f64,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPrompts {
    dir: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn load(toml: Option<&str>, vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let env = move |name: &str| vars.get(name).cloned();
        Config::from_sources(
            toml.map(|t| (t, Path::new("/pkg/ragaliq.toml"))),
            Path::new("/pkg"),
            &env,
        )
    }

    fn err(toml: Option<&str>, vars: &[(&str, &str)]) -> String {
        load(toml, vars).unwrap_err().to_string()
    }

    #[test]
    fn gates_read_as_one_number_or_a_table_per_metric() {
        let c = load(
            Some("[gates]\npass_rate = 0.95\nmin_mean = { \"recall@5\" = 0.8, \"*\" = 0.5 }\nmax_drop = { faithfulness = 0.02 }\nbaseline = \"last/report.json\"\n"),
            &[],
        )
        .unwrap();
        assert_eq!(c.gates.pass_rate.for_metric("anything"), Some(0.95));
        assert_eq!(c.gates.min_mean.for_metric("recall@5"), Some(0.8));
        assert_eq!(c.gates.min_mean.for_metric("mrr"), Some(0.5));
        assert_eq!(c.gates.max_drop.for_metric("relevance"), None);
        assert_eq!(
            c.gates.baseline.as_deref(),
            Some(Path::new("/pkg/last/report.json"))
        );
        assert_eq!(
            err(Some("[gates]\npass_rate = 95\n"), &[]),
            "ragaliq.toml: gates.pass_rate = \"95\" is invalid: expected a number from 0 to 1"
        );
        assert!(
            err(Some("[gates]\npass_rates = 0.9\n"), &[]).contains("unknown field `pass_rates`"),
            "a misspelled gate is refused, not ignored"
        );
        assert!(load(None, &[]).unwrap().gates.is_empty());
    }

    #[test]
    fn defaults_without_file_or_env() {
        let c = load(None, &[]).unwrap();
        assert_eq!(c.provider, Provider::OpenAi);
        assert_eq!(c.model, "gpt-4o-mini");
        assert_eq!(c.api_key_env.as_deref(), Some("OPENAI_API_KEY"));
        assert_eq!(c.mode, Mode::Auto);
        assert_eq!(c.concurrency, 8);
        assert_eq!(c.threshold(Metric::Hallucination), 0.8);
        assert!(c.api_key().is_none());
    }

    /// The direct question is the default; claims both ways keeps its old
    /// names (`f1`, `precision`, `recall`) and a plain one (`claims`); the
    /// defaults the measurement chose stand beside the old 0.7.
    #[test]
    fn correctness_names_and_the_chosen_defaults() {
        let c = load(None, &[]).unwrap();
        assert_eq!(c.correctness, crate::core::Correctness::Direct);
        assert_eq!(c.threshold(Metric::Correctness), 0.5);
        assert_eq!(c.threshold(Metric::Criteria), 0.45);
        for (name, measure) in [
            ("direct", crate::core::Correctness::Direct),
            ("claims", crate::core::Correctness::F1),
            ("f1", crate::core::Correctness::F1),
            ("recall", crate::core::Correctness::Recall),
        ] {
            let file = format!("[scoring]\ncorrectness = \"{name}\"\n");
            assert_eq!(load(Some(&file), &[]).unwrap().correctness, measure);
            let var = load(None, &[("RAGALIQ_CORRECTNESS", name)]).unwrap();
            assert_eq!(var.correctness, measure);
        }
        let e = err(None, &[("RAGALIQ_CORRECTNESS", "exact")]);
        assert!(
            e.contains("RAGALIQ_CORRECTNESS")
                && e.contains("direct, f1 (or claims), precision, recall"),
            "{e}"
        );
    }

    #[test]
    fn ci_defaults_to_replay() {
        assert_eq!(load(None, &[("CI", "true")]).unwrap().mode, Mode::Replay);
        assert_eq!(load(None, &[("CI", "false")]).unwrap().mode, Mode::Auto);
        assert_eq!(
            load(None, &[("CI", "1"), ("RAGALIQ_MODE", "record")])
                .unwrap()
                .mode,
            Mode::Record
        );
    }

    #[test]
    fn under_ci_a_file_may_only_ask_for_replay() {
        for asked in ["auto", "record", "live"] {
            let file = format!("mode = \"{asked}\"\n");
            let c = load(Some(&file), &[("CI", "true")]).unwrap();
            assert_eq!((c.mode, &c.mode_origin), (Mode::Replay, &ModeOrigin::Ci));
            assert_eq!(
                c.mode_reason(),
                format!("CI is set; ragaliq.toml's mode = \"{asked}\" ignored")
            );
            let warning = c.mode_warning().unwrap();
            assert!(
                warning.contains(&format!(
                    "ragaliq.toml's mode = \"{asked}\" (/pkg/ragaliq.toml) is ignored and the mode is replay"
                )) && warning.contains("set RAGALIQ_MODE=record in the job's environment")
                    && !warning.contains('\n'),
                "{warning}"
            );
            // Outside CI the file decides.
            let c = load(Some(&file), &[("CI", "false")]).unwrap();
            assert_eq!(c.mode, Mode::from_name(asked).unwrap());
            assert_eq!(c.mode_reason(), "ragaliq.toml's mode");
            assert!(c.mode_warning().is_none());
            // TF_BUILD (Azure Pipelines) is CI too, as insta has it.
            let c = load(Some(&file), &[("TF_BUILD", "True")]).unwrap();
            assert_eq!(c.mode, Mode::Replay);
        }
        // Replay asked for under CI is no conflict.
        let c = load(Some("mode = \"replay\"\n"), &[("CI", "true")]).unwrap();
        assert_eq!(c.mode, Mode::Replay);
        assert!(matches!(c.mode_origin, ModeOrigin::File(_)));
        assert!(c.mode_ignored.is_none() && c.mode_warning().is_none());
        // The job's own variable records on purpose, and nothing is ignored:
        // the variable beats the file anyway.
        let c = load(
            Some("mode = \"auto\"\n"),
            &[("CI", "true"), ("RAGALIQ_MODE", "record")],
        )
        .unwrap();
        assert_eq!(
            (c.mode, &c.mode_origin),
            (Mode::Record, &ModeOrigin::Variable)
        );
        assert!(c.mode_warning().is_none());
        assert_eq!(
            load(None, &[("CI", "true")]).unwrap().mode_reason(),
            "CI is set"
        );
        assert_eq!(
            load(None, &[]).unwrap().mode_reason(),
            "the default outside CI"
        );
    }

    #[test]
    fn the_attribute_pins_a_mode_except_under_ci() {
        let with = |vars: &[(&str, &str)], attribute: Mode| {
            let vars: HashMap<String, String> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let env = move |name: &str| vars.get(name).cloned();
            Config::resolve(
                Some(("mode = \"auto\"\n", Path::new("/pkg/ragaliq.toml"))),
                Path::new("/pkg"),
                &env,
                Some((attribute, "rag::refund".to_owned())),
                None,
            )
            .unwrap()
        };
        // Outside CI it beats the variable and the file.
        let c = with(&[("RAGALIQ_MODE", "replay")], Mode::Live);
        assert_eq!(c.mode, Mode::Live);
        assert_eq!(c.mode_reason(), "#[rag_test(mode = …)] on `rag::refund`");
        // Under CI, anything but replay is ignored; the file's auto is too.
        for asked in [Mode::Auto, Mode::Record, Mode::Live] {
            let c = with(&[("CI", "true")], asked);
            assert_eq!((c.mode, &c.mode_origin), (Mode::Replay, &ModeOrigin::Ci));
            assert_eq!(
                c.mode_reason(),
                format!("CI is set; #[rag_test(mode = \"{asked}\")] on test `rag::refund` ignored")
            );
            assert!(c.mode_warning().unwrap().contains("RAGALIQ_MODE=record"));
        }
        // The nightly job's variable decides, and the line says what it
        // overrode.
        let c = with(&[("CI", "true"), ("RAGALIQ_MODE", "record")], Mode::Auto);
        assert_eq!(c.mode, Mode::Record);
        assert_eq!(
            c.mode_reason(),
            "RAGALIQ_MODE; CI is set, so #[rag_test(mode = \"auto\")] on test `rag::refund` is ignored"
        );
        // An attribute that pins replay stays pinned, even for that job.
        let c = with(&[("CI", "true"), ("RAGALIQ_MODE", "record")], Mode::Replay);
        assert_eq!(c.mode, Mode::Replay);
        assert!(c.mode_warning().is_none());
    }

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
    fn the_environment_beats_the_file_key_by_key() {
        let toml = "[judge]\nprovider = \"openai-compatible\"\nmodel = \"scripted\"\nbase_url = \"http://127.0.0.1:8787/v1\"\njson_mode = \"object\"\n";
        // A URL in RAGALIQ_JUDGE sets the base URL too, over the file's.
        let c = load(Some(toml), &[("RAGALIQ_JUDGE", "http://127.0.0.1:8766/v1")]).unwrap();
        assert_eq!(c.base_url.as_deref(), Some("http://127.0.0.1:8766/v1"));
        assert_eq!(
            c.model, "scripted",
            "the file's model still applies: same provider"
        );
        assert_eq!(
            c.json_mode,
            JsonMode::Object,
            "keys the environment does not set keep the file's value"
        );
        let c = load(Some(toml), &[("RAGALIQ_BASE_URL", "http://10.0.0.1:9/v1")]).unwrap();
        assert_eq!(c.base_url.as_deref(), Some("http://10.0.0.1:9/v1"));
        let c = load(
            Some(toml),
            &[
                ("RAGALIQ_JUDGE", "http://127.0.0.1:8766/v1"),
                ("RAGALIQ_MODEL", "gemma"),
            ],
        )
        .unwrap();
        assert_eq!(
            (c.model.as_str(), c.base_url.as_deref()),
            ("gemma", Some("http://127.0.0.1:8766/v1"))
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
    fn samples_from_file_and_environment() {
        let c = load(Some("[scoring]\nsamples = 5\nagreement = 0.8\n"), &[]).unwrap();
        assert_eq!((c.samples, c.agreement), (Samples::Fixed(5), 0.8));
        let c = load(Some("[scoring]\nsamples = \"auto\"\n"), &[]).unwrap();
        assert_eq!(c.samples, Samples::Auto { max: 5 });
        let c = load(None, &[("RAGALIQ_SAMPLES", "3")]).unwrap();
        assert_eq!(c.samples, Samples::Fixed(3));
        assert!(
            err(None, &[("RAGALIQ_SAMPLES", "lots")])
                .starts_with("RAGALIQ_SAMPLES = \"lots\" is invalid")
        );
        assert!(err(Some("[scoring]\nagreement = 0.5\n"), &[]).contains("scoring.agreement"));
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

    #[test]
    fn bands_the_uncertain_policy_and_the_judges_to_escalate_to() {
        let file = "[judge]\nprovider = \"openai-compatible\"\nmodel = \"small\"\nbase_url = \"http://127.0.0.1:8766/v1\"\nclaim_threshold = 0.3\n\n[scoring]\nuncertain = \"pass\"\n\n[bands]\nclaims = [0.1, 0.5]\njudged = \"all\"\n\n[[escalate]]\nprovider = \"openai-compatible\"\nmodel = \"large\"\nbase_url = \"http://127.0.0.1:8767/v1\"\n\n[escalate.bands]\nclaims = [0.2, 0.4]\n";
        let c = load(
            Some(file),
            &[
                ("RAGALIQ_MODEL", "tiny"),
                ("RAGALIQ_BAND_ANSWERS", "0.3,0.8"),
            ],
        )
        .unwrap();
        assert_eq!(c.model, "tiny");
        assert_eq!(c.uncertain, Uncertain::Pass);
        assert_eq!(c.bands.get(Kind::Claims), Band::between(0.1, 0.5).unwrap());
        assert_eq!(c.bands.get(Kind::Judged), Band::All);
        assert_eq!(c.bands.get(Kind::Answers), Band::between(0.3, 0.8).unwrap());
        // A model nothing was measured for starts unmeasured.
        assert_eq!(c.bands.get(Kind::Passages), Band::Unmeasured);
        let next = &c.escalate[0];
        // The escalated judge is its own: its model, server and bands; the
        // file's other settings; no `RAGALIQ_*` variable of the first
        // judge's (RAGALIQ_MODEL sets the first judge only).
        assert_eq!(next.model, "large");
        assert_eq!(next.base_url.as_deref(), Some("http://127.0.0.1:8767/v1"));
        assert_eq!(
            next.bands.get(Kind::Claims),
            Band::between(0.2, 0.4).unwrap()
        );
        assert_eq!(next.bands.get(Kind::Answers), Band::Unmeasured);
        assert_eq!(next.claim_threshold, crate::core::DEFAULT_CLAIM_THRESHOLD);
        assert!(next.escalate.is_empty());
        // Errors name the escalated judge.
        let bad = file.replace("model = \"large\"", "model = \"large\"\ntemperature = 9");
        let e = load(Some(&bad), &[]).unwrap_err().to_string();
        assert!(
            e.starts_with("escalate #1 (ragaliq.toml: judge.temperature)"),
            "{e}"
        );
        // An escalated judge without a model: the error names that judge
        // and a fix that works, and the fix it prints loads.
        let no_model = file.replace("model = \"large\"\n", "");
        let e = load(Some(&no_model), &[("RAGALIQ_MODEL", "tiny")])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "the model of the judge escalated to (`[[escalate]]` #1 in /pkg/ragaliq.toml: openai-compatible at http://127.0.0.1:8767/v1) is not set: add `model = \"<model>\"` to that table, on a line below its `[[escalate]]` and above any `[escalate.bands]` (the name its answers are recorded under: the model its server loaded, e.g. its --alias); `[judge]`'s model, RAGALIQ_MODEL and RAGALIQ_JUDGE set the first judge only"
        );
        let fixed = no_model.replace("[[escalate]]\n", "[[escalate]]\nmodel = \"large\"\n");
        let c = load(Some(&fixed), &[("RAGALIQ_MODEL", "tiny")]).unwrap();
        assert_eq!(c.escalate[0].model, "large");
        assert_eq!(
            c.escalate[0].bands.get(Kind::Claims),
            Band::between(0.2, 0.4).unwrap(),
            "its bands stay its own"
        );
        let e = err(Some("[bands]\nclaims = [0.6, 0.5]\n"), &[]);
        assert!(
            e.contains("bands.claims") && e.contains("[0.6, 0.5]"),
            "{e}"
        );
        let e = err(None, &[("RAGALIQ_UNCERTAIN", "maybe")]);
        assert!(e.contains("fail, pass or decide"), "{e}");
    }

    #[test]
    fn a_side_that_decides_nothing_is_spelt_never_in_the_file_and_the_variables() {
        let file = "[judge]\nmodel = \"qwen2.5-coder:1.5b\"\n\n[bands]\nclaims = [0.075, \"never\"]\nanswers = [\"never\", 0.9]\njudged = \"off\"\n";
        let c = load(
            Some(file),
            &[
                ("RAGALIQ_BAND_PASSAGES", "never,0.8"),
                ("RAGALIQ_BAND_CUSTOM", "unmeasured"),
            ],
        )
        .unwrap();
        assert_eq!(c.bands.get(Kind::Claims), Band::NoOnly { low: 0.075 });
        assert_eq!(c.bands.get(Kind::Answers), Band::YesOnly { high: 0.9 });
        assert_eq!(c.bands.get(Kind::Passages), Band::YesOnly { high: 0.8 });
        assert_eq!(c.bands.get(Kind::Judged), Band::Off);
        assert_eq!(c.bands.get(Kind::Custom), Band::Unmeasured);
        // Ollama's name of the kit's 1.5B: its measured band where none is set.
        assert_eq!(c.bands.get(Kind::Graded), Band::All);
        // What the file writes reads back the same.
        for band in [
            c.bands.get(Kind::Claims),
            c.bands.get(Kind::Answers),
            Band::Unmeasured,
        ] {
            let text = format!("[bands]\nclaims = {}\n", band.to_toml());
            assert_eq!(
                load(Some(&text), &[]).unwrap().bands.get(Kind::Claims),
                band,
                "{text}"
            );
        }
        let e = err(Some("[bands]\nclaims = [\"never\", \"sometimes\"]\n"), &[]);
        assert!(
            e.contains("bands.claims") && e.contains("\"never\" for a side"),
            "{e}"
        );
        let e = err(None, &[("RAGALIQ_BAND_CLAIMS", "0.1,nope")]);
        assert!(e.contains("RAGALIQ_BAND_CLAIMS"), "{e}");
    }

    #[test]
    fn every_invalid_value_names_its_origin_and_the_accepted_values() {
        type Case<'a> = (Option<&'a str>, &'a [(&'a str, &'a str)], &'a str);
        let cases: &[Case] = &[
            (
                None,
                &[("RAGALIQ_MODE", "fast")],
                "RAGALIQ_MODE = \"fast\" is invalid: expected replay, auto, record, live",
            ),
            (
                Some("mode = \"fast\""),
                &[],
                "ragaliq.toml: mode = \"fast\" is invalid: expected replay, auto, record, live",
            ),
            (
                Some("[judge]\nprovider = \"x\""),
                &[],
                "ragaliq.toml: judge.provider = \"x\" is invalid: expected openai, anthropic, ollama, openai-compatible",
            ),
            (
                None,
                &[("RAGALIQ_TEMPERATURE", "3")],
                "RAGALIQ_TEMPERATURE = \"3\" is invalid: expected a number from 0 to 2",
            ),
            (
                Some("[judge]\nconcurrency = 0"),
                &[],
                "ragaliq.toml: judge.concurrency = \"0\" is invalid: expected a whole number from 1 to 1024",
            ),
            (
                None,
                &[("RAGALIQ_TIMEOUT_SECS", "0")],
                "RAGALIQ_TIMEOUT_SECS = \"0\" is invalid: expected a number of seconds over 0, up to 3600",
            ),
            (
                None,
                &[("RAGALIQ_JSON_MODE", "strict")],
                "RAGALIQ_JSON_MODE = \"strict\" is invalid: expected schema, object-schema, object, none",
            ),
            (
                None,
                &[("RAGALIQ_STREAM", "maybe")],
                "RAGALIQ_STREAM = \"maybe\" is invalid: expected true or false",
            ),
            (
                None,
                &[("RAGALIQ_IDLE_TIMEOUT_SECS", "0")],
                "RAGALIQ_IDLE_TIMEOUT_SECS = \"0\" is invalid",
            ),
            (
                None,
                &[("RAGALIQ_MAX_TOKENS", "-1")],
                "RAGALIQ_MAX_TOKENS = \"-1\" is invalid: expected a whole number from 1 to 1000000",
            ),
            (
                None,
                &[("RAGALIQ_MAX_RETRIES", "1000")],
                "RAGALIQ_MAX_RETRIES = \"1000\" is invalid: expected a whole number from 0 to 100",
            ),
            (
                Some("[retry]\ninitial_backoff_ms = -5"),
                &[],
                "ragaliq.toml: retry.initial_backoff_ms = \"-5\" is invalid",
            ),
            (
                None,
                &[("RAGALIQ_RETRY_BUDGET_SECS", "NaN")],
                "RAGALIQ_RETRY_BUDGET_SECS = \"NaN\" is invalid",
            ),
            (
                None,
                &[("RAGALIQ_THRESHOLD_RELEVANCE", "1.5")],
                "RAGALIQ_THRESHOLD_RELEVANCE = \"1.5\" is invalid: expected a number from 0 to 1",
            ),
            (
                Some("[thresholds]\nfaithfulness = -0.1"),
                &[],
                "ragaliq.toml: thresholds.faithfulness = \"-0.1\" is invalid",
            ),
            (
                None,
                &[("RAGALIQ_WEIGHTS", "lenient")],
                "RAGALIQ_WEIGHTS = \"lenient\" is invalid: expected ratio, weighted, strict",
            ),
            (
                Some("[scoring]\nweights = \"lenient\""),
                &[],
                "ragaliq.toml: scoring.weights = \"lenient\" is invalid",
            ),
            (
                None,
                &[("RAGALIQ_CONFIDENCE_FLOOR", "2")],
                "RAGALIQ_CONFIDENCE_FLOOR = \"2\" is invalid",
            ),
            (
                None,
                &[("RAGALIQ_BASE_URL", "localhost:8080")],
                "RAGALIQ_BASE_URL = \"localhost:8080\" is invalid: expected an http:// or https:// URL",
            ),
            (
                None,
                &[("RAGALIQ_API_KEY_ENV", "MY KEY")],
                "RAGALIQ_API_KEY_ENV is invalid: expected the *name* of an environment variable",
            ),
            (
                None,
                &[("RAGALIQ_MAX_COST_USD", "-1")],
                "RAGALIQ_MAX_COST_USD = \"-1\" is invalid: expected a number of dollars, 0 or more",
            ),
            (
                Some("[cost.prices.\"m\"]\ninput_per_million = -1\noutput_per_million = 1"),
                &[],
                "ragaliq.toml: cost.prices.\"m\" = ",
            ),
        ];
        for (toml, vars, want) in cases {
            let got = err(*toml, vars);
            assert!(got.starts_with(want), "want {want:?}\n got {got:?}");
        }
    }

    #[test]
    fn toml_syntax_and_unknown_keys_are_errors_with_position() {
        let e = err(Some("[judge]\nconcurrency = \"8\""), &[]);
        assert!(
            e.starts_with("/pkg/ragaliq.toml: ") && e.contains("line 2"),
            "{e}"
        );
        let e = err(Some("[judge]\nmodle = \"x\""), &[]);
        assert!(
            e.contains("unknown field `modle`") && e.contains("model"),
            "{e}"
        );
    }

    #[test]
    fn weights_from_table_and_numbers() {
        let c = load(Some("[scoring.weights]\nsupported = 1\npartially_supported = 0.25\nno_evidence = 0\ncontradicted = -2\n"), &[]).unwrap();
        assert_eq!(c.weights, VerdictWeights::new(1.0, 0.25, 0.0, -2.0));
        let c = load(None, &[("RAGALIQ_WEIGHTS", "1, 0.5, -1, -1")]).unwrap();
        assert_eq!(c.weights, VerdictWeights::STRICT);
    }

    #[test]
    fn prompts_dir_is_relative_to_the_file_or_the_root() {
        let c = load(Some("[prompts]\ndir = \"my-prompts\""), &[]).unwrap();
        assert_eq!(c.prompts_dir.unwrap(), Path::new("/pkg/my-prompts"));
    }
}
