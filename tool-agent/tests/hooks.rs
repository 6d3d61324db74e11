//! Hooks: narrowing a request's tools, and skipping, denying, rewriting or ending around a
//! call.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;
use tool_agent::{
    AfterTool, BeforeTool, ModelResponse, RunHooks, RunOptions, ScriptedModel, StepPlan,
    StopReason, ToolChoice,
};
use tool_core::{ToolCall, ToolError, ToolErrorKind, ToolOutput};
use tool_test_support::*;

/// Offers only `add` from the second request on, and rewrites, skips, denies or ends calls by
/// the first argument.
struct Policy;

impl RunHooks for Policy {
    fn prepare_step(&self, plan: &mut StepPlan) {
        if plan.index == 1 {
            plan.tools = Some(vec!["add".into(), "not_offered_anyway".into()]);
            plan.tool_choice = ToolChoice::Required;
        }
    }

    fn before_tool(&self, call: &ToolCall) -> BeforeTool {
        match call.arguments["a"].as_i64() {
            Some(10) => BeforeTool::Rewrite(json!({ "a": 100, "b": call.arguments["b"] })),
            Some(20) => BeforeTool::Skip(ToolOutput::text("cached: 22")),
            Some(30) => BeforeTool::Deny("Not with 30.".into()),
            Some(40) => BeforeTool::Terminate("forty is the end".into()),
            _ => BeforeTool::Run,
        }
    }

    fn after_tool(&self, _: &ToolCall, result: &mut Result<ToolOutput, ToolError>) -> AfterTool {
        if let Ok(output) = result {
            if output.to_text() == "7" {
                *output = ToolOutput::text("seven");
            }
        }
        AfterTool::Continue
    }
}

#[tokio::test]
async fn before_tool_rewrites_skips_and_denies_and_after_tool_changes_results() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([
                call("c1", "add", json!({ "a": 10, "b": 1 })),
                call("c2", "add", json!({ "a": 20, "b": 2 })),
                call("c3", "add", json!({ "a": 30, "b": 3 })),
                call("c4", "add", json!({ "a": 3, "b": 4 })),
            ]))
            .then(ModelResponse::answer("ok")),
    );
    let runner = agent(&model, executor([add(Arc::clone(&runs))]))
        .hooks(Policy)
        .build();
    let result = runner.run("go", &RunOptions::default()).await.unwrap();
    let texts: Vec<String> = tool_messages(&result.transcript)
        .into_iter()
        .map(|(_, text, _)| text)
        .collect();
    assert_eq!(texts, ["101", "cached: 22", "Not with 30.", "seven"]);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        2,
        "the skipped and denied calls did not run"
    );
}

#[tokio::test]
async fn a_hook_ending_the_run_stops_it_after_the_step() {
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([
                call("c1", "add", json!({ "a": 40, "b": 1 })),
                call("c2", "add", json!({ "a": 1, "b": 1 })),
            ]))
            .then(ModelResponse::answer("never asked")),
    );
    let runner = agent(&model, executor([add(Arc::default())]))
        .hooks(Policy)
        .build();
    let result = runner.run("go", &RunOptions::default()).await.unwrap();
    assert_eq!(
        result.stop,
        StopReason::Terminated {
            reason: "forty is the end".into()
        }
    );
    assert_eq!(model.requests().len(), 1);
    assert_every_call_answered(&result.transcript);
}

#[tokio::test]
async fn prepare_step_narrows_the_tools_and_a_call_outside_them_is_refused() {
    let clock =
        tool_runtime::DynamicTool::new("clock", "Tells the time", no_arguments(), |_, _| async {
            Ok(ToolOutput::text("noon"))
        });
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([call("c1", "clock", json!({}))]))
            .then(ModelResponse::calling([call("c2", "clock", json!({}))]))
            .then(ModelResponse::answer("done")),
    );
    let runner = agent(&model, executor([add(Arc::default()), clock]))
        .hooks(Policy)
        .build();
    let result = runner.run("go", &RunOptions::default()).await.unwrap();
    let requests = model.requests();
    assert_eq!(
        requests[0].tools.names().collect::<Vec<_>>(),
        ["add", "clock"]
    );
    assert_eq!(requests[1].tools.names().collect::<Vec<_>>(), ["add"]);
    assert_eq!(requests[1].tool_choice, ToolChoice::Required);
    assert_eq!(
        requests[2].tools.names().collect::<Vec<_>>(),
        ["add", "clock"]
    );
    assert!(result.steps[0].calls[0].result.is_ok());
    assert_eq!(
        result.steps[1].calls[0].result.as_ref().unwrap_err().kind(),
        ToolErrorKind::NotOffered
    );
}

#[tokio::test]
async fn where_the_api_has_allowed_tools_a_narrowing_keeps_the_declarations_and_restricts_the_calls(
) {
    use tool_agent::AllowedMode;
    use tool_core::provider::Format;

    let clock =
        tool_runtime::DynamicTool::new("clock", "Tells the time", no_arguments(), |_, _| async {
            Ok(ToolOutput::text("noon"))
        });
    let model = Arc::new(
        ScriptedModel::new()
            .speaking(Format::OpenAiChat)
            .then(ModelResponse::calling([call("c1", "clock", json!({}))]))
            .then(ModelResponse::calling([call("c2", "clock", json!({}))]))
            .then(ModelResponse::answer("done")),
    );
    let runner = agent(&model, executor([add(Arc::default()), clock]))
        .hooks(Policy)
        .build();
    let result = runner.run("go", &RunOptions::default()).await.unwrap();
    let requests = model.requests();
    // The same tools at every step: the narrowing is the tool choice.
    let declared: Vec<&str> = requests.iter().map(|r| r.tools.tools_json()).collect();
    assert!(
        declared.iter().all(|json| *json == declared[0]),
        "{declared:?}"
    );
    assert_eq!(
        requests[1].tool_choice,
        ToolChoice::Allowed(vec!["add".into()], AllowedMode::Required)
    );
    assert_eq!(requests[2].tool_choice, ToolChoice::Auto);
    assert!(result.steps[0].calls[0].result.is_ok());
    assert_eq!(
        result.steps[1].calls[0].result.as_ref().unwrap_err().kind(),
        ToolErrorKind::NotOffered
    );
}

/// A hook that asks for tools at every step.
struct AlwaysRequired;

impl RunHooks for AlwaysRequired {
    fn prepare_step(&self, plan: &mut StepPlan) {
        plan.tool_choice = ToolChoice::Required;
    }
}

#[tokio::test]
async fn at_the_step_limit_no_hook_turns_the_tools_back_on() {
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([call(
                "c1",
                "add",
                json!({ "a": 1, "b": 2 }),
            )]))
            .then(ModelResponse::calling([call(
                "c2",
                "add",
                json!({ "a": 3, "b": 4 }),
            )]))
            .then(ModelResponse::answer("never asked")),
    );
    let calls = Arc::new(AtomicUsize::new(0));
    let runner = agent(&model, executor([add(calls.clone())]))
        .hooks(AlwaysRequired)
        .build();
    let result = runner
        .run("go", &RunOptions::default().max_steps(1))
        .await
        .unwrap();
    let requests = model.requests();
    assert_eq!(
        requests.len(),
        2,
        "one step with tools, then the answer at the limit"
    );
    assert_eq!(requests[1].tool_choice, ToolChoice::None);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the call made at the limit is not run"
    );
    assert!(
        matches!(result.stop, StopReason::MaxSteps { steps: 1 }),
        "{:?}",
        result.stop
    );
}
