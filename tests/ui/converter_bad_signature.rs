use ai_tool::prelude::*;

// A name no provider accepts.
#[ai_tool_converter("files.read")]
fn read(s: String) -> ToolOutput {
    ToolOutput::text(s)
}

// Nothing to convert.
#[ai_tool_converter("nothing")]
fn nothing() -> ToolOutput {
    ToolOutput::text("")
}

// One parameter too many.
#[ai_tool_converter("three")]
fn three(s: String, _ctx: &ToolContext, _extra: u32) -> ToolOutput {
    ToolOutput::text(s)
}

// Generic.
#[ai_tool_converter("generic")]
fn generic<T: std::fmt::Display>(v: T) -> ToolOutput {
    ToolOutput::text(v.to_string())
}

fn main() {}
