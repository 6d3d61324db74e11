//! `GoogleCredentials` (over Google's own crate, `google-cloud-auth`) gets the access token
//! google-auth gets, from the same gcloud user credentials or metadata server, with the same
//! requests, and from a service account's key a token it signs itself (google-cloud-auth's
//! way; google-auth trades an assertion at the token endpoint); and `GeminiModel::vertex_ai`
//! sends its request where google-genai's Vertex AI client sends it, authorized the same way.
//!
//! google-auth and google-genai (PyPI, pinned in `scripts/sdk-tools.sh`) run
//! `tests/sdk/google_credentials.py` with nothing in their environment but the case's
//! variables. The key in `tests/google/` was made for these tests and authorizes nothing.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rsa::pkcs1v15::{Signature, VerifyingKey};
use rsa::pkcs8::DecodePublicKey;
use rsa::signature::Verifier;
use serde_json::{json, Value};
use tool_agent::{ChatModel, Message, ModelRequest};
use tool_providers::{ApiKey, GeminiModel, GoogleCredentials};
use tool_test_support::sdk::{decode_form, json_of_script, sdk_tools, temp_dir};

const KEY: &str = include_str!("google/test-only-key.pem");
const PUBLIC_KEY: &str = include_str!("google/test-only-key.pub.pem");

/// What google-auth (or google-genai) prints with these variables.
fn google_sdk(python: &Path, vars: &[(String, String)], args: &[&str]) -> Value {
    json_of_script(python, "google_credentials.py", args, vars)
}

/// The claims of a token the test key signed itself, checked against its public half.
fn self_signed_claims(token: &str) -> Option<Value> {
    let verifying = VerifyingKey::<sha2::Sha256>::new(
        rsa::PublicKey::from_public_key_pem(PUBLIC_KEY).expect("the test key's public half"),
    );
    let parts: Vec<&str> = token.split('.').collect();
    let [header, claims, signature] = parts[..] else {
        return None;
    };
    let signature = URL_SAFE_NO_PAD.decode(signature).ok()?;
    let signature = Signature::try_from(&signature[..]).ok()?;
    let message = format!("{header}.{claims}");
    verifying.verify(message.as_bytes(), &signature).ok()?;
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).ok()?).ok()
}

/// What the credentials give, in the script's shape.
async fn ours(vars: &[(String, String)]) -> Value {
    let credentials = GoogleCredentials::from_vars(vars.iter().cloned());
    match credentials.access_token().await {
        Ok(token) => json!({
            "token": token,
            "project": credentials.project(),
            "quota_project": credentials.quota_project(),
        }),
        Err(e) => json!({ "error": e.to_string() }),
    }
}

/// One request the server received: what it was, and what it carried (a token request's
/// form, its assertion's header and claims decoded without their times; a metadata request's
/// query; a model request's authorization and quota project).
type Received = Arc<Mutex<Vec<(String, BTreeMap<String, Value>)>>>;

