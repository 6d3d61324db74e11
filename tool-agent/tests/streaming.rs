//! A streamed run against the scripted model, and against a model that streams its calls and
//! its thinking in pieces: the events, in order.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use serde_json::json;
use tool_agent::{
    Agent, CallDelta, ChatModel, ModelError, ModelEvent, ModelEventStream, ModelFuture,
    ModelRequest, ModelResponse, RunEvent, RunOptions, ScriptedModel,
};
use tool_test_support::*;

/// An event as one line: what it is, its step, and what it says.
fn line(event: &RunEvent) -> String {
    match event {
        RunEvent::TextDelta { step, text } => format!("text {step} {text}"),
        RunEvent::ReasoningDelta { step, text } => format!("thought {step} {text}"),
        RunEvent::ToolCallDelta { step, delta } => format!(
            "call delta {step} #{} {} {} {}",
            delta.index,
            delta.id.as_deref().unwrap_or("-"),
            delta.name.as_deref().unwrap_or("-"),
            delta.arguments
        ),
        RunEvent::ToolCallStarted { step, call } => format!("call {step} {}", call.name),
        RunEvent::ToolResult { step, record } => format!(
            "result {step} {}",
            record
                .result
                .as_ref()
                .map(|o| o.to_text())
                .unwrap_or_default()
        ),
        RunEvent::ApprovalNeeded(p) => format!("approval {}", p.call.name),
        RunEvent::Usage { step, .. } => format!("usage {step}"),
        RunEvent::StepFinished(step) => format!("step {}", step.index),
        RunEvent::Finished(result) => {
            format!(
                "finished {}",
                result
                    .as_ref()
                    .as_ref()
                    .map(|r| r.text.as_str())
                    .unwrap_or("error")
            )
        }
        _ => "other".to_owned(),
    }
}

#[tokio::test]
async fn a_streamed_run_yields_each_step_in_order_then_the_result() {
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([call(
                "c1",
                "add",
                json!({ "a": 1, "b": 2 }),
            )]))
            .then(ModelResponse::answer("3")),
    );
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let options = RunOptions::default();
    let events: Vec<RunEvent> = runner.run_stream("1 + 2?", &options).collect().await;
    let lines: Vec<String> = events.iter().map(line).collect();
    assert_eq!(
        lines,
        [
            // A model that does not stream gives each call whole.
            r#"call delta 0 #0 c1 add {"a":1,"b":2}"#,
            "usage 0",
            "call 0 add",
            "result 0 3",
            "step 0",
            "text 1 3",
            "usage 1",
            "step 1",
            "finished 3"
        ]
    );
}

/// A model that streams each answer as the events it is given, the last its answer.
struct Streaming(Mutex<VecDeque<Vec<ModelEvent>>>);

impl ChatModel for Streaming {
    fn respond<'a>(&'a self, _: &'a ModelRequest) -> ModelFuture<'a> {
        Box::pin(async { Err(ModelError::Other("this model only streams".into())) })
    }

    fn respond_stream<'a>(&'a self, _: &'a ModelRequest) -> ModelEventStream<'a> {
        let events = self.0.lock().unwrap().pop_front().unwrap_or_default();
        Box::pin(futures_util::stream::iter(events.into_iter().map(Ok)))
    }
}

#[tokio::test]
async fn a_call_and_the_thinking_streamed_in_pieces_come_before_the_call_starts() {
    let piece = |id: Option<&str>, name: Option<&str>, arguments: &str| {
        let (id, name) = (id.map(str::to_owned), name.map(str::to_owned));
        ModelEvent::ToolCallDelta(CallDelta::new(0, id, name, arguments))
    };
    let calling = ModelResponse::calling([call("c1", "add", json!({ "a": 1, "b": 2 }))]);
    let first = vec![
        ModelEvent::ReasoningDelta("Two numbers: ".into()),
        ModelEvent::ReasoningDelta("add them.".into()),
        ModelEvent::TextDelta("Adding.".into()),
        piece(Some("c1"), Some("add"), ""),
        piece(None, None, r#"{"a": 1,"#),
        piece(None, None, r#" "b": 2}"#),
        ModelEvent::Done(calling),
    ];
    let second = vec![
        ModelEvent::TextDelta("3".into()),
        ModelEvent::Done(ModelResponse::answer("3")),
    ];
    let model = Streaming(Mutex::new(VecDeque::from([first, second])));
    let runner = Agent::builder(model)
        .executor(executor([add(Arc::default())]))
        .build();
    let options = RunOptions::default();
    let events: Vec<RunEvent> = runner.run_stream("1 + 2?", &options).collect().await;
    let lines: Vec<String> = events.iter().map(line).collect();
    assert_eq!(
        lines,
        [
            "thought 0 Two numbers: ",
            "thought 0 add them.",
            "text 0 Adding.",
            "call delta 0 #0 c1 add ",
            r#"call delta 0 #0 - - {"a": 1,"#,
            r#"call delta 0 #0 - -  "b": 2}"#,
            "usage 0",
            "call 0 add",
            "result 0 3",
            "step 0",
            "text 1 3",
            "usage 1",
            "step 1",
            "finished 3"
        ]
    );
}
