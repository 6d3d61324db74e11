//! One round trip with a model API: declare the tools for Anthropic's Messages API, take the
//! tool calls out of a response (here, one written as the API documents it), run them, and
//! render the message that carries the results back.
//!
//! Run with `cargo run --example providers`.

use std::sync::Arc;

use ai_tool::prelude::*;
use ai_tool::provider::{parse_calls, render_results};
use serde_json::json;

/// Weather, by city.
pub struct Weather;

#[ai_tools]
impl Weather {
    /// Gets the current temperature of a city, in degrees Celsius.
    #[ai_tool(read_only)]
    fn get_weather(&self, city: String) -> String {
        format!("{city}: 18 °C")
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let exec = Executor::builder().service(Arc::new(Weather)).build()?;
    let options = DeclareOptions {
        strict: true,
        ..Default::default()
    };

    let declared = exec.declarations(Format::Anthropic, &options);
    // request body: { "tools": declared.tools, ... }
    println!("{}", serde_json::to_string_pretty(&declared.tools)?);
    let response_json = json!({
        "role": "assistant",
        "stop_reason": "tool_use",
        "content": [
            { "type": "text", "text": "Let me look." },
            { "type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": { "city": "Lyon" } }
        ]
    });
    let calls = parse_calls(Format::Anthropic, &response_json, &declared.aliases)?;
    let results = exec.execute_calls(&calls).await; // concurrent, in call order, failures isolated
    let next_message = render_results(Format::Anthropic, &results, &declared.aliases);
    println!("{}", serde_json::to_string_pretty(&next_message)?);
    Ok(())
}
