//! The server the official MCP conformance suite (`@modelcontextprotocol/conformance`) is run
//! against: the tools its server scenarios call, written as a user would, with `#[ai_tool]`
//! methods and a hand-written tool, served over Streamable HTTP on loopback.
//!
//! ```text
//! cargo run --features mcp --example conformance_server -- 127.0.0.1:8766
//! bash scripts/conformance.sh     # builds this, runs every scenario, prints the table
//! ```
//!
//! The tools that ask the user mid-call use `ToolContext::elicit`; the one that asks the
//! client's model, `ToolContext::sample`. What the suite reports as failing is listed in
//! `tests/mcp/conformance-baseline.yml` (docs/mcp.md, "Conformance").

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ai_tool::mcp::{serve_http_with, HttpOptions, McpServer};
use ai_tool::prelude::*;
use ai_tool::{Content, ResourceContents, SamplingRequest};
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

    /// Asks the user for a username and an email.
    #[ai_tool]
    async fn test_elicitation(
        &self,
        message: String,
        ctx: &ToolContext,
    ) -> Result<String, ToolError> {
        let schema = json!({
            "type": "object",
            "properties": {
                "username": { "type": "string", "description": "The user's name" },
                "email": { "type": "string", "description": "The user's email address" }
            },
            "required": ["username", "email"]
        });
        let answer = ctx.elicit(&message, schema).await?;
        Ok(format!("User response: {}", said(&answer)))
    }

    /// Asks with a default for every kind of property (SEP-1034).
    #[ai_tool]
    async fn test_elicitation_sep1034_defaults(
        &self,
        ctx: &ToolContext,
    ) -> Result<String, ToolError> {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "description": "User name", "default": "John Doe" },
                "age": { "type": "integer", "description": "User age", "default": 30 },
                "score": { "type": "number", "description": "User score", "default": 95.5 },
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active"
                },
                "verified": { "type": "boolean", "description": "Verified", "default": true }
            }
        });
        let answer = ctx.elicit("Please review your details", schema).await?;
        Ok(format!("Elicitation completed: {}", said(&answer)))
    }

    /// Asks with every form of enumeration (SEP-1330).
    #[ai_tool]
    async fn test_elicitation_sep1330_enums(&self, ctx: &ToolContext) -> Result<String, ToolError> {
        let titled = |values: [(&str, &str); 3]| {
            values
                .iter()
                .map(|(value, title)| json!({ "const": value, "title": title }))
                .collect::<Vec<_>>()
        };
        let schema = json!({
            "type": "object",
            "properties": {
                "untitledSingle": { "type": "string", "enum": ["option1", "option2", "option3"] },
                "titledSingle": {
                    "type": "string",
                    "oneOf": titled([("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")])
                },
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"]
                },
                "untitledMulti": {
                    "type": "array",
                    "items": { "type": "string", "enum": ["option1", "option2", "option3"] }
                },
                "titledMulti": {
                    "type": "array",
                    "items": {
                        "anyOf": titled([("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")])
                    }
                }
            }
        });
        let answer = ctx.elicit("Choose your options", schema).await?;
        Ok(format!("Elicitation completed: {}", said(&answer)))
    }

    /// Asks the client's model.
    #[ai_tool]
    async fn test_sampling(&self, prompt: String, ctx: &ToolContext) -> Result<String, ToolError> {
        let answer = ctx
            .sample(SamplingRequest::new(prompt).with_max_tokens(100))
            .await?;
        Ok(format!("LLM response: {}", answer.text))
    }

    /// Fails, as a result the model reads.
    #[ai_tool]
    fn test_error_handling(&self) -> Result<String, String> {
        Err("This tool intentionally returns an error for testing".into())
    }
}

/// An answer, in words.
fn said(answer: &Elicited) -> String {
    match answer {
        Elicited::Accepted(content) => format!("action=accept, content={content}"),
        Elicited::Declined => "action=decline".into(),
        Elicited::Cancelled => "action=cancel".into(),
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
