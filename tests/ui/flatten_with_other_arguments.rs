use ai_tool::prelude::*;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    text: String,
}

/// Searches.
#[ai_tool]
fn search(#[arg(flatten)] query: Query, limit: u32) -> String {
    format!("{} {limit}", query.text)
}

fn main() {}
