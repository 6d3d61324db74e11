//! Tool search through the agent loop and the real clients, against a mock API on 127.0.0.1:
//! the selectable tools declared deferred beside the search, the declarations byte for byte the
//! same at every step, a search run by our retriever answered each API's way (Anthropic
//! `tool_reference` blocks, OpenAI Responses `tool_search_output`), the provider's own search
//! kept in the conversation, and the fallback where the API has no deferred loading. The
//! requests sent are golden files (`UPDATE_EXPECT=1` rewrites them) and are checked against the
//! providers' SDK types.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use tool_agent::{Agent, ChatModel, RunOptions, SearchBy, ToolSearch, TOOL_SEARCH};
use tool_core::{ToolMetadata, ToolOutput};
use tool_providers::{AnthropicModel, GeminiModel, OpenAiResponsesModel};
use tool_retrieval::Retriever;
use tool_runtime::{DynamicTool, Executor};
use tool_test_support::mock::{anthropic_answer, ok, responses_answer, serve, Canned, Mock};
use tool_test_support::sdk::{run_script, sdk_tools, temp_dir};

/// A selectable tool that counts its runs.
fn tool(name: &str, description: &str, keywords: &[&str], runs: &Arc<AtomicUsize>) -> DynamicTool {
    let runs = Arc::clone(runs);
    let reply = format!("{name} done");
    DynamicTool::new(
        name,
        description,
        json!({
            "type": "object",
            "properties": { "city": { "type": "string" } },
            "required": ["city"]
        }),
        move |_args, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            let reply = reply.clone();
            async move { Ok(ToolOutput::text(reply)) }
        },
    )
    .with_metadata(ToolMetadata {
        selectable: true,
        keywords: keywords.iter().map(|k| (*k).to_owned()).collect(),
        ..ToolMetadata::default()
    })
}

/// Three selectable tools and one system tool; the runs of `get_weather` counted.
fn executor(weather_runs: &Arc<AtomicUsize>) -> Executor {
    let none = Arc::new(AtomicUsize::new(0));
    let clock = DynamicTool::new(
        "get_time",
        "The current time.",
        json!({ "type": "object", "properties": {} }),
        |_args, _| async { Ok(ToolOutput::text("12:00")) },
    );
    Executor::builder()
        .registered_tools(false)
        .tool(tool(
            "get_weather",
            "The weather forecast for a city.",
            &["rain", "forecast", "temperature"],
            weather_runs,
        ))
        .tool(tool(
            "book_flight",
            "Books a flight to a city.",
            &["plane", "airline"],
            &none,
        ))
        .tool(tool(
            "find_hotel",
            "Finds a hotel in a city.",
            &["room", "stay"],
            &none,
        ))
        .tool(clock)
        .build()
        .unwrap()
}

fn local_search(exec: &Executor) -> ToolSearch {
    ToolSearch::local(Arc::new(Retriever::lexical(exec.tools())))
}

/// The bodies the mock received.
fn bodies(mock: &Mock) -> Vec<Value> {
    mock.seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.body.clone())
        .collect()
}

/// Every request sent the same `tools`, byte for byte, and the bytes are in each body as sent.
fn assert_same_tools_every_step(mock: &Mock) -> Value {
    let seen = mock.seen.lock().unwrap();
    assert!(seen.len() >= 2, "{} requests", seen.len());
    let first = seen[0].body["tools"].clone();
    let text = format!("\"tools\":{first}");
    for (step, request) in seen.iter().enumerate() {
        let raw = String::from_utf8_lossy(&request.raw);
        assert!(
            raw.contains(&text),
            "step {step} sent other tools: {}",
            request.body["tools"]
        );
    }
    first
}

fn names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t.get("name")
                .or(t.get("type"))
                .and_then(Value::as_str)
                .unwrap()
                .to_owned()
        })
        .collect()
}

