//! Where `BedrockModel` finds AWS credentials when none are given in code: the environment,
//! the shared profile files, a container's credentials endpoint, an EC2 instance's metadata
//! service. The order and the rules are botocore's, so that a machine set up for the AWS CLI
//! works as it is.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::io::Read;
use std::pin::Pin;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION};
use serde::Deserialize;

use super::profile_files::{split_command, Profile, ProfileFiles, Settings};
use super::sigv4::AwsCredentials;
use super::sso::SsoRole;
use super::sts::{RoleRequest, Sts};
use crate::http::error_chain;
use crate::model::ModelError;

/// Temporary credentials are fetched again once they expire within this.
const REFRESH_BEFORE_EXPIRY: Duration = Duration::from_secs(10 * 60);

/// After a failed fetch, how long expiring credentials serve before the next try.
const RETRY_REFRESH_AFTER: Duration = Duration::from_secs(60);

/// How long a container's credentials endpoint may take, and how many times it is tried, as in
/// botocore.
const CONTAINER_TIMEOUT: Duration = Duration::from_secs(2);
const CONTAINER_ATTEMPTS: u32 = 3;

/// How long the instance metadata service may take, as in botocore.
const IMDS_TIMEOUT: Duration = Duration::from_secs(1);

/// How long a `credential_process` may run.
const PROCESS_TIMEOUT: Duration = Duration::from_secs(120);

/// How long STS and the SSO portal may take.
const SERVICE_TIMEOUT: Duration = Duration::from_secs(30);

/// The container credentials host of ECS, for `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`.
const ECS_HOST: &str = "http://169.254.170.2";

/// The instance metadata service of EC2.
const IMDS_ENDPOINT: &str = "http://169.254.169.254";

/// AWS credentials found the way the AWS CLI and SDKs find them, in botocore's order:
///
/// 1. `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` (unless a profile was
///    chosen with [`AwsCredentialChain::with_profile`]);
/// 2. the profile (`AWS_DEFAULT_PROFILE`, else `AWS_PROFILE`, else `default`) in `~/.aws/credentials` and `~/.aws/config`
///    (or the files `AWS_SHARED_CREDENTIALS_FILE` and `AWS_CONFIG_FILE` name): the role it
///    assumes (`role_arn`, through STS `AssumeRole`, with the credentials of its
///    `source_profile`, itself resolved the same way, or of its `credential_source`:
///    `Environment`, `EcsContainer`, `Ec2InstanceMetadata`; with `external_id`,
///    `role_session_name`, `duration_seconds`), then a web identity role (its
///    `web_identity_token_file`, or `AWS_WEB_IDENTITY_TOKEN_FILE` and `AWS_ROLE_ARN` as EKS sets
///    them, through STS `AssumeRoleWithWebIdentity`), then its keys in the credentials file,
///    its `credential_process` (a command printing credentials as JSON), its keys in the
///    config file;
/// 3. a container's credentials endpoint (`AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` on ECS,
///    `AWS_CONTAINER_CREDENTIALS_FULL_URI` with `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` or
///    `AWS_CONTAINER_AUTHORIZATION_TOKEN` on EKS Pod Identity);
/// 4. an EC2 instance's role, from the instance metadata service (IMDSv2, or v1 where tokens
///    are not served; `AWS_EC2_METADATA_SERVICE_ENDPOINT` to move it,
///    `AWS_EC2_METADATA_DISABLED=true` to skip it).
///
/// A profile's AWS SSO role (`sso_session` or the legacy `sso_start_url`, with
/// `sso_account_id` and `sso_role_name`) comes with the token `aws sso login` cached in
/// `~/.aws/sso/cache`; an expired token is an error that says to log in again (it is not
/// refreshed here).
///
/// STS is reached at `https://sts.{region}.amazonaws.com` and the SSO portal at
/// `https://portal.sso.{region}.amazonaws.com` (HTTPS needs the `rustls` feature), or where
/// `AWS_ENDPOINT_URL_STS`, `AWS_ENDPOINT_URL_SSO` or `AWS_ENDPOINT_URL` say; the metadata
/// endpoints never through a proxy. Credentials that expire are fetched again ten minutes
/// before they do; if that fails, the current ones serve until they expire. A
/// `credential_process` may run for two minutes, and its command line is never shown in an
/// error (it may carry a secret). A role with an MFA code (`mfa_serial`) and `aws login`
/// profiles (`login_session`) are not resolved here: the error says so, and
/// [`BedrockModel::with_credentials_provider`](crate::BedrockModel::with_credentials_provider)
/// takes credentials from the AWS SDK instead.
///
/// ```
/// use tool_agent::AwsCredentialChain;
///
/// let chain = AwsCredentialChain::from_vars([
///     ("AWS_CONFIG_FILE", "/etc/app/aws-config"),
///     ("AWS_PROFILE", "bedrock"),
/// ]);
/// assert_eq!(chain.region(), None); // the file does not exist
/// ```
pub struct AwsCredentialChain {
    vars: HashMap<String, String>,
    profile: Option<String>,
    /// For STS and the SSO portal, through the environment's proxy if there is one.
    client: reqwest::Client,
    /// For the container's and the instance's metadata endpoints, never through a proxy.
    metadata: reqwest::Client,
    cached: std::sync::Mutex<CacheState>,
    /// Held by the request that fetches the credentials.
    refreshing: tokio::sync::Mutex<()>,
}

