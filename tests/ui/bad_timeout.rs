use ai_tool::prelude::*;

/// Waits.
#[ai_tool(timeout = "5 seconds")]
async fn wait() {}

fn main() {}
