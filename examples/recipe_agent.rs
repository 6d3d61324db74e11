//! Recipe: three methods of a service run by an OpenAI model in the agent loop, with the
//! errors a run can end in and a person's approval before a refund (docs/recipes/agent-loop.md).
//!
//! With `OPENAI_API_KEY` set, the model is OpenAI's (`AI_TOOL_MODEL`, default `gpt-4o-mini`);
//! with `OPENAI_BASE_URL` set (with its `/v1`), any OpenAI-compatible server. With neither, a
//! scripted model plays the model's part, so the program runs without a network.
//!
//! Run with `cargo run --features openai --example recipe_agent -- "your message"`.

use std::process::ExitCode;
use std::sync::Arc;

use ai_tool::agent::{
    Agent, ChatModel, Decision, Generation, MemoryRunStore, ModelResponse, OpenAiChatModel,
    PendingApproval, RunError, RunOptions, RunResult, RunStore, ScriptedModel, StopReason,
};
use ai_tool::prelude::*;
use serde::Serialize;
use serde_json::json;

/// The service you already have: a shop's orders (a database, in a real shop).
pub struct Shop {
    name: String,
}

/// An order, as `find_order` returns it (structured JSON for the model).
#[derive(Debug, Serialize)]
pub struct Order {
    number: String,
    item: String,
    paid_eur: f64,
}

#[ai_tools]
impl Shop {
    /// Finds an order by its number (such as A-1042).
    #[ai_tool(read_only)]
    fn find_order(&self, order: String) -> Result<Order, String> {
        self.order(&order)
    }

    /// Says where an order's parcel is.
    #[ai_tool(read_only)]
    fn track_parcel(&self, order: String) -> Result<String, String> {
        let order = self.order(&order)?;
        Ok(format!("{}: delivered on 2026-05-04", order.number))
    }

    /// Refunds part or all of an order. A person approves each refund before it is made.
    #[ai_tool(destructive, requires_approval)]
    fn refund(&self, order: String, amount_eur: f64, reason: String) -> Result<String, String> {
        let order = self.order(&order)?;
        if amount_eur > order.paid_eur {
            return Err(format!("{} was paid {} EUR", order.number, order.paid_eur));
        }
        Ok(format!(
            "refunded {amount_eur:.2} EUR on {} ({reason})",
            order.number
        ))
    }
}

impl Shop {
    fn order(&self, number: &str) -> Result<Order, String> {
        match number {
            "A-1042" => Ok(Order {
                number: number.into(),
                item: "a bike lamp".into(),
                paid_eur: 39.90,
            }),
            _ => Err(format!("{} has no order {number}", self.name)),
        }
    }
}

/// OpenAI's Chat Completions, or a compatible server; a script when neither is configured.
fn model() -> Arc<dyn ChatModel> {
    let base_url = std::env::var("OPENAI_BASE_URL").ok();
    if std::env::var_os("OPENAI_API_KEY").is_none() && base_url.is_none() {
        return Arc::new(script());
    }
    let name = std::env::var("AI_TOOL_MODEL").unwrap_or_else(|_| "gpt-4o-mini".into());
    // The key is read from OPENAI_API_KEY; `with_api_key` gives one in code.
    let mut model = OpenAiChatModel::new(name).with_generation(Generation::new().max_tokens(1024));
    if let Some(base_url) = base_url {
        model = model.with_base_url(&base_url);
    }
    Arc::new(model)
}

/// What the model says when no model is configured: the calls a model would make.
fn script() -> ScriptedModel {
    let find = ToolCall::new("call_1", "find_order", json!({ "order": "A-1042" }));
    let refund = json!({ "order": "A-1042", "amount_eur": 39.9, "reason": "arrived broken" });
    let refund = ToolCall::new("call_2", "refund", refund);
    ScriptedModel::new()
        .then(ModelResponse::calling([find]))
        .then(ModelResponse::calling([refund]))
        .then(ModelResponse::answer(
            "I refunded the 39.90 EUR you paid for A-1042's bike lamp.",
        ))
}

/// How long a run waits for a person's decision.
const DAY: std::time::Duration = std::time::Duration::from_secs(86_400);

/// A person's decision on a call that waits. Here a rule stands in for the person: refunds of
/// up to 50 EUR are approved, others refused with a reason the model reads.
fn decide(pending: &PendingApproval) -> Decision {
    let call = &pending.call;
    println!("approval: {}({})", call.name, call.arguments);
    match call.arguments["amount_eur"].as_f64() {
        Some(amount) if amount <= 50.0 => pending.approve(),
        _ => pending.reject("refunds over 50 EUR are made by the shop's manager"),
    }
}

/// A run that ended without an answer: what ended it and why. `error.partial` keeps what
/// it did (transcript, steps, usage), to log or to carry on from.
fn report(error: &RunError) -> ExitCode {
    eprintln!("{error}");
    let mut cause = std::error::Error::source(&error.failure);
    while let Some(why) = cause {
        eprintln!("  because: {why}");
        cause = why.source();
    }
    ExitCode::FAILURE
}

/// The calls of a run's steps, and what each gave back.
fn print_calls(result: &RunResult) {
    for record in result.steps.iter().flat_map(|step| &step.calls) {
        let shown = match &record.result {
            Ok(output) => output.to_text(),
            Err(error) => error.to_model_text(),
        };
        println!("{}({}) -> {shown}", record.call.name, record.call.arguments);
    }
}

#[tokio::main]
async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let message = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "My order A-1042 arrived broken. Can I have my money back?".into());
    let shop = Shop {
        name: "Lyon Bikes".into(),
    };
    let exec = Executor::builder().service(Arc::new(shop)).build()?;
    let agent = Agent::builder(model())
        .executor(exec)
        .instructions("You are Lyon Bikes' support. Use the tools; answer in one sentence.")
        .build();
    let options = RunOptions::default().max_steps(8);

    let mut result = match agent.run(message, &options).await {
        Ok(result) => result,
        Err(error) => return Ok(report(&error)),
    };
    // A call of `refund` does not run: the run stops as Interrupted, with a state to resume.
    // The state waits in a store while a person decides (`PgRunStore` is one every replica
    // shares), and is taken back once.
    let store = MemoryRunStore::new();
    while let Some(interruption) = result.interruption.take() {
        print_calls(&result);
        let id = store.save("customer-42", &interruption.state, DAY).await?;
        let state = store.take("customer-42", &id).await?;
        let decisions: Vec<Decision> = state.pending().map(decide).collect();
        result = match agent.resume(state, &decisions, &options).await {
            Ok(result) => result,
            Err(error) => return Ok(report(&error)),
        };
    }
    print_calls(&result);
    match &result.stop {
        StopReason::Truncated { reason } => eprintln!("the answer was cut ({reason})"),
        StopReason::Declined { reason } => eprintln!("the model declined ({reason})"),
        StopReason::MaxSteps { steps } => eprintln!("{steps} steps ran; the answer may be partial"),
        _ => {}
    }
    println!("answer: {}", result.text);
    Ok(ExitCode::SUCCESS)
}
