//! Compile errors of `#[rag_test]` and the assertion macros: each misuse is
//! an error on the offending token that lists the valid options.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
