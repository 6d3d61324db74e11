//! Every compile error the macros report, with the message the user sees (`tests/ui/*.stderr`).
//!
//! Run with the default features (`scripts/test.sh` does): with `mcp` on, rmcp's dependency tree
//! holds another item named `String`, and rustc then writes `std::string::String` in messages
//! that say `String` to a user without it.
#![cfg(not(feature = "mcp"))]

#[test]
fn compile_errors_explain_themselves() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
