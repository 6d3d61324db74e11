//! Calls served as MCP tasks (the tasks extension of protocol 2026-07-28), by rmcp's own client:
//! a tool marked `task` answers a client that takes tasks with a task at once, which it polls
//! to the result; `tasks/cancel` cancels the call; the server's time limit ends it with an
//! error result; a client that takes no tasks, or speaks an older version, is answered when
//! the call ends; a tool that runs only as a task refuses such a client. Over HTTP, requests
//! that stand alone find the task another request made.

use std::time::Duration;

use ai_tool::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ClientConfig, GetTaskParams, Implementation, ProtocolVersion, TaskPayload, TaskStatus,
};
use ai_tool::mcp::rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService,
};
use ai_tool::mcp::rmcp::ServiceExt;
use ai_tool::mcp::{serve_http_with, CallLimits, HttpOptions, McpServer, TaskLimits};
use ai_tool::prelude::*;
use ai_tool::{TaskSupport, ToolMetadata};
use serde_json::json;

use crate::in_process;

/// A tool that reports its progress, then counts to `to` over `millis`, as a task as `task`
/// says.
fn counter(name: &str, task: TaskSupport) -> DynamicTool {
    DynamicTool::new(
        name,
        "Counts slowly",
        json!({
            "type": "object",
            "properties": { "to": { "type": "integer" }, "millis": { "type": "integer" } },
            "required": ["to", "millis"]
        }),
        |args, ctx| async move {
            let to = args["to"].as_u64().unwrap_or(0);
            let millis = args["millis"].as_u64().unwrap_or(0);
            ctx.progress(1.0, Some(to as f64), Some("counting"));
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(millis)) => {}
                () = ctx.cancellation_token().cancelled() => {
                    return Err(ToolError::Cancelled { tool: "count".into() });
                }
            }
            Ok(ToolOutput::text(format!("counted to {to}")))
        },
    )
    .with_metadata(ToolMetadata {
        task,
        ..ToolMetadata::default()
    })
}

/// `count`, as a task when the client takes tasks; `count_strict`, only as a task.
fn executor() -> Executor {
    Executor::builder()
        .tool(counter("count", TaskSupport::Optional))
        .tool(counter("count_strict", TaskSupport::Required))
        .build()
        .unwrap()
}

fn client_info(tasks: bool) -> ClientConfig {
    let capabilities = match tasks {
        true => ClientCapabilities::builder().enable_tasks().build(),
        false => ClientCapabilities::default(),
    };
    ClientConfig::new(capabilities, Implementation::new("tasks-test", "0"))
}

/// rmcp's client of protocol 2026-07-28 (`server/discover`, each request standing alone).
async fn modern(server: McpServer, tasks: bool) -> RunningService<RoleClient, ClientConfig> {
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    client_info(tasks)
        .serve_with_lifecycle(in_process(server), lifecycle)
        .await
        .unwrap()
}

fn count(name: &str, to: u64, millis: u64) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned()).with_arguments(
        json!({ "to": to, "millis": millis })
            .as_object()
            .unwrap()
            .clone(),
    )
}

/// Polls task `id` until it ends; its last state.
async fn ended(client: &RunningService<RoleClient, ClientConfig>, id: &str) -> TaskPayload {
    for _ in 0..400 {
        let got = client
            .peer()
            .get_task(GetTaskParams::new(id.to_owned()))
            .await
            .unwrap();
        if got.task.status().is_terminal() {
            return got.task.payload;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("task {id} did not end in 10 s");
}

fn text_of(payload: TaskPayload) -> (String, bool) {
    let TaskPayload::Completed { result } = payload else {
        panic!("not completed: {payload:?}");
    };
    let result: CallToolResult = serde_json::from_value(json!(result)).unwrap();
    let text = result.content[0].as_text().unwrap().text.clone();
    (text, result.is_error == Some(true))
}

#[tokio::test]
async fn a_task_tool_answers_with_a_task_polled_to_its_result() {
    let server = McpServer::new(executor()).unwrap();
    let client = modern(server, true).await;
    let response = client
        .peer()
        .call_tool_once(count("count", 3, 300))
        .await
        .unwrap();
    let CallToolResponse::Task(created) = response else {
        panic!("not a task: {response:?}");
    };
    assert_eq!(created.task.status, TaskStatus::Working);
    assert_eq!(created.task.task_id.len(), 32, "128 random bits");
    assert_eq!(created.task.poll_interval_ms, Some(500));
    // Its progress is its status message while it works.
    let mut message = None;
    for _ in 0..40 {
        let got = client
            .peer()
            .get_task(GetTaskParams::new(created.task.task_id.clone()))
            .await
            .unwrap();
        message = got.task.task.status_message.clone();
        if message.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(message.as_deref(), Some("1/3: counting"));
    let (text, is_error) = text_of(ended(&client, &created.task.task_id).await);
    assert_eq!((text.as_str(), is_error), ("counted to 3", false));

    // An id the server never gave out.
    let error = client
        .peer()
        .get_task(GetTaskParams::new("0".repeat(32)))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("no task"), "{error}");
}

#[tokio::test]
async fn a_cancelled_task_ends_cancelled_and_a_task_past_the_time_limit_ends_in_error() {
    let server = McpServer::new(executor())
        .unwrap()
        .with_call_limits(CallLimits::default().with_call_timeout(Duration::from_millis(300)));
    let client = modern(server, true).await;
    let CallToolResponse::Task(created) = client
        .peer()
        .call_tool_once(count("count", 3, 60_000))
        .await
        .unwrap()
    else {
        panic!("not a task");
    };
    client
        .peer()
        .cancel_task(CancelTaskParams::new(created.task.task_id.clone()))
        .await
        .unwrap();
    assert_eq!(
        ended(&client, &created.task.task_id).await,
        TaskPayload::Cancelled
    );

    let CallToolResponse::Task(created) = client
        .peer()
        .call_tool_once(count("count", 3, 60_000))
        .await
        .unwrap()
    else {
        panic!("not a task");
    };
    let (text, is_error) = text_of(ended(&client, &created.task.task_id).await);
    assert!(is_error, "{text}");
    assert!(text.contains("CallLimits::call_timeout"), "{text}");
}

#[tokio::test]
async fn a_client_that_takes_no_tasks_is_answered_when_the_call_ends() {
    // 2026-07-28 without the extension.
    let client = modern(McpServer::new(executor()).unwrap(), false).await;
    let response = client
        .peer()
        .call_tool_once(count("count", 2, 10))
        .await
        .unwrap();
    let CallToolResponse::Complete(result) = response else {
        panic!("not a result: {response:?}");
    };
    assert_eq!(result.content[0].as_text().unwrap().text, "counted to 2");
    // A tool that runs only as a task refuses it, saying how to call it.
    let error = client
        .peer()
        .call_tool_once(count("count_strict", 2, 10))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("runs only as a task"), "{error}");

    // 2025-11-25 (the `initialize` handshake), declaring the extension, which that version
    // does not define: answered when the call ends.
    let server = McpServer::new(executor()).unwrap();
    let client = client_info(true).serve(in_process(server)).await.unwrap();
    let result = client.call_tool(count("count", 2, 10)).await.unwrap();
    assert_eq!(result.content[0].as_text().unwrap().text, "counted to 2");
}

#[tokio::test]
async fn past_the_cap_of_tasks_kept_a_call_is_refused_naming_it() {
    let server = McpServer::new(executor())
        .unwrap()
        .with_task_limits(TaskLimits::default().with_max_kept(1));
    let client = modern(server, true).await;
    let first = client
        .peer()
        .call_tool_once(count("count", 1, 60_000))
        .await
        .unwrap();
    assert!(matches!(first, CallToolResponse::Task(_)));
    let error = client
        .peer()
        .call_tool_once(count("count", 1, 60_000))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("TaskLimits::max_kept"),
        "{error}"
    );
}

