//! The example server, the Python SDK's client and server, and the command line, as child
//! processes.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use ai_tool::mcp::{McpTools, RefreshingExecutor};
use ai_tool::prelude::*;
use serde_json::json;
use tokio::process::Command;

use crate::support::{
    example_server, free_port, http_example, mcp_tools, run_to_end, wait_for_port, Spawned,
};

/// Runs `tests/mcp/python_client.py` with the SDK on its path; panics with its output when
/// a check fails.
async fn python_client(tools: &Path, args: &[&str]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/python_client.py");
    let mut command = Command::new("python3");
    command
        .arg(script)
        .args(args)
        .env("PYTHONPATH", tools.join("python"));
    let (status, stdout, stderr) = run_to_end(&mut command).await;
    println!("{stdout}");
    assert!(
        status.success(),
        "python client {args:?} failed:\n{stdout}\n{stderr}"
    );
}

#[tokio::test]
async fn the_python_sdk_client_works_with_our_server_over_stdio() {
    let Some(tools) = mcp_tools(
        "the_python_sdk_client_works_with_our_server_over_stdio",
        "python",
    ) else {
        return;
    };
    let server = example_server().to_str().unwrap();
    for mode in ["auto", "legacy"] {
        python_client(&tools, &[mode, "stdio", server, "stdio"]).await;
    }
}

/// The Python SDK's client, with a tasks extension of a user's writing (the SDK has none),
/// calls the example's `report` as a task: polled to its result, cancelled.
#[tokio::test]
async fn the_python_sdk_client_calls_a_tool_our_server_runs_as_a_task() {
    let Some(tools) = mcp_tools(
        "the_python_sdk_client_calls_a_tool_our_server_runs_as_a_task",
        "python",
    ) else {
        return;
    };
    let (_server, url) = http_example(None).await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/python_tasks.py");
    let mut command = Command::new("python3");
    command
        .arg(script)
        .arg(&url)
        .env("PYTHONPATH", tools.join("python"));
    let (status, stdout, stderr) = run_to_end(&mut command).await;
    println!("{stdout}");
    assert!(
        status.success(),
        "python tasks client failed:\n{stdout}\n{stderr}"
    );
}

#[tokio::test]
async fn the_python_sdk_client_works_with_our_server_over_http() {
    let Some(tools) = mcp_tools(
        "the_python_sdk_client_works_with_our_server_over_http",
        "python",
    ) else {
        return;
    };
    let (_server, url) = http_example(None).await;
    for mode in ["auto", "legacy"] {
        python_client(&tools, &[mode, "http", &url]).await;
    }
}

#[tokio::test]
async fn tools_are_imported_from_a_server_process_over_stdio() {
    let mut command = Command::new(example_server());
    command.arg("stdio");
    let tools = McpTools::connect_stdio(command).await.unwrap();
    assert_eq!(tools.namespace(), "booking");
    let exec = Executor::builder()
        .registered_tools(false)
        .tools(tools.tools())
        .build()
        .unwrap();
    let out = exec
        .execute("booking.text.upper", json!({ "text": "abc" }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "ABC");
}

#[tokio::test]
async fn an_http_server_with_a_token_refuses_clients_without_it() {
    let (_server, url) = http_example(Some("s3cret")).await;
    assert!(McpTools::connect_http(&url).await.is_err());
    let wrong = [("Authorization", "Bearer s3cre7")];
    assert!(McpTools::connect_http_with_headers(&url, &wrong)
        .await
        .is_err());
    let right = [("Authorization", "Bearer s3cret")];
    let tools = McpTools::connect_http_with_headers(&url, &right)
        .await
        .unwrap();
    let exec = Executor::builder()
        .registered_tools(false)
        .tools(tools.tools())
        .build()
        .unwrap();
    let out = exec
        .execute("booking.availability", json!({ "day": "2026-12-01" }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "Lisbon on 2026-12-01: 3 free");
}

/// `tests/mcp/python_server.py` (the Python SDK's `MCPServer`) with these arguments.
fn python_server(tools: &Path, args: &[&str]) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/python_server.py");
    let mut command = Command::new("python3");
    command
        .arg(script)
        .args(args)
        .env("PYTHONPATH", tools.join("python"))
        .kill_on_drop(true);
    command
}

/// Checks the Python server's tools, imported under its own name.
async fn check_python_server_tools(tools: McpTools) {
    assert_eq!(tools.namespace(), "pysdk");
    let exec = Executor::builder()
        .registered_tools(false)
        .tools(tools.tools())
        .build()
        .unwrap();
    let add = exec
        .spec("pysdk.math.add")
        .expect("the dotted name is imported");
    assert_eq!(add.metadata.title.as_deref(), Some("Add two integers"));
    let output_schema = add.output_schema.as_ref().expect("an outputSchema");
    assert!(
        output_schema["properties"]["total"].is_object(),
        "{output_schema}"
    );
    let out = exec
        .execute("pysdk.math.add", json!({ "a": 2, "b": 40 }))
        .await
        .unwrap();
    assert_eq!(out.structured, Some(json!({ "total": 42 })));
    let err = exec
        .execute("pysdk.math.add", json!({ "a": "two", "b": 40 }))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments);
    let out = exec
        .execute("pysdk.shout", json!({ "text": "abc" }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "ABC");
    let err = exec.execute("pysdk.refuse", json!({})).await.unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Failed);
    assert!(err.to_string().contains("refused on purpose"), "{err}");
}

