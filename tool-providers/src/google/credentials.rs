//! Google's Application Default Credentials, found as Google's libraries find them, and the
//! access token they give, kept until shortly before it expires.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use google_cloud_auth::credentials::AccessTokenCredentials;

use super::gcloud;
use super::sources::{metadata, KeyFile};
use crate::refreshing::Refreshing;
use tool_model::ModelError;

/// A token is fetched again once it expires within this: google-auth's margin, under the four
/// minutes before expiry from which the metadata server hands out a new one.
const REFRESH_BEFORE_EXPIRY: Duration = Duration::from_secs(225);

/// While a token is still good, how long after a try (a failed one, or one that gave a token
/// as short-lived) the next one waits.
const RETRY_AFTER_TRY: Duration = Duration::from_secs(60);

/// How long a token endpoint, or a token provider, may take.
const SERVICE_TIMEOUT: Duration = Duration::from_secs(30);

/// What gives a token and how long it lasts, when asked: for credentials this crate does not
/// resolve (workload identity federation, impersonation), from Google's own SDK or `gcloud`.
type TokenProvider = Arc<
    dyn Fn() -> Pin<Box<dyn Future<Output = Result<(String, Duration), ProviderError>> + Send>>
        + Send
        + Sync,
>;

/// A token provider's error: any error.
type ProviderError = Box<dyn std::error::Error + Send + Sync>;

/// Google Cloud credentials (Application Default Credentials), found as Google's client
/// libraries find them, in turn:
///
/// 1. the file `GOOGLE_APPLICATION_CREDENTIALS` names;
/// 2. `gcloud`'s application default credentials
///    (`$CLOUDSDK_CONFIG/application_default_credentials.json`, by default under
///    `~/.config/gcloud`, or `%APPDATA%\gcloud` without a home, written by `gcloud auth
///    application-default login`);
/// 3. the metadata server of a Google Cloud machine (Compute Engine, GKE, Cloud Run), at
///    `GCE_METADATA_HOST` if set; not asked when `NO_GCE_CHECK` is `true`.
///
/// What was found is made into credentials of the `cloud-platform` scope by Google's own crate,
/// `google-cloud-auth`: a service account's key (a token it signs itself, with no request), a
/// user's refresh token, workload identity federation (`external_account`), an impersonated
/// service account, the metadata server's. It keeps the token and renews it before it
/// expires. [`GoogleCredentials::from_token_provider`] takes tokens from elsewhere instead.
///
/// ```
/// use tool_providers::GoogleCredentials;
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
    /// A provider's token last given, kept until it expires within [`REFRESH_BEFORE_EXPIRY`].
    token: Refreshing<String>,
    /// The credentials found, and where, once found.
    found: tokio::sync::OnceCell<(String, AccessTokenCredentials)>,
}

