//! MCP end to end: our rmcp client against our server in-process (a duplex pipe), tools imported
//! from our own server, and the official Python SDK's client against the example server.
#![cfg(feature = "mcp")]

use std::sync::Arc;
use std::time::Duration;

use ai_tool::mcp::rmcp::model::{
    CallToolRequestParams, PaginatedRequestParams, ProgressNotificationParam,
};
#[allow(deprecated)] // MCP logging: deprecated by SEP-2577, still in every version we speak
use ai_tool::mcp::rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams,
};
use ai_tool::mcp::rmcp::service::{NotificationContext, RoleClient, RunningService, ServiceError};
use ai_tool::mcp::rmcp::{ClientHandler, ServiceExt};
use ai_tool::mcp::{McpBuilderExt, McpServer, McpTools, RefreshingExecutor, TOOLS_PER_PAGE};
use ai_tool::prelude::*;
use ai_tool::{SafetyHints, ToolMetadata};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::{mpsc, Notify};

struct Shop;

#[derive(Serialize, JsonSchema)]
struct Sum {
    total: i64,
}

#[ai_tools]
impl Shop {
    /// Adds two numbers.
    #[ai_tool(read_only, title = "Add two numbers")]
    fn add(&self, a: i64, b: i64) -> Sum {
        Sum { total: a + b }
    }

    /// Always fails.
    #[ai_tool]
    fn closed(&self) -> Result<String, String> {
        Err("the shop is closed".into())
    }
}

/// Sends whether the call had been cancelled when its future goes away.
struct ReportOnDrop(ToolContext<'static>, mpsc::UnboundedSender<bool>);

impl Drop for ReportOnDrop {
    fn drop(&mut self) {
        let _ = self.1.send(self.0.is_cancelled());
    }
}

/// A tool that runs until it is cancelled, and reports how it ended on `ended`.
fn forever(ended: mpsc::UnboundedSender<bool>) -> DynamicTool {
    DynamicTool::new(
        "slow.forever",
        "Runs until cancelled",
        json!({ "type": "object", "properties": {} }),
        move |_args, ctx| {
            let report = ReportOnDrop(ctx.clone(), ended.clone());
            async move {
                ctx.cancellation_token().cancelled().await;
                drop(report);
                Ok(ToolOutput::text("cancelled"))
            }
        },
    )
    .with_metadata(ToolMetadata {
        hints: SafetyHints {
            read_only: Some(true),
            ..SafetyHints::default()
        },
        ..ToolMetadata::default()
    })
}

fn executor(ended: mpsc::UnboundedSender<bool>) -> Executor {
    Executor::builder()
        .service(Arc::new(Shop))
        .tool(forever(ended))
        .build()
        .unwrap()
}

/// The client's end of a connection to `server`, which serves it in a task of its own.
fn in_process(server: McpServer) -> tokio::io::DuplexStream {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    client_end
}

/// Our server on one end of a pipe, our client on the other.
async fn connect(exec: Executor) -> RunningService<RoleClient, ()> {
    let client_end = in_process(McpServer::new(exec).unwrap());
    ().serve(client_end).await.unwrap()
}

fn call(name: &str, args: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = args.as_object().cloned();
    params
}

#[tokio::test]
async fn lists_every_tool_with_title_schema_and_hints() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let client = connect(executor(tx)).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["add", "closed", "slow.forever"]);
    let add = serde_json::to_value(&tools[0]).unwrap();
    assert_eq!(add["title"], "Add two numbers");
    assert_eq!(add["description"], "Adds two numbers.");
    assert_eq!(add["annotations"]["readOnlyHint"], true);
    assert_eq!(add["inputSchema"]["required"], json!(["a", "b"]));
    let forever = serde_json::to_value(&tools[2]).unwrap();
    assert_eq!(forever["annotations"]["readOnlyHint"], true);
}

#[tokio::test]
async fn a_call_returns_structured_content_and_its_text() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let client = connect(executor(tx)).await;
    let result = client
        .call_tool(call("add", json!({ "a": 2, "b": 3 })))
        .await
        .unwrap();
    let result = serde_json::to_value(&result).unwrap();
    assert_eq!(result["structuredContent"], json!({ "total": 5 }));
    assert_eq!(result["content"][0]["type"], "text");
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, json!({ "total": 5 }));
    assert_ne!(result["isError"], true);
}

#[tokio::test]
async fn invalid_arguments_are_an_is_error_result_naming_the_problem() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let client = connect(executor(tx)).await;
    let result = client
        .call_tool(call("add", json!({ "a": "two", "b": 3 })))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    let text = serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.contains("/a"), "{text}");
}

#[tokio::test]
async fn a_failing_tool_is_an_is_error_result_with_its_message() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let client = connect(executor(tx)).await;
    let result = client.call_tool(call("closed", json!({}))).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(text.contains("the shop is closed"), "{text}");
}

#[tokio::test]
async fn an_unknown_tool_is_a_protocol_error_naming_close_tools() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let client = connect(executor(tx)).await;
    let err = client
        .call_tool(call("ad", json!({ "a": 1, "b": 2 })))
        .await
        .unwrap_err();
    let ServiceError::McpError(data) = err else {
        panic!("expected a JSON-RPC error, got {err:?}")
    };
    assert_eq!(data.code.0, -32602);
    assert!(data.message.contains("add"), "{}", data.message);
}

#[tokio::test]
async fn a_client_abandoning_a_call_cancels_the_tool() {
    let (tx, mut ended) = mpsc::unbounded_channel();
    let client = connect(executor(tx)).await;
    let abandoned = tokio::time::timeout(
        Duration::from_millis(200),
        client.call_tool(call("slow.forever", json!({}))),
    )
    .await;
    assert!(abandoned.is_err(), "the call should still be running");
    let cancelled = tokio::time::timeout(Duration::from_secs(10), ended.recv())
        .await
        .expect("the tool was not stopped");
    assert_eq!(cancelled, Some(true));
}

#[tokio::test]
async fn a_long_list_comes_in_pages_and_each_tool_once() {
    let count = TOOLS_PER_PAGE * 2 + 7;
    let tools = (0..count).map(|i| {
        DynamicTool::new(
            format!("t{i:04}"),
            "A tool",
            json!({ "type": "object" }),
            |_, _| async { Ok(ToolOutput::empty()) },
        )
    });
    let exec = Executor::builder()
        .registered_tools(false)
        .tools(tools)
        .build()
        .unwrap();
    let client = connect(exec).await;
    let first = client
        .list_tools(Some(PaginatedRequestParams::default()))
        .await
        .unwrap();
    assert_eq!(first.tools.len(), TOOLS_PER_PAGE);
    assert!(first.next_cursor.is_some());
    let all = client.list_all_tools().await.unwrap();
    let mut names: Vec<String> = all.iter().map(|t| t.name.to_string()).collect();
    names.dedup();
    assert_eq!(names.len(), count);
}

/// A client that keeps the progress notifications it gets.
struct ProgressLog(mpsc::UnboundedSender<(f64, Option<f64>, Option<String>)>);

impl ClientHandler for ProgressLog {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send((params.progress, params.total, params.message));
    }
}

#[tokio::test]
async fn a_tools_progress_reaches_the_client_as_notifications() {
    let halfway = DynamicTool::new(
        "halfway",
        "Reports progress twice",
        json!({ "type": "object" }),
        |_, ctx| async move {
            ctx.progress(1.0, Some(2.0), Some("half"));
            ctx.progress(2.0, Some(2.0), None);
            Ok(ToolOutput::text("done"))
        },
    );
    let exec = Executor::builder()
        .registered_tools(false)
        .tool(halfway)
        .build()
        .unwrap();
    let client_end = in_process(McpServer::new(exec).unwrap());
    let (tx, mut reports) = mpsc::unbounded_channel();
    let client = ProgressLog(tx).serve(client_end).await.unwrap();
    let result = client.call_tool(call("halfway", json!({}))).await.unwrap();
    assert_ne!(result.is_error, Some(true));
    let first = tokio::time::timeout(Duration::from_secs(5), reports.recv()).await;
    assert_eq!(
        first.unwrap(),
        Some((1.0, Some(2.0), Some("half".to_owned())))
    );
    let second = tokio::time::timeout(Duration::from_secs(5), reports.recv()).await;
    assert_eq!(second.unwrap(), Some((2.0, Some(2.0), None)));
}

/// The tool's reports come before its result on the wire, even the report made just before
/// it returned: a client refuses progress for a request it has its answer to.
#[tokio::test]
async fn a_tools_last_progress_comes_before_its_result() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let reports = 50;
    let counting = DynamicTool::new(
        "counting",
        "Reports progress, then returns at once",
        json!({ "type": "object" }),
        move |_, ctx| async move {
            for done in 1..=reports {
                ctx.progress(f64::from(done), Some(f64::from(reports)), None);
            }
            Ok(ToolOutput::text("done"))
        },
    );
    let exec = Executor::builder()
        .registered_tools(false)
        .tool(counting)
        .build()
        .unwrap();
    let client_end = in_process(McpServer::new(exec).unwrap());
    let (read, mut write) = tokio::io::split(client_end);
    let mut lines = tokio::io::BufReader::new(read).lines();
    let messages = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"counting","arguments":{},"_meta":{"progressToken":"p1"}}}"#,
    ];
    for message in messages {
        write.write_all(message.as_bytes()).await.unwrap();
        write.write_all(b"\n").await.unwrap();
    }
    let mut progress = Vec::new();
    loop {
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("the server answers")
            .unwrap()
            .expect("the server keeps the line open");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["method"] == "notifications/progress" {
            assert_eq!(message["params"]["progressToken"], "p1");
            progress.push(message["params"]["progress"].as_f64().unwrap());
        } else if message["id"] == 2 {
            assert_eq!(message["result"]["content"][0]["text"], "done", "{message}");
            break;
        }
    }
    let expected: Vec<f64> = (1..=reports).map(f64::from).collect();
    assert_eq!(
        progress, expected,
        "every report, in order, before the result"
    );
}

