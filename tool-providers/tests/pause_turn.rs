//! Anthropic's `pause_turn`: a long turn of server tools (web search, code execution) paused
//! by the API. The loop sends the paused turn back as it came, with nothing after it, and the
//! model goes on; each continuation is a step.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{json, Value};
use tool_agent::{
    Agent, Ending, Message, ModelResponse, Reasoning, RunEvent, RunOptions, ScriptedModel,
    StopReason, ToolChoice,
};
use tool_providers::{AnthropicModel, ApiKey, RetryPolicy};
use tool_test_support::mock::{serve, Canned};
use tool_test_support::*;

/// A paused answer's content: a search the API ran, its results, and text so far.
fn paused_content() -> Value {
    json!([
        { "type": "text", "text": "Let me look that up." },
        { "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
          "input": { "query": "tallest building 2025" } },
        { "type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
            { "type": "web_search_result", "url": "https://example.com/tall",
              "title": "Tallest", "encrypted_content": "EncRypted", "page_age": null }
        ] }
    ])
}

/// The paused answer as a client gives it: the text, and the whole content to send back.
fn paused() -> ModelResponse {
    let blocks = paused_content().as_array().unwrap().clone();
    ModelResponse {
        text: Some("Let me look that up.".into()),
        finish_reason: Some("pause_turn".into()),
        ending: Ending::Paused,
        reasoning: Some(Reasoning {
            api: "anthropic".into(),
            source: None,
            blocks,
        }),
        ..ModelResponse::default()
    }
}

fn finished(text: &str) -> ModelResponse {
    ModelResponse {
        finish_reason: Some("end_turn".into()),
        ..ModelResponse::answer(text)
    }
}

fn scripted(answers: impl IntoIterator<Item = ModelResponse>) -> Arc<ScriptedModel> {
    let model = answers
        .into_iter()
        .fold(ScriptedModel::new(), ScriptedModel::then);
    Arc::new(model)
}

/// The paused turn as the loop keeps it, what the next request must end with.
fn paused_turn() -> Vec<Message> {
    let response = paused();
    vec![
        Message::Reasoning(response.reasoning.unwrap()),
        Message::Assistant {
            text: response.text,
            calls: Vec::new(),
        },
    ]
}

#[tokio::test]
async fn a_paused_turn_is_sent_back_as_it_came_and_the_continuation_is_the_answer() {
    for streamed in [false, true] {
        let model = scripted([paused(), finished("The tallest is Burj Khalifa.")]);
        let runner = agent(&model, executor([add(Arc::default())])).build();
        let options = RunOptions::default();
        let result = if streamed {
            let events: Vec<RunEvent> = runner.run_stream("Tallest?", &options).collect().await;
            match events.into_iter().last() {
                Some(RunEvent::Finished(result)) => result.unwrap(),
                other => panic!("the last event is the result, not {other:?}"),
            }
        } else {
            runner.run("Tallest?", &options).await.unwrap()
        };

        // The answer is the whole turn's text: what came before the pause, then the rest.
        assert_eq!(
            result.text, "Let me look that up.The tallest is Burj Khalifa.",
            "{streamed}"
        );
        assert_eq!(result.stop, StopReason::Finished);
        assert_eq!(result.steps.len(), 2, "the continuation is a step");
        assert_eq!(result.steps[0].finish_reason.as_deref(), Some("pause_turn"));
        let requests = model.requests();
        assert_eq!(requests.len(), 2);
        // Asked again at once: the paused turn last, no user message, no tool results.
        let mut expected = vec![Message::user("Tallest?")];
        expected.extend(paused_turn());
        assert_eq!(requests[1].messages, expected);
        assert_eq!(requests[1].tool_choice, ToolChoice::Auto);
        assert_eq!(
            result.transcript.last(),
            Some(&Message::assistant("The tallest is Burj Khalifa."))
        );
    }
}

#[tokio::test]
async fn pauses_count_as_steps_and_the_step_limit_bounds_them() {
    // Without the last answer at the limit: three requests, then the run stops.
    let model = scripted([paused(), paused(), paused(), finished("never asked")]);
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let options = RunOptions::default().max_steps(3).answer_at_limit(false);
    let result = runner.run("Tallest?", &options).await.unwrap();
    assert_eq!(result.stop, StopReason::MaxSteps { steps: 3 });
    assert_eq!(model.requests().len(), 3);
    assert_eq!(
        result.text,
        "Let me look that up.".repeat(3),
        "the turn's text so far"
    );

    // With it: one more request, without tools; a pause then ends the run at the limit.
    let model = scripted([paused(), paused(), paused()]);
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let options = RunOptions::default().max_steps(2);
    let result = runner.run("Tallest?", &options).await.unwrap();
    assert_eq!(result.stop, StopReason::MaxSteps { steps: 2 });
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[2].tool_choice, ToolChoice::None);
    assert_eq!(result.steps.len(), 3);
}

