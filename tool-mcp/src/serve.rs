//! Serving an [`McpServer`] over stdio, or over Streamable HTTP at `/mcp` with Host and Origin
//! checks, a bearer token required beyond loopback, and [`HttpLimits`](crate::HttpLimits).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;
use tokio::net::TcpListener;
use tool_runtime::Executor;

use crate::{HttpOptions, McpError, McpServer};

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

/// Serves every tool of `exec` over Streamable HTTP at `http://ADDR/mcp`, with sessions,
/// until the process ends. Bind `127.0.0.1` unless the server is meant for other machines:
/// any other address needs [`serve_http_with`] and a bearer token
/// ([`HttpOptions::with_bearer_token`]), or is refused with [`McpError::Unauthenticated`].
/// Requests are accepted for loopback names and for `addr`'s own IP; a server other machines
/// reach by name adds it with [`HttpOptions::with_allowed_host`].
pub async fn serve_http(exec: Executor, addr: SocketAddr) -> Result<(), McpError> {
    let options = HttpOptions::default();
    options.check_exposure(addr)?;
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| McpError::io(format!("binding {addr}"), e))?;
    serve_http_with(McpServer::new(exec)?, listener, options).await
}

/// [`serve_http`] on a bound listener, with options; returns when `options.shutdown` is
/// cancelled. The listener's own address is accepted as a `Host`
/// ([`HttpOptions::bound_to`]), as [`serve_http`] does.
///
/// Refuses ([`McpError::Unauthenticated`]) to serve on an address other than loopback without
/// a bearer token, unless the options say [`HttpOptions::allow_unauthenticated`].
pub async fn serve_http_with(
    server: McpServer,
    listener: TcpListener,
    options: HttpOptions,
) -> Result<(), McpError> {
    let addr = listener
        .local_addr()
        .map_err(|e| McpError::io("reading the listener's address", e))?;
    options.check_exposure(addr)?;
    let options = options.bound_to(addr);
    let shutdown = options.shutdown.clone();
    let app = axum_router(server, &options);
    crate::connections::serve(listener, app, &options.limits, shutdown).await;
    Ok(())
}

/// The axum router of [`serve_http_with`], to nest in an application: `/mcp` only, with the
/// options' Host, Origin and token checks and their session and body limits. The connection
/// limits ([`HttpLimits::max_connections`](crate::HttpLimits::max_connections), the timeouts) and the refusal to serve beyond
/// loopback without a token are [`serve_http_with`]'s: an application serving this router
/// itself sets its own.
pub fn axum_router(server: McpServer, options: &HttpOptions) -> Router {
    let limits = &options.limits;
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts.clone())
        .with_allowed_origins(options.allowed_origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(limits.max_body_bytes)
        .with_cancellation_token(options.shutdown.child_token());
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(limits.session_idle_timeout);
    let sessions = Arc::new(sessions);
    let service = StreamableHttpService::new(
        move || Ok(server.for_session()),
        Arc::clone(&sessions),
        config,
    );
    let guard = RequestGuard {
        sessions,
        max_sessions: limits.max_sessions,
        max_body_bytes: limits.max_body_bytes,
        body_timeout: limits.body_read_timeout,
    };
    let router =
        Router::new()
            .route_service("/mcp", service)
            .layer(middleware::from_fn_with_state(
                Arc::new(guard),
                guard_requests,
            ));
    match &options.bearer_token {
        Some(token) => router.layer(middleware::from_fn_with_state(
            Arc::<[u8]>::from(token.as_bytes()),
            check_bearer,
        )),
        None => router,
    }
}

/// What [`guard_requests`] holds requests to.
struct RequestGuard {
    sessions: Arc<LocalSessionManager>,
    max_sessions: usize,
    max_body_bytes: usize,
    body_timeout: std::time::Duration,
}

/// Holds every POST to its limits before rmcp reads it: the whole body within
/// [`HttpLimits::body_read_timeout`](crate::HttpLimits::body_read_timeout) (`408` past it: a
/// client sending a byte now and then no longer holds its connection) and
/// [`HttpLimits::max_body_bytes`](crate::HttpLimits::max_body_bytes) (`413`); and an
/// `initialize` answered `503` when
/// [`HttpLimits::max_sessions`](crate::HttpLimits::max_sessions) sessions are alive (a request
/// that stands alone, protocol 2026-07-28, makes no session and passes). Concurrent
/// `initialize`s may pass the check together: the sessions never exceed the cap by more than
/// the connections served at once.
async fn guard_requests(
    State(guard): State<Arc<RequestGuard>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(
        guard.body_timeout,
        axum::body::to_bytes(body, guard.max_body_bytes),
    )
    .await;
    let bytes = match read {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => {
            let message = format!(
                "the request body is larger than {} bytes (HttpLimits::max_body_bytes), or broke",
                guard.max_body_bytes
            );
            return (StatusCode::PAYLOAD_TOO_LARGE, message).into_response();
        }
        Err(_) => {
            let message = format!(
                "the request body did not arrive within {} s (HttpLimits::body_read_timeout)",
                guard.body_timeout.as_secs()
            );
            return (StatusCode::REQUEST_TIMEOUT, message).into_response();
        }
    };
    let opens_session = !parts.headers.contains_key("mcp-session-id");
    if opens_session && guard.sessions.sessions.read().await.len() >= guard.max_sessions {
        let initialize = serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .is_some_and(|v| {
                v.get("method").and_then(serde_json::Value::as_str) == Some("initialize")
            });
        if initialize {
            let message = format!(
                "too many MCP sessions: {} are alive (HttpLimits::max_sessions); try again later",
                guard.max_sessions
            );
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, "5")],
                message,
            )
                .into_response();
        }
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
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
