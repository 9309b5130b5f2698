//! The [`Judge`]: an LLM that grades RAG answers.
//!
//! A judge is a thin facade: its settings, a session over the process's
//! client for its configuration, and the public metric methods. What a
//! custom judge needs is here too: the [`Transport`] trait, the request and
//! response types, and the transports ragaliq ships.

mod about;
mod builder;
mod evaluate;

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
use crate::core::ConfigError;
use crate::error::Result;
use crate::metrics::{Judges, Scoring, Stage};
use crate::pipeline::{Pipeline, StartError};
use crate::record::Recorder;
use crate::session::Session;
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
    /// The judges an uncertain item is escalated to, in order
    /// (`[[escalate]]`), each over this judge's recording and trial.
    escalate: Arc<[Stage]>,
    /// The pipeline's endpoint for this judge's recording, started on
    /// first use ([`Judge::pipeline`]).
    app: Arc<AppSlot>,
}

/// Where the pipeline's calls go, and its endpoint once started.
struct AppSlot {
    settings: crate::pipeline::Settings,
    prices: std::collections::BTreeMap<String, crate::core::Price>,
    started: std::sync::OnceLock<Result<Pipeline, StartError>>,
}

impl AppSlot {
    fn new(
        settings: crate::pipeline::Settings,
        prices: std::collections::BTreeMap<String, crate::core::Price>,
    ) -> Arc<AppSlot> {
        Arc::new(AppSlot {
            settings,
            prices,
            started: std::sync::OnceLock::new(),
        })
    }

    /// The same settings, no endpoint started: for a judge over another
    /// recording or trial.
    fn fresh(&self) -> Arc<AppSlot> {
        AppSlot::new(self.settings.clone(), self.prices.clone())
    }
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
    ///
    /// It keeps the configured mode without a recording of its own: in
    /// replay mode (the default when `CI` is set) it refuses every question
    /// with a [`RecordingError::Unrecorded`](crate::record::RecordingError)
    /// that says how to record, instead of calling out. In a test, use
    /// `#[rag_test]` or [`recorded_judge!`](crate::recorded_judge), which
    /// bind it to a recording; for a nightly run against a real provider,
    /// `RAGALIQ_MODE=live`.
    pub fn from_env() -> Result<Judge, ConfigError> {
        Judge::from_config(&Config::load()?)
    }

    /// A judge as `config` describes it, over this process's shared client
    /// for that configuration. As [`from_env`](Self::from_env), it refuses
    /// to call out in replay mode unless a recording serves it.
    pub fn from_config(config: &Config) -> Result<Judge, ConfigError> {
        let builder = JudgeBuilder::from_config(config)?;
        let key = builder.client_key(config);
        let (client, asking, scoring) = builder.into_parts()?;
        let client = client::shared(key, move || client);
        if let Some(warning) = config.mode_warning() {
            warn_once(&warning);
        }
        let why = config.mode_reason();
        let session = Session::new(client, Arc::new(asking)).with_mode(config.mode, why);
        let mut judge = Judge::over(session, scoring);
        judge.app = AppSlot::new(config.pipeline.clone(), config.prices.clone());
        for next in &config.escalate {
            judge = judge.escalating_to(&Judge::from_config(next)?);
        }
        Ok(judge)
    }

    /// This judge, escalating what it is unsure of to `next`: an item whose
    /// reading lies in this judge's band (or in those of the judges it
    /// already escalates to) is asked of `next`, read with `next`'s own
    /// bands and per-item thresholds, and only then awaits a person. Both
    /// judges' exchanges are kept in the same recording, each under its own
    /// model; `next`'s own cascade is not followed.
    ///
    /// ```
    /// # use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
    /// # use ragaliq::TransportError;
    /// # struct Canned(&'static str);
    /// # impl Transport for Canned {
    /// #     fn provider(&self) -> &str { "canned" }
    /// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, TransportError>> {
    /// #         let text = self.0;
    /// #         Box::pin(async move { Ok(JudgeResponse::text(text)) })
    /// #     }
    /// # }
    /// use ragaliq::{Band, Kind};
    /// let small = Judge::builder(Canned("yes")).with_model("small")
    ///     .with_band(Kind::Answers, Band::between(0.3, 0.8).unwrap()).build().unwrap();
    /// let large = Judge::builder(Canned("yes")).with_model("large").build().unwrap();
    /// let judge = small.escalating_to(&large);
    /// assert_eq!(judge.escalates_to(), vec!["large"]);
    /// ```
    #[must_use]
    pub fn escalating_to(&self, next: &Judge) -> Judge {
        let mut escalate: Vec<Stage> = self.escalate.to_vec();
        escalate.push(Stage {
            session: self.session.beside(&next.session),
            scoring: next.scoring.clone(),
        });
        Judge {
            escalate: escalate.into(),
            ..self.clone()
        }
    }

    /// The judges this one escalates to, in order, each on its own.
    pub(crate) fn escalation_judges(&self) -> Vec<Judge> {
        self.escalate
            .iter()
            .map(|s| Judge {
                session: s.session.clone(),
                scoring: s.scoring.clone(),
                escalate: Arc::new([]),
                app: self.app.fresh(),
            })
            .collect()
    }

    /// The models this judge escalates to, in order.
    #[must_use]
    pub fn escalates_to(&self) -> Vec<&str> {
        self.escalate
            .iter()
            .map(|s| s.session.asking().model.as_str())
            .collect()
    }

    /// Whether this judge was made from configuration ([`from_config`](Self::from_config)),
    /// not built in code over a transport its caller chose.
    #[cfg(feature = "suite")]
    pub(crate) fn configured(&self) -> bool {
        self.session.configured()
    }

