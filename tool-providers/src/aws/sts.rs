//! AWS STS, the two calls that turn a role into temporary credentials: `AssumeRole`, signed
//! with other credentials, and `AssumeRoleWithWebIdentity`, which a web identity token (an
//! EKS service account's) authorises. STS speaks AWS's query protocol: a form POST, an XML
//! answer.

use std::time::{SystemTime, UNIX_EPOCH};

use reqwest::header::{HeaderMap, HeaderValue, CONTENT_TYPE};

use super::found::Found;
use super::sigv4::{signed_post, AwsCredentials, Post};
use super::time::parse_time;
use crate::http::{body_start, error_chain, form_body, tls_missing};
use tool_model::ModelError;

const FORM: &str = "application/x-www-form-urlencoded; charset=utf-8";

/// An STS endpoint, and the region requests to it are signed for.
pub(crate) struct Sts<'a> {
    pub client: &'a reqwest::Client,
    pub endpoint: String,
    pub region: String,
}

/// The role to assume, and how.
pub(crate) struct RoleRequest<'a> {
    pub role_arn: &'a str,
    /// The session's name; `ai-tool-session-{seconds}` when not given.
    pub session_name: Option<&'a str>,
    pub external_id: Option<&'a str>,
    pub duration_seconds: Option<u32>,
}

impl RoleRequest<'_> {
    fn parameters(&self, action: &str) -> Vec<(&'static str, String)> {
        let session_name = self.session_name.map_or_else(
            || {
                let now = SystemTime::now().duration_since(UNIX_EPOCH);
                format!("ai-tool-session-{}", now.map_or(0, |d| d.as_secs()))
            },
            str::to_owned,
        );
        let mut parameters = vec![
            ("Action", action.to_owned()),
            ("Version", "2011-06-15".to_owned()),
            ("RoleArn", self.role_arn.to_owned()),
            ("RoleSessionName", session_name),
        ];
        if let Some(id) = self.external_id {
            parameters.push(("ExternalId", id.to_owned()));
        }
        if let Some(seconds) = self.duration_seconds {
            parameters.push(("DurationSeconds", seconds.to_string()));
        }
        parameters
    }
}

impl Sts<'_> {
    /// `AssumeRole`, signed with `source`.
    pub(crate) async fn assume_role(
        &self,
        role: &RoleRequest<'_>,
        source: &AwsCredentials,
    ) -> Result<Found, ModelError> {
        let body = form_body(&role.parameters("AssumeRole"));
        let post = Post {
            url: &self.endpoint,
            region: &self.region,
            service: "sts",
            content_type: FORM,
        };
        let headers = signed_post(&post, source, &[], body.as_bytes(), SystemTime::now())?;
        let what = format!("STS AssumeRole of {}", role.role_arn);
        self.send(headers, body, &what).await
    }

    /// `AssumeRoleWithWebIdentity`, with this token; unsigned.
    pub(crate) async fn assume_role_with_web_identity(
        &self,
        role: &RoleRequest<'_>,
        token: &str,
    ) -> Result<Found, ModelError> {
        let mut parameters = role.parameters("AssumeRoleWithWebIdentity");
        parameters.push(("WebIdentityToken", token.trim().to_owned()));
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(FORM));
        let what = format!("STS AssumeRoleWithWebIdentity of {}", role.role_arn);
        self.send(headers, form_body(&parameters), &what).await
    }

    async fn send(
        &self,
        headers: HeaderMap,
        body: String,
        what: &str,
    ) -> Result<Found, ModelError> {
        let failed =
            |why: String| ModelError::Setup(format!("{what} at {} failed: {why}", self.endpoint));
        if let Some(why) = tls_missing(&self.endpoint) {
            return Err(failed(why.to_owned()));
        }
        let answer = self
            .client
            .post(&self.endpoint)
            .headers(headers)
            .body(body)
            .send()
            .await
            .map_err(|e| failed(error_chain(&e)))?;
        let status = answer.status().as_u16();
        let text = crate::http::credential_text(answer).await.map_err(failed)?;
        read_answer(status, &text).map_err(failed)
    }
}

/// The credentials in an STS answer, or what its error says.
fn read_answer(status: u16, text: &str) -> Result<Found, String> {
    let document = roxmltree::Document::parse(text)
        .map_err(|e| format!("HTTP {status}, not XML ({e}): {}", body_start(text, 200)))?;
    let root = document.root();
    if let Some(error) = element(root, "Error") {
        let code = text_of(error, "Code").unwrap_or("an error");
        let message = text_of(error, "Message").unwrap_or_default();
        return Err(format!("HTTP {status}, {code}: {message}"));
    }
    let credentials = element(root, "Credentials")
        .filter(|_| status == 200)
        .ok_or_else(|| format!("HTTP {status}, no credentials: {}", body_start(text, 200)))?;
    let field = |name: &str| {
        text_of(credentials, name).ok_or_else(|| format!("the answer's credentials have no {name}"))
    };
    let expiration = field("Expiration")?;
    let expires = parse_time(expiration)
        .ok_or_else(|| format!("the Expiration `{expiration}` is not a time"))?;
    Ok(Found {
        credentials: AwsCredentials::new(field("AccessKeyId")?, field("SecretAccessKey")?)
            .with_session_token(field("SessionToken")?),
        expires: Some(expires),
    })
}

/// The first element named `name` within `parent`.
fn element<'a, 'input>(
    parent: roxmltree::Node<'a, 'input>,
    name: &str,
) -> Option<roxmltree::Node<'a, 'input>> {
    parent
        .descendants()
        .find(|n| n.is_element() && n.tag_name().name() == name)
}

/// The trimmed text of the first element named `name` within `parent`, unless empty.
fn text_of<'a>(parent: roxmltree::Node<'a, '_>, name: &str) -> Option<&'a str> {
    element(parent, name)
        .and_then(|n| n.text())
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_and_errors_are_read_from_stss_xml() {
        let answer = r#"<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
          <AssumeRoleResult><Credentials>
            <AccessKeyId>ASIAEXAMPLE</AccessKeyId><SecretAccessKey>s3cret</SecretAccessKey>
            <SessionToken>tok</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration>
          </Credentials></AssumeRoleResult></AssumeRoleResponse>"#;
        let found = read_answer(200, answer).unwrap();
        assert_eq!(found.credentials.access_key_id(), "ASIAEXAMPLE");
        assert_eq!(found.credentials.secret_access_key(), "s3cret");
        assert_eq!(found.credentials.session_token(), Some("tok"));
        assert!(found.expires.is_some());
        let refused = r#"<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>
          <Message>not authorized to perform sts:AssumeRole</Message></Error></ErrorResponse>"#;
        assert_eq!(
            read_answer(403, refused).unwrap_err(),
            "HTTP 403, AccessDenied: not authorized to perform sts:AssumeRole"
        );
        assert!(read_answer(502, "Bad gateway")
            .unwrap_err()
            .starts_with("HTTP 502, not XML"));
        let partial = answer.replace("<SessionToken>tok</SessionToken>", "");
        assert_eq!(
            read_answer(200, &partial).unwrap_err(),
            "the answer's credentials have no SessionToken"
        );
    }

    #[test]
    fn parameters_are_form_encoded() {
        let role = RoleRequest {
            role_arn: "arn:aws:iam::1:role/a b",
            session_name: Some("s"),
            external_id: Some("x&y"),
            duration_seconds: None,
        };
        assert_eq!(
            form_body(&role.parameters("AssumeRole")),
            "Action=AssumeRole&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fa%20b\
             &RoleSessionName=s&ExternalId=x%26y"
        );
    }
}
