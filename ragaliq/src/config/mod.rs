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
//! | `judge.history_turns` | `RAGALIQ_HISTORY_TURNS` | 1 to 100 | 3: the most earlier turns of a conversation a follow-up's questions show, where they show any |
//! | `judge.history_chars` | `RAGALIQ_HISTORY_CHARS` | 100 to 1,000,000 | 2000: the most characters of earlier turns they show (older turns dropped first) |
//! | `judge.follow_up_history` | `RAGALIQ_FOLLOW_UP_HISTORY` | `true`, `false` | `false`: a follow-up's relevance question, abstention's two questions (whether the passages contain the answer, whether the answer says it cannot answer) and context precision's passage questions are asked as a single case's are (measured on public multi-turn sets: asked bare they agreed with the labels as often or more often on the worst source); `true` shows them the earlier turns too, as every other question about a follow-up is shown |
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
    ApiKey, Bands, ConfigError, JsonMode, Metric, Samples, Strategy, Uncertain, VerdictWeights,
    price_for,
};
use crate::transport::{RetryPolicy, redact_url};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod bands;
mod env;
mod fitted;
mod gates;
mod judge;
mod mode;
mod pipeline;
mod scoring;

pub use fitted::{FITTED_KINDS, Fitted, FittedKind};
pub use judge::Provider;
pub use mode::{IgnoredMode, ModeOrigin};

use bands::{RawBands, escalations, judge_bands};
use env::{Resolver, float};
use gates::{RawGates, read_gates};
use judge::{JudgeSettings, RawJudge, RawRetry, read_judge, read_retry};
use mode::read_mode;
use pipeline::{RawPipeline, pipeline_settings};
use scoring::{RawScoring, RawThresholds, ScoringSettings, read_scoring};

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
    /// Whether a follow-up's relevance, abstention and passage questions
    /// show the conversation before it, as its other questions do (`[judge]
    /// follow_up_history`, off by default).
    pub follow_up_history: bool,
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
            .field("follow_up_history", &self.follow_up_history)
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
        // `judge.criteria_form` is read with the scoring, in its place among
        // the checks.
        let raw_criteria_form = judge.criteria_form.take();
        let retry = raw.retry.unwrap_or_default();
        let mut thresholds = raw.thresholds.unwrap_or_default();
        let scoring = raw.scoring.unwrap_or_default();

        let file_path = file.map_or_else(|| root.join("ragaliq.toml"), |(_, p)| p.to_path_buf());
        let (mode, mode_origin, mode_ignored) = read_mode(
            &r,
            raw.mode,
            attribute,
            file_path,
            Mode::default_for(env) == Mode::Replay,
        )?;

        let JudgeSettings {
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
            mut fitted,
        } = read_judge(
            &r,
            judge,
            &mut thresholds,
            raw.fitted.as_ref(),
            (file, root),
        )?;

        let retry = read_retry(&r, retry)?;

        let ScoringSettings {
            threshold_values,
            weights,
            confidence_floor,
            correctness,
            criteria_form,
            samples,
            evidence_checked,
            agreement,
            uncertain,
            found_rule,
        } = read_scoring(&r, &thresholds, scoring, raw_criteria_form, &file_name)?;
        let bands = judge_bands(
            &r,
            raw.bands.as_ref(),
            raw.fitted.as_ref(),
            fitted.as_mut(),
            &model,
        )?;
        let escalate = escalations(raw.escalate.as_ref(), file, root, env)?;

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

        let gates = read_gates(raw.gates, &file_dir, &file_name)?;
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
            follow_up_history,
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
    /// Each a judge of its own, read by [`escalation`](bands::escalation).
    escalate: Option<Vec<toml::Table>>,
    pipeline: Option<RawPipeline>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCost {
    max_usd: Option<f64>,
    prices: Option<BTreeMap<String, Price>>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPrompts {
    dir: Option<String>,
}

// After every item: `tests/config_reference.rs` reads the code up to the
// first `#[cfg(test)]`.
#[cfg(test)]
mod testing;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::testing::{err, load};

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
    fn prompts_dir_is_relative_to_the_file_or_the_root() {
        let c = load(Some("[prompts]\ndir = \"my-prompts\""), &[]).unwrap();
        assert_eq!(c.prompts_dir.unwrap(), Path::new("/pkg/my-prompts"));
    }
}
