//! [`McpTools`]: the tools of an MCP server, as dynamic tools of an executor.

use std::collections::HashMap;
use std::sync::Arc;

use axum::http::{HeaderName, HeaderValue};
use rmcp::model::{ProtocolVersion, Tool};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, Peer, RoleClient, RunningService,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport};
use rmcp::ServiceExt;
use tokio::process::Command;
use tool_core::ToolSource;
use tool_runtime::{DynamicTool, ExecutorBuilder};

use crate::client::{list_every_tool, ClientState, ImportClient, ImportLimits};
use crate::convert::spec_from_tool;
use crate::frames::{FrameCap, MAX_FRAME_BYTES};
use crate::remote::Remote;
use crate::urls::{scrub_urls, shown_url};
use crate::McpError;

/// The tools of one MCP server, listed at connection (every page) and again whenever the
/// server sends `notifications/tools/list_changed`, to register with [`McpBuilderExt::mcp`] or
/// [`McpTools::tools`].
///
/// Each becomes a dynamic tool named `NAMESPACE.TOOL` (the namespace is the server's own name
/// unless [`McpTools::with_namespace`] says otherwise) whose arguments the executor validates
/// against the server's schema before anything is sent. A call is forwarded with its
/// cancellation: when the executor's time limit or the caller's token stops it, the server
/// gets `notifications/cancelled`. A result with `isError` is `ToolError::Failed` with the
/// server's text. When the caller asked for progress (`CallOptions::with_progress`), the
/// server's `notifications/progress` for the call reach the tool's context.
///
/// An executor holds the tools it was built with: [`RefreshingExecutor`](crate::RefreshingExecutor)
/// rebuilds one when a server's list changes.
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
    state: Arc<ClientState>,
    namespace: String,
    /// [`McpTools::declared_as_namespace`]: the group's description.
    group: Option<String>,
    /// [`McpTools::defer_loading`].
    deferred: bool,
    peer: Peer<RoleClient>,
    connection: Arc<RunningService<RoleClient, ImportClient>>,
}

/// How long a server may take to answer `initialize` when an import connects.
pub const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

impl McpTools {
    /// Starts `command` and speaks MCP on its stdin and stdout. The process is killed when
    /// the connection and every tool made from it are dropped. An answer larger than one
    /// message may be (16 MiB) fails its call with an error naming both sizes.
    pub async fn connect_stdio(command: Command) -> Result<Self, McpError> {
        Self::connect_stdio_within(command, HANDSHAKE_TIMEOUT).await
    }

    /// [`McpTools::connect_stdio`], waiting up to `limit` for the server to answer
    /// `initialize`: for a command that installs its server first (`npx -y`, `uvx`).
    pub async fn connect_stdio_within(
        command: Command,
        limit: std::time::Duration,
    ) -> Result<Self, McpError> {
        Self::connect_stdio_with(command, limit, ImportLimits::default()).await
    }

