//! What the tests of the agent crates (`tool-agent`, `tool-providers`, `tool-router`) share:
//! tools and an agent over a scripted model, an HTTP server of canned answers on 127.0.0.1
//! ([`mock`]), AWS event stream messages ([`event_stream`]), and the providers' own SDKs
//! ([`sdk`]). Not published.

pub mod event_stream;
pub mod mock;
pub mod sdk;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tool_agent::{Agent, AgentBuilder, Message, ScriptedModel};
use tool_core::{SafetyHints, ToolCall, ToolMetadata, ToolOutput};
use tool_runtime::{DynamicTool, Executor};

pub fn two_numbers() -> Value {
    json!({
        "type": "object",
        "properties": { "a": { "type": "integer" }, "b": { "type": "integer" } },
        "required": ["a", "b"],
        "additionalProperties": false
    })
}

pub fn no_arguments() -> Value {
    json!({ "type": "object", "properties": {}, "additionalProperties": true })
}

/// `add(a, b)`, counting its calls.
pub fn add(calls: Arc<AtomicUsize>) -> DynamicTool {
    DynamicTool::new("add", "Adds two numbers", two_numbers(), move |args, _| {
        calls.fetch_add(1, Ordering::SeqCst);
        async move {
            let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
            Ok(ToolOutput::text(sum.to_string()))
        }
    })
}

/// A tool that sleeps `ms` milliseconds (argument `ms`), tracking how many run at once.
pub fn sleeper(name: &str, in_flight: Arc<InFlight>, destructive: bool) -> DynamicTool {
    let schema = json!({
        "type": "object",
        "properties": { "ms": { "type": "integer" } },
        "required": ["ms"]
    });
    let tool = DynamicTool::new(name, "Waits a while", schema, move |args, _| {
        let in_flight = Arc::clone(&in_flight);
        async move {
            in_flight.enter();
            tokio::time::sleep(Duration::from_millis(args["ms"].as_u64().unwrap_or(0))).await;
            in_flight.leave();
            Ok(ToolOutput::text(format!("slept {}", args["ms"])))
        }
    });
    if destructive {
        tool.with_metadata(ToolMetadata {
            hints: SafetyHints {
                destructive: Some(true),
                ..SafetyHints::default()
            },
            ..ToolMetadata::default()
        })
    } else {
        tool
    }
}

/// How many calls run at once, and the most there ever were.
#[derive(Default)]
pub struct InFlight {
    now: AtomicUsize,
    pub most: AtomicUsize,
    pub order: std::sync::Mutex<Vec<usize>>,
}

impl InFlight {
    fn enter(&self) {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
    }

    fn leave(&self) {
        self.now.fetch_sub(1, Ordering::SeqCst);
    }
}

pub fn executor(tools: impl IntoIterator<Item = DynamicTool>) -> Executor {
    Executor::builder()
        .registered_tools(false)
        .tools(tools)
        .build()
        .expect("the test tools build")
}

pub fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

pub fn agent(model: &Arc<ScriptedModel>, exec: Executor) -> AgentBuilder {
    Agent::builder(Arc::clone(model)).executor(exec)
}

/// The tool messages of a transcript: (call id, text, is_error).
pub fn tool_messages(transcript: &[Message]) -> Vec<(String, String, bool)> {
    transcript
        .iter()
        .filter_map(|m| match m {
            Message::Tool {
                call_id,
                text,
                is_error,
                ..
            } => Some((call_id.clone().unwrap_or_default(), text.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

/// Every call in the transcript has exactly one result after it, before the next assistant
/// message: what the APIs require.
pub fn assert_every_call_answered(transcript: &[Message]) {
    let mut pending: Vec<String> = Vec::new();
    for message in transcript {
        match message {
            Message::Assistant { calls, .. } => {
                assert!(pending.is_empty(), "calls without results: {pending:?}");
                pending = calls.iter().filter_map(|c| c.id.clone()).collect();
            }
            Message::Tool { call_id, .. } => {
                let id = call_id.clone().unwrap_or_default();
                let at = pending.iter().position(|p| *p == id);
                assert!(at.is_some(), "a result for no pending call: {id}");
                pending.remove(at.unwrap_or_default());
            }
            Message::User { .. } | Message::Reasoning(_) => {}
        }
    }
    assert!(pending.is_empty(), "calls without results: {pending:?}");
}
