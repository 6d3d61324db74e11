//! A tool's questions to a client of protocol 2026-07-28 (which takes no requests from the
//! server): the call is answered `input_required`, and called again with the answers and the
//! sealed state, by rmcp's own client.

use std::sync::Arc;

use ai_tool::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, Implementation,
    ProtocolVersion,
};
use ai_tool::mcp::rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService,
};
use serde_json::json;
use tokio::sync::{mpsc, Notify};

use crate::{asking_server, in_process};

async fn modern_asker() -> RunningService<RoleClient, ClientConfig> {
    let (started, _) = mpsc::unbounded_channel();
    let server = asking_server(started, Arc::new(Notify::new()));
    let capabilities = ClientCapabilities::builder().enable_elicitation().build();
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    ClientConfig::new(capabilities, Implementation::new("rounds", "0"))
        .serve_with_lifecycle(in_process(server), lifecycle)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_question_is_asked_as_input_required_and_answered_by_calling_again() {
    let client = modern_asker().await;
    let first = client
        .peer()
        .call_tool_once(CallToolRequestParams::new("ask"))
        .await
        .unwrap();
    let CallToolResponse::InputRequired(asked) = first else {
        panic!("not input_required: {first:?}");
    };
    let requests = asked.input_requests.clone().unwrap();
    let (key, request) = requests.iter().next().unwrap();
    let wire = serde_json::to_value(request).unwrap();
    assert_eq!(wire["method"], "elicitation/create");
    assert_eq!(wire["params"]["message"], "Which email?");
    let state = asked.request_state.clone().unwrap();

    let mut answers = std::collections::BTreeMap::new();
    answers.insert(
        key.clone(),
        json!({ "action": "accept", "content": { "email": "ada@example.com" } }),
    );
    let again = CallToolRequestParams::new("ask")
        .with_input_responses(answers.clone())
        .with_request_state(state.clone());
    let CallToolResponse::Complete(result) = client.peer().call_tool_once(again).await.unwrap()
    else {
        panic!("not complete");
    };
    let text = result.content[0].as_text().unwrap().text.clone();
    assert!(text.contains("ada@example.com"), "{text}");

    // A state edited, or brought to another tool, is refused.
    let mut forged = state.clone();
    forged.push('x');
    let edited = CallToolRequestParams::new("ask")
        .with_input_responses(answers.clone())
        .with_request_state(forged);
    let error = client.peer().call_tool_once(edited).await.unwrap_err();
    assert!(error.to_string().contains("requestState"), "{error}");
    let moved = CallToolRequestParams::new("hold").with_request_state(state);
    let error = client.peer().call_tool_once(moved).await.unwrap_err();
    assert!(error.to_string().contains("requestState"), "{error}");
}

/// Our importer speaking 2026-07-28 (as it does when it takes tasks) passes a round's question
/// on to the caller of that call, and calls again with the answer.
#[tokio::test]
async fn an_import_answers_input_required_rounds_from_its_caller() {
    use ai_tool::mcp::{ImportLimits, McpBuilderExt, McpTools};
    use ai_tool::prelude::*;
    use ai_tool::{Elicitation, Elicited, Elicitor};
    let (started, _) = mpsc::unbounded_channel();
    let server = asking_server(started, Arc::new(Notify::new()));
    let limits = ImportLimits::default()
        .with_tasks()
        .with_forwarded_elicitation();
    let tools = McpTools::connect_with(
        "asker",
        in_process(server),
        std::time::Duration::from_secs(10),
        limits,
    )
    .await
    .unwrap()
    .with_namespace("asker");
    assert_eq!(tools.protocol_version().as_deref(), Some("2026-07-28"));
    let local = Executor::builder()
        .registered_tools(false)
        .mcp(&tools)
        .build()
        .unwrap();
    let user: Elicitor = Arc::new(|question: Elicitation| {
        assert_eq!(question.message, "The MCP server asker asks: Which email?");
        Box::pin(async { Ok(Elicited::Accepted(json!({ "email": "b@example.com" }))) })
    });
    let out = local
        .execute_with(
            "asker.ask",
            json!({}),
            &CallOptions::default().with_elicitor(user),
        )
        .await
        .unwrap();
    assert!(out.to_text().contains("b@example.com"), "{}", out.to_text());
    // A caller that cannot answer: the call fails, saying so.
    let err = local.execute("asker.ask", json!({})).await.unwrap_err();
    assert!(err.to_string().contains("could not be passed on"), "{err}");
}