/// A token endpoint (`POST /token`: a service account's signed assertion, checked against
/// the test key, or a user's refresh token), a metadata server, and Vertex AI's
/// `generateContent`, on one server.
async fn google_server() -> (Received, String) {
    let received = Received::default();
    let (r1, r2, r3) = (received.clone(), received.clone(), received.clone());
    let verifying = VerifyingKey::<sha2::Sha256>::new(
        rsa::PublicKey::from_public_key_pem(PUBLIC_KEY).expect("the test key's public half"),
    );
    let token = |value: &str| {
        json!({ "access_token": value, "expires_in": 3599, "token_type": "Bearer" }).to_string()
    };
    let metadata_headers = [
        ("metadata-flavor", "Google"),
        ("content-type", "application/json"),
    ];
    let app = Router::new()
        .route(
            "/token",
            post(move |body: String| async move {
                // A form (OAuth's, google-auth's), or the same fields as JSON
                // (google-cloud-auth's refresh of a user's token).
                let form = match serde_json::from_str::<BTreeMap<String, Value>>(&body) {
                    Ok(json) => json
                        .into_iter()
                        .map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
                        .collect(),
                    Err(_) => decode_form(&body),
                };
                let mut seen: BTreeMap<String, Value> = form
                    .iter()
                    .filter(|(k, _)| *k != "assertion")
                    .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                    .collect();
                let answer = match form.get("grant_type").map(String::as_str) {
                    Some("urn:ietf:params:oauth:grant-type:jwt-bearer") => {
                        let assertion = form.get("assertion").cloned().unwrap_or_default();
                        let parts: Vec<&str> = assertion.split('.').collect();
                        let signed = parts.len() == 3
                            && URL_SAFE_NO_PAD
                                .decode(parts[2])
                                .ok()
                                .and_then(|bytes| Signature::try_from(&bytes[..]).ok())
                                .is_some_and(|signature| {
                                    let message = format!("{}.{}", parts[0], parts[1]);
                                    verifying.verify(message.as_bytes(), &signature).is_ok()
                                });
                        if !signed {
                            return (
                                StatusCode::BAD_REQUEST,
                                r#"{"error":"invalid_grant"}"#.to_owned(),
                            );
                        }
                        let decode = |part: &str| -> Value {
                            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
                        };
                        let mut claims = decode(parts[1]);
                        let (iat, exp) = (claims["iat"].take(), claims["exp"].take());
                        seen.insert(
                            "lifetime".into(),
                            json!(exp.as_u64().zip(iat.as_u64()).map(|(e, i)| e - i)),
                        );
                        seen.insert("header".into(), decode(parts[0]));
                        seen.insert("claims".into(), claims);
                        token("service-account-token")
                    }
                    Some("refresh_token")
                        if form.get("refresh_token").map(String::as_str)
                            == Some("user-refresh") =>
                    {
                        token("user-token")
                    }
                    _ => {
                        return (
                            StatusCode::BAD_REQUEST,
                            r#"{"error":"invalid_grant"}"#.to_owned(),
                        )
                    }
                };
                r1.lock().unwrap().push(("POST /token".to_owned(), seen));
                (StatusCode::OK, answer)
            }),
        )
        .route("/", get(move || async move { (metadata_headers, "") }))
        .route(
            "/computeMetadata/v1/project/project-id",
            get(move || async move { (metadata_headers, "gce-project") }),
        )
        // google-auth asks for the account's email first, and then for its token by that
        // email; the chain asks for the default account's token.
        .route(
            "/computeMetadata/v1/instance/service-accounts/{account}/",
            get(move || async move {
                let info = json!({
                    "email": "default-compute@gce-project.iam.gserviceaccount.com",
                    "scopes": ["https://www.googleapis.com/auth/cloud-platform"],
                    "aliases": ["default"],
                });
                (metadata_headers, info.to_string())
            }),
        )
        .route(
            "/computeMetadata/v1/instance/service-accounts/{account}/token",
            get(move |uri: Uri, headers: HeaderMap| async move {
                let flavor = headers.get("metadata-flavor").and_then(|v| v.to_str().ok());
                let query: BTreeMap<String, Value> = decode_form(uri.query().unwrap_or_default())
                    .into_iter()
                    .map(|(k, v)| (k, Value::from(v)))
                    .collect();
                r2.lock()
                    .unwrap()
                    .push(("GET metadata token".to_owned(), query));
                if flavor != Some("Google") {
                    return (StatusCode::FORBIDDEN, "no flavor").into_response();
                }
                (metadata_headers, token("metadata-token")).into_response()
            }),
        )
        .fallback(move |uri: Uri, headers: HeaderMap, body: axum::body::Bytes| async move {
            let header = |name: &str| {
                Value::from(
                    headers
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default(),
                )
            };
            let mut seen = BTreeMap::from([
                ("authorization".to_owned(), header("authorization")),
                ("x-goog-user-project".to_owned(), header("x-goog-user-project")),
                ("anthropic-version".to_owned(), header("anthropic-version")),
                ("x-api-key".to_owned(), header("x-api-key")),
                ("x-goog-api-key".to_owned(), header("x-goog-api-key")),
            ]);
            let body: Value = serde_json::from_slice(&body).unwrap_or_default();
            let answer = if uri.path().contains("/publishers/anthropic/") {
                // The body's fields that say where and how: the version, and no model.
                seen.insert("anthropic_version".into(), body["anthropic_version"].clone());
                seen.insert("model".into(), body["model"].clone());
                json!({
                    "id": "msg_1", "type": "message", "role": "assistant",
                    "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
                    "content": [{ "type": "text", "text": "hello" }],
                    "usage": { "input_tokens": 1, "output_tokens": 1 },
                })
            } else {
                json!({
                    "candidates": [{ "content": { "role": "model", "parts": [{ "text": "hello" }] },
                                     "finishReason": "STOP" }],
                    "usageMetadata": { "promptTokenCount": 1, "candidatesTokenCount": 1 },
                })
            };
            r3.lock().unwrap().push((uri.path().to_owned(), seen));
            ([("content-type", "application/json")], answer.to_string()).into_response()
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (received, address.to_string())
}

// Two threads: the server answers the SDK while the test waits for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_credentials_get_the_token_google_auth_gets() {
    let Some(python) = sdk_tools("the_credentials_get_the_token_google_auth_gets") else {
        return;
    };
    let dir = temp_dir("google-credentials");
    let (received, address) = google_server().await;
    let token_uri = format!("http://{address}/token");
    let service_account = dir.join("service-account.json");
    std::fs::write(
        &service_account,
        json!({
            "type": "service_account",
            "project_id": "sa-project",
            "private_key_id": "key-1",
            "private_key": KEY,
            "client_email": "bedrock@sa-project.iam.gserviceaccount.com",
            "client_id": "1",
            "token_uri": token_uri,
        })
        .to_string(),
    )
    .unwrap();
    let gcloud = dir.join("gcloud");
    std::fs::create_dir_all(&gcloud).unwrap();
    std::fs::write(
        gcloud.join("application_default_credentials.json"),
        json!({
            "type": "authorized_user",
            "client_id": "764086051850-x.apps.googleusercontent.com",
            "client_secret": "user-client-secret",
            "refresh_token": "user-refresh",
            "quota_project_id": "billing-project",
            "token_uri": token_uri,
        })
        .to_string(),
    )
    .unwrap();
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let vars = |more: &[(&str, String)]| {
        let mut vars = vec![
            ("HOME".to_owned(), home.display().to_string()),
            // Where the script sends what google-auth addresses to Google's token endpoint.
            (
                "AI_TOOL_TEST_OAUTH_ROOT".to_owned(),
                format!("http://{address}"),
            ),
        ];
        vars.extend(more.iter().map(|(k, v)| (k.to_string(), v.clone())));
        vars
    };
    let cases = [
        (
            "a service account's key, GOOGLE_APPLICATION_CREDENTIALS",
            vars(&[(
                "GOOGLE_APPLICATION_CREDENTIALS",
                service_account.display().to_string(),
            )]),
            "service-account-token",
        ),
        (
            "gcloud's user credentials, with a quota project",
            vars(&[
                ("CLOUDSDK_CONFIG", gcloud.display().to_string()),
                ("GOOGLE_CLOUD_PROJECT", "env-project".to_owned()),
            ]),
            "user-token",
        ),
        (
            "the metadata server",
            vars(&[
                ("GCE_METADATA_HOST", address.clone()),
                ("GCE_METADATA_IP", address.clone()),
                ("GOOGLE_CLOUD_PROJECT", "env-project".to_owned()),
            ]),
            "metadata-token",
        ),
    ];
    let take = || std::mem::take(&mut *received.lock().unwrap());
    for (case, vars, token) in &cases {
        take();
        let theirs = google_sdk(&python, vars, &["token"]);
        let their_calls = take();
        let mut ours = ours(vars).await;
        let our_calls = take();
        if *token == "service-account-token" {
            // google-cloud-auth signs a token itself: no request, the key's signature, the
            // account and the scope in its claims.
            assert!(our_calls.is_empty(), "{case}: {our_calls:?}");
            let signed = ours["token"].take();
            let claims = self_signed_claims(signed.as_str().unwrap_or_default())
                .unwrap_or_else(|| panic!("{case}: not signed by the key: {signed}"));
            let account = "bedrock@sa-project.iam.gserviceaccount.com";
            assert_eq!(claims["iss"], account, "{case}");
            assert_eq!(claims["sub"], account, "{case}");
            assert_eq!(
                claims["scope"], "https://www.googleapis.com/auth/cloud-platform",
                "{case}"
            );
            ours["token"] = theirs["token"].clone();
            assert_eq!(ours, theirs, "{case}: the projects");
            continue;
        }
        assert_eq!(ours, theirs, "{case}");
        assert_eq!(ours["token"], *token, "{case}");
        // The same requests: the same form, or the same metadata query.
        assert_eq!(our_calls, their_calls, "{case}");
        assert_eq!(our_calls.len(), 1, "{case}");
    }

    // A file that cannot be read is an error for both, not a reason to look further.
    let vars = vars(&[(
        "GOOGLE_APPLICATION_CREDENTIALS",
        "/nonexistent/key.json".to_owned(),
    )]);
    let theirs = google_sdk(&python, &vars, &["token"]);
    assert!(
        theirs["error"]
            .as_str()
            .unwrap_or_default()
            .contains("DefaultCredentialsError"),
        "{theirs}"
    );
    let ours = ours(&vars).await;
    let ours = ours["error"].as_str().unwrap_or_default();
    assert!(
        ours.contains(
            "cannot read the file GOOGLE_APPLICATION_CREDENTIALS names (/nonexistent/key.json)"
        ),
        "{ours}"
    );
    std::fs::remove_dir_all(dir).ok();
}

/// `GeminiModel::vertex_ai` posts to the path google-genai's Vertex AI client posts to, with
/// the same bearer token and quota project; `AnthropicModel::vertex_ai` where Anthropic's
/// `AnthropicVertex` does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vertex_ai_request_goes_where_google_genai_sends_it() {
    let Some(python) = sdk_tools("a_vertex_ai_request_goes_where_google_genai_sends_it") else {
        return;
    };
    let dir = temp_dir("google-vertex");
    let (received, address) = google_server().await;
    let gcloud = dir.join("gcloud");
    std::fs::create_dir_all(&gcloud).unwrap();
    // gcloud's user credentials, refreshed at this server by both (a service account's key
    // would give google-cloud-auth a token it signs itself, and google-auth another).
    std::fs::write(
        gcloud.join("application_default_credentials.json"),
        json!({
            "type": "authorized_user",
            "client_id": "764086051850-x.apps.googleusercontent.com",
            "client_secret": "user-client-secret",
            "refresh_token": "user-refresh",
            "token_uri": format!("http://{address}/token"),
        })
        .to_string(),
    )
    .unwrap();
    let vars = vec![
        ("HOME".to_owned(), dir.display().to_string()),
        (
            "AI_TOOL_TEST_OAUTH_ROOT".to_owned(),
            format!("http://{address}"),
        ),
        ("CLOUDSDK_CONFIG".to_owned(), gcloud.display().to_string()),
        (
            "GOOGLE_CLOUD_QUOTA_PROJECT".to_owned(),
            "billing-project".to_owned(),
        ),
    ];
    let url = format!("http://{address}");
    let model_requests = || {
        let mut calls = std::mem::take(&mut *received.lock().unwrap());
        calls.retain(|(what, _)| what.contains("/publishers/"));
        calls
    };
    let theirs = google_sdk(
        &python,
        &vars,
        &["vertex", "my-project", "europe-west4", &url],
    );
    assert_eq!(theirs["text"], "hello", "{theirs}");
    let their_calls = model_requests();

    let model = GeminiModel::vertex_ai("gemini-2.5-flash")
        .with_google_credentials(GoogleCredentials::from_vars(vars.clone()))
        .with_vertex_project("my-project")
        .with_vertex_location("europe-west4")
        .with_base_url(&url);
    let answer = model
        .respond(&ModelRequest::new(vec![Message::user("hi")]))
        .await
        .unwrap();
    assert_eq!(answer.text.as_deref(), Some("hello"));
    let our_calls = model_requests();
    assert_eq!(our_calls, their_calls);
    assert_eq!(
        our_calls[0].0,
        "/v1beta1/projects/my-project/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent"
    );
    assert_eq!(our_calls[0].1["authorization"], "Bearer user-token");
    assert_eq!(our_calls[0].1["x-goog-user-project"], "billing-project");

    // Express mode: an API key, no project or location.
    let theirs = google_sdk(&python, &vars, &["vertex-express", "express-key", &url]);
    assert_eq!(theirs["text"], "hello", "{theirs}");
    let their_calls = model_requests();
    let model = GeminiModel::vertex_ai_express("gemini-2.5-flash", ApiKey::new("express-key"))
        .with_google_credentials(GoogleCredentials::from_vars(vars.clone()))
        .with_base_url(&url);
    model
        .respond(&ModelRequest::new(vec![Message::user("hi")]))
        .await
        .unwrap();
    let our_calls = model_requests();
    assert_eq!(our_calls, their_calls);
    assert_eq!(
        our_calls[0].0,
        "/v1beta1/publishers/google/models/gemini-2.5-flash:generateContent"
    );
    assert_eq!(our_calls[0].1["x-goog-api-key"], "express-key");
    assert_eq!(our_calls[0].1["authorization"], "");

    // Claude on Vertex AI: where Anthropic's AnthropicVertex client sends it, the model in the
    // URL and the version in the body. (Anthropic's client sends no quota project.)
    let vars: Vec<(String, String)> = vars
        .into_iter()
        .filter(|(name, _)| name != "GOOGLE_CLOUD_QUOTA_PROJECT")
        .chain([(
            "ANTHROPIC_VERTEX_PROJECT_ID".to_owned(),
            "claude-project".to_owned(),
        )])
        .collect();
    let theirs = google_sdk(&python, &vars, &["anthropic-vertex", "us-east5", &url]);
    assert_eq!(theirs["text"], "hello", "{theirs}");
    let their_calls = model_requests();
    let model = tool_providers::AnthropicModel::vertex_ai("claude-sonnet-4-5@20250929")
        .with_google_credentials(GoogleCredentials::from_vars(vars.clone()))
        .with_vertex_project("claude-project")
        .with_vertex_location("us-east5")
        .with_max_tokens(64)
        .with_base_url(&format!("{url}/v1"));
    let answer = model
        .respond(&ModelRequest::new(vec![Message::user("hi")]))
        .await
        .unwrap();
    assert_eq!(answer.text.as_deref(), Some("hello"));
    let mut our_calls = model_requests();
    let mut their_calls = their_calls;
    // The one difference: the version in the body. Google documents `vertex-2023-10-16` for
    // Claude on Vertex AI, which is sent here; Anthropic's SDK sends its own API version.
    let ours = our_calls[0].1.remove("anthropic_version");
    let theirs = their_calls[0].1.remove("anthropic_version");
    assert_eq!(ours, Some(json!("vertex-2023-10-16")));
    assert!(theirs.is_some_and(|v| v.is_string()));
    assert_eq!(our_calls, their_calls);
    assert_eq!(
        our_calls[0].0,
        "/v1/projects/claude-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict"
    );
    std::fs::remove_dir_all(dir).ok();
}

