//! MCP end to end: our rmcp client against our server in-process (a duplex pipe), tools imported
//! from our own server, and the official Python SDK's client against the example server.
#![cfg(feature = "mcp")]

use std::sync::Arc;
use std::time::Duration;

use ai_tool::mcp::rmcp::model::{
    CallToolRequestParams, PaginatedRequestParams, ProgressNotificationParam,
};
use ai_tool::mcp::rmcp::service::{NotificationContext, RoleClient, RunningService, ServiceError};
use ai_tool::mcp::rmcp::{ClientHandler, ServiceExt};
use ai_tool::mcp::{McpBuilderExt, McpServer, McpTools, TOOLS_PER_PAGE};
use ai_tool::prelude::*;
use ai_tool::{SafetyHints, ToolMetadata};
use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::mpsc;

struct Shop;

#[derive(Serialize)]
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

/// Our server on one end of a pipe, our client on the other.
async fn connect(exec: Executor) -> RunningService<RoleClient, ()> {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let server = McpServer::new(exec).unwrap();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
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
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let server = McpServer::new(exec).unwrap();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
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

// Import: our client's executor over our server.

async fn imported(exec: Executor) -> (McpTools, Executor) {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let server = McpServer::new(exec)
        .unwrap()
        .with_server_info("shop", "1.0.0");
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let tools = McpTools::connect("in-process shop", client_end)
        .await
        .unwrap();
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
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let server = McpServer::new(executor(tx)).unwrap();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
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

// Over real transports: the example server as a child process.

mod processes {
    use std::path::{Path, PathBuf};
    use std::process::Stdio;
    use std::sync::OnceLock;
    use std::time::Duration;

    use ai_tool::mcp::McpTools;
    use ai_tool::prelude::*;
    use serde_json::json;
    use tokio::io::{AsyncBufReadExt, BufReader};
    use tokio::process::{Child, Command};

    /// `examples/mcp_server.rs`, built with this test's features into this test's target
    /// directory.
    fn example_server() -> &'static Path {
        static BUILT: OnceLock<PathBuf> = OnceLock::new();
        BUILT.get_or_init(|| {
            let status = std::process::Command::new(env!("CARGO"))
                .args([
                    "build",
                    "--quiet",
                    "--features",
                    "mcp",
                    "--example",
                    "mcp_server",
                ])
                .arg("--manifest-path")
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
                .status()
                .expect("running cargo");
            assert!(status.success(), "building the mcp_server example failed");
            let exe = std::env::current_exe().unwrap();
            // target/<profile>/deps/mcp-HASH -> target/<profile>/examples/mcp_server
            let path = exe
                .parent()
                .unwrap()
                .parent()
                .unwrap()
                .join("examples")
                .join(format!("mcp_server{}", std::env::consts::EXE_SUFFIX));
            assert!(path.is_file(), "no {}", path.display());
            path
        })
    }

    /// The implementations `scripts/mcp-tools.sh` installs. `None`, with a note, only when
    /// `AI_TOOL_MCP_TOOLS` is unset and the default cache is absent.
    fn mcp_tools(test: &str) -> Option<PathBuf> {
        match std::env::var_os("AI_TOOL_MCP_TOOLS") {
            Some(dir) => {
                let dir = PathBuf::from(dir);
                assert!(
                    dir.join("python").is_dir(),
                    "AI_TOOL_MCP_TOOLS={} has no python/: run scripts/mcp-tools.sh",
                    dir.display()
                );
                Some(dir)
            }
            None => {
                let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-tools");
                if default.join("python").is_dir() {
                    Some(default)
                } else {
                    eprintln!(
                        "note: {test} skipped: AI_TOOL_MCP_TOOLS is unset and target/mcp-tools \
                         is absent (run scripts/mcp-tools.sh)"
                    );
                    None
                }
            }
        }
    }

    /// The example serving HTTP on a free port of 127.0.0.1; its URL once it listens.
    async fn http_server(token: Option<&str>) -> (Child, String) {
        let mut command = Command::new(example_server());
        command
            .args(["http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(token) = token {
            command.env("MCP_TOKEN", token);
        }
        let mut child = command.spawn().unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("the server did not start")
            .unwrap()
            .expect("the server exited");
        let url = line
            .strip_prefix("serving MCP on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line}"))
            .to_owned();
        (child, url)
    }

    /// Runs `tests/mcp/python_client.py` with the SDK on its path; panics with its output when
    /// a check fails.
    async fn python_client(tools: &Path, args: &[&str]) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/python_client.py");
        let child = Command::new("python3")
            .arg(script)
            .args(args)
            .env("PYTHONPATH", tools.join("python"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let out = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
            .await
            .expect("the Python client hung")
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        println!("{stdout}");
        assert!(
            out.status.success(),
            "python client {args:?} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[tokio::test]
    async fn the_python_sdk_client_works_with_our_server_over_stdio() {
        let Some(tools) = mcp_tools("the_python_sdk_client_works_with_our_server_over_stdio")
        else {
            return;
        };
        let server = example_server().to_str().unwrap();
        for mode in ["auto", "legacy"] {
            python_client(&tools, &[mode, "stdio", server, "stdio"]).await;
        }
    }

    #[tokio::test]
    async fn the_python_sdk_client_works_with_our_server_over_http() {
        let Some(tools) = mcp_tools("the_python_sdk_client_works_with_our_server_over_http") else {
            return;
        };
        let (mut server, url) = http_server(None).await;
        for mode in ["auto", "legacy"] {
            python_client(&tools, &[mode, "http", &url]).await;
        }
        server.kill().await.unwrap();
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
        let (mut server, url) = http_server(Some("s3cret")).await;
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
        server.kill().await.unwrap();
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
        let Some(tools) = mcp_tools("tools_are_imported_from_the_python_sdk_server_over_stdio")
        else {
            return;
        };
        let imported = McpTools::connect_stdio(python_server(&tools, &["stdio"]))
            .await
            .unwrap();
        check_python_server_tools(imported).await;
    }

    #[tokio::test]
    async fn tools_are_imported_from_the_python_sdk_server_over_http() {
        let Some(tools) = mcp_tools("tools_are_imported_from_the_python_sdk_server_over_http")
        else {
            return;
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut server = python_server(&tools, &["http", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for_port(port).await;
        let url = format!("http://127.0.0.1:{port}/mcp");
        check_python_server_tools(McpTools::connect_http(&url).await.unwrap()).await;
        server.kill().await.unwrap();
    }

    /// Waits until something accepts connections on the port of 127.0.0.1.
    async fn wait_for_port(port: u16) {
        for _ in 0..300 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("nothing listens on 127.0.0.1:{port} after 30 s");
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
        let mut gateway = Command::new(env!("CARGO_BIN_EXE_ai-tool"))
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
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(gateway.stderr.take().unwrap()).lines();
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("the gateway did not start")
            .unwrap()
            .expect("the gateway exited");
        let url = line
            .strip_prefix("serving MCP on ")
            .expect(&line)
            .to_owned();
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
        gateway.kill().await.unwrap();
    }
}
