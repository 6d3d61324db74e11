//! The OpenAI Responses, Anthropic Messages, Gemini and Bedrock clients against the mock server:
//! whole runs, headers, errors.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::json;
use tool_agent::{
    Agent, ChatModel, Message, ModelError, ModelRequest, RunEvent, RunFailure, RunOptions,
};
use tool_providers::{AnthropicModel, ApiKey, BedrockModel, RetryPolicy};
use tool_test_support::mock::{serve, Canned};
use tool_test_support::*;

fn model(base_url: &str) -> AnthropicModel {
    AnthropicModel::new("claude-test")
        .with_base_url(base_url)
        .with_api_key(ApiKey::new("sk-ant-test"))
        .with_retry(RetryPolicy {
            max_retries: 1,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(10),
        })
}

#[tokio::test]
async fn a_whole_run_over_http_with_tool_use_and_tool_result_blocks() {
    let (mock, base_url) = serve(vec![
        Canned::Answer(200, Vec::new(), json!({
            "id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "tool_use",
            "content": [{ "type": "tool_use", "id": "toolu_1", "name": "add", "input": { "a": 2, "b": 40 } }],
            "usage": { "input_tokens": 30, "output_tokens": 10 }
        })),
        Canned::Answer(200, Vec::new(), json!({
            "id": "msg_2", "type": "message", "role": "assistant", "stop_reason": "end_turn",
            "content": [{ "type": "text", "text": "42." }],
            "usage": { "input_tokens": 50, "output_tokens": 2 }
        })),
    ])
    .await;
    let runner = Agent::builder(model(&base_url))
        .executor(executor([add(Arc::default())]))
        .instructions("Add.")
        .build();
    let result = runner.run("2 + 40?", &RunOptions::default()).await.unwrap();
    assert_eq!(result.text, "42.");
    assert_eq!(result.usage.input_tokens, 80);

    let seen = mock.seen.lock().unwrap();
    assert_eq!(seen[0].path, "/v1/messages");
    assert_eq!(seen[0].header("x-api-key").as_deref(), Some("sk-ant-test"));
    assert_eq!(
        seen[0].header("anthropic-version").as_deref(),
        Some("2023-06-01")
    );
    assert_eq!(seen[0].header("authorization"), None);
    let first = &seen[0].body;
    assert_eq!(first["system"], "Add.");
    assert_eq!(first["max_tokens"], 4096);
    assert_eq!(first["tools"][0]["name"], "add");
    assert!(first["tools"][0].get("input_schema").is_some());
    assert_eq!(first["tool_choice"], json!({ "type": "auto" }));
    assert_eq!(
        seen[1].body["messages"][2],
        json!({ "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": "toolu_1", "content": "42" }
        ]})
    );
}

