//! The agent loop: the quickstart's tools (`add`, `check`, `availability`, `cancel`) run by a
//! model for the prompt given as the first argument. It prints each step, then the answer.
//!
//! With `OPENAI_BASE_URL` set (with its `/v1`), the model is that OpenAI-compatible endpoint
//! (`OPENAI_API_KEY` if it needs a key, `AI_TOOL_MODEL` for the model's name); otherwise a
//! scripted model answers.
//!
//! Run with `cargo run --features agent --example agent -- "How many places are free on 2026-12-01?"`.

use std::sync::Arc;

use ai_tool::agent::{Agent, ChatModel, ModelResponse, OpenAiChatModel, RunOptions, ScriptedModel};
use ai_tool::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The service you already have.
pub struct BookingService {
    city: String,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
pub enum Category {
    Room,
    Bike,
    Plane,
}

/// What a booking request looks like; the constraints are enforced before the method runs.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ComplexInput {
    /// A nullable but required property.
    nullable_but_required: Option<String>,
    #[schemars(length(max = 10))]
    max_length_10: String,
    #[schemars(length(min = 5))]
    min_length_5: String,
    kind: Category,
    #[schemars(length(min = 2, max = 5))]
    categories: Vec<Category>,
}

#[derive(Debug, Serialize)]
pub struct Summary {
    kind: Category,
    categories: usize,
    note: Option<String>,
}

#[ai_tools]
impl BookingService {
    /// Checks a booking request.
    #[ai_tool(read_only)]
    fn check(&self, input: ComplexInput) -> Result<Summary, String> {
        if input.max_length_10 == input.min_length_5 {
            return Err("the two codes must differ".into());
        }
        Ok(Summary {
            kind: input.kind,
            categories: input.categories.len(),
            note: input.nullable_but_required,
        })
    }

    /// Tells how many places are free on a day.
    #[ai_tool(read_only)]
    async fn availability(&self, #[arg(description = "Day, as YYYY-MM-DD")] day: String) -> String {
        format!("{} on {day}: 3 free", self.city)
    }

    /// Cancels a booking.
    #[ai_tool(destructive, idempotent)]
    fn cancel(&self, booking_id: u64) -> String {
        format!("Booking {booking_id} in {} is cancelled.", self.city)
    }
}

/// Adds two numbers.
#[ai_tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// The model: an OpenAI-compatible endpoint when `OPENAI_BASE_URL` is set, else a script.
fn model() -> Arc<dyn ChatModel> {
    match std::env::var("OPENAI_BASE_URL") {
        Ok(base_url) => {
            let name = std::env::var("AI_TOOL_MODEL").unwrap_or_else(|_| "gpt-4o-mini".into());
            // The key comes from OPENAI_API_KEY; none is sent when it is unset.
            Arc::new(OpenAiChatModel::new(name).with_base_url(&base_url))
        }
        Err(_) => Arc::new(
            ScriptedModel::new()
                .then(ModelResponse::calling([
                    ToolCall::new("call_1", "availability", json!({ "day": "2026-12-01" })),
                    ToolCall::new("call_2", "add", json!({ "a": 2, "b": 40 })),
                ]))
                .then(ModelResponse::answer(
                    "Lyon has 3 places free on 2026-12-01, and 2 + 40 = 42.",
                )),
        ),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let prompt = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "How many places are free on 2026-12-01? And what is 2 + 40?".into());
    let exec = Executor::builder()
        .service(Arc::new(BookingService {
            city: "Lyon".into(),
        }))
        .build()?;

    let agent = Agent::builder(model())
        .executor(exec)
        .instructions("You manage bookings in Lyon. Use the tools, then answer in one sentence.")
        .build();
    let options = RunOptions::default().max_steps(8);
    let result = agent.run(prompt, &options).await?;

    for step in &result.steps {
        println!("== step {}", step.index + 1);
        if let Some(text) = &step.text {
            println!("model: {text}");
        }
        for record in &step.calls {
            let shown = match &record.result {
                Ok(output) => output.to_text(),
                Err(error) => error.to_model_text(),
            };
            println!("{}({}) -> {shown}", record.call.name, record.call.arguments);
        }
    }
    println!("== answer\n{}", result.text);
    println!(
        "({} requests, {} tokens in, {} out)",
        result.usage.requests, result.usage.input_tokens, result.usage.output_tokens
    );
    Ok(())
}
