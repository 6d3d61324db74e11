use ai_tool::ai_tool;

/// Counts.
#[ai_tool(callers = "anyone")]
fn count() -> u32 {
    1
}

fn main() {}
