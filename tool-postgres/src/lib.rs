//! PostgreSQL connections for ai-tool's stores (the pgvector tool store of `tool-retrieval`,
//! the run store of `tool-agent`): one place that
//!
//! - speaks TLS whenever the server offers it, the certificate verified against the
//!   platform's roots and the CA `sslrootcert=PATH` names ([`open`]);
//! - keeps passwords out of every message ([`redacted`]);
//! - opens a dropped connection again, once, for the requests safe to repeat ([`Connection`]).

mod conninfo;
mod redact;
mod tls;

use std::time::Duration;

use tokio::sync::{MappedMutexGuard, Mutex, MutexGuard};
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, NoTls};

pub use redact::redacted;
pub use tokio_postgres;

/// What went wrong reaching PostgreSQL: the message says what was being done, and where (the
/// connection string without its password); the source, when there is one, is PostgreSQL's.
#[derive(Debug)]
pub struct PgError {
    message: String,
    source: Option<tokio_postgres::Error>,
}

impl std::fmt::Display for PgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.source {
            Some(source) => write!(f, "{}: {source}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for PgError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_ref().map(|e| e as _)
    }
}

impl PgError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        PgError {
            message: message.into(),
            source: None,
        }
    }

    /// The message (without PostgreSQL's words), and PostgreSQL's error when there is one.
    pub fn into_parts(self) -> (String, Option<tokio_postgres::Error>) {
        (self.message, self.source)
    }
}

/// A connection to `url`, its driving task spawned: over TLS (verified against the platform's
/// roots and the `sslrootcert` the string names) unless it says `sslmode=disable`. As
/// PostgreSQL's own default (`prefer`), a server that offers no TLS is spoken to without it;
/// `sslmode=require` refuses such a server. An unreachable server fails in 10 seconds unless
/// the string sets `connect_timeout`.
pub async fn open(url: &str) -> Result<Client, PgError> {
    let (connection_string, root) = tls::take_root_cert(url);
    let failed = |e: tokio_postgres::Error| {
        let hint = if format!("{e:?}")
            .to_ascii_lowercase()
            .contains("certificate")
        {
            ": the server's certificate was not verified; name its CA with `sslrootcert=PATH`, \
             or say `sslmode=disable` on a network you trust"
        } else {
            ""
        };
        PgError {
            message: format!("connecting to {}{hint}", redacted(url)),
            source: Some(e),
        }
    };
    let mut config: tokio_postgres::Config = connection_string.parse().map_err(failed)?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    if config.get_ssl_mode() == tokio_postgres::config::SslMode::Disable {
        let (client, connection) = config.connect(NoTls).await.map_err(failed)?;
        drive(connection);
        return Ok(client);
    }
    let tls = tls::connector(root.as_deref())?;
    let (client, connection) = config.connect(tls).await.map_err(failed)?;
    drive(connection);
    Ok(client)
}

/// Runs a connection's I/O until it ends.
fn drive<F>(connection: F)
where
    F: std::future::Future<Output = Result<(), tokio_postgres::Error>> + Send + 'static,
{
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::warn!(error = %e, "the PostgreSQL connection ended");
        }
    });
}

/// Whether `error` says the connection is gone: closed, or ended by the server (an
/// administrator's command, a shutdown, a crash).
pub fn is_lost(error: &tokio_postgres::Error) -> bool {
    let ended = error.code().is_some_and(|code| {
        [
            SqlState::ADMIN_SHUTDOWN,
            SqlState::CRASH_SHUTDOWN,
            SqlState::CANNOT_CONNECT_NOW,
        ]
        .contains(code)
    });
    error.is_closed() || ended
}

/// One connection, opened again when it drops (a restart, a failover, an idle timeout on the
/// way). It counts how many times it was opened, so that a request that failed on an earlier
/// connection does not replace a newer one. The URL may hold a password: it is never shown.
pub struct Connection {
    held: Mutex<(Client, u64)>,
    url: String,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("url", &redacted(&self.url))
            .finish_non_exhaustive()
    }
}

/// The connection, held for one request, and the generation it belongs to.
pub struct Held<'a> {
    /// The client, locked: one request at a time.
    pub client: MappedMutexGuard<'a, Client>,
    /// How many times the connection had been opened again when it was taken.
    pub generation: u64,
}

impl Connection {
    /// Opens a connection to `url` (see [`open`]).
    pub async fn open(url: &str) -> Result<Self, PgError> {
        Ok(Connection {
            held: Mutex::new((open(url).await?, 0)),
            url: url.to_owned(),
        })
    }

    /// The connection, opened again first when it has dropped.
    pub async fn client(&self) -> Result<Held<'_>, PgError> {
        let mut held = self.held.lock().await;
        if held.0.is_closed() {
            tracing::info!("the PostgreSQL connection dropped: connecting again");
            held.0 = open(&self.url).await?;
            held.1 += 1;
        }
        let generation = held.1;
        Ok(Held {
            client: MutexGuard::map(held, |h| &mut h.0),
            generation,
        })
    }

    /// Whether a request on the connection of `generation` failed because it dropped (the
    /// client saw it close, or `error` says the server ended it): then, unless a newer
    /// connection was opened meanwhile, it is opened again, and the caller may ask again (a
    /// request that only reads, or one whose effect is all or nothing).
    pub async fn dropped(&self, error: Option<&tokio_postgres::Error>, generation: u64) -> bool {
        let mut held = self.held.lock().await;
        if held.1 != generation {
            return true;
        }
        let lost = held.0.is_closed() || error.is_some_and(is_lost);
        if lost {
            match open(&self.url).await {
                Ok(fresh) => *held = (fresh, generation + 1),
                Err(e) => tracing::warn!(error = %e, "connecting to PostgreSQL again failed"),
            }
        }
        lost
    }
}
