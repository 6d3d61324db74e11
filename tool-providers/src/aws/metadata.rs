//! The metadata endpoints that give a workload its role's credentials: a container's (ECS,
//! EKS Pod Identity) and an EC2 instance's (IMDS). Never reached through a proxy.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION};

use super::found::{Found, Issued};
use crate::http::{body_start, error_chain, https_or_local, tls_missing};
use tool_model::ModelError;

/// How long a container's credentials endpoint may take, and how many times it is tried, as in
/// botocore.
const CONTAINER_TIMEOUT: Duration = Duration::from_secs(2);
const CONTAINER_ATTEMPTS: u32 = 3;

/// How long the instance metadata service may take, as in botocore.
const IMDS_TIMEOUT: Duration = Duration::from_secs(1);

/// The container credentials host of ECS, for `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`.
const ECS_HOST: &str = "http://169.254.170.2";

/// The instance metadata service of EC2.
const IMDS_ENDPOINT: &str = "http://169.254.169.254";

/// A container's credentials, when its endpoint is set; a failure to get them is an error,
/// as in botocore.
pub(crate) async fn container(
    client: &reqwest::Client,
    var: impl Fn(&str) -> Option<String>,
) -> Result<Option<Found>, ModelError> {
    let url = match (
        var("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"),
        var("AWS_CONTAINER_CREDENTIALS_FULL_URI"),
    ) {
        (Some(relative), _) => format!("{ECS_HOST}{relative}"),
        (None, Some(full)) => {
            check_container_url(&full)?;
            if let Some(why) = tls_missing(&full) {
                return Err(ModelError::Setup(format!(
                    "AWS_CONTAINER_CREDENTIALS_FULL_URI `{full}`: {why}"
                )));
            }
            full
        }
        (None, None) => return Ok(None),
    };
    let token = match var("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE") {
        Some(file) => Some(std::fs::read_to_string(&file).map_err(|e| {
            ModelError::Setup(format!(
                "cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE {file}: {e}"
            ))
        })?),
        None => var("AWS_CONTAINER_AUTHORIZATION_TOKEN"),
    };
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    if let Some(token) = token {
        let mut token = HeaderValue::from_str(token.trim()).map_err(|_| {
            ModelError::Setup(
                "the container's authorization token has characters a header cannot carry".into(),
            )
        })?;
        token.set_sensitive(true);
        headers.insert(AUTHORIZATION, token);
    }
    let mut attempt = 1;
    let text = loop {
        let request = client
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
pub(crate) async fn instance_role(
    client: &reqwest::Client,
    var: impl Fn(&str) -> Option<String>,
) -> Result<Found, String> {
    let disabled = var("AWS_EC2_METADATA_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if disabled {
        return Err("AWS_EC2_METADATA_DISABLED is true".to_owned());
    }
    let endpoint =
        var("AWS_EC2_METADATA_SERVICE_ENDPOINT").unwrap_or_else(|| IMDS_ENDPOINT.to_owned());
    let base = endpoint.trim_end_matches('/');
    let unavailable = |why: String| format!("the instance metadata service at {base}: {why}");
    let token_url = format!("{base}/latest/api/token");
    let answer = client
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
                crate::http::credential_text(answer)
                    .await
                    .map_err(unavailable)?,
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
        let mut request = client.get(&url).timeout(IMDS_TIMEOUT);
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

/// A GET's body, when the answer is 200.
async fn fetch(request: reqwest::RequestBuilder, url: &str) -> Result<String, String> {
    let answer = request.send().await.map_err(|e| error_chain(&e))?;
    let status = answer.status().as_u16();
    let text = crate::http::credential_text(answer).await?;
    if status != 200 {
        return Err(format!(
            "{url} answered {status}: {}",
            body_start(&text, 200)
        ));
    }
    Ok(text)
}

/// A full container credentials URL must be HTTPS, or HTTP to this host (loopback) or to the
/// container hosts of ECS and EKS, as botocore allows.
fn check_container_url(url: &str) -> Result<(), ModelError> {
    let parsed = reqwest::Url::parse(url).map_err(|e| {
        ModelError::Setup(format!(
            "AWS_CONTAINER_CREDENTIALS_FULL_URI `{url}` is not a URL: {e}"
        ))
    })?;
    // ECS's and EKS's container credentials hosts.
    let container_hosts = [
        std::net::IpAddr::from([169, 254, 170, 2]),
        std::net::IpAddr::from([169, 254, 170, 23]),
        std::net::IpAddr::from([0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23]),
    ];
    if https_or_local(&parsed, &container_hosts) {
        Ok(())
    } else {
        Err(ModelError::Setup(format!(
            "AWS_CONTAINER_CREDENTIALS_FULL_URI `{url}` must be HTTPS, or HTTP to a loopback \
             address or a container credentials host of ECS or EKS"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
