//! The server the official MCP conformance suite (`@modelcontextprotocol/conformance`) is run
//! against: the tools its server scenarios call, written as a user would, with `#[ai_tool]`
//! methods and a hand-written tool, served over Streamable HTTP on loopback.
//!
//! ```text
//! cargo run --features mcp --example conformance_server -- 127.0.0.1:8766
//! bash scripts/conformance.sh     # builds this, runs every scenario, prints the table
//! ```
//!
//! The scenarios' tools that need the server to ask the client mid-call (sampling,
//! elicitation) are not here yet: the suite reports them as failures, listed in
//! `tests/mcp/conformance-baseline.yml` (docs/mcp.md, "Conformance").

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ai_tool::mcp::{serve_http_with, HttpOptions, McpServer};
use ai_tool::prelude::*;
use ai_tool::{Content, ResourceContents};
use serde_json::json;

/// A 1×1 transparent PNG.
const PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// A WAV file's header with no samples: 8 kHz, mono, 8-bit.
const EMPTY_WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

/// The tools of the suite's scenarios.
pub struct ConformanceTools;

#[ai_tools]
impl ConformanceTools {
    /// Returns a simple text response.
    #[ai_tool]
    fn test_simple_text(&self) -> &'static str {
        "This is a simple text response for testing."
    }

    /// Returns an image.
    #[ai_tool]
    fn test_image_content(&self) -> ToolOutput {
        ToolOutput::empty().with_content(Content::image(PIXEL_PNG, "image/png"))
    }

    /// Returns audio.
    #[ai_tool]
    fn test_audio_content(&self) -> ToolOutput {
        ToolOutput::empty().with_content(Content::audio(EMPTY_WAV, "audio/wav"))
    }

    /// Returns an embedded resource.
    #[ai_tool]
    fn test_embedded_resource(&self) -> ToolOutput {
        ToolOutput::empty().with_content(Content::text_resource(
            "test://embedded-resource",
            "This is an embedded resource content.",
        ))
    }

    /// Returns text, an image and a resource.
    #[ai_tool]
    fn test_multiple_content_types(&self) -> ToolOutput {
        ToolOutput::text("Multiple content types test:")
            .with_content(Content::image(PIXEL_PNG, "image/png"))
            .with_content(Content::Resource {
                uri: "test://mixed-content-resource".into(),
                mime_type: Some("application/json".into()),
                contents: ResourceContents::Text(r#"{"test":"data","value":123}"#.into()),
            })
    }

    /// Logs three messages while it runs.
    #[ai_tool]
    async fn test_tool_with_logging(&self, ctx: &ToolContext) -> &'static str {
        for message in [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ] {
            ctx.log(LogLevel::Info, message);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        "Logging test completed"
    }

    /// Reports its progress three times.
    #[ai_tool]
    async fn test_tool_with_progress(&self, ctx: &ToolContext) -> &'static str {
        for done in [0.0, 50.0, 100.0] {
            ctx.progress(done, Some(100.0), None);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        "Progress test completed"
    }

    /// Fails, as a result the model reads.
    #[ai_tool]
    fn test_error_handling(&self) -> Result<String, String> {
        Err("This tool intentionally returns an error for testing".into())
    }
}

/// A tool whose schema uses JSON Schema 2020-12's `$schema`, `$defs` and a `$ref`, written by
/// hand.
fn json_schema_2020_12_tool() -> DynamicTool {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": { "street": { "type": "string" }, "city": { "type": "string" } }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" }
        },
        "additionalProperties": false
    });
    DynamicTool::new(
        "json_schema_2020_12_tool",
        "Takes a name and an address, described with JSON Schema 2020-12.",
        schema,
        |args, _| async move { Ok(ToolOutput::text(format!("received {args}"))) },
    )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr: SocketAddr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8766".into())
        .parse()?;
    let exec = Executor::builder()
        .service(Arc::new(ConformanceTools))
        .tool(json_schema_2020_12_tool())
        .build()?;
    let server = McpServer::new(exec)?.with_server_info("ai-tool-conformance", "1.0.0");
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("serving http://{}/mcp", listener.local_addr()?);
    serve_http_with(server, listener, HttpOptions::default()).await?;
    Ok(())
}
