//! What every HTTP model client shares: the API key that is never shown, and POSTing JSON with
//! retries of 429 and 5xx (exponential backoff with jitter, honouring `Retry-After`).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};
use serde_json::Value;

use tool_model::ModelError;

/// An API key. Its `Debug` form hides it, and the clients never log it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// A key given in code.
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key in an environment variable, when it is set and not empty.
    pub fn from_env(variable: &str) -> Option<Self> {
        std::env::var(variable)
            .ok()
            .filter(|k| !k.trim().is_empty())
            .map(ApiKey)
    }

    /// The key itself, for a request header.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<hidden>)")
    }
}

/// The headers of a JSON request, with the key (if any) under `header`, written `Bearer KEY`
/// when `bearer`, and marked sensitive so that no log shows it.
pub(crate) fn json_headers(
    key: Option<&ApiKey>,
    header: HeaderName,
    bearer: bool,
) -> Result<HeaderMap, ModelError> {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(key) = key {
        let text = if bearer {
            format!("Bearer {}", key.expose())
        } else {
            key.expose().to_owned()
        };
        let mut value = HeaderValue::from_str(&text).map_err(|_| {
            ModelError::Setup("the API key has characters a header cannot carry".into())
        })?;
        value.set_sensitive(true);
        headers.insert(header, value);
    }
    Ok(headers)
}

/// Headers a client adds to every request, set with `with_header`: a gateway's key, an
/// organisation, a beta flag. Each replaces the client's own header of the same name. Their
/// values are marked sensitive (no log shows them) and `Debug` shows their names only. A name
/// or value a header cannot carry is reported when a request is made, as a setup error naming
/// the header.
#[derive(Clone, Default)]
pub(crate) struct ExtraHeaders {
    headers: HeaderMap,
    /// The first header that could not be added, and why.
    invalid: Option<String>,
}

impl ExtraHeaders {
    /// Adds `name: value`, replacing an earlier value of the same name.
    pub(crate) fn insert(&mut self, name: &str, value: &str) {
        let Ok(parsed) = HeaderName::from_bytes(name.as_bytes()) else {
            // Only the name's start is shown: a misplaced `Authorization: Bearer ...` would
            // otherwise show a key.
            let start: String = name.chars().take(16).collect();
            let cut = if start.len() < name.len() { "..." } else { "" };
            self.invalid.get_or_insert_with(|| {
                format!("`{start}{cut}` (with_header) is not a header name")
            });
            return;
        };
        // Visible ASCII only: a value that does not read back as text could not be signed.
        let value = HeaderValue::from_str(value)
            .ok()
            .filter(|v| v.to_str().is_ok());
        let Some(mut value) = value else {
            self.invalid.get_or_insert_with(|| {
                format!("the value of header `{name}` (with_header) has characters a header cannot carry")
            });
            return;
        };
        value.set_sensitive(true);
        self.headers.insert(parsed, value);
    }

    /// Whether a header of this name was added (an AI gateway's key, say).
    pub(crate) fn has(&self, name: &str) -> bool {
        self.headers.contains_key(name)
    }

    /// `headers` with these added, each replacing the one of its name.
    pub(crate) fn apply(&self, mut headers: HeaderMap) -> Result<HeaderMap, ModelError> {
        self.check()?;
        for (name, value) in &self.headers {
            headers.insert(name.clone(), value.clone());
        }
        Ok(headers)
    }

    /// The headers, each `(lower-case name, value)`, for a request signature.
    pub(crate) fn pairs(&self) -> Result<Vec<(&str, &str)>, ModelError> {
        self.check()?;
        Ok(self
            .headers
            .iter()
            // A value was made from a `&str` of visible ASCII, so it reads back as one.
            .map(|(name, value)| (name.as_str(), value.to_str().unwrap_or_default()))
            .collect())
    }

    fn check(&self) -> Result<(), ModelError> {
        match &self.invalid {
            Some(why) => Err(ModelError::Setup(why.clone())),
            None => Ok(()),
        }
    }
}

impl std::fmt::Debug for ExtraHeaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.headers.keys()).finish()
    }
}

