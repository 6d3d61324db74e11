//! Every compile error the macros report, with the message the user sees (`tests/ui/*.stderr`).

#[test]
fn compile_errors_explain_themselves() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
