use ai_tool::ai_tool;

/// Counts.
#[ai_tool(task = "always")]
fn count() -> u32 {
    1
}

fn main() {}
