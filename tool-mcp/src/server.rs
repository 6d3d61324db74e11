//! [`McpServer`]: an [`Executor`] as an MCP server, implementing rmcp's `ServerHandler` by hand.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;
use tool_core::{ToolError, ToolErrorKind, ToolSpec};
use tool_retrieval::Retriever;
use tool_runtime::{CallOptions, Executor};

use crate::convert::{result_from_output, tool_from_spec};
use crate::notify::{self, SessionLogLevel};
use crate::search::{self, Found, SEARCH_TOOL};
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
/// (an HTTP server clones it per session): the logging level, and with
/// [`McpServer::with_search`] the tools found, are the clone's own.
pub struct McpServer {
    exec: Executor,
    tools: Arc<[Tool]>,
    info: Implementation,
    /// With `with_search`: the retriever over `tools`, and the `search_tools` tool.
    search: Option<Arc<(Retriever, Tool)>>,
    session: Arc<Session>,
}

/// What one session (one client) sets.
#[derive(Debug, Default)]
struct Session {
    log_level: SessionLogLevel,
    found: Found,
}

impl Clone for McpServer {
    fn clone(&self) -> Self {
        McpServer {
            exec: self.exec.clone(),
            tools: self.tools.clone(),
            info: self.info.clone(),
            search: self.search.clone(),
            session: Arc::default(),
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
            search: None,
            session: Arc::default(),
        })
    }

    /// The same server, introducing itself to clients as `name` `version`.
    pub fn with_server_info(mut self, name: &str, version: &str) -> Self {
        self.info = Implementation::new(name, version);
        self
    }

    /// The same server offering only a `search_tools` tool at first: each search (BM25 over
    /// the tools' names, descriptions and metadata) adds the tools it finds to the session's
    /// list, and the client is told with `notifications/tools/list_changed`. A tool not found
    /// yet cannot be called. For a client facing thousands of tools. Every tool is searched,
    /// `selectable` or not.
    ///
    /// Fails when a tool is already named `search_tools`.
    pub fn with_search(mut self) -> Result<Self, McpError> {
        if self.tools.iter().any(|t| t.name == SEARCH_TOOL) {
            return Err(McpError::Declaration {
                tool: SEARCH_TOOL.into(),
                message: "the name is taken by the search itself; rename the tool".into(),
            });
        }
        // Every tool is found by searching, whether or not it is marked `selectable`: the
        // retriever's "system tools" (always offered) would be every tool of a gateway.
        let searchable: Vec<ToolSpec> = self
            .exec
            .tools()
            .filter(|spec| self.exec.is_executable(&spec.name))
            .map(|spec| {
                let mut spec = spec.clone();
                spec.metadata.selectable = true;
                spec
            })
            .collect();
        let retriever = Retriever::lexical(&searchable);
        self.search = Some(Arc::new((retriever, search::search_tool())));
        Ok(self)
    }

    /// The executor it serves.
    pub fn executor(&self) -> &Executor {
        &self.exec
    }

    /// Every tool it serves (with [`McpServer::with_search`], a session lists `search_tools`
    /// and those it found).
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// One page of what this session lists, starting at the cursor (the index of its first
    /// tool).
    fn page(&self, cursor: Option<&str>) -> Result<ListToolsResult, ErrorData> {
        let offered;
        let tools: &[Tool] = match &self.search {
            None => &self.tools,
            Some(search) => {
                let found = self.session.found.indexes();
                offered = std::iter::once(search.1.clone())
                    .chain(found.into_iter().map(|i| self.tools[i].clone()))
                    .collect::<Vec<_>>();
                &offered
            }
        };
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

    /// With search on: runs `search_tools`, or refuses a tool the session has not found.
    /// `None` when the call goes on to the executor.
    async fn searched(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<CallToolResult, ErrorData>> {
        let search = self.search.as_ref()?;
        let name: &str = &request.name;
        if name == SEARCH_TOOL {
            let empty = Default::default();
            let args = request.arguments.as_ref().unwrap_or(&empty);
            let (result, changed) =
                search::search(&search.0, &self.tools, &self.session.found, args).await;
            if changed {
                let _ = context.peer.notify_tool_list_changed().await;
            }
            return Some(Ok(result));
        }
        let found = self
            .tools
            .iter()
            .position(|t| t.name == name)
            .is_some_and(|i| self.session.found.contains(i));
        (!found).then(|| {
            Err(ErrorData::invalid_params(
                format!("tool `{name}` is not offered: find the tools for your task with `{SEARCH_TOOL}` first"),
                None,
            ))
        })
    }

    /// Runs one call. Tool errors are results with `isError: true` and the text a model reads;
    /// only an unknown tool is a protocol error.
    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        if let Some(answer) = self.searched(&request, &context).await {
            return answer;
        }
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
            .or_else(|| self.session.log_level.get());
        let name: &str = &request.name;
        let (progress, log) = notify::sinks(context.peer, token, log_level, name);
        let options = CallOptions {
            call_id: Some(id.into()),
            cancellation: Some(context.ct),
            progress,
            log,
            ..CallOptions::default()
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
    #[allow(deprecated)] // MCP logging, see `notify`
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging();
        let capabilities = if self.search.is_some() {
            capabilities.enable_tool_list_changed().build()
        } else {
            capabilities.build()
        };
        ServerConfig::new(capabilities).with_server_info(self.info.clone())
    }

    #[allow(deprecated)] // MCP logging, see `notify`
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.session.log_level.set(request.level);
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
        match &self.search {
            Some(search) if name == SEARCH_TOOL => Some(search.1.clone()),
            _ => self.tools.iter().find(|t| t.name == name).cloned(),
        }
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
            .field("search", &self.search.is_some())
            .finish()
    }
}
