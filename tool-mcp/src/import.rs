//! [`McpTools`]: the tools of an MCP server, as dynamic tools of an executor.

use std::collections::HashMap;
use std::sync::Arc;

use axum::http::{HeaderName, HeaderValue};
use rmcp::model::{CallToolRequestParams, Tool};
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::ServiceExt;
use serde_json::Value;
use tokio::process::Command;
use tool_core::{ToolError, ToolSource};
use tool_runtime::{DynamicTool, ExecutorBuilder, ToolContext};

use crate::convert::{output_from_result, result_text, spec_from_tool};
use crate::McpError;

/// The tools of one MCP server, listed once at connection (every page), to register with
/// [`McpBuilderExt::mcp`] or [`McpTools::tools`].
///
/// Each becomes a dynamic tool named `NAMESPACE.TOOL` (the namespace is the server's own name
/// unless [`McpTools::with_namespace`] says otherwise) whose arguments the executor validates
/// against the server's schema before anything is sent. A call is forwarded with its
/// cancellation: when the executor's time limit or the caller's token stops it, the server
/// gets `notifications/cancelled`. A result with `isError` is `ToolError::Failed` with the
/// server's text.
///
/// The connection lives as long as this value or any tool made from it.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use tool_mcp::{McpBuilderExt, McpTools};
/// let mut command = tokio::process::Command::new("python3");
/// command.arg("server.py");
/// let tools = McpTools::connect_stdio(command).await?.with_namespace("files");
/// let exec = tool_runtime::Executor::builder().mcp(&tools).build()?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpTools {
    server: Arc<str>,
    namespace: String,
    peer: Peer<RoleClient>,
    connection: Arc<RunningService<RoleClient, ()>>,
    tools: Vec<Tool>,
}

impl McpTools {
    /// Starts `command` and speaks MCP on its stdin and stdout. The process is killed when
    /// the connection is dropped.
    pub async fn connect_stdio(command: Command) -> Result<Self, McpError> {
        let label = format!("{:?}", command.as_std().get_program());
        let transport = TokioChildProcess::new(command)
            .map_err(|e| McpError::io(format!("starting MCP server {label}"), e))?;
        Self::connect(label, transport).await
    }

    /// Connects to a Streamable HTTP server, such as `http://127.0.0.1:8000/mcp`.
    pub async fn connect_http(url: &str) -> Result<Self, McpError> {
        Self::connect_http_with_headers(url, &[]).await
    }

