//! Where a Google access token comes from: a credentials file (a service account's key, a
//! user's refresh token from `gcloud auth application-default login`, workload identity
//! federation, an impersonated service account), or the metadata server of a Google Cloud
//! machine; each made into credentials by Google's own crate, `google-cloud-auth`.

use google_cloud_auth::credentials::{
    external_account, impersonated, mds, service_account, user_account, AccessTokenCredentials,
};
use serde_json::Value;

/// The scope Vertex AI asks for.
pub(crate) const CLOUD_PLATFORM: &str = "https://www.googleapis.com/auth/cloud-platform";

/// The kinds of file `google-cloud-auth` makes credentials of here.
const KINDS: [&str; 4] = [
    "service_account",
    "authorized_user",
    "external_account",
    "impersonated_service_account",
];

/// The fields of a credentials file that name where its secrets are sent.
const ENDPOINT_FIELDS: [&str; 3] = [
    "token_uri",
    "token_url",
    "service_account_impersonation_url",
];

/// A credentials file: its `type`, and what it holds.
pub(crate) struct KeyFile {
    kind: String,
    value: Value,
}

impl KeyFile {
    /// The file's credentials; why not, naming the file but nothing it holds.
    pub(crate) fn parse(text: &str, place: &str) -> Result<KeyFile, String> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| format!("{place} is not JSON ({})", crate::http::json_problem(&e)))?;
        let kind = match value.get("type").and_then(Value::as_str) {
            None | Some("") => return Err(format!("{place} has no `type`")),
            Some(kind) if KINDS.contains(&kind) => kind.to_owned(),
            // Google's other kinds are named; anything else is not quoted back (the file is
            // input, and its text may be anything).
            Some(other) => {
                let known = ["external_account_authorized_user", "gdch_service_account"];
                let kind = match known.contains(&other) {
                    true => format!("`{other}`"),
                    false => "an unknown `type` of".to_owned(),
                };
                return Err(format!(
                    "{place} holds {kind} credentials, which are not resolved here ({}): give \
                     a token with GoogleCredentials::from_token_provider",
                    KINDS.join(", ")
                ));
            }
        };
        Ok(KeyFile { kind, value })
    }

    /// The project the file names, if any (a service account's `project_id`).
    pub(crate) fn project(&self) -> Option<&str> {
        let project = match self.kind.as_str() {
            "service_account" => self.value.get("project_id"),
            _ => None,
        };
        project.and_then(Value::as_str).filter(|p| !p.is_empty())
    }

    /// The project billed for quota (`x-goog-user-project`) that the file names.
    pub(crate) fn quota_project(&self) -> Option<&str> {
        let project = self.value.get("quota_project_id").and_then(Value::as_str);
        project.filter(|p| !p.is_empty())
    }

    /// Credentials of the `cloud-platform` scope, made by `google-cloud-auth` from the file.
    /// Every endpoint the file names (where a refresh token, an assertion or a subject token
    /// is sent) must be HTTPS or on this machine.
    pub(crate) fn credentials(&self, place: &str) -> Result<AccessTokenCredentials, String> {
        for field in ENDPOINT_FIELDS {
            let Some(url) = self.value.get(field).and_then(Value::as_str) else {
                continue;
            };
            let safe = reqwest::Url::parse(url)
                .is_ok_and(|parsed| crate::http::https_or_local(&parsed, &[]));
            if !safe {
                return Err(format!(
                    "{place} cannot be used: its {field} `{}` is neither HTTPS nor on this \
                     machine",
                    crate::http::redacted_url(url)
                ));
            }
        }
        let value = self.value.clone();
        let scopes = [CLOUD_PLATFORM];
        let built = match self.kind.as_str() {
            "service_account" => service_account::Builder::new(value)
                .with_access_specifier(service_account::AccessSpecifier::from_scopes(scopes))
                .build_access_token_credentials(),
            // A user's token has the scopes of its login (`gcloud auth application-default
            // login` asks for cloud-platform); none are sent, as google-auth sends none.
            "authorized_user" => user_account::Builder::new(value).build_access_token_credentials(),
            "external_account" => external_account::Builder::new(value)
                .with_scopes(scopes)
                .build_access_token_credentials(),
            _ => impersonated::Builder::new(value)
                .with_scopes(scopes)
                .build_access_token_credentials(),
        };
        built.map_err(|e| {
            let why = crate::http::error_chain(&e);
            format!(
                "{place} holds `{}` credentials that cannot be used: {why}",
                self.kind
            )
        })
    }
}

/// Credentials from the metadata server at `host`.
pub(crate) fn metadata(host: &str) -> Result<AccessTokenCredentials, String> {
    mds::Builder::default()
        .with_endpoint(format!("http://{host}"))
        .with_scopes([CLOUD_PLATFORM])
        .build_access_token_credentials()
        .map_err(|e| {
            let why = crate::http::error_chain(&e);
            format!("the metadata server's credentials cannot be made: {why}")
        })
}
