//! The access token `aws sso login` caches in `~/.aws/sso/cache`, and its refresh: an
//! `sso-session`'s token carries a refresh token and its client's registration, with which
//! SSO OIDC's `CreateToken` gives a new one before it expires, as botocore does.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use serde::Deserialize;
use serde_json::{json, Value};
use sha1::{Digest, Sha1};

use super::time::{parse_time, rfc3339};
use crate::http::{error_chain, oauth_refusal, tls_missing};
use tool_model::ModelError;

/// A token expiring within this is refreshed, when it can be, as in botocore.
const REFRESH_WINDOW: Duration = Duration::from_secs(15 * 60);

/// Where a token is cached, and how it may be refreshed.
pub(crate) struct TokenSource<'a> {
    /// The profile, for messages.
    pub profile: &'a str,
    /// What the cache is keyed by: the `sso_session`'s name, else the start URL.
    pub cache_key: &'a str,
    /// The session's settings when the token is an `sso-session`'s, which alone are refreshed.
    pub session: Option<Session<'a>>,
}

/// An `sso-session`'s settings, written into a refreshed token as the AWS CLI writes them.
pub(crate) struct Session<'a> {
    pub start_url: &'a str,
    pub region: &'a str,
    /// SSO OIDC's endpoint: `AWS_ENDPOINT_URL_SSO_OIDC` or `AWS_ENDPOINT_URL`, else the
    /// region's.
    pub oidc: String,
}

/// A token as the AWS CLI caches it: the access token and when it expires, and for an
/// `sso-session`, what refreshes it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CachedToken {
    access_token: String,
    expires_at: String,
    refresh_token: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    registration_expires_at: Option<String>,
}

/// A token `CreateToken` gave, with the registration that asked for it.
struct Refreshed {
    access_token: String,
    expires: SystemTime,
    /// A new refresh token, if one came.
    refresh_token: Option<String>,
    client_id: String,
    client_secret: String,
    registration_expires_at: String,
}

impl Refreshed {
    /// The token as botocore writes a refreshed one to the cache: the session's start URL and
    /// region, the new access token and its expiry, the registration, and the new refresh
    /// token if one came (nothing else).
    fn cache_entry(&self, session: &Session<'_>) -> Value {
        let mut entry = json!({
            "startUrl": session.start_url,
            "region": session.region,
            "accessToken": self.access_token,
            "expiresAt": rfc3339(self.expires),
            "clientId": self.client_id,
            "clientSecret": self.client_secret,
            "registrationExpiresAt": self.registration_expires_at,
        });
        if let Some(refresh_token) = &self.refresh_token {
            entry["refreshToken"] = refresh_token.as_str().into();
        }
        entry
    }
}

/// The longest a refreshed token is taken to last; an answer that says more is malformed.
const LONGEST_LIFETIME: Duration = Duration::from_secs(366 * 86_400);

/// SSO OIDC's `CreateToken` answer.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreatedToken {
    access_token: String,
    /// Seconds.
    expires_in: u64,
    refresh_token: Option<String>,
}

impl TokenSource<'_> {
    /// The access token while it is good: refreshed first when it expires within
    /// [`REFRESH_WINDOW`] and can be (the new one written back to the cache, as the AWS CLI
    /// would); if the refresh fails, the cached token while it lasts. An expired token that
    /// cannot be refreshed is an error that says to log in again.
    pub(crate) async fn access_token(
        &self,
        client: &reqwest::Client,
        home: Option<&Path>,
    ) -> Result<String, ModelError> {
        let profile = self.profile;
        let login = format!("run `aws sso login --profile {profile}`");
        let path = home.map(|home| self.cache_path(home)).ok_or_else(|| {
            ModelError::Setup(format!(
                "the AWS SSO token cache is in the home directory, and HOME is not set ({login})"
            ))
        })?;
        let text = std::fs::read_to_string(&path).map_err(|e| {
            ModelError::Setup(format!(
                "no AWS SSO token for the profile `{profile}` in {} ({e}): {login}",
                path.display()
            ))
        })?;
        let unreadable = |why: String| {
            ModelError::Setup(format!(
                "the AWS SSO token in {} cannot be read ({why}): {login}",
                path.display()
            ))
        };
        let cached: CachedToken =
            serde_json::from_str(&text).map_err(|e| unreadable(e.to_string()))?;
        let expires = parse_time(&cached.expires_at).ok_or_else(|| {
            unreadable(format!(
                "its expiresAt `{}` is not a time",
                cached.expires_at
            ))
        })?;
        let left = expires.duration_since(SystemTime::now()).ok();
        let session = match &self.session {
            Some(session) if left.is_none_or(|left| left < REFRESH_WINDOW) => session,
            _ if left.is_some() => return Ok(cached.access_token),
            _ => {
                return Err(ModelError::Setup(format!(
                    "the AWS SSO token of the profile `{profile}` expired at {}: {login}",
                    cached.expires_at
                )))
            }
        };
        match refresh(client, session, &cached).await {
            Ok(refreshed) => {
                let token = refreshed.access_token.clone();
                if let Err(e) = write_cache(&path, &refreshed.cache_entry(session)) {
                    tracing::warn!(
                        "the refreshed AWS SSO token was not written to {}: {e}",
                        path.display()
                    );
                }
                Ok(token)
            }
            Err(why) if left.is_some() => {
                tracing::warn!(
                    "the AWS SSO token of the profile `{profile}` was not refreshed, the cached \
                     one kept until it expires at {}: {why}",
                    cached.expires_at
                );
                Ok(cached.access_token)
            }
            Err(why) => Err(ModelError::Setup(format!(
                "the AWS SSO token of the profile `{profile}` expired at {} and was not \
                 refreshed ({why}): {login}",
                cached.expires_at
            ))),
        }
    }

    /// `~/.aws/sso/cache/{sha1 of the key}.json`.
    fn cache_path(&self, home: &Path) -> PathBuf {
        let digest = Sha1::digest(self.cache_key.as_bytes());
        let name: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        home.join(".aws/sso/cache").join(format!("{name}.json"))
    }
}