    /// [`McpTools::connect_http`] sending these headers with every request (an
    /// `Authorization: Bearer` token, for example).
    pub async fn connect_http_with_headers(
        url: &str,
        headers: &[(&str, &str)],
    ) -> Result<Self, McpError> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(url);
        let mut custom = HashMap::new();
        for (name, value) in headers {
            let bad = |e: &dyn std::fmt::Display| McpError::Request {
                server: url.to_owned(),
                message: format!("header `{name}`: {e}"),
            };
            if name.eq_ignore_ascii_case("authorization") {
                if let Some(token) = value.strip_prefix("Bearer ") {
                    config = config.auth_header(token);
                    continue;
                }
            }
            custom.insert(
                HeaderName::try_from(*name).map_err(|e| bad(&e))?,
                HeaderValue::try_from(*value).map_err(|e| bad(&e))?,
            );
        }
        let transport = StreamableHttpClientTransport::from_config(config.custom_headers(custom));
        Self::connect(url.to_owned(), transport).await
    }

    /// Connects over any rmcp transport; `server` names it in errors.
    pub async fn connect<T, E, A>(server: impl Into<String>, transport: T) -> Result<Self, McpError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let server: Arc<str> = server.into().into();
        let connection = ().serve(transport).await.map_err(|e| McpError::Handshake {
            peer: format!("MCP server {server}"),
            message: e.to_string(),
        })?;
        let peer = connection.peer().clone();
        let tools = peer.list_all_tools().await.map_err(|e| McpError::Request {
            server: server.to_string(),
            message: format!("tools/list failed: {e}"),
        })?;
        let namespace = peer
            .peer_info()
            .and_then(|info| info.server_info.as_ref().map(|i| namespace_from(&i.name)))
            .unwrap_or_else(|| "mcp".to_owned());
        Ok(McpTools {
            server,
            namespace,
            peer,
            connection: Arc::new(connection),
            tools,
        })
    }

    /// Names the tools `namespace.TOOL` rather than after the server.
    pub fn with_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// The namespace of the tools.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The server's tools, as it listed them.
    pub fn listed(&self) -> &[Tool] {
        &self.tools
    }

    /// Every tool of the server as a dynamic tool, named `namespace.tool`.
    pub fn tools(&self) -> Vec<DynamicTool> {
        self.tools.iter().map(|tool| self.tool(tool)).collect()
    }

    fn tool(&self, tool: &Tool) -> DynamicTool {
        let spec = spec_from_tool(format!("{}.{}", self.namespace, tool.name), tool);
        let description = if spec.description.trim().is_empty() {
            format!("Tool `{}` of the MCP server {}", tool.name, self.server)
        } else {
            spec.description.clone()
        };
        let remote = Remote {
            server: self.server.clone(),
            name: tool.name.to_string(),
            peer: self.peer.clone(),
            _connection: self.connection.clone(),
        };
        let remote = Arc::new(remote);
        let mut metadata = spec.metadata;
        metadata.source = Some(ToolSource::Dynamic);
        let mut dynamic =
            DynamicTool::new(spec.name, description, spec.parameters, move |args, ctx| {
                let remote = remote.clone();
                async move { remote.call(args, ctx).await }
            })
            .with_metadata(metadata);
        if let Some(output) = spec.output_schema {
            dynamic = dynamic.with_output_schema(output);
        }
        dynamic
    }
}

/// One tool of a server, as its calls need it.
struct Remote {
    server: Arc<str>,
    name: String,
    peer: Peer<RoleClient>,
    _connection: Arc<RunningService<RoleClient, ()>>,
}

impl Remote {
    /// Forwards a call. Dropping this future (time limit, cancellation) sends the server
    /// `notifications/cancelled`.
    async fn call(&self, args: Value, ctx: ToolContext<'static>) -> Result<ToolOutput, ToolError> {
        let mut params = CallToolRequestParams::new(self.name.clone());
        params.arguments = match args {
            Value::Object(map) => Some(map),
            _ => None,
        };
        let token = ctx.cancellation_token().clone();
        let failed = |message: String| ToolError::Failed {
            tool: ctx.tool_name().to_owned(),
            message,
            error: None,
            source: None,
        };
        tokio::select! {
            result = self.peer.call_tool(params) => match result {
                Ok(result) if result.is_error == Some(true) => Err(failed(result_text(&result))),
                Ok(result) => Ok(output_from_result(result)),
                Err(e) => Err(failed(format!("MCP server {}: {e}", self.server))),
            },
            () = token.cancelled() => Err(ToolError::Cancelled { tool: ctx.tool_name().to_owned() }),
        }
    }
}

use tool_core::ToolOutput;

/// `.mcp(&tools)` on the executor's builder.
pub trait McpBuilderExt {
    /// Registers every tool of an MCP server, named `namespace.tool`.
    fn mcp(self, tools: &McpTools) -> Self;
}

impl McpBuilderExt for ExecutorBuilder {
    fn mcp(self, tools: &McpTools) -> Self {
        self.tools(tools.tools())
    }
}

/// A server's name as a namespace: the characters MCP names take, others as `_`.
fn namespace_from(name: &str) -> String {
    let ns: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if ns.is_empty() {
        "mcp".to_owned()
    } else {
        ns
    }
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools")
            .field("server", &self.server)
            .field("namespace", &self.namespace)
            .field("tools", &self.tools.len())
            .finish()
    }
}
