use ai_tool::prelude::*;

fn number_to_text(n: u64) -> ToolOutput {
    ToolOutput::text(n.to_string())
}

/// Returns text.
#[ai_tool(convert = number_to_text)]
fn text() -> String {
    "hi".into()
}

fn main() {}
