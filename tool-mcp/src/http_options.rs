//! [`HttpOptions`] and [`HttpLimits`]: how an MCP server over HTTP checks requests, and what
//! it lets a client hold.

use std::net::SocketAddr;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// How an HTTP server checks requests.
///
/// Secure by default: loopback `Host`s and `Origin`s only, and a server bound to an address
/// other than loopback refuses to start without a bearer token unless told
/// [`HttpOptions::allow_unauthenticated`] (a proxy in front authenticates). `Debug` never
/// shows the token.
#[derive(Clone)]
pub struct HttpOptions {
    /// When set, every request needs `Authorization: Bearer <token>`; compared in constant
    /// time. Others get `401 Unauthorized`.
    pub bearer_token: Option<String>,
    /// Serve beyond loopback without a bearer token: only behind something else that
    /// authenticates. Default `false`.
    pub allow_unauthenticated: bool,
    /// The `Host` values accepted (host names, or `host:port`). Loopback names by default,
    /// against DNS rebinding; add the server's public name when serving beyond this machine.
    pub allowed_hosts: Vec<String>,
    /// The `Origin` values accepted from browsers (`scheme://host:port`, `:*` for any port).
    /// Loopback origins by default; a request with another `Origin` gets `403 Forbidden`.
    /// A request without `Origin` (not from a browser) is accepted.
    pub allowed_origins: Vec<String>,
    /// What one client, and all of them, may hold.
    pub limits: HttpLimits,
    /// Cancelling this token stops the server, ending every session.
    pub shutdown: CancellationToken,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<hidden>"),
            )
            .field("allow_unauthenticated", &self.allow_unauthenticated)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// What clients of an HTTP server may hold, each with a default an outsider cannot push past
/// (docs/reliability.md has the table).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpLimits {
    /// How long a client may take to send a request's headers; then its connection is
    /// closed. Default 30 s.
    pub header_read_timeout: Duration,
    /// How long a connection may carry nothing either way before it is closed. An open
    /// stream is kept alive by the server's pings (every 15 s); between two requests on a kept
    /// connection, the header-read timeout applies first. Default 120 s.
    pub idle_connection_timeout: Duration,
    /// How long a client may take to send a request's whole body; then it is answered `408`.
    /// Default 30 s.
    pub body_read_timeout: Duration,
    /// Connections served at once; further ones wait in the system's accept queue until one
    /// closes. Default 1,024.
    pub max_connections: usize,
    /// Sessions alive at once; past it, `initialize` is answered `503 Service Unavailable`
    /// and the sessions there are go on being served. Default 1,000.
    pub max_sessions: usize,
    /// How long a session may go without a request before it is ended. Default 300 s.
    pub session_idle_timeout: Duration,
    /// The most bytes a request's body may have (`413` past it). Default 4 MiB.
    pub max_body_bytes: usize,
}

impl HttpLimits {
    /// The default of [`HttpLimits::header_read_timeout`].
    pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);
    /// The default of [`HttpLimits::idle_connection_timeout`].
    pub const DEFAULT_IDLE_CONNECTION_TIMEOUT: Duration = Duration::from_secs(120);
    /// The default of [`HttpLimits::body_read_timeout`].
    pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
    /// The default of [`HttpLimits::max_connections`].
    pub const DEFAULT_MAX_CONNECTIONS: usize = 1_024;
    /// The default of [`HttpLimits::max_sessions`].
    pub const DEFAULT_MAX_SESSIONS: usize = 1_000;
    /// The default of [`HttpLimits::session_idle_timeout`].
    pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
    /// The default of [`HttpLimits::max_body_bytes`].
    pub const DEFAULT_MAX_BODY_BYTES: usize = 4 << 20;

    /// These limits with another header-read timeout.
    pub fn with_header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// These limits with another idle-connection timeout.
    pub fn with_idle_connection_timeout(mut self, timeout: Duration) -> Self {
        self.idle_connection_timeout = timeout;
        self
    }

    /// These limits with another body-read timeout.
    pub fn with_body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// These limits with another connection cap (at least 1).
    pub fn with_max_connections(mut self, max: usize) -> Self {
        self.max_connections = max.max(1);
        self
    }

    /// These limits with another session cap.
    pub fn with_max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max;
        self
    }

    /// These limits with another session idle timeout.
    pub fn with_session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.session_idle_timeout = timeout;
        self
    }

    /// These limits with another body cap.
    pub fn with_max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            header_read_timeout: Self::DEFAULT_HEADER_READ_TIMEOUT,
            idle_connection_timeout: Self::DEFAULT_IDLE_CONNECTION_TIMEOUT,
            body_read_timeout: Self::DEFAULT_BODY_READ_TIMEOUT,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            max_sessions: Self::DEFAULT_MAX_SESSIONS,
            session_idle_timeout: Self::DEFAULT_SESSION_IDLE_TIMEOUT,
            max_body_bytes: Self::DEFAULT_MAX_BODY_BYTES,
        }
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            bearer_token: None,
            allow_unauthenticated: false,
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: vec![
                "http://localhost:*".into(),
                "http://127.0.0.1:*".into(),
                "http://[::1]:*".into(),
            ],
            limits: HttpLimits::default(),
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

    /// These options, serving beyond loopback without a bearer token: say so only when
    /// something in front of the server (a proxy, a mesh) authenticates every request.
    pub fn allow_unauthenticated(mut self) -> Self {
        self.allow_unauthenticated = true;
        self
    }

    /// These options with other limits.
    pub fn with_limits(mut self, limits: HttpLimits) -> Self {
        self.limits = limits;
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
    /// [`serve_http_with`](crate::serve_http_with) applies it to the listener's address.
    pub fn bound_to(self, addr: SocketAddr) -> Self {
        let ip = addr.ip();
        if ip.is_unspecified() || ip.is_loopback() {
            return self;
        }
        self.with_allowed_host(ip.to_string())
    }

    /// Refuses to serve on `addr` when it is not loopback and nothing authenticates.
    pub(crate) fn check_exposure(&self, addr: SocketAddr) -> Result<(), crate::McpError> {
        let loopback = addr.ip().to_canonical().is_loopback();
        if loopback || self.bearer_token.is_some() || self.allow_unauthenticated {
            return Ok(());
        }
        Err(crate::McpError::Unauthenticated { addr })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_bearer_token() {
        let options = HttpOptions::default().with_bearer_token("s3cr3t-t0ken");
        let shown = format!("{options:?}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
        assert!(shown.contains("<hidden>"), "{shown}");
    }

    #[test]
    fn only_loopback_serves_without_a_token_unless_told() {
        let at = |a: &str| a.parse::<SocketAddr>().unwrap();
        let options = HttpOptions::default();
        for open in ["127.0.0.1:1", "[::1]:1", "[::ffff:127.0.0.1]:1"] {
            assert!(options.check_exposure(at(open)).is_ok(), "{open}");
        }
        for exposed in ["0.0.0.0:1", "[::]:1", "192.0.2.7:1"] {
            let error = options.check_exposure(at(exposed)).unwrap_err().to_string();
            assert!(
                error.contains("--token-env") && error.contains("--no-auth"),
                "{error}"
            );
        }
        let token = HttpOptions::default().with_bearer_token("t");
        assert!(token.check_exposure(at("0.0.0.0:1")).is_ok());
        let proxied = HttpOptions::default().allow_unauthenticated();
        assert!(proxied.check_exposure(at("0.0.0.0:1")).is_ok());
    }
}
