//! An AWS access key, as the Bedrock client signs with it.

/// An AWS access key: the key id, its secret and, for temporary credentials, the session
/// token. Its `Debug` form shows the key id only.
#[derive(Clone, PartialEq, Eq)]
pub struct AwsCredentials {
    access_key_id: String,
    secret_access_key: String,
    session_token: Option<String>,
}

impl AwsCredentials {
    /// Long-term credentials: an access key id and its secret.
    pub fn new(access_key_id: impl Into<String>, secret_access_key: impl Into<String>) -> Self {
        AwsCredentials {
            access_key_id: access_key_id.into(),
            secret_access_key: secret_access_key.into(),
            session_token: None,
        }
    }

    /// With the session token of temporary credentials (sent as `x-amz-security-token`).
    pub fn with_session_token(mut self, token: impl Into<String>) -> Self {
        self.session_token = Some(token.into());
        self
    }

    /// The credentials in `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and, if set,
    /// `AWS_SESSION_TOKEN`; `None` unless the first two are set and not empty.
    pub fn from_env() -> Option<Self> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let credentials =
            AwsCredentials::new(var("AWS_ACCESS_KEY_ID")?, var("AWS_SECRET_ACCESS_KEY")?);
        Some(match var("AWS_SESSION_TOKEN") {
            Some(token) => credentials.with_session_token(token),
            None => credentials,
        })
    }

    /// The access key id.
    pub fn access_key_id(&self) -> &str {
        &self.access_key_id
    }

    /// The secret access key.
    pub fn secret_access_key(&self) -> &str {
        &self.secret_access_key
    }

    /// The session token of temporary credentials.
    pub fn session_token(&self) -> Option<&str> {
        self.session_token.as_deref()
    }
}

impl std::fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<hidden>")
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "<hidden>"),
            )
            .finish()
    }
}

impl From<&AwsCredentials> for aws_credential_types::Credentials {
    fn from(credentials: &AwsCredentials) -> Self {
        aws_credential_types::Credentials::new(
            credentials.access_key_id.clone(),
            credentials.secret_access_key.clone(),
            credentials.session_token.clone(),
            None,
            "ai-tool",
        )
    }
}

impl From<&aws_credential_types::Credentials> for AwsCredentials {
    fn from(credentials: &aws_credential_types::Credentials) -> Self {
        AwsCredentials {
            access_key_id: credentials.access_key_id().to_owned(),
            secret_access_key: credentials.secret_access_key().to_owned(),
            session_token: credentials.session_token().map(str::to_owned),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_never_shows_in_debug() {
        let credentials =
            AwsCredentials::new("AKIDEXAMPLE", "very-secret").with_session_token("tok");
        let shown = format!("{credentials:?}");
        assert!(shown.contains("AKIDEXAMPLE"), "{shown}");
        assert!(
            !shown.contains("very-secret") && !shown.contains("tok\""),
            "{shown}"
        );
    }

    #[test]
    fn credentials_go_to_the_aws_sdk_and_back_whole() {
        let ours = AwsCredentials::new("AKID", "secret").with_session_token("token");
        let theirs = aws_credential_types::Credentials::from(&ours);
        assert_eq!(theirs.session_token(), Some("token"));
        assert_eq!(AwsCredentials::from(&theirs), ours);
    }
}
