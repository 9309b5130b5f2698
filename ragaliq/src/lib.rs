//! Test RAG (retrieval-augmented generation) pipelines inside `cargo test`.
//!
//! An LLM *judge* grades each answer against the retrieved context, and the
//! grades become ordinary test assertions:
//!
//! | metric | what it measures | judge calls (short questions, the default) |
//! | --- | --- | --- |
//! | [faithfulness](Judge::faithfulness) | share of the response's claims the context supports | 1 to extract the claims, 1 per claim, 1 more per claim the judge answers no to (P(supported) < 0.5, whatever `claim_threshold` says) |
//! | [hallucination](Judge::hallucination) | share of claims that are not hallucinated | 0 more after faithfulness |
//! | [relevance](Judge::relevance) | how well the response answers the query | 1 |
//! | [context precision](Judge::context_precision) | are the relevant passages ranked first? | 1 per passage |
//! | [context recall](Judge::context_recall) | does the context hold the expected facts? | as faithfulness, per expected fact |
//! | [abstention](Judge::abstention) | a turn its passages cannot answer is answered by saying so | 2 per turn (1 where the turn is labelled) |
//! | [consistency](Judge::consistency) | no answer contradicts an earlier answer of the conversation | 1 per follow-up turn |
//! | [retention](Judge::retention) | what the user said is not asked again or contradicted | 1 per follow-up turn |
//!
//! Every metric takes a single case, a [`Conversation`] (each turn read
//! with the turns before it) or one turn of it ([`Conversation::turn`]).
//!
//! Each question is a short yes/no question whose verdict is read from the
//! judge's token probabilities where its API returns them (see
//! [`Strategy`]); the JSON prompts of earlier releases stay as
//! `strategy = "json"` (faithfulness then costs 1 + ⌈claims /
//! `verify_batch`⌉ calls plus re-asks).
//!
//! # A RAG test
//!
//! `#[rag_test]` turns an async function into a `#[test]`, hands it a judge
//! configured by `ragaliq.toml` and `RAGALIQ_*` variables (see [`config`];
//! with nothing configured, OpenAI's `gpt-4o-mini`, which needs
//! `OPENAI_API_KEY` to record and nothing to replay), and binds that judge
//! to a recording for this test:
//!
//! ```no_run
//! use ragaliq::prelude::*;
//!
//! #[rag_test]
//! async fn refund_policy(judge: Judge) {
//!     let case = RagCase::new("What is the refund window?")
//!         .context(["Refunds are accepted within 30 days of delivery."])
//!         .response("The refund window is 30 days from delivery.");
//!     assert_faithful!(judge, case);                      // default threshold 0.7
//!     assert_no_hallucination!(judge, case, threshold = 0.9);
//!     assert_relevant!(judge, case);                      // the score is P(yes)
//! }
//!
//! /// A bad answer must be caught: fails when the judge lets it pass.
//! #[rag_test]
//! async fn invented_policy_is_caught(judge: Judge) {
//!     let case = RagCase::new("What is the refund window?")
//!         .context(["Refunds are accepted within 30 days of delivery."])
//!         .response("Refunds are paid in gold coins.");
//!     assert_caught!(judge, case, faithfulness);
//! }
//! ```
//!
//! # Record, review, replay
//!
//! Every exchange with the judge is recorded as an insta snapshot beside the
//! test (`tests/snapshots/<binary>__<test>.snap`): what the judge saw (the
//! query, the passages, the claims) and what it said (verdicts, evidence,
//! confidence), laid out for a reviewer.
//!
//! 1. Run the tests with a key: in the default `auto` mode, recorded
//!    exchanges replay and only new ones call the judge; a new or changed
//!    recording fails the test as a new snapshot does in insta.
//! 2. `cargo insta review`: read the judge's answers, accept or reject.
//! 3. Commit the `.snap` files.
//! 4. In CI (`CI` set), the mode is `replay`: no network, no key, no cost. A
//!    missing recording or one that no longer matches (prompt, model,
//!    setting or input changed) fails and says exactly what changed and how
//!    to re-record.
//!
//! Outcomes stay apart: a low score fails with the claims that let it down;
//! a judge that cannot answer, a judge that disagrees with itself over
//! several samples (*undecided*) and a configuration error each fail with
//! their own message, never as a low score.
//!
//! # The pipeline under test, recorded too
//!
//! A test can call the pipeline it ships: [`Judge::pipeline`] is a loopback
//! endpoint speaking the OpenAI-compatible and Anthropic APIs, whose URL
//! the pipeline's own client is given. Its model calls are recorded in the
//! test's recording beside the judge's verdicts, and replayed in CI; a
//! changed prompt, model or parameter fails with what changed (see
//! [`pipeline`]).
//!
//! # More than one test
//!
//! - [`suite()`]: a folder of case files (YAML, JSON, JSONL, CSV) becomes
//!   one test per case and metric in a `harness = false` target, with JSON,
//!   JUnit, Markdown and HTML reports that add up across processes and CI
//!   shards.
//! - [`calibration()`]: how far a judge agrees with labelled items (kappa,
//!   macro-F1, confusion matrix), of five kinds: claims, answers
//!   (relevance), passages (context precision), graded answers
//!   (correctness) and judged responses (criteria); several judges side by
//!   side.
//! - [`Samples`]: ask each question several times and vote, or `auto` to
//!   ask again only near the threshold. Only a judge that samples can
//!   disagree with itself: with `strategy = "word"` or `"json"` and a
//!   `temperature` above 0. Under the default `strategy = "probability"`
//!   the answers are token probabilities, the same at every asking, and
//!   `samples` above 1 is a configuration error.
//!
//! # Evaluating from code, and your own judge
//!
//! Any [`Transport`](judge::Transport) can stand behind a [`Judge`]; here a
//! canned one, so the example runs without a network. [`Judge::from_env`]
//! builds the configured one (OpenAI-compatible servers or Anthropic).
//!
//! ```
//! use ragaliq::judge::{BoxFuture, Judge, JudgeRequest, JudgeResponse, Transport};
//! use ragaliq::{RagCase, TransportError, Verdict};
//!
//! struct Canned;
//! impl Transport for Canned {
//!     fn provider(&self) -> &str { "canned" }
//!     fn complete<'a>(&'a self, req: &'a JudgeRequest)
//!         -> BoxFuture<'a, Result<JudgeResponse, TransportError>>
//!     {
//!         let question = &req.messages[0].content;
//!         let reply = match req.task.as_str() {
//!             "extract_claims" => r#"{"claims": ["Items can be returned within 30 days.",
//!                                                "Returns are free."]}"#,
//!             // One short question per claim, answered in one word (a real
//!             // server also returns the word's probability).
//!             "claim_supported" if question.contains("30 days.</claim>") => "yes",
//!             _ => "no",
//!         };
//!         Box::pin(async move { Ok(JudgeResponse::text(reply)) })
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let judge = Judge::builder(Canned).build().unwrap();
//! let case = RagCase::new("How long is the refund window?")
//!     .context(["Refunds are accepted within 30 days of delivery."])
//!     .response("You can return items within 30 days. Returns are free.");
//!
//! let eval = judge.faithfulness(&case).await.unwrap();
//! assert_eq!(eval.score, 0.5);
//! assert!(!eval.passed); // below the default threshold of 0.7
//! assert_eq!(eval.claims[1].verdict, Verdict::NoEvidence);
//!
//! // Hallucination reuses the same answers: no new call. Four in all:
//! // the extraction, a question per claim, and whether the unsupported
//! // claim is contradicted.
//! let h = judge.hallucination(&case).await.unwrap();
//! assert_eq!(h.usage.calls, 0);
//! assert_eq!(judge.usage().calls, 4);
//! # });
//! ```
//!
//! # Guarantees
//!
//! - Scores are finite and in [0, 1]; what cannot be scored is an [`Error`].
//! - A batched verification yields exactly one verdict per claim, matched by
//!   number; when the judge's batch cannot be matched, the unmatched claims
//!   are re-asked one at a time. Verdicts are never truncated, padded or guessed.
//! - Judge replies are read by the public [`parse`] functions, which accept
//!   only replies with one reasonable reading and otherwise return a
//!   [`ParseError`] carrying the raw reply.
//! - User data reaches the judge inside escaped delimiters ([`prompts`]).
//! - API keys never appear in `Debug` output or error messages.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[doc(hidden)]
#[path = "private/mod.rs"]
pub mod __private;
mod assertions;
// `cargo ragaliq`'s own plumbing (batch recording, run folders): public only
// so the subcommand can drive it, not part of the documented API and not
// covered by semver.
#[cfg(feature = "batch")]
#[doc(hidden)]
pub mod batch;
#[cfg(feature = "calibration")]
pub mod calibrate;
mod client;
pub mod config;
mod core;
#[cfg(any(feature = "suite", feature = "calibration"))]
mod data_files;
mod error;
pub mod evidence;
#[cfg(feature = "generate")]
pub mod generation;
#[cfg(feature = "suite")]
pub mod harness;
#[cfg(any(feature = "suite", feature = "calibration"))]
mod html;
pub mod judge;
mod metrics;
pub mod parse;
pub mod pipeline;
pub mod prompts;
pub mod record;
mod recorded;
pub mod retrieval;
pub mod review;
#[doc(hidden)]
pub mod run;
mod session;
mod stats;
mod tasks;
mod transport;

