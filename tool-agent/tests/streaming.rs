//! A streamed run against the scripted model: the events, in order.

use std::sync::Arc;

use futures_util::StreamExt;
use serde_json::json;
use tool_agent::{ModelResponse, RunEvent, RunOptions, ScriptedModel};
use tool_test_support::*;

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
    let kinds: Vec<String> = events
        .iter()
        .map(|e| match e {
            RunEvent::TextDelta { step, text } => format!("text {step} {text}"),
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
        })
        .collect();
    assert_eq!(
        kinds,
        [
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
