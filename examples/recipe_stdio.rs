//! Recipe: the tools of a service served over MCP on stdio, for Claude Desktop or any MCP
//! client that starts its servers (docs/recipes/claude-desktop.md). The service is the one of
//! docs/recipes/agent-loop.md.
//!
//! Build with `cargo build --release --features mcp --example recipe_stdio`, then give Claude
//! Desktop the path of `target/release/examples/recipe_stdio`.

use std::sync::Arc;

use ai_tool::mcp::serve_stdio;
use ai_tool::prelude::*;
use serde::Serialize;

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

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Standard output carries the protocol alone: whatever the program says goes to stderr.
    eprintln!("Lyon Bikes' tools, served over MCP on stdio");
    let shop = Shop {
        name: "Lyon Bikes".into(),
    };
    let exec = Executor::builder()
        .service(Arc::new(shop))
        .no_free_tools()
        .build()?;
    serve_stdio(exec).await?;
    Ok(())
}
