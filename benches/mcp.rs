//! MCP in-process (a duplex pipe, rmcp's client): the `tools/call` round trip of the same
//! two-field tool served by our `McpServer` (which validates the arguments against the schema)
//! and by an rmcp `#[tool_router]` server (which deserializes them, without validating), and a
//! whole `tools/list` of 1,000 tools (two pages) from our server's cached list.
//!
//! `cargo bench --features mcp --bench mcp`

use std::sync::Arc;

use ai_tool::mcp::rmcp::model::{CallToolRequestParams, ServerCapabilities, ServerConfig};
use ai_tool::mcp::rmcp::service::{RoleClient, RunningService};
use ai_tool::mcp::rmcp::{ServerHandler, ServiceExt};
use ai_tool::mcp::McpServer;
use ai_tool::prelude::*;
use criterion::{criterion_group, criterion_main, Criterion};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_handler, tool_router};
use serde_json::json;
use tokio::runtime::Runtime;

pub struct Calc;

#[ai_tools]
impl Calc {
    /// Adds two numbers.
    #[ai_tool]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct AddRequest {
    a: i64,
    b: i64,
}

#[derive(Clone)]
pub struct RmcpCalc {
    #[expect(dead_code, reason = "read by the code #[tool_handler] generates")]
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl RmcpCalc {
    #[tool(description = "Adds two numbers.")]
    fn add(&self, Parameters(AddRequest { a, b }): Parameters<AddRequest>) -> String {
        (a + b).to_string()
    }
}

#[tool_handler]
impl ServerHandler for RmcpCalc {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// A client connected through a pipe to `server`, served on the runtime.
fn connect<S: ServerHandler>(rt: &Runtime, server: S) -> RunningService<RoleClient, ()> {
    rt.block_on(async {
        let (server_end, client_end) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_end).await {
                let _ = running.waiting().await;
            }
        });
        ().serve(client_end).await.expect("handshake")
    })
}

fn add_call() -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("add");
    params.arguments = json!({ "a": 2, "b": 3 }).as_object().cloned();
    params
}

fn round_trip(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let exec = Executor::builder()
        .service(Arc::new(Calc))
        .build()
        .unwrap();
    let ours = connect(&rt, McpServer::new(exec).unwrap());
    let theirs = connect(
        &rt,
        RmcpCalc {
            tool_router: RmcpCalc::tool_router(),
        },
    );
    // Both answer the same.
    for client in [&ours, &theirs] {
        let result = rt.block_on(client.call_tool(add_call())).unwrap();
        assert_eq!(serde_json::to_value(&result.content).unwrap()[0]["text"], "5");
    }
    let mut group = c.benchmark_group("mcp tools/call round trip");
    group.bench_function("ai-tool McpServer (validates)", |b| {
        b.iter(|| rt.block_on(ours.call_tool(add_call())).unwrap())
    });
    group.bench_function("rmcp #[tool_router]", |b| {
        b.iter(|| rt.block_on(theirs.call_tool(add_call())).unwrap())
    });
    group.finish();

    let tools = (0..1000).map(|i| {
        DynamicTool::new(
            format!("tool_{i:04}"),
            "A tool among a thousand",
            json!({ "type": "object", "properties": { "q": { "type": "string" } } }),
            |_, _| async { Ok(ToolOutput::empty()) },
        )
    });
    let exec = Executor::builder()
        .registered_tools(false)
        .tools(tools)
        .build()
        .unwrap();
    let many = connect(&rt, McpServer::new(exec).unwrap());
    assert_eq!(rt.block_on(many.list_all_tools()).unwrap().len(), 1000);
    c.bench_function("mcp tools/list, 1,000 tools (every page)", |b| {
        b.iter(|| rt.block_on(many.list_all_tools()).unwrap())
    });
}

criterion_group!(benches, round_trip);
criterion_main!(benches);
