//! Serving an [`McpServer`] over stdio, or over Streamable HTTP at `/mcp` with Host and Origin
//! checks and an optional static bearer token.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tool_runtime::Executor;

use crate::{McpError, McpServer};

/// Serves every tool of `exec` on this process's stdin and stdout until the client closes
/// them. Log with `tracing` to stderr: anything else written to stdout breaks the protocol.
pub async fn serve_stdio(exec: Executor) -> Result<(), McpError> {
    serve_stdio_with(McpServer::new(exec)?).await
}

/// [`serve_stdio`] for a server already made.
pub async fn serve_stdio_with(server: McpServer) -> Result<(), McpError> {
    let running =
        server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| McpError::Handshake {
                peer: "the stdio client".into(),
                message: e.to_string(),
            })?;
    running.waiting().await.map_err(|e| McpError::Request {
        server: "stdio".into(),
        message: e.to_string(),
    })?;
    Ok(())
}

/// How an HTTP server checks requests.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// When set, every request needs `Authorization: Bearer <token>`; compared in constant
    /// time. Others get `401 Unauthorized`.
    pub bearer_token: Option<String>,
    /// The `Host` values accepted (host names, or `host:port`). Loopback names by default,
    /// against DNS rebinding; add the server's public name when serving beyond this machine.
    pub allowed_hosts: Vec<String>,
    /// The `Origin` values accepted from browsers (`scheme://host:port`, `:*` for any port).
    /// Loopback origins by default; a request with another `Origin` gets `403 Forbidden`.
    /// A request without `Origin` (not from a browser) is accepted.
    pub allowed_origins: Vec<String>,
    /// Cancelling this token stops the server, ending every session.
    pub shutdown: CancellationToken,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            bearer_token: None,
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: vec![
                "http://localhost:*".into(),
                "http://127.0.0.1:*".into(),
                "http://[::1]:*".into(),
            ],
            shutdown: CancellationToken::new(),
        }
    }
}

impl HttpOptions {
    /// These options, requiring `Authorization: Bearer <token>`.
    pub fn with_bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// These options, accepting one more `Host` (the name other machines reach the server
    /// by, such as `tools.example.com` or `tools.example.com:8765`).
    pub fn with_allowed_host(mut self, host: impl Into<String>) -> Self {
        let host = host.into();
        if !self.allowed_hosts.contains(&host) {
            self.allowed_hosts.push(host);
        }
        self
    }

    /// These options for a server bound to `addr`: a specific address other than loopback is
    /// accepted as a `Host` too (a client reaching it by IP); a name must still be added.
    pub fn bound_to(self, addr: SocketAddr) -> Self {
        let ip = addr.ip();
        if ip.is_unspecified() || ip.is_loopback() {
            return self;
        }
        self.with_allowed_host(ip.to_string())
    }
}

/// Serves every tool of `exec` over Streamable HTTP at `http://ADDR/mcp`, with sessions,
/// until the process ends. Bind `127.0.0.1` unless the server is meant for other machines.
/// Requests are accepted for loopback names and for `addr`'s own IP; a server other machines
/// reach by name is served with [`serve_http_with`] and
/// [`HttpOptions::with_allowed_host`] (and a bearer token).
pub async fn serve_http(exec: Executor, addr: SocketAddr) -> Result<(), McpError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| McpError::io(format!("binding {addr}"), e))?;
    let options = HttpOptions::default().bound_to(addr);
    serve_http_with(McpServer::new(exec)?, listener, options).await
}

/// [`serve_http`] on a bound listener, with options; returns when `options.shutdown` is
/// cancelled.
pub async fn serve_http_with(
    server: McpServer,
    listener: TcpListener,
    options: HttpOptions,
) -> Result<(), McpError> {
    let shutdown = options.shutdown.clone();
    axum::serve(listener, router(server, &options))
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
        .map_err(|e| McpError::io("serving HTTP", e))
}

/// The axum router of [`serve_http_with`], to nest in an application: `/mcp` only.
pub fn router(server: McpServer, options: &HttpOptions) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_allowed_origins(options.allowed_origins.clone())
        .enforce_origin_validation()
        .with_cancellation_token(options.shutdown.child_token());
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = Router::new().route_service("/mcp", service);
    match &options.bearer_token {
        Some(token) => router.layer(middleware::from_fn_with_state(
            Arc::<[u8]>::from(token.as_bytes()),
            check_bearer,
        )),
        None => router,
    }
}

/// Refuses a request without the expected bearer token.
async fn check_bearer(State(token): State<Arc<[u8]>>, request: Request, next: Next) -> Response {
    // The scheme's name is case-insensitive (RFC 9110); the token is compared exactly.
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes())
        .filter(|v| v.len() >= 7 && v[..7].eq_ignore_ascii_case(b"bearer "))
        .map(|v| &v[7..]);
    match given {
        Some(given) if constant_time_eq(given, &token) => next.run(request).await,
        _ => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "missing or wrong bearer token",
        )
            .into_response(),
    }
}

/// Compares without stopping at the first difference, so that the time taken says nothing
/// about how much of a guess was right (only whether its length was).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::constant_time_eq;

    #[test]
    fn constant_time_eq_accepts_only_the_same_bytes() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
    }
}
