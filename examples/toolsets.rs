//! Toolsets: an executor's tools and tools from elsewhere, combined, filtered, renamed and
//! wrapped in layers (a per-user cache, a rate limit, a call log), then served as one executor.
//!
//! Run with `cargo run --example toolsets`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ai_tool::prelude::*;
use ai_tool::toolset::{CallLog, RateLimit, RateLimited, ResultCache};
use serde_json::json;

/// How many times the service really looked something up.
static LOOKUPS: AtomicUsize = AtomicUsize::new(0);

/// A support desk's tools.
pub struct Desk;

#[ai_tools]
impl Desk {
    /// Looks up a ticket by its number.
    #[ai_tool(read_only)]
    fn lookup(&self, ticket: u32) -> String {
        LOOKUPS.fetch_add(1, Ordering::SeqCst);
        format!("ticket {ticket}: printer on fire")
    }

    /// Deletes every ticket.
    #[ai_tool(destructive)]
    fn purge(&self) -> String {
        "all gone".into()
    }
}

/// Who is asking: the application puts it in each call's options.
struct UserId(String);

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let desk = Executor::builder().service(Arc::new(Desk)).build()?;
    // Tools from elsewhere: here one made at run time; an MCP server's are `mcp_tools.tools()`.
    let search = DynamicTool::new(
        "search",
        "Searches the wiki",
        json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}),
        |args, _ctx| async move { Ok(ToolOutput::text(format!("3 pages about {}", args["q"]))) },
    );

    let support = Toolset::of(&desk) // the desk's tools, each called through `desk`
        .without(["purge"])
        .with(Toolset::from_tools([search]).prefixed("wiki_"))
        .layer(ResultCache::per(Duration::from_secs(60), |ctx| {
            ctx.extension::<UserId>().map(|user| user.0.clone())
        }))
        .layer(RateLimit::new(3, Duration::from_secs(60)))
        .layer(CallLog)
        .into_executor()?; // names are checked here: a clash is a build error
    let names: Vec<&str> = support.tools().map(|spec| spec.name.as_str()).collect();
    println!("tools: {names:?}");

    let ada = CallOptions::default().with_extension(UserId("ada".into()));
    for _ in 0..2 {
        let out = support
            .execute_with("lookup", json!({"ticket": 7}), &ada)
            .await?;
        println!("lookup: {}", out.to_text());
    }
    println!("looked up {} time(s)", LOOKUPS.load(Ordering::SeqCst));

    let out = support
        .execute("wiki_search", json!({"q": "printers"}))
        .await?;
    println!("wiki_search: {}", out.to_text());
    let refused = support.execute("wiki_search", json!({"q": "fire"})).await;
    if let Err(error) = refused {
        let limit = error.downcast_ref::<RateLimited>().map(|r| r.calls);
        println!(
            "refused ({limit:?} calls a minute): {}",
            error.to_model_text()
        );
    }
    Ok(())
}
