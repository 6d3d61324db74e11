//! The five HTTP clients' wire formats, checked against golden files: for one fixed two-step
//! conversation (instructions, a user message, one tool, the model's call of it, the tool's
//! result, the answer), the exact request bodies each client sends, streamed and not, compared
//! as JSON with `tests/golden/<api>/request-*.json` and `stream-request-*.json`. The mock server
//! answers with the documented response shapes kept beside them (`response-*.json`,
//! `stream-*.sse`). The request files are expect-test files: `UPDATE_EXPECT=1` rewrites those
//! that differ; review the diff.
//!
//! The API key never appears in a golden file, in the client's `Debug`, or in an error.

use std::path::{Path, PathBuf};

use futures_util::StreamExt;
use serde_json::{json, Value};
use tool_agent::{Agent, ChatModel, RunEvent, RunOptions, RunResult};
use tool_core::ToolOutput;
use tool_providers::{
    AnthropicModel, ApiKey, BedrockModel, GeminiModel, OpenAiChatModel, OpenAiResponsesModel,
};
use tool_runtime::{DynamicTool, Executor};
use tool_test_support::event_stream;
use tool_test_support::mock::{serve, Canned};
use tool_test_support::*;

const INSTRUCTIONS: &str = "You are a weather assistant. Answer in one sentence.";
const QUESTION: &str = "What is the weather in Paris?";
const TOOL_RESULT: &str = "18°C and sunny";
const ANSWER: &str = "It is 18°C and sunny in Paris.";
/// A key that must show up in the request's header and nowhere else.
const KEY: &str = "sk-golden-7f3a9c2e-never-logged";

/// The one tool of the conversation.
fn weather() -> Executor {
    let schema = json!({
        "type": "object",
        "properties": {
            "location": { "type": "string", "description": "City and country, e.g. Bogotá, Colombia" }
        },
        "required": ["location"],
        "additionalProperties": false
    });
    let tool = DynamicTool::new(
        "get_weather",
        "Get the current weather for a location.",
        schema,
        |args, _| async move {
            match args["location"].as_str() {
                Some("Paris, France") => Ok(ToolOutput::text(TOOL_RESULT)),
                other => Ok(ToolOutput::error(format!("unexpected location {other:?}"))),
            }
        },
    );
    executor([tool])
}