fn deferred(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t.get("defer_loading") == Some(&json!(true)))
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Compares the bodies with the golden files of `name`, then checks them against the SDK types.
fn golden(name: &str, kind: &str, bodies: &[Value]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/tool-search");
    for (i, body) in bodies.iter().enumerate() {
        let file = dir.join(format!("{name}-{}.json", i + 1));
        let text = serde_json::to_string_pretty(body).unwrap() + "\n";
        expect_test::expect_file![file].assert_eq(&text);
    }
    let Some(python) = sdk_tools(&format!("tool_search {name}")) else {
        return;
    };
    let out = temp_dir(&format!("tool-search-{name}"));
    let mut args = Vec::new();
    for (i, body) in bodies.iter().enumerate() {
        let path = out.join(format!("{name}-{}.json", i + 1));
        std::fs::write(&path, serde_json::to_string_pretty(body).unwrap()).unwrap();
        args.push(format!("{kind}={}", path.display()));
    }
    let (passed, printed) = run_script(&python, "check_wire.py", &args);
    assert!(passed, "the SDK types refuse what we send:\n{printed}");
}

fn anthropic(content: Value, stop: &str) -> Canned {
    ok(anthropic_answer(content, stop))
}

fn responses(output: Value) -> Canned {
    ok(responses_answer(output))
}

#[tokio::test]
async fn anthropic_loads_what_our_retriever_finds_with_the_same_tools_at_every_step() {
    let runs = Arc::new(AtomicUsize::new(0));
    let exec = executor(&runs);
    let search = local_search(&exec);
    let (mock, url) = serve(vec![
        anthropic(
            json!([{ "type": "tool_use", "id": "toolu_1", "name": TOOL_SEARCH,
                     "input": { "query": "weather forecast" } }]),
            "tool_use",
        ),
        anthropic(
            json!([{ "type": "tool_use", "id": "toolu_2", "name": "get_weather",
                     "input": { "city": "Paris" } }]),
            "tool_use",
        ),
        anthropic(
            json!([{ "type": "text", "text": "Rain in Paris." }]),
            "end_turn",
        ),
    ])
    .await;
    let model = AnthropicModel::new("claude-sonnet-4-5").with_base_url(&url);
    let agent = Agent::builder(model)
        .executor(exec)
        .tool_search(search)
        .build();
    let result = agent
        .run("Will it rain in Paris?", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.text, "Rain in Paris.");
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    let tools = assert_same_tools_every_step(&mock);
    assert_eq!(
        names(&tools),
        [
            "get_weather",
            "book_flight",
            "find_hotel",
            "get_time",
            TOOL_SEARCH
        ]
    );
    assert_eq!(
        deferred(&tools),
        ["get_weather", "book_flight", "find_hotel"]
    );
    let sent = bodies(&mock);
    let found = sent[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        found["content"][0]["content"],
        json!([{ "type": "tool_reference", "tool_name": "get_weather" }]),
        "{found}"
    );
    golden("anthropic-local", "anthropic.request", &sent);
}

#[tokio::test]
async fn openai_responses_gets_the_found_declarations_in_a_tool_search_output() {
    let runs = Arc::new(AtomicUsize::new(0));
    let exec = executor(&runs);
    let search = local_search(&exec);
    let (mock, url) = serve(vec![
        responses(json!([{
            "type": "tool_search_call", "id": "tsc_1", "call_id": "call_1",
            "execution": "client", "status": "completed",
            "arguments": { "query": "weather forecast" }
        }])),
        responses(json!([{
            "type": "function_call", "id": "fc_1", "call_id": "call_2", "name": "get_weather",
            "arguments": "{\"city\":\"Paris\"}", "status": "completed"
        }])),
        responses(json!([{
            "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{ "type": "output_text", "text": "Rain in Paris.", "annotations": [] }]
        }])),
    ])
    .await;
    let model = OpenAiResponsesModel::new("gpt-5.4").with_base_url(&url);
    let agent = Agent::builder(model)
        .executor(exec)
        .tool_search(search)
        .build();
    let result = agent
        .run("Will it rain in Paris?", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.text, "Rain in Paris.");
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    let tools = assert_same_tools_every_step(&mock);
    assert_eq!(
        names(&tools),
        [
            "get_weather",
            "book_flight",
            "find_hotel",
            "get_time",
            "tool_search"
        ]
    );
    assert_eq!(tools[4]["execution"], "client");
    let sent = bodies(&mock);
    let input = sent[1]["input"].as_array().unwrap();
    assert_eq!(input[1]["type"], "tool_search_call");
    assert_eq!(input[1]["call_id"], "call_1");
    assert_eq!(input[2]["type"], "tool_search_output");
    assert_eq!(input[2]["call_id"], "call_1");
    assert_eq!(input[2]["tools"], json!([tools[0].clone()]));
    golden("openai-responses-local", "openai-responses.request", &sent);
}

