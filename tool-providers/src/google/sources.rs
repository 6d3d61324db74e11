//! Where a Google access token comes from: a credentials file (a service account's key, or a
//! user's refresh token from `gcloud auth application-default login`), or the metadata server
//! of a Google Cloud machine.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderValue;
use serde::Deserialize;

use super::jwt::ServiceAccountKey;
use crate::http::{error_chain, form_body, https_or_local, oauth_refusal, tls_missing};

/// The scope Vertex AI asks for.
pub(crate) const CLOUD_PLATFORM: &str = "https://www.googleapis.com/auth/cloud-platform";

/// Google's token endpoint, for user credentials that name none.
const TOKEN_URI: &str = "https://oauth2.googleapis.com/token";

/// How long the metadata server may take, as in Google's libraries.
const METADATA_TIMEOUT: Duration = Duration::from_secs(3);

/// An access token, and when it expires.
#[derive(Clone)]
pub(crate) struct Token {
    pub value: String,
    pub expires: SystemTime,
}

/// A credentials file, by its `type`.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum KeyFile {
    ServiceAccount {
        client_email: String,
        private_key: String,
        private_key_id: Option<String>,
        token_uri: Option<String>,
        project_id: Option<String>,
    },
    AuthorizedUser {
        client_id: String,
        client_secret: String,
        refresh_token: String,
        token_uri: Option<String>,
        quota_project_id: Option<String>,
    },
}

impl KeyFile {
    /// The file's credentials; why not, naming the file but nothing it holds.
    pub(crate) fn parse(text: &str, place: &str) -> Result<KeyFile, String> {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| format!("{place} is not JSON ({})", crate::http::json_problem(&e)))?;
        let kind = value
            .get("type")
            .and_then(|t| t.as_str())
            .unwrap_or_default()
            .to_owned();
        match kind.as_str() {
            "service_account" | "authorized_user" => serde_json::from_value(value).map_err(|e| {
                let problem = crate::http::json_problem(&e);
                format!("{place} is not a usable `{kind}` file ({problem})")
            }),
            "" => Err(format!("{place} has no `type`")),
            other => {
                // Google's other kinds are named; anything else is not quoted back (the file
                // is input, and its text may be anything).
                let known = [
                    "external_account",
                    "external_account_authorized_user",
                    "impersonated_service_account",
                    "gdch_service_account",
                ];
                let kind = match known.contains(&other) {
                    true => format!("`{other}`"),
                    false => "an unknown `type` of".to_owned(),
                };
                Err(format!(
                    "{place} holds {kind} credentials, which are not resolved here \
                     (service_account and authorized_user are): give a token with \
                     GoogleCredentials::from_token_provider"
                ))
            }
        }
    }

    /// The project the file names, if any.
    pub(crate) fn project(&self) -> Option<&str> {
        match self {
            KeyFile::ServiceAccount { project_id, .. } => project_id.as_deref(),
            KeyFile::AuthorizedUser { .. } => None,
        }
    }

    /// The project billed for quota (`x-goog-user-project`) that a user's file names (gcloud
    /// writes it; google-auth reads it from no other kind of file).
    pub(crate) fn quota_project(&self) -> Option<&str> {
        match self {
            KeyFile::ServiceAccount { .. } => None,
            KeyFile::AuthorizedUser {
                quota_project_id, ..
            } => quota_project_id.as_deref(),
        }
    }

    /// A new access token: a service account signs an assertion and trades it at its token
    /// endpoint; a user's refresh token is traded at Google's, or at the file's `token_uri`
    /// if it names one over HTTPS or on this machine (google-auth always uses Google's;
    /// gcloud writes none).
    pub(crate) async fn token(&self, client: &reqwest::Client) -> Result<Token, String> {
        match self {
            KeyFile::ServiceAccount {
                client_email,
                private_key,
                private_key_id,
                token_uri,
                ..
            } => {
                let token_uri = token_uri.as_deref().unwrap_or(TOKEN_URI);
                let key = ServiceAccountKey::from_pem(private_key, private_key_id.clone())?;
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                // Addressed to Google's token endpoint wherever it is sent, as google-auth does.
                let assertion = key.assertion(client_email, CLOUD_PLATFORM, TOKEN_URI, now)?;
                let form = [
                    ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                    ("assertion", assertion.as_str()),
                ];
                exchange(client, token_uri, &form).await
            }
            KeyFile::AuthorizedUser {
                client_id,
                client_secret,
                refresh_token,
                token_uri,
                ..
            } => {
                let form = [
                    ("grant_type", "refresh_token"),
                    ("client_id", client_id.as_str()),
                    ("client_secret", client_secret.as_str()),
                    ("refresh_token", refresh_token.as_str()),
                ];
                // The refresh token and client secret go to Google's endpoint, or to the
                // file's own over HTTPS or on this machine; google-auth always uses Google's.
                let url = match token_uri.as_deref() {
                    Some(uri) if https_or_loopback(uri) => uri,
                    Some(uri) => {
                        return Err(format!(
                            "its token_uri `{uri}` is neither HTTPS nor on this machine, and a \
                             refresh token is sent to no other"
                        ))
                    }
                    None => TOKEN_URI,
                };
                exchange(client, url, &form).await
            }
        }
    }
}

