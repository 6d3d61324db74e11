//! AWS Signature Version 4 for one JSON POST to Bedrock: the canonical request, the string to
//! sign, the derived key and the `Authorization` header, as AWS documents them for services
//! other than S3 (the path encoded twice, the payload hashed), and the headers that carry them.

use std::time::SystemTime;

use hmac::{Hmac, KeyInit, Mac};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, CONTENT_TYPE, HOST};
use sha2::{Digest, Sha256};

use super::time::timestamp;
use tool_model::ModelError;

pub(crate) use crate::percent::uri_encode;

/// The signing name of Bedrock Runtime, whose endpoints are `bedrock-runtime.{region}...`.
const SIGNING_NAME: &str = "bedrock";

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

/// Headers sent but not signed, as botocore leaves them: proxies may rewrite them.
const UNSIGNED_HEADERS: [&str; 3] = ["expect", "user-agent", "x-amzn-trace-id"];

/// The headers a signature writes, which no other header may replace.
const SIGNATURE_HEADERS: [&str; 5] = [
    "authorization",
    "content-type",
    "host",
    "x-amz-date",
    "x-amz-security-token",
];

/// The headers of a JSON POST of `body` to `url` signed with SigV4 for Bedrock in `region` at
/// `now`: `content-type`, `host`, `x-amz-date` and, for temporary credentials,
/// `x-amz-security-token`, and the `extra` headers (lower-case names), all signed but
/// `user-agent`, `expect` and `x-amzn-trace-id`, and `authorization`.
pub(crate) fn signed_headers(
    url: &str,
    region: &str,
    credentials: &AwsCredentials,
    extra: &[(&str, &str)],
    body: &[u8],
    now: SystemTime,
) -> Result<HeaderMap, ModelError> {
    let post = Post {
        url,
        region,
        service: SIGNING_NAME,
        content_type: "application/json",
    };
    signed_post(&post, credentials, extra, body, now)
}

/// Where a signed POST goes, and what its body is.
pub(crate) struct Post<'a> {
    pub url: &'a str,
    pub region: &'a str,
    /// The service's signing name: `bedrock`, `sts`.
    pub service: &'a str,
    pub content_type: &'static str,
}

/// The headers of `post` with `body`, signed at `now`, as [`signed_headers`] says.
pub(crate) fn signed_post(
    post: &Post<'_>,
    credentials: &AwsCredentials,
    extra: &[(&str, &str)],
    body: &[u8],
    now: SystemTime,
) -> Result<HeaderMap, ModelError> {
    let (url, region) = (post.url, post.region);
    let shown = url;
    let url = reqwest::Url::parse(url)
        .map_err(|e| ModelError::Setup(format!("`{shown}` is not a URL: {e}")))?;
    let host = match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        (None, _) => return Err(ModelError::Setup(format!("`{shown}` has no host"))),
    };
    let timestamp = timestamp(now);
    let mut signed = vec![
        ("content-type", post.content_type),
        ("host", host.as_str()),
        ("x-amz-date", timestamp.as_str()),
    ];
    if let Some(token) = credentials.session_token() {
        signed.push(("x-amz-security-token", token));
    }
    for &(name, value) in extra {
        if SIGNATURE_HEADERS.contains(&name) {
            return Err(ModelError::Setup(format!(
                "`{name}` is written by the AWS signature; with_header cannot set it"
            )));
        }
        if !UNSIGNED_HEADERS.contains(&name) {
            signed.push((name, value));
        }
    }
    let scope = Scope {
        region,
        service: post.service,
        timestamp: &timestamp,
    };
    let authorization = authorization(credentials, &scope, url.path(), &signed, body);
    let mut headers = HeaderMap::new();
    let value = |text: &str| {
        HeaderValue::from_str(text).map_err(|_| {
            ModelError::Setup(
                "the AWS credentials or the region have characters a header cannot carry".into(),
            )
        })
    };
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(post.content_type));
    headers.insert(HOST, value(&host)?);
    headers.insert(HeaderName::from_static("x-amz-date"), value(&timestamp)?);
    if let Some(token) = credentials.session_token() {
        let mut token = value(token)?;
        token.set_sensitive(true);
        headers.insert(HeaderName::from_static("x-amz-security-token"), token);
    }
    for &(name, text) in extra {
        let mut extra = value(text)?;
        extra.set_sensitive(true);
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| ModelError::Setup(format!("`{name}` is not a header name")))?;
        headers.insert(name, extra);
    }
    let mut authorization = value(&authorization)?;
    authorization.set_sensitive(true);
    headers.insert(AUTHORIZATION, authorization);
    Ok(headers)
}

