//! OAuth for imports over HTTP (MCP's authorization, protocol 2025-11-25), on rmcp's `auth`
//! (feature `oauth`): what an import does when a server answers `401` or `403`.
//!
//! Discovery starts from the server's own challenge (the `WWW-Authenticate` header of the
//! request it refused: its protected-resource metadata, then the authorization server's), so
//! metadata published only where the challenge points is found too. The client is the one
//! given ([`OAuthOptions::with_preregistered_client`]), else its client ID metadata document
//! when the authorization server takes one ([`OAuthOptions::with_client_metadata_url`]), else
//! one registered on the spot (dynamic client registration). The authorization code is
//! asked for with PKCE (S256) and the scopes the challenge names (else those the resource
//! lists, else none); an [`Authorizer`] takes the user through the authorization URL and
//! brings back where it redirected. A `403` naming scopes not granted yet asks for them
//! (step-up); one naming scopes already granted is an error, not another authorization.
//!
//! An import authorizes at most
//! [`MAX_AUTHORIZATIONS_PER_REQUEST`](crate::MAX_AUTHORIZATIONS_PER_REQUEST) times for one
//! request, and requests that fail together wait for one authorization.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::transport::auth::{
    AuthClient, AuthorizationCallback, AuthorizationManager, OAuthClientConfig,
    WWWAuthenticateParams,
};
use tokio::sync::Mutex;

/// What an [`Authorizer`] returns.
pub type AuthorizeFuture<'a> = Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>>;

/// Takes the user through an authorization: given the authorization URL, returns the URL the
/// authorization server redirected to (holding `code` and `state`).
pub trait Authorizer: Send + Sync {
    /// Where the authorization server sends the user back (registered with the client).
    fn redirect_uri(&self) -> String;

    /// Has the user authorize at `url`; the redirect's URL, or why not.
    fn authorize<'a>(&'a self, url: &'a str) -> AuthorizeFuture<'a>;
}

/// An [`Authorizer`] without a user: it asks for the authorization URL itself and takes the
/// redirect it answers with. For an authorization server that grants without a login page
/// (a test server, the conformance suite's); a real one answers with its login page, which is
/// an error naming it. It fetches the authorization endpoint the server's metadata names:
/// use it only with servers you trust, as tests do.
#[derive(Debug, Clone)]
pub struct FollowRedirect {
    redirect_uri: String,
    http: reqwest::Client,
}

impl FollowRedirect {
    /// Redirects are expected to `redirect_uri` (nothing needs to listen there).
    pub fn new(redirect_uri: impl Into<String>) -> Self {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        FollowRedirect {
            redirect_uri: redirect_uri.into(),
            http,
        }
    }
}

impl Authorizer for FollowRedirect {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize<'a>(&'a self, url: &'a str) -> AuthorizeFuture<'a> {
        Box::pin(async move {
            let response = self
                .http
                .get(url)
                .send()
                .await
                .map_err(|e| format!("asking for the authorization: {e}"))?;
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .map(str::to_owned);
            match location {
                Some(location) if response.status().is_redirection() => Ok(location),
                _ => Err(format!(
                    "the authorization server answered {} rather than a redirect: it wants a \
                     person to log in (use an authorizer that shows them the URL)",
                    response.status()
                )),
            }
        })
    }
}

/// How an import authorizes.
#[derive(Clone)]
pub struct OAuthOptions {
    pub(crate) authorizer: Arc<dyn Authorizer>,
    pub(crate) client_name: String,
    pub(crate) preregistered: Option<(String, Option<String>)>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) scopes: Vec<String>,
    pub(crate) allow_private_addresses: bool,
    pub(crate) token_file: Option<crate::TokenFile>,
}

/// The client secret stays out of `Debug`.
impl std::fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("client_name", &self.client_name)
            .field(
                "preregistered_client",
                &self.preregistered.as_ref().map(|(id, _)| id),
            )
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("allow_private_addresses", &self.allow_private_addresses)
            .field("token_file", &self.token_file.as_ref().map(|f| f.path()))
            .finish_non_exhaustive()
    }
}

impl OAuthOptions {
    /// Authorizing through `authorizer`, registering as `ai-tool` when the server needs a
    /// client registered.
    pub fn new(authorizer: impl Authorizer + 'static) -> Self {
        OAuthOptions {
            authorizer: Arc::new(authorizer),
            client_name: "ai-tool".to_owned(),
            preregistered: None,
            client_metadata_url: None,
            scopes: Vec::new(),
            allow_private_addresses: false,
            token_file: None,
        }
    }

