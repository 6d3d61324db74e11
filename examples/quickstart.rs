//! The quickstart: a service's methods become tools; list them, call one, see both kinds of
//! converter, and see the error a model gets for a bad call.
//!
//! Run with `cargo run --example quickstart`.

use std::sync::Arc;

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
pub struct Availability {
    city: String,
    free: u32,
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
    #[ai_tool(read_only, keywords = ["booking", "reservation"])]
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
    #[ai_tool(convert = Self::availability_text)]
    async fn availability(
        &self,
        #[arg(description = "Day, as YYYY-MM-DD")] day: String,
    ) -> Availability {
        Availability {
            city: format!("{} on {day}", self.city),
            free: 3,
        }
    }

    fn availability_text(a: Availability, ctx: &ToolContext) -> ToolOutput {
        ToolOutput::text(format!("{}: {} free ({})", a.city, a.free, ctx.tool_name()))
    }

    /// Cancels a booking.
    #[ai_tool(destructive, idempotent)]
    fn cancel(&self, booking_id: u64) -> Availability {
        Availability {
            city: self.city.clone(),
            free: (booking_id % 7) as u32,
        }
    }
}

// A converter written elsewhere, found by the tool's name.
#[ai_tool_converter("cancel")]
fn cancel_text(a: Availability) -> ToolOutput {
    ToolOutput::text(format!("Cancelled. {} now has {} free.", a.city, a.free))
}

/// Adds two numbers.
#[ai_tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let exec = Executor::builder()
        .service(Arc::new(BookingService {
            city: "Lyon".into(),
        }))
        .build()?;

    println!("== tools");
    for spec in exec.tools() {
        println!("{}: {}", spec.name, spec.description);
    }
    println!("\n== the schema of `check`, as the model sees it and as it is enforced");
    println!(
        "{}",
        serde_json::to_string_pretty(&exec.spec("check").expect("registered").parameters)?
    );

    println!("\n== a successful call");
    let args = json!({ "input": {
        "nullable_but_required": null, "max_length_10": "LY-1", "min_length_5": "ROOM-42",
        "kind": "Room", "categories": ["Room", "Bike"]
    }});
    println!("{}", exec.execute("check", args).await?.to_text());
    let out = exec.execute("add", json!({ "a": 2, "b": 40 })).await?; // or JSON text
    assert_eq!(out.to_text(), "42");
    println!("{}", out.to_text());

    println!("\n== converters: beside the method, and defined elsewhere");
    println!(
        "{}",
        exec.execute("availability", json!({ "day": "2026-12-01" }))
            .await?
            .to_text()
    );
    println!(
        "{}",
        exec.execute("cancel", json!({ "booking_id": 12 }))
            .await?
            .to_text()
    );

    println!("\n== a bad call, and the text the model gets back");
    let bad = json!({ "input": {
        "max_length_10": "abcdefghijkl", "min_length_5": "abc", "kind": "Boat", "categories": ["Room"]
    }});
    match exec.execute("check", bad).await {
        Ok(_) => unreachable!("the arguments break the schema"),
        Err(e) => println!("{}", e.to_model_text()),
    }
    Ok(())
}
