//! The executor's builder and its calls: a service's tools, a value tools reach through their
//! context, a dynamic tool, a catalog file and the protection defaults.
//!
//! Run with `cargo run --example executor`.

use std::sync::Arc;
use std::time::Duration;

use ai_tool::prelude::*;
use serde_json::json;

/// A stand-in for a database pool, handed to tools through their context.
pub struct Pool {
    rows: Vec<String>,
}

/// A service whose methods become tools.
pub struct Notes;

#[ai_tools]
impl Notes {
    /// Counts the notes.
    #[ai_tool(read_only)]
    fn count(&self, ctx: &ToolContext) -> Result<usize, String> {
        let pool = ctx.service::<Pool>().ok_or("no pool was provided")?;
        Ok(pool.rows.len())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("ai-tool-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("tools.jsonl"),
        r#"{"name":"weather.get","description":"Gets the weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}"#,
    )?;
    let db_pool = Pool {
        rows: vec!["buy milk".into(), "call Ada".into()],
    };
    let schema = json!({
        "type": "object",
        "properties": { "text": { "type": "string" } },
        "required": ["text"]
    });

    let echo = DynamicTool::new("echo", "Echoes", schema, |args, _ctx| async move {
        Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default()))
    });

    let exec = Executor::builder()
        .service(Arc::new(Notes)) // methods of this type become tools
        .provide(Arc::new(db_pool)) // reachable from tools as ctx.service::<Pool>()
        .tool(echo) // a tool defined at run time
        .catalog_file(dir.join("tools.jsonl")) // declared tools: listed and validated
        .default_timeout(Duration::from_secs(30)) // sync tools too: on the blocking pool
        .max_blocking_calls(64) // the default: sync calls holding a blocking thread at once
        .max_argument_bytes(1 << 20) // the default: 1 MiB
        .max_argument_depth(32) // arrays and objects nest fewer than 32 levels (default 128)
        .require_all_services() // a tool whose service is missing is a build error
        .build()?;

    let out = exec.execute("count", json!({})).await?; // or JSON text: &str, String, &String
    println!("count: {}", out.to_text());
    let token = CancellationToken::new();
    let options = CallOptions::default()
        .with_call_id("call_1")
        .with_cancellation(token);
    let out = exec
        .execute_with("echo", r#"{"text":"hi"}"#, &options)
        .await?;
    println!("echo: {}", out.to_text());
    exec.validate("weather.get", json!({ "city": "Lyon" }))?; // checks without running

    let err = exec.validate("weather.get", json!({})).unwrap_err();
    println!("a bad call: {err}");
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