#[tokio::test]
async fn the_output_schema_is_served_and_the_structured_result_matches_it() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let client = connect(executor(tx)).await;
    let tools = client.list_all_tools().await.unwrap();
    let add = serde_json::to_value(&tools[0]).unwrap();
    let schema = &add["outputSchema"];
    assert_eq!(schema["type"], "object", "{add}");
    assert_eq!(schema["properties"]["total"]["type"], "integer", "{add}");
    // `closed` returns text: no outputSchema.
    let closed = serde_json::to_value(&tools[1]).unwrap();
    assert!(closed.get("outputSchema").is_none(), "{closed}");
    let result = client
        .call_tool(call("add", json!({ "a": 2, "b": 3 })))
        .await
        .unwrap();
    let structured = result.structured_content.expect("structured content");
    let validator = jsonschema::validator_for(schema).unwrap();
    assert!(
        validator.is_valid(&structured),
        "{structured} against {schema}"
    );
    assert!(!validator.is_valid(&json!({ "total": "five" })));
}

/// A client that keeps the log messages it gets.
struct LogBook(mpsc::UnboundedSender<(String, Option<String>, Value)>);

#[allow(deprecated)] // MCP logging
impl ClientHandler for LogBook {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level).unwrap();
        let level = level.as_str().unwrap_or_default().to_owned();
        let _ = self.0.send((level, params.logger, params.data));
    }
}

#[tokio::test]
#[allow(deprecated)] // MCP logging
async fn a_tools_log_reaches_the_client_at_the_level_it_set() {
    let chatty = DynamicTool::new(
        "chatty",
        "Logs at three levels",
        json!({ "type": "object", "properties": { "n": { "type": "integer" } } }),
        |args, ctx| async move {
            let n = &args["n"];
            ctx.log(LogLevel::Debug, &format!("debug {n}"));
            ctx.log(LogLevel::Info, &format!("info {n}"));
            ctx.log(LogLevel::Warning, &format!("warning {n}"));
            Ok(ToolOutput::text("said it"))
        },
    );
    let exec = Executor::builder()
        .registered_tools(false)
        .tool(chatty)
        .build()
        .unwrap();
    let client_end = in_process(McpServer::new(exec).unwrap());
    let (tx, mut messages) = mpsc::unbounded_channel();
    let client = LogBook(tx).serve(client_end).await.unwrap();
    // Before the client sets a level, nothing is sent.
    client
        .call_tool(call("chatty", json!({ "n": 1 })))
        .await
        .unwrap();
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
        .await
        .unwrap();
    client
        .call_tool(call("chatty", json!({ "n": 2 })))
        .await
        .unwrap();
    let mut got = Vec::new();
    for _ in 0..2 {
        let message = tokio::time::timeout(Duration::from_secs(5), messages.recv()).await;
        got.push(message.expect("a log message").unwrap());
    }
    assert_eq!(
        got,
        [
            (
                "info".to_owned(),
                Some("chatty".to_owned()),
                json!("info 2")
            ),
            (
                "warning".to_owned(),
                Some("chatty".to_owned()),
                json!("warning 2")
            ),
        ]
    );
}

#[tokio::test]
async fn without_a_sink_a_tools_log_goes_nowhere() {
    let ctx = ToolContext::detached("quiet");
    assert!(!ctx.wants_log());
    ctx.log(LogLevel::Error, "nobody reads this");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let sink: ai_tool::LogSink = Arc::new(move |level, message: &str| {
        let _ = tx.send((level, message.to_owned()));
    });
    let tool = DynamicTool::new(
        "loud",
        "Logs once",
        json!({ "type": "object" }),
        |_, ctx| async move {
            ctx.log(LogLevel::Notice, "hello");
            Ok(ToolOutput::empty())
        },
    );
    let exec = Executor::builder()
        .registered_tools(false)
        .tool(tool)
        .build()
        .unwrap();
    exec.execute_with("loud", json!({}), &CallOptions::default().with_log(sink))
        .await
        .unwrap();
    assert_eq!(
        rx.recv().await,
        Some((LogLevel::Notice, "hello".to_owned()))
    );
}

#[tokio::test]
async fn with_search_a_session_sees_search_tools_then_what_it_found() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let client_end = in_process(McpServer::new(executor(tx)).unwrap().with_search().unwrap());
    let client = ().serve(client_end).await.unwrap();
    let listed = |tools: Vec<ai_tool::mcp::rmcp::model::Tool>| -> Vec<String> {
        tools.iter().map(|t| t.name.to_string()).collect()
    };
    assert_eq!(
        listed(client.list_all_tools().await.unwrap()),
        ["search_tools"]
    );
    let err = client
        .call_tool(call("add", json!({ "a": 1, "b": 2 })))
        .await
        .unwrap_err();
    let ServiceError::McpError(data) = err else {
        panic!("expected a JSON-RPC error, got {err:?}")
    };
    assert!(data.message.contains("search_tools"), "{}", data.message);
    let found = client
        .call_tool(call(
            "search_tools",
            json!({ "query": "add two numbers", "limit": 1 }),
        ))
        .await
        .unwrap();
    assert_eq!(found.structured_content.unwrap()["tools"][0]["name"], "add");
    assert_eq!(
        listed(client.list_all_tools().await.unwrap()),
        ["search_tools", "add"]
    );
    let result = client
        .call_tool(call("add", json!({ "a": 1, "b": 2 })))
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({ "total": 3 })));
    let refused = client
        .call_tool(call("search_tools", json!({ "limit": 0 })))
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
}

// Import: our client's executor over our server.

/// The shop's tools, imported from a server in-process.
async fn shop_tools(exec: Executor) -> McpTools {
    let client_end = in_process(
        McpServer::new(exec)
            .unwrap()
            .with_server_info("shop", "1.0.0"),
    );
    McpTools::connect("in-process shop", client_end)
        .await
        .unwrap()
}

/// The shop's tools, imported, and an executor of them.
async fn imported(exec: Executor) -> (McpTools, Executor) {
    let tools = shop_tools(exec).await;
    let local = Executor::builder()
        .registered_tools(false)
        .mcp(&tools)
        .build()
        .unwrap();
    (tools, local)
}

#[tokio::test]
async fn imported_tools_are_namespaced_and_called_through_the_server() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let (tools, local) = imported(executor(tx)).await;
    assert_eq!(tools.namespace(), "shop");
    let names: Vec<&str> = local.tools().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["shop.add", "shop.closed", "shop.slow.forever"]);
    let spec = local.spec("shop.add").unwrap();
    assert_eq!(spec.metadata.title.as_deref(), Some("Add two numbers"));
    assert_eq!(spec.metadata.hints.read_only, Some(true));
    let out = local
        .execute("shop.add", json!({ "a": 40, "b": 2 }))
        .await
        .unwrap();
    assert_eq!(out.structured, Some(json!({ "total": 42 })));
}

/// An import declared as one namespace (OpenAI Responses), described by the server's
/// instructions, and deferred: the server's tools go in a `namespace` object, each for loading
/// on demand, and calls come back to their real names.
#[tokio::test]
async fn an_import_is_declared_as_its_servers_namespace_and_deferred() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let server = McpServer::new(executor(tx))
        .unwrap()
        .with_server_info("shop", "1.0.0")
        .with_instructions("The shop: prices and arithmetic.");
    let tools = McpTools::connect("in-process shop", in_process(server))
        .await
        .unwrap()
        .declared_as_namespace()
        .defer_loading();
    let local = Executor::builder()
        .registered_tools(false)
        .mcp(&tools)
        .build()
        .unwrap();
    let spec = local.spec("shop.add").unwrap();
    assert!(spec.metadata.defer_loading);
    let declared = local.declarations(Format::OpenAiResponses, &DeclareOptions::default());
    let [group] = declared.tools.as_array().unwrap().as_slice() else {
        panic!("one namespace: {}", declared.tools);
    };
    assert_eq!(group["type"], "namespace");
    assert_eq!(group["name"], "shop");
    assert_eq!(group["description"], "The shop: prices and arithmetic.");
    let inside: Vec<&str> = (group["tools"].as_array().unwrap().iter())
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(inside, ["shop_add", "shop_closed", "shop_slow_forever"]);
    assert!(group["tools"][0]["defer_loading"] == true);
    let calls = ai_tool::provider::parse_calls(
        Format::OpenAiResponses,
        &json!({ "output": [{ "type": "function_call", "call_id": "c1", "namespace": "shop", "name": "shop_add", "arguments": "{\"a\":1,\"b\":2}" }] }),
        &declared.aliases,
    )
    .unwrap();
    assert_eq!(calls[0].name, "shop.add");
    // Without instructions, the group says whose tools they are.
    let (tx, _rx) = mpsc::unbounded_channel();
    let plain = shop_tools(executor(tx)).await.declared_as_namespace();
    let local = Executor::builder()
        .registered_tools(false)
        .mcp(&plain)
        .build()
        .unwrap();
    let declared = local.declarations(Format::OpenAiResponses, &DeclareOptions::default());
    assert_eq!(
        declared.tools[0]["description"],
        "The tools of the MCP server in-process shop."
    );
    assert!(!local.spec("shop.add").unwrap().metadata.defer_loading);
}