#[tokio::test]
async fn tools_are_imported_from_the_python_sdk_server_over_stdio() {
    let Some(tools) = mcp_tools(
        "tools_are_imported_from_the_python_sdk_server_over_stdio",
        "python",
    ) else {
        return;
    };
    let imported = McpTools::connect_stdio(python_server(&tools, &["stdio"]))
        .await
        .unwrap();
    check_python_server_tools(imported).await;
}

#[tokio::test]
async fn tools_are_imported_from_the_python_sdk_server_over_http() {
    let Some(tools) = mcp_tools(
        "tools_are_imported_from_the_python_sdk_server_over_http",
        "python",
    ) else {
        return;
    };
    let port = free_port();
    let _server = Spawned::start(
        python_server(&tools, &["http", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    wait_for_port(port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    check_python_server_tools(McpTools::connect_http(&url).await.unwrap()).await;
}

// The command line (features `cli` and `mcp`).

#[cfg(feature = "cli")]
#[test]
fn the_cli_lists_and_calls_the_tools_of_a_server_it_starts() {
    let server = format!("{} stdio", example_server().display());
    let run = |args: &[&str]| {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let argv = std::iter::once("ai-tool").chain(args.iter().copied());
        let code = ai_tool::cli::run_with(argv, Executor::builder(), &mut out, &mut err);
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        (code, text(out), text(err))
    };
    let (code, out, err) = run(&["tools", "--mcp-stdio", &server]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("booking.text.upper"), "{out}");
    let (code, out, err) = run(&[
        "call",
        "booking.text.upper",
        r#"{"text":"abc"}"#,
        "--mcp-stdio",
        &server,
    ]);
    assert_eq!((code, out.trim()), (0, "ABC"), "{err}");
    let (code, _, err) = run(&[
        "call",
        "booking.text.upper",
        r#"{"text":5}"#,
        "--mcp-stdio",
        &server,
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("/text"), "{err}");
}

#[cfg(feature = "cli")]
#[tokio::test]
async fn the_cli_serves_upstream_tools_over_http_behind_a_token() {
    let upstream = format!("stdio:{} stdio", example_server().display());
    let mut gateway = Spawned::start(
        Command::new(env!("CARGO_BIN_EXE_ai-tool"))
            .args([
                "serve",
                "--http",
                "127.0.0.1:0",
                "--token-env",
                "GATEWAY_TOKEN",
            ])
            .args(["--upstream", &upstream])
            .env("GATEWAY_TOKEN", "g4te")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    );
    let url = gateway.serving_url().await;
    assert!(McpTools::connect_http(&url).await.is_err());
    let tools = McpTools::connect_http_with_headers(&url, &[("Authorization", "Bearer g4te")])
        .await
        .unwrap();
    let exec = Executor::builder()
        .registered_tools(false)
        .tools(tools.tools())
        .build()
        .unwrap();
    let out = exec
        .execute("ai-tool.booking.text.upper", json!({ "text": "abc" }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "ABC");
}

#[tokio::test]
async fn a_new_tool_of_an_imported_server_is_seen_by_the_next_executor() {
    let Some(installed) = mcp_tools(
        "a_new_tool_of_an_imported_server_is_seen_by_the_next_executor",
        "python",
    ) else {
        return;
    };
    let tools = McpTools::connect_stdio(python_server(&installed, &["stdio"]))
        .await
        .unwrap();
    let live = RefreshingExecutor::new(
        || Executor::builder().registered_tools(false),
        vec![tools.clone()],
    )
    .unwrap();
    let before = live.executor();
    assert!(before.spec("pysdk.math.double").is_none());
    let generation = tools.generation();
    let out = before.execute("pysdk.grow", json!({})).await.unwrap();
    assert_eq!(out.to_text(), "grown");
    tokio::time::timeout(Duration::from_secs(10), tools.changed_after(generation))
        .await
        .expect("the list was not listed again after tools/list_changed");
    let after = live.executor();
    assert!(after.spec("pysdk.math.double").is_some());
    let out = after
        .execute("pysdk.math.double", json!({ "n": 21 }))
        .await
        .unwrap();
    assert!(out.to_text().contains("42"), "{}", out.to_text());
    // An executor built before keeps the list it was built with.
    assert!(before.spec("pysdk.math.double").is_none());
}

#[cfg(feature = "cli")]
#[tokio::test]
async fn the_cli_sends_headers_to_an_http_server() {
    let (_server, url) = http_example(Some("h3ader")).await;
    let run = |args: &[&str]| {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let argv = std::iter::once("ai-tool").chain(args.iter().copied());
        let builder = Executor::builder().registered_tools(false);
        let code = ai_tool::cli::run_with(argv, builder, &mut out, &mut err);
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        (code, text(out), text(err))
    };
    let (code, _, err) = run(&["tools", "--mcp-http", &url]);
    assert_eq!(code, 2, "{err}");
    let (code, out, err) = run(&[
        "tools",
        "--header",
        "Authorization: Bearer h3ader",
        "--header",
        "X-Trace: 1",
        "--mcp-http",
        &url,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("booking.text.upper"), "{out}");
    let (code, _, err) = run(&["tools", "--header", "no colon", "--mcp-http", &url]);
    assert_eq!(code, 2);
    // What was given may be a secret: it is not shown.
    assert!(err.contains("--header: expected 'NAME: VALUE'"), "{err}");
    assert!(!err.contains("no colon"), "{err}");
}

#[cfg(feature = "cli")]
#[tokio::test]
async fn the_gateway_with_search_offers_search_tools_and_then_what_was_found() {
    let upstream = format!("stdio:{} stdio", example_server().display());
    let mut gateway = Spawned::start(
        Command::new(env!("CARGO_BIN_EXE_ai-tool"))
            .args(["serve", "--http", "127.0.0.1:0", "--search"])
            .args(["--upstream", &upstream])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    );
    let url = gateway.serving_url().await;
    let tools = McpTools::connect_http(&url).await.unwrap();
    let names = |exec: &Executor| -> Vec<String> { exec.tools().map(|s| s.name.clone()).collect() };
    let live = RefreshingExecutor::new(
        || Executor::builder().registered_tools(false),
        vec![tools.clone()],
    )
    .unwrap();
    let first = live.executor();
    assert_eq!(names(&first), ["ai-tool.search_tools"]);
    let generation = tools.generation();
    let found = first
        .execute(
            "ai-tool.search_tools",
            json!({ "query": "upper-case text", "limit": 1 }),
        )
        .await
        .unwrap();
    assert!(
        found.to_text().contains("booking.text.upper"),
        "{}",
        found.to_text()
    );
    // An empty query is refused before anything is sent.
    let err = first
        .execute("ai-tool.search_tools", json!({ "query": "" }))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{err}");
    tokio::time::timeout(Duration::from_secs(10), tools.changed_after(generation))
        .await
        .expect("no tools/list_changed after the search");
    let next = live.executor();
    assert_eq!(
        names(&next),
        ["ai-tool.search_tools", "ai-tool.booking.text.upper"]
    );
    let out = next
        .execute("ai-tool.booking.text.upper", json!({ "text": "abc" }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "ABC");
}

#[tokio::test]
async fn a_server_process_killed_mid_call_fails_the_call_naming_it() {
    let pid_file = std::env::temp_dir().join(format!(
        "ai-tool-killed-mid-call-{}.pid",
        std::process::id()
    ));
    // The shell writes its pid, then becomes the server: the pid is the server's.
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg("echo $$ > \"$1\" && exec \"$0\" stdio")
        .arg(example_server())
        .arg(&pid_file);
    let tools = McpTools::connect_stdio(command).await.unwrap();
    let exec = Executor::builder()
        .registered_tools(false)
        .tools(tools.tools())
        .build()
        .unwrap();
    // The server's `wait` reports progress as it starts: then the call is surely running.
    let (tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let sink: ai_tool::ProgressSink = std::sync::Arc::new(move |_: ai_tool::Progress<'_>| {
        let _ = tx.send(());
    });
    let options = ai_tool::CallOptions::default().with_progress(sink);
    let call = exec.execute_with("booking.wait", json!({ "millis": 600_000 }), &options);
    let kill = async {
        tokio::time::timeout(Duration::from_secs(30), progress.recv())
            .await
            .expect("the call never started")
            .expect("the progress sink");
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let killed = std::process::Command::new("kill")
            .args(["-KILL", pid.trim()])
            .status()
            .unwrap();
        assert!(killed.success(), "kill {pid}");
    };
    let (result, ()) =
        tokio::time::timeout(Duration::from_secs(30), async { tokio::join!(call, kill) })
            .await
            .expect("the call still waits for a server that was killed");
    let _ = std::fs::remove_file(&pid_file);
    let err = result.unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Failed, "{err}");
    // Named as it was started: the program, `"sh"` here.
    assert!(err.to_string().contains("\"sh\""), "{err}");
}

#[cfg(feature = "cli")]
#[tokio::test]
async fn the_gateway_follows_an_upstream_whose_list_changes() {
    let Some(installed) = mcp_tools(
        "the_gateway_follows_an_upstream_whose_list_changes",
        "python",
    ) else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/python_server.py");
    let upstream = format!("stdio:python3 {} stdio", script.display());
    let mut gateway = Spawned::start(
        Command::new(env!("CARGO_BIN_EXE_ai-tool"))
            .args(["serve", "--http", "127.0.0.1:0", "--upstream", &upstream])
            .env("PYTHONPATH", installed.join("python"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    );
    let url = gateway.serving_url().await;
    let tools = McpTools::connect_http(&url).await.unwrap();
    let live = RefreshingExecutor::new(
        || Executor::builder().registered_tools(false),
        vec![tools.clone()],
    )
    .unwrap();
    let before = live.executor();
    assert!(before.spec("ai-tool.pysdk.math.double").is_none());
    let generation = tools.generation();
    // The upstream adds a tool and tells the gateway, which lists again and tells us.
    let out = before
        .execute("ai-tool.pysdk.grow", json!({}))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "grown");
    tokio::time::timeout(Duration::from_secs(10), tools.changed_after(generation))
        .await
        .expect("the gateway did not pass the upstream's tools/list_changed on");
    let after = live.executor();
    let out = after
        .execute("ai-tool.pysdk.math.double", json!({ "n": 21 }))
        .await
        .unwrap();
    assert!(out.to_text().contains("42"), "{}", out.to_text());
    // What was there before is still served.
    let out = after
        .execute("ai-tool.pysdk.grow", json!({}))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "grown");
}
