//! Compile errors of `#[rag_test]` and the assertion macros: each misuse is
//! an error on the offending token that lists the valid options; every
//! accepted option spelling compiles.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui-pass/*.rs");
}
