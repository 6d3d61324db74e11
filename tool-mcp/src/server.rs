//! [`McpServer`]: an [`Executor`] as an MCP server, implementing rmcp's `ServerHandler` by hand.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;
use tool_core::{ToolError, ToolErrorKind};
use tool_runtime::{CallOptions, Executor};

use crate::convert::{result_from_output, tool_from_spec};
use crate::notify::{self, SessionLogLevel};
use crate::McpError;

/// How many tools one `tools/list` page holds. A client following `nextCursor` gets the rest.
pub const TOOLS_PER_PAGE: usize = 500;

/// An [`Executor`] served over MCP: `tools/list` from a list built once, `tools/call` through
/// the executor (validation, time limits, panic isolation, cancellation).
///
/// A tool's `ctx.log(..)` messages reach the client at or above the level it asked for: per
/// request (`_meta`, protocol 2026-07-28) or per session (`logging/setLevel`); none before it
/// asks.
///
/// Cheap to clone: the clones share the executor and the list. Each clone serves one session
/// (an HTTP server clones it per session), so the logging level set is the clone's own.
pub struct McpServer {
    exec: Executor,
    tools: Arc<[Tool]>,
    info: Implementation,
    log_level: Arc<SessionLogLevel>,
}

impl Clone for McpServer {
    fn clone(&self) -> Self {
        McpServer {
            exec: self.exec.clone(),
            tools: self.tools.clone(),
            info: self.info.clone(),
            log_level: Arc::default(),
        }
    }
}

impl McpServer {
    /// A server for every executable tool of `exec`, named after this crate.
    ///
    /// Fails when a tool's declaration is not a valid MCP tool (it always is for specs the
    /// executor accepted; the check is kept so that a bug shows as an error, not a bad list).
    pub fn new(exec: Executor) -> Result<Self, McpError> {
        let tools = exec
            .tools()
            .filter(|spec| exec.is_executable(&spec.name))
            .map(|spec| {
                tool_from_spec(spec).map_err(|e| McpError::Declaration {
                    tool: spec.name.clone(),
                    message: e.to_string(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(McpServer {
            exec,
            tools: tools.into(),
            info: Implementation::new("ai-tool", env!("CARGO_PKG_VERSION")),
            log_level: Arc::default(),
        })
    }

    /// The same server, introducing itself to clients as `name` `version`.
    pub fn with_server_info(mut self, name: &str, version: &str) -> Self {
        self.info = Implementation::new(name, version);
        self
    }

    /// The executor it serves.
    pub fn executor(&self) -> &Executor {
        &self.exec
    }

    /// The tools it lists.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// One page of the list, starting at the cursor (the index of its first tool).
    fn page(&self, cursor: Option<&str>) -> Result<ListToolsResult, ErrorData> {
        let tools = &self.tools;
        let start = match cursor {
            None => 0,
            Some(c) => c
                .parse::<usize>()
                .ok()
                .filter(|&i| i <= tools.len())
                .ok_or_else(|| ErrorData::invalid_params(format!("invalid cursor `{c}`"), None))?,
        };
        let end = tools.len().min(start + TOOLS_PER_PAGE);
        let mut page = ListToolsResult::with_all_items(tools[start..end].to_vec());
        if end < tools.len() {
            page.next_cursor = Some(end.to_string());
        }
        Ok(page)
    }

    /// Runs one call. Tool errors are results with `isError: true` and the text a model reads;
    /// only an unknown tool is a protocol error.
    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let id = context.id.to_string();
        let token = context
            .meta
            .get_progress_token()
            .or_else(|| request.meta.as_ref()?.get_progress_token());
        #[allow(deprecated)] // MCP logging, see `notify`
        let log_level = context
            .meta
            .log_level()
            .map(notify::log_level)
            .or_else(|| self.log_level.get());
        let name: &str = &request.name;
        let (progress, log) = notify::sinks(context.peer, token, log_level, name);
        let options = CallOptions {
            call_id: Some(id.into()),
            cancellation: Some(context.ct),
            progress,
            log,
        };
        match self.exec.execute_with(name, args, &options).await {
            Ok(output) => Ok(result_from_output(output)),
            Err(e @ ToolError::UnknownTool { .. }) => {
                Err(ErrorData::invalid_params(e.to_model_text(), None))
            }
            Err(e) => {
                if e.kind() != ToolErrorKind::InvalidArguments {
                    tracing::debug!(tool = name, error = %e, "MCP tool call failed");
                }
                Ok(CallToolResult::error(vec![ContentBlock::text(
                    e.to_model_text(),
                )]))
            }
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                .build(),
        )
        .with_server_info(self.info.clone())
    }

    #[allow(deprecated)] // MCP logging, see `notify`
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_level.set(request.level);
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.page(request.as_ref().and_then(|r| r.cursor.as_deref()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context).await.map(Into::into)
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("tools", &self.tools.len())
            .field("info", &self.info)
            .finish()
    }
}
