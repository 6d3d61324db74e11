//! The demo service, end to end through the macros and the executor: one test binary,
//! one file per concern, all sharing the service defined here.

#[path = "../common/mod.rs"]
mod common;
mod conversion;
mod metadata;
mod schema;
mod validation;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ai_tool::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use common::fixtures::{complex_ok, Category, ComplexInput};

pub struct DemoService {
    calls: AtomicUsize,
}

#[derive(Debug, Serialize)]
pub struct DemoDto {
    name: String,
    value: i32,
}

#[derive(Debug, Serialize)]
pub struct Summary {
    kind: Category,
    categories: usize,
}

#[derive(Debug, PartialEq)]
pub struct CheckError(String);

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "check refused: {}", self.0)
    }
}

#[derive(Debug, Serialize)]
pub struct OtherDto {
    id: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Search {
    /// What to look for.
    query: String,
    /// How many results.
    #[serde(default)]
    limit: Option<u32>,
}

#[ai_tools]
impl DemoService {
    /// Has input but no return.
    #[ai_tool(name = "do_something", description = "has input but no return")]
    async fn do_something(&self, #[arg(description = "this is an arg")] arg: String) {
        assert!(!arg.is_empty());
        self.calls.fetch_add(1, Ordering::SeqCst);
    }

    /// Gets a demo value.
    #[ai_tool(convert = Self::demo_to_text)]
    async fn get_demo(&self, name: String, value: i32) -> DemoDto {
        DemoDto { name, value }
    }

    fn demo_to_text(dto: DemoDto, ctx: &ToolContext) -> ToolOutput {
        ToolOutput::text(format!(
            "[{}] {} = {}",
            ctx.tool_name(),
            dto.name,
            dto.value
        ))
    }

    /// Checks a complex input.
    #[ai_tool]
    fn check(&self, input: ComplexInput) -> Result<Summary, CheckError> {
        if input.max_length_10 == "refuse" && input.nullable_but_required.is_none() {
            return Err(CheckError(input.min_length_5));
        }
        Ok(Summary {
            kind: input.kind,
            categories: input.categories.len(),
        })
    }

    /// Gets another value, converted by a converter defined elsewhere.
    #[ai_tool]
    fn get_other(&self, id: u32) -> OtherDto {
        OtherDto { id }
    }

    /// Greets someone.
    #[ai_tool(title = "Greeter", category = "social", purpose = "greeting", purpose = "politeness",
              selectable, keywords = ["hello", "welcome"], examples = ["say hi to Ann"],
              read_only, idempotent, destructive = false, open_world = false, requires_approval,
              strict = false)]
    fn greet(&self, name: &str, #[arg(default = 1)] times: u8, title: Option<String>) -> String {
        let who = match title {
            Some(title) => format!("{title} {name}"),
            None => name.to_owned(),
        };
        vec![format!("Hello, {who}!"); times.into()].join(" ")
    }

    /// Searches, with the arguments object being the struct itself.
    #[ai_tool]
    fn search(&self, #[arg(flatten)] search: Search, ctx: &ToolContext) -> ToolOutput {
        ToolOutput::json(json!({
            "query": search.query,
            "limit": search.limit,
            "call_id": ctx.call_id(),
            "answer": ctx.service::<Answer>().map(|a| a.0),
        }))
    }

    /// Returns a borrowed string.
    #[ai_tool]
    fn motto(&self) -> &str {
        "borrowed"
    }
}

pub struct Answer(u32);

#[ai_tool_converter("get_other")]
fn other_to_output(v: OtherDto, ctx: &ToolContext) -> ToolOutput {
    ToolOutput::text(format!("other #{} via {}", v.id, ctx.tool_name()))
}

#[ai_tool(description = "Adds two numbers")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn executor() -> Executor {
    Executor::builder()
        .service(Arc::new(DemoService {
            calls: AtomicUsize::new(0),
        }))
        .provide(Arc::new(Answer(42)))
        .build()
        .expect("the demo executor builds")
}

fn spec<'a>(exec: &'a Executor, name: &str) -> &'a ToolSpec {
    exec.spec(name)
        .unwrap_or_else(|| panic!("tool {name} is registered"))
}