    /// [`McpTools::connect_stdio_within`] within other [`ImportLimits`].
    pub async fn connect_stdio_with(
        command: Command,
        handshake: std::time::Duration,
        limits: ImportLimits,
    ) -> Result<Self, McpError> {
        let label = format!("{:?}", command.as_std().get_program());
        // Spawned here rather than by rmcp's `TokioChildProcess`, so that the server's output
        // passes through `FrameCap` first: an answer past the size of a message is an error
        // for its request, not a line dropped while the request waits.
        let mut command = command;
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true);
        let starting = |e| McpError::io(format!("starting MCP server {label}"), e);
        let mut child = command.spawn().map_err(starting)?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(starting(std::io::Error::other("no pipe to the process")));
        };
        let transport = (FrameCap::new(stdout, MAX_FRAME_BYTES), stdin);
        let tools = Self::connect_with(label, transport, handshake, limits).await?;
        tools.state.keep_process(child);
        Ok(tools)
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
        Self::connect_http_with(url, headers, ImportLimits::default()).await
    }

    /// [`McpTools::connect_http_with_headers`] within other [`ImportLimits`].
    pub async fn connect_http_with(
        url: &str,
        headers: &[(&str, &str)],
        limits: ImportLimits,
    ) -> Result<Self, McpError> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(url);
        // What names the server in errors, logs and tool descriptions, which may reach a
        // gateway's clients and models: the URL without its credentials or query.
        let label = shown_url(url);
        let mut custom = HashMap::new();
        for (name, value) in headers {
            let bad = |e: &dyn std::fmt::Display| McpError::Request {
                server: label.clone(),
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
        Self::connect_with(label, transport, HANDSHAKE_TIMEOUT, limits)
            .await
            .map_err(scrubbed)
    }

    /// [`McpTools::connect_http_with`] authorizing with OAuth (feature `oauth`): a server that
    /// answers `401` (at the handshake, or later) or `403` for want of a scope is authorized
    /// as [`OAuthOptions`](crate::OAuthOptions) say (discovery from the server's challenge,
    /// a client given, described by its metadata document or registered, PKCE, the scopes
    /// asked for), and the request is made again, at most
    /// [`MAX_AUTHORIZATIONS_PER_REQUEST`](crate::MAX_AUTHORIZATIONS_PER_REQUEST) times. The
    /// tokens live as long as the import (refreshed by rmcp when they expire).
    #[cfg(feature = "oauth")]
    pub async fn connect_http_oauth(
        url: &str,
        oauth: crate::OAuthOptions,
        limits: ImportLimits,
    ) -> Result<Self, McpError> {
        let label = shown_url(url);
        let refused = |message: String| McpError::Authorization {
            server: label.clone(),
            message,
        };
        let (session, http) = crate::oauth::OAuthSession::new(url, oauth)
            .await
            .map_err(&refused)?;
        let state = Arc::new(ClientState::new(label.clone().into(), limits));
        state.set_oauth(Arc::clone(&session));
        for attempt in 0.. {
            let seen = session.generation();
            let config = StreamableHttpClientTransportConfig::with_uri(url);
            let transport = StreamableHttpClientTransport::with_client(http.clone(), config);
            match Self::connect_state(Arc::clone(&state), transport, HANDSHAKE_TIMEOUT).await {
                Ok(tools) => return Ok(tools),
                Err((_, Some(handshake)))
                    if attempt < crate::MAX_AUTHORIZATIONS_PER_REQUEST
                        && (handshake.auth_challenge().is_some()
                            || handshake.is_authorization_required()) =>
                {
                    session
                        .authorize(handshake.auth_challenge(), seen)
                        .await
                        .map_err(&refused)?;
                }
                Err((error, _)) => return Err(scrubbed(error)),
            }
        }
        unreachable!("the loop returns")
    }

    /// Connects over any rmcp transport; `server` names it in errors. A server that has not
    /// answered `initialize` within [`HANDSHAKE_TIMEOUT`] is [`McpError::Handshake`].
    pub async fn connect<T, E, A>(server: impl Into<String>, transport: T) -> Result<Self, McpError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        Self::connect_within(server, transport, HANDSHAKE_TIMEOUT).await
    }

    /// [`McpTools::connect`], waiting up to `limit` for the server to answer `initialize`:
    /// longer for one that installs itself when it starts (`npx -y`, `uvx`, a container
    /// image pulled).
    pub async fn connect_within<T, E, A>(
        server: impl Into<String>,
        transport: T,
        limit: std::time::Duration,
    ) -> Result<Self, McpError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        Self::connect_with(server, transport, limit, ImportLimits::default()).await
    }

    /// [`McpTools::connect_within`] within other [`ImportLimits`] (what the server's lists and
    /// calls may take).
    pub async fn connect_with<T, E, A>(
        server: impl Into<String>,
        transport: T,
        limit: std::time::Duration,
        limits: ImportLimits,
    ) -> Result<Self, McpError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let server: Arc<str> = server.into().into();
        let state = Arc::new(ClientState::new(server.clone(), limits));
        Self::connect_state(state, transport, limit)
            .await
            .map_err(|(error, _)| error)
    }

    /// Connects with `state`'s limits; a failed handshake keeps rmcp's error beside ours (it
    /// may hold the server's authorization challenge).
    async fn connect_state<T, E, A>(
        state: Arc<ClientState>,
        transport: T,
        limit: std::time::Duration,
    ) -> Result<Self, (McpError, Option<ClientInitializeError>)>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let server = state.server.clone();
        let handshake = |message: String| McpError::Handshake {
            peer: format!("MCP server {server}"),
            message,
        };
        // A server that never answers `initialize` is an error, not a wait without end. An
        // import that takes tasks asks for 2026-07-28 first, where they are defined.
        let client = ImportClient(state.clone());
        let connecting = async {
            if state.limits.accept_tasks {
                let legacy = state.limits.protocol_version.clone();
                let lifecycle = ClientLifecycleMode::Auto {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    legacy_version: legacy.or(Some(ProtocolVersion::V_2025_11_25)),
                };
                client.serve_with_lifecycle(transport, lifecycle).await
            } else {
                client.serve(transport).await
            }
        };
        let connection = match tokio::time::timeout(limit, connecting).await {
            Err(_) => {
                let error = handshake(format!("no answer to initialize within {limit:?}"));
                return Err((error, None));
            }
            Ok(Err(e)) => return Err((handshake(e.to_string()), Some(e))),
            Ok(Ok(connection)) => connection,
        };
        let peer = connection.peer().clone();
        // A list change told while the first list is taken is listed after it, not before.
        let relisting = state.relisting().await;
        let tools = list_every_tool(&peer, &state, true).await.map_err(|e| {
            let error = McpError::Request {
                server: server.to_string(),
                message: format!("tools/list failed: {e}"),
            };
            (error, None)
        })?;
        state.set_tools(tools, true);
        drop(relisting);
        let namespace = peer
            .peer_info()
            .and_then(|info| info.server_info.as_ref().map(|i| namespace_from(&i.name)))
            .unwrap_or_else(|| "mcp".to_owned());
        Ok(McpTools {
            state,
            namespace,
            group: None,
            deferred: false,
            peer,
            connection: Arc::new(connection),
        })
    }

    /// Names the tools `namespace.TOOL` rather than after the server.
    pub fn with_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// Declares the tools as one group where the API has groups (OpenAI Responses'
    /// `namespace`, named after [`McpTools::namespace`]), described by the server's
    /// `instructions` (held to `ImportLimits::max_description_bytes`, as the server is
    /// untrusted) or, without any, as the MCP server's tools. Elsewhere nothing changes.
    pub fn declared_as_namespace(mut self) -> Self {
        let server = &self.state.server;
        let instructions = (self.peer.peer_info())
            .and_then(|info| info.instructions.clone())
            .filter(|text| !text.trim().is_empty());
        let description = match instructions {
            Some(text) => {
                let max = self.state.limits.max_description_bytes;
                crate::client::cut_text(&text, max).unwrap_or(text)
            }
            None => format!("The tools of the MCP server {server}."),
        };
        self.group = Some(description);
        self
    }

    /// Marks every tool for loading on demand (`ToolMetadata::defer_loading`): where the API
    /// has tool search (Anthropic, OpenAI Responses) only a search finds them, so a server of
    /// hundreds of tools costs the request nothing until one is needed; elsewhere an agent's
    /// retriever picks them (`AgentBuilder::tool_search`).
    pub fn defer_loading(mut self) -> Self {
        self.deferred = true;
        self
    }

    /// The protocol version the server answered `initialize` with: the one spoken.
    pub fn protocol_version(&self) -> Option<String> {
        (self.peer.peer_info()).map(|info| info.protocol_version.to_string())
    }

    /// The namespace of the tools.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The server's tools, as it last listed them.
    pub fn listed(&self) -> Arc<[Tool]> {
        self.state.tools()
    }

    /// How many times the server's list changed (and was listed again) since the connection.
    pub fn generation(&self) -> u64 {
        self.state.generation()
    }

    /// Waits until the list has changed after `generation` (from [`McpTools::generation`])
    /// and been listed again. Never returns if the server never changes its list.
    pub async fn changed_after(&self, generation: u64) {
        self.state.listed_after(generation).await;
    }

    /// Every tool of the server, as it last listed them, as a dynamic tool named
    /// `namespace.tool`.
    pub fn tools(&self) -> Vec<DynamicTool> {
        self.listed().iter().map(|tool| self.tool(tool)).collect()
    }

    fn tool(&self, tool: &Tool) -> DynamicTool {
        let spec = spec_from_tool(format!("{}.{}", self.namespace, tool.name), tool);
        let description = if spec.description.trim().is_empty() {
            // Made from the tool's name, which the server chose: held to the same cap.
            let made = format!(
                "Tool `{}` of the MCP server {}",
                tool.name, self.state.server
            );
            let max = self.state.limits.max_description_bytes;
            crate::client::cut_text(&made, max).unwrap_or(made)
        } else {
            spec.description.clone()
        };
        let remote = Arc::new(Remote {
            state: self.state.clone(),
            name: tool.name.to_string(),
            peer: self.peer.clone(),
            _connection: self.connection.clone(),
        });
        let mut metadata = spec.metadata;
        metadata.source = Some(ToolSource::Mcp {
            server: self.state.server.to_string(),
        });
        // A server's tool that never answers must not hold its caller for ever.
        let timeout_ms =
            u64::try_from(self.state.limits.call_timeout.as_millis()).unwrap_or(u64::MAX);
        metadata.timeout_ms = metadata.timeout_ms.or(Some(timeout_ms));
        if let Some(description) = &self.group {
            metadata.namespace = Some(tool_core::Namespace {
                name: self.namespace.clone(),
                description: description.clone(),
            });
        }
        metadata.defer_loading |= self.deferred;
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
            .field("server", &self.state.server)
            .field("namespace", &self.namespace)
            .field("declared_as_namespace", &self.group.is_some())
            .field("defer_loading", &self.deferred)
            .field("tools", &self.listed().len())
            .finish()
    }
}

/// The error with every URL in its text shown without credentials or query: the HTTP client's
/// own errors quote the URL they were sent to.
fn scrubbed(error: McpError) -> McpError {
    match error {
        McpError::Handshake { peer, message } => McpError::Handshake {
            peer,
            message: scrub_urls(&message),
        },
        McpError::Request { server, message } => McpError::Request {
            server,
            message: scrub_urls(&message),
        },
        other => other,
    }
}
