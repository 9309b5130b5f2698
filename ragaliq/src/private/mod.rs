//! Support for the code `#[rag_test]` and the assertion macros generate.
//! Not public API: reached only as `::ragaliq::__private`, and free to change.
//!
//! As insta's `_macro_support`, this module only re-exports; each file
//! beneath it does one thing:
//!
//! - `spec`: what `#[rag_test]` knows about the test it wraps, and where
//!   its recording and the command that records it are;
//! - `runner`: runs one `#[rag_test]` (`run_test`);
//! - `outcome`: what a test body's assertions leave for the runner (how
//!   the last one failed, the messages of those awaiting a person);
//! - `expect`: what an assertion macro evaluates and expects;
//! - `assert`: the judged assertions (`assert_metric`);
//! - `hints`: the commands a failing or awaiting assertion prints to give
//!   or overrule a verdict;
//! - `relative`: paths as the person who ran `cargo test` types them;
//! - `retrieved`: `assert_retrieved!` (no judge);
//! - `options`: the options the assertion macros take, checked.

mod assert;
mod expect;
mod hints;
mod options;
mod outcome;
mod relative;
mod retrieved;
mod runner;
mod spec;

pub use crate::recorded::{Here, recorded_judge, type_name_of};
pub use crate::retrieval;
pub use assert::assert_metric;
pub use expect::{Expect, What, criteria, custom};
pub use options::{
    AbstentionOptions, ConsistencyOptions, ContextPrecisionOptions, ContextRecallOptions,
    CorrectnessOptions, CriteriaOptions, CustomOptions, FaithfulnessOptions, HallucinationOptions,
    MetricName, RelevanceOptions, RetentionOptions, SamplesArg, UncertainArg,
};
pub use ragaliq_macros::{__assertion_options, __retrieval_comparison};
pub use retrieved::{Retrievable, assert_retrieved};
pub use runner::run_test;
#[allow(deprecated)]
pub use spec::{TestSpec, should_panic_without_expected};
pub use tokio;
