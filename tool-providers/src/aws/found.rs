//! Credentials found, and the JSON shape in which AWS's endpoints and a `credential_process`
//! give them.

use std::time::SystemTime;

use serde::Deserialize;

use super::sigv4::AwsCredentials;
use super::time::parse_time;
use tool_model::ModelError;

/// Credentials found, and when they expire.
#[derive(Clone, Debug)]
pub(crate) struct Found {
    pub credentials: AwsCredentials,
    pub expires: Option<SystemTime>,
}

impl Found {
    /// Credentials that do not expire.
    pub(crate) fn lasting(credentials: AwsCredentials) -> Self {
        Found {
            credentials,
            expires: None,
        }
    }
}

/// Credentials as AWS's endpoints and `credential_process` give them.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub(crate) struct Issued {
    pub version: Option<u32>,
    access_key_id: String,
    secret_access_key: String,
    #[serde(alias = "SessionToken")]
    token: Option<String>,
    expiration: Option<String>,
}

impl Issued {
    pub(crate) fn parse(text: &str, source: &str) -> Result<Found, ModelError> {
        let issued: Issued = serde_json::from_str(text).map_err(|e| {
            let problem = crate::http::json_problem(&e);
            ModelError::Setup(format!("{source} answered without credentials: {problem}"))
        })?;
        issued.found(source)
    }

    pub(crate) fn found(self, source: &str) -> Result<Found, ModelError> {
        let expires = match &self.expiration {
            Some(text) => Some(parse_time(text).ok_or_else(|| {
                // Quoted only when it is short and looks like a time: the answer is input.
                let looks_like_a_time = text.len() <= 40
                    && text
                        .bytes()
                        .all(|b| b.is_ascii_digit() || b"-:TZ.+ ".contains(&b));
                let shown = match looks_like_a_time {
                    true => format!(": `{text}`"),
                    false => String::new(),
                };
                ModelError::Setup(format!(
                    "{source} gave an Expiration that is not a time{shown}"
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
