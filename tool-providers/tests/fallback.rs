//! `FallbackModel`: a request the first model fails goes to the next, also of another API,
//! whose client declares the tools in its own format and maps their names back.

use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use serde_json::{json, Value};
use tool_agent::{
    Agent, FallbackModel, ModelError, ModelResponse, RunEvent, RunFailure, RunOptions,
    ScriptedModel,
};
use tool_core::ToolOutput;
use tool_providers::{AnthropicModel, ApiKey, GeminiModel, OpenAiChatModel, RetryPolicy};
use tool_runtime::DynamicTool;
use tool_test_support::mock::{serve, Canned};
use tool_test_support::*;

/// A name longer than the APIs take: declared under an alias, which calls are mapped back
/// from.
const LONG: &str = "add_two_numbers_given_by_the_user_and_say_the_sum_back_to_them_in_plain_words";

/// The tool of that name.
fn long_named(seen: Arc<Mutex<Vec<Value>>>) -> DynamicTool {
    let schema = json!({ "type": "object", "properties": { "a": { "type": "integer" } } });
    DynamicTool::new(LONG, "Adds", schema, move |args, _| {
        seen.lock().unwrap().push(args.clone());
        async move { Ok(ToolOutput::text("42")) }
    })
}

fn overloaded() -> Canned {
    Canned::Answer(
        529,
        Vec::new(),
        json!({ "type": "error", "error": { "type": "overloaded_error", "message": "Overloaded" } }),
    )
}

fn chat(message: Value) -> Canned {
    Canned::Answer(
        200,
        Vec::new(),
        json!({ "id": "c", "object": "chat.completion", "model": "m",
            "choices": [{ "index": 0, "message": message, "finish_reason": "stop" }] }),
    )
}

#[tokio::test]
async fn a_failed_request_goes_to_the_next_model_of_another_api() {
    let (anthropic, anthropic_url) = serve(vec![overloaded(), overloaded()]).await;
    // What OpenAI's declaration calls the tool: the client's alias, read from the request.
    let alias = {
        let (probe, probe_url) =
            serve(vec![chat(json!({ "role": "assistant", "content": "-" }))]).await;
        let agent = Agent::builder(openai(&probe_url))
            .executor(executor([long_named(Arc::default())]))
            .build();
        agent.run("?", &RunOptions::default()).await.unwrap();
        let seen = probe.seen.lock().unwrap();
        seen[0].body["tools"][0]["function"]["name"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_ne!(alias, LONG, "the name needs an alias");
    let (openai_mock, openai_url) = serve(vec![
        chat(json!({ "role": "assistant", "content": null, "tool_calls": [
            { "id": "call_1", "type": "function", "function": { "name": alias, "arguments": "{\"a\": 2}" } }
        ]})),
        chat(json!({ "role": "assistant", "content": "42" })),
    ])
    .await;
    let model = FallbackModel::new(
        AnthropicModel::new("claude-sonnet-4-5")
            .with_base_url(&anthropic_url)
            .with_api_key(ApiKey::new("a"))
            .with_retry(RetryPolicy::none()),
    )
    .or(openai(&openai_url));
    let ran = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder(model)
        .executor(executor([long_named(Arc::clone(&ran))]))
        .build();
    let result = agent.run("2?", &RunOptions::default()).await.unwrap();
    assert_eq!(result.text, "42");
    assert_eq!(
        *ran.lock().unwrap(),
        [json!({ "a": 2 })],
        "the aliased call ran"
    );
    // Each request went to Anthropic first, then to OpenAI, each with its own declarations.
    let anthropic = anthropic.seen.lock().unwrap();
    assert_eq!(anthropic.len(), 2);
    let declared = &anthropic[0].body["tools"][0];
    assert_eq!(declared["name"], alias.as_str());
    assert!(
        declared.get("input_schema").is_some(),
        "Anthropic's shape: {declared}"
    );
    let sent = openai_mock.seen.lock().unwrap();
    assert_eq!(sent.len(), 2);
    let declared = &sent[0].body["tools"][0];
    assert_eq!(declared["type"], "function", "OpenAI's shape: {declared}");
    assert_eq!(declared["function"]["name"], alias.as_str());
    let call = &sent[1].body["messages"][1]["tool_calls"][0]["function"]["name"];
    assert_eq!(
        call,
        alias.as_str(),
        "the call is sent back under the alias"
    );
}

fn openai(base_url: &str) -> OpenAiChatModel {
    OpenAiChatModel::new("gpt-5-mini")
        .with_base_url(base_url)
        .with_api_key(ApiKey::new("o"))
}

fn refused() -> ModelError {
    ModelError::Status {
        provider: "test",
        status: 529,
        message: "overloaded".into(),
        attempts: 1,
    }
}

/// The model error a run with `model` fails with.
async fn failed_with(model: FallbackModel) -> ModelError {
    let agent = Agent::builder(model).build();
    let error = agent.run("hi", &RunOptions::default()).await.unwrap_err();
    match error.failure {
        RunFailure::Model { error, .. } => error,
        other => panic!("not a model failure: {other:?}"),
    }
}

#[tokio::test]
async fn only_the_failures_the_rule_takes_go_on_and_the_last_error_is_the_requests() {
    // The default rule: a setup error is the first model's own, not sent on.
    let second = Arc::new(ScriptedModel::new().then(ModelResponse::answer("never")));
    let model =
        FallbackModel::new(ScriptedModel::new().then_error(ModelError::Setup("no key".into())))
            .or(Arc::clone(&second));
    let error = failed_with(model).await;
    assert!(matches!(error, ModelError::Setup(_)), "{error:?}");
    assert!(second.requests().is_empty());

    // Every model failing: the last one's error.
    let model =
        FallbackModel::new(ScriptedModel::new().then_error(refused())).or(ScriptedModel::new()
            .then_error(ModelError::Transport {
                url: "http://second".into(),
                message: "refused".into(),
                attempts: 1,
            }));
    let error = failed_with(model).await;
    assert!(matches!(error, ModelError::Transport { .. }), "{error:?}");

    // A rule of one's own.
    let model = FallbackModel::new(ScriptedModel::new().then_error(refused()))
        .or(ScriptedModel::new().then(ModelResponse::answer("second")))
        .falling_back_when(|e| matches!(e, ModelError::Status { status: 529, .. }));
    let agent = Agent::builder(model).build();
    let result = agent.run("hi", &RunOptions::default()).await.unwrap();
    assert_eq!(result.text, "second");
}

#[tokio::test]
async fn a_stream_goes_on_only_while_nothing_was_streamed() {
    let model = FallbackModel::new(ScriptedModel::new().then_error(refused()))
        .or(ScriptedModel::new().then(ModelResponse::answer("from the second")));
    let agent = Agent::builder(model).build();
    let options = RunOptions::default();
    let events: Vec<RunEvent> = agent.run_stream("hi", &options).collect().await;
    let deltas: String = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, "from the second");
}

/// A model whose stream breaks after its first piece of text.
struct BreaksMidStream;

impl tool_agent::ChatModel for BreaksMidStream {
    fn respond<'a>(&'a self, _: &'a tool_agent::ModelRequest) -> tool_agent::ModelFuture<'a> {
        Box::pin(async { Err(refused()) })
    }

    fn respond_stream<'a>(
        &'a self,
        _: &'a tool_agent::ModelRequest,
    ) -> tool_agent::ModelEventStream<'a> {
        let events = [
            Ok(tool_agent::ModelEvent::TextDelta("Hel".into())),
            Err(refused()),
        ];
        Box::pin(futures_util::stream::iter(events))
    }
}

