//! The README's first program: a shop's order service whose method becomes a tool. It prints
//! what a model is shown, runs a call as a model would make it, and prints the text a model
//! gets back for a bad call.
//!
//! Run with `cargo run --example orders`.

use std::sync::Arc;

use ai_tool::prelude::*;
use serde_json::json;

/// The service you already have.
pub struct Orders {
    shop: String,
}

#[ai_tools]
impl Orders {
    /// Says where an order is, given its number (such as A-1042).
    #[ai_tool(read_only)]
    fn order_status(&self, order: String) -> Result<String, String> {
        match order.as_str() {
            "A-1042" => Ok(format!("{order}: shipped from {} on 2026-05-02", self.shop)),
            _ => Err(format!("no order {order} at {}", self.shop)),
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let orders = Orders {
        shop: "Lyon".into(),
    };
    let exec = Executor::builder().service(Arc::new(orders)).build()?;
    // What a model is shown, in its API's format (here OpenAI's Chat Completions).
    let declared = exec.declarations(Format::OpenAiChat, &DeclareOptions::default());
    println!("{}", declared.tools);
    // A call as a model makes it: checked against the schema, then run.
    let call = exec.execute("order_status", json!({ "order": "A-1042" }));
    println!("{}", call.await?.to_text());
    // A bad call, and the text the model reads to fix it.
    let bad = exec.execute("order_status", json!({ "order_id": 1042 }));
    println!("{}", bad.await.unwrap_err().to_model_text());
    Ok(())
}
