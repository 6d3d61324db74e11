//! The quickstart's service as an MCP server, over stdio or Streamable HTTP.
//!
//! ```text
//! cargo run --features mcp --example mcp_server -- stdio
//! cargo run --features mcp --example mcp_server -- http 127.0.0.1:8765   # http://127.0.0.1:8765/mcp
//! ```
//!
//! Set `MCP_TOKEN` to require `Authorization: Bearer $MCP_TOKEN` over HTTP. Besides the
//! quickstart's `check` and `availability` there is `book` (asks the user a name:
//! elicitation), `welcome` (asks the client's model: sampling), `report` (served as an MCP task
//! to a client that takes tasks), `wait` (runs until cancelled or for the milliseconds asked,
//! to try cancellation) and `text.upper`, a dynamic tool with a dotted name.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ai_tool::mcp::{serve_http_with, serve_stdio_with, HttpOptions, McpServer};
use ai_tool::prelude::*;
use ai_tool::SamplingRequest;
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
pub struct BookingRequest {
    #[schemars(length(max = 10))]
    code: String,
    kind: Category,
    #[schemars(length(min = 1, max = 5))]
    categories: Vec<Category>,
}

/// What `check` returns; `JsonSchema` makes its MCP `outputSchema`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Summary {
    kind: Category,
    categories: usize,
}

#[ai_tools]
impl BookingService {
    /// Checks a booking request.
    #[ai_tool(read_only, title = "Check a booking")]
    fn check(&self, input: BookingRequest) -> Result<Summary, String> {
        if input.code.is_empty() {
            return Err("the code must not be empty".into());
        }
        Ok(Summary {
            kind: input.kind,
            categories: input.categories.len(),
        })
    }

    /// Tells how many places are free on a day.
    #[ai_tool(read_only, idempotent)]
    async fn availability(&self, #[arg(description = "Day, as YYYY-MM-DD")] day: String) -> String {
        format!("{} on {day}: 3 free", self.city)
    }

    /// Books a place on a day, after asking the user for the name to book it under.
    #[ai_tool]
    async fn book(&self, day: String, ctx: &ToolContext) -> Result<String, ToolError> {
        let schema = json!({
            "type": "object",
            "properties": { "name": { "type": "string", "description": "The name to book under" } },
            "required": ["name"]
        });
        let question = format!("Who is the booking in {} on {day} for?", self.city);
        match ctx.elicit(&question, schema).await? {
            Elicited::Accepted(answer) => Ok(format!(
                "booked {day} in {} for {}",
                self.city,
                answer["name"].as_str().unwrap_or_default()
            )),
            Elicited::Declined | Elicited::Cancelled => Ok("not booked".into()),
        }
    }

    /// Writes a welcome for a guest, by the client's model.
    #[ai_tool]
    async fn welcome(&self, guest: String, ctx: &ToolContext) -> Result<String, ToolError> {
        let request = SamplingRequest::new(format!(
            "Write one line welcoming {guest} to {}.",
            self.city
        ))
        .with_system("You write short, warm hotel welcomes.")
        .with_max_tokens(60);
        Ok(ctx.sample(request).await?.text)
    }

    /// Prepares the month's report, which takes a while: served as an MCP task to a client
    /// that takes tasks, polled until it is ready.
    #[ai_tool(task, read_only)]
    async fn report(&self, month: String, millis: u64, ctx: &ToolContext) -> String {
        ctx.progress(1.0, Some(2.0), Some("adding up the bookings"));
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(millis)) => {
                format!("{}: the report for {month} is ready", self.city)
            }
            () = ctx.cancellation_token().cancelled() => "cancelled".to_owned(),
        }
    }

    /// Waits for the given milliseconds, or until the call is cancelled.
    #[ai_tool]
    async fn wait(&self, millis: u64, ctx: &ToolContext) -> String {
        ctx.progress(0.0, Some(millis as f64), Some("waiting"));
        ctx.log(LogLevel::Debug, "the clock starts");
        ctx.log(LogLevel::Info, &format!("waiting {millis} ms"));
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(millis)) => format!("waited {millis} ms"),
            () = ctx.cancellation_token().cancelled() => "cancelled".to_owned(),
        }
    }
}

fn executor() -> Result<Executor, ai_tool::BuildError> {
    let upper = DynamicTool::new(
        "text.upper",
        "Upper-cases text",
        json!({
            "type": "object",
            "properties": { "text": { "type": "string", "maxLength": 20 } },
            "required": ["text"]
        }),
        |args, _ctx| async move {
            Ok(ToolOutput::text(
                args["text"].as_str().unwrap_or_default().to_uppercase(),
            ))
        },
    );
    Executor::builder()
        .service(Arc::new(BookingService {
            city: "Lisbon".into(),
        }))
        .tool(upper)
        .build()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let server = McpServer::new(executor()?)?.with_server_info("booking", "0.1.0");
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["stdio"] => serve_stdio_with(server).await?,
        ["http", addr] => {
            let addr: SocketAddr = addr.parse()?;
            let listener = tokio::net::TcpListener::bind(addr).await?;
            let mut options = HttpOptions::default();
            if let Ok(token) = std::env::var("MCP_TOKEN") {
                options = options.with_bearer_token(token);
            }
            eprintln!("serving MCP on http://{}/mcp", listener.local_addr()?);
            serve_http_with(server, listener, options).await?;
        }
        _ => {
            eprintln!("usage: mcp_server stdio | mcp_server http 127.0.0.1:PORT");
            std::process::exit(2);
        }
    }
    Ok(())
}
