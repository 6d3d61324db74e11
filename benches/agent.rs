//! The agent loop's own cost per step, with 20 tools and a model that answers at once.
//!
//! The model renders each request as OpenAI Chat Completions would send it (the messages and
//! the declarations the run made once) and parses a canned answer with the provider module, so
//! a step is render + parse + execute + the loop's bookkeeping, with no network, and a run adds
//! the declarations, made once. Runs of 1 and of 10 steps of one call each (then the answer):
//! a step's own cost is the difference divided by 9. Beside them, the loop alone (a model that
//! neither renders nor parses) and the same 10 calls made directly with `execute_call`.
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

/// A model that answers at once: a call for each of the first `steps` requests, then text.
struct Instant {
    wire: OpenAiChatModel,
    calls: Vec<Value>,
    answer: Value,
}

impl Instant {
    fn new(steps: usize) -> Self {
        let completion = |message: Value| json!({ "choices": [{ "index": 0, "message": message, "finish_reason": "stop" }] });
        let calls = (0..steps)
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
        let body = match self.wire.body(request) {
            Ok(body) => body,
            Err(error) => return Box::pin(async move { Err(error) }),
        };
        black_box(body);
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
    fn new(steps: usize) -> Self {
        let calls = (0..steps)
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
    let options = RunOptions::default();
    let check = Agent::builder(Instant::new(STEPS))
        .executor(exec.clone())
        .build();
    let run = runtime
        .block_on(check.run("go", &options))
        .expect("the run ends");
    assert_eq!(run.steps.len(), STEPS + 1);
    assert_eq!(run.text, "done");

    let mut group = c.benchmark_group("agent");
    for steps in [1, STEPS] {
        let agent = Agent::builder(Instant::new(steps))
            .executor(exec.clone())
            .build();
        let name = format!("run of {steps} step(s) with a call, then the answer; 20 tools");
        group.bench_function(name, |b| {
            b.iter(|| {
                runtime
                    .block_on(agent.run("go", &options))
                    .map(|r| r.steps.len())
            })
        });
    }
    for steps in [1, STEPS] {
        let bare = Agent::builder(Bare::new(steps))
            .executor(exec.clone())
            .build();
        let name = format!("the loop alone, {steps} step(s): no rendering or parsing");
        group.bench_function(name, |b| {
            b.iter(|| {
                runtime
                    .block_on(bare.run("go", &options))
                    .map(|r| r.steps.len())
            })
        });
    }
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