    /// The name a registered client is given.
    pub fn with_client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// A client registered beforehand with the authorization server: its id and, for a
    /// confidential client, its secret.
    pub fn with_preregistered_client(
        mut self,
        client_id: impl Into<String>,
        client_secret: Option<String>,
    ) -> Self {
        self.preregistered = Some((client_id.into(), client_secret));
        self
    }

    /// The `https` URL of this client's metadata document, its id where the authorization
    /// server takes client ID metadata documents.
    pub fn with_client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The scopes asked for when neither the server's challenge nor its metadata names any.
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Lets discovery follow metadata to private network addresses (an authorization server
    /// inside the network); by default only the server's own kind of address, loopback for a
    /// loopback server, is reached.
    pub fn allowing_private_addresses(mut self) -> Self {
        self.allow_private_addresses = true;
        self
    }

    /// Keeps the tokens in `file` between runs ([`TokenFile`](crate::TokenFile): mode 0600,
    /// refused when others may read it): an import started again uses the token kept there
    /// (refreshed when it expired) and authorizes only when the server refuses it. Use one
    /// file per server.
    pub fn with_token_file(mut self, file: crate::TokenFile) -> Self {
        self.token_file = Some(file);
        self
    }
}

/// An import's authorization: rmcp's manager (which the HTTP client asks for the token of
/// each request), and what it took to get there.
pub(crate) struct OAuthSession {
    manager: Arc<Mutex<AuthorizationManager>>,
    options: OAuthOptions,
    base: reqwest::Url,
    /// Held while an authorization is made, so that requests failing together wait for one.
    authorizing: Mutex<()>,
    /// How many authorizations were made: a request that failed under an older one is asked
    /// again without another. Read without waiting for an authorization in progress.
    generation: std::sync::atomic::AtomicU64,
    /// Whether a client is configured (given, by its metadata document, or registered).
    configured: std::sync::atomic::AtomicBool,
}

/// The HTTP client of an import with OAuth: each request carries the manager's token.
pub(crate) type AuthorizedHttp = AuthClient<reqwest::Client>;

impl OAuthSession {
    /// A session for the server at `url`, and the HTTP client its requests go through.
    pub(crate) async fn new(
        url: &str,
        options: OAuthOptions,
    ) -> Result<(Arc<Self>, AuthorizedHttp), String> {
        let base = reqwest::Url::parse(url).map_err(|e| format!("`{url}` is not a URL: {e}"))?;
        let mut manager = match options.allow_private_addresses {
            true => AuthorizationManager::new_allowing_private_addresses(url).await,
            false => AuthorizationManager::new(url).await,
        }
        .map_err(|e| format!("OAuth: {e}"))?;
        if let Some(file) = &options.token_file {
            manager.set_credential_store(file.clone());
            // A kept token is used as it is; a new authorization, if the server refuses it,
            // configures the client again (a loopback redirect's port changes between runs).
            match manager.initialize_from_store().await {
                Ok(found) => {
                    tracing::debug!(file = %file.path().display(), found, "kept OAuth tokens")
                }
                Err(rmcp::transport::auth::AuthError::CredentialStoreError(why)) => {
                    return Err(why)
                }
                Err(e) => tracing::warn!(
                    file = %file.path().display(),
                    "the kept OAuth token is not used: {e}"
                ),
            }
        }
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| format!("an HTTP client: {e}"))?;
        let client = AuthClient::new(http, manager);
        let session = OAuthSession {
            manager: Arc::clone(&client.auth_manager),
            options,
            base,
            authorizing: Mutex::new(()),
            generation: std::sync::atomic::AtomicU64::new(0),
            configured: std::sync::atomic::AtomicBool::new(false),
        };
        Ok((Arc::new(session), client))
    }

