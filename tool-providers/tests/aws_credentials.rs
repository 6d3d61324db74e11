//! `AwsCredentialChain` (the AWS SDK for Rust's default chain, `aws-config`) finds the
//! credentials and region botocore finds, over the same variables, profile files,
//! `credential_process` and metadata endpoints (a container's and an EC2 instance's, served here
//! on 127.0.0.1), and signs Bedrock requests with them.
//!
//! botocore (PyPI, pinned in `scripts/sdk-tools.sh`) runs `tests/sdk/aws_credentials.py` with
//! nothing in its environment but the case's variables. Where the two SDKs differ, the case says
//! so and holds aws-config to its own rule: it reads no `AWS_DEFAULT_PROFILE`, no quoted profile
//! names, no `key: value` lines or keys indented under their section; it prefers a profile's web
//! identity to `AWS_WEB_IDENTITY_TOKEN_FILE`, refuses keys beside an `sso_session` without an
//! account and role, passes over a key id without its secret in the environment, does not send a
//! profile's `duration_seconds`, and never falls back to IMDSv1.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post, put};
use axum::Router;
use serde_json::{json, Value};
use tool_agent::{ChatModel, Message, ModelRequest};
use tool_providers::{AwsCredentialChain, BedrockModel};
use tool_test_support::mock::{serve, Canned};
use tool_test_support::sdk::{decode_form, json_of_script, sdk_tools, temp_dir};

/// What botocore finds with these variables (and this profile, as `--profile` names it).
fn botocore_finds(python: &Path, vars: &[(String, String)], profile: Option<&str>) -> Value {
    let args: Vec<&str> = profile.into_iter().collect();
    json_of_script(python, "aws_credentials.py", &args, vars)
}

/// What the chain finds, in the script's shape.
async fn chain_finds(vars: &[(String, String)], profile: Option<&str>) -> Value {
    let mut chain = AwsCredentialChain::from_vars(vars.iter().cloned());
    if let Some(profile) = profile {
        chain = chain.with_profile(profile);
    }
    match chain.credentials().await {
        Ok(found) => json!({
            "access_key": found.access_key_id(),
            "secret_key": found.secret_access_key(),
            "token": found.session_token(),
            "region": chain.region().await,
        }),
        Err(e) => json!({ "error": e.to_string() }),
    }
}

/// A case: what it shows, its variables, the profile chosen, the key id both must find.
type Case<'a> = (&'a str, Vec<(String, String)>, Option<&'a str>, &'a str);

/// The requests the server received.
#[derive(Clone, Default)]
struct Received {
    /// The metadata endpoints': `(method and path, authorization or token)`.
    metadata: Arc<Mutex<Vec<MetadataCall>>>,
    /// STS's (the form, and the signing key id and scope without the date) and the SSO
    /// portal's (the query, and the bearer token).
    sts: Arc<Mutex<Vec<StsCall>>>,
    /// SSO OIDC's: each `CreateToken` body.
    oidc: Arc<Mutex<Vec<Value>>>,
}

/// One metadata request: its method and path, and its authorization or token.
type MetadataCall = (String, Option<String>);

/// One STS request: its form, and what signed it (`AKID/region/sts/aws4_request`), if signed.
type StsCall = (BTreeMap<String, String>, Option<String>);

