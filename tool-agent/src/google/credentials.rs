//! Google's Application Default Credentials, found as Google's libraries find them, and the
//! access token they give, kept until shortly before it expires.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::sources::{metadata_token, KeyFile, Token};
use crate::model::ModelError;

/// A token is fetched again once it expires within this.
const REFRESH_BEFORE_EXPIRY: Duration = Duration::from_secs(5 * 60);

/// How long a token endpoint may take.
const SERVICE_TIMEOUT: Duration = Duration::from_secs(30);

/// What gives a token when asked: for credentials this crate does not resolve (workload
/// identity federation, impersonation), from Google's own SDK or a `gcloud` command.
type TokenProvider =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = Result<String, String>> + Send>> + Send + Sync>;

/// Google Cloud credentials (Application Default Credentials), found as Google's client
/// libraries find them, in turn:
///
/// 1. the file `GOOGLE_APPLICATION_CREDENTIALS` names;
/// 2. `gcloud`'s application default credentials
///    (`$CLOUDSDK_CONFIG/application_default_credentials.json`, by default under
///    `~/.config/gcloud`, written by `gcloud auth application-default login`);
/// 3. the metadata server of a Google Cloud machine (Compute Engine, GKE, Cloud Run), at
///    `GCE_METADATA_HOST` if set.
///
/// A file holds a service account's key (whose signed assertion is traded for a token at its
/// `token_uri`) or a user's refresh token (traded at Google's token endpoint). Other kinds
/// (`external_account`, `impersonated_service_account`) are named in an error:
/// [`GoogleCredentials::from_token_provider`] takes a token from elsewhere instead. Tokens
/// are asked for the `cloud-platform` scope and fetched again five minutes before they
/// expire; a request that finds another fetching waits for it.
///
/// ```
/// use tool_agent::GoogleCredentials;
///
/// let credentials = GoogleCredentials::from_vars([("GOOGLE_CLOUD_PROJECT", "my-project")]);
/// assert_eq!(credentials.project().as_deref(), Some("my-project"));
/// ```
#[derive(Clone)]
pub struct GoogleCredentials {
    inner: Arc<Inner>,
}

struct Inner {
    vars: HashMap<String, String>,
    provider: Option<TokenProvider>,
    /// For token endpoints, through the environment's proxy if there is one; redirects are
    /// not followed, so that no secret goes to another host.
    client: reqwest::Client,
    /// For the metadata server, never through a proxy.
    metadata: reqwest::Client,
    /// The token last fetched, and its quota project; held while one is fetched.
    cached: tokio::sync::Mutex<Option<Token>>,
}

/// Where the credentials were found.
enum Found {
    File { place: String, file: KeyFile },
    Metadata { host: String },
}

impl GoogleCredentials {
    /// The credentials of this process's environment (its variables read now).
    pub fn from_env() -> Self {
        let wanted = |name: &str| {
            name.starts_with("GOOGLE_")
                || name.starts_with("GCE_METADATA")
                || matches!(name, "HOME" | "CLOUDSDK_CONFIG" | "GCLOUD_PROJECT")
        };
        Self::from_vars(std::env::vars().filter(|(name, _)| wanted(name)))
    }

    /// The credentials these variables lead to, instead of the environment's: for a process
    /// whose settings live elsewhere, and for tests.
    pub fn from_vars<K: Into<String>, V: Into<String>>(
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let vars = vars
            .into_iter()
            .map(|(name, value)| (name.into(), value.into()))
            .collect();
        Self::with(vars, None)
    }

    /// Tokens from `provider`, asked when the last one it gave has expired (it gives no
    /// expiry, so at each request): for credentials not resolved here.
    pub fn from_token_provider<F, Fut>(provider: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        let provider: TokenProvider = Arc::new(move || Box::pin(provider()));
        Self::with(HashMap::new(), Some(provider))
    }

    fn with(vars: HashMap<String, String>, provider: Option<TokenProvider>) -> Self {
        GoogleCredentials {
            inner: Arc::new(Inner {
                vars,
                provider,
                client: reqwest::Client::builder()
                    .timeout(SERVICE_TIMEOUT)
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .unwrap_or_default(),
                metadata: reqwest::Client::builder()
                    .no_proxy()
                    .build()
                    .unwrap_or_default(),
                cached: tokio::sync::Mutex::new(None),
            }),
        }
    }

    /// The project: `GOOGLE_CLOUD_PROJECT`, else `GCLOUD_PROJECT`, else the `project_id` of
    /// the service account's file.
    pub fn project(&self) -> Option<String> {
        self.var("GOOGLE_CLOUD_PROJECT")
            .or_else(|| self.var("GCLOUD_PROJECT"))
            .or_else(|| {
                let (_, text) = self.file_text().ok()??;
                let file = KeyFile::parse(&text, "").ok()?;
                file.project().map(str::to_owned)
            })
    }