/// Whether `url` is HTTPS, or HTTP to a loopback address.
fn https_or_loopback(url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|url| https_or_local(&url, &[]))
}

/// An OAuth token endpoint's answer.
#[derive(Deserialize)]
struct Issued {
    access_token: String,
    /// Seconds.
    expires_in: Option<u64>,
}

impl Issued {
    fn token(self) -> Result<Token, String> {
        // Without a lifetime, an hour, as Google's tokens last.
        let lifetime = Duration::from_secs(self.expires_in.unwrap_or(3600));
        let expires = SystemTime::now()
            .checked_add(lifetime)
            .ok_or_else(|| format!("its expires_in {lifetime:?} is too long"))?;
        Ok(Token {
            value: self.access_token,
            expires,
        })
    }
}

/// POSTs `form` to the token endpoint `url`, and reads the token it gives.
async fn exchange(
    client: &reqwest::Client,
    url: &str,
    form: &[(&str, &str)],
) -> Result<Token, String> {
    let failed = |why: String| format!("the token endpoint {url} failed: {why}");
    if let Some(why) = tls_missing(url) {
        return Err(failed(why.to_owned()));
    }
    let body = form_body(form);
    let answer = client
        .post(url)
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body(body)
        .send()
        .await
        .map_err(|e| failed(error_chain(&e)))?;
    read_token(answer).await.map_err(failed)
}

/// The token the metadata server of a Google Cloud machine gives its service account, at
/// `host` (`GCE_METADATA_HOST`, else `169.254.169.254`). The answer must carry
/// `Metadata-Flavor: Google`, so that another cloud's metadata service at the same address is
/// not taken for it.
pub(crate) async fn metadata_token(client: &reqwest::Client, host: &str) -> Result<Token, String> {
    let url = format!(
        "http://{host}/computeMetadata/v1/instance/service-accounts/default/token?scopes={}",
        crate::percent::uri_encode(CLOUD_PLATFORM, false)
    );
    let answer = client
        .get(&url)
        .header("Metadata-Flavor", HeaderValue::from_static("Google"))
        .timeout(METADATA_TIMEOUT)
        .send()
        .await
        .map_err(|e| {
            format!(
                "the metadata server at {host} did not answer ({})",
                error_chain(&e)
            )
        })?;
    let flavor = answer.headers().get("metadata-flavor");
    if flavor.and_then(|v| v.to_str().ok()) != Some("Google") {
        return Err(format!(
            "{host} answered, but not as Google's metadata server (no Metadata-Flavor: Google)"
        ));
    }
    read_token(answer)
        .await
        .map_err(|why| format!("the metadata server at {host}: {why}"))
}

/// The token in a token endpoint's answer; its error otherwise.
async fn read_token(answer: reqwest::Response) -> Result<Token, String> {
    let status = answer.status().as_u16();
    let text = crate::http::credential_text(answer).await?;
    if status != 200 {
        return Err(oauth_refusal(status, &text));
    }
    let issued: Issued =
        serde_json::from_str(&text).map_err(|e| format!("the answer has no access_token ({e})"))?;
    issued.token()
}
