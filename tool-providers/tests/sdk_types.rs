//! Our wire formats checked against the providers' own SDK types, installed pinned from PyPI by
//! `scripts/sdk-tools.sh`: the OpenAI and Anthropic SDKs' request parameter types (strictly:
//! no key they do not declare, none they require missing) and response models, google-genai's
//! models (which refuse unknown fields), botocore's Bedrock Runtime service model and the MCP
//! SDK's types. The checker is `tests/sdk/check_wire.py` at the workspace root.
//!
//! - Every golden file (requests, responses, event streams, declarations, rendered results).
//! - The requests the five HTTP clients send for what the golden conversation does not show:
//!   images and errors in tool results, each tool choice, one call per answer, strict
//!   declarations, a temperature, structured output with and without tools.
//! - `tool-core`'s declarations and rendered results for all six APIs, strict and not, with
//!   images, structured output and failures.
//! - Bedrock's event stream bytes, read back by botocore's parser, and `BedrockModel`'s SigV4
//!   signatures against botocore's signer (`tests/sdk/check_sigv4.py`).
//! - And the checker itself: a body the SDK would refuse is refused, with its path.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tool_agent::{
    AllowedMode, ChatModel, Generation, Message, ModelRequest, OfferedTools, PromptCache,
    ResponseFormat, ToolChoice,
};
use tool_core::provider::{declare, render_results, CallResult, DeclareOptions, Format};
use tool_core::{Content, ToolCall, ToolError, ToolOutput, ToolSpec};
use tool_providers::{
    AnthropicModel, ApiKey, AwsCredentials, BedrockModel, GeminiModel, OpenAiChatModel,
    OpenAiResponsesModel, RetryPolicy,
};
use tool_runtime::DynamicTool;
use tool_test_support::event_stream;
use tool_test_support::mock::{serve, Canned};
use tool_test_support::sdk::{run_script, sdk_tools, temp_dir, workspace};

/// Runs the checker: with no arguments on every golden file, else on each `KIND=FILE`.
/// Returns whether every file passed, and what it printed.
fn run_checker(python: &Path, args: &[String]) -> (bool, String) {
    let (passed, printed) = run_script(python, "check_wire.py", args);
    assert!(
        printed.contains("files,"),
        "the checker did not finish:\n{printed}"
    );
    (passed, printed)
}

/// Writes each body to a file of `dir` and checks them all, each as its kind.
fn assert_valid(python: &Path, dir: &Path, bodies: &[(String, String, Value)]) {
    let mut args = Vec::new();
    for (kind, name, body) in bodies {
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, serde_json::to_string_pretty(body).unwrap()).unwrap();
        args.push(format!("{kind}={}", path.display()));
    }
    let (passed, printed) = run_checker(python, &args);
    assert!(passed, "the SDK types refuse what we send:\n{printed}");
}

#[test]
fn every_golden_file_matches_the_sdk_types() {
    let Some(python) = sdk_tools("every_golden_file_matches_the_sdk_types") else {
        return;
    };
    let (passed, printed) = run_checker(&python, &[]);
    assert!(passed, "{printed}");
    // Every wire file of the golden folders: 40 of the clients' conversation, 28 of tool-core's.
    let checked = printed.lines().filter(|l| l.starts_with("ok   ")).count();
    assert!(
        checked >= 68,
        "only {checked} files were checked:\n{printed}"
    );
    // Every API's files were found: requests of five clients, renderings of six APIs.
    for expected in [
        "tool-providers/tests/golden/gemini/stream-request-2.json",
        "tool-providers/tests/golden/anthropic/stream-1.sse",
        "tool-providers/tests/golden/bedrock/stream-2.jsonl",
        "tests/golden/bedrock/results.json",
        "tests/golden/mcp/declarations.json",
        "tests/golden/openai-responses/hosted/results-rendered.json",
    ] {
        assert!(
            printed.contains(&format!("ok   {expected}")),
            "{expected} was not checked:\n{printed}"
        );
    }
}

// -------------------------------------------------------------------------------------------
// The clients' requests.

