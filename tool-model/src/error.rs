//! Why a model request failed.

/// Why a model request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The provider answered with an error status: its own message is kept. 429 and 5xx are
    /// retried first; `attempts` counts every request made.
    #[error("{provider} answered HTTP {status} after {attempts} attempt(s): {message}")]
    Status {
        /// The provider, as people write it.
        provider: &'static str,
        /// The HTTP status.
        status: u16,
        /// The provider's error message (or the start of the body when it has none).
        message: String,
        /// Requests made, retries included.
        attempts: u32,
    },
    /// The provider could not be reached, or the connection broke.
    #[error("could not reach {url} after {attempts} attempt(s): {message}")]
    Transport {
        /// The URL requested (never with a key in it).
        url: String,
        /// What went wrong.
        message: String,
        /// Requests made, retries included.
        attempts: u32,
    },
    /// The provider answered, but not in the API's format.
    #[error("{provider}'s answer is not what the API returns: {message}")]
    Malformed {
        /// The provider, as people write it.
        provider: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The client is not set up to send requests (no API key, a bad base URL...).
    #[error("the model client is not set up: {0}")]
    Setup(String),
    /// Any other failure of a model client.
    #[error("{0}")]
    Other(String),
}