/// How a client retries: 429 and 5xx answers, and connections that failed or broke.
///
/// The wait before retry `n` (from 0) is `initial_backoff * 2^n`, at most `max_backoff`, less
/// a random part of up to a half (jitter, so that many clients do not retry in step); a
/// `Retry-After` (or OpenAI's `retry-after-ms`) header replaces it, up to `max_backoff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first request; 3 by default.
    pub max_retries: u32,
    /// The first wait; 500 ms by default.
    pub initial_backoff: Duration,
    /// The longest wait, `Retry-After` included; 30 s by default.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// No retries.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// The wait before retry `retry` (from 0), given the server's `Retry-After`, if any.
    pub(crate) fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(asked) = retry_after {
            return asked.min(self.max_backoff);
        }
        let full = self
            .initial_backoff
            .saturating_mul(2u32.saturating_pow(retry))
            .min(self.max_backoff);
        let jitter = full.mul_f64(random_fraction() / 2.0);
        full - jitter
    }
}

/// A number in [0, 1), random enough for jitter, from the standard library's random hasher
/// seeds.
fn random_fraction() -> f64 {
    let bits = RandomState::new().build_hasher().finish();
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// Whether an answer with this status is worth another try.
fn is_retryable(status: u16) -> bool {
    status == 429 || (500..=599).contains(&status)
}

/// How long the server asks to wait: `retry-after-ms` (OpenAI), or `Retry-After` in seconds.
/// An HTTP date is not honoured (the backoff applies instead).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    header("retry-after")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
}

/// The provider's own message in an error body: `error.message` (OpenAI, Anthropic, Gemini),
/// `message` or `Message` (AWS), or the start of the body.
fn provider_message(body: &[u8]) -> String {
    if let Ok(json) = serde_json::from_slice::<Value>(body) {
        let message = json
            .pointer("/error/message")
            .or_else(|| json.get("message"))
            .or_else(|| json.get("Message"))
            .and_then(Value::as_str);
        if let Some(message) = message {
            return message.to_owned();
        }
    }
    match body_start(&String::from_utf8_lossy(body), 300) {
        text if text.is_empty() => "(no message)".to_owned(),
        text => text,
    }
}

/// `url` to show in a message: without its user name, password, query and fragment, which may
/// carry secrets; `an unreadable URL` when it does not parse.
pub(crate) fn redacted_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut url) => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.set_fragment(None);
            url.to_string()
        }
        Err(_) => "an unreadable URL".to_owned(),
    }
}

/// Refuses, before anything is sent, a request to a provider's own endpoint (`url` on
/// `provider_host`) without a key: it would only come back `401`. `variable` is where the key
/// is read from. A key given in a header of the caller's (`key_header`, say through an AI
/// gateway) counts; an endpoint elsewhere (a local server) needs none.
pub(crate) fn key_needed(
    key: Option<&ApiKey>,
    extra: &ExtraHeaders,
    key_header: &str,
    url: &str,
    provider_host: &str,
    variable: &str,
) -> Result<(), ModelError> {
    let on_provider = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(|h| h.eq_ignore_ascii_case(provider_host)))
        .unwrap_or(false);
    if key.is_none() && on_provider && !extra.has(key_header) {
        return Err(ModelError::Setup(format!(
            "no API key for {provider_host}: set {variable}, or give one with with_api_key"
        )));
    }
    Ok(())
}

/// Whether a secret may go to `url`: over HTTPS, or over HTTP only to this machine
/// (`localhost`, a loopback address) or to one of `local_hosts` (a container's credentials
/// endpoint, say).
pub(crate) fn https_or_local(url: &reqwest::Url, local_hosts: &[std::net::IpAddr]) -> bool {
    let host = url.host_str().unwrap_or_default();
    let ip = (host.trim_start_matches('[').trim_end_matches(']')).parse::<std::net::IpAddr>();
    match (url.scheme(), ip) {
        ("https", _) => !host.is_empty(),
        ("http", Ok(ip)) => ip.is_loopback() || local_hosts.contains(&ip),
        ("http", Err(_)) => host == "localhost",
        _ => false,
    }
}

/// The start of an answer's body, for an error message: trimmed, at most `chars` characters,
/// and `...` where it was cut.
pub(crate) fn body_start(text: &str, chars: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(chars) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_owned(),
    }
}

/// Why `url` cannot be reached by this build: an `https` URL needs TLS, which the `rustls`
/// feature adds (reqwest alone would only say that its scheme is not http).
pub(crate) fn tls_missing(url: &str) -> Option<&'static str> {
    tls_missing_in(url, cfg!(feature = "rustls"))
}

