//! [`McpError`]: what can go wrong serving or importing over MCP, outside a tool call.

/// Serving or importing over MCP failed. (Errors of one call are [`tool_core::ToolError`]s.)
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// A tool's spec did not make a valid MCP tool.
    #[error("tool `{tool}` cannot be listed over MCP: {message}")]
    Declaration {
        /// The tool.
        tool: String,
        /// What was wrong.
        message: String,
    },
    /// Binding the address, or starting a server's process, failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// An HTTP server would serve every tool to other machines without authentication.
    #[error(
        "refusing to serve MCP on {addr} without authentication: other machines could call \
         every tool. Require a bearer token (`--token-env VAR`; HttpOptions::with_bearer_token), \
         bind 127.0.0.1, or, when a proxy in front authenticates, say so (`--no-auth`; \
         HttpOptions::allow_unauthenticated)"
    )]
    Unauthenticated {
        /// The address it was to serve on.
        addr: std::net::SocketAddr,
    },
    /// The MCP handshake (`initialize`) with the peer failed.
    #[error("MCP handshake with {peer} failed: {message}")]
    Handshake {
        /// The client or server, as the user named it.
        peer: String,
        /// rmcp's description.
        message: String,
    },
    /// Authorizing with a server (OAuth) failed.
    #[error("authorizing with MCP server {server} failed: {message}")]
    Authorization {
        /// The server, as its URL without credentials or query.
        server: String,
        /// What failed.
        message: String,
    },
    /// The imported servers' tools do not make an executor (two tools of one name, say).
    #[error("the imported MCP tools cannot be served: {0}")]
    Imports(String),
    /// A request to a server failed (for example `tools/list`).
    #[error("MCP server `{server}`: {message}")]
    Request {
        /// The server, as the user named it.
        server: String,
        /// What failed.
        message: String,
    },
}

impl McpError {
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        McpError::Io {
            what: what.into(),
            source,
        }
    }
}
