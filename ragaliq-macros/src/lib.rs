//! The `#[rag_test]` attribute of [ragaliq](https://docs.rs/ragaliq). Depend on
//! `ragaliq` and use it as `ragaliq::rag_test` (or through the prelude); this
//! crate holds only parsing and code generation.

#![forbid(unsafe_code)]

mod expand;
mod options;

use proc_macro::TokenStream;

/// Turns `async fn name(judge: Judge) { … }` into a `#[test]` that runs on a
/// tokio runtime, with a judge built from configuration and a recorder bound
/// to this test. The judge parameter is optional.
///
/// Options: `mode = "replay" | "auto" | "record" | "live"`,
/// `judge = "provider:model"`, `name = "recording_name"`,
/// `flavor = "current_thread" | "multi_thread"`, `crate = "path::to::ragaliq"`.
///
/// See the `ragaliq` crate's documentation for examples.
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
