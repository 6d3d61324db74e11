//! Converters the macro cannot check are checked at `build()`, naming both definitions.
//! (A binary of its own, since registration is global to the binary.)

use ai_tool::prelude::*;
use ai_tool::BuildProblem;

/// Returns a number.
#[ai_tool]
fn number() -> u32 {
    1
}

/// Returns text, and has a converter on its attribute.
#[ai_tool(convert = shout)]
fn text() -> String {
    "hi".into()
}

fn shout(s: String) -> ToolOutput {
    ToolOutput::text(s.to_uppercase())
}

/// Returns a flag.
#[ai_tool]
fn flag() -> bool {
    true
}

// Takes the wrong type for `number`.
#[ai_tool_converter("number")]
fn number_as_text(v: String) -> ToolOutput {
    ToolOutput::text(v)
}

// A second converter for `text`, which already has one.
#[ai_tool_converter("text")]
fn text_again(v: String) -> ToolOutput {
    ToolOutput::text(v)
}

// Two converters for `flag`.
#[ai_tool_converter("flag")]
fn flag_one(v: bool) -> ToolOutput {
    ToolOutput::text(v.to_string())
}

#[ai_tool_converter("flag")]
fn flag_two(v: bool, _ctx: &ToolContext) -> ToolOutput {
    ToolOutput::text(v.to_string())
}

// For a tool nobody defined.
#[ai_tool_converter("nobody")]
fn for_nobody(v: bool) -> ToolOutput {
    ToolOutput::text(v.to_string())
}

#[test]
fn every_converter_problem_is_reported_at_once() {
    let err = Executor::builder().build().unwrap_err();
    let text = err.to_string();
    assert_eq!(err.problems.len(), 4, "{text}");
    let mismatch = err
        .problems
        .iter()
        .find(|p| matches!(p, BuildProblem::ConverterTypeMismatch { .. }))
        .unwrap();
    let mismatch = mismatch.to_string();
    assert!(
        mismatch.contains("takes `alloc::string::String`") && mismatch.contains("returns `u32`"),
        "{mismatch}"
    );
    assert!(
        mismatch.contains("build_error_converters.rs:31"),
        "{mismatch}"
    );
    assert!(
        text.contains("tool `text` has two converters: one in the `convert = ..` of"),
        "{text}"
    );
    assert!(
        text.contains("tool `flag` has two converters")
            && text.contains(":43")
            && text.contains(":48"),
        "{text}"
    );
    assert!(
        text.contains("is for `nobody`, but no `#[ai_tool]` has that name"),
        "{text}"
    );
}
