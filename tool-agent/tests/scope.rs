//! The invocation scope under load: concurrent runs are isolated, the concurrent calls of one
//! run share its scope and its reference counter, whether a tool reaches it ambiently or
//! through its context (from the blocking pool, or from a task it spawned); citations come out
//! renumbered.

use std::collections::BTreeSet;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tool_agent::citations::{finalize, Reference};
use tool_agent::{Agent, InvocationScope, ModelResponse, RunContext, RunOptions, ScriptedModel};
use tool_core::{ToolError, ToolOutput};
use tool_macros::ai_tool;
use tool_runtime::{DynamicTool, Executor, Tool, ToolContext};
use tool_test_support::*;

/// What `#[ai_tool]`'s generated code reaches, as the `ai-tool` facade gives it.
mod facade {
    pub mod __private {
        pub use inventory;
        pub use schemars;
        pub use serde;
        pub use serde_json;
        pub use tool_core::{SafetyHints, ToolError, ToolOutput};
        pub use tool_runtime::macro_support::*;
    }
}

/// Which run a request belongs to, in its context.
struct RunId(usize);

/// A tool that reaches its run's scope ambiently, records a reference naming its run, and
/// answers with the reference's number.
fn cite() -> DynamicTool {
    let schema = json!({ "type": "object", "properties": { "page": { "type": "integer" } } });
    DynamicTool::new("cite", "Finds a source", schema, |args, _| async move {
        let scope = InvocationScope::current()
            .ok_or_else(|| ToolError::failed("cite", "no invocation scope"))?;
        // Let the other calls and runs interleave.
        tokio::time::sleep(Duration::from_millis(1)).await;
        let page = args["page"].as_u64().unwrap_or(u64::MAX);
        Ok(ToolOutput::text(cite_in(&scope, "ambient", page)))
    })
}

/// Records a reference naming the scope's run and how the tool reached it; answers `[doc:N]`.
fn cite_in(scope: &InvocationScope, how: &str, page: u64) -> String {
    let run = scope.context().get::<RunId>().map_or(usize::MAX, |r| r.0);
    let n = scope.add_reference(Reference {
        title: format!("run {run} page {page} ({how})"),
        link: None,
    });
    format!("[doc:{n}]")
}

/// Finds a source. A sync tool with a time limit: it runs on tokio's blocking pool, where the
/// ambient scope is not seen, so it must find its run's scope through its context.
#[ai_tool(crate = crate::facade, timeout = "30s")]
fn cite_blocking(page: u64, ctx: &ToolContext) -> Result<String, String> {
    if InvocationScope::current().is_some() {
        return Err("the ambient scope reached the blocking pool: this test tests nothing".into());
    }
    std::thread::sleep(Duration::from_millis(1));
    let scope = InvocationScope::of(ctx).ok_or("no invocation scope in the context")?;
    Ok(cite_in(&scope, "blocking", page))
}

/// What `cite_spawned` takes.
#[derive(Deserialize, JsonSchema)]
struct Page {
    page: u64,
}

/// Finds a source from a task of its own, given a kept copy of its context.
struct CiteSpawned;

impl Tool for CiteSpawned {
    type Args = Page;
    type Output = Result<String, String>;

    fn name(&self) -> &str {
        "cite_spawned"
    }

    fn description(&self) -> &str {
        "Finds a source, from a spawned task"
    }