/// A container credentials endpoint (`GET /creds`, which wants `Authorization: pod-token`) and
/// an IMDSv2 service (a token from `PUT /latest/api/token`, then the role and its
/// credentials), on one server.
async fn metadata_server() -> (Received, String) {
    let received = Received::default();
    let credentials = |key: &str| {
        json!({
            "Code": "Success",
            "Type": "AWS-HMAC",
            "AccessKeyId": key,
            "SecretAccessKey": format!("secret-of-{key}"),
            "Token": format!("token-of-{key}"),
            "Expiration": "2099-01-01T00:00:00Z",
        })
        .to_string()
    };
    let record = |received: &Received, what: &str, headers: &HeaderMap, header: &str| {
        let value = headers
            .get(header)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut metadata = received.metadata.lock().unwrap();
        metadata.push((what.to_owned(), value.clone()));
        value
    };
    let (r1, r2, r3, r4) = (
        received.clone(),
        received.clone(),
        received.clone(),
        received.clone(),
    );
    let container = credentials("AKIDCONTAINER");
    let instance = credentials("AKIDINSTANCE");
    let app = Router::new()
        .route(
            "/creds",
            get(move |headers: HeaderMap| async move {
                match record(&r1, "GET /creds", &headers, "authorization").as_deref() {
                    Some("pod-token") => (StatusCode::OK, container),
                    _ => (StatusCode::UNAUTHORIZED, "no token".to_owned()),
                }
            }),
        )
        .route(
            "/latest/api/token",
            put(move |headers: HeaderMap| async move {
                let ttl = "x-aws-ec2-metadata-token-ttl-seconds";
                // As IMDS answers: the token, and how long it lasts.
                match record(&r2, "PUT token", &headers, ttl) {
                    Some(asked) => (StatusCode::OK, [(ttl, asked)], "imds-token".to_owned()),
                    None => (
                        StatusCode::BAD_REQUEST,
                        [(ttl, "0".to_owned())],
                        String::new(),
                    ),
                }
            }),
        )
        .route(
            "/latest/meta-data/iam/security-credentials/",
            get(move |headers: HeaderMap| async move {
                let token = "x-aws-ec2-metadata-token";
                match record(&r3, "GET roles", &headers, token).as_deref() {
                    Some("imds-token") => (StatusCode::OK, "bedrock-role".to_owned()),
                    _ => (StatusCode::UNAUTHORIZED, String::new()),
                }
            }),
        )
        .route(
            "/latest/meta-data/iam/security-credentials/bedrock-role",
            get(move |headers: HeaderMap| async move {
                let token = "x-aws-ec2-metadata-token";
                match record(&r4, "GET role", &headers, token).as_deref() {
                    Some("imds-token") => (StatusCode::OK, instance),
                    _ => (StatusCode::UNAUTHORIZED, String::new()),
                }
            }),
        );
    let sso_calls = received.sts.clone();
    let app = app.route(
        "/federation/credentials",
        get(move |uri: axum::http::Uri, headers: HeaderMap| async move {
            let query = decode_form(uri.query().unwrap_or_default());
            let token = headers
                .get("x-amz-sso_bearer_token")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            sso_calls
                .lock()
                .unwrap()
                .push((query.clone(), token.clone()));
            let role = query.get("role_name").cloned().unwrap_or_default();
            let account = query.get("account_id").cloned().unwrap_or_default();
            let expected = match account.as_str() {
                "123456789012" => "sso-token-corp",
                // The refreshed token, or the cached one where the refresh is refused.
                "333333333333" => token.as_deref().unwrap_or_default(),
                _ => "sso-token-legacy",
            };
            if token.as_deref() != Some(expected) {
                let refused = r#"{"message":"Session token not found or invalid"}"#;
                return (StatusCode::UNAUTHORIZED, refused.to_owned());
            }
            let key = format!("ASIA-SSO-{role}-{account}");
            let answer = json!({ "roleCredentials": {
                "accessKeyId": key,
                "secretAccessKey": format!("secret-{key}"),
                "sessionToken": format!("token-{key}"),
                "expiration": 4_070_908_800_000u64,
            }});
            (StatusCode::OK, answer.to_string())
        }),
    );
    let oidc_calls = received.oidc.clone();
    let app = app.route(
        "/token",
        post(move |body: String| async move {
            let body: Value = serde_json::from_str(&body).unwrap_or_default();
            oidc_calls.lock().unwrap().push(body.clone());
            let registered = json!({
                "clientId": "client-1",
                "clientSecret": "client-secret-1",
                "grantType": "refresh_token",
                "refreshToken": "refresh-1",
            });
            if body != registered {
                let refused = json!({ "error": "invalid_grant", "error_description": "refused" });
                return (StatusCode::BAD_REQUEST, refused.to_string());
            }
            let created = json!({
                "accessToken": "sso-token-refreshed",
                "expiresIn": 3600,
                "refreshToken": "refresh-2",
                "tokenType": "Bearer",
            });
            (StatusCode::OK, created.to_string())
        }),
    );
    let sts_calls = received.sts.clone();
    let app = app.route(
        "/",
        post(move |headers: HeaderMap, body: String| async move {
            let form = decode_form(&body);
            let authorization = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            // The key id and scope signed with, less the date: `AKID/region/sts/aws4_request`.
            let scope = authorization
                .split("Credential=")
                .nth(1)
                .and_then(|rest| rest.split(',').next())
                .map(|credential| {
                    let parts: Vec<&str> = credential.split('/').collect();
                    [parts[0], parts[2], parts[3], parts[4]].join("/")
                });
            sts_calls
                .lock()
                .unwrap()
                .push((form.clone(), scope.clone()));
            sts_answer(&form, scope.as_deref())
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (received, format!("http://{address}"))
}

/// STS's answer: credentials named after the role and what assumed it (the signing key id,
/// or `WEB` for a web identity whose token is `web-token-value`), or STS's error.
fn sts_answer(form: &BTreeMap<String, String>, scope: Option<&str>) -> (StatusCode, String) {
    let role = form
        .get("RoleArn")
        .and_then(|arn| arn.rsplit('/').next())
        .unwrap_or_default();
    let action = form.get("Action").map(String::as_str).unwrap_or_default();
    let key = match (action, scope) {
        ("AssumeRole", Some(scope)) => {
            format!(
                "ASIA-{role}-VIA-{}",
                scope.split('/').next().unwrap_or_default()
            )
        }
        ("AssumeRoleWithWebIdentity", None)
            if form.get("WebIdentityToken").map(String::as_str) == Some("web-token-value") =>
        {
            format!("ASIA-{role}-WEB")
        }
        _ => {
            let error = "<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>\
                         <Message>refused</Message></Error></ErrorResponse>";
            return (StatusCode::FORBIDDEN, error.to_owned());
        }
    };
    let answer = format!(
        "<{action}Response xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><{action}Result>\
         <Credentials><AccessKeyId>{key}</AccessKeyId><SecretAccessKey>secret-{key}</SecretAccessKey>\
         <SessionToken>token-{key}</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration>\
         </Credentials></{action}Result></{action}Response>"
    );
    (StatusCode::OK, answer)
}

/// The profile files of the cases, and a `credential_process` script, in `dir`.
fn write_files(dir: &Path) -> (PathBuf, PathBuf) {
    let python = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    let python = String::from_utf8(python.stdout).unwrap().trim().to_owned();
    let script = dir.join("issue creds.py");
    std::fs::write(
        &script,
        "import json, sys\n\
         print(json.dumps({'Version': 1, 'AccessKeyId': 'AKIDPROCESS-' + sys.argv[2],\n\
         'SecretAccessKey': 'secret \"quoted\"', 'SessionToken': 'token-process',\n\
         'Expiration': '2099-01-01T00:00:00Z'}))\n",
    )
    .unwrap();
    std::fs::write(dir.join("web-token"), "web-token-value").unwrap();
    let credentials = dir.join("credentials");
    std::fs::write(
        &credentials,
        "[default]\n\
         aws_access_key_id = AKIDDEFAULT\n\
         aws_secret_access_key = secret-default\n\
         aws_session_token = token-default\n\
         \n\
         [both]\n\
         aws_access_key_id = AKIDFROMCREDENTIALS\n\
         aws_secret_access_key = secret-from-credentials\n\
         \n\
         [regional]\n\
         aws_access_key_id = AKIDREGIONAL\n\
         aws_secret_access_key = secret-regional\n\
         region = ca-central-1\n\
         \n\
         [partial]\n\
         aws_access_key_id = AKIDPARTIAL\n",
    )
    .unwrap();
    let config = dir.join("config");
    std::fs::write(
        &config,
        format!(
            "[default]\n\
             region = eu-west-3\n\
             \n\
             # a comment\n\
             [profile dev]\n\
             region = us-east-2\n\
             aws_access_key_id = AKIDDEV\n\
             aws_secret_access_key = secret-dev\n\
             s3 =\n    addressing_style = path\n\
             \n\
             [profile both]\n\
             aws_access_key_id = AKIDFROMCONFIG\n\
             aws_secret_access_key = secret-from-config\n\
             \n\
             [profile tool]\n\
             credential_process = \"{python}\" \"{}\" --name tool\n\
             region = ap-south-1\n\
             \n\
             [profile \"my dev\"]\n\
             aws_access_key_id = AKIDQUOTED\n\
             aws_secret_access_key = secret-quoted\n\
             \n\
             [profile mfa-keys]\n\
             aws_access_key_id = AKIDMFA\n\
             aws_secret_access_key = secret-mfa\n\
             mfa_serial = arn:aws:iam::123456789012:mfa/me\n\
             \n\
             [profile sso-keys]\n\
             sso_session = corp\n\
             aws_access_key_id = AKIDSSOKEYS\n\
             aws_secret_access_key = secret-sso-keys\n\
             \n\
             [profile top]\n\
             role_arn = arn:aws:iam::123456789012:role/top\n\
             source_profile = mid\n\
             role_session_name = tests\n\
             \n\
             [profile mid]\n\
             aws_access_key_id = AKIDMID\n\
             aws_secret_access_key = secret-mid\n\
             role_arn = arn:aws:iam::123456789012:role/mid\n\
             source_profile = dev\n\
             \n\
             [profile web-ext]\n\
             role_arn = arn:aws:iam::123456789012:role/pod2\n\
             web_identity_token_file = {web}\n\
             role_session_name = tests\n\
             external_id = not-for-web-identity\n\
             duration_seconds = 900\n\
             \n\
             [profile assumer]\n\
             role_arn = arn:aws:iam::123456789012:role/bedrock-user\n\
             source_profile = dev\n\
             role_session_name = tests\n\
             external_id = ext-1\n\
             duration_seconds = 1800\n\
             \n\
             [profile chained]\n\
             role_arn = arn:aws:iam::123456789012:role/second\n\
             source_profile = assumer\n\
             role_session_name = tests\n\
             \n\
             [profile web]\n\
             role_arn = arn:aws:iam::123456789012:role/pod\n\
             web_identity_token_file = {web}\n\
             role_session_name = tests\n\
             \n\
             [profile from-env]\n\
             role_arn = arn:aws:iam::123456789012:role/ci\n\
             credential_source = Environment\n\
             role_session_name = tests\n\
             \n\
             [profile sso-new]\n\
             sso_session = corp\n\
             sso_account_id = 123456789012\n\
             sso_role_name = BedrockUser\n\
             region = us-west-2\n\
             \n\
             [profile sso-legacy]\n\
             sso_start_url = https://legacy.awsapps.com/start\n\
             sso_region = eu-west-1\n\
             sso_account_id = 210987654321\n\
             sso_role_name = Reader\n\
             \n\
             [sso-session corp]\n\
             sso_start_url = https://corp.awsapps.com/start\n\
             sso_region = us-east-1\n\
             sso_registration_scopes = sso:account:access\n",
            script.display(),
            web = dir.join("web-token").display()
        ),
    )
    .unwrap();
    (config, credentials)
}

// Two threads: the metadata server answers botocore while the test waits for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chain_finds_what_botocore_finds() {
    let Some(python) = sdk_tools("the_chain_finds_what_botocore_finds") else {
        return;
    };
    let dir = temp_dir("aws-credentials");
    let (config, credentials) = write_files(&dir);
    let home = dir.join("home");
    // The tokens `aws sso login` would have cached, by the sha1 of the session or start URL.
    let cache = home.join(".aws/sso/cache");
    std::fs::create_dir_all(&cache).unwrap();
    for (file, token) in [
        ("ee0bfd2552fbd840c02cc48b6e823320543c450f", "sso-token-corp"),
        (
            "79e435d7a515078e81c9dffc35f38d5687ebd3a7",
            "sso-token-legacy",
        ),
    ] {
        let cached = json!({ "accessToken": token, "expiresAt": "2099-01-01T00:00:00Z" });
        std::fs::write(cache.join(format!("{file}.json")), cached.to_string()).unwrap();
    }
    let token_file = dir.join("pod-token");
    std::fs::write(&token_file, "pod-token").unwrap();
    let (received, metadata) = metadata_server().await;

    let path = |p: &Path| p.display().to_string();
    let files = [
        ("HOME", path(&home)),
        ("AWS_CONFIG_FILE", path(&config)),
        ("AWS_SHARED_CREDENTIALS_FILE", path(&credentials)),
        ("AWS_EC2_METADATA_DISABLED", "true".to_owned()),
    ];
    let with = |more: &[(&str, String)]| -> Vec<(String, String)> {
        let mut vars: Vec<(String, String)> = files
            .iter()
            .filter(|(name, _)| !more.iter().any(|(other, _)| other == name))
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        vars.extend(more.iter().map(|(k, v)| (k.to_string(), v.clone())));
        vars
    };
    let env_keys = [
        ("AWS_ACCESS_KEY_ID", "AKIDENV".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "secret-env".to_owned()),
    ];
    let no_files = [
        ("AWS_CONFIG_FILE", path(&dir.join("none"))),
        ("AWS_SHARED_CREDENTIALS_FILE", path(&dir.join("none"))),
    ];
    let cases: Vec<Case> = vec![
        ("the default profile", with(&[]), None, "AKIDDEFAULT"),
        (
            "a profile's keys in the config file",
            with(&[("AWS_PROFILE", "dev".into())]),
            None,
            "AKIDDEV",
        ),
        (
            "the credentials file over the config file",
            with(&[("AWS_PROFILE", "both".into())]),
            None,
            "AKIDFROMCREDENTIALS",
        ),
        (
            "credential_process",
            with(&[("AWS_PROFILE", "tool".into())]),
            None,
            "AKIDPROCESS-tool",
        ),
        (
            "the environment's keys first",
            with(&[
                env_keys[0].clone(),
                env_keys[1].clone(),
                ("AWS_PROFILE", "dev".into()),
            ]),
            None,
            "AKIDENV",
        ),
        (
            "a chosen profile over the environment's keys",
            with(&[env_keys[0].clone(), env_keys[1].clone()]),
            Some("dev"),
            "AKIDDEV",
        ),
        (
            "a region in the credentials file",
            with(&[("AWS_PROFILE", "regional".into())]),
            None,
            "AKIDREGIONAL",
        ),
        (
            "AWS_DEFAULT_REGION over the profile's region",
            with(&[("AWS_DEFAULT_REGION", "sa-east-1".into())]),
            None,
            "AKIDDEFAULT",
        ),
        (
            "a container's endpoint and its token file",
            with(&[
                no_files[0].clone(),
                no_files[1].clone(),
                (
                    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                    format!("{metadata}/creds"),
                ),
                ("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", path(&token_file)),
            ]),
            None,
            "AKIDCONTAINER",
        ),
        (
            "an instance's role (IMDSv2)",
            with(&[
                no_files[0].clone(),
                no_files[1].clone(),
                ("AWS_EC2_METADATA_DISABLED", "false".into()),
                ("AWS_EC2_METADATA_SERVICE_ENDPOINT", format!("{metadata}/")),
            ]),
            None,
            "AKIDINSTANCE",
        ),
    ];
    // Roles, assumed through the STS of this server, in the region botocore signs for.
    let sts = [
        ("AWS_ENDPOINT_URL_STS", metadata.clone()),
        ("AWS_DEFAULT_REGION", "eu-west-3".to_owned()),
    ];
    let role_cases: Vec<Case> = vec![
        (
            "a role assumed with a source profile's keys, with an external id",
            with(&[
                sts[0].clone(),
                sts[1].clone(),
                ("AWS_PROFILE", "assumer".into()),
            ]),
            None,
            "ASIA-bedrock-user-VIA-AKIDDEV",
        ),
        (
            "a role assumed with another role's credentials",
            with(&[
                sts[0].clone(),
                sts[1].clone(),
                ("AWS_PROFILE", "chained".into()),
            ]),
            None,
            "ASIA-second-VIA-ASIA-bedrock-user-VIA-AKIDDEV",
        ),
        (
            "keys beside an mfa_serial (used by roles only)",
            with(&[("AWS_PROFILE", "mfa-keys".into())]),
            None,
            "AKIDMFA",
        ),
        (
            "a source profile's keys, not its own role",
            with(&[
                sts[0].clone(),
                sts[1].clone(),
                ("AWS_PROFILE", "top".into()),
            ]),
            None,
            "ASIA-top-VIA-AKIDMID",
        ),
        (
            "a web identity without an external id or a duration",
            with(&[
                sts[0].clone(),
                sts[1].clone(),
                ("AWS_PROFILE", "web-ext".into()),
            ]),
            None,
            "ASIA-pod2-WEB",
        ),
        (
            "a profile's web identity token",
            with(&[
                sts[0].clone(),
                sts[1].clone(),
                ("AWS_PROFILE", "web".into()),
            ]),
            None,
            "ASIA-pod-WEB",
        ),
        (
            "the environment's web identity token (EKS IRSA)",
            with(&[
                sts[0].clone(),
                sts[1].clone(),
                no_files[0].clone(),
                no_files[1].clone(),
                ("AWS_WEB_IDENTITY_TOKEN_FILE", path(&dir.join("web-token"))),
                ("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/irsa".into()),
                ("AWS_ROLE_SESSION_NAME", "tests".into()),
            ]),
            None,
            "ASIA-irsa-WEB",
        ),
    ];
    let sso = ("AWS_ENDPOINT_URL_SSO", metadata.clone());
    let sso_cases: Vec<Case> = vec![
        (
            "an AWS SSO role of an sso-session",
            with(&[sso.clone(), ("AWS_PROFILE", "sso-new".into())]),
            None,
            "ASIA-SSO-BedrockUser-123456789012",
        ),
        (
            "an AWS SSO role, legacy settings",
            with(&[sso.clone(), ("AWS_PROFILE", "sso-legacy".into())]),
            None,
            "ASIA-SSO-Reader-210987654321",
        ),
    ];
    let take_sts = || std::mem::take(&mut *received.sts.lock().unwrap());
    let mut differences = Vec::new();
    for (case, vars, profile, key) in cases.iter().chain(&role_cases).chain(&sso_cases) {
        take_sts();
        let theirs = botocore_finds(&python, vars, *profile);
        let their_calls = take_sts();
        let ours = chain_finds(vars, *profile).await;
        let our_calls = take_sts();
        if ours != theirs || ours["access_key"] != *key {
            differences.push(format!("{case}: ours {ours}, botocore's {theirs}"));
        }
        // The same STS calls (the same forms, signed with the same key for the same scope), and
        // the same SSO calls (the same query and token).
        // aws-config leaves out a profile's `duration_seconds` (STS's default, an hour).
        let without_duration = |calls: Vec<StsCall>| -> Vec<StsCall> {
            calls
                .into_iter()
                .map(|(mut form, signer)| {
                    form.remove("DurationSeconds");
                    (form, signer)
                })
                .collect()
        };
        let (our_calls, their_calls) = (without_duration(our_calls), without_duration(their_calls));
        if our_calls != their_calls {
            differences.push(format!(
                "{case}: our calls {our_calls:?}, botocore's {their_calls:?}"
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    let seen = received.metadata.lock().unwrap().clone();
    assert!(
        seen.contains(&("GET /creds".into(), Some("pod-token".into())))
            && seen.contains(&("GET role".into(), Some("imds-token".into()))),
        "{seen:?}"
    );

    // A key id without its secret is never signed with. botocore stops there with an error;
    // aws-config stops at a profile's (an error), and goes on past the environment's.
    let vars = with(&[("AWS_ACCESS_KEY_ID", "AKIDENV".into())]);
    let theirs = botocore_finds(&python, &vars, None);
    assert!(
        theirs["error"]
            .as_str()
            .unwrap_or_default()
            .contains("PartialCredentialsError"),
        "{theirs}"
    );
    let ours = chain_finds(&vars, None).await;
    assert_eq!(ours["access_key"], "AKIDDEFAULT", "{ours}");
    let vars = with(&[("AWS_PROFILE", "partial".into())]);
    let ours = chain_finds(&vars, None).await;
    let ours = ours["error"].as_str().unwrap_or_default().to_owned();
    assert!(
        ours.contains("profile missing aws_secret_access_key"),
        "{ours}"
    );

    // A profile that is in neither file is an error for both.
    let vars = with(&[]);
    let theirs = botocore_finds(&python, &vars, Some("ghost"));
    let ours = chain_finds(&vars, Some("ghost")).await;
    assert!(
        theirs["error"]
            .as_str()
            .unwrap()
            .contains("ProfileNotFound"),
        "{theirs}"
    );
    let ours = ours["error"].as_str().unwrap().to_owned();
    assert!(ours.contains("profile `ghost` was not defined"), "{ours}");
    std::fs::remove_dir_all(dir).ok();
}

/// A failing `credential_process` (its command line, which may carry a secret, not shown; what
/// it wrote to stderr is), a role that needs an MFA code, a loop of source profiles, an expired
/// SSO token, an `aws login` profile (aws-config's `credentials-login` feature, not enabled
/// here) and a container endpoint off this host are errors, in aws-config's words, not other
/// credentials.
#[tokio::test]
async fn what_the_chain_cannot_resolve_is_named() {
    let dir = temp_dir("aws-credentials-unresolved");
    let config = dir.join("config");
    std::fs::write(
        &config,
        "[profile broken]\ncredential_process = sh -c 'echo expired >&2; exit 3'\n\
         [profile role]\nrole_arn = arn:aws:iam::123456789012:role/bedrock\nsource_profile = base\n\
         mfa_serial = arn:aws:iam::123456789012:mfa/me\n\
         [profile loop]\nrole_arn = arn:aws:iam::123456789012:role/a\nsource_profile = loop2\n\
         [profile loop2]\nrole_arn = arn:aws:iam::123456789012:role/b\nsource_profile = loop\n\
         [profile base]\naws_access_key_id = AKIDBASE\naws_secret_access_key = s\n\
         [profile sso]\nsso_session = corp\nsso_account_id = 1\nsso_role_name = R\n\
         [sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = us-east-1\n\
         [profile new-login]\nlogin_session = arn:aws:iam::123456789012:user/me\n",
    )
    .unwrap();
    let cache = dir.join(".aws/sso/cache");
    std::fs::create_dir_all(&cache).unwrap();
    let expired = json!({ "accessToken": "t", "expiresAt": "2001-01-01T00:00:00Z" });
    let file = cache.join("ee0bfd2552fbd840c02cc48b6e823320543c450f.json");
    std::fs::write(file, expired.to_string()).unwrap();
    let vars = |more: &[(&str, &str)]| {
        let mut vars = vec![
            ("AWS_CONFIG_FILE".to_owned(), config.display().to_string()),
            ("HOME".to_owned(), dir.display().to_string()),
            ("AWS_EC2_METADATA_DISABLED".to_owned(), "true".to_owned()),
        ];
        vars.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        vars
    };
    for (more, expected) in [
        (
            vec![("AWS_PROFILE", "broken")],
            "external process exited with code exit status: 3. Stderr: expired",
        ),
        (vec![("AWS_PROFILE", "role")], "no AWS credentials"),
        (
            vec![("AWS_PROFILE", "sso")],
            "the SSO token has expired and cannot be refreshed",
        ),
        (
            vec![("AWS_PROFILE", "new-login")],
            "the `credentials-login` feature must be enabled",
        ),
        (
            vec![("AWS_PROFILE", "loop")],
            "profile formed an infinite loop",
        ),
        (
            vec![(
                "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                "http://example.com/creds",
            )],
            "invalid full URI for ECS provider",
        ),
    ] {
        let error = chain_finds(&vars(&more), None).await;
        let error = error["error"].as_str().unwrap_or_default().to_owned();
        assert!(error.contains(expected), "{error}");
        assert!(!error.contains("echo expired"), "{error}");
    }
    std::fs::remove_dir_all(dir).ok();
}

/// Seconds since the epoch of a time as the token caches write it (`...Z`, or `...UTC` as
/// botocore writes it), read by `date`.
fn epoch_seconds(time: &str) -> u64 {
    let time = time.trim_end_matches("UTC").trim_end_matches('Z');
    let output = Command::new("date")
        .args(["-u", "-d", &time.replacen('T', " ", 1), "+%s"])
        .output()
        .expect("date runs");
    let printed = String::from_utf8(output.stdout).unwrap();
    printed
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a time: {time}"))
}

/// `time` as the AWS CLI writes it in its token cache.
fn cache_time(seconds_from_now: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let output = Command::new("date")
        .args([
            "-u",
            "-d",
            &format!("@{}", now + seconds_from_now),
            "+%Y-%m-%dT%H:%M:%SZ",
        ])
        .output()
        .expect("date runs");
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// An `sso-session`'s token about to expire is refreshed through SSO OIDC's `CreateToken` as
/// botocore refreshes it: the same request, the same role credentials got with the new token,
/// and the same token written back to the cache. A refresh that is refused keeps a token that
/// has not expired, for both, and fails one that has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sso_session_token_is_refreshed_as_botocore_refreshes_it() {
    let Some(python) = sdk_tools("an_sso_session_token_is_refreshed_as_botocore_refreshes_it")
    else {
        return;
    };
    let dir = temp_dir("aws-sso-refresh");
    let config = dir.join("config");
    std::fs::write(
        &config,
        "[profile sso-refresh]\n\
         sso_session = refresh\n\
         sso_account_id = 333333333333\n\
         sso_role_name = BedrockUser\n\
         [sso-session refresh]\n\
         sso_start_url = https://refresh.awsapps.com/start\n\
         sso_region = eu-central-1\n",
    )
    .unwrap();
    let cache = dir.join(".aws/sso/cache");
    std::fs::create_dir_all(&cache).unwrap();
    use sha1::Digest;
    let name: String = sha1::Sha1::digest(b"refresh")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let cached_file = cache.join(format!("{name}.json"));
    let (received, server) = metadata_server().await;
    let vars = vec![
        ("HOME".to_owned(), dir.display().to_string()),
        ("AWS_CONFIG_FILE".to_owned(), config.display().to_string()),
        ("AWS_PROFILE".to_owned(), "sso-refresh".to_owned()),
        ("AWS_ENDPOINT_URL_SSO".to_owned(), server.clone()),
        ("AWS_ENDPOINT_URL_SSO_OIDC".to_owned(), server),
        ("AWS_EC2_METADATA_DISABLED".to_owned(), "true".to_owned()),
    ];
    // The token `aws sso login` cached, expiring in `expires_in` seconds, with this refresh token.
    let cached = |expires_in: i64, refresh_token: &str| {
        json!({
            "startUrl": "https://refresh.awsapps.com/start",
            "region": "eu-central-1",
            "accessToken": "sso-token-cached",
            "expiresAt": cache_time(expires_in),
            "refreshToken": refresh_token,
            "clientId": "client-1",
            "clientSecret": "client-secret-1",
            "registrationExpiresAt": cache_time(90 * 86_400),
        })
    };
    // What each finds from the same cache: what it printed, its calls (OIDC's, then the
    // portal's token), and the cache it left.
    let run = |expires_in: i64, refresh_token: &'static str| {
        let received = received.clone();
        let vars = vars.clone();
        let python = python.clone();
        let cached_file = cached_file.clone();
        let start = cached(expires_in, refresh_token).to_string();
        async move {
            let mut found = Vec::new();
            for botocore in [true, false] {
                std::fs::write(&cached_file, &start).unwrap();
                received.oidc.lock().unwrap().clear();
                received.sts.lock().unwrap().clear();
                let printed = match botocore {
                    true => botocore_finds(&python, &vars, None),
                    false => chain_finds(&vars, None).await,
                };
                let oidc = received.oidc.lock().unwrap().clone();
                let tokens: Vec<_> = received
                    .sts
                    .lock()
                    .unwrap()
                    .iter()
                    .map(|c| c.1.clone())
                    .collect();
                let left: Value =
                    serde_json::from_str(&std::fs::read_to_string(&cached_file).unwrap()).unwrap();
                found.push((printed, oidc, tokens, left));
            }
            let ours = found.pop().unwrap();
            let theirs = found.pop().unwrap();
            (theirs, ours)
        }
    };

    // Five minutes left: refreshed by both, with the same request.
    let (theirs, ours) = run(300, "refresh-1").await;
    assert_eq!(ours.0, theirs.0);
    assert_eq!(ours.0["access_key"], "ASIA-SSO-BedrockUser-333333333333");
    assert_eq!(ours.1, theirs.1, "the CreateToken requests");
    assert_eq!(ours.1.len(), 1);
    assert_eq!(ours.2, theirs.2, "the tokens GetRoleCredentials was given");
    assert_eq!(ours.2, [Some("sso-token-refreshed".to_owned())]);
    // The same cache written, its expiry an hour from now for both (to the minute).
    let (mut our_cache, mut their_cache) = (ours.3, theirs.3);
    let our_expiry = epoch_seconds(our_cache["expiresAt"].take().as_str().unwrap());
    let their_expiry = epoch_seconds(their_cache["expiresAt"].take().as_str().unwrap());
    assert!(
        our_expiry.abs_diff(their_expiry) < 60,
        "{our_expiry} {their_expiry}"
    );
    assert_eq!(our_cache, their_cache);
    assert_eq!(our_cache["refreshToken"], "refresh-2");
    assert_eq!(our_cache["accessToken"], "sso-token-refreshed");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&cached_file)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }

    // Five minutes left and the refresh refused: the cached token serves, for both.
    let (theirs, ours) = run(300, "refresh-revoked").await;
    assert_eq!(ours.0, theirs.0);
    assert_eq!(ours.0["access_key"], "ASIA-SSO-BedrockUser-333333333333");
    assert_eq!(ours.1, theirs.1);
    assert_eq!(ours.2, [Some("sso-token-cached".to_owned())]);
    assert_eq!(ours.2, theirs.2);
    assert_eq!(ours.3, theirs.3, "the cache as it was");

    // Expired and the refresh refused: botocore stops with an error that says to log in again;
    // aws-config, after the same CreateToken, sends the cached token to the SSO portal, which
    // refuses an expired one (this test's portal does not look). Neither invents a token.
    let (theirs, ours) = run(-60, "refresh-revoked").await;
    assert!(theirs.0["error"].is_string(), "{}", theirs.0);
    assert!(
        theirs.2.is_empty(),
        "botocore asked for no GetRoleCredentials"
    );
    assert_eq!(ours.1, theirs.1, "the CreateToken requests");
    assert!(
        ours.2
            .iter()
            .all(|token| token.as_deref() == Some("sso-token-cached")),
        "{:?}",
        ours.2
    );
    assert_eq!(ours.3, theirs.3, "the cache as it was");

    // Half an hour left: used as it is, by both.
    let (theirs, ours) = run(1800, "refresh-1").await;
    assert_eq!(ours.0, theirs.0);
    assert!(ours.1.is_empty() && theirs.1.is_empty(), "no CreateToken");
    assert_eq!(ours.2, [Some("sso-token-cached".to_owned())]);
    std::fs::remove_dir_all(dir).ok();
}

/// Credentials are kept while they are good for more than ten minutes, and fetched again once
/// they have expired; within the last ten minutes a fetch is tried at most once a minute (the
/// unit tests of `credential_chain` cover a failed one); requests that wait for one fetch share
/// its result.
#[tokio::test]
async fn credentials_are_fetched_again_before_they_expire() {
    let now = std::time::SystemTime::now();
    let rfc3339 = |time: std::time::SystemTime| {
        let seconds = time
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let output = Command::new("date")
            .args(["-u", "-d", &format!("@{seconds}"), "+%Y-%m-%dT%H:%M:%SZ"])
            .output()
            .expect("date runs");
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    };
    let minutes = |n: u64| std::time::Duration::from_secs(n * 60);
    let answer = |key: &str, expires: std::time::SystemTime| {
        let body = json!({
            "AccessKeyId": key, "SecretAccessKey": "s", "Token": "t",
            "Expiration": rfc3339(expires),
        });
        Canned::Answer(200, Vec::new(), body)
    };
    let (mock, base_url) = serve(vec![
        answer("AKID1", now - minutes(1)),
        answer("AKID2", now + minutes(5)),
        answer("AKID3", now + minutes(60)),
    ])
    .await;
    let chain = AwsCredentialChain::from_vars([
        ("HOME", "/nonexistent".to_owned()),
        (
            "AWS_CONTAINER_CREDENTIALS_FULL_URI",
            format!("{base_url}/creds"),
        ),
    ]);
    let key = |c: tool_providers::AwsCredentials| c.access_key_id().to_owned();
    // Expired: fetched again at the next request.
    assert_eq!(key(chain.credentials().await.unwrap()), "AKID1");
    assert_eq!(key(chain.credentials().await.unwrap()), "AKID2");
    // Good for five minutes, and fetched less than a minute ago: kept for now.
    assert_eq!(key(chain.credentials().await.unwrap()), "AKID2");
    assert_eq!(mock.seen.lock().unwrap().len(), 2);

    // Requests that wait for one fetch share its result, a failure included: three requests
    // together reach the endpoint as often as one alone.
    let refused = || Canned::Answer(500, Vec::new(), json!({}));
    let over = |base_url: &str| {
        AwsCredentialChain::from_vars([
            ("HOME", "/nonexistent".to_owned()),
            (
                "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                format!("{base_url}/creds"),
            ),
        ])
    };
    let (alone, base_url) = serve(vec![refused(), refused(), refused()]).await;
    let error = over(&base_url).credentials().await.unwrap_err().to_string();
    assert!(error.contains("500"), "{error}");
    let one_fetch = alone.seen.lock().unwrap().len();
    let (mock, base_url) = serve(vec![refused(), refused(), refused()]).await;
    let chain = over(&base_url);
    let (a, b, c) = tokio::join!(
        chain.credentials(),
        chain.credentials(),
        chain.credentials()
    );
    for result in [a, b, c] {
        let error = result.unwrap_err().to_string();
        assert!(error.contains("500"), "{error}");
    }
    assert_eq!(mock.seen.lock().unwrap().len(), one_fetch);
}

/// An instance metadata service that gives no token (a container on EC2 whose hop limit is 1
/// waits for one that never comes; a service that refuses tokens answers 403) is an error that
/// says so: the AWS SDK for Rust speaks IMDSv2 only, and never reads the role without a token
/// (botocore falls back to IMDSv1).
#[tokio::test]
async fn the_instance_role_is_never_read_without_a_token() {
    for token_answer in ["hangs", "refused"] {
        let seen = Arc::new(Mutex::new(Vec::<String>::new()));
        let (s1, s2, s3) = (seen.clone(), seen.clone(), seen.clone());
        let app = Router::new()
            .route(
                "/latest/api/token",
                put(move || async move {
                    s1.lock().unwrap().push("PUT token".to_owned());
                    if token_answer == "hangs" {
                        tokio::time::sleep(std::time::Duration::from_secs(30)).await;
                    }
                    (StatusCode::FORBIDDEN, String::new())
                }),
            )
            .route(
                "/latest/meta-data/iam/security-credentials/",
                get(move |headers: HeaderMap| async move {
                    let token = headers.contains_key("x-aws-ec2-metadata-token");
                    s2.lock()
                        .unwrap()
                        .push(format!("GET roles, token: {token}"));
                    "v1-role"
                }),
            )
            .route(
                "/latest/meta-data/iam/security-credentials/v1-role",
                get(move |headers: HeaderMap| async move {
                    let token = headers.contains_key("x-aws-ec2-metadata-token");
                    s3.lock().unwrap().push(format!("GET role, token: {token}"));
                    json!({
                        "Code": "Success", "AccessKeyId": "AKIDV1", "SecretAccessKey": "s",
                        "Token": "t", "Expiration": "2099-01-01T00:00:00Z",
                    })
                    .to_string()
                }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        let chain = AwsCredentialChain::from_vars([
            ("HOME", "/nonexistent".to_owned()),
            (
                "AWS_EC2_METADATA_SERVICE_ENDPOINT",
                format!("http://{address}"),
            ),
        ]);
        let error = chain.credentials().await.expect_err(token_answer);
        assert!(
            error.to_string().contains("IMDS"),
            "{token_answer}: {error}"
        );
        let seen = seen.lock().unwrap();
        assert!(
            seen.iter().all(|request| request == "PUT token"),
            "{token_answer}: {seen:?}"
        );
    }
}

/// `BedrockModel` signs with what its chain finds: the key id, the token, and the signature
/// botocore's signer makes with the same secret (checked in `sdk_types`, here by the key id and
/// the token sent).
#[tokio::test]
async fn a_bedrock_request_is_signed_with_the_chains_credentials() {
    if std::env::var_os("AWS_BEARER_TOKEN_BEDROCK").is_some() {
        return; // an API key in this environment would be used instead
    }
    let (received, metadata) = metadata_server().await;
    let vars = [
        ("HOME", "/nonexistent".to_owned()),
        ("AWS_EC2_METADATA_SERVICE_ENDPOINT", metadata),
    ];
    let (mock, base_url) = serve(vec![Canned::Answer(
        400,
        Vec::new(),
        json!({ "message": "no" }),
    )])
    .await;
    let model = BedrockModel::new("amazon.nova-pro-v1:0")
        .with_base_url(base_url.trim_end_matches("/v1"))
        .with_credential_chain(AwsCredentialChain::from_vars(vars));
    model
        .respond(&ModelRequest::new(vec![Message::user("hi")]))
        .await
        .expect_err("a 400");
    let seen = mock.seen.lock().unwrap();
    let authorization = seen[0].header("authorization").unwrap();
    assert!(
        authorization.contains("Credential=AKIDINSTANCE/"),
        "{authorization}"
    );
    assert_eq!(
        seen[0].header("x-amz-security-token").as_deref(),
        Some("token-of-AKIDINSTANCE")
    );
    // The role's credentials are read with an IMDSv2 token (aws-config also asks the service
    // for the region as it loads).
    let metadata = received.metadata.lock().unwrap();
    assert!(
        metadata.contains(&("GET role".into(), Some("imds-token".into()))),
        "{metadata:?}"
    );
}
