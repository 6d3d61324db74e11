//! Anthropic's programmatic tool calling through the agent loop, against a mock of the API on
//! 127.0.0.1, in the shapes Anthropic's documentation shows: a tool callable from code
//! (`allowed_callers`), the code execution tool that calls it, the call answered like any call
//! and sent back naming its caller, and the container named in the next request. Requests and
//! answers are checked against the SDK's types.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use tool_agent::{Agent, RunOptions};
use tool_core::provider::hosted::HostedTool;
use tool_core::{Callers, ToolOutput};
use tool_providers::AnthropicModel;
use tool_runtime::{DynamicTool, Executor};
use tool_test_support::mock::{serve, Canned};
use tool_test_support::sdk::{run_script, sdk_tools, temp_dir};

fn answer(content: Value, stop: &str) -> Value {
    json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "container": { "id": "container_011", "expires_at": "2026-11-29T07:00:00Z" },
        "usage": { "input_tokens": 10, "output_tokens": 5 }
    })
}

#[tokio::test]
async fn a_call_made_by_code_is_answered_and_goes_back_naming_its_caller_and_container() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let query = DynamicTool::new(
        "query_database",
        "Runs a SQL query.",
        json!({ "type": "object", "properties": { "sql": { "type": "string" } }, "required": ["sql"] }),
        move |_, _| {
            counted.fetch_add(1, Ordering::SeqCst);
            async { Ok(ToolOutput::text("[[1], [2], [3]]")) }
        },
    );
    let exec = Executor::builder()
        .registered_tools(false)
        .tool_with(query, |tool| tool.callers(Callers::Code))
        .build()
        .unwrap();
    let code_call = json!([
        { "type": "text", "text": "I'll count the rows." },
        { "type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution",
          "input": { "code": "rows = await query_database(sql='SELECT 1')\nprint(len(rows))" } },
        { "type": "tool_use", "id": "toolu_1", "name": "query_database",
          "input": { "sql": "SELECT 1" },
          "caller": { "type": "code_execution_20260120", "tool_id": "srvtoolu_1" } }
    ]);
    let finished = json!([
        { "type": "code_execution_tool_result", "tool_use_id": "srvtoolu_1",
          "content": { "type": "code_execution_result", "stdout": "3\n", "stderr": "",
                       "return_code": 0, "content": [] } },
        { "type": "text", "text": "There are 3 rows." }
    ]);
    let answers = [
        answer(code_call.clone(), "tool_use"),
        answer(finished, "end_turn"),
    ];
    let (mock, url) = serve(
        answers
            .iter()
            .map(|a| Canned::Answer(200, Vec::new(), a.clone()))
            .collect(),
    )
    .await;
    let agent = Agent::builder(AnthropicModel::new("claude-sonnet-4-5").with_base_url(&url))
        .executor(exec)
        .hosted_tool(HostedTool::ProgrammaticCalling)
        .build();
    let result = agent
        .run("How many rows?", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.text, "There are 3 rows.");
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    let sent: Vec<Value> = mock
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.body.clone())
        .collect();
    assert_eq!(
        sent[0]["tools"],
        json!([
            { "name": "query_database", "description": "Runs a SQL query.",
              "input_schema": { "type": "object", "properties": { "sql": { "type": "string" } },
                                "required": ["sql"] },
              "allowed_callers": ["code_execution_20260120"] },
            { "type": "code_execution_20260120", "name": "code_execution" }
        ])
    );
    assert!(sent[0].get("container").is_none());
    // The answer goes back as it came, the call naming the code that made it.
    assert_eq!(sent[1]["messages"][1]["content"], code_call);
    assert_eq!(
        sent[1]["messages"][2]["content"][0]["tool_use_id"],
        "toolu_1"
    );
    assert_eq!(sent[1]["container"], "container_011");

    let Some(python) = sdk_tools("programmatic tool calling") else {
        return;
    };
    let dir = temp_dir("programmatic");
    let mut args = Vec::new();
    for (i, body) in sent.iter().enumerate() {
        let path = dir.join(format!("request-{i}.json"));
        std::fs::write(&path, body.to_string()).unwrap();
        args.push(format!("anthropic.request={}", path.display()));
    }
    for (i, body) in answers.iter().enumerate() {
        let path = dir.join(format!("response-{i}.json"));
        std::fs::write(&path, body.to_string()).unwrap();
        args.push(format!("anthropic.response={}", path.display()));
    }
    let (passed, printed) = run_script(&python, "check_wire.py", &args);
    assert!(passed, "the SDK types refuse it:\n{printed}");
}
