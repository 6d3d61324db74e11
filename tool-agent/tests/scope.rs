//! The invocation scope under load: concurrent runs are isolated, the concurrent calls of one
//! run share its scope and its reference counter; citations come out renumbered.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::*;
use serde_json::json;
use tool_agent::citations::{finalize, Reference};
use tool_agent::{Agent, InvocationScope, ModelResponse, RunContext, RunOptions, ScriptedModel};
use tool_core::{ToolError, ToolOutput};
use tool_runtime::DynamicTool;

/// Which run a request belongs to, in its context.
struct RunId(usize);

/// A tool that records a reference naming its run, and answers with the reference's number.
fn cite() -> DynamicTool {
    let schema = json!({ "type": "object", "properties": { "page": { "type": "integer" } } });
    DynamicTool::new("cite", "Finds a source", schema, |args, _| async move {
        let scope = InvocationScope::current()
            .ok_or_else(|| ToolError::failed("cite", "no invocation scope"))?;
        let run = scope.context().get::<RunId>().map_or(usize::MAX, |r| r.0);
        // Let the other calls and runs interleave.
        tokio::time::sleep(Duration::from_millis(1)).await;
        let n = scope.add_reference(Reference {
            title: format!("run {run} page {}", args["page"]),
            link: None,
        });
        Ok(ToolOutput::text(format!("[doc:{n}]")))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_runs_are_isolated_and_the_calls_of_a_run_share_its_counter() {
    let exec = executor([cite()]);
    let mut runs = Vec::new();
    for run in 0..40 {
        let model = ScriptedModel::new()
            .then(ModelResponse::calling((0..10).map(|page| {
                call(&format!("c{page}"), "cite", json!({ "page": page }))
            })))
            .then(ModelResponse::answer("done"));
        let runner = Agent::builder(model).executor(exec.clone()).build();
        runs.push(tokio::spawn(async move {
            let options = RunOptions::default().context(RunContext::new().with(RunId(run)));
            (run, runner.run("cite", &options).await)
        }));
    }
    for handle in runs {
        let (run, result) = handle.await.unwrap();
        let result = result.unwrap();
        let numbers: Vec<usize> = result.references.keys().copied().collect();
        assert_eq!(numbers, (1..=10).collect::<Vec<_>>(), "run {run}");
        let titles: BTreeSet<String> = result
            .references
            .values()
            .map(|r| r.title.clone())
            .collect();
        assert_eq!(titles.len(), 10);
        assert!(
            titles
                .iter()
                .all(|t| t.starts_with(&format!("run {run} page"))),
            "run {run} saw another run's references: {titles:?}"
        );
        let answers: BTreeSet<String> = tool_messages(&result.transcript)
            .into_iter()
            .map(|(_, text, _)| text)
            .collect();
        assert_eq!(answers.len(), 10, "every call got its own number");
    }
}

#[tokio::test]
async fn the_answers_citations_are_renumbered_from_the_runs_references() {
    let model = ScriptedModel::new()
        .then(ModelResponse::calling([
            call("c1", "cite", json!({ "page": 1 })),
            call("c2", "cite", json!({ "page": 2 })),
        ]))
        .then(ModelResponse::answer("Second [doc:2], then first [doc:1]."));
    let runner = Agent::builder(model).executor(executor([cite()])).build();
    let options = RunOptions::default().context(RunContext::new().with(RunId(0)));
    let result = runner.run("cite", &options).await.unwrap();
    let cited = finalize(&result.text, &result.references);
    assert_eq!(cited.text, "Second [1], then first [2].");
    assert_eq!(cited.references.len(), 2);
    assert_eq!(
        cited.references[0].title, result.references[&2].title,
        "[1] is the reference first cited"
    );
}

#[tokio::test]
async fn outside_a_run_there_is_no_scope() {
    let exec = executor([cite()]);
    let err = exec
        .execute("cite", json!({ "page": 1 }))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no invocation scope"), "{err}");
}
