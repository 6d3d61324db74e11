//! The spans of a run carry OpenTelemetry's GenAI attribute names.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use tool_agent::{ModelResponse, RunOptions, ScriptedModel, Usage};
use tool_test_support::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A span's name and its fields, as text.
type SpanRecord = (String, Vec<(String, String)>);

/// Every span made.
#[derive(Default)]
struct Spans {
    next: AtomicU64,
    seen: Mutex<Vec<SpanRecord>>,
    /// The metric events: their fields.
    metrics: Mutex<Vec<Vec<(String, String)>>>,
}

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.push((field.name().to_owned(), value.to_string()));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.push((field.name().to_owned(), value.to_string()));
    }
}

impl Subscriber for SharedSpans {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut fields = Vec::new();
        span.record(&mut Fields(&mut fields));
        let mut seen = self.0.seen.lock().unwrap();
        seen.push((span.metadata().name().to_owned(), fields));
        Id::from_u64(self.0.next.fetch_add(1, Ordering::SeqCst) + 1)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut seen = self.0.seen.lock().unwrap();
        let index = span.into_u64() as usize - 1;
        values.record(&mut Fields(&mut seen[index].1));
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        if event.metadata().target() == tool_agent::telemetry::METRICS_TARGET {
            let mut fields = Vec::new();
            event.record(&mut Fields(&mut fields));
            self.0.metrics.lock().unwrap().push(fields);
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[derive(Clone, Default)]
struct SharedSpans(Arc<Spans>);

#[tokio::test]
async fn a_run_has_spans_for_itself_each_request_and_each_call() {
    let spans = SharedSpans::default();
    let _guard = tracing::subscriber::set_default(spans.clone());
    let usage = Usage {
        input_tokens: 11,
        output_tokens: 3,
        ..Usage::default()
    };
    let model = Arc::new(
        ScriptedModel::new()
            .then(
                ModelResponse::calling([call("call_7", "add", json!({ "a": 1, "b": 2 }))])
                    .with_usage(usage),
            )
            .then(ModelResponse::answer("3")),
    );
    let runner = agent(&model, executor([add(Arc::default())])).build();
    runner.run("1 + 2?", &RunOptions::default()).await.unwrap();

    let seen = spans.0.seen.lock().unwrap();
    let names: Vec<&str> = seen.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "gen_ai.run",
            "gen_ai.chat",
            "gen_ai.execute_tool",
            "gen_ai.chat"
        ]
    );
    let field = |span: usize, name: &str| {
        seen[span]
            .1
            .iter()
            .find(|(field, _)| field == name)
            .map(|(_, value)| value.clone())
    };
    assert_eq!(
        field(0, "gen_ai.operation.name").as_deref(),
        Some("invoke_agent")
    );
    assert_eq!(field(1, "gen_ai.operation.name").as_deref(), Some("chat"));
    assert_eq!(field(1, "gen_ai.usage.input_tokens").as_deref(), Some("11"));
    assert_eq!(field(1, "gen_ai.usage.output_tokens").as_deref(), Some("3"));
    assert_eq!(field(2, "gen_ai.tool.name").as_deref(), Some("add"));
    assert_eq!(field(2, "gen_ai.tool.call.id").as_deref(), Some("call_7"));
    // The names OpenTelemetry gives the spans, by the conventions.
    assert_eq!(field(0, "otel.name").as_deref(), Some("invoke_agent"));
    assert_eq!(
        field(1, "otel.name").as_deref(),
        Some("chat"),
        "a model without a name"
    );
    assert_eq!(field(1, "otel.kind").as_deref(), Some("client"));
    assert_eq!(field(2, "otel.name").as_deref(), Some("execute_tool add"));
    assert_eq!(field(2, "gen_ai.tool.type").as_deref(), Some("function"));
    // Arguments and results only when asked for; no error on a call that succeeded.
    assert_eq!(field(2, "gen_ai.tool.call.arguments"), None);
    assert_eq!(field(2, "gen_ai.tool.call.result"), None);
    assert_eq!(field(2, "error.type"), None);

    // Each request's duration, and its tokens by type.
    let metrics = spans.0.metrics.lock().unwrap();
    let of = |name: &str| -> Vec<&Vec<(String, String)>> {
        metrics
            .iter()
            .filter(|fields| fields.iter().any(|(field, _)| field == name))
            .collect()
    };
    assert_eq!(of("histogram.gen_ai.client.operation.duration").len(), 2);
    let tokens = of("histogram.gen_ai.client.token.usage");
    let get = |fields: &Vec<(String, String)>, name: &str| {
        fields
            .iter()
            .find(|(f, _)| f == name)
            .map(|(_, v)| v.clone())
    };
    let first: Vec<(Option<String>, Option<String>)> = tokens[..2]
        .iter()
        .map(|f| {
            (
                get(f, "gen_ai.token.type"),
                get(f, "histogram.gen_ai.client.token.usage"),
            )
        })
        .collect();
    assert_eq!(
        first,
        [
            (Some("input".into()), Some("11".into())),
            (Some("output".into()), Some("3".into()))
        ]
    );
    assert_eq!(
        get(tokens[0], "gen_ai.operation.name").as_deref(),
        Some("chat")
    );
}

#[tokio::test]
async fn with_content_on_a_calls_span_has_its_arguments_and_result_and_a_failure_its_type() {
    let spans = SharedSpans::default();
    let _guard = tracing::subscriber::set_default(spans.clone());
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([
                call("c1", "add", json!({ "a": 1, "b": 2 })),
                call("c2", "add", json!({ "a": "one" })),
            ]))
            .then(ModelResponse::answer("3")),
    );
    let runner = agent(&model, executor([add(Arc::default())]))
        .trace_content(true)
        .build();
    runner.run("1 + 2?", &RunOptions::default()).await.unwrap();

    let seen = spans.0.seen.lock().unwrap();
    let calls: Vec<&Vec<(String, String)>> = seen
        .iter()
        .filter(|(name, _)| name == "gen_ai.execute_tool")
        .map(|(_, fields)| fields)
        .collect();
    let get = |fields: &Vec<(String, String)>, name: &str| {
        fields
            .iter()
            .find(|(f, _)| f == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(
        get(calls[0], "gen_ai.tool.call.arguments").as_deref(),
        Some(r#"{"a":1,"b":2}"#)
    );
    assert_eq!(
        get(calls[0], "gen_ai.tool.call.result").as_deref(),
        Some("3")
    );
    assert_eq!(get(calls[0], "error.type"), None);
    assert_eq!(
        get(calls[1], "error.type").as_deref(),
        Some("InvalidArguments")
    );
    assert_eq!(get(calls[1], "otel.status_code").as_deref(), Some("ERROR"));
}
