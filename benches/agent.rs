//! The agent loop's own cost per step, with 20 tools and a model that answers at once.
//!
//! The model renders each request as OpenAI Chat Completions would send it (the messages and
//! the declarations the run made once) and parses a canned answer with the provider module, so
//! a step is declare (once per run) + render + parse + execute + the loop's bookkeeping, with no
//! network. A run is 10 steps of one call each, then the answer; the figure per step is the
//! run's time divided by 11. Beside it, the loop alone (a model that neither renders nor
//! parses) and the same 10 calls made directly with `execute_call`.
//!
//! `cargo bench --features agent --bench agent`

use std::hint::black_box;

use ai_tool::agent::{
    Agent, ChatModel, Message, ModelError, ModelFuture, ModelRequest, ModelResponse,
    OpenAiChatModel, RunOptions,
};
use ai_tool::prelude::*;
use ai_tool::provider::parse_calls;
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};

const STEPS: usize = 10;

/// Twenty tools of two numbers each.
fn tools() -> Vec<DynamicTool> {
    (0..20)
        .map(|i| {
            let schema = json!({
                "type": "object",
                "properties": { "a": { "type": "integer" }, "b": { "type": "integer" } },
                "required": ["a", "b"],
                "additionalProperties": false
            });
            DynamicTool::new(
                format!("tool_{i}"),
                format!("Adds two numbers, the {i}th way"),
                schema,
                |args, _| async move {
                    let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
                    Ok(ToolOutput::text(sum.to_string()))
                },
            )
        })
        .collect()
}

/// A model that answers at once: a call for each of the first `STEPS` requests, then text.
struct Instant {
    wire: OpenAiChatModel,
    calls: Vec<Value>,
    answer: Value,
}

impl Instant {
    fn new() -> Self {
        let completion = |message: Value| json!({ "choices": [{ "index": 0, "message": message, "finish_reason": "stop" }] });
        let calls = (0..STEPS)
            .map(|step| {
                completion(json!({ "role": "assistant", "content": null, "tool_calls": [{
                    "id": format!("call_{step}"), "type": "function",
                    "function": { "name": format!("tool_{}", step % 20), "arguments": format!("{{\"a\": {step}, \"b\": 1}}") }
                }]}))
            })
            .collect();
        Instant {
            wire: OpenAiChatModel::new("bench").without_api_key(),
            calls,
            answer: completion(json!({ "role": "assistant", "content": "done" })),
        }
    }
}

impl ChatModel for Instant {
    fn respond<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a> {
        black_box(self.wire.body(request));
        let done = request
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Tool { .. }))
            .count();
        let answer = self.calls.get(done).unwrap_or(&self.answer);
        let aliases = request.tools.declarations().map(|d| &d.aliases);
        let result = parse_calls(
            Format::OpenAiChat,
            answer,
            aliases.unwrap_or(&Default::default()),
        )
        .map(|calls| ModelResponse {
            text: answer
                .pointer("/choices/0/message/content")
                .and_then(Value::as_str)
                .map(str::to_owned),
            calls,
            ..ModelResponse::default()
        })
        .map_err(|e| ModelError::Other(e.to_string()));
        Box::pin(async move { result })
    }

    fn format(&self) -> Option<Format> {
        Some(Format::OpenAiChat)
    }
}

/// A model that answers at once without rendering or parsing: the loop alone.
struct Bare {
    calls: Vec<ModelResponse>,
    answer: ModelResponse,
}

impl Bare {
    fn new() -> Self {
        let calls = (0..STEPS)
            .map(|step| {
                ModelResponse::calling([ToolCall::new(
                    format!("call_{step}"),
                    format!("tool_{}", step % 20),
                    json!({ "a": step, "b": 1 }),
                )])
            })
            .collect();
        Bare {
            calls,
            answer: ModelResponse::answer("done"),
        }
    }
}

impl ChatModel for Bare {
    fn respond<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a> {
        let done = request
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Tool { .. }))
            .count();
        let answer = self.calls.get(done).unwrap_or(&self.answer).clone();
        Box::pin(async move { Ok(answer) })
    }
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let exec = Executor::builder()
        .registered_tools(false)
        .tools(tools())
        .build()
        .expect("the tools build");
    let agent = Agent::builder(Instant::new())
        .executor(exec.clone())
        .build();
    let options = RunOptions::default();
    let run = runtime
        .block_on(agent.run("go", &options))
        .expect("the run ends");
    assert_eq!(run.steps.len(), STEPS + 1);
    assert_eq!(run.text, "done");

    let mut group = c.benchmark_group("agent");
    group.bench_function("run of 10 steps, 20 tools (per step: / 11)", |b| {
        b.iter(|| {
            runtime
                .block_on(agent.run("go", &options))
                .map(|r| r.steps.len())
        })
    });
    let bare = Agent::builder(Bare::new()).executor(exec.clone()).build();
    group.bench_function("the loop alone: 10 steps, no rendering or parsing", |b| {
        b.iter(|| {
            runtime
                .block_on(bare.run("go", &options))
                .map(|r| r.steps.len())
        })
    });
    let calls: Vec<ToolCall> = (0..STEPS)
        .map(|step| {
            ToolCall::new(
                format!("call_{step}"),
                format!("tool_{}", step % 20),
                json!({ "a": step, "b": 1 }),
            )
        })
        .collect();
    let call_options = CallOptions::default();
    group.bench_function("the same 10 calls, bare execute_call", |b| {
        b.iter(|| {
            runtime.block_on(async {
                for call in &calls {
                    black_box(exec.execute_call(call, &call_options).await.ok());
                }
            })
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