#[tokio::test]
async fn anthropics_own_search_is_declared_and_its_blocks_go_back_as_they_came() {
    let runs = Arc::new(AtomicUsize::new(0));
    let exec = executor(&runs);
    // As Anthropic's documentation shows it: the search, its result, then the call.
    let searched = json!([
        { "type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_regex",
          "input": { "query": "weather" } },
        { "type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
          "content": { "type": "tool_search_tool_search_result",
                       "tool_references": [{ "type": "tool_reference", "tool_name": "get_weather" }] } },
        { "type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": { "city": "Paris" } }
    ]);
    let (mock, url) = serve(vec![
        anthropic(searched.clone(), "tool_use"),
        anthropic(
            json!([{ "type": "text", "text": "Rain in Paris." }]),
            "end_turn",
        ),
    ])
    .await;
    let model = AnthropicModel::new("claude-sonnet-4-5").with_base_url(&url);
    let agent = Agent::builder(model)
        .executor(exec)
        .tool_search(ToolSearch::Provider(SearchBy::Pattern))
        .build();
    let result = agent
        .run("Will it rain in Paris?", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.text, "Rain in Paris.");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let tools = assert_same_tools_every_step(&mock);
    assert_eq!(
        tools.as_array().unwrap().last().unwrap(),
        &json!({ "type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex" })
    );
    assert_eq!(
        deferred(&tools),
        ["get_weather", "book_flight", "find_hotel"]
    );
    let sent = bodies(&mock);
    let answered = &sent[1]["messages"][1];
    assert_eq!(answered["role"], "assistant");
    assert_eq!(answered["content"], searched, "the turn goes back whole");
    golden("anthropic-hosted", "anthropic.request", &sent);
}

#[tokio::test]
async fn without_deferred_loading_the_retriever_picks_the_tools_up_front() {
    let runs = Arc::new(AtomicUsize::new(0));
    let exec = executor(&runs);
    let search = local_search(&exec);
    let answer = json!({
        "candidates": [{ "content": { "role": "model", "parts": [{ "text": "Rain." }] },
                         "finishReason": "STOP" }],
        "usageMetadata": { "promptTokenCount": 10, "candidatesTokenCount": 2 }
    });
    let (mock, url) = serve(vec![Canned::Answer(200, Vec::new(), answer)]).await;
    let model = GeminiModel::new("gemini-3-pro-preview").with_base_url(&url);
    assert!(model.format().is_some());
    let agent = Agent::builder(model)
        .executor(exec)
        .tool_search(search)
        .build();
    agent
        .run("Will it rain? The forecast, please", &RunOptions::default())
        .await
        .unwrap();
    let sent = bodies(&mock);
    let declared = &sent[0]["tools"][0]["functionDeclarations"];
    let mut offered: Vec<&str> = declared
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    offered.sort_unstable();
    // The system tool, and the selectable tools the retriever picked; no search tool.
    assert!(
        offered.contains(&"get_time") && offered.contains(&"get_weather"),
        "{offered:?}"
    );
    assert!(!offered.contains(&TOOL_SEARCH), "{offered:?}");
    assert!(!sent[0].to_string().contains("defer_loading"));
}

