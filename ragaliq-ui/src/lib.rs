//! Nothing: this package holds `tests/ui.rs`, the compile errors of
//! `#[rag_test]` and the assertion macros (trybuild), and exists so that
//! trybuild checks only ragaliq's dependencies (see its `Cargo.toml`).
#![forbid(unsafe_code)]
