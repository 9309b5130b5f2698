//! The vocabulary every layer speaks, and nothing else: cases, verdicts and
//! their weights, metrics' names, evaluations and their usage, samples and
//! agreement, modes, JSON modes, the one request and response types, the
//! fingerprint of an exchange, API keys, prices and configuration errors.
//!
//! This layer imports no other module of the crate; every other layer may
//! import it.

mod band;
mod case;
mod check;
mod config_error;
mod conversation;
mod criteria;
mod evaluation;
mod gates;
mod json_mode;
pub mod judged;
mod key;
mod labels;
mod logprobs;
mod mode;
pub mod pipeline;
mod price;
mod rate;
mod request;
mod retrieved;
mod samples;
mod strategy;
pub(crate) mod sync;
mod turn;
mod verdict;

pub use band::{Band, Bands, Decision, Kind, Uncertain, Unsure, UnsureWhy};
pub use case::{CaseError, RagCase};
pub use check::{Check, CheckOutcome};
pub use config_error::ConfigError;
pub use conversation::{
    Assessed, Conversation, Gradable, HISTORY_CHARS, HISTORY_TURNS, Said, Shown, TurnOf, Window,
};
pub(crate) use criteria::ShownBecause;
pub use criteria::{Correctness, Criteria, CriteriaForm};
pub use evaluation::{
    AnswerFound, Answerable, Awaiting, ClaimCounts, ClaimVerdict, Doubt, DoubtKind, Evaluation,
    Graded, JudgeShare, Metric, PassageVerdict, Usage,
};
pub use gates::{GateRule, Gates};
pub use json_mode::JsonMode;
pub use key::ApiKey;
pub use labels::RelevantIds;
#[cfg(feature = "suite")]
pub(crate) use labels::ids as deserialize_ids;
pub use logprobs::{TokenLogprob, TopLogprob};
pub use mode::Mode;
pub(crate) use price::price_for;
pub use price::{BUILTIN_PRICES, Price};
pub use rate::{RateLimits, RateWindow};
pub(crate) use request::canonical_json;
#[cfg(test)]
pub(crate) use request::test_request;
pub use request::{
    Fingerprint, JudgeRequest, JudgeResponse, Message, ResponseFormat, Role, StopReason,
};
pub use retrieved::{MatchedBy, Place, RelevantAt, Repeat, Retrieved};
pub use samples::{
    AUTO_BAND, Agreement, DEFAULT_AGREEMENT, DEFAULT_CLAIM_THRESHOLD, DEFAULT_CONTRADICTION_RATIO,
    DEFAULT_PROBABILITY_THRESHOLD, DEFAULT_VERIFY_BATCH, Samples, Spread,
};
pub use strategy::Strategy;
pub use turn::{Grounding, Turn};
pub(crate) use verdict::clamp_score;
pub use verdict::{Verdict, VerdictWeights};