    async fn call(&self, args: Page, ctx: &ToolContext<'_>) -> Result<String, String> {
        let kept = ctx.to_static();
        let task = tokio::spawn(async move {
            if InvocationScope::current().is_some() {
                return Err("the ambient scope reached a spawned task: this test tests nothing");
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
            let scope = InvocationScope::of(&kept).ok_or("no invocation scope in the context")?;
            Ok(cite_in(&scope, "spawned", args.page))
        });
        task.await
            .map_err(|e| e.to_string())?
            .map_err(str::to_owned)
    }
}

/// The three ways to the scope: ambient (`cite`), from the blocking pool (`cite_blocking`,
/// registered by `#[ai_tool]`) and from a spawned task (`cite_spawned`).
fn every_kind_of_tool() -> Executor {
    Executor::builder()
        .tools([cite()])
        .tool(CiteSpawned)
        .build()
        .expect("the scope tools build")
}

/// One run of `calls` (name, page) in one response, then an answer.
fn run_calls(exec: &Executor, calls: &[(&str, u64)]) -> Agent {
    let model = ScriptedModel::new()
        .then(ModelResponse::calling(calls.iter().enumerate().map(
            |(i, (name, page))| call(&format!("c{i}"), name, json!({ "page": page })),
        )))
        .then(ModelResponse::answer("done"));
    Agent::builder(model).executor(exec.clone()).build()
}

fn run_options(run: usize) -> RunOptions {
    RunOptions::default().context(RunContext::new().with(RunId(run)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_tool_on_the_blocking_pool_finds_its_runs_scope_through_its_context() {
    let exec = every_kind_of_tool();
    let agent = run_calls(&exec, &[("cite_blocking", 1), ("cite_blocking", 2)]);
    let result = agent.run("cite", &run_options(5)).await.unwrap();
    let answers = tool_messages(&result.transcript);
    assert!(answers.iter().all(|(_, _, error)| !error), "{answers:?}");
    let titles: Vec<&str> = result
        .references
        .values()
        .map(|r| r.title.as_str())
        .collect();
    assert_eq!(
        result.references.keys().copied().collect::<Vec<_>>(),
        [1, 2]
    );
    let mut sorted = titles.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        ["run 5 page 1 (blocking)", "run 5 page 2 (blocking)"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_a_tool_spawns_finds_its_runs_scope_through_a_kept_context() {
    let exec = every_kind_of_tool();
    let agent = run_calls(&exec, &[("cite_spawned", 3)]);
    let result = agent.run("cite", &run_options(6)).await.unwrap();
    assert_eq!(
        tool_messages(&result.transcript),
        [("c0".to_owned(), "[doc:1]".to_owned(), false)]
    );
    assert_eq!(result.references[&1].title, "run 6 page 3 (spawned)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_runs_stay_isolated_whichever_way_their_tools_reach_the_scope() {
    let exec = every_kind_of_tool();
    let calls: Vec<(&str, u64)> = (0..9)
        .map(|page| {
            (
                ["cite", "cite_blocking", "cite_spawned"][page % 3],
                page as u64,
            )
        })
        .collect();
    let runs: Vec<_> = (0..32)
        .map(|run| {
            let agent = run_calls(&exec, &calls);
            tokio::spawn(async move { (run, agent.run("cite", &run_options(run)).await) })
        })
        .collect();
    for handle in runs {
        let (run, result) = handle.await.unwrap();
        let result = result.unwrap();
        let answers = tool_messages(&result.transcript);
        assert!(
            answers.iter().all(|(_, _, error)| !error),
            "run {run}: {answers:?}"
        );
        let numbers: Vec<usize> = result.references.keys().copied().collect();
        assert_eq!(numbers, (1..=9).collect::<Vec<_>>(), "run {run}");
        let cited: BTreeSet<String> = answers.into_iter().map(|(_, text, _)| text).collect();
        let expected: BTreeSet<String> = (1..=9).map(|n| format!("[doc:{n}]")).collect();
        assert_eq!(cited, expected, "run {run}: every call got its own number");
        let pages: BTreeSet<String> = result
            .references
            .values()
            .map(|r| r.title.clone())
            .collect();
        let expected: BTreeSet<String> = calls
            .iter()
            .map(|(name, page)| {
                let how = match *name {
                    "cite" => "ambient",
                    "cite_blocking" => "blocking",
                    _ => "spawned",
                };
                format!("run {run} page {page} ({how})")
            })
            .collect();
        assert_eq!(pages, expected, "run {run} saw only its own references");
    }
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