fn weather_spec() -> ToolSpec {
    let schema = json!({
        "type": "object",
        "properties": {
            "location": { "type": "string", "description": "City and country" },
            "unit": { "enum": ["celsius", "fahrenheit"], "default": "celsius" },
            "days": { "type": "integer", "minimum": 1, "maximum": 7 },
            "tags": { "type": "object", "additionalProperties": { "type": "string" } }
        },
        "required": ["location"],
        "additionalProperties": false
    });
    let tool = DynamicTool::new("get_weather", "Get the weather.", schema, |_, _| async {
        Ok(ToolOutput::text("sunny"))
    })
    .with_output_schema(json!({
        "type": "object",
        "properties": { "summary": { "type": "string" } },
        "required": ["summary"]
    }));
    let mut spec = tool.spec().clone();
    spec.metadata.input_examples = vec![json!({ "location": "Paris, France", "days": 2 })];
    spec
}

/// A result's attachments of every kind: an image, a PDF by its bytes and at a URL, a plain-text
/// file, audio, a resource link and a text resource. Each API takes those it has a place for
/// and is told of the others in words.
fn attachments() -> Vec<Content> {
    let pdf = "JVBERi0xLjQK"; // "%PDF-1.4\n"
    vec![
        Content::image("iVBORw0KGgo=", "image/png"),
        Content::file(pdf, "application/pdf", "radar report.pdf"),
        Content::file_url("https://example.com/climate.pdf", "application/pdf"),
        Content::file("c3Vubnk=", "text/plain", "summary.txt"),
        Content::audio("UklGRg==", "audio/wav"),
        Content::resource_link("https://example.com/stations/paris", "paris-station"),
        Content::text_resource("weather://paris/today", "18°C, sunny, wind 10 km/h"),
    ]
}

/// The conversation every request variant carries: a call answered with text and attachments
/// of every kind, and a failed call.
fn conversation() -> Vec<Message> {
    vec![
        Message::user("What is the weather in Paris and in Bogotá?"),
        Message::Assistant {
            text: Some("Checking both.".into()),
            calls: vec![
                ToolCall::new("call_1", "get_weather", json!({ "location": "Paris" })),
                ToolCall::new("call_2", "get_weather", json!({ "location": "Bogotá" })),
            ],
        },
        Message::Tool {
            call_id: Some("call_1".into()),
            name: "get_weather".into(),
            text: "18°C and sunny; the radar image is attached".into(),
            is_error: false,
            attachments: attachments(),
            found_tools: Vec::new(),
        },
        Message::Tool {
            call_id: Some("call_2".into()),
            name: "get_weather".into(),
            text: "the weather service timed out".into(),
            is_error: true,
            attachments: Vec::new(),
            found_tools: Vec::new(),
        },
    ]
}

fn answer_schema() -> ResponseFormat {
    ResponseFormat::new(
        "forecast",
        json!({
            "type": "object",
            "properties": {
                "city": { "type": "string" },
                "celsius": { "type": "number" }
            },
            "required": ["city", "celsius"],
            "additionalProperties": false
        }),
    )
}

/// The requests to send: each tool choice, one call per answer, strict declarations, a
/// temperature, every generation setting, and structured output with and without tools.
fn variants(format: Format) -> Vec<(String, ModelRequest)> {
    let tools = |strict: bool| {
        let options = DeclareOptions {
            strict,
            ..DeclareOptions::default()
        };
        Arc::new(OfferedTools::new(
            vec![weather_spec()],
            Some(format),
            &options,
        ))
    };
    let base = |name: &str, strict: bool| {
        let mut request = ModelRequest::new(conversation());
        request.instructions = Some("You are a weather assistant.".into());
        request.tools = tools(strict);
        (name.to_owned(), request)
    };
    let mut out = Vec::new();
    for (name, choice) in [
        ("auto", ToolChoice::Auto),
        ("required", ToolChoice::Required),
        ("none", ToolChoice::None),
        ("named", ToolChoice::Tool("get_weather".into())),
        ("allowed", ToolChoice::allowed(["get_weather"])),
        (
            "allowed-required",
            ToolChoice::Allowed(vec!["get_weather".into()], AllowedMode::Required),
        ),
    ] {
        let (name, mut request) = base(name, false);
        request.tool_choice = choice;
        out.push((name, request));
    }
    let (name, mut request) = base("strict-one-call-temperature", true);
    request.parallel_tool_calls = Some(false);
    request.generation.temperature = Some(0.2);
    out.push((name, request));
    let (name, mut request) = base("generation-settings", false);
    request.generation = Generation::new()
        .max_tokens(256)
        .temperature(0.3)
        .top_p(0.9)
        .stop(["END"])
        .seed(7);
    out.push((name, request));
    // Example arguments in the description, for the APIs without a field for them.
    let (name, mut request) = base("examples-in-description", false);
    request.tools = Arc::new(OfferedTools::new(
        vec![weather_spec()],
        Some(format),
        &DeclareOptions {
            examples_in_description: true,
            ..DeclareOptions::default()
        },
    ));
    out.push((name, request));
    let (name, mut request) = base("structured-with-tools", false);
    request.response_format = Some(answer_schema());
    out.push((name, request));
    let mut request = ModelRequest::new(vec![Message::user("Forecast for Paris, as JSON.")]);
    request.response_format = Some(answer_schema());
    out.push(("structured-alone".into(), request));
    out
}

