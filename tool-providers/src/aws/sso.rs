//! AWS IAM Identity Center (SSO): a profile's role credentials, got with the token that
//! `aws sso login` cached (`sso_token.rs`).

use std::time::{Duration, UNIX_EPOCH};

use reqwest::header::HeaderValue;
use serde::Deserialize;

use super::dns_suffix;
use super::found::Found;
use super::profile_files::{Profile, ProfileFiles};
use super::sigv4::{uri_encode, AwsCredentials};
use super::sso_token::{Session, TokenSource};
use crate::http::{body_start, error_chain, tls_missing};
use tool_model::ModelError;

/// Where the SSO services are reached, when not at the region's endpoints.
pub(crate) struct SsoEndpoints {
    /// The portal (`AWS_ENDPOINT_URL_SSO` or `AWS_ENDPOINT_URL`).
    pub portal: Option<String>,
    /// SSO OIDC (`AWS_ENDPOINT_URL_SSO_OIDC` or `AWS_ENDPOINT_URL`).
    pub oidc: Option<String>,
}

/// A profile's SSO settings.
pub(crate) struct SsoRole {
    /// The portal's region.
    pub region: String,
    pub account_id: String,
    pub role_name: String,
    pub start_url: String,
    /// The `sso_session` named, whose token is refreshed; `None` for the legacy settings.
    pub session: Option<String>,
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
        let (region, start_url) = match profile.get("sso_session") {
            Some(session) => {
                let section = files.sso_session(session).ok_or_else(|| {
                    ModelError::Setup(format!(
                        "the AWS profile `{name}` names the sso_session `{session}`, which has \
                         no [sso-session {session}] section"
                    ))
                })?;
                let get = |key: &str| section.get(key).filter(|v| !v.is_empty());
                let in_section = |key: &str| format!("{key} in [sso-session {session}]");
                let url =
                    get("sso_start_url").ok_or_else(|| missing(&in_section("sso_start_url")))?;
                let region = get("sso_region").ok_or_else(|| missing(&in_section("sso_region")))?;
                (region.clone(), url.clone())
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
        if !super::is_region(&region) {
            return Err(ModelError::Setup(format!(
                "the AWS profile `{name}`'s sso_region is not a region name (lower-case \
                 letters, digits and '-'): the SSO token would go to another host"
            )));
        }
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
            start_url,
            session: profile.get("sso_session").map(str::to_owned),
        }))
    }

    /// The role's credentials from the portal (`portal`, else the region's), with the cached
    /// token, an `sso-session`'s refreshed through SSO OIDC (`oidc`, else the region's) when
    /// it is about to expire. An expired token that cannot be refreshed, or a missing one, is
    /// an error that says to log in again.
    pub(crate) async fn credentials(
        &self,
        client: &reqwest::Client,
        files: &ProfileFiles,
        profile: &str,
        endpoints: SsoEndpoints,
    ) -> Result<Found, ModelError> {
        let suffix = dns_suffix(&self.region);
        let source = TokenSource {
            profile,
            cache_key: self.session.as_deref().unwrap_or(&self.start_url),
            session: self.session.as_ref().map(|_| Session {
                start_url: &self.start_url,
                region: &self.region,
                oidc: endpoints
                    .oidc
                    .unwrap_or_else(|| format!("https://oidc.{}.{suffix}", self.region)),
            }),
        };
        let token = source.access_token(client, files.home()).await?;
        let endpoint = endpoints
            .portal
            .unwrap_or_else(|| format!("https://portal.sso.{}.{suffix}", self.region));
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
        if let Some(why) = tls_missing(&url) {
            return Err(failed(why.to_owned()));
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
        let text = crate::http::credential_text(answer).await.map_err(failed)?;
        if status != 200 {
            return Err(failed(format!("HTTP {status}: {}", body_start(&text, 200))));
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