/// What a signature covers besides the headers: where and when.
pub(crate) struct Scope<'a> {
    /// The region, such as `us-east-1`.
    pub region: &'a str,
    /// The signing name of the service (`bedrock` for Bedrock Runtime).
    pub service: &'a str,
    /// The request time, `YYYYMMDDTHHMMSSZ`, also sent as `x-amz-date`.
    pub timestamp: &'a str,
}

/// The `Authorization` header of a POST to `path` (as sent, percent-encoded) with these
/// headers, each `(lower-case name, value)`, all of them signed, and this body.
pub(crate) fn authorization(
    credentials: &AwsCredentials,
    scope: &Scope<'_>,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> String {
    let mut headers: Vec<(&str, String)> = headers.iter().map(|(n, v)| (*n, trim_all(v))).collect();
    headers.sort_by(|a, b| a.0.cmp(b.0));
    let signed_headers = headers
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(";");
    let canonical_headers: String = headers
        .iter()
        .map(|(name, value)| format!("{name}:{value}\n"))
        .collect();
    let canonical_request = format!(
        "POST\n{}\n\n{canonical_headers}\n{signed_headers}\n{}",
        uri_encode(path, true),
        hex(&Sha256::digest(body)),
    );
    let date = &scope.timestamp[..scope.timestamp.len().min(8)];
    let credential_scope = format!("{date}/{}/{}/aws4_request", scope.region, scope.service);
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n{credential_scope}\n{}",
        scope.timestamp,
        hex(&Sha256::digest(canonical_request.as_bytes())),
    );
    let secret = format!("AWS4{}", credentials.secret_access_key);
    let key = [date, scope.region, scope.service, "aws4_request"]
        .iter()
        .fold(secret.into_bytes(), |key, part| hmac(&key, part.as_bytes()));
    let signature = hex(&hmac(&key, string_to_sign.as_bytes()));
    format!(
        "AWS4-HMAC-SHA256 Credential={}/{credential_scope}, SignedHeaders={signed_headers}, Signature={signature}",
        credentials.access_key_id
    )
}

