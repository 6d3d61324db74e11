use ai_tool::prelude::*;

fn one(s: String) -> ToolOutput {
    ToolOutput::text(s)
}

fn two(s: String) -> ToolOutput {
    ToolOutput::text(s)
}

/// Returns text.
#[ai_tool(convert = one, convert = two)]
fn text() -> String {
    "hi".into()
}

fn main() {}
