//! Where `BedrockModel` finds AWS credentials when none are given in code, in turn: the
//! environment, the shared profile files (and the roles, SSO and processes they name), a
//! container's credentials endpoint, an EC2 instance's metadata service; and how long it keeps
//! them. The order and the rules are botocore's, so that a machine set up for the AWS CLI
//! works as it is.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use super::found::Found;
use super::profile_files::{Profile, ProfileFiles, Settings};
use super::sigv4::AwsCredentials;
use super::sso::{SsoEndpoints, SsoRole};
use super::sts::{RoleRequest, Sts};
use super::{dns_suffix, metadata, process};
use crate::refreshing::Refreshing;
use tool_model::ModelError;

/// Temporary credentials are fetched again once they expire within this.
const REFRESH_BEFORE_EXPIRY: Duration = Duration::from_secs(10 * 60);

/// How long expiring credentials serve after a try to fetch them before the next try.
const RETRY_REFRESH_AFTER: Duration = Duration::from_secs(60);

/// How long STS and the SSO portal may take.
const SERVICE_TIMEOUT: Duration = Duration::from_secs(30);

/// AWS credentials found the way the AWS CLI and SDKs find them, in botocore's order:
///
/// 1. `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` (unless a profile was
///    chosen with [`AwsCredentialChain::with_profile`]);
/// 2. the profile (`AWS_DEFAULT_PROFILE`, else `AWS_PROFILE`, else `default`) in
///    `~/.aws/credentials` and `~/.aws/config` (or the files `AWS_SHARED_CREDENTIALS_FILE` and
///    `AWS_CONFIG_FILE` name): the role it
///    assumes (`role_arn`, through STS `AssumeRole`, with the credentials of its
///    `source_profile`, itself resolved the same way, or of its `credential_source`:
///    `Environment`, `EcsContainer`, `Ec2InstanceMetadata`; with `external_id`,
///    `role_session_name`, `duration_seconds`), then a web identity role (its
///    `web_identity_token_file`, or `AWS_WEB_IDENTITY_TOKEN_FILE` and `AWS_ROLE_ARN` as EKS sets
///    them, through STS `AssumeRoleWithWebIdentity`), then its AWS SSO role, then its keys in
///    the credentials file, its `credential_process` (a command printing credentials as
///    JSON), its keys in the config file;
/// 3. a container's credentials endpoint (`AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` on ECS,
///    `AWS_CONTAINER_CREDENTIALS_FULL_URI` with `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` or
///    `AWS_CONTAINER_AUTHORIZATION_TOKEN` on EKS Pod Identity);
/// 4. an EC2 instance's role, from the instance metadata service (IMDSv2, or v1 where tokens
///    are not served; `AWS_EC2_METADATA_SERVICE_ENDPOINT` to move it,
///    `AWS_EC2_METADATA_DISABLED=true` to skip it).
///
/// A profile's AWS SSO role (`sso_session` or the legacy `sso_start_url`, with
/// `sso_account_id` and `sso_role_name`) comes with the token `aws sso login` cached in
/// `~/.aws/sso/cache`. An `sso_session`'s token is refreshed through SSO OIDC's
/// `CreateToken` once it expires within fifteen minutes, and the new one written back to the
/// cache, as the AWS CLI does (one try: a refresh that fails keeps the cached token while it
/// lasts); an expired token that cannot be refreshed (the legacy settings', one without a
/// refresh token or whose client registration has expired, one whose refresh fails) is an
/// error that says to log in again. Endpoints set in the profile files (`endpoint_url`,
/// `[services]`) are not read.
///
/// STS is reached at `https://sts.{region}.amazonaws.com`, the SSO portal at
/// `https://portal.sso.{region}.amazonaws.com` and SSO OIDC at
/// `https://oidc.{region}.amazonaws.com` (HTTPS needs the `rustls` feature), or where
/// `AWS_ENDPOINT_URL_STS`, `AWS_ENDPOINT_URL_SSO`, `AWS_ENDPOINT_URL_SSO_OIDC` or
/// `AWS_ENDPOINT_URL` say; the metadata
/// endpoints never through a proxy. Credentials that expire are fetched again ten minutes
/// before they do; if that fails, the current ones serve until they expire. A
/// `credential_process` may run for two minutes, and its command line is never shown in an
/// error (it may carry a secret). A role with an MFA code (`mfa_serial`) and `aws login`
/// profiles (`login_session`) are not resolved here: the error says so, and
/// [`BedrockModel::with_credentials_provider`](crate::BedrockModel::with_credentials_provider)
/// takes credentials from the AWS SDK instead.
///
/// ```
/// use tool_providers::AwsCredentialChain;
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
    /// For STS, the SSO portal and SSO OIDC, through the environment's proxy if there is one;
    /// redirects are not followed, so that no token or secret goes to another host.
    client: crate::http::BuiltClient,
    /// For the container's and the instance's metadata endpoints, never through a proxy.
    metadata: crate::http::BuiltClient,
    /// The credentials found, kept until they expire within [`REFRESH_BEFORE_EXPIRY`].
    kept: Refreshing<AwsCredentials>,
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
            client: crate::http::built(
                reqwest::Client::builder()
                    .timeout(SERVICE_TIMEOUT)
                    .redirect(reqwest::redirect::Policy::none()),
                "the AWS credential chain",
            ),
            metadata: crate::http::built(
                reqwest::Client::builder()
                    .no_proxy()
                    .redirect(reqwest::redirect::Policy::none()),
                "the AWS metadata credentials",
            ),
            kept: Refreshing::new(REFRESH_BEFORE_EXPIRY, RETRY_REFRESH_AFTER),
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
        self.environment_region().or_else(|| {
            let files = ProfileFiles::read(|name| self.var(name)).ok()?;
            self.profile_region(&files)
        })
    }

    /// `AWS_REGION`, else `AWS_DEFAULT_REGION`.
    fn environment_region(&self) -> Option<String> {
        super::checked_region(
            self.var("AWS_REGION")
                .or_else(|| self.var("AWS_DEFAULT_REGION")),
            "AWS_REGION (or AWS_DEFAULT_REGION)",
        )
    }

    /// The chosen profile's `region`, in either file.
    fn profile_region(&self, files: &ProfileFiles) -> Option<String> {
        let profile = files.profile(&self.profile_name())?;
        super::checked_region(
            profile.get("region").map(str::to_owned),
            "the profile's `region`",
        )
    }

    /// The credentials to sign with now: those found before while they are good for ten
    /// minutes more, else found again. Within those ten minutes a request that finds another
    /// one fetching them, or a try less than a minute ago, keeps the current ones rather than
    /// waiting, and a failed fetch keeps them too; once they have expired, requests wait for
    /// one fetch, and share its result. The error names each place looked in.
    pub async fn credentials(&self) -> Result<AwsCredentials, ModelError> {
        let fetch = || async {
            let found = self.find().await?;
            Ok((found.credentials, found.expires))
        };
        self.kept.get("AWS credentials", fetch).await
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
        if let Some(found) =
            metadata::container(crate::http::usable(&self.metadata)?, |name| self.var(name)).await?
        {
            return Ok(found);
        }
        looked.push("no container credentials endpoint is set".to_owned());
        match metadata::instance_role(crate::http::usable(&self.metadata)?, |name| self.var(name))
            .await
        {
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
            // A source profile with keys does not assume its own role, as in botocore (a web
            // identity or SSO role it names still comes first).
            let assumes_role = asked_for || !has_keys;
            if get("login_session").is_some() && !has_keys {
                return Err(unresolved(&format!(
                    "the AWS profile `{name}` gets its credentials through `aws login` \
                     (login_session)"
                )));
            }
            let web_identity_file = get("web_identity_token_file");
            if let (Some(role_arn), None, Some(profile), true) =
                (get("role_arn"), web_identity_file, &profile, assumes_role)
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
                return self
                    .sts(files)?
                    .assume_role(&request, &source)
                    .await
                    .map(Some);
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
                    .sts(files)?
                    .assume_role_with_web_identity(&request, &token)
                    .await
                    .map(Some);
            }
            let Some(profile) = profile else {
                return Ok(None);
            };
            if let Some(sso) = SsoRole::of(files, name, &profile)? {
                let endpoint =
                    |variable: &str| self.var(variable).or_else(|| self.var("AWS_ENDPOINT_URL"));
                let endpoints = SsoEndpoints {
                    portal: endpoint("AWS_ENDPOINT_URL_SSO"),
                    oidc: endpoint("AWS_ENDPOINT_URL_SSO_OIDC"),
                };
                let found = sso
                    .credentials(crate::http::usable(&self.client)?, files, name, endpoints)
                    .await?;
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
            (None, Some("EcsContainer")) => match metadata::container(crate::http::usable(&self.metadata)?, |name| self.var(name)).await? {
                Some(found) => Ok(found.credentials),
                None => Err(setup(
                    "takes its credential_source from the container, whose endpoint is not set"
                        .to_owned(),
                )),
            },
            (None, Some("Ec2InstanceMetadata")) => metadata::instance_role(crate::http::usable(&self.metadata)?, |name| self.var(name))
                .await
                .map(|found| found.credentials)
                .map_err(|why| setup(format!("takes its credential_source from {why}"))),
            (None, Some(other)) => Err(setup(format!(
                "has the credential_source `{other}`: write Environment, EcsContainer or \
                 Ec2InstanceMetadata"
            ))),
        }
    }

    /// STS in the chain's region, its profile's read from `files` (`AWS_ENDPOINT_URL_STS` or `AWS_ENDPOINT_URL` to move it).
    fn sts(&self, files: &ProfileFiles) -> Result<Sts<'_>, ModelError> {
        let region = self
            .environment_region()
            .or_else(|| self.profile_region(files))
            .unwrap_or_else(|| "us-east-1".to_owned());
        let endpoint = self
            .var("AWS_ENDPOINT_URL_STS")
            .or_else(|| self.var("AWS_ENDPOINT_URL"))
            .unwrap_or_else(|| format!("https://sts.{region}.{}", dns_suffix(&region)));
        Ok(Sts {
            client: crate::http::usable(&self.client)?,
            endpoint,
            region,
        })
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
        return process::run_process(name, command).await.map(Some);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;
    use tokio::time::Instant;

    /// A chain whose only source, a container endpoint, refuses connections.
    async fn unreachable_chain() -> AwsCredentialChain {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let closed = listener.local_addr().unwrap();
        drop(listener);
        AwsCredentialChain::from_vars([
            ("HOME", "/nonexistent".to_owned()),
            (
                "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                format!("http://{closed}/creds"),
            ),
        ])
    }

    fn holding(chain: &AwsCredentialChain, expires: SystemTime, last_try: Option<Instant>) {
        let credentials = AwsCredentials::new("AKIDOLD", "s");
        chain.kept.hold(credentials, Some(expires), last_try);
    }

    #[tokio::test]
    async fn expiring_credentials_serve_while_a_refresh_fails_and_expired_ones_do_not() {
        let now = SystemTime::now();
        let two_minutes_ago = Instant::now().checked_sub(Duration::from_secs(120));
        // Five minutes left, last tried two minutes ago: a fetch is tried, fails, and the
        // current credentials serve.
        let chain = unreachable_chain().await;
        holding(&chain, now + Duration::from_secs(300), two_minutes_ago);
        let kept = chain.credentials().await.unwrap();
        assert_eq!(kept.access_key_id(), "AKIDOLD");
        assert!(chain.kept.last_try_failed());
        // Expired: the failure is the answer.
        let chain = unreachable_chain().await;
        holding(&chain, now - Duration::from_secs(1), two_minutes_ago);
        let error = chain.credentials().await.unwrap_err().to_string();
        assert!(
            error.contains("container credentials, after 3 attempts"),
            "{error}"
        );
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
