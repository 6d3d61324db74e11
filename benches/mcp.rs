//! MCP in-process (a duplex pipe, rmcp's client): the `tools/call` round trip of the same
//! two-field tool served by our `McpServer` (which validates the arguments against the schema)
//! and by an rmcp `#[tool_router]` server (which deserializes them, without validating), a
//! whole `tools/list` of 1,000 tools (two pages) from our server's cached list, and a call run
//! as a task (created, then one `tasks/get` after it ended) beside the same call answered at
//! once, both at protocol 2026-07-28.
//!
//! Over HTTP (protocol 2026-07-28, rmcp's client, 127.0.0.1): the round trip to one replica
//! directly and through HAProxy (`scripts/haproxy.sh`, Debian's package) to one and to three;
//! then, from 32 concurrent callers in this one process, each front's calls per second and
//! 99th percentile, printed (the replicas, HAProxy and the callers share the machine).
//!
//! `cargo bench --features mcp --bench mcp`

use std::sync::Arc;

use std::path::Path;
use std::time::{Duration, Instant};

use ai_tool::mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, GetTaskParams,
    Implementation, ProtocolVersion, ServerCapabilities, ServerConfig, TaskPayload,
};
use ai_tool::mcp::rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService,
};
use ai_tool::mcp::rmcp::transport::StreamableHttpClientTransport;
use ai_tool::mcp::rmcp::{ServerHandler, ServiceExt};
use ai_tool::mcp::{serve_http_with, HttpOptions, McpServer};
use ai_tool::prelude::*;
use ai_tool::{TaskSupport, ToolMetadata};
use criterion::{criterion_group, criterion_main, Criterion};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_handler, tool_router};
use serde_json::json;
use tokio::runtime::Runtime;

pub struct Calc;

#[ai_tools]
impl Calc {
    /// Adds two numbers.
    #[ai_tool]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct AddRequest {
    a: i64,
    b: i64,
}

#[derive(Clone)]
pub struct RmcpCalc {
    #[expect(dead_code, reason = "read by the code #[tool_handler] generates")]
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl RmcpCalc {
    #[tool(description = "Adds two numbers.")]
    fn add(&self, Parameters(AddRequest { a, b }): Parameters<AddRequest>) -> String {
        (a + b).to_string()
    }
}

#[tool_handler]
impl ServerHandler for RmcpCalc {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// A client connected through a pipe to `server`, served on the runtime.
fn connect<S: ServerHandler>(rt: &Runtime, server: S) -> RunningService<RoleClient, ()> {
    rt.block_on(async {
        let (server_end, client_end) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_end).await {
                let _ = running.waiting().await;
            }
        });
        ().serve(client_end).await.expect("handshake")
    })
}

fn add_call() -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("add");
    params.arguments = json!({ "a": 2, "b": 3 }).as_object().cloned();
    params
}

fn round_trip(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let exec = Executor::builder().service(Arc::new(Calc)).build().unwrap();
    let ours = connect(&rt, McpServer::new(exec).unwrap());
    let theirs = connect(
        &rt,
        RmcpCalc {
            tool_router: RmcpCalc::tool_router(),
        },
    );
    // Both answer the same.
    for client in [&ours, &theirs] {
        let result = rt.block_on(client.call_tool(add_call())).unwrap();
        assert_eq!(
            serde_json::to_value(&result.content).unwrap()[0]["text"],
            "5"
        );
    }
    let mut group = c.benchmark_group("mcp tools/call round trip");
    group.bench_function("ai-tool McpServer (validates)", |b| {
        b.iter(|| rt.block_on(ours.call_tool(add_call())).unwrap())
    });
    group.bench_function("rmcp #[tool_router]", |b| {
        b.iter(|| rt.block_on(theirs.call_tool(add_call())).unwrap())
    });
    group.finish();

    let tools = (0..1000).map(|i| {
        DynamicTool::new(
            format!("tool_{i:04}"),
            "A tool among a thousand",
            json!({ "type": "object", "properties": { "q": { "type": "string" } } }),
            |_, _| async { Ok(ToolOutput::empty()) },
        )
    });
    let exec = Executor::builder()
        .registered_tools(false)
        .tools(tools)
        .build()
        .unwrap();
    let many = connect(&rt, McpServer::new(exec).unwrap());
    assert_eq!(rt.block_on(many.list_all_tools()).unwrap().len(), 1000);
    c.bench_function("mcp tools/list, 1,000 tools (every page)", |b| {
        b.iter(|| rt.block_on(many.list_all_tools()).unwrap())
    });
}

/// rmcp's client of protocol 2026-07-28 (each request standing alone), taking tasks.
fn modern() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::builder().enable_tasks().build(),
        Implementation::new("bench", "0"),
    )
}

fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

/// `add`, answered at once, and `add_task`, the same run as a task.
fn tasks_executor() -> Executor {
    let add = |name: &str, task: TaskSupport| {
        DynamicTool::new(
            name,
            "Adds two numbers",
            json!({
                "type": "object",
                "properties": { "a": { "type": "integer" }, "b": { "type": "integer" } },
                "required": ["a", "b"]
            }),
            |args, _| async move {
                let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
                Ok(ToolOutput::text(sum.to_string()))
            },
        )
        .with_metadata(ToolMetadata {
            task,
            ..ToolMetadata::default()
        })
    };
    Executor::builder()
        .registered_tools(false)
        .tool(add("add", TaskSupport::Forbidden))
        .tool(add("add_task", TaskSupport::Optional))
        .build()
        .unwrap()
}