#[tokio::test]
async fn an_overloaded_error_is_retried_then_typed_with_anthropics_message() {
    let overloaded = || {
        Canned::Answer(
            529,
            Vec::new(),
            json!({ "type": "error", "error": { "type": "overloaded_error", "message": "Overloaded" } }),
        )
    };
    let (mock, base_url) = serve(vec![overloaded(), overloaded()]).await;
    let runner = Agent::builder(model(&base_url)).build();
    let err = runner.run("hi", &RunOptions::default()).await.unwrap_err();
    assert!(
        matches!(&err.failure, RunFailure::Model { error: ModelError::Status { status: 529, message, attempts: 2, .. }, .. } if message == "Overloaded"),
        "{:?}",
        err.failure
    );
    assert_eq!(mock.seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn gemini_over_http_sends_the_key_in_a_header_and_function_responses_back() {
    let (mock, base_url) = serve(vec![
        Canned::Answer(200, Vec::new(), json!({
            "candidates": [{ "finishReason": "STOP", "content": { "role": "model", "parts": [
                { "functionCall": { "name": "add", "args": { "a": 1, "b": 1 } } }
            ]}}],
            "usageMetadata": { "promptTokenCount": 10, "candidatesTokenCount": 3 }
        })),
        Canned::Answer(200, Vec::new(), json!({
            "candidates": [{ "finishReason": "STOP", "content": { "role": "model", "parts": [{ "text": "2" }] } }],
            "usageMetadata": { "promptTokenCount": 20, "candidatesTokenCount": 1 }
        })),
    ])
    .await;
    let model = tool_providers::GeminiModel::new("gemini-test")
        .with_base_url(&base_url)
        .with_api_key(ApiKey::new("AIza-test"));
    let runner = Agent::builder(model)
        .executor(executor([add(Arc::default())]))
        .build();
    let result = runner.run("1 + 1?", &RunOptions::default()).await.unwrap();
    assert_eq!(result.text, "2");
    assert_eq!(result.usage.input_tokens, 30);
    let seen = mock.seen.lock().unwrap();
    assert_eq!(seen[0].path, "/v1/models/gemini-test:generateContent");
    assert_eq!(
        seen[0].header("x-goog-api-key").as_deref(),
        Some("AIza-test")
    );
    assert_eq!(
        seen[0].body["toolConfig"],
        json!({ "functionCallingConfig": { "mode": "AUTO" } })
    );
    assert_eq!(
        seen[1].body["contents"][2],
        json!({ "role": "user", "parts": [
            { "functionResponse": { "name": "add", "response": { "output": "2" } } }
        ]})
    );
}

#[tokio::test]
async fn openai_responses_over_http_sends_function_call_items_back() {
    let (mock, base_url) = serve(vec![
        Canned::Answer(200, Vec::new(), json!({
            "id": "resp_1", "object": "response", "status": "completed",
            "output": [{ "type": "function_call", "id": "fc_x", "call_id": "call_1", "name": "add", "arguments": "{\"a\":3,\"b\":4}" }],
            "usage": { "input_tokens": 12, "output_tokens": 5 }
        })),
        Canned::Answer(200, Vec::new(), json!({
            "id": "resp_2", "object": "response", "status": "completed",
            "output": [{ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": "7" }] }],
            "usage": { "input_tokens": 20, "output_tokens": 1 }
        })),
    ])
    .await;
    let model = tool_providers::OpenAiResponsesModel::new("gpt-test")
        .with_base_url(&base_url)
        .with_api_key(ApiKey::new("sk-test"));
    let runner = Agent::builder(model)
        .executor(executor([add(Arc::default())]))
        .instructions("Add.")
        .build();
    let result = runner.run("3 + 4?", &RunOptions::default()).await.unwrap();
    assert_eq!(result.text, "7");
    let seen = mock.seen.lock().unwrap();
    assert_eq!(seen[0].path, "/v1/responses");
    assert_eq!(
        seen[0].header("authorization").as_deref(),
        Some("Bearer sk-test")
    );
    assert_eq!(seen[0].body["instructions"], "Add.");
    assert_eq!(seen[0].body["tools"][0]["type"], "function");
    assert_eq!(
        seen[1].body["input"],
        json!([
            { "role": "user", "content": "3 + 4?" },
            { "type": "function_call", "call_id": "call_1", "name": "add", "arguments": "{\"a\":3,\"b\":4}" },
            { "type": "function_call_output", "call_id": "call_1", "output": "7" }
        ])
    );
}

/// Anthropic's server-sent events: `event:` lines, then `data:` lines.
fn anthropic_events(events: &[serde_json::Value]) -> Canned {
    let text: String = events
        .iter()
        .map(|e| {
            format!(
                "event: {}\ndata: {e}\n\n",
                e["type"].as_str().unwrap_or("ping")
            )
        })
        .collect();
    Canned::Events(text)
}

#[tokio::test]
async fn anthropic_streams_text_and_assembles_tool_use_from_json_deltas() {
    let first = anthropic_events(&[
        json!({ "type": "message_start", "message": { "id": "msg_1", "usage": { "input_tokens": 25, "output_tokens": 1 } } }),
        json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } }),
        json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": "Let me " } }),
        json!({ "type": "ping" }),
        json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": "add." } }),
        json!({ "type": "content_block_stop", "index": 0 }),
        json!({ "type": "content_block_start", "index": 1, "content_block": { "type": "tool_use", "id": "toolu_1", "name": "add", "input": {} } }),
        json!({ "type": "content_block_delta", "index": 1, "delta": { "type": "input_json_delta", "partial_json": "{\"a\": 2," } }),
        json!({ "type": "content_block_delta", "index": 1, "delta": { "type": "input_json_delta", "partial_json": " \"b\": 3}" } }),
        json!({ "type": "content_block_stop", "index": 1 }),
        json!({ "type": "message_delta", "delta": { "stop_reason": "tool_use" }, "usage": { "output_tokens": 30 } }),
        json!({ "type": "message_stop" }),
    ]);
    let second = anthropic_events(&[
        json!({ "type": "message_start", "message": { "id": "msg_2", "usage": { "input_tokens": 60, "output_tokens": 1 } } }),
        json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } }),
        json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": "5." } }),
        json!({ "type": "message_delta", "delta": { "stop_reason": "end_turn" }, "usage": { "output_tokens": 2 } }),
        json!({ "type": "message_stop" }),
    ]);
    let (mock, base_url) = serve(vec![first, second]).await;
    let runner = Agent::builder(model(&base_url))
        .executor(executor([add(Arc::default())]))
        .build();
    let options = RunOptions::default();
    let events: Vec<RunEvent> = runner.run_stream("2 + 3?", &options).collect().await;
    let mut deltas = Vec::new();
    let mut call_deltas = Vec::new();
    let mut started = Vec::new();
    let mut finished = None;
    for event in events {
        match event {
            RunEvent::TextDelta { text, .. } => deltas.push(text),
            RunEvent::ToolCallDelta { step, delta } => {
                assert!(started.is_empty(), "{delta:?} after the call started");
                call_deltas.push((step, delta.index, delta.id, delta.name, delta.arguments))
            }
            RunEvent::ToolCallStarted { call, .. } => started.push(call),
            RunEvent::Finished(result) => finished = Some(*result),
            _ => {}
        }
    }
    assert_eq!(deltas, ["Let me ", "add.", "5."]);
    let said = |s: &str| Some(s.to_owned());
    assert_eq!(
        call_deltas,
        [
            (0, 0, said("toolu_1"), said("add"), String::new()),
            (0, 0, None, None, "{\"a\": 2,".into()),
            (0, 0, None, None, " \"b\": 3}".into()),
        ]
    );
    assert_eq!(
        started,
        [tool_core::ToolCall::new(
            "toolu_1",
            "add",
            json!({ "a": 2, "b": 3 })
        )]
    );
    let result = finished.expect("the last event").unwrap();
    assert_eq!(result.text, "5.");
    assert_eq!(result.usage.input_tokens, 85);
    assert_eq!(result.usage.output_tokens, 32);
    assert_eq!(mock.seen.lock().unwrap()[0].body["stream"], true);
}