/// Sends every variant through the client (against the mock, answering with the golden
/// conversation's final text) and checks the bodies it sent as `<folder>.request`.
async fn check_client<M: ChatModel>(folder: &str, model: impl Fn(&str) -> M) {
    let Some(python) = sdk_tools(folder) else {
        return;
    };
    let answer_path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(folder)
        .join("response-2.json");
    let answer: Value =
        serde_json::from_str(&std::fs::read_to_string(&answer_path).unwrap()).unwrap();
    let format = model("http://127.0.0.1:9/v1")
        .format()
        .expect("an HTTP client names its format");
    let mut bodies = Vec::new();
    for (name, request) in variants(format) {
        let (mock, base_url) = serve(vec![Canned::Answer(200, Vec::new(), answer.clone())]).await;
        let response = model(&base_url).respond(&request).await;
        response.unwrap_or_else(|e| panic!("{folder} {name}: {e}"));
        let body = mock.seen.lock().unwrap()[0].body.clone();
        bodies.push((
            format!("{folder}.request"),
            format!("{folder}-{name}"),
            body,
        ));
    }
    let dir = temp_dir(folder);
    assert_valid(&python, &dir, &bodies);
    std::fs::remove_dir_all(dir).ok();
}

#[tokio::test]
async fn openai_chat_requests_match_the_sdk_types() {
    check_client("openai-chat", |url| {
        OpenAiChatModel::new("gpt-4.1").with_base_url(url)
    })
    .await;
}

#[tokio::test]
async fn openai_responses_requests_match_the_sdk_types() {
    check_client("openai-responses", |url| {
        OpenAiResponsesModel::new("gpt-4.1").with_base_url(url)
    })
    .await;
}

#[tokio::test]
async fn anthropic_requests_match_the_sdk_types() {
    // With the prompt cache, which adds the request's top-level `cache_control`.
    check_client("anthropic", |url| {
        AnthropicModel::new("claude-sonnet-4-5")
            .with_base_url(url)
            .with_prompt_cache(PromptCache::OneHour)
    })
    .await;
}

#[tokio::test]
async fn gemini_requests_match_the_sdk_types() {
    check_client("gemini", |url| {
        // A Gemini 3 model, which is sent the images of a function response.
        GeminiModel::new("gemini-3-pro-preview").with_base_url(url)
    })
    .await;
}