pub use crate::core::judged;
pub use crate::core::{
    Agreement, AnswerFound, Answerable, Awaiting, Band, Bands, CaseError, ClaimCounts,
    ClaimVerdict, ConfigError, Correctness, Criteria, CriteriaForm, Decision, Doubt, DoubtKind,
    Evaluation, Graded, JudgeShare, Kind, MatchedBy, Metric, PassageVerdict, Place, RagCase,
    RelevantAt, RelevantIds, Repeat, Retrieved, Samples, Spread, Strategy, Uncertain, Unsure,
    UnsureWhy, Usage, Verdict, VerdictWeights,
};
pub use crate::core::{
    Conversation, Gradable, Grounding, HISTORY_CHARS, HISTORY_TURNS, Said, Shown, Turn, TurnOf,
    Window,
};
#[cfg(feature = "calibration")]
pub use calibrate::calibration;
pub use config::{Config, Mode, Provider};
pub use error::{Error, Result};
#[cfg(feature = "generate")]
pub use generation::generate;
#[cfg(feature = "suite")]
pub use harness::suite;
pub use judge::Judge;
pub use metrics::{CustomAnswer, CustomMetric, CustomScore, EvalOptions};
pub use parse::{ParseError, ParseErrorKind};
pub use ragaliq_macros::rag_test;
pub use recorded::RecordedJudge;
pub use transport::{TransportError, TransportErrorKind};

/// The names a test file needs: `use ragaliq::prelude::*;`.
pub mod prelude {
    pub use crate::{
        Conversation, Correctness, Criteria, CustomAnswer, CustomMetric, CustomScore, EvalOptions,
        Evaluation, Judge, Metric, RagCase, Samples, Turn, Verdict, VerdictWeights,
        assert_abstains, assert_caught, assert_consistent, assert_context_precision,
        assert_context_recall, assert_correct, assert_faithful, assert_judged, assert_metric,
        assert_no_hallucination, assert_relevant, assert_remembers, assert_retrieved, rag_test,
        recorded_judge,
    };
}