impl GoogleCredentials {
    /// The credentials of this process's environment (its variables read now).
    pub fn from_env() -> Self {
        let wanted = |name: &str| {
            name.starts_with("GOOGLE_")
                || name.starts_with("GCE_METADATA")
                || name.starts_with("CLOUDSDK_")
                || matches!(name, "HOME" | "APPDATA" | "GCLOUD_PROJECT" | "NO_GCE_CHECK")
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

    /// Tokens from `provider`, which gives one and how long it lasts from now: for credentials
    /// not resolved here. It is asked again when its token expires within four minutes, and
    /// may take 30 seconds. Give the token's real remaining lifetime, or a short one (five
    /// minutes) when it is not known: `gcloud auth print-access-token` may print a token it
    /// cached earlier. Its error is any error (`?` converts one, and `"text".into()` makes
    /// one); a request it fails names it.
    pub fn from_token_provider<F, Fut>(provider: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(String, Duration), ProviderError>> + Send + 'static,
    {
        let provider: TokenProvider = Arc::new(move || Box::pin(provider()));
        Self::with(HashMap::new(), Some(provider))
    }

    fn with(vars: HashMap<String, String>, provider: Option<TokenProvider>) -> Self {
        GoogleCredentials {
            inner: Arc::new(Inner {
                vars,
                provider,
                token: Refreshing::new(REFRESH_BEFORE_EXPIRY, RETRY_AFTER_TRY),
                found: tokio::sync::OnceCell::new(),
            }),
        }
    }

    /// The project: `GOOGLE_CLOUD_PROJECT` (or `GCLOUD_PROJECT`), else the `project_id` of a
    /// service account's file, else gcloud's (`CLOUDSDK_CORE_PROJECT`, or the active
    /// configuration's `[core] project`, as `gcloud config set project` writes it).
    pub fn project(&self) -> Option<String> {
        self.environment_project().or_else(|| {
            let from_file = match self.file_text() {
                Ok(Some((_, text))) => KeyFile::parse(&text, "")
                    .ok()
                    .and_then(|file| file.project().map(str::to_owned)),
                _ => None,
            };
            from_file.or_else(|| {
                self.var("CLOUDSDK_CORE_PROJECT")
                    .or_else(|| gcloud::project(&self.gcloud_dir()?, |name| self.var(name)))
            })
        })
    }

    /// `GOOGLE_CLOUD_PROJECT`, else `GCLOUD_PROJECT`.
    pub(crate) fn environment_project(&self) -> Option<String> {
        self.var("GOOGLE_CLOUD_PROJECT")
            .or_else(|| self.var("GCLOUD_PROJECT"))
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

    /// An access token. A provider's is kept until four minutes before it expires: while it is
    /// still good, a request that finds another fetching, or a try less than a minute ago,
    /// keeps it rather than waiting, and a failed fetch keeps it too; once none is good,
    /// requests wait for one fetch and share its result, a failure included. Credentials found
    /// in a file or on the metadata server keep and renew their token themselves
    /// (`google-cloud-auth`). The error names each place looked in, and never a secret.
    pub async fn access_token(&self) -> Result<String, ModelError> {
        if let Some(provider) = &self.inner.provider {
            let fetch = || async {
                let (value, expires) = self.ask(provider).await?;
                Ok((value, Some(expires)))
            };
            return self.inner.token.get("Google access token", fetch).await;
        }
        let (place, credentials) = self.found().await?;
        let token = tokio::time::timeout(SERVICE_TIMEOUT, credentials.access_token())
            .await
            .map_err(|_| {
                ModelError::Setup(format!(
                    "no Google access token from {place} within {SERVICE_TIMEOUT:?}"
                ))
            })?
            .map_err(|e| {
                let why = without_bodies(&crate::http::error_chain(&e));
                ModelError::Setup(format!("no Google access token from {place}: {why}"))
            })?;
        Ok(token.token)
    }

    /// A provider's new token, and when it expires.
    async fn ask(&self, provider: &TokenProvider) -> Result<(String, SystemTime), ModelError> {
        let failed =
            |why: String| ModelError::Setup(format!("the Google token provider failed: {why}"));
        let (value, lifetime) = tokio::time::timeout(SERVICE_TIMEOUT, provider())
            .await
            .map_err(|_| failed(format!("it took more than {SERVICE_TIMEOUT:?}")))?
            .map_err(|error| failed(crate::http::error_chain(error.as_ref())))?;
        let expires = SystemTime::now()
            .checked_add(lifetime)
            .ok_or_else(|| failed(format!("its token's lifetime {lifetime:?} is too long")))?;
        Ok((value, expires))
    }

    /// The credentials found, and where: looked for at the first request, and again at the
    /// next one after a failure.
    async fn found(&self) -> Result<&(String, AccessTokenCredentials), ModelError> {
        let setup = ModelError::Setup;
        self.inner
            .found
            .get_or_try_init(|| async {
                // The files are read on the blocking pool: a home directory may be on a network.
                let this = self.clone();
                let looking = tokio::task::spawn_blocking(move || this.find());
                tokio::time::timeout(SERVICE_TIMEOUT, looking)
                    .await
                    .map_err(|_| {
                        setup(format!(
                            "reading the Google credentials files took more than {SERVICE_TIMEOUT:?}"
                        ))
                    })?
                    .map_err(|e| setup(format!("looking for Google credentials failed: {e}")))?
                    .map_err(setup)
            })
            .await
    }

    /// The first place that has credentials, in Google's order, and its credentials.
    fn find(&self) -> Result<(String, AccessTokenCredentials), String> {
        if let Some((place, text)) = self.file_text()? {
            let file = KeyFile::parse(&text, &place)?;
            let credentials = file.credentials(&place)?;
            return Ok((place, credentials));
        }
        if self
            .var("NO_GCE_CHECK")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
        {
            return Err(format!(
                "{}, and NO_GCE_CHECK says there is no metadata server",
                self.nothing_found()
            ));
        }
        let host = self
            .var("GCE_METADATA_HOST")
            .or_else(|| self.var("GCE_METADATA_ROOT"))
            .unwrap_or_else(|| "169.254.169.254".to_owned());
        let place = format!("the metadata server at {host} ({})", self.nothing_found());
        Ok((place, metadata(&host)?))
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

    /// gcloud's configuration directory: `CLOUDSDK_CONFIG`, else `~/.config/gcloud`, else
    /// `%APPDATA%\gcloud`.
    fn gcloud_dir(&self) -> Option<PathBuf> {
        if let Some(config) = self.var("CLOUDSDK_CONFIG") {
            return Some(PathBuf::from(config));
        }
        match (self.var("HOME"), self.var("APPDATA")) {
            (Some(home), _) => Some(PathBuf::from(home).join(".config/gcloud")),
            (None, Some(app_data)) => Some(PathBuf::from(app_data).join("gcloud")),
            (None, None) => None,
        }
    }

    /// `application_default_credentials.json` in gcloud's directory.
    fn gcloud_file(&self) -> Option<PathBuf> {
        Some(
            self.gcloud_dir()?
                .join("application_default_credentials.json"),
        )
    }

    /// What was looked at before the metadata server.
    fn nothing_found(&self) -> String {
        let gcloud = match self.gcloud_file() {
            Some(path) => format!("{} does not exist", path.display()),
            None => "HOME is not set (for gcloud's credentials)".to_owned(),
        };
        format!("no Google credentials found: GOOGLE_APPLICATION_CREDENTIALS is not set, {gcloud}")
    }

    fn var(&self, name: &str) -> Option<String> {
        self.inner
            .vars
            .get(name)
            .filter(|v| !v.trim().is_empty())
            .cloned()
    }
}

/// `text` without the answer bodies google-cloud-auth quotes (`body=<...>`): a token
/// endpoint's refusal, or a proxy echoing the request, may hold the refresh token, the
/// assertion or the client secret.
fn without_bodies(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("body=<") {
        out.push_str(&rest[..at]);
        out.push_str("body=<not shown>");
        let after = &rest[at + "body=<".len()..];
        // The body ends at the last `>` before the next quoted body, or the text's end.
        let until = after.find("body=<").unwrap_or(after.len());
        rest = match after[..until].rfind('>') {
            Some(end) => &after[end + 1..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

impl fmt::Debug for GoogleCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GoogleCredentials")
            .field("token_provider", &self.inner.provider.is_some())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_bodies_are_never_quoted_back() {
        let said =
            "failed to refresh user access token, body=<{\"refresh_token\":\"secret-r\"}> and \
                    future attempts will not succeed";
        let shown = without_bodies(said);
        assert!(!shown.contains("secret-r"), "{shown}");
        assert!(
            shown.contains("body=<not shown> and future attempts"),
            "{shown}"
        );
        assert_eq!(without_bodies("no body here"), "no body here");
        assert!(!without_bodies("body=<cut secret-x").contains("secret-x"));
    }
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Credentials whose provider gives a token for `first` the first time and fails after,
    /// each call taking `takes`; and how many times it was asked.
    fn failing_after_one(
        first: Duration,
        takes: Duration,
    ) -> (GoogleCredentials, Arc<AtomicUsize>) {
        let asked = Arc::new(AtomicUsize::new(0));
        let counter = asked.clone();
        let credentials = GoogleCredentials::from_token_provider(move || {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            async move {
                tokio::time::sleep(takes).await;
                match n {
                    0 => Ok(("t0".to_owned(), first)),
                    n => Err(format!("down {n}").into()),
                }
            }
        });
        (credentials, asked)
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_refresh_keeps_the_current_token_and_is_tried_again_a_minute_later() {
        // Good for 200 s: within the margin, so a request a minute after a try fetches again.
        let (credentials, asked) = failing_after_one(Duration::from_secs(200), Duration::ZERO);
        assert_eq!(credentials.access_token().await.unwrap(), "t0");
        assert_eq!(credentials.access_token().await.unwrap(), "t0");
        assert_eq!(
            asked.load(Ordering::SeqCst),
            1,
            "not tried again within a minute"
        );
        tokio::time::advance(RETRY_AFTER_TRY + Duration::from_secs(1)).await;
        assert_eq!(
            credentials.access_token().await.unwrap(),
            "t0",
            "kept on failure"
        );
        assert_eq!(asked.load(Ordering::SeqCst), 2);
        assert_eq!(credentials.access_token().await.unwrap(), "t0");
        assert_eq!(
            asked.load(Ordering::SeqCst),
            2,
            "not tried again within a minute"
        );
        tokio::time::advance(RETRY_AFTER_TRY + Duration::from_secs(1)).await;
        assert_eq!(credentials.access_token().await.unwrap(), "t0");
        assert_eq!(asked.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn requests_waiting_for_a_failed_fetch_share_its_error() {
        // The first token has already expired: no request has a good one.
        let (credentials, asked) = failing_after_one(Duration::ZERO, Duration::from_secs(1));
        credentials.access_token().await.unwrap();
        let (a, b, c) = tokio::join!(
            credentials.access_token(),
            credentials.access_token(),
            credentials.access_token()
        );
        for result in [a, b, c] {
            let error = result.unwrap_err().to_string();
            assert!(
                error.contains("the Google token provider failed: down 1"),
                "{error}"
            );
        }
        assert_eq!(asked.load(Ordering::SeqCst), 2, "one fetch for the three");
    }
}