#[tokio::test]
async fn bedrock_requests_match_the_sdk_types() {
    check_client("bedrock", |url| {
        BedrockModel::new("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
            .with_base_url(url)
            .with_api_key(ApiKey::new("bedrock-api-key"))
            .with_max_tokens(1024)
            .with_prompt_cache(PromptCache::OneHour)
    })
    .await;
}

/// The golden streamed answers, encoded as the tests' mock server sends them, are read by
/// botocore's own event stream parser as the events they are meant to be.
#[test]
fn bedrock_event_streams_are_read_by_botocore() {
    let Some(python) = sdk_tools("bedrock_event_streams_are_read_by_botocore") else {
        return;
    };
    let dir = temp_dir("bedrock-streams");
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/bedrock");
    let mut args = Vec::new();
    for n in [1, 2] {
        let lines = std::fs::read_to_string(golden.join(format!("stream-{n}.jsonl"))).unwrap();
        let path = dir.join(format!("stream-{n}.eventstream"));
        std::fs::write(&path, event_stream::encode_lines(&lines)).unwrap();
        args.push(format!("bedrock.event-stream={}", path.display()));
    }
    let (passed, printed) = run_checker(&python, &args);
    assert!(passed, "{printed}");
    // And bytes botocore refuses are refused: one CRC byte changed.
    let mut broken = std::fs::read(dir.join("stream-1.eventstream")).unwrap();
    let last = broken.len() - 1;
    broken[last] ^= 1;
    let path = dir.join("broken.eventstream");
    std::fs::write(&path, broken).unwrap();
    let (passed, printed) = run_checker(
        &python,
        &[format!("bedrock.event-stream={}", path.display())],
    );
    assert!(!passed && printed.contains("FAIL"), "{printed}");
    std::fs::remove_dir_all(dir).ok();
}

const ACCESS_KEY: &str = "AKIDEXAMPLE";
const SECRET_KEY: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const SESSION_TOKEN: &str = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQ";

/// Runs `tests/sdk/check_sigv4.py` on a request as the mock received it, signed for
/// `eu-west-3` with `secret_key`; whether botocore signed it the same, and what it printed.
fn botocore_signs_the_same(
    python: &Path,
    file: &Path,
    seen: &tool_test_support::mock::Seen,
    secret_key: &str,
    token: Option<&str>,
) -> (bool, String) {
    let headers: serde_json::Map<String, Value> = seen
        .headers
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), json!(v.to_str().unwrap())))
        .collect();
    let host = seen.header("host").unwrap();
    let body_hex: String = seen.raw.iter().map(|b| format!("{b:02x}")).collect();
    let described = json!({
        "method": "POST",
        "url": format!("http://{host}{}", seen.path),
        "headers": headers,
        "body_hex": body_hex,
        "region": "eu-west-3",
        "service": "bedrock",
        "access_key": ACCESS_KEY,
        "secret_key": secret_key,
        "token": token,
    });
    std::fs::write(file, described.to_string()).unwrap();
    run_script(python, "check_sigv4.py", &[file.display().to_string()])
}

/// A request signed with SigV4 carries the `Authorization` botocore computes for the same
/// request (`tests/sdk/check_sigv4.py`), with long-term and with temporary credentials, and a
/// retry is signed again, at its own time; a header set with `with_header` is signed too.
#[tokio::test]
async fn bedrock_signatures_match_botocores() {
    let Some(python) = sdk_tools("bedrock_signatures_match_botocores") else {
        return;
    };
    let dir = temp_dir("bedrock-sigv4");
    let answer = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/bedrock/response-2.json"),
    )
    .unwrap();
    let answer: Value = serde_json::from_str(&answer).unwrap();
    let plain = AwsCredentials::new(ACCESS_KEY, SECRET_KEY);
    let temporary = plain.clone().with_session_token(SESSION_TOKEN);
    for (name, credentials, token) in [
        ("long-term", plain, None),
        ("temporary", temporary, Some(SESSION_TOKEN)),
    ] {
        // The temporary credentials' request is throttled once, then retried after more than
        // a second, so that its signature's time has moved on.
        let throttled = Canned::Answer(
            429,
            vec![(
                "x-amzn-ErrorType",
                "ThrottlingException:http://internal.amazon.com/".into(),
            )],
            json!({ "message": "Too many requests, please wait before trying again." }),
        );
        let answers = match token {
            Some(_) => vec![throttled, Canned::Answer(200, Vec::new(), answer.clone())],
            None => vec![Canned::Answer(200, Vec::new(), answer.clone())],
        };
        let (mock, base_url) = serve(answers).await;
        let model = BedrockModel::new("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
            .with_region("eu-west-3")
            .with_base_url(base_url.trim_end_matches("/v1"))
            .with_credentials(credentials)
            .with_header("X-Gateway-Tag", "  signed   too ")
            .with_retry(RetryPolicy {
                max_retries: 1,
                initial_backoff: Duration::from_millis(2200),
                max_backoff: Duration::from_secs(3),
            });
        let mut request = ModelRequest::new(conversation());
        request.instructions = Some("Answer in one sentence: «très bien».".into());
        model
            .respond(&request)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let seen = mock.seen.lock().unwrap();
        assert_eq!(seen.len(), if token.is_some() { 2 } else { 1 }, "{name}");
        for (attempt, received) in seen.iter().enumerate() {
            assert_eq!(
                received.path,
                "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"
            );
            let file = dir.join(format!("{name}-{attempt}.json"));
            let (same, printed) =
                botocore_signs_the_same(&python, &file, received, SECRET_KEY, token);
            assert!(same, "{name}, attempt {attempt}: {printed}");
            let authorization = received.header("authorization").unwrap();
            assert!(authorization.contains(";x-gateway-tag,"), "{authorization}");
            assert!(
                printed.starts_with("ok   AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"),
                "{printed}"
            );
            // The check can fail: botocore, given another secret, signs differently.
            let (same, printed) =
                botocore_signs_the_same(&python, &file, received, "another-secret", token);
            assert!(!same && printed.contains("signatures differ"), "{printed}");
        }
        if let [first, retry] = seen.as_slice() {
            assert_ne!(
                first.header("x-amz-date"),
                retry.header("x-amz-date"),
                "the retry is signed at its own time"
            );
        }
    }
    std::fs::remove_dir_all(dir).ok();
}