#[tokio::test]
async fn gemini_streams_text_and_whole_function_calls_over_sse() {
    let chunk = |parts: serde_json::Value, usage: serde_json::Value| json!({ "candidates": [{ "content": { "role": "model", "parts": parts } }], "usageMetadata": usage });
    // The last chunk says why the answer ended, as Gemini's does.
    let events = |chunks: &[serde_json::Value]| {
        let mut chunks = chunks.to_vec();
        if let Some(last) = chunks.last_mut() {
            last["candidates"][0]["finishReason"] = json!("STOP");
        }
        Canned::Events(
            chunks
                .iter()
                .map(|c| format!("data: {c}\r\n\r\n"))
                .collect(),
        )
    };
    let first = events(&[
        chunk(
            json!([{ "text": "Adding" }]),
            json!({ "promptTokenCount": 9 }),
        ),
        chunk(
            json!([{ "text": " now." }, { "functionCall": { "name": "add", "args": { "a": 4, "b": 4 } } }]),
            json!({ "promptTokenCount": 9, "candidatesTokenCount": 6 }),
        ),
    ]);
    let second = events(&[chunk(
        json!([{ "text": "8" }]),
        json!({ "promptTokenCount": 20, "candidatesTokenCount": 1 }),
    )]);
    let (mock, base_url) = serve(vec![first, second]).await;
    let model = tool_providers::GeminiModel::new("gemini-test")
        .with_base_url(&base_url)
        .with_api_key(ApiKey::new("AIza-test"));
    let runner = Agent::builder(model)
        .executor(executor([add(Arc::default())]))
        .build();
    let options = RunOptions::default();
    let events: Vec<RunEvent> = runner.run_stream("4 + 4?", &options).collect().await;
    let deltas: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::TextDelta { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["Adding", " now.", "8"]);
    let Some(RunEvent::Finished(result)) = events.into_iter().last() else {
        panic!("the last event is Finished");
    };
    let result = result.unwrap();
    assert_eq!(result.text, "8");
    assert_eq!(
        result.steps[0].calls[0].call.arguments,
        json!({ "a": 4, "b": 4 })
    );
    assert_eq!(result.usage.input_tokens, 29);
    let seen = mock.seen.lock().unwrap();
    assert_eq!(seen[0].path, "/v1/models/gemini-test:streamGenerateContent");
}