/// Credentials of a kind not resolved here, a key that is not one, and a machine without
/// Google's metadata server are errors that say what was looked at, never a secret; a Vertex
/// AI model without a project sends nothing.
#[tokio::test]
async fn what_the_credentials_cannot_resolve_is_named() {
    let dir = temp_dir("google-unresolved");
    let (received, address) = google_server().await;
    let file = |name: &str, content: Value| {
        let path = dir.join(name);
        std::fs::write(&path, content.to_string()).unwrap();
        path.display().to_string()
    };
    let external = file(
        "external.json",
        json!({ "type": "external_account", "audience": "//iam.googleapis.com/x" }),
    );
    let broken = file(
        "broken.json",
        json!({ "type": "service_account", "client_email": "a@b.iam.gserviceaccount.com",
                "private_key": "-----BEGIN PRIVATE KEY-----\nsecret-bits\n-----END PRIVATE KEY-----" }),
    );
    let elsewhere = file(
        "elsewhere.json",
        json!({ "type": "authorized_user", "client_id": "c", "client_secret": "client-secret",
                "refresh_token": "r", "token_uri": "http://example.com/token" }),
    );
    let home = dir.display().to_string();
    for (vars, expected) in [
        (
            vec![("GOOGLE_APPLICATION_CREDENTIALS", elsewhere.clone())],
            "its token_uri `http://example.com/token` is neither HTTPS nor on this machine"
                .to_owned(),
        ),
        (
            vec![("GOOGLE_APPLICATION_CREDENTIALS", external.clone())],
            format!(
                "the file GOOGLE_APPLICATION_CREDENTIALS names ({external}) holds \
                 `external_account` credentials that cannot be used"
            ),
        ),
        (
            vec![("GOOGLE_APPLICATION_CREDENTIALS", broken.clone())],
            format!("the file GOOGLE_APPLICATION_CREDENTIALS names ({broken})"),
        ),
        (
            // The model endpoint answers 200 without Metadata-Flavor: another cloud's service.
            vec![("GCE_METADATA_HOST", format!("{address}/elsewhere"))],
            format!(
                "no Google access token from the metadata server at {address}/elsewhere (no \
                 Google credentials found: GOOGLE_APPLICATION_CREDENTIALS is not set, \
                 {home}/.config/gcloud/application_default_credentials.json does not exist)"
            ),
        ),
    ] {
        let mut vars: Vec<(&str, String)> = vars;
        vars.push(("HOME", home.clone()));
        let error = GoogleCredentials::from_vars(vars)
            .access_token()
            .await
            .unwrap_err();
        let error = error.to_string();
        assert!(error.contains(&expected), "{error}\n{expected}");
        assert!(!error.contains("secret-bits"), "{error}");
    }

    received.lock().unwrap().clear();
    let model = GeminiModel::vertex_ai("gemini-2.5-flash")
        .with_google_credentials(GoogleCredentials::from_vars([("HOME", home.clone())]))
        .with_base_url(&format!("http://{address}"));
    let error = model
        .respond(&ModelRequest::new(vec![Message::user("hi")]))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("Vertex AI needs a project"), "{error}");
    let model = GeminiModel::vertex_ai("gemini-2.5-flash")
        .with_google_credentials(GoogleCredentials::from_vars([("HOME", home.clone())]))
        .with_vertex_project("p")
        .with_vertex_location(format!("{address}/x?"));
    let error = model
        .respond(&ModelRequest::new(vec![Message::user("hi")]))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("is not a location name"), "{error}");
    assert!(received.lock().unwrap().is_empty(), "nothing sent");
    std::fs::remove_dir_all(dir).ok();
}

