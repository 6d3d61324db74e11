//! The npm packages `scripts/mcp-tools.sh` installs: `@modelcontextprotocol/server-everything`
//! as a server we import from (stdio and HTTP), and `@modelcontextprotocol/inspector`'s
//! `--cli` mode as a client of our example server (stdio and HTTP).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use ai_tool::mcp::{McpBuilderExt, McpTools};
use ai_tool::prelude::*;
use serde_json::{json, Value};
use tokio::process::Command;
use tokio::sync::mpsc;

use crate::support::{
    example_server, free_port, http_example, mcp_tools, run_to_end, wait_for_port, Spawned,
};

/// An installed package's command, from `node_modules/.bin`.
fn npm_bin(installed: &Path, name: &str) -> PathBuf {
    installed.join("npm/node_modules/.bin").join(name)
}

fn everything_stdio(installed: &Path) -> Command {
    let mut command = Command::new(npm_bin(installed, "mcp-server-everything"));
    command.arg("stdio").stderr(Stdio::null());
    command
}

/// Checks `echo`, `get-sum`, `get-structured-content` (against its outputSchema), and the
/// long-running tool's progress and cancellation.
async fn check_everything(tools: McpTools) {
    let exec = Executor::builder()
        .registered_tools(false)
        .mcp(&tools.with_namespace("every"))
        .build()
        .unwrap();
    let out = exec
        .execute("every.echo", json!({ "message": "hello" }))
        .await
        .unwrap();
    assert!(out.to_text().contains("hello"), "{}", out.to_text());
    let err = exec.execute("every.echo", json!({})).await.unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{err}");

    let out = exec
        .execute("every.get-sum", json!({ "a": 2, "b": 40 }))
        .await
        .unwrap();
    assert!(out.to_text().contains("42"), "{}", out.to_text());

    let spec = exec.spec("every.get-structured-content").unwrap();
    let schema = spec.output_schema.clone().expect("an outputSchema");
    let out = exec
        .execute(
            "every.get-structured-content",
            json!({ "location": "Chicago" }),
        )
        .await
        .unwrap();
    let structured = out.structured.expect("structured content");
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(
        validator.is_valid(&structured),
        "{structured} against {schema}"
    );

    // Progress: four steps in half a second.
    let (tx, mut reports) = mpsc::unbounded_channel();
    let sink: ai_tool::ProgressSink = Arc::new(move |p: ai_tool::Progress<'_>| {
        let _ = tx.send((p.done, p.total));
    });
    let options = CallOptions::default().with_progress(sink.clone());
    let out = exec
        .execute_with(
            "every.trigger-long-running-operation",
            json!({ "duration": 0.5, "steps": 4 }),
            &options,
        )
        .await
        .unwrap();
    assert!(out.to_text().contains("completed"), "{}", out.to_text());
    let first = tokio::time::timeout(Duration::from_secs(10), reports.recv()).await;
    assert_eq!(first.expect("no progress"), Some((1.0, Some(4.0))));

    // Cancellation: a minute-long operation stopped after its first report.
    let (tx, mut reports) = mpsc::unbounded_channel();
    let sink: ai_tool::ProgressSink = Arc::new(move |p: ai_tool::Progress<'_>| {
        let _ = tx.send(p.done);
    });
    let token = CancellationToken::new();
    let options = CallOptions::default()
        .with_progress(sink)
        .with_cancellation(token.clone());
    let long = exec.execute_with(
        "every.trigger-long-running-operation",
        json!({ "duration": 60, "steps": 120 }),
        &options,
    );
    let cancel = async {
        let first = tokio::time::timeout(Duration::from_secs(10), reports.recv()).await;
        token.cancel();
        first
    };
    let (result, first) = tokio::join!(long, cancel);
    assert!(first.expect("no progress before cancelling").is_some());
    assert_eq!(result.unwrap_err().kind(), ToolErrorKind::Cancelled);
    // The connection serves on.
    let out = exec
        .execute("every.echo", json!({ "message": "still here" }))
        .await
        .unwrap();
    assert!(out.to_text().contains("still here"), "{}", out.to_text());
}

#[tokio::test]
async fn server_everything_is_imported_over_stdio() {
    let Some(installed) = mcp_tools("server_everything_is_imported_over_stdio", "npm") else {
        return;
    };
    let tools = McpTools::connect_stdio(everything_stdio(&installed))
        .await
        .unwrap();
    check_everything(tools).await;
}