    /// How many authorizations were made so far.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Authorizes after a request made under authorization `seen` was refused with
    /// `challenge` (its `WWW-Authenticate`, when it had one). Another request's authorization
    /// made meanwhile is taken as this one's.
    pub(crate) async fn authorize(&self, challenge: Option<&str>, seen: u64) -> Result<(), String> {
        let _one_at_a_time = self.authorizing.lock().await;
        if self.generation.load(std::sync::atomic::Ordering::Acquire) != seen {
            return Ok(());
        }
        let params = challenge.map(|c| WWWAuthenticateParams::parse(c, &self.base));
        let configured = self.configured.load(std::sync::atomic::Ordering::Acquire);
        let step_up = params
            .as_ref()
            .filter(|p| p.is_insufficient_scope() && configured);
        let url = match step_up {
            Some(p) => {
                let manager = self.manager.lock().await;
                let required = p.scope.clone().unwrap_or_default();
                let granted = manager.get_current_scopes().await;
                if required
                    .split_whitespace()
                    .all(|s| granted.iter().any(|g| g == s))
                {
                    return Err(format!(
                        "the server refuses the token for want of scopes it was granted \
                         (`{required}`): not asking again"
                    ));
                }
                manager
                    .request_scope_upgrade(&required)
                    .await
                    .map_err(|e| format!("asking for scopes `{required}`: {e}"))?
            }
            None => {
                self.prepare(challenge).await?;
                let manager = self.manager.lock().await;
                let defaults: Vec<&str> = self.options.scopes.iter().map(String::as_str).collect();
                let scopes = manager.select_initial_scopes(&defaults).await;
                let scopes: Vec<&str> = scopes.iter().map(String::as_str).collect();
                manager
                    .get_authorization_url(&scopes)
                    .await
                    .map_err(|e| format!("the authorization URL: {e}"))?
            }
        };
        let redirected = self.options.authorizer.authorize(&url).await?;
        let callback = AuthorizationCallback::from_redirect_url(&redirected)
            .map_err(|e| format!("the authorization's redirect: {e}"))?;
        let manager = self.manager.lock().await;
        manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await
            .map_err(|e| format!("exchanging the authorization code for a token: {e}"))?;
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Ok(())
    }

    /// Discovers the authorization server (from `challenge` first) and, the first time,
    /// configures the client: given, by its metadata document, or registered.
    async fn prepare(&self, challenge: Option<&str>) -> Result<(), String> {
        let mut manager = self.manager.lock().await;
        let found = manager
            .resolve_metadata_from_challenge(challenge)
            .await
            .map_err(|e| format!("discovering the authorization server: {e}"))?;
        let takes_metadata_documents = found
            .metadata
            .additional_fields
            .get("client_id_metadata_document_supported")
            == Some(&serde_json::Value::Bool(true));
        manager.set_metadata(found.metadata);
        if self.configured.load(std::sync::atomic::Ordering::Acquire) {
            return Ok(());
        }
        let redirect = self.options.authorizer.redirect_uri();
        let config = match (
            &self.options.preregistered,
            &self.options.client_metadata_url,
        ) {
            (Some((id, secret)), _) => {
                let config = OAuthClientConfig::new(id.clone(), redirect);
                match secret {
                    Some(secret) => config.with_client_secret(secret.clone()),
                    None => config,
                }
            }
            (None, Some(document)) if takes_metadata_documents => {
                OAuthClientConfig::new(document.clone(), redirect)
            }
            (None, _) => {
                let scopes: Vec<&str> = self.options.scopes.iter().map(String::as_str).collect();
                manager
                    .register_client(&self.options.client_name, &redirect, &scopes)
                    .await
                    .map_err(|e| {
                        format!(
                            "registering a client (give one registered beforehand with \
                             OAuthOptions::with_preregistered_client): {e}"
                        )
                    })?
            }
        };
        manager
            .configure_client(config)
            .map_err(|e| format!("configuring the client: {e}"))?;
        self.configured
            .store(true, std::sync::atomic::Ordering::Release);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_secret_stays_out_of_debug() {
        let options = OAuthOptions::new(FollowRedirect::new("http://localhost:3000/callback"))
            .with_preregistered_client("ada", Some("s3cret".into()));
        let shown = format!("{options:?}");
        assert!(
            shown.contains("ada") && !shown.contains("s3cret"),
            "{shown}"
        );
    }

    #[tokio::test]
    async fn a_login_page_instead_of_a_redirect_is_an_error_naming_it() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf).await;
            let page = "<html>log in</html>";
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = stream.write_all(answer.as_bytes()).await;
        });
        let authorizer = FollowRedirect::new("http://localhost:3000/callback");
        let error = authorizer
            .authorize(&format!("http://{addr}/authorize"))
            .await
            .unwrap_err();
        assert!(
            error.contains("200 OK") && error.contains("log in"),
            "{error}"
        );
    }
}