#[tokio::test]
async fn a_tool_marked_deferred_is_declared_loaded_when_no_search_can_find_it() {
    let runs = Arc::new(AtomicUsize::new(0));
    let marked = tool("get_weather", "The weather.", &[], &runs).with_metadata(ToolMetadata {
        defer_loading: true,
        ..ToolMetadata::default()
    });
    let exec = Executor::builder()
        .registered_tools(false)
        .tool(marked)
        .build()
        .unwrap();
    let (mock, url) = serve(vec![anthropic(
        json!([{ "type": "text", "text": "Sunny." }]),
        "end_turn",
    )])
    .await;
    let model = AnthropicModel::new("claude-sonnet-4-5").with_base_url(&url);
    let agent = Agent::builder(model).executor(exec).build();
    agent.run("Weather?", &RunOptions::default()).await.unwrap();
    let sent = bodies(&mock);
    assert_eq!(names(&sent[0]["tools"]), ["get_weather"]);
    assert!(
        deferred(&sent[0]["tools"]).is_empty(),
        "{}",
        sent[0]["tools"]
    );
}

#[tokio::test]
async fn openai_responses_groups_a_services_tools_in_a_namespace_and_loads_them_in_it() {
    let runs = Arc::new(AtomicUsize::new(0));
    let none = Arc::new(AtomicUsize::new(0));
    let exec = Executor::builder()
        .registered_tools(false)
        .tool_with(
            tool(
                "get_weather",
                "The weather forecast for a city.",
                &["rain", "forecast"],
                &runs,
            ),
            |t| t.namespace("travel", "Weather, flights and hotels."),
        )
        .tool_with(
            tool("book_flight", "Books a flight.", &["plane"], &none),
            |t| t.namespace("travel", "Weather, flights and hotels."),
        )
        .tool(tool("find_hotel", "Finds a hotel.", &["room"], &none))
        .build()
        .unwrap();
    let search = local_search(&exec);
    let (mock, url) = serve(vec![
        responses(
            json!([{ "type": "tool_search_call", "id": "tsc_1", "call_id": "call_1",
            "execution": "client", "status": "completed",
            "arguments": { "query": "weather forecast" } }]),
        ),
        responses(
            json!([{ "type": "function_call", "id": "fc_1", "call_id": "call_2",
            "namespace": "travel", "name": "get_weather",
            "arguments": "{\"city\":\"Paris\"}", "status": "completed" }]),
        ),
        responses(
            json!([{ "type": "message", "id": "msg_1", "role": "assistant",
            "status": "completed",
            "content": [{ "type": "output_text", "text": "Rain.", "annotations": [] }] }]),
        ),
    ])
    .await;
    let agent = Agent::builder(OpenAiResponsesModel::new("gpt-5.4").with_base_url(&url))
        .executor(exec)
        .tool_search(search)
        .build();
    let result = agent
        .run("Will it rain in Paris?", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.text, "Rain.");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let tools = assert_same_tools_every_step(&mock);
    assert_eq!(tools[0]["type"], "namespace");
    assert_eq!(tools[0]["name"], "travel");
    assert_eq!(names(&tools[0]["tools"]), ["get_weather", "book_flight"]);
    assert_eq!(deferred(&tools[0]["tools"]), ["get_weather", "book_flight"]);
    let sent = bodies(&mock);
    let loaded = &sent[1]["input"][2];
    assert_eq!(loaded["type"], "tool_search_output");
    assert_eq!(
        loaded["tools"],
        json!([{ "type": "namespace", "name": "travel",
                 "description": "Weather, flights and hotels.",
                 "tools": [tools[0]["tools"][0].clone()] }])
    );
    let called = &sent[2]["input"][3];
    assert_eq!(called["type"], "function_call");
    assert_eq!(called["namespace"], "travel");
    assert_eq!(called["name"], "get_weather");
    golden(
        "openai-responses-namespace",
        "openai-responses.request",
        &sent,
    );
}