/// The credentials found, and when fetching them last failed.
#[derive(Default)]
struct CacheState {
    found: Option<Found>,
    failed_at: Option<Instant>,
}

/// Credentials found before that have not expired.
enum Current {
    /// Good for more than [`REFRESH_BEFORE_EXPIRY`].
    Fresh(AwsCredentials),
    /// To be fetched again.
    Expiring(AwsCredentials),
}

/// Credentials found, and when they expire.
#[derive(Clone, Debug)]
pub(crate) struct Found {
    pub credentials: AwsCredentials,
    pub expires: Option<SystemTime>,
}

impl Found {
    /// Credentials that do not expire.
    fn lasting(credentials: AwsCredentials) -> Self {
        Found {
            credentials,
            expires: None,
        }
    }
}

impl AwsCredentialChain {
    /// The chain over this process's environment (its `AWS_*` variables and `HOME`, read now).
    pub fn from_env() -> Self {
        Self::from_vars(
            std::env::vars().filter(|(name, _)| name.starts_with("AWS_") || name == "HOME"),
        )
    }

    /// The chain over these variables instead of the environment: for a process whose AWS
    /// settings live elsewhere, and for tests.
    pub fn from_vars<K: Into<String>, V: Into<String>>(
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        AwsCredentialChain {
            vars: vars
                .into_iter()
                .map(|(name, value)| (name.into(), value.into()))
                .collect(),
            profile: None,
            client: reqwest::Client::builder()
                .timeout(SERVICE_TIMEOUT)
                .build()
                .unwrap_or_default(),
            metadata: reqwest::Client::builder()
                .no_proxy()
                .build()
                .unwrap_or_default(),
            cached: std::sync::Mutex::default(),
            refreshing: tokio::sync::Mutex::new(()),
        }
    }

    /// This profile of the shared files, rather than `AWS_PROFILE`'s; as with the AWS CLI's
    /// `--profile`, the environment's keys are then not used.
    pub fn with_profile(mut self, profile: impl Into<String>) -> Self {
        self.profile = Some(profile.into());
        self
    }

    /// The region: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else the profile's `region` (in
    /// either file). `AWS_REGION` is the other AWS SDKs' variable; botocore reads only
    /// `AWS_DEFAULT_REGION`.
    pub fn region(&self) -> Option<String> {
        if let Some(region) = self
            .var("AWS_REGION")
            .or_else(|| self.var("AWS_DEFAULT_REGION"))
        {
            return Some(region);
        }
        let files = ProfileFiles::read(|name| self.var(name)).ok()?;
        let profile = files.profile(&self.profile_name())?;
        profile.get("region").map(str::to_owned)
    }

    /// The credentials to sign with now: those found before while they are good for ten
    /// minutes more, else found again. Within those ten minutes a request that finds another
    /// one fetching them, or a fetch that failed less than a minute ago, keeps the current
    /// ones rather than waiting; once they have expired, requests wait for the fetch. The
    /// error names each place looked in.
    pub async fn credentials(&self) -> Result<AwsCredentials, ModelError> {
        if let Some(current) = self.current() {
            match current {
                Current::Fresh(credentials) => return Ok(credentials),
                Current::Expiring(credentials) => {
                    let recently_failed = self
                        .state()
                        .failed_at
                        .is_some_and(|at| at.elapsed() < RETRY_REFRESH_AFTER);
                    let Ok(_refreshing) = self.refreshing.try_lock() else {
                        return Ok(credentials);
                    };
                    if recently_failed {
                        return Ok(credentials);
                    }
                    return match self.refresh().await {
                        Ok(fresh) => Ok(fresh),
                        Err(error) => {
                            tracing::warn!(
                                "AWS credentials not refreshed, the current ones kept: {error}"
                            );
                            Ok(credentials)
                        }
                    };
                }
            }
        }
        let _refreshing = self.refreshing.lock().await;
        // Another request may have fetched them while this one waited.
        if let Some(Current::Fresh(credentials)) = self.current() {
            return Ok(credentials);
        }
        self.refresh().await
    }

    /// The credentials found before, unless they have expired.
    fn current(&self) -> Option<Current> {
        let state = self.state();
        let found = state.found.as_ref()?;
        let Some(expires) = found.expires else {
            return Some(Current::Fresh(found.credentials.clone()));
        };
        let left = expires.duration_since(SystemTime::now()).ok()?;
        Some(match left > REFRESH_BEFORE_EXPIRY {
            true => Current::Fresh(found.credentials.clone()),
            false => Current::Expiring(found.credentials.clone()),
        })
    }

