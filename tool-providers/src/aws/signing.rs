//! AWS Signature Version 4 for Bedrock's JSON POSTs, by AWS's own signer (`aws-sigv4`): the
//! path encoded twice, the payload hashed, every header signed but those proxies rewrite.

use std::time::SystemTime;

use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};

use super::AwsCredentials;
use tool_model::ModelError;

/// The signing name of Bedrock Runtime, whose endpoints are `bedrock-runtime.{region}...`.
const SIGNING_NAME: &str = "bedrock";

/// The headers a signature writes, which no other header may replace.
const SIGNATURE_HEADERS: [&str; 5] = [
    "authorization",
    "content-type",
    "host",
    "x-amz-date",
    "x-amz-security-token",
];

/// The headers of a JSON POST of `body` to `url` signed with SigV4 for Bedrock in `region` at
/// `now`: `content-type`, `x-amz-date` and, for temporary credentials,
/// `x-amz-security-token`, and the `extra` headers (lower-case names), all signed (with the
/// host) but `user-agent`, `expect` and `x-amzn-trace-id`, and `authorization`.
pub(crate) fn signed_headers(
    url: &str,
    region: &str,
    credentials: &AwsCredentials,
    extra: &[(&str, &str)],
    body: &[u8],
    now: SystemTime,
) -> Result<HeaderMap, ModelError> {
    let setup = |why: String| ModelError::Setup(format!("the request cannot be signed: {why}"));
    if let Some((name, _)) = extra
        .iter()
        .find(|(name, _)| SIGNATURE_HEADERS.contains(name))
    {
        return Err(setup(format!(
            "`{name}` is written by the AWS signature and cannot be set"
        )));
    }
    if reqwest::Url::parse(url).is_err() {
        return Err(setup(format!("`{url}` is not a URL")));
    }
    let mut headers = vec![("content-type", "application/json")];
    headers.extend_from_slice(extra);
    let identity: Identity = aws_credential_types::Credentials::from(credentials).into();
    let mut settings = SigningSettings::default();
    // Proxies may rewrite these: sent, not signed (botocore leaves them out too).
    settings.excluded_headers = Some(
        ["expect", "user-agent", "x-amzn-trace-id", "authorization"]
            .map(Into::into)
            .to_vec(),
    );
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(SIGNING_NAME)
        .time(now)
        .settings(settings)
        .build()
        .map_err(|e| setup(e.to_string()))?
        .into();
    let request = SignableRequest::new(
        "POST",
        url,
        headers.iter().copied(),
        SignableBody::Bytes(body),
    )
    .map_err(|e| setup(e.to_string()))?;
    let (instructions, _) = sign(request, &params)
        .map_err(|e| setup(e.to_string()))?
        .into_parts();
    let mut signed = HeaderMap::new();
    for (name, value) in headers.iter().copied().chain(instructions.headers()) {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| setup(format!("`{name}` is not a header name")))?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|_| setup(format!("the value of `{name}` cannot be a header's")))?;
        // Every header but the content type may carry a secret (a gateway's key, the
        // signature, the session token): never shown.
        value.set_sensitive(name != reqwest::header::CONTENT_TYPE);
        signed.insert(name, value);
    }
    if !signed.contains_key(AUTHORIZATION) {
        return Err(setup("the signer wrote no Authorization header".into()));
    }
    Ok(signed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn each_signing_is_at_its_own_time_and_sends_what_it_signed() {
        let credentials = AwsCredentials::new("AKID", "secret").with_session_token("token");
        let url = "http://127.0.0.1:8080/model/m%3A0/converse";
        let at = |seconds| UNIX_EPOCH + Duration::from_secs(seconds);
        let sign = |seconds| {
            signed_headers(url, "eu-west-3", &credentials, &[], b"{}", at(seconds)).unwrap()
        };
        let (first, later) = (sign(1_795_552_012), sign(1_795_552_072));
        assert_eq!(first["x-amz-date"], "20261124T202652Z");
        assert_eq!(later["x-amz-date"], "20261124T202752Z");
        assert_ne!(first[AUTHORIZATION], later[AUTHORIZATION]);
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
    fn the_body_is_signed() {
        let credentials = AwsCredentials::new("AKID", "secret");
        let url = "https://bedrock-runtime.eu-west-1.amazonaws.com/model/m/converse";
        let now = UNIX_EPOCH + Duration::from_secs(1_795_552_012);
        let sign = |body: &[u8]| {
            let headers = signed_headers(url, "eu-west-1", &credentials, &[], body, now).unwrap();
            headers[AUTHORIZATION].to_str().unwrap().to_owned()
        };
        assert_ne!(sign(b"{}"), sign(b"[]"));
        assert_eq!(sign(b"{}"), sign(b"{}"));
    }
}
