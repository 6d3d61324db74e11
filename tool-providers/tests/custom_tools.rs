//! Tools that take text (`DynamicTool::taking_text`): OpenAI's custom tools with a grammar, in
//! Chat and Responses, through the agent loop against a mock API on 127.0.0.1; a regular
//! expression checked before the tool runs; a function of one string elsewhere. The requests are
//! checked against the SDKs' types.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tool_agent::{Agent, ModelRequest, OfferedTools, RunOptions, ToolChoice};
use tool_core::provider::{declare, DeclareOptions, Format};
use tool_core::{TextInput, ToolErrorKind, ToolOutput};
use tool_providers::{OpenAiChatModel, OpenAiResponsesModel};
use tool_runtime::{DynamicTool, Executor};
use tool_test_support::mock::{ok, responses_answer, serve, Canned, Mock};
use tool_test_support::sdk::{run_script, sdk_tools, temp_dir};

const DAY: &str = r"\d{4}-\d{2}-\d{2}";

/// `agenda(day)`, taking a date as text; the days it was given.
fn agenda(days: &Arc<Mutex<Vec<String>>>) -> DynamicTool {
    let days = Arc::clone(days);
    DynamicTool::taking_text(
        "agenda",
        "The meetings of a day.",
        TextInput::Regex {
            definition: DAY.into(),
        },
        move |text, _| {
            days.lock().unwrap().push(text.clone());
            async move { Ok(ToolOutput::text(format!("{text}: standup at 9"))) }
        },
    )
}

fn executor(days: &Arc<Mutex<Vec<String>>>) -> Executor {
    Executor::builder()
        .registered_tools(false)
        .tool(agenda(days))
        .build()
        .unwrap()
}

fn bodies(mock: &Mock) -> Vec<Value> {
    mock.seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.body.clone())
        .collect()
}

fn check_sdk(name: &str, kind: &str, bodies: &[Value]) {
    let Some(python) = sdk_tools(&format!("custom_tools {name}")) else {
        return;
    };
    let dir = temp_dir(&format!("custom-tools-{name}"));
    let args: Vec<String> = bodies
        .iter()
        .enumerate()
        .map(|(i, body)| {
            let path = dir.join(format!("{name}-{i}.json"));
            std::fs::write(&path, serde_json::to_string_pretty(body).unwrap()).unwrap();
            format!("{kind}={}", path.display())
        })
        .collect();
    let (passed, printed) = run_script(&python, "check_wire.py", &args);
    assert!(passed, "the SDK types refuse what we send:\n{printed}");
}

fn responses(output: Value) -> Canned {
    ok(responses_answer(output))
}

#[test]
fn each_api_declares_a_text_tool_its_way() {
    let days = Arc::default();
    let exec = executor(&days);
    let specs: Vec<_> = exec.tools().cloned().collect();
    let options = DeclareOptions::default();
    let responses = declare(&specs, Format::OpenAiResponses, &options);
    assert_eq!(
        responses.tools,
        json!([{ "type": "custom", "name": "agenda", "description": "The meetings of a day.",
                 "format": { "type": "grammar", "syntax": "regex", "definition": DAY } }])
    );
    let chat = declare(&specs, Format::OpenAiChat, &options);
    assert_eq!(
        chat.tools,
        json!([{ "type": "custom", "custom": { "name": "agenda",
            "description": "The meetings of a day.",
            "format": { "type": "grammar", "grammar": { "syntax": "regex", "definition": DAY } } } }])
    );
    // Elsewhere a function of one string, which the pattern holds to the expression.
    let anthropic = declare(&specs, Format::Anthropic, &options);
    assert_eq!(
        anthropic.tools[0]["input_schema"]["properties"]["input"]["pattern"],
        json!(format!("^(?:{DAY})$"))
    );
    // Free text has no grammar.
    let free = DynamicTool::taking_text("note", "Notes.", TextInput::Free, |text, _| async move {
        Ok(ToolOutput::text(text))
    });
    let declared = declare([free.spec()], Format::OpenAiResponses, &options);
    assert_eq!(declared.tools[0]["format"], json!({ "type": "text" }));
}

