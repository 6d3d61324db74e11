//! Tool retrieval: the few tools that fit a user's message, lexically (BM25, no model) and by
//! hybrid search with local embeddings (all-MiniLM-L6-v2 run by candle).
//!
//! Run with `bash scripts/install-model.sh && cargo run --features embed-candle --example retrieval`.

use std::path::Path;
use std::sync::Arc;

use ai_tool::prelude::*;
use ai_tool::retrieval::{candle::MiniLm, InMemoryStore, RetrieveOptions, Retriever};

/// Travel desk.
pub struct Travel;

#[ai_tools]
impl Travel {
    /// Gets the current weather of a city.
    #[ai_tool(selectable)]
    fn get_weather(&self, city: String) -> String {
        format!("{city}: sunny")
    }

    /// Books a flight to a destination.
    #[ai_tool(selectable, keywords = ["plane", "trip"])]
    fn book_flight(&self, destination: String) -> String {
        format!("booked: {destination}")
    }

    /// Converts an amount between currencies.
    #[ai_tool(selectable)]
    fn convert_currency(&self, amount: f64, from: String, to: String) -> String {
        format!("{amount} {from} in {to}")
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let exec = Executor::builder().service(Arc::new(Travel)).build()?;

    let lexical = Retriever::lexical(exec.tools()); // BM25: no model needed
    let model = Arc::new(MiniLm::load(Path::new("models/all-MiniLM-L6-v2"))?); // feature embed-candle
    let hybrid = Retriever::hybrid(exec.tools(), model, Arc::new(InMemoryStore::new())).await?;
    let options = RetrieveOptions {
        match_count: 2,
        ..Default::default()
    };
    let found = hybrid
        .retrieve("[get_weather] and book me a flight to Rome", &options)
        .await?; // Vec<Retrieved { name, score, reason }>

    for tool in &found {
        println!("hybrid: {} {:.3} {:?}", tool.name, tool.score, tool.reason);
    }
    for tool in lexical.retrieve("change euros to yen", &options).await? {
        println!("bm25: {} {:.3}", tool.name, tool.score);
    }
    Ok(())
}
