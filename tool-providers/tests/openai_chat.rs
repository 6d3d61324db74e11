//! The OpenAI Chat Completions client against a mock server on 127.0.0.1 speaking the wire
//! format: a whole run, retries of 429 and 5xx, typed errors, cancellation.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{json, Value};
use tool_agent::{Agent, ModelError, RunEvent, RunFailure, RunOptions, StopReason};
use tool_providers::{ApiKey, OpenAiChatModel, RetryPolicy};
use tool_runtime::CancellationToken;
use tool_test_support::mock::{serve, Canned};
use tool_test_support::*;

fn ok(body: Value) -> Canned {
    Canned::Answer(200, Vec::new(), body)
}

fn completion(message: Value, usage: Value) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "test-model",
        "choices": [{ "index": 0, "message": message, "finish_reason": "stop" }],
        "usage": usage
    })
}

fn fast_retries(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(20),
    }
}

fn model(base_url: &str) -> OpenAiChatModel {
    OpenAiChatModel::new("test-model")
        .with_base_url(base_url)
        .with_api_key(ApiKey::new("sk-test"))
        .with_retry(fast_retries(2))
}

#[tokio::test]
async fn a_whole_run_over_http_declares_tools_sends_results_and_sums_usage() {
    let (mock, base_url) = serve(vec![
        ok(completion(
            json!({ "role": "assistant", "content": null, "tool_calls": [
                { "id": "call_1", "type": "function", "function": { "name": "add", "arguments": "{\"a\": 2, \"b\": 40}" } }
            ]}),
            json!({ "prompt_tokens": 60, "completion_tokens": 10, "prompt_tokens_details": { "cached_tokens": 12 } }),
        )),
        ok(completion(
            json!({ "role": "assistant", "content": "2 + 40 = 42" }),
            json!({ "prompt_tokens": 80, "completion_tokens": 8 }),
        )),
    ])
    .await;
    let runner = Agent::builder(model(&base_url))
        .executor(executor([add(Arc::default())]))
        .instructions("You add numbers.")
        .build();
    let result = runner
        .run("What is 2 + 40?", &RunOptions::default())
        .await
        .unwrap();

    assert_eq!(result.text, "2 + 40 = 42");
    assert_eq!(result.stop, StopReason::Finished);
    assert_eq!(result.usage.input_tokens, 140);
    assert_eq!(result.usage.output_tokens, 18);
    assert_eq!(result.usage.cached_input_tokens, 12);
    assert_eq!(result.usage.requests, 2);

    let seen = mock.seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    let first = &seen[0].body;
    assert_eq!(seen[0].path, "/v1/chat/completions");
    assert_eq!(
        seen[0].header("authorization").as_deref(),
        Some("Bearer sk-test")
    );
    assert_eq!(first["model"], "test-model");
    assert_eq!(first["tool_choice"], "auto");
    assert_eq!(first["tools"][0]["type"], "function");
    assert_eq!(first["tools"][0]["function"]["name"], "add");
    assert_eq!(
        first["messages"],
        json!([
            { "role": "system", "content": "You add numbers." },
            { "role": "user", "content": "What is 2 + 40?" }
        ])
    );
    let second = &seen[1].body;
    assert_eq!(
        second["messages"][2],
        json!({ "role": "assistant", "content": null, "tool_calls": [
            { "id": "call_1", "type": "function", "function": { "name": "add", "arguments": "{\"a\":2,\"b\":40}" } }
        ]})
    );
    assert_eq!(
        second["messages"][3],
        json!({ "role": "tool", "tool_call_id": "call_1", "content": "42" })
    );
}