#[tokio::test]
async fn server_everything_is_imported_over_http() {
    let Some(installed) = mcp_tools("server_everything_is_imported_over_http", "npm") else {
        return;
    };
    let port = free_port();
    let _server = Spawned::start(
        Command::new(npm_bin(&installed, "mcp-server-everything"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    wait_for_port(port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    check_everything(McpTools::connect_http(&url).await.unwrap()).await;
}

/// Runs the inspector's `--cli` mode with `args` (the server first); its standard output as
/// JSON. Panics with its output when it fails.
async fn inspector(installed: &Path, args: &[&str]) -> Value {
    let mut command = Command::new(npm_bin(installed, "mcp-inspector"));
    command
        .arg("--cli")
        .args(args)
        .env("MCP_CATALOG_PATH", installed.join("inspector-catalog.json"));
    let (status, stdout, stderr) = run_to_end(&mut command).await;
    assert!(
        status.success(),
        "inspector {args:?} failed ({status}):\n{stdout}\n{stderr}"
    );
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("inspector {args:?} printed no JSON ({e}):\n{stdout}\n{stderr}"))
}

/// Lists (with `--strict`: our schemas are portable) and calls through the inspector.
async fn check_inspector(installed: &Path, server: &[&str]) {
    let listed = inspector(
        installed,
        &[server, &["--method", "tools/list", "--strict"]].concat(),
    )
    .await;
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .expect("a tools array")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        ["check", "availability", "wait", "text.upper"]
            .iter()
            .all(|n| names.contains(n)),
        "{names:?}"
    );
    let called = inspector(
        installed,
        &[
            server,
            &[
                "--method",
                "tools/call",
                "--tool-name",
                "text.upper",
                "--tool-arg",
                "text=abc",
            ],
        ]
        .concat(),
    )
    .await;
    assert_eq!(called["content"][0]["text"], "ABC", "{called}");
    assert_ne!(called["isError"], true, "{called}");
}

#[tokio::test]
async fn the_inspector_cli_lists_and_calls_our_server_over_stdio() {
    let Some(installed) = mcp_tools(
        "the_inspector_cli_lists_and_calls_our_server_over_stdio",
        "npm",
    ) else {
        return;
    };
    let server = example_server().to_str().unwrap();
    check_inspector(&installed, &[server, "stdio"]).await;
}

#[tokio::test]
async fn the_inspector_cli_lists_and_calls_our_server_over_http() {
    let Some(installed) = mcp_tools(
        "the_inspector_cli_lists_and_calls_our_server_over_http",
        "npm",
    ) else {
        return;
    };
    let (_server, url) = http_example(None).await;
    check_inspector(&installed, &[&url, "--transport", "http"]).await;
}

/// The gateway (`ai-tool serve --upstream ..`) in front of server-everything and the Python
/// SDK's server together: both servers' tools through one, and progress passed along.
#[cfg(feature = "cli")]
#[tokio::test]
async fn the_gateway_serves_server_everything_and_the_python_server_as_one() {
    let Some(installed) = mcp_tools(
        "the_gateway_serves_server_everything_and_the_python_server_as_one",
        "npm",
    ) else {
        return;
    };
    let everything = npm_bin(&installed, "mcp-server-everything");
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/python_server.py");
    let mut gateway = Spawned::start(
        Command::new(env!("CARGO_BIN_EXE_ai-tool"))
            .args(["serve", "--http", "127.0.0.1:0"])
            .arg("--upstream")
            .arg(format!("stdio:{} stdio", everything.display()))
            .arg("--upstream")
            .arg(format!("stdio:python3 {} stdio", python.display()))
            .env("PYTHONPATH", installed.join("python"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    );
    let url = gateway.serving_url().await;
    let tools = McpTools::connect_http(&url).await.unwrap();
    let exec = Executor::builder()
        .registered_tools(false)
        .mcp(&tools)
        .build()
        .unwrap();
    let named = |suffix: &str| -> String {
        exec.tools()
            .map(|s| s.name.clone())
            .find(|n| n.ends_with(suffix))
            .unwrap_or_else(|| panic!("no tool ending in {suffix}"))
    };
    let add = named("pysdk.math.add");
    let out = exec
        .execute(&add, json!({ "a": 2, "b": 40 }))
        .await
        .unwrap();
    assert_eq!(out.structured, Some(json!({ "total": 42 })));
    let echo = named(".echo");
    let out = exec
        .execute(&echo, json!({ "message": "through the gateway" }))
        .await
        .unwrap();
    assert!(
        out.to_text().contains("through the gateway"),
        "{}",
        out.to_text()
    );
    let err = exec
        .execute(&add, json!({ "a": "two", "b": 1 }))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::InvalidArguments, "{err}");

    // Progress goes from server-everything through the gateway to our caller.
    let (tx, mut reports) = mpsc::unbounded_channel();
    let sink: ai_tool::ProgressSink = Arc::new(move |p: ai_tool::Progress<'_>| {
        let _ = tx.send(p.done);
    });
    let options = CallOptions::default().with_progress(sink);
    let long = named(".trigger-long-running-operation");
    exec.execute_with(&long, json!({ "duration": 0.4, "steps": 2 }), &options)
        .await
        .unwrap();
    let first = tokio::time::timeout(Duration::from_secs(10), reports.recv()).await;
    assert_eq!(first.expect("no progress through the gateway"), Some(1.0));
}