/// A server's tools that ask the user (`ask`) and that hold until released (`hold`).
/// A server's request to a model during an imported call goes to that call's caller's model
/// when the import forwards sampling: its messages, instructions and token cap; a caller that
/// cannot answer leaves the server's tool told so.
#[tokio::test]
async fn a_servers_sampling_request_is_passed_on_to_the_callers_model() {
    use ai_tool::mcp::ImportLimits;
    use ai_tool::{Sampled, Sampler, SamplingRequest, Speaker};
    let greet = DynamicTool::new(
        "greet",
        "Greets, in the client's model's words.",
        json!({ "type": "object", "properties": {} }),
        |_, ctx| async move {
            let request = SamplingRequest::new("Say hello to Ada.")
                .with_system("Be brief.")
                .with_max_tokens(20);
            let answer = ctx.sample(request).await?;
            Ok(ToolOutput::text(format!(
                "{} ({})",
                answer.text, answer.model
            )))
        },
    );
    let exec = Executor::builder()
        .registered_tools(false)
        .tool(greet)
        .build()
        .unwrap();
    let server = McpServer::new(exec)
        .unwrap()
        .with_server_info("greeter", "1");
    let limits = ImportLimits::default().with_forwarded_sampling();
    let tools = McpTools::connect_with(
        "greeter",
        in_process(server),
        Duration::from_secs(10),
        limits,
    )
    .await
    .unwrap();
    let local = Executor::builder()
        .registered_tools(false)
        .mcp(&tools)
        .build()
        .unwrap();
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let model: Sampler = {
        let asked = Arc::clone(&asked);
        Arc::new(move |request: SamplingRequest| {
            asked.lock().unwrap().push(request);
            Box::pin(async {
                Ok(Sampled {
                    text: "Hello, Ada!".into(),
                    model: "local-model".into(),
                    stop_reason: Some("endTurn".into()),
                })
            })
        })
    };
    let out = local
        .execute_with(
            "greeter.greet",
            json!({}),
            &CallOptions::default().with_sampler(model),
        )
        .await
        .unwrap();
    assert_eq!(out.to_text(), "Hello, Ada! (local-model)");
    let first = asked.lock().unwrap()[0].clone();
    assert_eq!(
        first.messages,
        [(Speaker::User, "Say hello to Ada.".to_owned())]
    );
    assert_eq!(first.system.as_deref(), Some("Be brief."));
    assert_eq!(first.max_tokens, 20);
    // A caller without a model: the server's tool is told, and fails.
    let err = local.execute("greeter.greet", json!({})).await.unwrap_err();
    assert!(err.to_string().contains("can ask a model"), "{err}");
}

fn asking_server(started: mpsc::UnboundedSender<()>, release: Arc<Notify>) -> McpServer {
    let ask = DynamicTool::new(
        "ask",
        "Asks for an email.",
        json!({ "type": "object", "properties": {} }),
        |_, ctx| async move {
            let schema = json!({ "type": "object", "properties": { "email": { "type": "string" } }, "required": ["email"] });
            let answer = ctx.elicit("Which email?", schema).await?;
            Ok(ToolOutput::text(format!("{answer:?}")))
        },
    );
    let hold = DynamicTool::new(
        "hold",
        "Holds until released.",
        json!({ "type": "object", "properties": {} }),
        move |_, _| {
            let (started, release) = (started.clone(), Arc::clone(&release));
            async move {
                let _ = started.send(());
                release.notified().await;
                Ok(ToolOutput::text("released"))
            }
        },
    );
    let exec = Executor::builder()
        .registered_tools(false)
        .tool(ask)
        .tool(hold)
        .build()
        .unwrap();
    McpServer::new(exec)
        .unwrap()
        .with_server_info("asker", "1.0.0")
}

/// An import that forwards elicitation passes a server's question on to the caller of the call
/// in flight, and refuses to when several are (MCP names no call in a question), or when no
/// one can answer; without forwarding, the server is told the import cannot answer.
#[tokio::test]
async fn a_servers_question_reaches_the_caller_of_the_one_call_in_flight() {
    use ai_tool::mcp::ImportLimits;
    use ai_tool::{Elicitation, Elicited, Elicitor};
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let server = asking_server(started_tx.clone(), Arc::clone(&release));
    let limits = ImportLimits::default().with_forwarded_elicitation();
    let tools =
        McpTools::connect_with("asker", in_process(server), Duration::from_secs(10), limits)
            .await
            .unwrap();
    let local = Executor::builder()
        .registered_tools(false)
        .mcp(&tools)
        .build()
        .unwrap();
    let user: Elicitor = Arc::new(|question: Elicitation| {
        // The user is told whose question it is.
        assert_eq!(question.message, "The MCP server asker asks: Which email?");
        Box::pin(async { Ok(Elicited::Accepted(json!({ "email": "a@example.com" }))) })
    });
    let answering = CallOptions::default().with_elicitor(user);
    let out = local
        .execute_with("asker.ask", json!({}), &answering)
        .await
        .unwrap();
    assert!(out.to_text().contains("a@example.com"), "{}", out.to_text());
    // A caller that cannot answer: the server's tool is told.
    let err = local.execute("asker.ask", json!({})).await.unwrap_err();
    assert!(err.to_string().contains("no call in flight"), "{err}");
    // Two calls in flight (whether or not their callers can answer): the question goes to
    // neither.
    let holding = {
        let local = local.clone();
        let answering = answering.clone();
        tokio::spawn(async move {
            local
                .execute_with("asker.hold", json!({}), &answering)
                .await
        })
    };
    started.recv().await.unwrap();
    let err = local
        .execute_with("asker.ask", json!({}), &answering)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("several calls are in flight"),
        "{err}"
    );
    release.notify_one();
    assert_eq!(holding.await.unwrap().unwrap().to_text(), "released");

    // Without forwarding, the import declares no elicitation and the tool is told so.
    let server = asking_server(started_tx, Arc::new(Notify::new()));
    let tools = McpTools::connect("asker", in_process(server))
        .await
        .unwrap();
    let local = Executor::builder()
        .registered_tools(false)
        .mcp(&tools)
        .build()
        .unwrap();
    let err = local
        .execute_with("asker.ask", json!({}), &answering)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("cannot ask the user"), "{err}");
}

/// The import asks for the newest protocol version unless told another
/// (`ImportLimits::with_protocol_version`); the server answers with what it speaks.
#[tokio::test]
async fn an_import_asks_for_the_protocol_version_it_is_given() {
    use ai_tool::mcp::rmcp::model::ProtocolVersion;
    use ai_tool::mcp::ImportLimits;
    for (asked, spoken) in [
        // 2026-07-28 has no `initialize`: a server answers it with its newest that has.
        (None, "2025-11-25"),
        (Some(ProtocolVersion::V_2025_11_25), "2025-11-25"),
        (Some(ProtocolVersion::V_2025_06_18), "2025-06-18"),
    ] {
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut limits = ImportLimits::default();
        if let Some(version) = asked {
            limits = limits.with_protocol_version(version);
        }
        let client_end = in_process(McpServer::new(executor(tx)).unwrap());
        let tools = McpTools::connect_with(
            "in-process shop",
            client_end,
            Duration::from_secs(10),
            limits,
        )
        .await
        .unwrap();
        assert_eq!(tools.protocol_version().as_deref(), Some(spoken));
        assert_eq!(tools.listed().len(), 3);
    }
}

#[tokio::test]
async fn an_imported_server_is_a_toolset_to_filter_rename_and_cache() {
    use ai_tool::toolset::{ResultCache, Toolset};
    let (tx, _rx) = mpsc::unbounded_channel();
    let tools = shop_tools(executor(tx)).await;
    let cache = ResultCache::shared(Duration::from_secs(60));
    let local = Toolset::from_tools(tools.tools())
        .filter(|spec| spec.metadata.hints.read_only == Some(true))
        .renamed("shop.add", "sum")
        .layer(cache.clone())
        .into_executor()
        .unwrap();
    let names: Vec<&str> = local.tools().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["sum", "shop.slow.forever"], "the read-only ones");
    for _ in 0..2 {
        let out = local
            .execute("sum", json!({ "a": 40, "b": 2 }))
            .await
            .unwrap();
        assert_eq!(out.structured, Some(json!({ "total": 42 })));
    }
    assert_eq!(cache.len(), 1, "the read-only tool's result was kept");
}

#[tokio::test]
async fn imported_arguments_are_validated_before_anything_is_sent() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let (_tools, local) = imported(executor(tx)).await;
    let err = local
        .execute("shop.add", json!({ "a": 1 }))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
}

#[tokio::test]
async fn an_is_error_result_is_a_failed_tool_error_with_the_servers_text() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let (_tools, local) = imported(executor(tx)).await;
    let err = local.execute("shop.closed", json!({})).await.unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Failed);
    assert!(err.to_string().contains("the shop is closed"), "{err}");
}