#[tokio::test]
async fn responses_custom_calls_run_with_their_text_and_a_text_off_the_grammar_is_refused() {
    let days = Arc::default();
    let call = |id: &str, input: &str| {
        json!([{ "type": "custom_tool_call", "id": format!("ctc_{id}"), "call_id": id,
                 "name": "agenda", "input": input }])
    };
    let (mock, url) = serve(vec![
        responses(call("call_1", "2026-12-01")),
        responses(call("call_2", "tomorrow")),
        responses(
            json!([{ "type": "message", "id": "msg_1", "role": "assistant",
            "status": "completed",
            "content": [{ "type": "output_text", "text": "A standup.", "annotations": [] }] }]),
        ),
    ])
    .await;
    let agent = Agent::builder(OpenAiResponsesModel::new("gpt-5.4").with_base_url(&url))
        .executor(executor(&days))
        .build();
    let result = agent
        .run("What is on 2026-12-01?", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.text, "A standup.");
    assert_eq!(*days.lock().unwrap(), ["2026-12-01"]);
    let refused = result.steps[1].calls[0].result.as_ref().unwrap_err();
    assert_eq!(refused.kind(), ToolErrorKind::InvalidArguments);

    let sent = bodies(&mock);
    let input = sent[2]["input"].as_array().unwrap();
    assert_eq!(
        input[1],
        json!({ "type": "custom_tool_call", "call_id": "call_1", "name": "agenda", "input": "2026-12-01" })
    );
    assert_eq!(input[2]["type"], "custom_tool_call_output");
    assert_eq!(input[2]["output"], "2026-12-01: standup at 9");
    assert_eq!(input[4]["type"], "custom_tool_call_output");
    check_sdk("responses", "openai-responses.request", &sent);
}

#[tokio::test]
async fn chat_custom_calls_go_back_as_custom_calls() {
    let days = Arc::default();
    let answer = |message: Value| {
        Canned::Answer(
            200,
            Vec::new(),
            json!({ "id": "chatcmpl_1", "object": "chat.completion", "created": 1,
                    "model": "gpt-5.4",
                    "choices": [{ "index": 0, "finish_reason": "stop", "message": message }] }),
        )
    };
    let (mock, url) = serve(vec![
        answer(
            json!({ "role": "assistant", "content": null, "tool_calls": [
            { "id": "c1", "type": "custom", "custom": { "name": "agenda", "input": "2026-12-01" } }
        ] }),
        ),
        answer(json!({ "role": "assistant", "content": "A standup." })),
    ])
    .await;
    let agent = Agent::builder(OpenAiChatModel::new("gpt-5.4").with_base_url(&url))
        .executor(executor(&days))
        .build();
    let options = RunOptions::default().tool_choice(ToolChoice::Tool("agenda".into()));
    let result = agent.run("What is on 2026-12-01?", &options).await.unwrap();
    assert_eq!(result.text, "A standup.");
    assert_eq!(*days.lock().unwrap(), ["2026-12-01"]);
    let sent = bodies(&mock);
    assert_eq!(
        sent[0]["tool_choice"],
        json!({ "type": "custom", "custom": { "name": "agenda" } })
    );
    let messages = sent[1]["messages"].as_array().unwrap();
    assert_eq!(
        messages[1]["tool_calls"][0],
        json!({ "id": "c1", "type": "custom", "custom": { "name": "agenda", "input": "2026-12-01" } })
    );
    assert_eq!(messages[2]["role"], "tool");
    check_sdk("chat", "openai-chat.request", &sent);
}

#[test]
fn a_choice_naming_a_text_tool_names_it_as_custom_in_responses() {
    let days = Arc::default();
    let exec = executor(&days);
    let mut request = ModelRequest::new(vec![tool_agent::Message::user("agenda")]);
    request.tools = Arc::new(OfferedTools::new(
        exec.tools().cloned().collect(),
        Some(Format::OpenAiResponses),
        &DeclareOptions::default(),
    ));
    request.tool_choice = ToolChoice::allowed(["agenda"]);
    let body = OpenAiResponsesModel::new("gpt-5.4").body(&request);
    assert_eq!(
        body["tool_choice"]["tools"],
        json!([{ "type": "custom", "name": "agenda" }])
    );
    check_sdk("choice", "openai-responses.request", &[body]);
}
