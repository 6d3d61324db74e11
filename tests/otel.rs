//! OpenTelemetry export end to end: an agent run whose tool is imported from an MCP server, the
//! spans and metrics sent over OTLP/HTTP to a receiver this test starts on 127.0.0.1, which
//! decodes them with the OpenTelemetry protocol's own types. The served call's span must be a
//! child of the caller's across the MCP hop: the server runs its calls in tasks of its own,
//! outside the caller's span, so only `_meta.traceparent` can join them.
#![cfg(all(feature = "otel", feature = "mcp"))]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use ai_tool::agent::{Agent, ModelResponse, RunOptions, ScriptedModel, Usage};
use ai_tool::mcp::rmcp::ServiceExt;
use ai_tool::mcp::{McpBuilderExt, McpServer, McpTools};
use ai_tool::otel::Telemetry;
use ai_tool::prelude::*;
use ai_tool::ToolCall;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

struct Shop;

#[ai_tools]
impl Shop {
    /// Adds two numbers.
    #[ai_tool(read_only)]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

/// What the receiver was sent, by path.
#[derive(Default)]
struct Received {
    traces: Vec<ExportTraceServiceRequest>,
    metrics: Vec<ExportMetricsServiceRequest>,
}

/// An OTLP/HTTP receiver on 127.0.0.1, on a thread of its own (the exporters' flush blocks
/// the test's thread until they are answered). Answers every export with an empty success.
fn receiver() -> (String, Arc<Mutex<Received>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let received = Arc::new(Mutex::new(Received::default()));
    let shared = Arc::clone(&received);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || serve_connection(stream, &shared));
        }
    });
    (url, received)
}

/// Reads requests off one connection until it closes.
fn serve_connection(stream: std::net::TcpStream, received: &Mutex<Received>) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        let mut length = 0;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap();
                }
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        {
            let mut received = received.lock().unwrap();
            match path.as_str() {
                "/v1/traces" => received
                    .traces
                    .push(ExportTraceServiceRequest::decode(&body[..]).unwrap()),
                "/v1/metrics" => received
                    .metrics
                    .push(ExportMetricsServiceRequest::decode(&body[..]).unwrap()),
                other => panic!("an export to {other}"),
            }
        }
        writer
            .write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n",
            )
            .unwrap();
    }
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    let value = span
        .attributes
        .iter()
        .find(|kv| kv.key == key)?
        .value
        .as_ref()?;
    match value.value.as_ref()? {
        AnyValue::StringValue(text) => Some(text.clone()),
        AnyValue::IntValue(n) => Some(n.to_string()),
        other => Some(format!("{other:?}")),
    }
}

