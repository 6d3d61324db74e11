use ai_tool::prelude::*;

/// Returns text.
#[ai_tool]
fn text() -> String {
    "hi".into()
}

// No tool named at all.
#[ai_tool_converter]
fn shout(s: String) -> ToolOutput {
    ToolOutput::text(s.to_uppercase())
}

// The facade's path, but no tool.
#[ai_tool_converter(crate = ai_tool)]
fn whisper(s: String) -> ToolOutput {
    ToolOutput::text(s.to_lowercase())
}

// The tool's name, not as a string.
#[ai_tool_converter(text)]
fn repeat(s: String) -> ToolOutput {
    ToolOutput::text(s.repeat(2))
}

fn main() {}
