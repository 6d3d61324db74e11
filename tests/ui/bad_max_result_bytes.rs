use ai_tool::prelude::*;

/// Reads nothing at all.
#[ai_tool(max_result_bytes = 0)]
fn read() {}

fn main() {}