    /// Finds the credentials again and keeps them, or notes the failure.
    async fn refresh(&self) -> Result<AwsCredentials, ModelError> {
        let found = self.find().await;
        let mut state = self.state();
        match found {
            Ok(found) => {
                let credentials = found.credentials.clone();
                state.found = Some(found);
                state.failed_at = None;
                Ok(credentials)
            }
            Err(error) => {
                state.failed_at = Some(Instant::now());
                Err(error)
            }
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, CacheState> {
        self.cached
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn var(&self, name: &str) -> Option<String> {
        self.vars
            .get(name)
            .filter(|v| !v.trim().is_empty())
            .cloned()
    }

    fn profile_name(&self) -> String {
        self.profile
            .clone()
            .or_else(|| self.var("AWS_DEFAULT_PROFILE"))
            .or_else(|| self.var("AWS_PROFILE"))
            .unwrap_or_else(|| "default".to_owned())
    }

    /// Looks in each place in turn.
    async fn find(&self) -> Result<Found, ModelError> {
        let mut looked = Vec::new();
        if self.profile.is_none() {
            if let Some(credentials) = self.environment_keys()? {
                return Ok(Found::lasting(credentials));
            }
            looked.push("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set".to_owned());
        }
        let files = ProfileFiles::read(|name| self.var(name))?;
        let name = self.profile_name();
        let exists = files.profile(&name).is_some();
        if !exists && name != "default" {
            return Err(ModelError::Setup(format!(
                "the AWS profile `{name}` is in {}",
                files.neither()
            )));
        }
        if let Some(found) = self
            .profile_credentials(&files, &name, &mut Vec::new())
            .await?
        {
            return Ok(found);
        }
        looked.push(match exists {
            true => format!("the profile `{name}` has no credentials"),
            false => format!("{} has a `default` profile", files.neither()),
        });
        if let Some(found) = self.container_credentials().await? {
            return Ok(found);
        }
        looked.push("no container credentials endpoint is set".to_owned());
        match self.instance_role().await {
            Ok(found) => return Ok(found),
            Err(why) => looked.push(why),
        }
        Err(ModelError::Setup(format!(
            "no AWS credentials found (nor a Bedrock API key, AWS_BEARER_TOKEN_BEDROCK): {}",
            looked.join("; ")
        )))
    }

    /// What the profile `name` gives, in botocore's order: the role it assumes (with the
    /// credentials of its `source_profile` or `credential_source`), a web identity role (for
    /// the profile asked for, also from `AWS_WEB_IDENTITY_TOKEN_FILE` and `AWS_ROLE_ARN`), its
    /// AWS SSO role, its keys in the credentials file, its `credential_process`, its keys in
    /// the config file.
    /// `None` when it gives none. `visited` holds the profiles that led here.
    fn profile_credentials<'a>(
        &'a self,
        files: &'a ProfileFiles,
        name: &'a str,
        visited: &'a mut Vec<String>,
    ) -> Pin<Box<dyn Future<Output = Result<Option<Found>, ModelError>> + Send + 'a>> {
        Box::pin(async move {
            let asked_for = visited.is_empty();
            let looped = visited.iter().any(|v| v == name);
            visited.push(name.to_owned());
            if looped {
                return Err(ModelError::Setup(format!(
                    "the AWS profiles' source_profile settings form a loop: {}",
                    visited.join(" -> ")
                )));
            }
            let profile = files.profile(name);
            let get = |key: &str| profile.as_ref().and_then(|p| p.get(key));
            let has_keys =
                get("aws_access_key_id").is_some() || get("aws_secret_access_key").is_some();
            // A source profile with keys gives its keys, whatever else it holds, as in botocore.
            if let (false, true, Some(profile)) = (asked_for, has_keys, &profile) {
                return own_credentials(name, profile).await;
            }
            if get("login_session").is_some() && !has_keys {
                return Err(unresolved(&format!(
                    "the AWS profile `{name}` gets its credentials through `aws login` \
                     (login_session)"
                )));
            }
            let web_identity_file = get("web_identity_token_file");
            if let (Some(role_arn), None, Some(profile)) =
                (get("role_arn"), web_identity_file, &profile)
            {
                if get("mfa_serial").is_some() {
                    return Err(unresolved(&format!(
                        "the AWS profile `{name}` assumes a role that asks for an MFA code \
                         (mfa_serial)"
                    )));
                }
                let source = self.role_source(files, name, profile, visited).await?;
                let duration = match get("duration_seconds") {
                    Some(text) => Some(text.parse::<u32>().map_err(|_| {
                        ModelError::Setup(format!(
                            "the duration_seconds of the AWS profile `{name}` is `{text}`, not \
                             a whole number of seconds"
                        ))
                    })?),
                    None => None,
                };
                let request = RoleRequest {
                    role_arn,
                    session_name: get("role_session_name"),
                    external_id: get("external_id"),
                    duration_seconds: duration,
                };
                return self.sts().assume_role(&request, &source).await.map(Some);
            }
            // A web identity: each setting from the environment first, then the profile, as in
            // botocore; the environment only for the profile asked for, and not for one chosen
            // with `with_profile`.
            let setting = |key: &str, variable: &str| {
                self.var(variable)
                    .filter(|_| asked_for && self.profile.is_none())
                    .or_else(|| get(key).map(str::to_owned))
            };
            if let Some(file) = setting("web_identity_token_file", "AWS_WEB_IDENTITY_TOKEN_FILE") {
                let role_arn = setting("role_arn", "AWS_ROLE_ARN").ok_or_else(|| {
                    ModelError::Setup(format!(
                        "the web identity token file {file} is set, but no role to assume \
                         (AWS_ROLE_ARN, or role_arn in the AWS profile `{name}`)"
                    ))
                })?;
                let token = std::fs::read_to_string(&file).map_err(|e| {
                    ModelError::Setup(format!(
                        "cannot read the web identity token file {file}: {e}"
                    ))
                })?;
                let session_name = setting("role_session_name", "AWS_ROLE_SESSION_NAME");
                let request = RoleRequest {
                    role_arn: &role_arn,
                    session_name: session_name.as_deref(),
                    external_id: None,
                    duration_seconds: None,
                };
                return self
                    .sts()
                    .assume_role_with_web_identity(&request, &token)
                    .await
                    .map(Some);
            }
            let Some(profile) = profile else {
                return Ok(None);
            };
            if let Some(sso) = SsoRole::of(files, name, &profile)? {
                let endpoint = self
                    .var("AWS_ENDPOINT_URL_SSO")
                    .or_else(|| self.var("AWS_ENDPOINT_URL"));
                let found = sso.credentials(&self.client, files, name, endpoint).await?;
                return Ok(Some(found));
            }
            own_credentials(name, &profile).await
        })
    }

    /// The credentials that assume the role of profile `name`: its `source_profile`'s, or
    /// those its `credential_source` names.
    async fn role_source(
        &self,
        files: &ProfileFiles,
        name: &str,
        profile: &Profile<'_>,
        visited: &mut Vec<String>,
    ) -> Result<AwsCredentials, ModelError> {
        let setup = |why: String| ModelError::Setup(format!("the AWS profile `{name}` {why}"));
        match (profile.get("source_profile"), profile.get("credential_source")) {
            (Some(_), Some(_)) => Err(setup(
                "has both source_profile and credential_source: keep one".to_owned(),
            )),
            (None, None) => Err(setup(
                "has a role_arn but neither source_profile nor credential_source".to_owned(),
            )),
            // A profile that is its own source gives the role its keys.
            (Some(source), None) if source == name => {
                let place = format!("the AWS profile `{name}`");
                match static_keys(&place, profile.credentials)? {
                    Some(keys) => Ok(keys),
                    None => static_keys(&place, profile.config)?.ok_or_else(|| {
                        setup("is its own source_profile but has no keys".to_owned())
                    }),
                }
            }
            (Some(source), None) => {
                match self.profile_credentials(files, source, visited).await? {
                    Some(found) => Ok(found.credentials),
                    None if files.profile(source).is_none() => Err(setup(format!(
                        "names the source_profile `{source}`, which is in {}",
                        files.neither()
                    ))),
                    None => Err(setup(format!(
                        "names the source_profile `{source}`, which has no credentials"
                    ))),
                }
            }
            (None, Some("Environment")) => self.environment_keys()?.ok_or_else(|| {
                setup("takes its credential_source from the environment, where AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set".to_owned())
            }),
            (None, Some("EcsContainer")) => match self.container_credentials().await? {
                Some(found) => Ok(found.credentials),
                None => Err(setup(
                    "takes its credential_source from the container, whose endpoint is not set"
                        .to_owned(),
                )),
            },
            (None, Some("Ec2InstanceMetadata")) => self
                .instance_role()
                .await
                .map(|found| found.credentials)
                .map_err(|why| setup(format!("takes its credential_source from {why}"))),
            (None, Some(other)) => Err(setup(format!(
                "has the credential_source `{other}`: write Environment, EcsContainer or \
                 Ec2InstanceMetadata"
            ))),
        }
    }

    /// STS in the chain's region (`AWS_ENDPOINT_URL_STS` or `AWS_ENDPOINT_URL` to move it).
    fn sts(&self) -> Sts<'_> {
        let region = self.region().unwrap_or_else(|| "us-east-1".to_owned());
        let endpoint = self
            .var("AWS_ENDPOINT_URL_STS")
            .or_else(|| self.var("AWS_ENDPOINT_URL"))
            .unwrap_or_else(|| format!("https://sts.{region}.{}", dns_suffix(&region)));
        Sts {
            client: &self.client,
            endpoint,
            region,
        }
    }