// -------------------------------------------------------------------------------------------
// tool-core's renderings, for all six APIs.

fn results() -> Vec<CallResult> {
    let call = |id: &str, location: &str| {
        ToolCall::new(id, "get_weather", json!({ "location": location }))
    };
    vec![
        CallResult {
            call: call("call_1", "Paris"),
            result: Ok(ToolOutput::json(json!({ "summary": "sunny" }))),
        },
        CallResult {
            call: call("call_2", "Oslo"),
            result: Ok(ToolOutput {
                content: [vec![Content::text("the radar image")], attachments()].concat(),
                ..ToolOutput::default()
            }),
        },
        CallResult {
            call: call("call_3", "Lima"),
            result: Ok(ToolOutput::error("no station in Lima")),
        },
        CallResult {
            call: call("call_4", ""),
            result: Err(ToolError::UnknownTool {
                name: "get_wether".into(),
                suggestions: vec!["get_weather".into()],
            }),
        },
    ]
}

#[test]
fn tool_core_renderings_match_the_sdk_types() {
    let Some(python) = sdk_tools("tool_core_renderings_match_the_sdk_types") else {
        return;
    };
    let dir = temp_dir("tool-core");
    let specs = [weather_spec()];
    let mut bodies = Vec::new();
    for (folder, format) in [
        ("openai-chat", Format::OpenAiChat),
        ("openai-responses", Format::OpenAiResponses),
        ("anthropic", Format::Anthropic),
        ("gemini", Format::Gemini),
        ("bedrock", Format::Bedrock),
        ("mcp", Format::Mcp),
    ] {
        let mut aliases = None;
        for strict in [false, true] {
            let options = DeclareOptions {
                strict,
                ..DeclareOptions::default()
            };
            let declarations = declare(&specs, format, &options);
            let name = format!("{folder}-tools-strict-{strict}");
            bodies.push((format!("{folder}.tools"), name, declarations.tools));
            aliases = Some(declarations.aliases);
        }
        let rendered = render_results(format, &results(), &aliases.unwrap());
        bodies.push((
            format!("{folder}.results"),
            format!("{folder}-results"),
            rendered,
        ));
    }
    assert_valid(&python, &dir, &bodies);
    std::fs::remove_dir_all(dir).ok();
}

// -------------------------------------------------------------------------------------------
// The checker can fail.

/// A golden file with one change that the SDK's types refuse: the kind to check it as, the
/// file, the change, and what the report must name.
struct Refused {
    kind: &'static str,
    file: &'static str,
    change: fn(&mut Value),
    named: &'static str,
}

