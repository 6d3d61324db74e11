//! The client the official MCP conformance suite (`@modelcontextprotocol/conformance`) runs
//! for its client scenarios: this framework's importer (`McpTools`), used as a user would.
//! The suite gives the server's URL as the last argument and the scenario in
//! `MCP_CONFORMANCE_SCENARIO`, as it does for the SDKs' own conformance clients.
//!
//! ```text
//! bash scripts/conformance.sh     # runs every scenario against this and the server example
//! ```
//!
//! Each scenario: connect (asking for protocol 2025-11-25, the version the suite speaks, and
//! passing the server's questions on to the caller), list the tools, call each with the
//! arguments its scenario expects, answering any question with its defaults, and exit 0; any
//! error exits 1 with the error on stderr. The `auth/*` scenarios connect with OAuth
//! (`McpTools::connect_http_oauth`): the suite's authorization server grants without a login
//! page, so the authorization URL is followed to its redirect (`FollowRedirect`); a client
//! registered beforehand comes in `MCP_CONFORMANCE_CONTEXT` (`client_id`, `client_secret`), and
//! the client's metadata document is at the URL the suite expects.

use std::sync::Arc;

use ai_tool::mcp::rmcp::model::ProtocolVersion;
use ai_tool::mcp::{FollowRedirect, ImportLimits, McpBuilderExt, McpTools, OAuthOptions};
use ai_tool::prelude::*;
use ai_tool::{Elicitation, Elicited, Elicitor};
use serde_json::{json, Map, Value};

/// The arguments to call a scenario's tool with: `add_numbers` takes two numbers, the others
/// nothing.
fn arguments(tool: &str) -> Value {
    match tool {
        "add_numbers" => json!({ "a": 2, "b": 3 }),
        _ => json!({}),
    }
}

/// The user of this client: accepts every question with the defaults its schema gives, as a
/// form shown pre-filled and submitted unchanged (SEP-1034).
fn user() -> Elicitor {
    Arc::new(|question: Elicitation| {
        let mut answer = Map::new();
        let properties = question.schema.get("properties").and_then(Value::as_object);
        for (name, property) in properties.into_iter().flatten() {
            if let Some(default) = property.get("default") {
                answer.insert(name.clone(), default.clone());
            }
        }
        Box::pin(async move { Ok(Elicited::Accepted(Value::Object(answer))) })
    })
}

/// How the `auth/*` scenarios authorize: what the suite's authorization server expects of a
/// client (its redirect, its metadata document's URL, a client registered beforehand when the
/// scenario gives one).
fn oauth() -> Result<OAuthOptions, Box<dyn std::error::Error>> {
    let mut options = OAuthOptions::new(FollowRedirect::new("http://localhost:3000/callback"))
        .with_client_name("ai-tool conformance client")
        .with_client_metadata_url("https://conformance-test.local/client-metadata.json");
    if let Ok(context) = std::env::var("MCP_CONFORMANCE_CONTEXT") {
        let context: Value = serde_json::from_str(&context)?;
        if let Some(id) = context["client_id"].as_str() {
            let secret = context["client_secret"].as_str().map(str::to_owned);
            options = options.with_preregistered_client(id, secret);
        }
    }
    Ok(options)
}

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("conformance client: {e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .next_back()
        .filter(|arg| arg.starts_with("http"))
        .ok_or("give the server's URL as the last argument")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let limits = ImportLimits::default()
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
        .with_forwarded_elicitation();
    let tools = if scenario.starts_with("auth/") {
        McpTools::connect_http_oauth(&url, oauth()?, limits).await?
    } else {
        McpTools::connect_http_with(&url, &[], limits).await?
    };
    eprintln!(
        "{scenario}: connected to {url}, protocol {}",
        tools.protocol_version().unwrap_or_default()
    );
    let exec = Executor::builder()
        .registered_tools(false)
        .mcp(&tools)
        .build()?;
    for tool in tools.listed().iter() {
        let name = format!("{}.{}", tools.namespace(), tool.name);
        let options = CallOptions::default().with_elicitor(user());
        let output = exec
            .execute_with(&name, arguments(&tool.name), &options)
            .await?;
        eprintln!("{name}: {}", output.to_text());
    }
    Ok(())
}
