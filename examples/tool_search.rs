//! Tool search: a travel desk's tools declared deferred, loaded when the model searches for
//! them with our retriever; the request's tools stay the same at every step, so the provider's
//! prompt cache holds.
//!
//! With `ANTHROPIC_API_KEY` set, the model is Claude; otherwise a scripted model that stands in
//! for Anthropic's API answers (it searches, calls what it found, then answers).
//!
//! Run with `cargo run --features agent --example tool_search`.

use std::sync::Arc;

use ai_tool::agent::{
    Agent, AnthropicModel, ChatModel, Message, ModelResponse, RunOptions, ScriptedModel,
    ToolSearch, TOOL_SEARCH,
};
use ai_tool::prelude::*;
use ai_tool::retrieval::Retriever;
use serde_json::json;

/// A travel desk.
pub struct Travel;

#[ai_tools]
impl Travel {
    /// The weather forecast for a city.
    #[ai_tool(selectable, keywords = ["rain", "forecast", "temperature"])]
    fn get_weather(&self, city: String) -> String {
        format!("Rain in {city} tomorrow.")
    }

    /// Books a flight to a city.
    #[ai_tool(selectable, keywords = ["plane", "airline"])]
    fn book_flight(&self, city: String) -> String {
        format!("Flight to {city} booked.")
    }

    /// Finds a hotel room in a city.
    #[ai_tool(selectable, keywords = ["room", "stay"])]
    fn find_hotel(&self, city: String) -> String {
        format!("Hotel du Parc, {city}.")
    }
}

/// The model: Claude when `ANTHROPIC_API_KEY` is set, else a script.
fn model(script: &Arc<ScriptedModel>) -> Arc<dyn ChatModel> {
    if std::env::var_os("ANTHROPIC_API_KEY").is_some() {
        return Arc::new(AnthropicModel::new("claude-sonnet-4-5"));
    }
    script.push_response(ModelResponse::calling([ToolCall::new(
        "toolu_1",
        TOOL_SEARCH,
        json!({ "query": "weather forecast" }),
    )]));
    script.push_response(ModelResponse::calling([ToolCall::new(
        "toolu_2",
        "get_weather",
        json!({ "city": "Paris" }),
    )]));
    script.push_response(ModelResponse::answer(
        "Take an umbrella: rain in Paris tomorrow.",
    ));
    Arc::clone(script) as Arc<dyn ChatModel>
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let exec = Executor::builder().service(Arc::new(Travel)).build()?;
    let retriever = Arc::new(Retriever::lexical(exec.tools()));
    let script = Arc::new(ScriptedModel::new().speaking(Format::Anthropic));

    let agent = Agent::builder(model(&script))
        .executor(exec)
        .tool_search(ToolSearch::local(retriever))
        .build();
    let result = agent
        .run("Will it rain in Paris tomorrow?", &RunOptions::default())
        .await?;

    for message in &result.transcript {
        match message {
            Message::Assistant { calls, .. } => {
                for call in calls {
                    println!("call   {}({})", call.name, call.arguments);
                }
            }
            Message::Tool { found_tools, .. } if !found_tools.is_empty() => {
                println!("found  {}", found_tools.join(", "))
            }
            Message::Tool { text, .. } => println!("result {text}"),
            _ => {}
        }
    }
    println!("answer {}", result.text);

    // What the scripted model was sent: every tool at every step, the travel desk's deferred.
    let requests = script.requests();
    if let Some(first) = requests.first() {
        let declared = first.tools.declarations_or_declare(Format::Anthropic);
        for tool in declared.tools.as_array().into_iter().flatten() {
            let deferred = tool.get("defer_loading").is_some();
            println!("tool   {} (deferred: {deferred})", tool["name"]);
        }
        let same = requests
            .iter()
            .all(|r| r.tools.declarations_or_declare(Format::Anthropic).tools == declared.tools);
        println!("the same tools at every step: {same}");
    }
    Ok(())
}