fn model(base_url: &str) -> AnthropicModel {
    AnthropicModel::new("claude-test")
        .with_base_url(base_url)
        .with_api_key(ApiKey::new("sk-ant-test"))
        .with_retry(RetryPolicy {
            max_retries: 0,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(10),
        })
}

/// Anthropic's server-sent events: `event:` lines, then `data:` lines.
fn anthropic_events(events: &[Value]) -> Canned {
    let text: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    Canned::Events(text)
}

/// What the second request must end with: the paused turn, as the API gave it.
fn assert_sent_back(second: &Value) {
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{second}");
    assert_eq!(
        messages[0],
        json!({ "role": "user", "content": "Tallest?" })
    );
    assert_eq!(
        messages[1],
        json!({ "role": "assistant", "content": paused_content() })
    );
}

#[tokio::test]
async fn over_http_the_paused_content_goes_back_verbatim_whole_or_streamed() {
    // Whole.
    let (mock, base_url) = serve(vec![
        Canned::Answer(
            200,
            Vec::new(),
            json!({
                "id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "pause_turn",
                "content": paused_content(),
                "usage": { "input_tokens": 30, "output_tokens": 10 }
            }),
        ),
        Canned::Answer(
            200,
            Vec::new(),
            json!({
                "id": "msg_2", "type": "message", "role": "assistant", "stop_reason": "end_turn",
                "content": [{ "type": "text", "text": "Burj Khalifa." }],
                "usage": { "input_tokens": 50, "output_tokens": 2 }
            }),
        ),
    ])
    .await;
    let runner = Agent::builder(model(&base_url))
        .executor(executor([add(Arc::default())]))
        .build();
    let result = runner
        .run("Tallest?", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.text, "Let me look that up.Burj Khalifa.");
    assert_eq!(result.steps.len(), 2);
    assert_sent_back(&mock.seen.lock().unwrap()[1].body);

    // Streamed: the content assembled from its events, the search's input from JSON deltas.
    let first = anthropic_events(&[
        json!({ "type": "message_start", "message": { "id": "msg_1", "usage": { "input_tokens": 30 } } }),
        json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } }),
        json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": "Let me " } }),
        json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": "look that up." } }),
        json!({ "type": "content_block_stop", "index": 0 }),
        json!({ "type": "content_block_start", "index": 1, "content_block": { "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {} } }),
        json!({ "type": "content_block_delta", "index": 1, "delta": { "type": "input_json_delta", "partial_json": "{\"query\": \"tallest" } }),
        json!({ "type": "content_block_delta", "index": 1, "delta": { "type": "input_json_delta", "partial_json": " building 2025\"}" } }),
        json!({ "type": "content_block_stop", "index": 1 }),
        json!({ "type": "content_block_start", "index": 2, "content_block": paused_content()[2] }),
        json!({ "type": "content_block_stop", "index": 2 }),
        json!({ "type": "message_delta", "delta": { "stop_reason": "pause_turn" }, "usage": { "output_tokens": 10 } }),
        json!({ "type": "message_stop" }),
    ]);
    let second = anthropic_events(&[
        json!({ "type": "message_start", "message": { "id": "msg_2", "usage": { "input_tokens": 50 } } }),
        json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } }),
        json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": "Burj Khalifa." } }),
        json!({ "type": "content_block_stop", "index": 0 }),
        json!({ "type": "message_delta", "delta": { "stop_reason": "end_turn" }, "usage": { "output_tokens": 2 } }),
        json!({ "type": "message_stop" }),
    ]);
    let (mock, base_url) = serve(vec![first, second]).await;
    let runner = Agent::builder(model(&base_url))
        .executor(executor([add(Arc::default())]))
        .build();
    let options = RunOptions::default();
    let events: Vec<RunEvent> = runner.run_stream("Tallest?", &options).collect().await;
    let Some(RunEvent::Finished(result)) = events.into_iter().last() else {
        panic!("the last event is the result");
    };
    let result = result.unwrap();
    assert_eq!(result.text, "Let me look that up.Burj Khalifa.");
    assert_eq!(result.steps.len(), 2);
    assert_sent_back(&mock.seen.lock().unwrap()[1].body);
}