/// A header value as SigV4 signs it: trimmed, with runs of spaces as one.
fn trim_all(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn hmac(key: &[u8], message: &[u8]) -> Vec<u8> {
    // HMAC takes a key of any length, so this cannot fail.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        return Vec::new();
    };
    mac.update(message);
    mac.finalize().into_bytes().to_vec()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn paths_are_encoded_once_as_labels_and_again_when_canonical() {
        let label = uri_encode("us.anthropic.claude-sonnet-4-5-20250929-v1:0", false);
        assert_eq!(label, "us.anthropic.claude-sonnet-4-5-20250929-v1%3A0");
        let path = format!("/model/{label}/converse");
        assert_eq!(
            uri_encode(&path, true),
            "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%253A0/converse"
        );
        assert_eq!(uri_encode("a b/ü", false), "a%20b%2F%C3%BC");
    }

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

    /// AWS's published Signature Version 4 test suite, case `post-vanilla`.
    #[test]
    fn the_signature_of_awss_post_vanilla_case() {
        let credentials =
            AwsCredentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
        let scope = Scope {
            region: "us-east-1",
            service: "service",
            timestamp: "20150830T123600Z",
        };
        let headers = [
            ("host", "example.amazonaws.com"),
            ("x-amz-date", "20150830T123600Z"),
        ];
        assert_eq!(
            authorization(&credentials, &scope, "/", &headers, b""),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
             SignedHeaders=host;x-amz-date, \
             Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
        );
    }

    #[test]
    fn each_signing_is_at_its_own_time_and_sends_what_it_signed() {
        let credentials = AwsCredentials::new("AKID", "secret").with_session_token("token");
        let url = "http://127.0.0.1:8080/model/m%3A0/converse";
        let at = |seconds| UNIX_EPOCH + Duration::from_secs(seconds);
        let first = signed_headers(
            url,
            "eu-west-3",
            &credentials,
            &[],
            b"{}",
            at(1_795_552_012),
        )
        .unwrap();
        let later = signed_headers(
            url,
            "eu-west-3",
            &credentials,
            &[],
            b"{}",
            at(1_795_552_072),
        )
        .unwrap();
        assert_eq!(first["x-amz-date"], "20261124T202652Z");
        assert_eq!(later["x-amz-date"], "20261124T202752Z");
        assert_ne!(first[AUTHORIZATION], later[AUTHORIZATION]);
        assert_eq!(first[HOST], "127.0.0.1:8080");
        assert_eq!(first["x-amz-security-token"], "token");
        assert!(first[AUTHORIZATION].is_sensitive());
        let signed = first[AUTHORIZATION].to_str().unwrap();
        assert!(
            signed.contains("/eu-west-3/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token,"),
            "{signed}"
        );
        let error =
            signed_headers("not a url", "eu-west-3", &credentials, &[], b"{}", at(0)).unwrap_err();
        assert!(
            error.to_string().contains("`not a url` is not a URL"),
            "{error}"
        );
    }

    #[test]
    fn extra_headers_are_signed_and_sent_but_cannot_replace_the_signatures_own() {
        let credentials = AwsCredentials::new("AKID", "secret");
        let url = "http://127.0.0.1:8080/model/m/converse";
        let now = UNIX_EPOCH + Duration::from_secs(1_795_552_012);
        let extra = [("x-gateway-key", "gw"), ("user-agent", "proxy-rewritten")];
        let headers = signed_headers(url, "eu-west-3", &credentials, &extra, b"{}", now).unwrap();
        assert_eq!(headers["x-gateway-key"], "gw");
        assert_eq!(headers["user-agent"], "proxy-rewritten", "sent, not signed");
        assert!(headers["x-gateway-key"].is_sensitive());
        let signed = headers[AUTHORIZATION].to_str().unwrap();
        assert!(
            signed.contains("SignedHeaders=content-type;host;x-amz-date;x-gateway-key,"),
            "{signed}"
        );
        for name in ["host", "x-amz-date", "authorization"] {
            let extra = [(name, "x")];
            let error =
                signed_headers(url, "eu-west-3", &credentials, &extra, b"{}", now).unwrap_err();
            let expected = format!("`{name}` is written by the AWS signature");
            assert!(error.to_string().contains(&expected), "{error}");
        }
    }

    #[test]
    fn header_values_are_trimmed_and_sorted_by_name_and_the_body_is_signed() {
        let credentials = AwsCredentials::new("AKID", "secret");
        let scope = Scope {
            region: "eu-west-1",
            service: "bedrock",
            timestamp: "20261124T202652Z",
        };
        let headers = [
            ("x-amz-date", "20261124T202652Z"),
            ("host", "  example.com "),
        ];
        let signed = authorization(&credentials, &scope, "/model/m/converse", &headers, b"{}");
        assert!(
            signed.starts_with(
                "AWS4-HMAC-SHA256 Credential=AKID/20261124/eu-west-1/bedrock/aws4_request, \
                 SignedHeaders=host;x-amz-date, Signature="
            ),
            "{signed}"
        );
        let signature = |s: &str| s.rsplit('=').next().unwrap_or_default().len();
        assert_eq!(signature(&signed), 64);
        let other_body = authorization(&credentials, &scope, "/model/m/converse", &headers, b"[]");
        assert_ne!(signed, other_body);
        let spaced = [("x-amz-date", "20261124T202652Z"), ("host", "example.com")];
        let same = authorization(&credentials, &scope, "/model/m/converse", &spaced, b"{}");
        assert_eq!(signed, same, "values are trimmed before signing");
    }
}
