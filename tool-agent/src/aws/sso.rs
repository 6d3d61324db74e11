//! AWS IAM Identity Center (SSO): a profile's role credentials, got with the token that
//! `aws sso login` cached in `~/.aws/sso/cache`.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderValue;
use serde::Deserialize;
use sha1::{Digest, Sha1};

use super::dns_suffix;
use super::found::Found;
use super::profile_files::{Profile, ProfileFiles};
use super::sigv4::{uri_encode, AwsCredentials};
use super::time::parse_time;
use crate::http::error_chain;
use crate::model::ModelError;

/// A profile's SSO settings.
pub(crate) struct SsoRole {
    /// The portal's region.
    pub region: String,
    pub account_id: String,
    pub role_name: String,
    /// What the token cache is keyed by: the `sso_session`'s name, else the start URL.
    pub cache_key: String,
}

impl SsoRole {
    /// The SSO settings of the profile `name`, when it names an SSO account or role
    /// (`sso_account_id`, `sso_role_name`), as botocore tells an SSO profile: both of those,
    /// with `sso_session` (whose `[sso-session]` section gives the start URL and region) or
    /// the legacy `sso_start_url` and `sso_region`. An error names what is missing.
    pub(crate) fn of(
        files: &ProfileFiles,
        name: &str,
        profile: &Profile<'_>,
    ) -> Result<Option<SsoRole>, ModelError> {
        if profile.get("sso_account_id").is_none() && profile.get("sso_role_name").is_none() {
            return Ok(None);
        }
        let missing = |what: &str| {
            ModelError::Setup(format!(
                "the AWS profile `{name}` uses AWS SSO but has no {what}"
            ))
        };
        let (region, cache_key) = match profile.get("sso_session") {
            Some(session) => {
                let section = files.sso_session(session).ok_or_else(|| {
                    ModelError::Setup(format!(
                        "the AWS profile `{name}` names the sso_session `{session}`, which has \
                         no [sso-session {session}] section"
                    ))
                })?;
                let get = |key: &str| section.get(key).filter(|v| !v.is_empty());
                let in_section = |key: &str| format!("{key} in [sso-session {session}]");
                get("sso_start_url").ok_or_else(|| missing(&in_section("sso_start_url")))?;
                let region = get("sso_region").ok_or_else(|| missing(&in_section("sso_region")))?;
                (region.clone(), session.to_owned())
            }
            None => {
                let url = profile
                    .get("sso_start_url")
                    .ok_or_else(|| missing("sso_start_url (or sso_session)"))?;
                let region = profile
                    .get("sso_region")
                    .ok_or_else(|| missing("sso_region"))?;
                (region.to_owned(), url.to_owned())
            }
        };
        Ok(Some(SsoRole {
            region,
            account_id: profile
                .get("sso_account_id")
                .ok_or_else(|| missing("sso_account_id"))?
                .to_owned(),
            role_name: profile
                .get("sso_role_name")
                .ok_or_else(|| missing("sso_role_name"))?
                .to_owned(),
            cache_key,
        }))
    }

    /// The role's credentials from the portal (`endpoint`, else the region's), with the
    /// cached token. An expired or missing token is an error that says to log in again.
    pub(crate) async fn credentials(
        &self,
        client: &reqwest::Client,
        files: &ProfileFiles,
        profile: &str,
        endpoint: Option<String>,
    ) -> Result<Found, ModelError> {
        let token = self.cached_token(files, profile)?;
        let endpoint = endpoint.unwrap_or_else(|| {
            let suffix = dns_suffix(&self.region);
            format!("https://portal.sso.{}.{suffix}", self.region)
        });
        let url = format!(
            "{}/federation/credentials?role_name={}&account_id={}",
            endpoint.trim_end_matches('/'),
            uri_encode(&self.role_name, false),
            uri_encode(&self.account_id, false)
        );
        let failed = |why: String| {
            ModelError::Setup(format!(
                "AWS SSO's GetRoleCredentials for the profile `{profile}` failed: {why}"
            ))
        };
        if url.starts_with("https:") && !cfg!(feature = "rustls") {
            return Err(failed(
                "HTTPS needs ai-tool's `agent-tls` feature (tool-agent's `rustls`)".to_owned(),
            ));
        }
        let mut token = HeaderValue::from_str(token.trim())
            .map_err(|_| failed("the cached token is not a header value".to_owned()))?;
        token.set_sensitive(true);
        let answer = client
            .get(&url)
            .header("x-amz-sso_bearer_token", token)
            .send()
            .await
            .map_err(|e| failed(error_chain(&e)))?;
        let status = answer.status().as_u16();
        let text = answer.text().await.map_err(|e| failed(error_chain(&e)))?;
        if status != 200 {
            let said: String = text.trim().chars().take(200).collect();
            return Err(failed(format!("HTTP {status}: {said}")));
        }
        let answer: RoleCredentialsAnswer = serde_json::from_str(&text)
            .map_err(|e| failed(format!("the answer has no role credentials: {e}")))?;
        let role = answer.role_credentials;
        Ok(Found {
            credentials: AwsCredentials::new(role.access_key_id, role.secret_access_key)
                .with_session_token(role.session_token),
            expires: Some(UNIX_EPOCH + Duration::from_millis(role.expiration)),
        })
    }

    /// The access token `aws sso login` cached, while it is good.
    fn cached_token(&self, files: &ProfileFiles, profile: &str) -> Result<String, ModelError> {
        let login = format!("run `aws sso login --profile {profile}`");
        let path = self.cache_path(files).ok_or_else(|| {
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
        let cached: CachedToken = serde_json::from_str(&text).map_err(|e| {
            ModelError::Setup(format!(
                "the AWS SSO token in {} cannot be read ({e}): {login}",
                path.display()
            ))
        })?;
        let expires = parse_time(&cached.expires_at).ok_or_else(|| {
            ModelError::Setup(format!(
                "the AWS SSO token in {} has an expiresAt that is not a time: {login}",
                path.display()
            ))
        })?;
        if expires <= SystemTime::now() {
            return Err(ModelError::Setup(format!(
                "the AWS SSO token of the profile `{profile}` expired at {}: {login}",
                cached.expires_at
            )));
        }
        Ok(cached.access_token)
    }

    /// `~/.aws/sso/cache/{sha1 of the key}.json`.
    fn cache_path(&self, files: &ProfileFiles) -> Option<PathBuf> {
        let digest = Sha1::digest(self.cache_key.as_bytes());
        let name: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        let home = files.home()?;
        Some(home.join(".aws/sso/cache").join(format!("{name}.json")))
    }
}

/// A token as the AWS CLI caches it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CachedToken {
    access_token: String,
    expires_at: String,
}

/// GetRoleCredentials' answer.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RoleCredentialsAnswer {
    role_credentials: RoleCredentials,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RoleCredentials {
    access_key_id: String,
    secret_access_key: String,
    session_token: String,
    /// Milliseconds since the epoch.
    expiration: u64,
}