    fn over(session: Session, scoring: Scoring) -> Judge {
        Judge {
            session,
            scoring: Arc::new(scoring),
            escalate: Arc::new([]),
            app: AppSlot::new(crate::pipeline::Settings::default(), Default::default()),
        }
    }

    /// This judge and the judges it escalates to, as the metrics take them.
    pub(crate) fn judges(&self) -> Judges<'_> {
        Judges {
            session: &self.session,
            scoring: &self.scoring,
            escalate: &self.escalate,
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

    /// A judge over `session`, its cascade's judges asking beside it (the
    /// same recording and trial).
    fn with_session(&self, session: Session) -> Judge {
        let escalate = self
            .escalate
            .iter()
            .map(|s| Stage {
                session: session.beside(&s.session),
                scoring: s.scoring.clone(),
            })
            .collect();
        Judge {
            session,
            scoring: self.scoring.clone(),
            escalate,
            app: self.app.fresh(),
        }
    }

    /// The loopback endpoint for the pipeline under test, bound to this
    /// judge's recording (started on the first call; clones of the judge
    /// share it). Hand its URL to the pipeline's own client
    /// ([`openai_base_url`](Pipeline::openai_base_url),
    /// [`anthropic_base_url`](Pipeline::anthropic_base_url)) and the
    /// pipeline's model calls are recorded in the test's recording beside
    /// the judge's exchanges, and replayed in CI (see
    /// [`pipeline`](crate::pipeline)). Where its calls go when recording
    /// is `[pipeline]` in `ragaliq.toml`; a judge built in code forwards
    /// to OpenAI's and Anthropic's APIs, or where
    /// [`with_pipeline_settings`](Self::with_pipeline_settings) says.
    ///
    /// ```
    /// use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
    /// # struct Canned;
    /// # impl Transport for Canned {
    /// #     fn provider(&self) -> &str { "canned" }
    /// #     fn complete<'a>(&'a self, _: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeResponse, ragaliq::TransportError>> {
    /// #         Box::pin(async { Ok(JudgeResponse::text("yes")) })
    /// #     }
    /// # }
    /// let judge = Judge::builder(Canned).build().unwrap();
    /// let app = judge.pipeline();
    /// assert!(app.openai_base_url().starts_with("http://127.0.0.1:"));
    /// assert_eq!(judge.pipeline().url(), app.url(), "started once");
    /// ```
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound ([`try_pipeline`](Self::try_pipeline)
    /// returns that as an error).
    #[must_use]
    pub fn pipeline(&self) -> Pipeline {
        match self.try_pipeline() {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        }
    }

    /// [`pipeline`](Self::pipeline), with a failure to start as an error.
    ///
    /// # Errors
    ///
    /// No loopback port can be bound, or no runtime started for the server.
    pub fn try_pipeline(&self) -> Result<Pipeline, StartError> {
        self.app
            .started
            .get_or_init(|| self.start_pipeline(self.session.trial().map(str::to_owned)))
            .clone()
    }

    /// The endpoint [`pipeline`](Self::pipeline) started, if it did.
    pub(crate) fn started_pipeline(&self) -> Option<Pipeline> {
        self.app
            .started
            .get()
            .and_then(|p| p.as_ref().ok())
            .cloned()
    }

    /// A new endpoint over this judge's recording, its calls kept under
    /// `trial` (a suite's case keeps them under `pipeline`).
    pub(crate) fn start_pipeline(&self, trial: Option<String>) -> Result<Pipeline, StartError> {
        let recorder = match self.session.shared_recorder() {
            Some(r) => r.clone(),
            // No recording: forward everything and keep nothing, unless
            // the configured mode is replay, where every call is refused
            // as the judge's questions are.
            None => {
                let mode = match self.session.configured_mode() {
                    Some(crate::core::Mode::Replay) => crate::core::Mode::Replay,
                    _ => crate::core::Mode::Live,
                };
                Arc::new(Recorder::new(
                    crate::record::Location::at(
                        "(no recording)",
                        "a judge without a recording",
                        "use #[rag_test] or recorded_judge!(), then RAGALIQ_MODE=record cargo test --no-fail-fast",
                    ),
                    mode,
                ))
            }
        };
        Pipeline::starting(
            recorder,
            trial,
            self.app.settings.clone(),
            self.app.prices.clone(),
            Some(self.session.shared_client().clone()),
        )
    }

    /// This judge, its pipeline's calls forwarded as `settings` say when
    /// they are recorded (for a judge built in code; a configured one
    /// reads `[pipeline]`). The endpoint is started anew on the next
    /// [`pipeline`](Self::pipeline).
    #[must_use]
    pub fn with_pipeline_settings(&self, settings: crate::pipeline::Settings) -> Judge {
        Judge {
            app: AppSlot::new(settings, self.app.prices.clone()),
            ..self.clone()
        }
    }
}

/// Says, once per process as a judge made from `config` would, that CI
/// made ragaliq ignore a mode (for code that sets the mode after a judge
/// was made: a suite given its judge).
#[cfg(feature = "suite")]
pub(crate) fn say_mode_warning(config: &Config) {
    if let Some(warning) = config.mode_warning() {
        warn_once(&warning);
    }
}

/// Writes `line` to the process's standard error the first time a judge is
/// built with a warning, and never again: one line per process, not one per
/// test. Written to the stream itself, not through `eprintln!`, which the
/// test harness captures and shows only for failing tests.
fn warn_once(line: &str) {
    use std::io::Write;
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        let _ = writeln!(std::io::stderr(), "{line}");
    });
}