fn tls_missing_in(url: &str, tls: bool) -> Option<&'static str> {
    let https = url
        .get(..6)
        .is_some_and(|s| s.eq_ignore_ascii_case("https:"));
    (https && !tls).then_some(
        "HTTPS needs ai-tool's `tls` feature, on by default (tool-providers' `rustls`): this build \
         was made with `default-features = false`",
    )
}

/// One POST of a JSON body, to be retried as a whole.
pub(crate) struct JsonPost<'a> {
    pub client: &'a HttpClient,
    pub url: &'a str,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub retry: RetryPolicy,
    pub provider: &'static str,
    /// The headers of each retry, for a request signed at the time it is sent (Bedrock's
    /// SigV4, whose signature names its time); `None` sends `headers` every time.
    pub sign: Option<Signer<'a>>,
}

/// What signs each attempt of a request: the headers for this body, now.
pub(crate) type Signer<'a> = Box<dyn Fn(&[u8]) -> Result<HeaderMap, ModelError> + Send + Sync + 'a>;

impl JsonPost<'_> {
    /// Sends the request, retrying as the policy says, and returns the answer's JSON.
    pub(crate) async fn send(&self) -> Result<Value, ModelError> {
        self.with_retries(|response: reqwest::Response| async move {
            let status = response.status().as_u16();
            let body = read_body(response).await?;
            serde_json::from_slice(&body).map_err(|e| {
                let start = body_start(&String::from_utf8_lossy(&body), 300);
                Unread::NotJson(format!(
                    "the answer (HTTP {status}) is not JSON: {e}: {start}"
                ))
            })
        })
        .await
    }

    /// Sends the request, retrying as the policy says, and returns the successful response
    /// before its body is read: for streaming, where nothing is retried once it has begun.
    pub(crate) async fn open(&self) -> Result<reqwest::Response, ModelError> {
        self.with_retries(|response| async move { Ok(response) })
            .await
    }

    /// Sends until a 2xx answer that `read` accepts, retrying 429, 5xx and failed
    /// connections (or reads) as the policy says. An answer that came whole but cannot be
    /// read (too large, not JSON) is not asked for again: another would be generated, and
    /// billed, only to fail the same way.
    async fn with_retries<T, F, Fut>(&self, read: F) -> Result<T, ModelError>
    where
        F: Fn(reqwest::Response) -> Fut,
        Fut: std::future::Future<Output = Result<T, Unread>>,
    {
        if let Some(why) = tls_missing(self.url) {
            return Err(ModelError::Setup(format!("{}: {why}", self.url)));
        }
        let mut attempts = 0;
        loop {
            attempts += 1;
            let retries_left = attempts <= self.retry.max_retries;
            // The first attempt sends the headers made with the request; a retry is signed anew.
            let headers = match &self.sign {
                Some(sign) if attempts > 1 => sign(&self.body)?,
                _ => self.headers.clone(),
            };
            let (wait, error) = match self.attempt(&read, headers).await {
                Ok(Ok(answer)) => return Ok(answer),
                Ok(Err(refused)) => {
                    let message = provider_message(&refused.body);
                    let error = ModelError::Status {
                        provider: self.provider,
                        status: refused.status,
                        message: match &refused.error_type {
                            Some(kind) => format!("{kind}: {message}"),
                            None => message,
                        },
                        attempts,
                    };
                    if !is_retryable(refused.status) {
                        return Err(error);
                    }
                    (self.retry.delay(attempts - 1, refused.retry_after), error)
                }
                Err(Unread::Broken(message)) => {
                    let error = ModelError::Transport {
                        url: redacted_url(self.url),
                        message,
                        attempts,
                    };
                    (self.retry.delay(attempts - 1, None), error)
                }
                Err(Unread::TooLarge(message)) => {
                    return Err(ModelError::Transport {
                        url: redacted_url(self.url),
                        message,
                        attempts,
                    })
                }
                Err(Unread::NotJson(message)) => {
                    return Err(ModelError::Malformed {
                        provider: self.provider,
                        message,
                    })
                }
            };
            if !retries_left {
                return Err(error);
            }
            tracing::warn!(
                provider = self.provider,
                attempt = attempts,
                wait_ms = wait.as_millis() as u64,
                "model request failed, retrying: {error}"
            );
            match tool_model::timer::sleep(wait) {
                Ok(sleep) => sleep.await,
                Err(why) => {
                    tracing::warn!(provider = self.provider, "cannot wait to retry: {why}");
                    return Err(error);
                }
            }
        }
    }

    /// One request: the read answer, a refusal (a status other than 2xx), or a failed
    /// connection.
    async fn attempt<T, F, Fut>(
        &self,
        read: &F,
        headers: HeaderMap,
    ) -> Result<Result<T, Refused>, Unread>
    where
        F: Fn(reqwest::Response) -> Fut,
        Fut: std::future::Future<Output = Result<T, Unread>>,
    {
        let response = self
            .client
            .usable()
            .map_err(|e| Unread::Broken(e.to_string()))?
            .post(self.url)
            .headers(headers)
            .body(self.body.clone())
            .send()
            .await
            .map_err(|e| Unread::Broken(error_chain(&e.without_url())))?;
        let status = response.status().as_u16();
        if (200..300).contains(&status) {
            return read(response).await.map(Ok);
        }
        let retry_after = retry_after(response.headers());
        let error_type = error_type(response.headers());
        if (300..400).contains(&status) {
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .map_or_else(|| "no Location".to_owned(), redacted_url);
            let body = format!(
                "the endpoint redirects ({location}); model clients follow no redirect, \
                 so that the key goes nowhere else: set the base URL to where it points"
            );
            return Ok(Err(Refused {
                status,
                body: body.into_bytes(),
                retry_after: None,
                error_type: None,
            }));
        }
        let body = read_body(response).await?;
        let retry_after = retry_after.or_else(|| retry_delay(&body));
        Ok(Err(Refused {
            status,
            body,
            retry_after,
            error_type,
        }))
    }
}