/// One API: its folder under `tests/golden/`, its request paths and its key header.
struct Api {
    folder: &'static str,
    path: &'static str,
    stream_path: &'static str,
    key_header: &'static str,
    key_value: String,
    /// Where a request asks for one call per answer, and what it says there; `None` for an
    /// API that cannot be asked.
    one_call: Option<(&'static str, Value)>,
    /// Whether answers stream as an AWS event stream (`stream-*.jsonl`, encoded), rather than
    /// server-sent events (`stream-*.sse`).
    aws_stream: bool,
}

fn golden(folder: &str, file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(folder)
        .join(file)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn canned_json(folder: &str, file: &str) -> Canned {
    let body = serde_json::from_str(&read(&golden(folder, file))).expect("a response file is JSON");
    Canned::Answer(200, Vec::new(), body)
}

/// The `n`th streamed answer of the API.
fn canned_stream(api: &Api, n: usize) -> Canned {
    if api.aws_stream {
        let lines = read(&golden(api.folder, &format!("stream-{n}.jsonl")));
        Canned::Bytes(
            event_stream::CONTENT_TYPE,
            event_stream::encode_lines(&lines),
        )
    } else {
        Canned::Events(read(&golden(api.folder, &format!("stream-{n}.sse"))))
    }
}

/// Compares `sent` with the golden file, as JSON (key order does not count). When they differ,
/// each differing field is printed by its pointer, and expect-test takes over: it fails showing
/// the text's diff, or, with `UPDATE_EXPECT=1`, rewrites the file.
fn assert_golden(path: &Path, sent: &Value) {
    let golden: Option<Value> = std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok());
    if golden.as_ref() == Some(sent) {
        return;
    }
    match &golden {
        Some(golden) => eprintln!(
            "the request sent differs from {}:\n{}",
            path.display(),
            differences(golden, sent).join("\n")
        ),
        None => eprintln!("{} is missing or not JSON", path.display()),
    }
    let pretty = serde_json::to_string_pretty(sent).expect("a JSON value prints") + "\n";
    expect_test::expect_file![path].assert_eq(&pretty);
}

/// Where two JSON values differ, as JSON pointers with both sides; empty when they are equal
/// (object keys in any order).
fn differences(expected: &Value, sent: &Value) -> Vec<String> {
    let mut out = Vec::new();
    differ("", expected, sent, &mut out);
    out
}

fn differ(at: &str, expected: &Value, sent: &Value, out: &mut Vec<String>) {
    let pointer = |key: &str| format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
    match (expected, sent) {
        (Value::Object(e), Value::Object(s)) => {
            for (key, value) in e {
                match s.get(key) {
                    Some(other) => differ(&pointer(key), value, other, out),
                    None => out.push(format!("{}: missing (golden: {value})", pointer(key))),
                }
            }
            for (key, value) in s.iter().filter(|(key, _)| !e.contains_key(*key)) {
                out.push(format!(
                    "{}: not in the golden file (sent: {value})",
                    pointer(key)
                ));
            }
        }
        (Value::Array(e), Value::Array(s)) if e.len() == s.len() => {
            for (i, (value, other)) in e.iter().zip(s).enumerate() {
                differ(&pointer(&i.to_string()), value, other, out);
            }
        }
        _ if expected == sent => {}
        _ => out.push(format!(
            "{}: golden {expected}, sent {sent}",
            if at.is_empty() { "/" } else { at }
        )),
    }
}

/// The conversation's result is the expected one: the tool ran and the answer came back.
fn assert_conversation(result: &RunResult) {
    assert_eq!(result.text, ANSWER);
    let tools = tool_messages(&result.transcript);
    assert_eq!(tools.len(), 1, "{tools:?}");
    assert_eq!((tools[0].1.as_str(), tools[0].2), (TOOL_RESULT, false));
}

/// The whole check for one API: both conversations against the golden files, and the key
/// kept out of files, `Debug` and errors.
async fn check<M, F>(api: Api, model: F)
where
    M: ChatModel + std::fmt::Debug + 'static,
    F: Fn(&str) -> M,
{
    let folder = api.folder;
    let agent = |base_url: &str| {
        Agent::builder(model(base_url))
            .executor(weather())
            .instructions(INSTRUCTIONS)
            .build()
    };

    let (mock, base_url) = serve(vec![
        canned_json(folder, "response-1.json"),
        canned_json(folder, "response-2.json"),
    ])
    .await;
    let result = agent(&base_url).run(QUESTION, &RunOptions::default()).await;
    assert_conversation(&result.expect("the conversation runs"));
    {
        let seen = mock.seen.lock().unwrap();
        assert_eq!(seen.len(), 2, "two requests");
        for (i, request) in seen.iter().enumerate() {
            assert_eq!(request.path, format!("/v1{}", api.path));
            assert_eq!(request.header(api.key_header), Some(api.key_value.clone()));
            assert_golden(
                &golden(folder, &format!("request-{}.json", i + 1)),
                &request.body,
            );
        }
    }

    let (mock, base_url) = serve(vec![canned_stream(&api, 1), canned_stream(&api, 2)]).await;
    let options = RunOptions::default();
    let runner = agent(&base_url);
    let events: Vec<RunEvent> = runner.run_stream(QUESTION, &options).collect().await;
    let Some(RunEvent::Finished(result)) = events.into_iter().last() else {
        panic!("a streamed run ends with Finished");
    };
    assert_conversation(&result.expect("the streamed conversation runs"));
    {
        let seen = mock.seen.lock().unwrap();
        assert_eq!(seen.len(), 2, "two streamed requests");
        for (i, request) in seen.iter().enumerate() {
            assert_eq!(request.path, format!("/v1{}", api.stream_path));
            let file = format!("stream-request-{}.json", i + 1);
            assert_golden(&golden(folder, &file), &request.body);
        }
    }

    // The key: nowhere in the folder, nor in the client's Debug, nor in an error.
    for entry in std::fs::read_dir(golden(folder, "")).expect("the golden folder") {
        let path = entry.expect("a golden file").path();
        assert!(
            !read(&path).contains(KEY),
            "{} holds the key",
            path.display()
        );
    }
    let client = model("http://127.0.0.1:9/v1");
    let shown = format!("{client:?}");
    assert!(!shown.contains(KEY), "Debug shows the key: {shown}");
    let refused = json!({ "error": { "message": "Incorrect API key provided.", "type": "invalid_request_error", "code": "invalid_api_key" } });
    let (_mock, base_url) = serve(vec![Canned::Answer(401, Vec::new(), refused)]).await;
    let error = agent(&base_url)
        .run(QUESTION, &RunOptions::default())
        .await
        .expect_err("a 401 ends the run");
    let shown = format!("{error} {error:?}");
    assert!(shown.contains("401"), "the error names the status: {shown}");
    assert!(!shown.contains(KEY), "the error shows the key: {shown}");

    // One call per answer: the first request, plus the API's own field for it.
    let (mock, base_url) = serve(vec![canned_json(folder, "response-2.json")]).await;
    let options = RunOptions::default().parallel_tool_calls(false);
    let result = agent(&base_url).run(QUESTION, &options).await;
    assert_eq!(result.expect("the run answers").text, ANSWER);
    let mut body = mock.seen.lock().unwrap()[0].body.clone();
    if let Some((pointer, value)) = &api.one_call {
        assert_eq!(body.pointer(pointer), Some(value), "{pointer} in {body}");
        let (parent, field) = pointer.rsplit_once('/').expect("a pointer");
        let parent = body.pointer_mut(parent).and_then(Value::as_object_mut);
        parent.expect("an object").remove(field);
    }
    assert_golden(&golden(folder, "request-1.json"), &body);
}

fn bearer() -> String {
    format!("Bearer {KEY}")
}

#[tokio::test]
async fn openai_chat_completions_sends_the_golden_requests() {
    let api = Api {
        folder: "openai-chat",
        path: "/chat/completions",
        stream_path: "/chat/completions",
        key_header: "authorization",
        key_value: bearer(),
        one_call: Some(("/parallel_tool_calls", json!(false))),
        aws_stream: false,
    };
    check(api, |base_url| {
        OpenAiChatModel::new("gpt-4.1")
            .with_base_url(base_url)
            .with_api_key(ApiKey::new(KEY))
    })
    .await;
}

#[tokio::test]
async fn openai_responses_sends_the_golden_requests() {
    let api = Api {
        folder: "openai-responses",
        path: "/responses",
        stream_path: "/responses",
        key_header: "authorization",
        key_value: bearer(),
        one_call: Some(("/parallel_tool_calls", json!(false))),
        aws_stream: false,
    };
    check(api, |base_url| {
        OpenAiResponsesModel::new("gpt-5-mini")
            .with_base_url(base_url)
            .with_api_key(ApiKey::new(KEY))
            .with_encrypted_reasoning()
    })
    .await;
}

#[tokio::test]
async fn anthropic_messages_sends_the_golden_requests() {
    let api = Api {
        folder: "anthropic",
        path: "/messages",
        stream_path: "/messages",
        key_header: "x-api-key",
        key_value: KEY.to_owned(),
        one_call: Some(("/tool_choice/disable_parallel_tool_use", json!(true))),
        aws_stream: false,
    };
    check(api, |base_url| {
        AnthropicModel::new("claude-sonnet-4-5")
            .with_base_url(base_url)
            .with_api_key(ApiKey::new(KEY))
    })
    .await;
}

#[tokio::test]
async fn gemini_generate_content_sends_the_golden_requests() {
    let api = Api {
        folder: "gemini",
        path: "/models/gemini-2.5-flash:generateContent",
        stream_path: "/models/gemini-2.5-flash:streamGenerateContent",
        key_header: "x-goog-api-key",
        key_value: KEY.to_owned(),
        one_call: None,
        aws_stream: false,
    };
    check(api, |base_url| {
        GeminiModel::new("gemini-2.5-flash")
            .with_base_url(base_url)
            .with_api_key(ApiKey::new(KEY))
    })
    .await;
}

#[tokio::test]
async fn bedrock_converse_sends_the_golden_requests() {
    // An inference profile id: its `:` is percent-encoded in the path.
    let api = Api {
        folder: "bedrock",
        path: "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse",
        stream_path: "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream",
        key_header: "authorization",
        key_value: bearer(),
        one_call: None,
        aws_stream: true,
    };
    check(api, |base_url| {
        BedrockModel::new("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
            .with_base_url(base_url)
            .with_api_key(ApiKey::new(KEY))
    })
    .await;
}

#[test]
fn differences_name_each_changed_missing_and_extra_field_by_pointer() {
    let golden = json!({ "model": "m", "tools": [{ "name": "a/b" }], "stream": true });
    let sent = json!({ "tools": [{ "name": "c" }], "model": "m", "extra": 1 });
    assert_eq!(
        differences(&golden, &sent),
        [
            "/tools/0/name: golden \"a/b\", sent \"c\"",
            "/stream: missing (golden: true)",
            "/extra: not in the golden file (sent: 1)",
        ]
    );
    assert!(differences(&sent, &sent).is_empty());
}
