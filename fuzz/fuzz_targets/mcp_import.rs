//! The import side of MCP: a hostile server whose `tools/list` pages (tools, schemas,
//! annotations, cursors) and `tools/call` results come from the input, imported by
//! `McpTools` over an in-process pipe, each tool called, and the imported tools served again
//! by an `McpServer` (a gateway). The input is JSON: `{"pages": [[tool, ..], ..], "cursors":
//! [..], "result": ..}` (a tool or result that rmcp cannot read is left out or answered as an
//! error). What must hold: no panic; the import ends within a bound, with tools or an error;
//! every call ends within the import's time limit with an output or an error; an imported
//! description is never longer than the cap (and its cut mark); the gateway lists what it
//! serves.
#![no_main]

use std::sync::Arc;
use std::time::Duration;

use ai_tool::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use ai_tool::mcp::rmcp::service::{RequestContext, RoleServer};
use ai_tool::mcp::rmcp::{ErrorData, ServerHandler, ServiceExt};
use ai_tool::mcp::{ImportLimits, McpServer, McpTools, HANDSHAKE_TIMEOUT};
use ai_tool::prelude::*;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const DESCRIPTION_CAP: usize = 256;

/// A server that says what the input says.
#[derive(Clone)]
struct Hostile(Arc<Value>);

impl Hostile {
    fn page(&self, at: usize) -> ListToolsResult {
        let pages = self.0.get("pages").and_then(Value::as_array);
        let tools: Vec<Tool> = pages
            .and_then(|p| p.get(at))
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| serde_json::from_value(t.clone()).ok())
                    .collect()
            })
            .unwrap_or_default();
        let mut page = ListToolsResult::with_all_items(tools);
        page.next_cursor = self
            .0
            .get("cursors")
            .and_then(Value::as_array)
            .and_then(|c| c.get(at))
            .and_then(Value::as_str)
            .map(str::to_owned);
        page
    }
}

impl ServerHandler for Hostile {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // A cursor is the index of the page it leads to, if it reads as one; else page 0.
        let at = request
            .and_then(|r| r.cursor)
            .and_then(|c| c.parse::<usize>().ok())
            .unwrap_or(0);
        Ok(self.page(at.min(64)))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match self.0.get("result").cloned() {
            Some(result) => serde_json::from_value::<CallToolResult>(result)
                .map(Into::into)
                .map_err(|e| ErrorData::invalid_params(e.to_string(), None)),
            None => Err(ErrorData::internal_error("no result", None)),
        }
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

async fn run(input: Value) {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let hostile = Hostile(Arc::new(input));
    let serving = tokio::spawn(async move {
        if let Ok(running) = hostile.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let limits = ImportLimits::default()
        .with_call_timeout(Duration::from_secs(2))
        .with_max_tools(500)
        .with_max_list_bytes(1 << 20)
        .with_max_description_bytes(DESCRIPTION_CAP);
    let imported = tokio::time::timeout(
        Duration::from_secs(10),
        McpTools::connect_with("hostile", client_end, HANDSHAKE_TIMEOUT, limits),
    )
    .await
    .expect("the import ended");
    let Ok(tools) = imported else {
        serving.abort();
        return;
    };
    let dynamic = tools.tools();
    for tool in &dynamic {
        let description = &tool.spec().description;
        assert!(
            description.len() <= DESCRIPTION_CAP + 64,
            "a description of {} bytes",
            description.len()
        );
        assert!(tool.spec().metadata.is_imported());
    }
    // Tools of one name, or a schema the executor refuses, refuse the build: an error, no panic.
    let Ok(exec) = Executor::builder()
        .registered_tools(false)
        .tools(dynamic)
        .build()
    else {
        serving.abort();
        return;
    };
    let names: Vec<String> = exec.tools().map(|s| s.name.clone()).collect();
    for name in names.iter().take(8) {
        let called = tokio::time::timeout(
            Duration::from_secs(10),
            exec.execute(name, serde_json::json!({})),
        )
        .await;
        assert!(called.is_ok(), "the call of {name} did not end");
    }
    // Served again: every imported tool is listed (none requires approval).
    if let Ok(gateway) = McpServer::new(exec) {
        assert_eq!(gateway.tools().len(), names.len());
    }
    drop(tools);
    serving.abort();
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    runtime().block_on(run(input));
});