#[tokio::test]
async fn cancelling_an_imported_call_cancels_it_on_the_server() {
    let (tx, mut ended) = mpsc::unbounded_channel();
    let (_tools, local) = imported(executor(tx)).await;
    let token = CancellationToken::new();
    let options = CallOptions::default().with_cancellation(token.clone());
    let call = local.execute_with("shop.slow.forever", json!({}), &options);
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        token.cancel();
    };
    let (result, ()) = tokio::join!(call, cancel);
    assert_eq!(result.unwrap_err().kind(), ToolErrorKind::Cancelled);
    let cancelled = tokio::time::timeout(Duration::from_secs(10), ended.recv())
        .await
        .expect("the server's tool was not stopped");
    assert_eq!(cancelled, Some(true));
}

#[tokio::test]
async fn an_imported_call_past_its_time_limit_is_timed_out_and_cancelled_on_the_server() {
    let (tx, mut ended) = mpsc::unbounded_channel();
    let client_end = in_process(McpServer::new(executor(tx)).unwrap());
    let tools = McpTools::connect("in-process shop", client_end)
        .await
        .unwrap();
    let local = Executor::builder()
        .registered_tools(false)
        .default_timeout(Duration::from_millis(200))
        .mcp(&tools)
        .build()
        .unwrap();
    let err = local
        .execute("ai-tool.slow.forever", json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::TimedOut);
    let cancelled = tokio::time::timeout(Duration::from_secs(10), ended.recv())
        .await
        .expect("the server's tool was not stopped");
    assert_eq!(cancelled, Some(true));
}

#[tokio::test(start_paused = true)]
async fn a_server_that_never_answers_initialize_is_a_handshake_error_in_time() {
    // The other end is kept open and never written to.
    let (_silent, client_end) = tokio::io::duplex(1 << 16);
    let started = tokio::time::Instant::now();
    let Err(err) = McpTools::connect("silent server", client_end).await else {
        panic!("a server that never answers connected");
    };
    assert_eq!(started.elapsed(), ai_tool::mcp::HANDSHAKE_TIMEOUT);
    let shown = err.to_string();
    assert!(
        matches!(err, ai_tool::mcp::McpError::Handshake { .. })
            && shown.contains("silent server")
            && shown.contains("initialize"),
        "{shown}"
    );
    // A limit of one's own.
    let (_silent, client_end) = tokio::io::duplex(1 << 16);
    let started = tokio::time::Instant::now();
    let limit = Duration::from_secs(600);
    let connected = McpTools::connect_within("slow to start", client_end, limit).await;
    assert!(connected.is_err());
    assert_eq!(started.elapsed(), limit);
    // A command that never speaks, with a limit of its own.
    let mut command = tokio::process::Command::new("sleep");
    command.arg("3600");
    let started = tokio::time::Instant::now();
    let Err(err) = McpTools::connect_stdio_within(command, limit).await else {
        panic!("a silent command connected");
    };
    assert_eq!(started.elapsed(), limit);
    assert!(err.to_string().contains("\"sleep\""), "{err}");
}

#[tokio::test]
async fn a_server_that_went_away_is_a_failure_naming_it() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let server = McpServer::new(executor(tx)).unwrap();
    let serving = tokio::spawn(async move {
        let running = server.serve(server_end).await.unwrap();
        let _ = running.waiting().await;
    });
    let tools = McpTools::connect("in-process shop", client_end)
        .await
        .unwrap();
    let local = Executor::builder()
        .registered_tools(false)
        .default_timeout(Duration::from_secs(10))
        .mcp(&tools)
        .build()
        .unwrap();
    serving.abort();
    let _ = serving.await;
    let err = local
        .execute("ai-tool.add", json!({ "a": 1, "b": 2 }))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Failed, "{err}");
    assert!(err.to_string().contains("in-process shop"), "{err}");
}

#[tokio::test]
async fn a_connection_cut_mid_call_fails_the_call_naming_the_server_and_the_executor_goes_on() {
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let waits = DynamicTool::new(
        "slow.waits",
        "Says it started, then waits for ever",
        json!({ "type": "object", "properties": {} }),
        move |_args, _ctx| {
            let _ = started_tx.send(());
            std::future::pending()
        },
    );
    let exec = Executor::builder()
        .service(Arc::new(Shop))
        .tool(waits)
        .build()
        .unwrap();
    // Client and server talk through a wire (a task copying between two pipes): cutting it is
    // the server gone at once, without a word, as when its process is killed.
    let (server_end, wire_server) = tokio::io::duplex(1 << 16);
    let (wire_client, client_end) = tokio::io::duplex(1 << 16);
    let server = McpServer::new(exec).unwrap();
    tokio::spawn(async move {
        let running = server.serve(server_end).await.unwrap();
        let _ = running.waiting().await;
    });
    let wire = tokio::spawn(async move {
        let (mut a, mut b) = (wire_server, wire_client);
        let _ = tokio::io::copy_bidirectional(&mut a, &mut b).await;
    });
    let tools = McpTools::connect("in-process shop", client_end)
        .await
        .unwrap();
    // No time limit: only the server's going away may end the call.
    let local = Executor::builder()
        .registered_tools(false)
        .mcp(&tools)
        .tool(DynamicTool::new(
            "local.echo",
            "Echoes",
            json!({ "type": "object" }),
            |args, _| async move { Ok(ToolOutput::json(args)) },
        ))
        .build()
        .unwrap();
    let pending = {
        let local = local.clone();
        tokio::spawn(async move { local.execute("ai-tool.slow.waits", json!({})).await })
    };
    started.recv().await.expect("the server's tool started");
    wire.abort();
    let err = tokio::time::timeout(Duration::from_secs(10), pending)
        .await
        .expect("the call still waits for a server that is gone")
        .unwrap()
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Failed, "{err}");
    assert!(err.to_string().contains("in-process shop"), "{err}");
    let out = local
        .execute("local.echo", json!({ "a": 1 }))
        .await
        .unwrap();
    let echoed: Value = serde_json::from_str(&out.to_text()).unwrap();
    assert_eq!(echoed, json!({ "a": 1 }));
}

#[tokio::test]
async fn an_imported_servers_progress_reaches_the_callers_context() {
    // The server's tool reports, then waits until the test has seen the report arrive.
    let seen = Arc::new(Notify::new());
    let released = seen.clone();
    let reporting = DynamicTool::new(
        "reporting",
        "Reports progress, then waits",
        json!({ "type": "object" }),
        move |_, ctx| {
            let released = released.clone();
            async move {
                ctx.progress(1.0, Some(2.0), Some("half"));
                released.notified().await;
                Ok(ToolOutput::text("done"))
            }
        },
    );
    let exec = Executor::builder()
        .registered_tools(false)
        .tool(reporting)
        .build()
        .unwrap();
    let (_tools, local) = imported(exec).await;
    let (tx, mut reports) = mpsc::unbounded_channel();
    let sink: ai_tool::ProgressSink = Arc::new(move |p: ai_tool::Progress<'_>| {
        let _ = tx.send((p.done, p.total, p.message.map(str::to_owned)));
    });
    let options = CallOptions::default().with_progress(sink);
    let call = local.execute_with("shop.reporting", json!({}), &options);
    let watch = async {
        let first = tokio::time::timeout(Duration::from_secs(10), reports.recv()).await;
        seen.notify_one();
        first
    };
    let (result, first) = tokio::join!(call, watch);
    assert_eq!(result.unwrap().to_text(), "done");
    assert_eq!(
        first.expect("no progress came through"),
        Some((1.0, Some(2.0), Some("half".to_owned())))
    );
}

/// Starts `exec` behind Streamable HTTP on a free port of 127.0.0.1; the URL of `/mcp`.
async fn http_server(exec: Executor) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = McpServer::new(exec).unwrap();
    tokio::spawn(ai_tool::mcp::serve_http_with(
        server,
        listener,
        ai_tool::mcp::HttpOptions::default(),
    ));
    format!("http://{addr}/mcp")
}

/// A tool that says when it starts, then runs until cancelled, and reports how it ended.
fn started_then_forever(
    started: mpsc::UnboundedSender<()>,
    ended: mpsc::UnboundedSender<bool>,
) -> DynamicTool {
    DynamicTool::new(
        "hang",
        "Runs until cancelled",
        json!({ "type": "object" }),
        move |_args, ctx| {
            let report = ReportOnDrop(ctx.clone(), ended.clone());
            let _ = started.send(());
            async move {
                ctx.cancellation_token().cancelled().await;
                drop(report);
                Ok(ToolOutput::text("cancelled"))
            }
        },
    )
}