/// Over HTTP, protocol 2026-07-28: every request is served by a server of its own, and the
/// task one request made is found by the next.
#[tokio::test]
async fn over_http_a_task_made_by_one_request_is_polled_by_others() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = McpServer::new(executor()).unwrap();
    tokio::spawn(serve_http_with(server, listener, HttpOptions::default()));
    let transport =
        ai_tool::mcp::rmcp::transport::StreamableHttpClientTransport::from_uri(url.as_str());
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = client_info(true)
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .unwrap();
    let CallToolResponse::Task(created) = client
        .peer()
        .call_tool_once(count("count", 5, 200))
        .await
        .unwrap()
    else {
        panic!("not a task");
    };
    let (text, _) = text_of(ended(&client, &created.task.task_id).await);
    assert_eq!(text, "counted to 5");
}

/// Our importer, taking tasks, imports a server whose tools run as tasks: a call waits on its
/// task to the result; a caller that stops waiting has the task cancelled on the server.
#[tokio::test]
async fn an_import_that_takes_tasks_waits_on_them_and_cancels_them_when_it_stops_waiting() {
    use ai_tool::mcp::{ImportLimits, McpBuilderExt, McpTools};
    let (cancelled_tx, mut cancelled) = tokio::sync::mpsc::unbounded_channel();
    /// Says when the call's future goes: the executor drops a cancelled call.
    struct Gone(tokio::sync::mpsc::UnboundedSender<()>);
    impl Drop for Gone {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }
    let hold = DynamicTool::new(
        "hold",
        "Holds until cancelled",
        json!({ "type": "object", "properties": {} }),
        move |_, ctx| {
            let gone = Gone(cancelled_tx.clone());
            async move {
                ctx.cancellation_token().cancelled().await;
                drop(gone);
                Err(ToolError::Cancelled {
                    tool: "hold".into(),
                })
            }
        },
    )
    .with_metadata(ToolMetadata {
        task: TaskSupport::Optional,
        ..ToolMetadata::default()
    });
    let exec = Executor::builder()
        .tool(counter("count_strict", TaskSupport::Required))
        .tool(hold)
        .build()
        .unwrap();
    let server = McpServer::new(exec)
        .unwrap()
        .with_task_limits(TaskLimits::default().with_poll_interval(Duration::from_millis(50)));
    let limits = ImportLimits::default().with_tasks();
    let tools = McpTools::connect_with("far", in_process(server), Duration::from_secs(10), limits)
        .await
        .unwrap()
        .with_namespace("far");
    assert_eq!(tools.protocol_version().as_deref(), Some("2026-07-28"));
    let local = Executor::builder()
        .registered_tools(false)
        .mcp(&tools)
        .build()
        .unwrap();
    // A tool that runs only as a task: answered, so waited on as one.
    let out = local
        .execute("far.count_strict", json!({ "to": 4, "millis": 200 }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "counted to 4");

    let stop = CancellationToken::new();
    let options = CallOptions {
        cancellation: Some(stop.clone()),
        ..CallOptions::default()
    };
    let stopper = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        stopper.cancel();
    });
    let err = local
        .execute_with("far.hold", json!({}), &options)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Cancelled, "{err}");
    tokio::time::timeout(Duration::from_secs(5), cancelled.recv())
        .await
        .expect("the server's task was cancelled")
        .unwrap();
}
