use ai_tool::prelude::*;

/// Returns text.
#[ai_tool]
fn text() -> String {
    "hi".into()
}

// A facade path that leads nowhere: reported at the path.
#[ai_tool_converter("text", crate = nowhere)]
fn shout(s: String) -> ToolOutput {
    ToolOutput::text(s.to_uppercase())
}

// The path quoted, as serde writes it.
#[ai_tool_converter("text", crate = "ai_tool")]
fn whisper(s: String) -> ToolOutput {
    ToolOutput::text(s.to_lowercase())
}

fn main() {}