/// How long a connection to a model may take to open, by default.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a model's answer may send nothing, by default, before it is given up as hung: long
/// enough for a reasoning model's whole answer to arrive unstreamed.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(600);

/// The HTTP client a model uses unless given one with `with_client`: connections time out
/// after [`DEFAULT_CONNECT_TIMEOUT`], and an answer (or a stream) that sends nothing for
/// [`DEFAULT_READ_TIMEOUT`] fails, so that a hung endpoint never holds a run forever. It
/// follows no redirect: reqwest drops `Authorization` on a redirect to another host, but not
/// `x-api-key`, `x-goog-api-key`, AWS's signed headers or a `with_header` value, so a redirect
/// would carry the key wherever it points. A 3xx answer is an error naming its `Location`.
pub(crate) fn default_client() -> HttpClient {
    client_with_timeouts(DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT)
}

/// The default client, with these timeouts.
pub(crate) fn client_with_timeouts(connect: Duration, read: Duration) -> HttpClient {
    HttpClient(built(
        reqwest::Client::builder()
            .connect_timeout(connect)
            .read_timeout(read)
            .redirect(reqwest::redirect::Policy::none()),
        "the model client",
    ))
}

/// An HTTP client with the project's settings, or why it could not be built: the builder fails
/// only when the TLS backend or the system's proxy settings cannot be loaded, and then every
/// request says so ([`ModelError::Setup`]) rather than going out on reqwest's defaults (which
/// follow redirects, with whatever secret a request carries, and never time out).
pub(crate) type BuiltClient = Result<reqwest::Client, Arc<str>>;

/// `builder`'s client, or why not; `what` names its user in the message (and the log).
pub(crate) fn built(builder: reqwest::ClientBuilder, what: &str) -> BuiltClient {
    builder.build().map_err(|e| {
        let why = format!(
            "the HTTP client of {what} could not be built: {}",
            error_chain(&e)
        );
        tracing::error!("{why}");
        Arc::from(why)
    })
}

/// The client, or the setup error that says why there is none.
pub(crate) fn usable(client: &BuiltClient) -> Result<&reqwest::Client, ModelError> {
    client
        .as_ref()
        .map_err(|why| ModelError::Setup(why.to_string()))
}

/// The HTTP client of a model: the one given with `with_client`, or the default one.
#[derive(Clone, Debug)]
pub(crate) struct HttpClient(BuiltClient);

impl HttpClient {
    /// A client the user gave.
    pub(crate) fn given(client: reqwest::Client) -> Self {
        HttpClient(Ok(client))
    }

    /// The client, or why it could not be built.
    pub(crate) fn usable(&self) -> Result<&reqwest::Client, ModelError> {
        usable(&self.0)
    }
}

/// The most an answer's body may hold: `ResponseLimits::bytes`' default, 16 MiB. A larger body
/// is refused as it arrives, before it is all held.
pub(crate) const MAX_ANSWER_BYTES: usize = tool_core::provider::DEFAULT_RESPONSE_BYTES;