    /// The keys in `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`; a key
    /// id without its secret is an error, as in botocore, rather than a reason to look further.
    fn environment_keys(&self) -> Result<Option<AwsCredentials>, ModelError> {
        keys(
            "the environment",
            self.var("AWS_ACCESS_KEY_ID"),
            self.var("AWS_SECRET_ACCESS_KEY"),
            self.var("AWS_SESSION_TOKEN"),
        )
    }

    /// A container's credentials, when its endpoint is set; a failure to get them is an error,
    /// as in botocore.
    async fn container_credentials(&self) -> Result<Option<Found>, ModelError> {
        let url = match (
            self.var("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"),
            self.var("AWS_CONTAINER_CREDENTIALS_FULL_URI"),
        ) {
            (Some(relative), _) => format!("{ECS_HOST}{relative}"),
            (None, Some(full)) => {
                check_container_url(&full)?;
                full
            }
            (None, None) => return Ok(None),
        };
        let token = match self.var("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE") {
            Some(file) => Some(std::fs::read_to_string(&file).map_err(|e| {
                ModelError::Setup(format!(
                    "cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE {file}: {e}"
                ))
            })?),
            None => self.var("AWS_CONTAINER_AUTHORIZATION_TOKEN"),
        };
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        if let Some(token) = token {
            let mut token = HeaderValue::from_str(token.trim()).map_err(|_| {
                ModelError::Setup(
                    "the container's authorization token has characters a header cannot carry"
                        .into(),
                )
            })?;
            token.set_sensitive(true);
            headers.insert(AUTHORIZATION, token);
        }
        let mut attempt = 1;
        let text = loop {
            let request = self
                .metadata
                .get(&url)
                .headers(headers.clone())
                .timeout(CONTAINER_TIMEOUT);
            match fetch(request, &url).await {
                Ok(text) => break text,
                Err(_) if attempt < CONTAINER_ATTEMPTS => attempt += 1,
                Err(why) => {
                    return Err(ModelError::Setup(format!(
                        "container credentials, after {attempt} attempts: {why}"
                    )))
                }
            }
        };
        let source = format!("the container credentials at {url}");
        Issued::parse(&text, &source).map(Some)
    }