/// A token serves until shortly before it expires (google-cloud-auth's cache for a file's
/// credentials; four minutes for a provider's).
#[tokio::test]
async fn a_token_is_kept_until_it_is_about_to_expire() {
    let dir = temp_dir("google-cache");
    let (received, address) = google_server().await;
    let key = dir.join("key.json");
    std::fs::write(
        &key,
        json!({ "type": "service_account", "private_key": KEY, "private_key_id": "key-1",
                "project_id": "p",
                "client_email": "a@p.iam.gserviceaccount.com",
                "token_uri": format!("http://{address}/token") })
        .to_string(),
    )
    .unwrap();
    let credentials = GoogleCredentials::from_vars([(
        "GOOGLE_APPLICATION_CREDENTIALS",
        key.display().to_string(),
    )]);
    let first = credentials.access_token().await.unwrap();
    assert!(self_signed_claims(&first).is_some(), "{first}");
    for _ in 0..2 {
        assert_eq!(credentials.access_token().await.unwrap(), first, "kept");
    }
    assert!(received.lock().unwrap().is_empty(), "no token request");

    let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = asked.clone();
    let provided = GoogleCredentials::from_token_provider(move || {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        // The first lasts a minute (under the margin: asked again), the next an hour.
        let lifetime = std::time::Duration::from_secs(if n == 0 { 60 } else { 3600 });
        async move { Ok((format!("provided-{n}"), lifetime)) }
    });
    assert_eq!(provided.access_token().await.unwrap(), "provided-0");
    assert_eq!(provided.access_token().await.unwrap(), "provided-1");
    assert_eq!(provided.access_token().await.unwrap(), "provided-1");
    std::fs::remove_dir_all(dir).ok();
}
