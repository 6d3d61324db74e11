//! [`McpServer`]: an [`Executor`] as an MCP server, implementing rmcp's `ServerHandler` by hand.

use std::sync::{Arc, OnceLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;
use tokio::sync::mpsc;
use tool_core::{ToolError, ToolErrorKind};
use tool_runtime::{CallOptions, Executor, Progress, ProgressSink};

use crate::convert::{result_from_output, tool_from_spec};
use crate::McpError;

/// How many tools one `tools/list` page holds. A client following `nextCursor` gets the rest.
pub const TOOLS_PER_PAGE: usize = 500;

/// An [`Executor`] served over MCP: `tools/list` from a list built once, `tools/call` through
/// the executor (validation, time limits, panic isolation, cancellation).
///
/// Cheap to clone: every session of an HTTP server shares one.
#[derive(Clone)]
pub struct McpServer {
    exec: Executor,
    tools: Arc<[Tool]>,
    info: Implementation,
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
        let mut options = CallOptions::default()
            .with_call_id(&id)
            .with_cancellation(context.ct);
        if let Some(token) = token {
            options = options.with_progress(progress_sink(context.peer, token));
        }
        let name: &str = &request.name;
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

/// Sends a call's progress reports as `notifications/progress`, in order, from a task of
/// their own (started by the first report, as most tools report nothing): the tool's
/// `ctx.progress(..)` only queues them. The task ends with the call.
fn progress_sink(peer: Peer<RoleServer>, token: ProgressToken) -> ProgressSink {
    let queue = OnceLock::<mpsc::UnboundedSender<ProgressNotificationParam>>::new();
    Arc::new(move |p: Progress<'_>| {
        let sender = queue.get_or_init(|| {
            let (sender, mut queue) = mpsc::unbounded_channel::<ProgressNotificationParam>();
            let peer = peer.clone();
            tokio::spawn(async move {
                while let Some(update) = queue.recv().await {
                    if peer.notify_progress(update).await.is_err() {
                        break;
                    }
                }
            });
            sender
        });
        let mut update = ProgressNotificationParam::new(token.clone(), p.done);
        update.total = p.total;
        update.message = p.message.map(str::to_owned);
        let _ = sender.send(update);
    })
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(self.info.clone())
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