    /// The instance role's credentials from the metadata service; `Err` says why there are
    /// none.
    async fn instance_role(&self) -> Result<Found, String> {
        let disabled = self
            .var("AWS_EC2_METADATA_DISABLED")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        if disabled {
            return Err("AWS_EC2_METADATA_DISABLED is true".to_owned());
        }
        let endpoint = self
            .var("AWS_EC2_METADATA_SERVICE_ENDPOINT")
            .unwrap_or_else(|| IMDS_ENDPOINT.to_owned());
        let base = endpoint.trim_end_matches('/');
        let unavailable = |why: String| format!("the instance metadata service at {base}: {why}");
        let token_url = format!("{base}/latest/api/token");
        let answer = self
            .metadata
            .put(&token_url)
            .header("x-aws-ec2-metadata-token-ttl-seconds", "21600")
            .timeout(IMDS_TIMEOUT)
            .send()
            .await;
        // IMDSv1 where tokens are not served, or the token's answer does not come back (a
        // container on EC2 whose hop limit is 1), as in botocore.
        let token = match answer {
            Err(e) if e.is_timeout() && !e.is_connect() => None,
            Err(e) => return Err(unavailable(error_chain(&e))),
            Ok(answer) => match answer.status().as_u16() {
                200 => Some(
                    answer
                        .text()
                        .await
                        .map_err(|e| unavailable(error_chain(&e)))?,
                ),
                403..=405 => None,
                status => return Err(unavailable(format!("the token request answered {status}"))),
            },
        };
        let token = match token.as_deref().map(|t| HeaderValue::from_str(t.trim())) {
            Some(Ok(mut token)) => {
                token.set_sensitive(true);
                Some(token)
            }
            Some(Err(_)) => return Err(unavailable("the token is not a header value".into())),
            None => None,
        };
        let get = |url: String| {
            let mut request = self.metadata.get(&url).timeout(IMDS_TIMEOUT);
            if let Some(token) = &token {
                request = request.header("x-aws-ec2-metadata-token", token.clone());
            }
            async move { fetch(request, &url).await }
        };
        let roles_url = format!("{base}/latest/meta-data/iam/security-credentials/");
        let roles = get(roles_url).await.map_err(unavailable)?;
        let Some(role) = roles.lines().map(str::trim).find(|r| !r.is_empty()) else {
            return Err(unavailable("the instance has no role".to_owned()));
        };
        let url = format!("{base}/latest/meta-data/iam/security-credentials/{role}");
        let text = get(url).await.map_err(unavailable)?;
        let source = format!("the instance role `{role}`");
        Issued::parse(&text, &source).map_err(|e| e.to_string())
    }
}