#[tokio::test]
async fn a_client_disconnecting_mid_call_cancels_it_and_other_sessions_go_on() {
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let (ended_tx, mut ended) = mpsc::unbounded_channel();
    let exec = Executor::builder()
        .service(Arc::new(Shop))
        .tool(started_then_forever(started_tx, ended_tx))
        .build()
        .unwrap();
    let url = http_server(exec).await;
    let other = McpTools::connect_http(&url).await.unwrap();
    let leaving = McpTools::connect_http(&url).await.unwrap();
    let leaving_exec = Executor::builder()
        .registered_tools(false)
        .mcp(&leaving)
        .build()
        .unwrap();
    drop(leaving);
    let call = tokio::spawn(async move {
        let _ = leaving_exec.execute("ai-tool.hang", json!({})).await;
    });
    tokio::time::timeout(Duration::from_secs(10), started.recv())
        .await
        .expect("the call did not start");
    // The client goes away with its call in flight: its task, executor and connection dropped.
    call.abort();
    let _ = call.await;
    let cancelled = tokio::time::timeout(Duration::from_secs(10), ended.recv())
        .await
        .expect("the server's tool was not stopped");
    assert_eq!(cancelled, Some(true));
    let other = Executor::builder()
        .registered_tools(false)
        .mcp(&other)
        .build()
        .unwrap();
    let out = other
        .execute("ai-tool.add", json!({ "a": 20, "b": 22 }))
        .await
        .unwrap();
    assert_eq!(out.structured, Some(json!({ "total": 42 })));
}

#[tokio::test]
async fn a_stdio_style_client_closing_its_pipe_mid_call_cancels_it() {
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let (ended_tx, mut ended) = mpsc::unbounded_channel();
    let exec = Executor::builder()
        .registered_tools(false)
        .tool(started_then_forever(started_tx, ended_tx))
        .build()
        .unwrap();
    let client = connect(exec).await;
    let peer = client.peer().clone();
    let call = tokio::spawn(async move { peer.call_tool(call("hang", json!({}))).await });
    tokio::time::timeout(Duration::from_secs(10), started.recv())
        .await
        .expect("the call did not start");
    // Closing the client closes the pipe: the server's session ends.
    let _ = client.cancel().await;
    let cancelled = tokio::time::timeout(Duration::from_secs(10), ended.recv())
        .await
        .expect("the server's tool was not stopped");
    assert_eq!(cancelled, Some(true));
    assert!(call.await.unwrap().is_err());
}

// Streamable HTTP in-process, with requests written by hand to send what clients should not.

mod http {
    use std::net::SocketAddr;

    use ai_tool::mcp::{serve_http_with, HttpOptions, McpServer};
    use ai_tool::prelude::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

    async fn server(options: HttpOptions) -> SocketAddr {
        let exec = Executor::builder().build().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = McpServer::new(exec).unwrap();
        tokio::spawn(serve_http_with(server, listener, options));
        addr
    }

    /// Posts `body` to `/mcp` and returns the response's status and the start of its body.
    async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> (u16, String) {
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n",
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut buf = vec![0; 4096];
        let mut got = 0;
        // The head and the first event are enough; an SSE stream may stay open.
        while got < buf.len() {
            let read = tokio::time::timeout(
                std::time::Duration::from_secs(5),
                stream.read(&mut buf[got..]),
            )
            .await;
            match read {
                Ok(Ok(0)) | Err(_) => break,
                Ok(Ok(n)) => got += n,
                Ok(Err(e)) => panic!("{e}"),
            }
            if String::from_utf8_lossy(&buf[..got]).contains("\"jsonrpc\"") {
                break;
            }
        }
        let text = String::from_utf8_lossy(&buf[..got]).into_owned();
        let status = text
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status line in {text:?}"));
        (status, text)
    }

    fn host(addr: SocketAddr) -> String {
        addr.to_string()
    }

    /// A request of protocol 2026-07-28, which stands alone: no session, its context in `_meta`.
    fn standalone(id: u32, name: &str, arguments: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"raw","version":"0"}}}}}}}}"#
        )
    }

    /// With search on, a client of protocol 2026-07-28 over HTTP has no session to keep what
    /// it found: each request stands alone. What a search found (with the schemas to call it
    /// by) can be called in the next request.
    #[tokio::test]
    async fn a_standalone_client_calls_what_its_search_found() {
        let exec = Executor::builder()
            .service(std::sync::Arc::new(super::Shop))
            .build()
            .unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = McpServer::new(exec).unwrap().with_search().unwrap();
        tokio::spawn(serve_http_with(server, listener, HttpOptions::default()));
        let host = host(addr);
        let headers = |tool: &'static str| {
            [
                ("Host", host.clone()),
                ("MCP-Protocol-Version", "2026-07-28".to_owned()),
                ("Mcp-Method", "tools/call".to_owned()),
                ("Mcp-Name", tool.to_owned()),
            ]
        };
        let search = standalone(1, "search_tools", r#"{"query":"add two numbers"}"#);
        let sent = headers("search_tools");
        let sent: Vec<(&str, &str)> = sent.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (status, text) = post(addr, &sent, &search).await;
        assert_eq!(status, 200, "{text}");
        assert!(text.contains("Now callable:\\nadd"), "{text}");
        assert!(
            text.contains("inputSchema"),
            "the schema to call it by: {text}"
        );
        let call = standalone(2, "add", r#"{"a":2,"b":40}"#);
        let sent = headers("add");
        let sent: Vec<(&str, &str)> = sent.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (status, text) = post(addr, &sent, &call).await;
        assert_eq!(status, 200, "{text}");
        assert!(text.contains("42"), "{text}");
        // A name it knows without a search: there is no session to hold finds, so no gate.
        let unsearched = standalone(3, "closed", "{}");
        let sent = headers("closed");
        let sent: Vec<(&str, &str)> = sent.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (status, text) = post(addr, &sent, &unsearched).await;
        assert_eq!(status, 200, "{text}");
        assert!(text.contains("the shop is closed"), "{text}");
    }

    #[tokio::test]
    async fn a_loopback_host_is_served() {
        let addr = server(HttpOptions::default()).await;
        let (status, text) = post(addr, &[("Host", &host(addr))], INITIALIZE).await;
        assert_eq!(status, 200, "{text}");
        assert!(
            text.contains("\"protocolVersion\":\"2025-06-18\""),
            "{text}"
        );
    }

    #[tokio::test]
    async fn another_host_is_refused_against_dns_rebinding() {
        let addr = server(HttpOptions::default()).await;
        let (status, text) = post(addr, &[("Host", "evil.example")], INITIALIZE).await;
        assert_eq!(status, 403, "{text}");
    }

    #[tokio::test]
    async fn a_host_added_is_served_and_others_still_refused() {
        let options = HttpOptions::default().with_allowed_host("tools.example.com");
        let addr = server(options).await;
        let (status, text) = post(addr, &[("Host", "tools.example.com")], INITIALIZE).await;
        assert_eq!(status, 200, "{text}");
        let (status, text) = post(addr, &[("Host", "evil.example")], INITIALIZE).await;
        assert_eq!(status, 403, "{text}");
    }

    #[test]
    fn a_server_bound_to_an_address_of_its_own_accepts_it_as_host() {
        let bound = |addr: &str| HttpOptions::default().bound_to(addr.parse().unwrap());
        let defaults = HttpOptions::default().allowed_hosts;
        assert!(bound("10.1.2.3:8765")
            .allowed_hosts
            .contains(&"10.1.2.3".to_owned()));
        assert_eq!(bound("0.0.0.0:8765").allowed_hosts, defaults);
        assert_eq!(bound("127.0.0.1:8765").allowed_hosts, defaults);
    }

    #[tokio::test]
    async fn a_foreign_origin_is_refused_and_a_loopback_one_served() {
        let addr = server(HttpOptions::default()).await;
        let headers = [
            ("Host", host(addr)),
            ("Origin", "http://evil.example".into()),
        ];
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (status, text) = post(addr, &headers, INITIALIZE).await;
        assert_eq!(status, 403, "{text}");
        let origin = format!("http://localhost:{}", addr.port());
        let (status, text) = post(
            addr,
            &[("Host", &host(addr)), ("Origin", &origin)],
            INITIALIZE,
        )
        .await;
        assert_eq!(status, 200, "{text}");
    }

    #[tokio::test]
    async fn a_request_without_the_bearer_token_is_unauthorized() {
        let addr = server(HttpOptions::default().with_bearer_token("t0ken")).await;
        let (status, _) = post(addr, &[("Host", &host(addr))], INITIALIZE).await;
        assert_eq!(status, 401);
        let host = host(addr);
        let auth = [("Host", host.as_str()), ("Authorization", "Bearer t0ken")];
        let (status, text) = post(addr, &auth, INITIALIZE).await;
        assert_eq!(status, 200, "{text}");
        // The scheme's name in any case; the token exactly.
        let auth = [("Host", host.as_str()), ("Authorization", "bearer t0ken")];
        let (status, text) = post(addr, &auth, INITIALIZE).await;
        assert_eq!(status, 200, "{text}");
        for wrong in ["Bearer T0KEN", "Bearer t0ke", "Basic t0ken", "Bearer"] {
            let auth = [("Host", host.as_str()), ("Authorization", wrong)];
            let (status, _) = post(addr, &auth, INITIALIZE).await;
            assert_eq!(status, 401, "{wrong}");
        }
    }

    #[tokio::test]
    async fn a_malformed_message_gets_an_error_and_the_server_serves_on() {
        let addr = server(HttpOptions::default()).await;
        let (status, text) = post(addr, &[("Host", &host(addr))], "{not json").await;
        assert!((400..500).contains(&status), "{status} {text}");
        let (status, text) = post(addr, &[("Host", &host(addr))], INITIALIZE).await;
        assert_eq!(status, 200, "{text}");
    }
}

// Over real transports: the example server, the Python SDK and the npm packages as child
// processes (helpers in tests/mcp/support.rs).

