//! Mending bad calls (the loop's JSON repair, a repair hook) and each tool's retry budget.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use tool_agent::{
    ModelResponse, RepairCall, Repaired, RepairedBy, RunHooks, RunOptions, ScriptedModel,
};
use tool_core::repair::JsonFix;
use tool_core::{ToolCall, ToolError, ToolErrorKind, ToolMetadata, ToolOutput};
use tool_runtime::DynamicTool;
use tool_test_support::*;

fn repaired_of(result: &tool_agent::RunResult, step: usize) -> Option<Repaired> {
    result.steps[step].calls[0].repaired.clone()
}

/// Arguments as JSON text that does not parse (as OpenAI sends them): mended and run, the
/// record saying how; with the repair off, the model is told the JSON error.
#[tokio::test]
async fn json_text_with_a_slip_is_mended_run_and_reported() {
    let runs = Arc::new(AtomicUsize::new(0));
    let script = || {
        Arc::new(
            ScriptedModel::new()
                .then(ModelResponse::calling([call(
                    "c1",
                    "add",
                    Value::String("{'a': 2, 'b': 3,".into()),
                )]))
                .then(ModelResponse::answer("5")),
        )
    };
    let model = script();
    let runner = agent(&model, executor([add(Arc::clone(&runs))])).build();
    let result = runner.run("add", &RunOptions::default()).await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let record = &result.steps[0].calls[0];
    assert_eq!(record.result.as_ref().unwrap().to_text(), "5");
    let repaired = repaired_of(&result, 0).expect("mended");
    assert_eq!(repaired.arguments, json!({ "a": 2, "b": 3 }));
    assert_eq!(
        repaired.by,
        RepairedBy::Json(vec![
            JsonFix::SingleQuotes,
            JsonFix::TrailingComma,
            JsonFix::UnclosedBrackets
        ])
    );

    let model = script();
    let runner = agent(&model, executor([add(Arc::clone(&runs))])).build();
    let options = RunOptions::default().repair_json(false);
    let result = runner.run("add", &options).await.unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1, "not run again");
    let record = &result.steps[0].calls[0];
    assert_eq!(
        record.result.as_ref().unwrap_err().kind(),
        ToolErrorKind::InvalidArguments
    );
    assert_eq!(record.repaired, None);
}

/// Fills `b` with 0 when it is missing, and answers for `add` when `a` is negative.
struct FillB;

impl RunHooks for FillB {
    fn repair_call(&self, call: &ToolCall, error: &ToolError) -> RepairCall {
        assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
        match call.arguments["a"].as_i64() {
            Some(a) if a < 0 => RepairCall::Skip(ToolOutput::error("No negative numbers.")),
            Some(a) if call.arguments.get("b").is_none() => {
                RepairCall::Fixed(json!({ "a": a, "b": 0 }))
            }
            _ => RepairCall::AskModel,
        }
    }
}

#[tokio::test]
async fn a_repair_hook_fixes_answers_for_or_leaves_a_refused_call() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([
                call("c1", "add", json!({ "a": 4 })),
                call("c2", "add", json!({ "a": -1 })),
                call("c3", "add", json!({ "a": "x", "b": 1 })),
            ]))
            .then(ModelResponse::answer("done")),
    );
    let runner = agent(&model, executor([add(Arc::clone(&runs))]))
        .hooks(FillB)
        .build();
    let result = runner.run("add", &RunOptions::default()).await.unwrap();
    let calls = &result.steps[0].calls;
    assert_eq!(calls[0].result.as_ref().unwrap().to_text(), "4");
    let repaired = calls[0].repaired.as_ref().expect("fixed by the hook");
    assert_eq!(repaired.arguments, json!({ "a": 4, "b": 0 }));
    assert_eq!(repaired.by, RepairedBy::Hook);
    assert_eq!(
        calls[1].result.as_ref().unwrap().to_text(),
        "No negative numbers."
    );
    assert_eq!(
        calls[2].result.as_ref().unwrap_err().kind(),
        ToolErrorKind::InvalidArguments
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1, "only the fixed call ran");
}

/// `book`, which asks for another date until it is given 2030-01-01, counting its runs.
fn book(runs: Arc<AtomicUsize>, max_retries: Option<usize>) -> DynamicTool {
    DynamicTool::new(
        "book",
        "Books a date",
        json!({ "type": "object", "properties": { "date": { "type": "string" } }, "required": ["date"] }),
        move |args, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            async move {
                match args["date"].as_str() {
                    Some("2030-01-01") => Ok(ToolOutput::text("booked")),
                    Some(date) => Err(ToolError::retry("book", format!("{date} is taken"))),
                    None => Ok(ToolOutput::error("no date")),
                }
            }
        },
    )
    .with_metadata(ToolMetadata {
        max_retries,
        ..ToolMetadata::default()
    })
}

fn booking(date: &str, id: &str) -> ModelResponse {
    ModelResponse::calling([call(id, "book", json!({ "date": date }))])
}

/// Retries asked and invalid arguments count against the tool's budget, in a row; past it
/// the tool is not run and the model is told; a success starts the count again.
#[tokio::test]
async fn a_tool_past_its_retry_budget_is_not_run_again() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = Arc::new(
        ScriptedModel::new()
            .then(booking("2029-12-31", "c1"))
            .then(ModelResponse::calling([call("c2", "book", json!({}))]))
            .then(booking("2029-12-30", "c3"))
            .then(ModelResponse::answer("I could not book it")),
    );
    let runner = agent(&model, executor([book(Arc::clone(&runs), None)])).build();
    let options = RunOptions::default().max_retries(1).max_failed_steps(0);
    let result = runner.run("book", &options).await.unwrap();
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the invalid call and the third never ran"
    );
    let first = result.steps[0].calls[0].result.as_ref().unwrap_err();
    assert_eq!(first.kind(), ToolErrorKind::Retry);
    assert!(first.to_model_text().contains("2029-12-31 is taken"));
    let third = result.steps[2].calls[0].result.as_ref().unwrap();
    assert!(third.is_error);
    assert!(
        third.to_text().contains("2 times in a row") && third.to_text().contains("max_retries = 1"),
        "{}",
        third.to_text()
    );

    // The tool's own budget wins over the run's (3); a success starts the count again.
    let runs = Arc::new(AtomicUsize::new(0));
    let model = Arc::new(
        ScriptedModel::new()
            .then(booking("2029-12-31", "c1"))
            .then(booking("2030-01-01", "c2"))
            .then(booking("2029-12-30", "c3"))
            .then(booking("2029-12-29", "c4"))
            .then(booking("2029-12-28", "c5"))
            .then(ModelResponse::answer("booked once")),
    );
    let runner = agent(&model, executor([book(Arc::clone(&runs), Some(1))])).build();
    let options = RunOptions::default().max_failed_steps(0);
    let result = runner.run("book", &options).await.unwrap();
    assert_eq!(
        runs.load(Ordering::SeqCst),
        4,
        "the fifth call is past the budget"
    );
    let last = result.steps[4].calls[0].result.as_ref().unwrap();
    assert!(
        last.to_text().contains("max_retries = 1"),
        "{}",
        last.to_text()
    );
}