#[tokio::test]
async fn a_429_is_retried_after_the_time_the_server_asks() {
    let limited = Canned::Answer(
        429,
        vec![("retry-after-ms", "5".to_owned())],
        json!({ "error": { "message": "Rate limit reached", "type": "requests" } }),
    );
    let (mock, base_url) = serve(vec![
        limited,
        ok(completion(
            json!({ "role": "assistant", "content": "hi" }),
            json!({}),
        )),
    ])
    .await;
    let runner = Agent::builder(model(&base_url)).build();
    let result = runner.run("hello", &RunOptions::default()).await.unwrap();
    assert_eq!(result.text, "hi");
    assert_eq!(mock.seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn server_errors_past_the_retries_are_a_typed_error_with_the_providers_message() {
    let failing = || {
        Canned::Answer(
            503,
            Vec::new(),
            json!({ "error": { "message": "The engine is currently overloaded", "type": "server_error" } }),
        )
    };
    let (mock, base_url) = serve(vec![failing(), failing(), failing(), failing()]).await;
    let runner = Agent::builder(model(&base_url)).build();
    let err = runner
        .run("hello", &RunOptions::default())
        .await
        .unwrap_err();
    match &err.failure {
        RunFailure::Model {
            step: 0,
            error:
                ModelError::Status {
                    status: 503,
                    message,
                    attempts: 3,
                    ..
                },
        } => assert_eq!(message, "The engine is currently overloaded"),
        other => panic!("unexpected: {other:?}"),
    }
    assert_eq!(
        mock.seen.lock().unwrap().len(),
        3,
        "one try and two retries"
    );
}

#[tokio::test]
async fn a_client_error_is_not_retried() {
    let refused = Canned::Answer(
        401,
        Vec::new(),
        json!({ "error": { "message": "Incorrect API key provided: sk-test", "type": "invalid_request_error" } }),
    );
    let (mock, base_url) = serve(vec![refused]).await;
    let runner = Agent::builder(model(&base_url)).build();
    let err = runner
        .run("hello", &RunOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err.failure,
            RunFailure::Model {
                error: ModelError::Status {
                    status: 401,
                    attempts: 1,
                    ..
                },
                ..
            }
        ),
        "{:?}",
        err.failure
    );
    assert_eq!(mock.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_server_that_is_not_there_is_a_transport_error_after_the_retries() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let runner = Agent::builder(model(&format!("http://{address}/v1"))).build();
    let err = runner
        .run("hello", &RunOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err.failure,
            RunFailure::Model {
                error: ModelError::Transport { attempts: 3, .. },
                ..
            }
        ),
        "{:?}",
        err.failure
    );
}

/// An answer that came whole but is not JSON is not asked for again: another would be
/// generated, and billed, to fail the same way. Its error quotes its start, not all of it.
#[tokio::test]
async fn an_answer_that_is_not_json_is_malformed_and_not_asked_again() {
    let page = format!("<html>{}</html>", "proxy error ".repeat(10_000)).into_bytes();
    let (mock, base_url) = serve(vec![
        Canned::Bytes("text/html", page),
        ok(completion(
            json!({ "role": "assistant", "content": "hi" }),
            json!({}),
        )),
    ])
    .await;
    let err = Agent::builder(model(&base_url))
        .build()
        .run("hello", &RunOptions::default())
        .await
        .unwrap_err();
    match &err.failure {
        RunFailure::Model {
            error: ModelError::Malformed { message, .. },
            ..
        } => {
            assert!(message.contains("is not JSON"), "{message}");
            assert!(message.len() < 1_000, "{} bytes", message.len());
        }
        other => panic!("expected a malformed answer, got {other:?}"),
    }
    assert_eq!(mock.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn an_answer_over_16_mib_is_refused_naming_the_limit() {
    let huge = json!({ "padding": "x".repeat(17 << 20) });
    let (mock, base_url) = serve(vec![ok(huge.clone()), ok(huge)]).await;
    let model = model(&base_url).with_retry(fast_retries(1));
    let err = Agent::builder(model)
        .build()
        .run("hello", &RunOptions::default())
        .await
        .unwrap_err();
    match &err.failure {
        RunFailure::Model {
            error: ModelError::Transport { message, .. },
            ..
        } => assert!(message.contains("larger than 16777216 bytes"), "{message}"),
        other => panic!("expected a transport error, got {other:?}"),
    }
    assert_eq!(mock.seen.lock().unwrap().len(), 1, "not asked for again");
}

#[tokio::test]
async fn cancelling_the_run_ends_the_http_request() {
    let (mock, base_url) = serve(vec![Canned::Hang]).await;
    let runner = Agent::builder(model(&base_url)).build();
    let token = CancellationToken::new();
    let options = RunOptions::default().cancellation(token.clone());
    let run = tokio::spawn(async move { runner.run("hello", &options).await });
    mock.arrived.notified().await;
    token.cancel();
    let err = run.await.unwrap().unwrap_err();
    assert!(matches!(err.failure, RunFailure::Cancelled), "{err}");
}

#[tokio::test]
async fn without_a_key_no_authorization_header_is_sent() {
    let (mock, base_url) = serve(vec![ok(completion(
        json!({ "role": "assistant", "content": "hi" }),
        json!({}),
    ))])
    .await;
    let model = OpenAiChatModel::new("local")
        .with_base_url(&format!("{base_url}/"))
        .without_api_key();
    let runner = Agent::builder(model).build();
    runner.run("hello", &RunOptions::default()).await.unwrap();
    let seen = mock.seen.lock().unwrap();
    assert_eq!(seen[0].header("authorization"), None);
    assert!(
        seen[0].body.get("tools").is_none(),
        "no tools, no tools field"
    );
}

/// Server-sent events of these chunks, then `[DONE]`.
fn events(chunks: &[Value]) -> Canned {
    let mut text: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    text.push_str("data: [DONE]\n\n");
    Canned::Events(text)
}

fn delta(delta: Value) -> Value {
    json!({ "object": "chat.completion.chunk", "choices": [{ "index": 0, "delta": delta, "finish_reason": null }] })
}

#[tokio::test]
async fn a_streamed_run_assembles_interleaved_call_deltas_and_reads_usage() {
    let first = events(&[
        delta(json!({ "role": "assistant", "content": "Adding" })),
        delta(json!({ "content": " now." })),
        delta(
            json!({ "tool_calls": [{ "index": 0, "id": "call_a", "type": "function", "function": { "name": "add", "arguments": "" } }] }),
        ),
        delta(
            json!({ "tool_calls": [{ "index": 1, "id": "call_b", "type": "function", "function": { "name": "add", "arguments": "{\"a\": 5," } }] }),
        ),
        delta(
            json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "{\"a\": 1, " } }] }),
        ),
        delta(json!({ "tool_calls": [{ "index": 1, "function": { "arguments": " \"b\": 5}" } }] })),
        delta(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "\"b\": 2}" } }] })),
        json!({ "object": "chat.completion.chunk", "choices": [{ "index": 0, "delta": {}, "finish_reason": "tool_calls" }] }),
        json!({ "object": "chat.completion.chunk", "choices": [], "usage": { "prompt_tokens": 30, "completion_tokens": 9 } }),
    ]);
    let second = events(&[
        delta(json!({ "content": "3 and " })),
        delta(json!({ "content": "10." })),
        json!({ "object": "chat.completion.chunk", "choices": [], "usage": { "prompt_tokens": 50, "completion_tokens": 4 } }),
    ]);
    let (mock, base_url) = serve(vec![first, second]).await;
    let runner = Agent::builder(model(&base_url))
        .executor(executor([add(Arc::default())]))
        .build();
    let options = RunOptions::default();
    let events: Vec<RunEvent> = runner.run_stream("add", &options).collect().await;

    let mut deltas = Vec::new();
    let mut call_deltas = Vec::new();
    let mut started = Vec::new();
    let mut results = Vec::new();
    let mut finished = None;
    for event in events {
        match event {
            RunEvent::TextDelta { text, .. } => deltas.push(text),
            RunEvent::ToolCallDelta { step, delta } => {
                // Every piece of the step's calls comes before the first is started.
                assert!(started.is_empty(), "{delta:?} after a call started");
                call_deltas.push((step, delta.index, delta.id, delta.name, delta.arguments))
            }
            RunEvent::ToolCallStarted { call, .. } => started.push(call),
            RunEvent::ToolResult { record, .. } => {
                results.push(record.result.map(|o| o.to_text()).unwrap_or_default())
            }
            RunEvent::Finished(result) => finished = Some(*result),
            _ => {}
        }
    }
    assert_eq!(deltas, ["Adding", " now.", "3 and ", "10."]);
    let said = |s: &str| Some(s.to_owned());
    assert_eq!(
        call_deltas,
        [
            (0, 0, said("call_a"), said("add"), String::new()),
            (0, 1, said("call_b"), said("add"), "{\"a\": 5,".into()),
            (0, 0, None, None, "{\"a\": 1, ".into()),
            (0, 1, None, None, " \"b\": 5}".into()),
            (0, 0, None, None, "\"b\": 2}".into()),
        ]
    );
    assert_eq!(
        started,
        [
            tool_core::ToolCall::new("call_a", "add", json!({ "a": 1, "b": 2 })),
            tool_core::ToolCall::new("call_b", "add", json!({ "a": 5, "b": 5 })),
        ]
    );
    assert_eq!(results, ["3", "10"]);
    let result = finished.expect("the last event").unwrap();
    assert_eq!(result.text, "3 and 10.");
    assert_eq!(result.usage.input_tokens, 80);
    assert_eq!(result.usage.output_tokens, 13);
    let seen = mock.seen.lock().unwrap();
    assert_eq!(seen[0].body["stream"], true);
    assert_eq!(
        seen[0].body["stream_options"],
        json!({ "include_usage": true })
    );
}

#[tokio::test]
async fn a_stream_that_breaks_off_is_a_typed_error() {
    let broken = Canned::Events("data: {\"choices\": [{\"delta\": {\"content\": \"Hel".to_owned());
    let (_mock, base_url) = serve(vec![broken]).await;
    let runner = Agent::builder(model(&base_url)).build();
    let options = RunOptions::default();
    let events: Vec<RunEvent> = runner.run_stream("hi", &options).collect().await;
    let Some(RunEvent::Finished(result)) = events.into_iter().last() else {
        panic!("the last event is Finished");
    };
    let err = result.unwrap_err();
    assert!(
        matches!(
            &err.failure,
            RunFailure::Model {
                error: ModelError::Malformed { .. },
                ..
            }
        ),
        "{:?}",
        err.failure
    );
}