#[path = "mcp/support.rs"]
mod support;

#[path = "mcp/processes.rs"]
mod processes;

#[path = "mcp/npm.rs"]
mod npm;

#[path = "mcp/replicas.rs"]
mod replicas;

#[path = "mcp/tasks.rs"]
mod tasks;

#[path = "mcp/rounds.rs"]
mod rounds;

// A gateway: our server serving its own tools and an imported server's.

fn echo(name: &str) -> DynamicTool {
    let schema = json!({ "type": "object", "properties": { "text": { "type": "string" } } });
    DynamicTool::new(name, "Echoes", schema, |args, _| async move {
        Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default()))
    })
}

#[tokio::test]
async fn a_gateway_serves_imported_tools_under_its_own_limits_and_suggests_among_all() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let shop = shop_tools(executor(tx)).await;
    let local = Executor::builder()
        .registered_tools(false)
        .tool(echo("echo"))
        .max_argument_bytes(64)
        .build()
        .unwrap();
    let gateway = McpServer::new(local)
        .unwrap()
        .following(vec![shop])
        .unwrap();
    let client_end = in_process(gateway);
    let client = ().serve(client_end).await.unwrap();
    assert!(client
        .peer_info()
        .and_then(|info| info.capabilities.tools.as_ref()?.list_changed)
        .unwrap_or(false));
    let listed = client.list_tools(None).await.unwrap();
    let names: Vec<&str> = listed.tools.iter().map(|t| &*t.name).collect();
    assert_eq!(
        names,
        ["echo", "shop.add", "shop.closed", "shop.slow.forever"]
    );
    let result = client
        .call_tool(call("shop.add", json!({ "a": 40, "b": 2 })))
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({ "total": 42 })));
    // The gateway's own argument limit holds for what it forwards.
    let long = json!({ "a": 1, "b": 2, "padding": "x".repeat(100) });
    let result = client.call_tool(call("shop.add", long)).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(text.contains("limit 64 bytes"), "{text}");
    // A misspelt imported name is answered with the close imported names.
    let err = client
        .call_tool(call("shop.ad", json!({})))
        .await
        .unwrap_err();
    let ServiceError::McpError(data) = err else {
        panic!("expected a JSON-RPC error, got {err:?}")
    };
    assert!(data.message.contains("shop.add"), "{}", data.message);
}

/// A client that lists the tools before it says it is ready, and an upstream list that changes
/// in between: the client is told once it is ready, as its list is older than the upstream's.
#[tokio::test]
async fn a_change_between_a_clients_first_list_and_its_ready_is_told() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    // The upstream serves by search: a search changes its list for that session.
    let (tx, _rx) = mpsc::unbounded_channel();
    let import_end = in_process(
        McpServer::new(executor(tx))
            .unwrap()
            .with_server_info("shop", "1.0.0")
            .with_search()
            .unwrap(),
    );
    let shop = McpTools::connect("searching shop", import_end)
        .await
        .unwrap();
    let local = Executor::builder().registered_tools(false).build().unwrap();
    let gateway = McpServer::new(local)
        .unwrap()
        .following(vec![shop.clone()])
        .unwrap();
    let client_end = in_process(gateway);
    let (read, mut write) = tokio::io::split(client_end);
    let mut lines = tokio::io::BufReader::new(read).lines();
    macro_rules! send {
        ($message:expr) => {
            write
                .write_all(format!("{}\n", $message).as_bytes())
                .await
                .unwrap()
        };
    }
    macro_rules! next {
        () => {{
            let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line()).await;
            let line = line.expect("the gateway answers").unwrap().expect("a line");
            serde_json::from_str::<Value>(&line).unwrap()
        }};
    }
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    send!(initialize);
    assert_eq!(next!()["id"], 1);
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    send!(list);
    let listed = next!();
    assert_eq!(listed["id"], 2, "{listed}");
    // The upstream's list changes before the client says it is ready.
    let generation = shop.generation();
    let search = shop
        .tools()
        .into_iter()
        .find(|t| t.spec().name.ends_with("search_tools"))
        .expect("the upstream's search tool");
    let exec = Executor::builder()
        .registered_tools(false)
        .tool(search)
        .build()
        .unwrap();
    exec.execute("shop.search_tools", json!({ "query": "add numbers" }))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), shop.changed_after(generation))
        .await
        .expect("the upstream's list changed");
    let ready = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    send!(ready);
    let told = next!();
    assert_eq!(told["method"], "notifications/tools/list_changed", "{told}");
}

#[tokio::test]
async fn a_gateway_refuses_an_imported_tool_named_like_one_of_its_own() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let shop = shop_tools(executor(tx)).await;
    let local = Executor::builder()
        .registered_tools(false)
        .tool(echo("shop.add"))
        .build()
        .unwrap();
    let err = McpServer::new(local)
        .unwrap()
        .following(vec![shop])
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("`shop.add`") && text.contains("another namespace"),
        "{text}"
    );
}

#[tokio::test]
async fn a_gateway_refuses_two_servers_that_list_a_tool_of_one_name() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let (a, b) = (
        shop_tools(executor(tx.clone())).await,
        shop_tools(executor(tx)).await,
    );
    let local = Executor::builder()
        .registered_tools(false)
        .tool(echo("echo"))
        .build()
        .unwrap();
    let err = McpServer::new(local.clone())
        .unwrap()
        .following(vec![a.clone(), b.clone()])
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("`shop.add`") && text.contains("with_namespace"),
        "{text}"
    );
    // Named apart, both are served.
    let served = McpServer::new(local)
        .unwrap()
        .following(vec![a, b.with_namespace("shop2")])
        .unwrap();
    let names: Vec<String> = served.tools().iter().map(|t| t.name.to_string()).collect();
    assert!(
        names.contains(&"shop.add".to_owned()) && names.contains(&"shop2.add".to_owned()),
        "{names:?}"
    );
}

/// A server written by hand on a pipe: it answers `initialize`, and `tools/list` with `list`.
fn hand_written_server(list: Value) -> tokio::io::DuplexStream {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let (read, mut write) = tokio::io::split(server_end);
        let mut lines = tokio::io::BufReader::new(read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            let Some(id) = message.get("id").cloned() else {
                continue;
            };
            let result = match message["method"].as_str() {
                Some("initialize") => json!({
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": { "tools": { "listChanged": true } },
                    "serverInfo": { "name": "hand", "version": "1" },
                }),
                Some("tools/list") => list.clone(),
                _ => json!({}),
            };
            let reply = json!({ "jsonrpc": "2.0", "id": id, "result": result });
            if write
                .write_all(format!("{reply}\n").as_bytes())
                .await
                .is_err()
            {
                break;
            }
        }
    });
    client_end
}

// A server whose list pages on for ever: the import refuses it rather than following it
// until memory runs out.
#[tokio::test]
async fn a_server_whose_pages_never_end_is_refused() {
    let client_end = hand_written_server(json!({
        "tools": [{ "name": "t", "inputSchema": { "type": "object" } }],
        "nextCursor": "again",
    }));
    let Err(error) = McpTools::connect("endless", client_end).await else {
        panic!("an endless list is refused");
    };
    assert!(
        error
            .to_string()
            .contains("the server gave the cursor `again` twice"),
        "{error}"
    );
}

// A server listing a tool whose schema the executor cannot compile and two tools of one
// name: those are left out, and the server's other tool is served.
#[tokio::test]
async fn an_imported_tool_the_executor_refuses_is_left_out_and_the_others_served() {
    let client_end = hand_written_server(json!({ "tools": [
        { "name": "good", "inputSchema": { "type": "object" } },
        { "name": "bad", "inputSchema": { "type": "object", "properties": { "x": { "type": "nonsense" } } } },
        { "name": "twice", "inputSchema": { "type": "object" } },
        { "name": "twice", "inputSchema": { "type": "object" } }
    ] }));
    let tools = McpTools::connect("hand", client_end).await.unwrap();
    let live = RefreshingExecutor::new(|| Executor::builder().registered_tools(false), vec![tools])
        .unwrap();
    let exec = live.executor();
    let names: Vec<&str> = exec.tools().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["hand.good"]);
    let left_out = live.left_out();
    assert_eq!(left_out.len(), 2, "{left_out:?}");
    assert!(left_out[0].starts_with("`hand.bad`"), "{left_out:?}");
    assert!(left_out[1].starts_with("`hand.twice`"), "{left_out:?}");
}

// Limits: what one client, a flood of them, or a hostile server can hold.

mod limits {
    use std::net::SocketAddr;
    use std::time::Duration;

    use ai_tool::mcp::rmcp::ServiceExt;
    use ai_tool::mcp::{
        serve_http, serve_http_with, CallLimits, HttpLimits, HttpOptions, ImportLimits, McpError,
        McpServer, McpTools, HANDSHAKE_TIMEOUT,
    };
    use ai_tool::prelude::*;
    use ai_tool::ToolMetadata;
    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::{call, forever, in_process};
    use tokio::sync::mpsc;

    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

    fn slow_executor() -> (Executor, mpsc::UnboundedReceiver<bool>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let exec = Executor::builder()
            .registered_tools(false)
            .tool(forever(tx))
            .build()
            .unwrap();
        (exec, rx)
    }