#[tokio::test]
async fn a_stream_that_breaks_after_its_first_event_is_not_asked_again_elsewhere() {
    let second = Arc::new(ScriptedModel::new().then(ModelResponse::answer("never")));
    let model = FallbackModel::new(BreaksMidStream).or(Arc::clone(&second));
    let agent = Agent::builder(model).build();
    let options = RunOptions::default();
    let events: Vec<RunEvent> = agent.run_stream("hi", &options).collect().await;
    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["Hel"]);
    let Some(RunEvent::Finished(finished)) = events.last() else {
        panic!("the run ends with Finished");
    };
    assert!(finished.is_err(), "the stream's failure is the run's");
    assert!(
        second.requests().is_empty(),
        "what was streamed cannot be taken back"
    );
}

fn gemini_answer(parts: Value) -> Canned {
    Canned::Answer(
        200,
        Vec::new(),
        json!({ "candidates": [{ "finishReason": "STOP",
            "content": { "role": "model", "parts": parts } }] }),
    )
}

fn gemini(model: &str, base_url: &str) -> GeminiModel {
    GeminiModel::new(model)
        .with_base_url(base_url)
        .with_api_key(ApiKey::new("g"))
        .with_retry(RetryPolicy::none())
}

/// The thought signatures of the model turns `seen` sent, in order.
fn signatures_sent(seen: &Value) -> Vec<Option<String>> {
    let contents = seen["contents"].as_array().unwrap().iter();
    contents
        .filter(|content| content["role"] == "model")
        .flat_map(|content| content["parts"].as_array().unwrap().iter())
        .map(|part| part["thoughtSignature"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn a_models_signed_reasoning_goes_back_to_it_and_not_to_the_model_after_it() {
    // Gemini 3 Pro calls, signing its call, then is down; Gemini 3 Flash, which would refuse
    // Pro's signature, carries the run on with the call sent as Google documents for a call
    // whose signature it cannot read.
    let (pro, pro_url) = serve(vec![
        gemini_answer(json!([
            { "functionCall": { "name": "add", "args": { "a": 2, "b": 40 } }, "thoughtSignature": "c2lnLXBybw==" }
        ])),
        Canned::Answer(
            503,
            Vec::new(),
            json!({ "error": { "code": 503, "message": "overloaded", "status": "UNAVAILABLE" } }),
        ),
    ])
    .await;
    let (flash, flash_url) = serve(vec![gemini_answer(json!([{ "text": "42" }]))]).await;
    let model = FallbackModel::new(gemini("gemini-3-pro-preview", &pro_url))
        .or(gemini("gemini-3-flash-preview", &flash_url));
    let agent = Agent::builder(model)
        .executor(executor([add(Arc::default())]))
        .build();
    let result = agent.run("2 + 40?", &RunOptions::default()).await.unwrap();
    assert_eq!(result.text, "42");
    let to_pro = &pro.seen.lock().unwrap()[1].body;
    assert_eq!(
        signatures_sent(to_pro),
        [Some("c2lnLXBybw==".to_owned())],
        "the model that signed the call reads its signature back"
    );
    let to_flash = &flash.seen.lock().unwrap()[0].body;
    assert_eq!(
        signatures_sent(to_flash),
        [Some("skip_thought_signature_validator".to_owned())]
    );
}
