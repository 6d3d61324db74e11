use ai_tool::prelude::*;

/// Adds.
#[ai_tool(descripton = "typo")]
fn add(a: i32, b: i32) -> i32 {
    a + b
}

fn main() {}