impl fmt::Debug for AwsCredentialChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AwsCredentialChain")
            .field("profile", &self.profile)
            .finish_non_exhaustive()
    }
}

/// A profile's own credentials: keys in the credentials file, its `credential_process`, keys
/// in the config file. `None` when it has none.
async fn own_credentials(name: &str, profile: &Profile<'_>) -> Result<Option<Found>, ModelError> {
    let in_credentials = format!("the AWS profile `{name}` in the credentials file");
    if let Some(credentials) = static_keys(&in_credentials, profile.credentials)? {
        return Ok(Some(Found::lasting(credentials)));
    }
    if let Some(command) = profile.get("credential_process") {
        return run_process(name, command).await.map(Some);
    }
    let in_config = format!("the AWS profile `{name}` in the config file");
    Ok(static_keys(&in_config, profile.config)?.map(Found::lasting))
}

/// The keys (and session token) of one file's section of a profile, named `place` in errors.
fn static_keys(
    place: &str,
    settings: Option<&Settings>,
) -> Result<Option<AwsCredentials>, ModelError> {
    let Some(settings) = settings else {
        return Ok(None);
    };
    let get = |key: &str| settings.get(key).filter(|v| !v.is_empty()).cloned();
    keys(
        place,
        get("aws_access_key_id"),
        get("aws_secret_access_key"),
        get("aws_session_token"),
    )
}

/// Keys from `place`: `None` without a key id, an error with a key id but no secret.
fn keys(
    place: &str,
    key_id: Option<String>,
    secret: Option<String>,
    token: Option<String>,
) -> Result<Option<AwsCredentials>, ModelError> {
    let Some(key_id) = key_id else {
        return Ok(None);
    };
    let secret = secret.ok_or_else(|| {
        ModelError::Setup(format!(
            "{place} has an AWS access key id but no secret access key"
        ))
    })?;
    let credentials = AwsCredentials::new(key_id, secret);
    Ok(Some(match token {
        Some(token) => credentials.with_session_token(token),
        None => credentials,
    }))
}

/// The error for a way of getting credentials this chain does not follow.
fn unresolved(what: &str) -> ModelError {
    ModelError::Setup(format!(
        "{what}, which BedrockModel does not resolve: give the credentials with \
         with_credentials_provider (the AWS SDK's provider, say), or keys with with_credentials"
    ))
}

/// Runs a profile's `credential_process` and reads what it prints.
///
/// The command line is never shown in errors, since it may carry a secret; what the process
/// wrote to its standard error is, as botocore shows it.
async fn run_process(profile: &str, command: &str) -> Result<Found, ModelError> {
    let source = format!("the credential_process of the AWS profile `{profile}`");
    let words = split_command(command)
        .filter(|words| !words.is_empty())
        .ok_or_else(|| ModelError::Setup(format!("{source} is not a command line")))?;
    let ran = tokio::task::spawn_blocking(move || run_for_at_most(&words, PROCESS_TIMEOUT))
        .await
        .map_err(|e| ModelError::Setup(format!("{source} did not finish: {e}")))?
        .map_err(|e| ModelError::Setup(format!("{source}: {e}")))?;
    if !ran.status.success() {
        let said = String::from_utf8_lossy(&ran.stderr);
        return Err(ModelError::Setup(format!(
            "{source} failed ({}): {}",
            ran.status,
            said.trim()
        )));
    }
    let printed = String::from_utf8_lossy(&ran.stdout);
    let issued: Issued = serde_json::from_str(&printed)
        .map_err(|e| ModelError::Setup(format!("{source} printed no credentials JSON: {e}")))?;
    if issued.version != Some(1) {
        return Err(ModelError::Setup(format!(
            "{source} printed Version {:?}; version 1 is the one AWS defines",
            issued.version
        )));
    }
    issued.found(&source)
}