#[tokio::test]
async fn openai_responses_streams_text_and_function_call_argument_deltas() {
    let events = |events: &[serde_json::Value]| {
        Canned::Events(
            events
                .iter()
                .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
                .collect(),
        )
    };
    let first = events(&[
        json!({ "type": "response.created", "response": { "id": "resp_1", "status": "in_progress" } }),
        json!({ "type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "Six plus one." }),
        json!({ "type": "response.output_text.delta", "output_index": 0, "delta": "Adding" }),
        json!({ "type": "response.output_item.added", "output_index": 1, "item": { "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "add", "arguments": "" } }),
        json!({ "type": "response.function_call_arguments.delta", "output_index": 1, "delta": "{\"a\":6," }),
        json!({ "type": "response.function_call_arguments.delta", "output_index": 1, "delta": "\"b\":1}" }),
        json!({ "type": "response.completed", "response": { "id": "resp_1", "status": "completed", "usage": { "input_tokens": 10, "output_tokens": 4 } } }),
    ]);
    let second = events(&[
        json!({ "type": "response.output_text.delta", "output_index": 0, "delta": "7" }),
        json!({ "type": "response.completed", "response": { "id": "resp_2", "status": "completed", "usage": { "input_tokens": 20, "output_tokens": 1 } } }),
    ]);
    let (mock, base_url) = serve(vec![first, second]).await;
    let model = tool_providers::OpenAiResponsesModel::new("gpt-test")
        .with_base_url(&base_url)
        .with_api_key(ApiKey::new("sk-test"));
    let runner = Agent::builder(model)
        .executor(executor([add(Arc::default())]))
        .build();
    let options = RunOptions::default();
    let events: Vec<RunEvent> = runner.run_stream("6 + 1?", &options).collect().await;
    let streamed: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ReasoningDelta { step, text } => Some(format!("thought {step} {text}")),
            RunEvent::TextDelta { step, text } => Some(format!("text {step} {text}")),
            RunEvent::ToolCallDelta { step, delta } => Some(format!(
                "call delta {step} #{} {:?} {:?} {}",
                delta.index, delta.id, delta.name, delta.arguments
            )),
            RunEvent::ToolCallStarted { step, call } => Some(format!("call {step} {}", call.name)),
            _ => None,
        })
        .collect();
    assert_eq!(
        streamed,
        [
            "thought 0 Six plus one.",
            "text 0 Adding",
            r#"call delta 0 #0 Some("call_1") Some("add") "#,
            r#"call delta 0 #0 None None {"a":6,"#,
            r#"call delta 0 #0 None None "b":1}"#,
            "call 0 add",
            "text 1 7",
        ]
    );
    let Some(RunEvent::Finished(result)) = events.into_iter().last() else {
        panic!("the last event is Finished");
    };
    let result = result.unwrap();
    assert_eq!(result.text, "7");
    assert_eq!(
        result.steps[0].calls[0].call,
        tool_core::ToolCall::new("call_1", "add", json!({ "a": 6, "b": 1 }))
    );
    assert_eq!(result.usage.input_tokens, 30);
    assert_eq!(mock.seen.lock().unwrap()[0].body["stream"], true);
}

#[test]
fn a_body_field_is_added_to_every_request_and_replaces_the_clients_own() {
    use tool_agent::{Message, ModelRequest};
    use tool_providers::{GeminiModel, OpenAiResponsesModel};
    let request = ModelRequest::new(vec![Message::user("hi")]);
    let thinking = json!({ "type": "enabled", "budget_tokens": 2048 });
    let anthropic = AnthropicModel::new("m")
        .with_body_field("thinking", thinking.clone())
        .with_body_field("max_tokens", json!(8192))
        .body(&request);
    assert_eq!(anthropic["thinking"], thinking);
    assert_eq!(
        anthropic["max_tokens"], 8192,
        "the field replaces the client's"
    );
    let safety = json!([{ "category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE" }]);
    let gemini = GeminiModel::new("m")
        .with_body_field("safetySettings", safety.clone())
        .body(&request);
    assert_eq!(gemini["safetySettings"], safety);
    let responses = OpenAiResponsesModel::new("m")
        .with_body_field("reasoning", json!({ "effort": "low" }))
        .body(&request);
    assert_eq!(responses["reasoning"], json!({ "effort": "low" }));
}

/// AWS's error code (`x-amzn-ErrorType`) and message reach the error.
#[tokio::test]
async fn a_bedrock_refusal_names_awss_error_code() {
    let refused = Canned::Answer(
        400,
        vec![(
            "x-amzn-ErrorType",
            "ValidationException:http://internal.amazon.com/".into(),
        )],
        json!({ "message": "A conversation must alternate between user and assistant roles." }),
    );
    let (_mock, base_url) = serve(vec![refused]).await;
    let model = BedrockModel::new("amazon.nova-pro-v1:0")
        .with_base_url(base_url.trim_end_matches("/v1"))
        .with_api_key(ApiKey::new("k"));
    let error = model
        .respond(&ModelRequest::new(vec![Message::user("hi")]))
        .await
        .expect_err("a 400");
    let shown = error.to_string();
    assert!(
        shown.contains("400")
            && shown.contains("ValidationException: A conversation must alternate"),
        "{shown}"
    );
}

/// A client, and its `Debug` form.
type Shown = (Box<dyn ChatModel>, String);

fn shown<M: ChatModel + std::fmt::Debug + 'static>(model: M) -> Shown {
    let debug = format!("{model:?}");
    (Box::new(model), debug)
}

/// `with_header` adds a header to every client's requests, replacing the client's own of the
/// same name; `Debug` names it without its value; a header that cannot be sent fails the
/// request as a setup error naming it, before anything is sent.
#[tokio::test]
async fn every_client_sends_the_headers_set_with_with_header() {
    use tool_providers::{GeminiModel, OpenAiChatModel, OpenAiResponsesModel};
    let refusal = || Canned::Answer(400, Vec::new(), json!({ "error": { "message": "no" } }));
    let (mock, base_url) = serve((0..5).map(|_| refusal()).collect()).await;
    let bedrock_url = base_url.trim_end_matches("/v1");
    let key = || ApiKey::new("k");
    let clients: Vec<(&str, Shown)> = vec![
        (
            "chat",
            shown(
                OpenAiChatModel::new("m")
                    .with_base_url(&base_url)
                    .with_header("OpenAI-Organization", "org-123")
                    .with_header("x-gateway-key", "secret-1"),
            ),
        ),
        (
            "responses",
            shown(
                OpenAiResponsesModel::new("m")
                    .with_base_url(&base_url)
                    .with_header("x-gateway-key", "secret-2"),
            ),
        ),
        (
            "anthropic",
            shown(
                model(&base_url)
                    .with_header("anthropic-beta", "context-management-2025-06-27")
                    .with_header("anthropic-version", "2099-01-01")
                    .with_header("x-gateway-key", "secret-3"),
            ),
        ),
        (
            "gemini",
            shown(
                GeminiModel::new("m")
                    .with_base_url(&base_url)
                    .with_api_key(key())
                    .with_header("x-gateway-key", "secret-4"),
            ),
        ),
        (
            "bedrock",
            shown(
                BedrockModel::new("amazon.nova-pro-v1:0")
                    .with_base_url(bedrock_url)
                    .with_api_key(key())
                    .with_header("x-gateway-key", "secret-5"),
            ),
        ),
    ];
    let request = ModelRequest::new(vec![Message::user("hi")]);
    for (name, (client, shown)) in &clients {
        let error = client.respond(&request).await.expect_err("a 400");
        assert!(
            matches!(error, ModelError::Status { status: 400, .. }),
            "{name}: {error}"
        );
        assert!(
            shown.contains("x-gateway-key") && !shown.contains("secret-"),
            "{name}: {shown}"
        );
    }
    {
        let seen = mock.seen.lock().unwrap();
        assert_eq!(seen.len(), 5);
        for (i, request) in seen.iter().enumerate() {
            let expected = format!("secret-{}", i + 1);
            assert_eq!(
                request.header("x-gateway-key"),
                Some(expected),
                "client {i}"
            );
        }
        assert_eq!(
            seen[0].header("openai-organization").as_deref(),
            Some("org-123")
        );
        assert_eq!(
            seen[2].header("anthropic-beta").as_deref(),
            Some("context-management-2025-06-27")
        );
        assert_eq!(
            seen[2].header("anthropic-version").as_deref(),
            Some("2099-01-01"),
            "the header replaces the client's own"
        );
        assert_eq!(seen[2].header("x-api-key").as_deref(), Some("sk-ant-test"));
    }

    for (header, value, named) in [
        (
            "bad header",
            "v",
            "`bad header` (with_header) is not a header name",
        ),
        ("x-ok", "line\nbreak", "the value of header `x-ok`"),
        ("x-ok", "café", "the value of header `x-ok`"),
        (
            "Authorization: Bearer sk-secret",
            "v",
            "`Authorization: B...` (with_header) is not a header name",
        ),
    ] {
        let model = OpenAiChatModel::new("m")
            .with_base_url(&base_url)
            .with_header(header, value);
        let error = model.respond(&request).await.expect_err("a setup error");
        assert!(
            matches!(&error, ModelError::Setup(why) if why.contains(named)),
            "{error}"
        );
    }
    assert_eq!(mock.seen.lock().unwrap().len(), 5, "nothing more was sent");
}