#[tokio::test]
async fn an_agent_runs_spans_cross_the_mcp_hop_and_its_metrics_arrive_over_otlp() {
    let (url, received) = receiver();
    let telemetry = Telemetry::otlp_http()
        .endpoint(&url)
        .service_name("otel-test")
        .build()
        .unwrap();
    let subscriber = tracing_subscriber::registry().with(telemetry.layer());
    let guard = tracing::subscriber::set_default(subscriber);

    // The shop's tools served in-process, imported, and offered to an agent.
    let served = Executor::builder().service(Arc::new(Shop)).build().unwrap();
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let server = McpServer::new(served)
        .unwrap()
        .with_server_info("shop", "1.0.0");
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let shop = McpTools::connect("in-process shop", client_end)
        .await
        .unwrap();
    let imported = Executor::builder()
        .registered_tools(false)
        .mcp(&shop)
        .build()
        .unwrap();
    let usage = Usage {
        input_tokens: 120,
        output_tokens: 9,
        ..Usage::default()
    };
    let model = ScriptedModel::new()
        .then(
            ModelResponse::calling([ToolCall::new(
                "call_1",
                "shop.add",
                json!({"a": 40, "b": 2}),
            )])
            .with_usage(usage),
        )
        .then(ModelResponse::answer("42").with_usage(usage));
    let agent = Agent::builder(model).executor(imported).build();
    let result = agent.run("40 + 2?", &RunOptions::default()).await.unwrap();
    assert_eq!(result.text, "42");
    let output = result.steps[0].calls[0].result.as_ref().unwrap();
    assert_eq!(output.to_text(), "42");
    drop(guard);
    telemetry.flush().unwrap();

    let received = received.lock().unwrap();
    let spans: Vec<&Span> = received
        .traces
        .iter()
        .flat_map(|r| &r.resource_spans)
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| &s.spans)
        .collect();
    let named = |name: &str, kind: SpanKind| -> &Span {
        spans
            .iter()
            .find(|s| s.name == name && s.kind == kind as i32)
            .unwrap_or_else(|| {
                let seen: Vec<_> = spans.iter().map(|s| (&s.name, s.kind)).collect();
                panic!("no span {name} of kind {kind:?} among {seen:?}")
            })
    };
    let run = named("invoke_agent", SpanKind::Internal);
    let chats: Vec<&&Span> = spans.iter().filter(|s| s.name == "chat").collect();
    let tool = named("execute_tool shop.add", SpanKind::Internal);
    let sent = named("tools/call add", SpanKind::Client);
    let served = named("tools/call add", SpanKind::Server);

    assert_eq!(chats.len(), 2);
    assert!(
        spans.iter().all(|s| s.trace_id == run.trace_id),
        "one trace"
    );
    assert!(chats.iter().all(|c| c.parent_span_id == run.span_id));
    assert_eq!(tool.parent_span_id, run.span_id);
    assert_eq!(sent.parent_span_id, tool.span_id);
    assert_eq!(
        served.parent_span_id, sent.span_id,
        "the hop, by _meta.traceparent"
    );
    assert_eq!(
        attribute(chats[0], "gen_ai.operation.name").as_deref(),
        Some("chat")
    );
    assert_eq!(
        attribute(chats[0], "gen_ai.usage.input_tokens").as_deref(),
        Some("120")
    );
    assert_eq!(
        attribute(tool, "gen_ai.tool.name").as_deref(),
        Some("shop.add")
    );
    assert_eq!(
        attribute(tool, "gen_ai.tool.call.id").as_deref(),
        Some("call_1")
    );
    assert_eq!(
        attribute(tool, "gen_ai.tool.call.arguments"),
        None,
        "content is opt-in"
    );
    assert_eq!(
        attribute(served, "mcp.method.name").as_deref(),
        Some("tools/call")
    );
    let service = received.traces[0].resource_spans[0]
        .resource
        .as_ref()
        .and_then(|r| r.attributes.iter().find(|kv| kv.key == "service.name"))
        .and_then(|kv| kv.value.as_ref()?.value.clone());
    assert_eq!(service, Some(AnyValue::StringValue("otel-test".into())));

    // The metrics: two requests' durations, and their tokens by type.
    let metrics: Vec<_> = received
        .metrics
        .iter()
        .flat_map(|r| &r.resource_metrics)
        .flat_map(|r| &r.scope_metrics)
        .flat_map(|s| &s.metrics)
        .collect();
    let metric = |name: &str| {
        metrics
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no metric {name}"))
    };
    let duration = metric("gen_ai.client.operation.duration");
    assert_eq!(duration.unit, "s");
    let Some(Data::Histogram(histogram)) = &duration.data else {
        panic!("not a histogram: {duration:?}");
    };
    let count: u64 = histogram.data_points.iter().map(|p| p.count).sum();
    assert_eq!(count, 2);
    assert_eq!(histogram.data_points[0].explicit_bounds.len(), 14);
    let tokens = metric("gen_ai.client.token.usage");
    assert_eq!(tokens.unit, "{token}");
    let Some(Data::Histogram(histogram)) = &tokens.data else {
        panic!("not a histogram: {tokens:?}");
    };
    let mut by_type: Vec<(String, f64)> = histogram
        .data_points
        .iter()
        .map(|p| {
            let kind = p
                .attributes
                .iter()
                .find(|kv| kv.key == "gen_ai.token.type")
                .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
                    AnyValue::StringValue(s) => Some(s.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            (kind, p.sum.unwrap_or_default())
        })
        .collect();
    by_type.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        by_type,
        [("input".to_owned(), 240.0), ("output".to_owned(), 18.0)]
    );
    drop(received);
    telemetry.shutdown().unwrap();
}

#[tokio::test]
async fn a_malformed_traceparent_is_ignored_and_the_call_served_in_a_trace_of_its_own() {
    use ai_tool::mcp::rmcp::model::{CallToolRequestParams, MetaObject};

    let (url, received) = receiver();
    let telemetry = Telemetry::otlp_http().endpoint(&url).build().unwrap();
    let subscriber = tracing_subscriber::registry().with(telemetry.layer());
    let guard = tracing::subscriber::set_default(subscriber);
    let served = Executor::builder().service(Arc::new(Shop)).build().unwrap();
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let server = McpServer::new(served).unwrap();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_end).await.unwrap();
    for traceparent in ["00-zz-not-a-trace-01", "01-", &"0".repeat(10_000)] {
        let mut params = CallToolRequestParams::new("add");
        params.arguments = json!({"a": 1, "b": 2}).as_object().cloned();
        let mut meta = MetaObject::new();
        meta.set_traceparent(traceparent);
        params.meta = Some(meta.into());
        let result = client.call_tool(params).await.unwrap();
        assert_ne!(result.is_error, Some(true), "{result:?}");
    }
    drop(guard);
    telemetry.flush().unwrap();
    let received = received.lock().unwrap();
    let served: Vec<&Span> = received
        .traces
        .iter()
        .flat_map(|r| &r.resource_spans)
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| &s.spans)
        .filter(|s| s.name == "tools/call add")
        .collect();
    assert_eq!(served.len(), 3);
    let all: Vec<(String, Vec<u8>, Vec<u8>)> = received
        .traces
        .iter()
        .flat_map(|r| &r.resource_spans)
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| &s.spans)
        .map(|s| (s.name.clone(), s.span_id.clone(), s.parent_span_id.clone()))
        .collect();
    assert!(
        served.iter().all(|s| s.parent_span_id.is_empty()),
        "each a root: {all:?}"
    );
    assert!(
        served[0].trace_id != served[1].trace_id,
        "each a trace of its own"
    );
    drop(received);
    telemetry.shutdown().unwrap();
}