/// A new token from SSO OIDC's `CreateToken`, with the cached token's refresh token and
/// registration; why not, when the cache has none or the registration has expired.
async fn refresh(
    client: &reqwest::Client,
    session: &Session<'_>,
    cached: &CachedToken,
) -> Result<Refreshed, String> {
    let (Some(refresh_token), Some(client_id), Some(client_secret), Some(registration)) = (
        &cached.refresh_token,
        &cached.client_id,
        &cached.client_secret,
        &cached.registration_expires_at,
    ) else {
        return Err("the cache holds no refresh token and client registration".to_owned());
    };
    match parse_time(registration) {
        Some(expires) if expires > SystemTime::now() => {}
        Some(_) => return Err(format!("the client registration expired at {registration}")),
        None => {
            return Err(format!(
                "the registrationExpiresAt `{registration}` is not a time"
            ))
        }
    }
    let url = format!("{}/token", session.oidc.trim_end_matches('/'));
    let failed = |why: String| format!("SSO OIDC's CreateToken at {url} failed: {why}");
    if let Some(why) = tls_missing(&url) {
        return Err(failed(why.to_owned()));
    }
    let body = json!({
        "clientId": client_id,
        "clientSecret": client_secret,
        "grantType": "refresh_token",
        "refreshToken": refresh_token,
    });
    let answer = client
        .post(&url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| failed(error_chain(&e)))?;
    let status = answer.status().as_u16();
    let text = crate::http::credential_text(answer).await.map_err(failed)?;
    if status != 200 {
        return Err(failed(oauth_refusal(status, &text)));
    }
    let created: CreatedToken =
        serde_json::from_str(&text).map_err(|e| failed(format!("the answer has no token: {e}")))?;
    let lifetime = Duration::from_secs(created.expires_in);
    let expires = SystemTime::now()
        .checked_add(lifetime)
        .filter(|_| lifetime <= LONGEST_LIFETIME)
        .ok_or_else(|| failed(format!("its expiresIn {} is too long", created.expires_in)))?;
    Ok(Refreshed {
        access_token: created.access_token,
        expires,
        refresh_token: created.refresh_token,
        client_id: client_id.clone(),
        client_secret: client_secret.clone(),
        registration_expires_at: registration.clone(),
    })
}

/// Writes the token beside the cache file and moves it over it, so that a reader never finds
/// half a token; readable by its owner only, as the AWS CLI leaves it.
fn write_cache(path: &Path, token: &Value) -> std::io::Result<()> {
    use std::io::Write;
    static WRITES: AtomicU64 = AtomicU64::new(0);
    // A name no other write uses, in this process or another, made anew (never an old file
    // whose mode is not the owner's only).
    let temporary = path.with_extension(format!(
        "json.{}-{}.tmp",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&temporary).and_then(|mut file| {
        file.write_all(token.to_string().as_bytes())?;
        file.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&temporary, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            std::fs::remove_file(&temporary).ok();
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refreshed_token_is_written_as_botocore_writes_it() {
        let session = Session {
            start_url: "https://s.awsapps.com/start",
            region: "eu-west-1",
            oidc: String::new(),
        };
        let refreshed = Refreshed {
            access_token: "new".into(),
            expires: std::time::UNIX_EPOCH + Duration::from_secs(1_795_552_012),
            refresh_token: None,
            client_id: "c".into(),
            client_secret: "s".into(),
            registration_expires_at: "2099-01-01T00:00:00Z".into(),
        };
        assert_eq!(
            refreshed.cache_entry(&session),
            json!({
                "startUrl": "https://s.awsapps.com/start", "region": "eu-west-1",
                "accessToken": "new", "expiresAt": "2026-11-24T20:26:52Z",
                "clientId": "c", "clientSecret": "s",
                "registrationExpiresAt": "2099-01-01T00:00:00Z",
            })
        );
    }

    #[test]
    fn the_cache_is_replaced_whole_and_owned_by_its_user() {
        let dir = std::env::temp_dir().join(format!("ai-tool-sso-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("token.json");
        std::fs::write(&path, "old").unwrap();
        write_cache(&path, &json!({ "accessToken": "a" })).unwrap();
        write_cache(&path, &json!({ "accessToken": "b" })).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            r#"{"accessToken":"b"}"#
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left");
        std::fs::remove_dir_all(dir).ok();
    }
}