/// The most a streamed answer's body may hold. A stream repeats an event's envelope for every
/// few tokens (a few hundred bytes each), so its body is many times its answer: the answer's
/// text, and each line of the stream, are held to [`MAX_ANSWER_BYTES`] on their own.
pub(crate) const MAX_STREAM_BYTES: usize = 8 * MAX_ANSWER_BYTES;

/// Why an answer's body was not read.
pub(crate) enum Unread {
    /// The connection failed, or broke: worth another try.
    Broken(String),
    /// The body passed [`MAX_ANSWER_BYTES`].
    TooLarge(String),
    /// The body came whole and is not what the API sends.
    NotJson(String),
}

/// A response's whole body, refused once it passes [`MAX_ANSWER_BYTES`].
async fn read_body(mut response: reqwest::Response) -> Result<Vec<u8>, Unread> {
    let mut body = Vec::new();
    let broken = |e: reqwest::Error| Unread::Broken(error_chain(&e.without_url()));
    while let Some(chunk) = response.chunk().await.map_err(broken)? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(Unread::TooLarge(format!(
                "the answer is larger than {MAX_ANSWER_BYTES} bytes (the default of ResponseLimits::bytes); nothing more was read"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// What is wrong with credential material that is not the JSON expected, without quoting any
/// of it: serde_json's messages quote the value they refused (`invalid type: string "..."`),
/// which may be a secret. A message without a quoted value (`missing field `AccessKeyId``) is
/// kept.
pub(crate) fn json_problem(e: &serde_json::Error) -> String {
    let message = e.to_string();
    if !message.contains('"') {
        return message;
    }
    let kind = match e.classify() {
        serde_json::error::Category::Syntax => "not JSON",
        serde_json::error::Category::Eof => "cut short",
        serde_json::error::Category::Io => "unreadable",
        serde_json::error::Category::Data => "a value of another type or shape than expected",
    };
    format!("{kind} at line {}, column {}", e.line(), e.column())
}

/// How long Google's APIs ask to wait, in an error's body: the `retryDelay` of its
/// `google.rpc.RetryInfo` detail (`"13s"`, `"0.5s"`), which Gemini sends with a 429.
fn retry_delay(body: &[u8]) -> Option<Duration> {
    let json: Value = serde_json::from_slice(body).ok()?;
    let details = json.pointer("/error/details")?.as_array()?;
    let delay = details
        .iter()
        .filter_map(|detail| detail.get("retryDelay")?.as_str())
        .find_map(|delay| delay.trim().strip_suffix('s')?.parse::<f64>().ok())?;
    Duration::try_from_secs_f64(delay).ok()
}

/// An answer with a status other than 2xx.
struct Refused {
    status: u16,
    body: Vec<u8>,
    retry_after: Option<Duration>,
    /// AWS's error code (`x-amzn-ErrorType`), such as `ValidationException`.
    error_type: Option<String>,
}

/// The error code of an AWS answer: `x-amzn-ErrorType` up to its first `:` (after which AWS
/// may add a URL).
fn error_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get("x-amzn-errortype")?.to_str().ok()?;
    let code = value.split(':').next().unwrap_or_default().trim();
    (!code.is_empty()).then(|| code.to_owned())
}

/// An error and its sources, in one line: reqwest's own message says little without them.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_key_is_named_before_a_request_to_the_providers_own_endpoint() {
        let none = ExtraHeaders::default();
        let openai = "https://api.openai.com/v1/chat/completions";
        let error = key_needed(
            None,
            &none,
            "authorization",
            openai,
            "api.openai.com",
            "OPENAI_API_KEY",
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("set OPENAI_API_KEY"), "{error}");
        let key = ApiKey::new("sk");
        assert!(key_needed(
            Some(&key),
            &none,
            "authorization",
            openai,
            "api.openai.com",
            "X"
        )
        .is_ok());
        let local = "http://127.0.0.1:8080/v1/chat/completions";
        assert!(key_needed(None, &none, "authorization", local, "api.openai.com", "X").is_ok());
        let mut gateway = ExtraHeaders::default();
        gateway.insert("Authorization", "Bearer gw");
        assert!(key_needed(
            None,
            &gateway,
            "authorization",
            openai,
            "api.openai.com",
            "X"
        )
        .is_ok());
    }
    use reqwest::header::HeaderValue;

    #[test]
    fn backoff_doubles_with_jitter_within_bounds_and_retry_after_wins() {
        let policy = RetryPolicy {
            max_retries: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
        };
        for _ in 0..50 {
            let first = policy.delay(0, None);
            assert!(first > Duration::from_millis(50) && first <= Duration::from_millis(100));
            let third = policy.delay(2, None);
            assert!(third > Duration::from_millis(200) && third <= Duration::from_millis(400));
            assert!(policy.delay(30, None) <= Duration::from_secs(1));
        }
        let asked = Some(Duration::from_millis(700));
        assert_eq!(policy.delay(0, asked), Duration::from_millis(700));
        assert_eq!(
            policy.delay(0, Some(Duration::from_secs(60))),
            Duration::from_secs(1)
        );
    }

    #[test]
    fn retry_after_reads_milliseconds_then_seconds() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
        let mut date = HeaderMap::new();
        date.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&date), None);
    }

    #[test]
    fn the_providers_message_is_taken_from_its_error_body() {
        assert_eq!(
            provider_message(br#"{"error":{"message":"Rate limit reached","type":"requests"}}"#),
            "Rate limit reached"
        );
        assert_eq!(provider_message(b"Bad Gateway"), "Bad Gateway");
        assert_eq!(provider_message(b""), "(no message)");
        assert!(provider_message("x".repeat(1000).as_bytes()).ends_with("..."));
        // AWS: `message`, or `Message`, and the code in a header.
        assert_eq!(provider_message(br#"{"Message":"Bad input"}"#), "Bad input");
        let mut headers = HeaderMap::new();
        let code = "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/";
        headers.insert("x-amzn-ErrorType", HeaderValue::from_static(code));
        assert_eq!(error_type(&headers).as_deref(), Some("ValidationException"));
        assert_eq!(error_type(&HeaderMap::new()), None);
    }

    #[test]
    fn an_https_url_without_tls_is_named() {
        assert!(tls_missing_in("https://api.openai.com/v1", false)
            .is_some_and(|why| why.contains("`tls` feature")));
        assert!(tls_missing_in("HTTPS://api.openai.com/v1", false).is_some());
        assert_eq!(tls_missing_in("https://api.openai.com/v1", true), None);
        assert_eq!(tls_missing_in("http://127.0.0.1:8080/v1", false), None);
        assert_eq!(body_start("  short \n", 5), "short");
        assert_eq!(body_start("éèêëē and more", 3), "éèê...");
    }

    #[test]
    fn secrets_go_over_https_or_to_this_machine_or_the_hosts_named() {
        let container = [std::net::IpAddr::from([169, 254, 170, 2])];
        let allowed = |url: &str, hosts: &[std::net::IpAddr]| {
            https_or_local(&reqwest::Url::parse(url).unwrap(), hosts)
        };
        for url in [
            "https://oauth2.example.com/token",
            "http://localhost:9/t",
            "http://127.0.0.1/t",
            "http://[::1]:8/t",
        ] {
            assert!(allowed(url, &[]), "{url}");
        }
        for url in [
            "http://oauth2.example.com/token",
            "http://169.254.170.2/creds",
            "ftp://localhost/t",
            "http://10.0.0.1/t",
        ] {
            assert!(!allowed(url, &[]), "{url}");
        }
        assert!(allowed("http://169.254.170.2/creds", &container));
    }

    #[test]
    fn googles_retry_delay_is_read_from_the_error_body() {
        let body = br#"{"error":{"code":429,"details":[
            {"@type":"type.googleapis.com/google.rpc.QuotaFailure"},
            {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"13.5s"}]}}"#;
        assert_eq!(retry_delay(body), Some(Duration::from_millis(13_500)));
        assert_eq!(retry_delay(br#"{"error":{"message":"slow down"}}"#), None);
        assert_eq!(
            retry_delay(br#"{"error":{"details":[{"retryDelay":"-1s"}]}}"#),
            None
        );
        assert_eq!(retry_delay(b"not json"), None);
    }

    #[test]
    fn only_429_and_5xx_are_retried() {
        assert!(is_retryable(429) && is_retryable(500) && is_retryable(503));
        assert!(!is_retryable(400) && !is_retryable(401) && !is_retryable(404));
    }

    #[test]
    fn the_debug_form_of_a_key_hides_it() {
        let key = ApiKey::new("sk-secret-123");
        assert_eq!(format!("{key:?}"), "ApiKey(<hidden>)");
    }
}