    /// `what`, within 20 s (a call past a cap is refused at once; one that is not waits).
    async fn within<T>(what: impl std::future::Future<Output = T>) -> T {
        tokio::time::timeout(Duration::from_secs(20), what)
            .await
            .expect("stuck")
    }

    /// A tool that says when it has started, then runs until it is cancelled.
    fn started_then_forever(started: mpsc::UnboundedSender<()>) -> Executor {
        let tool = DynamicTool::new(
            "hold",
            "Holds its slot until cancelled",
            json!({ "type": "object", "properties": {} }),
            move |_, ctx| {
                let _ = started.send(());
                async move {
                    ctx.cancellation_token().cancelled().await;
                    Ok(ToolOutput::text("cancelled"))
                }
            },
        );
        Executor::builder()
            .registered_tools(false)
            .tool(tool)
            .build()
            .unwrap()
    }

    #[tokio::test]
    async fn a_call_past_the_session_or_server_cap_is_refused_at_once_naming_it() {
        let (tx, mut started) = mpsc::unbounded_channel();
        let server = McpServer::new(started_then_forever(tx))
            .unwrap()
            .with_call_limits(CallLimits::default().with_per_session(1).with_total(2));
        let first = ().serve(in_process(server.clone())).await.unwrap();
        let peer = first.peer().clone();
        let running = tokio::spawn(async move { peer.call_tool(call("hold", json!({}))).await });
        within(started.recv())
            .await
            .expect("the first call started");
        let refused = within(first.call_tool(call("hold", json!({}))))
            .await
            .unwrap_err()
            .to_string();
        assert!(refused.contains("CallLimits::per_session"), "{refused}");
        // A second session has its own cap; the server's (2) is reached with its call.
        let second = ().serve(in_process(server.clone())).await.unwrap();
        let peer = second.peer().clone();
        let also_running =
            tokio::spawn(async move { peer.call_tool(call("hold", json!({}))).await });
        within(started.recv())
            .await
            .expect("the second call started");
        let third = ().serve(in_process(server)).await.unwrap();
        let refused = within(third.call_tool(call("hold", json!({}))))
            .await
            .unwrap_err()
            .to_string();
        assert!(refused.contains("CallLimits::total"), "{refused}");
        running.abort();
        also_running.abort();
    }

    /// A tool answering with `n` numbered lines and, when `structured`, the same as JSON.
    fn lines_tool(name: &str, structured: bool) -> DynamicTool {
        DynamicTool::new(
            name,
            "Lists lines",
            json!({ "type": "object", "properties": { "n": { "type": "integer" } } }),
            move |args, _| async move {
                let n = args["n"].as_u64().unwrap_or(0);
                let lines: Vec<String> = (0..n).map(|i| format!("line {i}")).collect();
                let output = ToolOutput::text(lines.join("\n"));
                Ok(match structured {
                    true => ToolOutput {
                        structured: Some(json!({ "lines": lines })),
                        ..output
                    },
                    false => output,
                })
            },
        )
    }

    #[tokio::test]
    async fn a_result_past_the_cap_is_cut_naming_it_and_a_tools_own_cap_narrows_it() {
        let exec = Executor::builder()
            .registered_tools(false)
            .tool(lines_tool("lines", false))
            .tool(lines_tool("rows", true))
            .tool_with(lines_tool("few", false), |tool| tool.max_result_bytes(300))
            .build()
            .unwrap();
        let server = McpServer::new(exec).unwrap().with_max_result_bytes(2_000);
        let client = ().serve(in_process(server)).await.unwrap();
        let text_of = |result: &rmcp::model::CallToolResult| {
            serde_json::to_value(result).unwrap()["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        let whole = client
            .call_tool(call("lines", json!({ "n": 10 })))
            .await
            .unwrap();
        assert_eq!(
            text_of(&whole),
            (0..10)
                .map(|i| format!("line {i}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        let cut = client
            .call_tool(call("lines", json!({ "n": 100_000 })))
            .await
            .unwrap();
        let text = text_of(&cut);
        assert!(text.len() <= 2_000, "{} bytes", text.len());
        assert!(
            text.starts_with("line 0\n") && text.ends_with("line 99999"),
            "{text}"
        );
        assert!(
            text.contains("(McpServer::with_max_result_bytes)"),
            "{text}"
        );
        assert_ne!(cut.is_error, Some(true));
        // The structured result cannot be cut: it is left out, and said to be.
        let rows = client
            .call_tool(call("rows", json!({ "n": 100_000 })))
            .await
            .unwrap();
        assert_eq!(rows.structured_content, None);
        assert!(text_of(&rows).contains("the structured result is left out"));
        // The tool's own cap is smaller, so it applies.
        let few = client
            .call_tool(call("few", json!({ "n": 1_000 })))
            .await
            .unwrap();
        let text = text_of(&few);
        assert!(text.len() <= 300, "{} bytes", text.len());
        assert!(
            text.contains("cap of 300 bytes (the tool's max_result_bytes)"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn a_call_past_the_servers_time_limit_is_cancelled_and_answered_naming_it() {
        let (tx, mut started) = mpsc::unbounded_channel();
        let limits = CallLimits::default()
            .with_per_session(1)
            .with_call_timeout(Duration::from_millis(200));
        let server = McpServer::new(started_then_forever(tx))
            .unwrap()
            .with_call_limits(limits);
        let client = ().serve(in_process(server)).await.unwrap();
        let result = within(client.call_tool(call("hold", json!({}))))
            .await
            .unwrap();
        within(started.recv()).await.expect("the call started");
        assert_eq!(result.is_error, Some(true));
        let text = serde_json::to_value(&result).unwrap()["content"][0]["text"].clone();
        assert!(
            text.as_str().unwrap().contains("CallLimits::call_timeout"),
            "{text}"
        );
        // Its slot (one per session here) is free again.
        let again = within(client.call_tool(call("hold", json!({}))))
            .await
            .unwrap();
        assert_eq!(again.is_error, Some(true));
    }

    fn approval_executor() -> Executor {
        let tool = DynamicTool::new(
            "pay",
            "Pays",
            json!({ "type": "object", "properties": {} }),
            |_, _| async { Ok(ToolOutput::text("paid")) },
        )
        .with_metadata(ToolMetadata {
            requires_approval: true,
            ..ToolMetadata::default()
        });
        Executor::builder()
            .registered_tools(false)
            .tool(tool)
            .build()
            .unwrap()
    }

    #[tokio::test]
    async fn a_tool_requiring_approval_is_neither_listed_nor_run_unless_told() {
        let server = McpServer::new(approval_executor()).unwrap();
        let client = ().serve(in_process(server)).await.unwrap();
        assert!(client.list_all_tools().await.unwrap().is_empty());
        let refused = client
            .call_tool(call("pay", json!({})))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("requires a person's approval")
                && refused.contains("serving_tools_that_require_approval"),
            "{refused}"
        );
        let server = McpServer::new(approval_executor())
            .unwrap()
            .serving_tools_that_require_approval()
            .unwrap();
        let client = ().serve(in_process(server)).await.unwrap();
        assert_eq!(client.list_all_tools().await.unwrap().len(), 1);
        let result = client.call_tool(call("pay", json!({}))).await.unwrap();
        assert_eq!(
            serde_json::to_value(&result).unwrap()["content"][0]["text"],
            "paid"
        );
    }

    #[tokio::test]
    async fn an_imported_tool_that_never_answers_times_out_and_is_cancelled() {
        let (exec, mut ended) = slow_executor();
        let client_end = in_process(McpServer::new(exec).unwrap());
        let limits = ImportLimits::default().with_call_timeout(Duration::from_millis(300));
        let tools = McpTools::connect_with("slow", client_end, HANDSHAKE_TIMEOUT, limits)
            .await
            .unwrap();
        let imported = tools.tools();
        assert_eq!(imported[0].spec().metadata.timeout_ms, Some(300));
        let exec = Executor::builder()
            .registered_tools(false)
            .tools(imported)
            .build()
            .unwrap();
        let name = format!("{}.slow.forever", tools.namespace());
        let error = tokio::time::timeout(Duration::from_secs(10), exec.execute(&name, json!({})))
            .await
            .expect("the call hung")
            .unwrap_err();
        assert_eq!(error.kind(), ToolErrorKind::TimedOut, "{error}");
        let cancelled = tokio::time::timeout(Duration::from_secs(5), ended.recv())
            .await
            .expect("the server's tool was never stopped");
        assert_eq!(cancelled, Some(true), "the server was told to cancel");
    }

    #[tokio::test]
    async fn imports_default_to_a_60_second_limit_and_cut_long_descriptions() {
        let long = DynamicTool::new(
            "long",
            "x".repeat(20_000),
            json!({ "type": "object", "properties": {} }),
            |_, _| async { Ok(ToolOutput::empty()) },
        );
        let exec = Executor::builder()
            .registered_tools(false)
            .tool(long)
            .build()
            .unwrap();
        let tools = McpTools::connect("s", in_process(McpServer::new(exec.clone()).unwrap()))
            .await
            .unwrap();
        let spec = tools.tools()[0].spec().clone();
        assert_eq!(spec.metadata.timeout_ms, Some(60_000));
        assert!(spec.metadata.is_imported());
        assert!(spec.description.len() < 8_300, "{}", spec.description.len());
        assert!(spec
            .description
            .ends_with("[description cut at 8192 bytes]"));
        let small = ImportLimits::default().with_max_list_bytes(1_000);
        let error = McpTools::connect_with(
            "s",
            in_process(McpServer::new(exec).unwrap()),
            HANDSHAKE_TIMEOUT,
            small,
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(error.contains("ImportLimits::max_list_bytes"), "{error}");
    }

    /// A stdio server (a few lines of Python that speak just enough MCP) whose answer is 17 MiB,
    /// past the 16 MiB one message may have: the call fails at once with an error naming the
    /// sizes, rather than waiting for an answer rmcp dropped.
    #[tokio::test]
    async fn a_stdio_answer_past_the_frame_cap_fails_its_call_naming_the_size() {
        let script = r#"
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    id, method = message.get("id"), message.get("method")
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "big", "version": "0"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "huge", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "x" * (17 << 20)}]}
    else:
        continue
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id, "result": result}) + "\n")
    sys.stdout.flush()
"#;
        let dir = std::env::temp_dir().join(format!("ai-tool-frames-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big_server.py");
        std::fs::write(&path, script).unwrap();
        let mut command = tokio::process::Command::new("python3");
        command.arg(&path);
        let tools = McpTools::connect_stdio(command).await.unwrap();
        let exec = Executor::builder()
            .registered_tools(false)
            .tools(tools.tools())
            .build()
            .unwrap();
        let error =
            tokio::time::timeout(Duration::from_secs(30), exec.execute("big.huge", json!({})))
                .await
                .expect("the call waited for an answer that was dropped")
                .unwrap_err()
                .to_string();
        assert!(
            error.contains("more than the 16777216") && error.contains("bytes"),
            "{error}"
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn serving_beyond_loopback_without_a_token_is_refused_before_binding() {
        let exec = Executor::builder().registered_tools(false).build().unwrap();
        let error = serve_http(exec, "0.0.0.0:0".parse().unwrap())
            .await
            .unwrap_err();
        assert!(matches!(error, McpError::Unauthenticated { .. }), "{error}");
        let text = error.to_string();
        assert!(
            text.contains("--token-env") && text.contains("--no-auth"),
            "{text}"
        );
    }

    async fn serving(limits: HttpLimits) -> SocketAddr {
        let exec = Executor::builder().registered_tools(false).build().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let options = HttpOptions::default().with_limits(limits);
        tokio::spawn(serve_http_with(
            McpServer::new(exec).unwrap(),
            listener,
            options,
        ));
        addr
    }

    /// Whether the server closes the connection within `within`.
    async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
        let mut buf = [0u8; 1024];
        let deadline = tokio::time::Instant::now() + within;
        loop {
            match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
                Err(_) => return false,
                Ok(Ok(0)) | Ok(Err(_)) => return true,
                Ok(Ok(_)) => {}
            }
        }
    }

    #[tokio::test]
    async fn clients_sending_half_a_request_line_are_closed_after_the_header_timeout() {
        let limits = HttpLimits::default().with_header_read_timeout(Duration::from_millis(500));
        let addr = serving(limits).await;
        let mut slow = Vec::new();
        for _ in 0..300 {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            stream.write_all(b"POST /mcp HT").await.unwrap();
            slow.push(stream);
        }
        for stream in &mut slow {
            assert!(closed_within(stream, Duration::from_secs(10)).await);
        }
        let (status, text) = post(addr, &[], INITIALIZE).await;
        assert_eq!(status, 200, "{text}");
    }

    /// A client that sends its body a byte at a time, slowly, is answered `408` at the body's
    /// deadline: it does not hold its connection by staying just short of idle.
    #[tokio::test]
    async fn a_body_sent_too_slowly_is_answered_408() {
        let limits = HttpLimits::default().with_body_read_timeout(Duration::from_millis(800));
        let addr = serving(limits).await;
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
            INITIALIZE.len()
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let sending = tokio::spawn(async move {
            for byte in INITIALIZE.bytes() {
                if stream.write_all(&[byte]).await.is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            stream
        });
        let mut stream = tokio::time::timeout(Duration::from_secs(60), sending)
            .await
            .expect("stuck")
            .unwrap();
        let mut answer = String::new();
        let _ =
            tokio::time::timeout(Duration::from_secs(5), stream.read_to_string(&mut answer)).await;
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.contains("HttpLimits::body_read_timeout"), "{answer}");
    }

    #[tokio::test]
    async fn an_idle_connection_is_closed_and_the_connection_cap_holds_the_next_one() {
        let limits = HttpLimits::default()
            .with_idle_connection_timeout(Duration::from_millis(600))
            .with_max_connections(1);
        let addr = serving(limits).await;
        let mut idle = TcpStream::connect(addr).await.unwrap();
        // The one slot is taken: a second client waits, unanswered.
        let waiting = tokio::spawn(post(addr, &[], INITIALIZE));
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!waiting.is_finished(), "served past the connection cap");
        assert!(closed_within(&mut idle, Duration::from_secs(10)).await);
        let (status, text) = waiting.await.unwrap();
        assert_eq!(status, 200, "{text}");
    }

    #[tokio::test]
    async fn past_the_session_cap_initialize_gets_503_and_the_sessions_there_are_served() {
        let limits = HttpLimits::default()
            .with_max_sessions(3)
            .with_session_idle_timeout(Duration::from_secs(4));
        let addr = serving(limits).await;
        let (status, first) = post(addr, &[], INITIALIZE).await;
        assert_eq!(status, 200, "{first}");
        let session = first
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("mcp-session-id: ")
                    .map(str::to_owned)
            })
            .expect("a session id");
        let session = session.trim().to_owned();
        for _ in 0..2 {
            assert_eq!(post(addr, &[], INITIALIZE).await.0, 200);
        }
        let (status, text) = post(addr, &[], INITIALIZE).await;
        assert_eq!(status, 503, "{text}");
        assert!(text.contains("HttpLimits::max_sessions"), "{text}");
        // The sessions there are go on.
        let ids = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        let ready = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(post(addr, &ids, ready).await.0, 202);
        let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        let (status, text) = post(addr, &ids, list).await;
        assert_eq!(status, 200, "{text}");
        assert!(text.contains("\"tools\""), "{text}");
        // Idle sessions end, and a new client is served again.
        let mut status = 0;
        for _ in 0..40 {
            tokio::time::sleep(Duration::from_millis(500)).await;
            status = post(addr, &[], INITIALIZE).await.0;
            if status == 200 {
                break;
            }
            assert_eq!(status, 503);
        }
        assert_eq!(status, 200, "no session ended");
    }