    /// The project billed for quota: `GOOGLE_CLOUD_QUOTA_PROJECT`, else the
    /// `quota_project_id` of a user's credentials file (as `gcloud auth application-default
    /// set-quota-project` writes it); sent as `x-goog-user-project`.
    pub fn quota_project(&self) -> Option<String> {
        self.var("GOOGLE_CLOUD_QUOTA_PROJECT").or_else(|| {
            let (_, text) = self.file_text().ok()??;
            let file = KeyFile::parse(&text, "").ok()?;
            file.quota_project().map(str::to_owned)
        })
    }

    /// An access token good for five minutes more: the last one, else a new one. The error
    /// names each place looked in, and never a secret.
    pub async fn access_token(&self) -> Result<String, ModelError> {
        let mut cached = self.inner.cached.lock().await;
        let now = SystemTime::now();
        if let Some(token) = cached.as_ref() {
            if token.expires > now + REFRESH_BEFORE_EXPIRY {
                return Ok(token.value.clone());
            }
        }
        match self.fetch().await {
            Ok(token) => {
                let value = token.value.clone();
                *cached = Some(token);
                Ok(value)
            }
            Err(error) => match cached.as_ref().filter(|token| token.expires > now) {
                Some(token) => {
                    tracing::warn!(
                        "Google access token not refreshed, the current one kept: {error}"
                    );
                    Ok(token.value.clone())
                }
                None => Err(error),
            },
        }
    }

    /// A new token from wherever the credentials are.
    async fn fetch(&self) -> Result<Token, ModelError> {
        if let Some(provider) = &self.inner.provider {
            let value = provider().await.map_err(|why| {
                ModelError::Setup(format!("the Google token provider failed: {why}"))
            })?;
            // Asked again at the next request.
            return Ok(Token {
                value,
                expires: SystemTime::now(),
            });
        }
        let setup = ModelError::Setup;
        match self.find().map_err(setup)? {
            Found::File { place, file } => file
                .token(&self.inner.client)
                .await
                .map_err(|why| setup(format!("no Google access token from {place}: {why}"))),
            Found::Metadata { host } => {
                metadata_token(&self.inner.metadata, &host)
                    .await
                    .map_err(|why| {
                        setup(format!(
                        "no Google credentials found: GOOGLE_APPLICATION_CREDENTIALS is not set, \
                         {}, and {why}",
                        self.no_gcloud_file()
                    ))
                    })
            }
        }
    }

    /// The first place that has credentials, in Google's order.
    fn find(&self) -> Result<Found, String> {
        if let Some((place, text)) = self.file_text()? {
            let file = KeyFile::parse(&text, &place)?;
            return Ok(Found::File { place, file });
        }
        let host = self
            .var("GCE_METADATA_HOST")
            .or_else(|| self.var("GCE_METADATA_ROOT"))
            .unwrap_or_else(|| "169.254.169.254".to_owned());
        Ok(Found::Metadata { host })
    }

    /// The credentials file and its text: `GOOGLE_APPLICATION_CREDENTIALS`'s (which must be
    /// readable), else gcloud's if it exists.
    fn file_text(&self) -> Result<Option<(String, String)>, String> {
        if let Some(path) = self.var("GOOGLE_APPLICATION_CREDENTIALS") {
            let place = format!("the file GOOGLE_APPLICATION_CREDENTIALS names ({path})");
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("cannot read {place}: {e}"))?;
            return Ok(Some((place, text)));
        }
        let Some(path) = self.gcloud_file() else {
            return Ok(None);
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Some((
                format!(
                    "gcloud's application default credentials ({})",
                    path.display()
                ),
                text,
            ))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    /// `$CLOUDSDK_CONFIG/application_default_credentials.json`, by default under
    /// `~/.config/gcloud`.
    fn gcloud_file(&self) -> Option<PathBuf> {
        let config = match self.var("CLOUDSDK_CONFIG") {
            Some(config) => PathBuf::from(config),
            None => PathBuf::from(self.var("HOME")?).join(".config/gcloud"),
        };
        Some(config.join("application_default_credentials.json"))
    }

    fn no_gcloud_file(&self) -> String {
        match self.gcloud_file() {
            Some(path) => format!("{} does not exist", path.display()),
            None => "HOME is not set (for gcloud's credentials)".to_owned(),
        }
    }

    fn var(&self, name: &str) -> Option<String> {
        self.inner
            .vars
            .get(name)
            .filter(|v| !v.trim().is_empty())
            .cloned()
    }
}

impl fmt::Debug for GoogleCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GoogleCredentials")
            .field("token_provider", &self.inner.provider.is_some())
            .finish_non_exhaustive()
    }
}