/// A call as a task: created, then `tasks/get` until it has ended (at once for `add`).
async fn as_task(client: &RunningService<RoleClient, ClientConfig>) {
    let mut params = add_call();
    params.name = "add_task".into();
    let CallToolResponse::Task(created) = client.peer().call_tool_once(params).await.unwrap()
    else {
        panic!("not a task");
    };
    loop {
        let got = client
            .peer()
            .get_task(GetTaskParams::new(created.task.task_id.clone()))
            .await
            .unwrap();
        if let TaskPayload::Completed { .. } = got.task.payload {
            return;
        }
        tokio::task::yield_now().await;
    }
}

fn tasks(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = rt.block_on(async {
        let (server_end, client_end) = tokio::io::duplex(1 << 20);
        let server = McpServer::new(tasks_executor()).unwrap();
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_end).await {
                let _ = running.waiting().await;
            }
        });
        modern()
            .serve_with_lifecycle(client_end, lifecycle())
            .await
            .unwrap()
    });
    let mut group = c.benchmark_group("mcp 2026-07-28, in-process");
    group.bench_function("tools/call answered at once", |b| {
        b.iter(|| {
            rt.block_on(client.peer().call_tool_once(add_call()))
                .unwrap()
        })
    });
    group.bench_function("tools/call as a task, then tasks/get", |b| {
        b.iter(|| rt.block_on(as_task(&client)))
    });
    group.finish();
}

/// HAProxy started by `scripts/haproxy.sh` in front of `backends`, stopped when dropped.
struct Balancer {
    run: std::path::PathBuf,
    url: String,
}

impl Balancer {
    fn start(name: &str, backends: &[u16]) -> Option<Balancer> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/haproxy.sh");
        let front = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let run = std::env::temp_dir().join(format!("ai-tool-bench-{name}-{}", std::process::id()));
        let output = std::process::Command::new("bash")
            .arg(script)
            .arg("start")
            .arg(&run)
            .arg(front.to_string())
            .args(backends.iter().map(u16::to_string))
            .output()
            .ok()?;
        if !output.status.success() {
            eprintln!(
                "HAProxy did not start: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            return None;
        }
        Some(Balancer {
            run,
            url: format!("http://127.0.0.1:{front}/mcp"),
        })
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/haproxy.sh");
        let _ = std::process::Command::new("bash")
            .arg(script)
            .arg("stop")
            .arg(&self.run)
            .status();
    }
}

/// 32 callers making `calls` calls in all through `url`: calls per second and the 99th
/// percentile.
async fn load(url: &str, calls: usize) -> (f64, Duration) {
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut callers = Vec::new();
    for _ in 0..32 {
        let (url, next) = (url.to_owned(), Arc::clone(&next));
        callers.push(tokio::spawn(async move {
            let transport = StreamableHttpClientTransport::from_uri(url.as_str());
            let client = modern()
                .serve_with_lifecycle(transport, lifecycle())
                .await
                .unwrap();
            let mut took = Vec::new();
            while next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < calls {
                let start = Instant::now();
                client.peer().call_tool_once(add_call()).await.unwrap();
                took.push(start.elapsed());
            }
            took
        }));
    }
    let mut took = Vec::new();
    for caller in callers {
        took.extend(caller.await.unwrap());
    }
    let seconds = started.elapsed().as_secs_f64();
    took.sort();
    let p99 = took[(took.len() * 99 / 100).min(took.len() - 1)];
    (took.len() as f64 / seconds, p99)
}

fn behind_haproxy(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Three replicas of one server, in this process, each on a port of its own.
    let ports: Vec<u16> = (0..3)
        .map(|_| {
            rt.block_on(async {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let port = listener.local_addr().unwrap().port();
                let server = McpServer::new(tasks_executor()).unwrap();
                tokio::spawn(serve_http_with(server, listener, HttpOptions::default()));
                port
            })
        })
        .collect();
    let (Some(one), Some(three)) = (
        Balancer::start("one", &ports[..1]),
        Balancer::start("three", &ports),
    ) else {
        eprintln!("skipping the HAProxy benches: scripts/haproxy.sh could not start HAProxy");
        return;
    };
    let direct = format!("http://127.0.0.1:{}/mcp", ports[0]);
    let fronts = [
        ("one replica, directly", direct.as_str()),
        ("HAProxy to one replica", one.url.as_str()),
        ("HAProxy to three replicas", three.url.as_str()),
    ];
    let mut group = c.benchmark_group("mcp tools/call over HTTP (2026-07-28)");
    for (name, url) in fronts {
        let client = rt.block_on(async {
            let transport = StreamableHttpClientTransport::from_uri(url);
            modern()
                .serve_with_lifecycle(transport, lifecycle())
                .await
                .unwrap()
        });
        group.bench_function(name, |b| {
            b.iter(|| {
                rt.block_on(client.peer().call_tool_once(add_call()))
                    .unwrap()
            })
        });
    }
    group.finish();
    // Under load: short in a test run (`cargo test` runs benches once), 5,000 calls otherwise.
    let calls = if std::env::args().any(|a| a == "--bench") {
        5_000
    } else {
        64
    };
    for (name, url) in fronts {
        let (rate, p99) = rt.block_on(load(url, calls));
        println!("{name}: {calls} calls from 32 callers, {rate:.0} calls/s, p99 {p99:?}");
    }
}

criterion_group!(benches, round_trip, tasks, behind_haproxy);
criterion_main!(benches);