#[test]
fn the_checker_refuses_what_the_sdk_types_refuse() {
    let Some(python) = sdk_tools("the_checker_refuses_what_the_sdk_types_refuse") else {
        return;
    };
    let cases = [
        // A misspelt key of a tool message (OpenAI's TypedDicts, checked strictly).
        Refused {
            kind: "openai-chat.request",
            file: "tool-providers/tests/golden/openai-chat/request-2.json",
            change: |b| {
                let message = b["messages"][3].as_object_mut().unwrap();
                let id = message.remove("tool_call_id").unwrap();
                message.insert("toolCallId".into(), id);
            },
            named: "/messages/3",
        },
        // A required key missing from a Responses item.
        Refused {
            kind: "openai-responses.request",
            file: "tool-providers/tests/golden/openai-responses/request-2.json",
            change: |b| {
                let last = b["input"].as_array_mut().unwrap().last_mut().unwrap();
                last.as_object_mut().unwrap().remove("output");
            },
            named: "output",
        },
        // A value of the wrong type in an Anthropic block.
        Refused {
            kind: "anthropic.request",
            file: "tool-providers/tests/golden/anthropic/request-2.json",
            change: |b| {
                let last = b["messages"].as_array_mut().unwrap().last_mut().unwrap();
                last["content"][0]["is_error"] = json!("no");
            },
            named: "is_error",
        },
        // A parameter the Messages API does not have.
        Refused {
            kind: "anthropic.request",
            file: "tool-providers/tests/golden/anthropic/request-1.json",
            change: |b| b["temperature"] = json!(0.0),
            named: "/temperature",
        },
        // An unknown field of a Gemini part (google-genai's models forbid them).
        Refused {
            kind: "gemini.request",
            file: "tool-providers/tests/golden/gemini/request-2.json",
            change: |b| b["contents"][2]["parts"][0]["functionResponse"]["call_id"] = json!("x"),
            named: "call_id",
        },
        // An unknown member of a Bedrock tool result (botocore's validator).
        Refused {
            kind: "bedrock.results",
            file: "tests/golden/bedrock/results.json",
            change: |b| b["content"][0]["toolResult"]["toolUseID"] = json!("x"),
            named: "toolUseID",
        },
        // A value outside a Bedrock enum (botocore's validator checks none: the service
        // model's walk does).
        Refused {
            kind: "bedrock.results",
            file: "tests/golden/bedrock/results.json",
            change: |b| b["content"][1]["toolResult"]["status"] = json!("failed"),
            named: "status",
        },
        // A field name where MCP's wire has its camelCase alias (the MCP SDK's models would
        // take both).
        Refused {
            kind: "mcp.results",
            file: "tests/golden/mcp/results.json",
            change: |b| {
                let result = b[0].as_object_mut().unwrap();
                let flag = result.remove("isError").unwrap();
                result.insert("is_error".into(), flag);
            },
            named: "is_error",
        },
        // A response the SDK's model refuses: the role of a message the model wrote.
        Refused {
            kind: "anthropic.response",
            file: "tool-providers/tests/golden/anthropic/response-1.json",
            change: |b| b["role"] = json!("user"),
            named: "role",
        },
        // A response without what the SDK's model requires.
        Refused {
            kind: "openai-chat.response",
            file: "tool-providers/tests/golden/openai-chat/response-1.json",
            change: |b| {
                b.as_object_mut().unwrap().remove("choices");
            },
            named: "choices",
        },
    ];
    let dir = temp_dir("refused");
    let mut args = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let text = std::fs::read_to_string(workspace().join(case.file)).unwrap();
        let mut body: Value = serde_json::from_str(&text).unwrap();
        (case.change)(&mut body);
        let path = dir.join(format!("changed-{i}.json"));
        std::fs::write(&path, body.to_string()).unwrap();
        args.push(format!("{}={}", case.kind, path.display()));
    }
    let (passed, printed) = run_checker(&python, &args);
    assert!(!passed, "{printed}");
    for (i, case) in cases.iter().enumerate() {
        let line = printed
            .lines()
            .find(|l| l.contains(&format!("changed-{i}.json")))
            .unwrap_or_else(|| panic!("changed-{i}.json is not in the report:\n{printed}"));
        assert!(
            line.starts_with("FAIL") && line.contains(case.named),
            "{} changed in {} was not refused naming {}: {line}",
            case.kind,
            case.file,
            case.named
        );
    }
    std::fs::remove_dir_all(dir).ok();
}