    /// 5,000 `initialize` requests against the example server (default limits): the server
    /// stays under 200 MB, a session made before the flood is still served, and the flood
    /// gets 503 past the cap rather than memory.
    #[tokio::test]
    async fn five_thousand_initializes_leave_the_server_small_and_serving() {
        let (server, url) = super::support::http_example(None).await;
        let addr: SocketAddr = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .parse()
            .unwrap();
        let (status, first) = post(addr, &[], INITIALIZE).await;
        assert_eq!(status, 200, "{first}");
        let mut workers = Vec::new();
        for _ in 0..16 {
            workers.push(tokio::spawn(async move {
                let mut counts = (0usize, 0usize);
                for _ in 0..(5_000 / 16 + 1) {
                    match post(addr, &[], INITIALIZE).await.0 {
                        200 => counts.0 += 1,
                        503 => counts.1 += 1,
                        other => panic!("status {other}"),
                    }
                }
                counts
            }));
        }
        let (mut served, mut refused) = (0, 0);
        for worker in workers {
            let (s, r) = worker.await.unwrap();
            served += s;
            refused += r;
        }
        assert!(served + refused >= 5_000);
        assert!(
            served < HttpLimits::DEFAULT_MAX_SESSIONS + 32,
            "{served} sessions made past the cap"
        );
        assert!(refused > 3_000, "{refused}");
        let pid = server.0.id().expect("the server runs");
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let rss_kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS");
        assert!(rss_kb < 200 * 1024, "the server holds {rss_kb} kB");
        let session = first
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("mcp-session-id: ")
                    .map(str::to_owned)
            })
            .expect("a session id");
        let ids = [
            ("Mcp-Session-Id", session.trim()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        let ready = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(post(addr, &ids, ready).await.0, 202);
        let (status, text) = post(addr, &ids, list).await;
        assert_eq!(status, 200, "{text}");
    }

    /// Posts `body` to `/mcp` (Host: the address) and returns the status and the start of the
    /// answer.
    async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> (u16, String) {
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n",
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut buf = vec![0; 8192];
        let mut got = 0;
        while got < buf.len() {
            let read =
                tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf[got..])).await;
            match read {
                Ok(Ok(0)) | Err(_) | Ok(Err(_)) => break,
                Ok(Ok(n)) => got += n,
            }
            let text = String::from_utf8_lossy(&buf[..got]);
            if text.contains("\"jsonrpc\"")
                || (text.contains("\r\n\r\n") && !text.contains(" 200 "))
            {
                // Read what follows the head of a refusal too.
                if !text.contains(" 200 ") {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    if let Ok(Ok(n)) = tokio::time::timeout(
                        Duration::from_millis(200),
                        stream.read(&mut buf[got..]),
                    )
                    .await
                    {
                        got += n;
                    }
                }
                break;
            }
        }
        let text = String::from_utf8_lossy(&buf[..got]).into_owned();
        let status = text
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status line in {text:?}"));
        (status, text)
    }
}
