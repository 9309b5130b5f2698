//! The `#[rag_test]` attribute of [ragaliq](https://docs.rs/ragaliq). Depend on
//! `ragaliq` and use it as `ragaliq::rag_test` (or through the prelude); this
//! crate holds only parsing and code generation.

#![forbid(unsafe_code)]

mod expand;
mod options;
mod retrieved;

use proc_macro::TokenStream;

/// Turns `async fn name(judge: Judge) { … }` into a `#[test]` that runs on a
/// tokio runtime, with a judge built from configuration and a recorder bound
/// to this test. The judge parameter is optional.
///
/// ```ignore
/// use ragaliq::prelude::*;
///
/// #[rag_test]
/// async fn refund_policy(judge: Judge) {
///     let case = RagCase::new("What is the refund window?")
///         .context(["Refunds are accepted within 30 days of delivery."])
///         .response("The refund window is 30 days from delivery.");
///     assert_faithful!(judge, case);
/// }
///
/// // Always replay, under a recording name of its own, on a multi-threaded runtime.
/// #[rag_test(mode = "replay", name = "refunds_v2", flavor = "multi_thread")]
/// async fn refunds_replayed(judge: Judge) {
///     let case = RagCase::new("Who pays return shipping?")
///         .context(["Return shipping is free for damaged items."])
///         .response("Nothing is said about who pays.");
///     assert_caught!(judge, case, faithfulness);
/// }
///
/// // A judge of its own: provider and model (the key comes from the environment).
/// #[rag_test(judge = "anthropic:claude-haiku-4-5")]
/// async fn with_claude(judge: Judge) { /* … */ }
///
/// // A judge file of its own (another way of asking, thresholds, samples).
/// #[rag_test(config = "tests/judges/sampled.toml")]
/// async fn sampled(judge: Judge) { /* … */ }
/// ```
///
/// (These examples are `ignore`d here because this crate cannot depend on
/// `ragaliq`; the same code is compiled in `ragaliq`'s crate documentation
/// and its `tests/`.)
///
/// Options:
///
/// | option | values | default |
/// | --- | --- | --- |
/// | `mode` | `"replay"`, `"auto"`, `"record"`, `"live"` | `RAGALIQ_MODE`, else the file's `mode`, else `replay` when `CI` is set, else `auto`; where `CI` is set anything but `"replay"` is ignored (only `RAGALIQ_MODE` picks another mode there) |
/// | `judge` | `"provider:model"` | the configured judge |
/// | `config` | a judge file, relative to the package root | `RAGALIQ_CONFIG`, else `ragaliq.toml` |
/// | `name` | the recording's name | the function's name |
/// | `flavor` | `"current_thread"`, `"multi_thread"` | `"current_thread"` |
/// | `crate` | a path to `ragaliq`, for re-exports | `::ragaliq` |
///
/// What happens around the body: the recording is committed through insta
/// whatever the outcome (so `cargo insta review` and
/// `cargo insta test --unreferenced` see it); a new or changed recording
/// fails the test until it is reviewed; a configuration problem fails with a
/// message that points at this test. `#[should_panic]` works, and only a low
/// score satisfies it: an assertion that failed otherwise (judge failure,
/// undecided, missing recording, configuration error) fails the test,
/// whatever `expected` says. Give it `expected = "failed for case"` all the
/// same: without `expected` any other panic of the test's own code
/// satisfies it (a warning says so). Prefer `assert_caught!`.
#[proc_macro_attribute]
pub fn rag_test(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::rag_test(args.into(), item.into()).into()
}

/// The options of ragaliq's assertion macros, checked. Not public API: the
/// assertion macros call it through `ragaliq`.
#[doc(hidden)]
#[proc_macro]
pub fn __assertion_options(input: TokenStream) -> TokenStream {
    options::expand(input.into()).into()
}

/// `assert_retrieved!`'s comparison (`recall_at(5) >= 0.8`), checked. Not
/// public API: the macro calls it through `ragaliq`.
#[doc(hidden)]
#[proc_macro]
pub fn __retrieval_comparison(input: TokenStream) -> TokenStream {
    retrieved::expand(input.into()).into()
}