/// Runs `words` (its standard input this process's, as in botocore), killed after `limit`.
fn run_for_at_most(words: &[String], limit: Duration) -> Result<Output, String> {
    let deadline = Instant::now() + limit;
    let too_long = || format!("it ran for more than {limit:?} and was stopped");
    let mut child = Command::new(&words[0])
        .args(&words[1..])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{}`: {e}", words[0]))?;
    let stdout = read_in_background(child.stdout.take());
    let stderr = read_in_background(child.stderr.take());
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => {
                child.kill().ok();
                child.wait().ok();
                return Err(match other {
                    Err(e) => format!("cannot wait for it: {e}"),
                    Ok(_) => too_long(),
                });
            }
        }
    };
    let collect = |receiver: Receiver<Vec<u8>>| {
        let left = deadline.saturating_duration_since(Instant::now());
        receiver.recv_timeout(left).map_err(|_| too_long())
    };
    Ok(Output {
        status,
        stdout: collect(stdout)?,
        stderr: collect(stderr)?,
    })
}

/// A pipe read to its end on a thread of its own, so that the process never waits on a full
/// one; its bytes come through a channel, so that a pipe that a child of the process keeps
/// open holds no one past a deadline.
fn read_in_background(pipe: Option<impl Read + Send + 'static>) -> Receiver<Vec<u8>> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            pipe.read_to_end(&mut bytes).ok();
        }
        sender.send(bytes).ok();
    });
    receiver
}

/// Credentials as AWS's endpoints and `credential_process` give them.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Issued {
    version: Option<u32>,
    access_key_id: String,
    secret_access_key: String,
    #[serde(alias = "SessionToken")]
    token: Option<String>,
    expiration: Option<String>,
}

impl Issued {
    fn parse(text: &str, source: &str) -> Result<Found, ModelError> {
        let issued: Issued = serde_json::from_str(text).map_err(|e| {
            ModelError::Setup(format!("{source} answered without credentials: {e}"))
        })?;
        issued.found(source)
    }

    fn found(self, source: &str) -> Result<Found, ModelError> {
        let expires = match &self.expiration {
            Some(text) => Some(parse_time(text).ok_or_else(|| {
                ModelError::Setup(format!(
                    "{source} gave an Expiration that is not a time: `{text}`"
                ))
            })?),
            None => None,
        };
        let credentials = AwsCredentials::new(self.access_key_id, self.secret_access_key);
        Ok(Found {
            credentials: match self.token.filter(|t| !t.is_empty()) {
                Some(token) => credentials.with_session_token(token),
                None => credentials,
            },
            expires,
        })
    }
}

/// A GET's body, when the answer is 200.
async fn fetch(request: reqwest::RequestBuilder, url: &str) -> Result<String, String> {
    let answer = request.send().await.map_err(|e| error_chain(&e))?;
    let status = answer.status().as_u16();
    let text = answer.text().await.map_err(|e| error_chain(&e))?;
    if status != 200 {
        let text: String = text.chars().take(200).collect();
        return Err(format!("{url} answered {status}: {}", text.trim()));
    }
    Ok(text)
}

/// The domain of AWS's endpoints in `region`: `amazonaws.com.cn` in China.
pub(crate) fn dns_suffix(region: &str) -> &'static str {
    match region.starts_with("cn-") {
        true => "amazonaws.com.cn",
        false => "amazonaws.com",
    }
}

/// A full container credentials URL must be HTTPS, or HTTP to this host (loopback) or to the
/// container hosts of ECS and EKS, as botocore allows.
fn check_container_url(url: &str) -> Result<(), ModelError> {
    let parsed = reqwest::Url::parse(url).map_err(|e| {
        ModelError::Setup(format!(
            "AWS_CONTAINER_CREDENTIALS_FULL_URI `{url}` is not a URL: {e}"
        ))
    })?;
    let host = parsed.host_str().unwrap_or_default();
    let ip = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>();
    let allowed = match (parsed.scheme(), ip) {
        ("https", _) => !host.is_empty(),
        ("http", Ok(std::net::IpAddr::V4(ip))) => {
            ip.is_loopback() || [[169, 254, 170, 2], [169, 254, 170, 23]].contains(&ip.octets())
        }
        ("http", Ok(std::net::IpAddr::V6(ip))) => {
            ip.is_loopback() || ip.segments() == [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23]
        }
        ("http", Err(_)) => host == "localhost",
        _ => false,
    };
    if allowed {
        Ok(())
    } else {
        Err(ModelError::Setup(format!(
            "AWS_CONTAINER_CREDENTIALS_FULL_URI `{url}` must be HTTPS, or HTTP to a loopback \
             address or a container credentials host of ECS or EKS"
        )))
    }
}

/// An RFC 3339 time in UTC or with an offset (`2026-11-25T01:00:00Z`,
/// `2026-11-25T01:00:00.123+00:00`), as AWS writes `Expiration`.
pub(crate) fn parse_time(text: &str) -> Option<SystemTime> {
    let text = text.trim();
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let digits = text.get(range)?;
        digits
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| digits.parse().ok())?
    };
    let shape = text.as_bytes();
    if shape.len() < 20 || shape[4] != b'-' || shape[7] != b'-' || shape[13] != b':' {
        return None;
    }
    if !matches!(shape[10], b'T' | b't' | b' ') || shape[16] != b':' {
        return None;
    }
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    let mut rest = &text[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        rest = &fraction[digits..];
    }
    let offset = match rest {
        // Older AWS CLI token caches write `UTC`.
        "Z" | "z" | "UTC" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (hours, minutes) = rest[1..].split_once(':')?;
            let two_digits = |t: &str| t.len() == 2 && t.bytes().all(|b| b.is_ascii_digit());
            if !two_digits(hours) || !two_digits(minutes) {
                return None;
            }
            let hours: i64 = hours.parse().ok()?;
            let minutes: i64 = minutes.parse().ok()?;
            sign * (hours * 3600 + minutes * 60)
        }
    };
    let seconds =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset;
    let seconds = u64::try_from(seconds).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(seconds))
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expirations_are_read_as_aws_writes_them() {
        let at = |seconds| Some(UNIX_EPOCH + Duration::from_secs(seconds));
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), at(0));
        assert_eq!(parse_time("2026-11-24T20:26:52Z"), at(1_795_552_012));
        assert_eq!(parse_time("2026-11-24T20:26:52.250Z"), at(1_795_552_012));
        assert_eq!(parse_time("2026-11-24T21:26:52+01:00"), at(1_795_552_012));
        assert_eq!(parse_time("2024-02-29T00:00:00Z"), at(1_709_164_800));
        assert_eq!(parse_time("2024-02-29T00:00:00UTC"), at(1_709_164_800));
        for bad in [
            "",
            "2026-11-24",
            "2026-13-01T00:00:00Z",
            "2026-11-24T20:26:52",
            "soon",
            "2026-11-24T20:26:52+9999999999999999:00",
            "2026-11-24T20:26:52+-1:00",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_process_is_stopped_at_its_limit_and_its_output_read() {
        let words = |line: &str| split_command(line).unwrap();
        let ran = run_for_at_most(
            &words("sh -c 'echo out; echo err >&2'"),
            Duration::from_secs(20),
        )
        .unwrap();
        assert_eq!(
            (&ran.stdout[..], &ran.stderr[..]),
            (&b"out\n"[..], &b"err\n"[..])
        );
        let limit = Duration::from_millis(300);
        let error = run_for_at_most(&words("sleep 20"), limit).unwrap_err();
        assert_eq!(error, "it ran for more than 300ms and was stopped");
        // A child of the process that keeps its output open does not hold the caller either.
        let error = run_for_at_most(&words("sh -c 'sleep 3 & echo early'"), limit).unwrap_err();
        assert_eq!(error, "it ran for more than 300ms and was stopped");
        let error = run_for_at_most(&words("/nonexistent/tool"), limit).unwrap_err();
        assert!(
            error.starts_with("cannot run `/nonexistent/tool`"),
            "{error}"
        );
    }

    #[test]
    fn container_urls_are_https_or_local() {
        for good in [
            "https://creds.example.com/x",
            "http://127.0.0.1:8080/creds",
            "http://localhost/creds",
            "http://169.254.170.23/v1/credentials",
            "http://[fd00:ec2::23]/v1/credentials",
            "http://[::1]:9/x",
        ] {
            assert!(check_container_url(good).is_ok(), "{good}");
        }
        for bad in ["http://example.com/creds", "ftp://127.0.0.1/", "not a url"] {
            assert!(check_container_url(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn nothing_found_names_every_place_looked_in() {
        let home = std::env::temp_dir().join("ai-tool-no-aws-home");
        let chain = AwsCredentialChain::from_vars([
            ("HOME", home.to_str().unwrap()),
            ("AWS_EC2_METADATA_DISABLED", "true"),
        ]);
        let error = chain.credentials().await.unwrap_err().to_string();
        for named in [
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set",
            "has a `default` profile",
            "no container credentials endpoint",
            "AWS_EC2_METADATA_DISABLED",
        ] {
            assert!(error.contains(named), "{named}: {error}");
        }
        let chain = AwsCredentialChain::from_vars([
            ("HOME", home.to_str().unwrap()),
            ("AWS_PROFILE", "missing"),
        ]);
        let error = chain.credentials().await.unwrap_err().to_string();
        assert!(
            error.contains("the AWS profile `missing` is in neither"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn the_environment_comes_first_unless_a_profile_is_chosen() {
        let dir = std::env::temp_dir().join(format!("ai-tool-aws-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("credentials");
        std::fs::write(
            &file,
            "[work]\naws_access_key_id = FILE\naws_secret_access_key = s\n",
        )
        .unwrap();
        let vars = [
            ("AWS_ACCESS_KEY_ID", "ENV"),
            ("AWS_SECRET_ACCESS_KEY", "e"),
            ("AWS_SHARED_CREDENTIALS_FILE", file.to_str().unwrap()),
            ("AWS_PROFILE", "work"),
        ];
        let shown = |c: AwsCredentials| format!("{c:?}");
        let env = AwsCredentialChain::from_vars(vars)
            .credentials()
            .await
            .unwrap();
        assert!(shown(env).contains("\"ENV\""));
        let chosen = AwsCredentialChain::from_vars(vars).with_profile("work");
        assert!(shown(chosen.credentials().await.unwrap()).contains("\"FILE\""));
        std::fs::remove_dir_all(dir).ok();
    }
}
