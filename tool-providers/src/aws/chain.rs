//! Where `BedrockModel` finds AWS credentials when none are given in code: the AWS SDK's own
//! default chain (`aws-config`), its answers kept until they are about to expire.

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use aws_config::{BehaviorVersion, SdkConfig};
use aws_credential_types::provider::error::CredentialsError;
use aws_credential_types::provider::ProvideCredentials;
use aws_types::os_shim_internal::Env;

use super::{checked_region, AwsCredentials};
use crate::refreshing::Refreshing;
use tool_model::ModelError;

/// Temporary credentials are fetched again once they expire within this.
const REFRESH_BEFORE_EXPIRY: Duration = Duration::from_secs(10 * 60);

/// How long expiring credentials serve after a try to fetch them before the next try.
const RETRY_REFRESH_AFTER: Duration = Duration::from_secs(60);

/// How long one search of the chain may take (a `credential_process`, STS, SSO, the metadata
/// services together): past it, the request fails naming the limit.
const FIND_TIMEOUT: Duration = Duration::from_secs(120);

/// The variables that hold keys: left out when a profile is chosen, as the AWS CLI's
/// `--profile` leaves them.
const KEY_VARIABLES: [&str; 3] = [
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
];

/// AWS credentials found as the AWS SDKs find them, by the AWS SDK for Rust's default chain
/// (`aws-config`):
///
/// 1. `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` (unless a profile was
///    chosen with [`AwsCredentialChain::with_profile`]);
/// 2. the profile (`AWS_PROFILE`, else `default`) in `~/.aws/config` and `~/.aws/credentials`
///    (or the files `AWS_CONFIG_FILE` and `AWS_SHARED_CREDENTIALS_FILE` name): the role it
///    assumes through STS (with a `source_profile` or a `credential_source`), its web identity
///    role, its AWS SSO role (with the token `aws sso login` cached, refreshed as the AWS CLI
///    refreshes it), its keys, its `credential_process`;
/// 3. a web identity role from `AWS_WEB_IDENTITY_TOKEN_FILE` and `AWS_ROLE_ARN` (EKS);
/// 4. a container's credentials endpoint (`AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` on ECS,
///    `AWS_CONTAINER_CREDENTIALS_FULL_URI` with its authorization token on EKS Pod Identity);
/// 5. an EC2 instance's role, from the instance metadata service (IMDSv2 only;
///    `AWS_EC2_METADATA_SERVICE_ENDPOINT` moves it, `AWS_EC2_METADATA_DISABLED=true` skips it).
///
/// The services are reached where `AWS_ENDPOINT_URL_STS`, `AWS_ENDPOINT_URL_SSO` and
/// `AWS_ENDPOINT_URL_SSO_OIDC` say, else at AWS. Credentials that expire are fetched again ten
/// minutes before they do; if that fails, the current ones serve until they expire. One search
/// of the chain may take two minutes. Nothing secret is logged, and `Debug` shows none.
///
/// ```
/// use tool_providers::AwsCredentialChain;
///
/// let chain = AwsCredentialChain::from_vars([
///     ("AWS_CONFIG_FILE", "/etc/app/aws-config"),
///     ("AWS_PROFILE", "bedrock"),
/// ]);
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// assert_eq!(chain.region().await, None); // the file does not exist
/// # });
/// ```
pub struct AwsCredentialChain {
    /// The variables the chain reads instead of the process's (`None`: the process's).
    vars: Option<HashMap<String, String>>,
    profile: Option<String>,
    /// The SDK's configuration, loaded at the first use.
    config: tokio::sync::OnceCell<SdkConfig>,
    /// The credentials found, kept until they expire within [`REFRESH_BEFORE_EXPIRY`].
    kept: Refreshing<AwsCredentials>,
}

impl AwsCredentialChain {
    /// The chain over this process's environment.
    pub fn from_env() -> Self {
        AwsCredentialChain {
            vars: None,
            profile: None,
            config: tokio::sync::OnceCell::new(),
            kept: Refreshing::new(REFRESH_BEFORE_EXPIRY, RETRY_REFRESH_AFTER),
        }
    }

    /// The chain over these variables instead of the environment (with `HOME` for
    /// `~/.aws`): for a process whose AWS settings live elsewhere, and for tests.
    pub fn from_vars<K: Into<String>, V: Into<String>>(
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let vars = vars
            .into_iter()
            .map(|(name, value)| (name.into(), value.into()))
            .collect();
        AwsCredentialChain {
            vars: Some(vars),
            ..AwsCredentialChain::from_env()
        }
    }

    /// This profile of the shared files, rather than `AWS_PROFILE`'s; as with the AWS CLI's
    /// `--profile`, the environment's keys are then not used.
    pub fn with_profile(mut self, profile: impl Into<String>) -> Self {
        self.profile = Some(profile.into());
        self
    }

    /// The region: `AWS_REGION`, else the profile's `region`, as the AWS SDKs find it; `None`
    /// when there is none, or it is not a region name (with a warning).
    pub async fn region(&self) -> Option<String> {
        let region = self.config().await.region().map(|r| r.as_ref().to_owned());
        checked_region(region, "the AWS region (AWS_REGION or the profile's)")
    }

    /// The credentials to sign with now: those found before while they are good for ten
    /// minutes more, else found again. Within those ten minutes a request that finds another
    /// one fetching them, or a try less than a minute ago, keeps the current ones rather than
    /// waiting, and a failed fetch keeps them too; once they have expired, requests wait for
    /// one fetch, and share its result.
    pub async fn credentials(&self) -> Result<AwsCredentials, ModelError> {
        let fetch = || async {
            let config = self.config().await;
            let Some(provider) = config.credentials_provider() else {
                return Err(ModelError::Setup(
                    "the AWS SDK's configuration has no credentials provider".into(),
                ));
            };
            let found =
                match tool_model::timer::timeout(FIND_TIMEOUT, provider.provide_credentials()) {
                    Ok(finding) => finding.await.map_err(|_| {
                        ModelError::Setup(format!(
                            "no AWS credentials were found within {} s",
                            FIND_TIMEOUT.as_secs()
                        ))
                    })?,
                    Err(why) => return Err(ModelError::Setup(why)),
                };
            let credentials = found.map_err(|e| {
                let hint = match e {
                    CredentialsError::CredentialsNotLoaded(_) => {
                        "; Bedrock also takes an API key (AWS_BEARER_TOKEN_BEDROCK, or \
                         BedrockModel::with_api_key)"
                    }
                    _ => "",
                };
                let why = crate::http::error_chain(&e);
                ModelError::Setup(format!("no AWS credentials: {why}{hint}"))
            })?;
            Ok((AwsCredentials::from(&credentials), credentials.expiry()))
        };
        self.kept.get("AWS credentials", fetch).await
    }

    /// The SDK's configuration over the chain's variables, loaded once.
    async fn config(&self) -> &SdkConfig {
        self.config
            .get_or_init(|| async {
                let mut loader = aws_config::defaults(BehaviorVersion::latest());
                let mut vars = match &self.vars {
                    Some(vars) => vars.clone(),
                    None => std::env::vars().collect(),
                };
                if let Some(profile) = &self.profile {
                    vars.retain(|name, _| !KEY_VARIABLES.contains(&name.as_str()));
                    loader = loader.profile_name(profile);
                }
                loader.env(Env::from(vars)).load().await
            })
            .await
    }
}

impl fmt::Debug for AwsCredentialChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AwsCredentialChain")
            .field("variables", &self.vars.as_ref().map(|_| "<given>"))
            .field("profile", &self.profile)
            .finish_non_exhaustive()
    }
}
