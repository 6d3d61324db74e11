//! What each run offers, and the security property: a tool that was not offered cannot be
//! called, even though the executor has it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;
use tool_agent::{ModelResponse, RunContext, RunOptions, ScriptedModel};
use tool_core::{ToolError, ToolErrorKind, ToolMetadata, ToolOutput};
use tool_runtime::DynamicTool;
use tool_test_support::*;

/// A tool that counts its runs, with this metadata.
fn counted(name: &str, metadata: ToolMetadata, runs: Arc<AtomicUsize>) -> DynamicTool {
    DynamicTool::new(name, "A tool of the test", no_arguments(), move |_, _| {
        runs.fetch_add(1, Ordering::SeqCst);
        async { Ok(ToolOutput::text("ran")) }
    })
    .with_metadata(metadata)
}

fn selectable() -> ToolMetadata {
    ToolMetadata {
        selectable: true,
        ..ToolMetadata::default()
    }
}

fn purpose(purpose: &str) -> ToolMetadata {
    ToolMetadata {
        purposes: vec![purpose.to_owned()],
        ..ToolMetadata::default()
    }
}

struct Documents(Vec<String>);

#[tokio::test]
async fn a_tool_not_offered_is_refused_even_though_the_executor_has_it() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([call(
                "c1",
                "delete_all",
                json!({}),
            )]))
            .then(ModelResponse::answer("I could not.")),
    );
    let exec = executor([
        counted("delete_all", selectable(), Arc::clone(&runs)),
        counted("delete_one", ToolMetadata::default(), Arc::default()),
    ]);
    assert!(exec.spec("delete_all").is_some(), "the executor has it");
    let runner = agent(&model, exec).build();
    let result = runner
        .run("clean up", &RunOptions::default())
        .await
        .unwrap();

    assert_eq!(runs.load(Ordering::SeqCst), 0, "the tool never ran");
    let refused = result.steps[0].calls[0].result.as_ref().unwrap_err();
    assert_eq!(refused.kind(), ToolErrorKind::NotOffered);
    assert!(
        matches!(refused, ToolError::NotOffered { suggestions, .. } if suggestions == &["delete_one"]),
        "suggestions come from the offered tools only: {refused:?}"
    );
    let offered: Vec<String> = model.requests()[0]
        .tools
        .names()
        .map(str::to_owned)
        .collect();
    assert_eq!(offered, ["delete_one"]);
    let text = &tool_messages(&result.transcript)[0].1;
    assert_eq!(
        text, "There is no tool named `delete_all`. Did you mean `delete_one`?",
        "the model cannot tell a tool not offered from one that does not exist"
    );
}

#[tokio::test]
async fn a_selectable_tool_selected_by_name_is_offered_and_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([call(
                "c1",
                "delete_all",
                json!({}),
            )]))
            .then(ModelResponse::answer("Done.")),
    );
    let exec = executor([counted("delete_all", selectable(), Arc::clone(&runs))]);
    let runner = agent(&model, exec).build();
    let result = runner
        .run("clean up", &RunOptions::default().select("delete_all"))
        .await
        .unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(tool_messages(&result.transcript)[0].1, "ran");
}

#[tokio::test]
async fn system_tools_are_offered_by_their_purposes_gate_and_tools_without_purpose_always() {
    let exec = executor([
        counted("summarize", purpose("document_processing"), Arc::default()),
        counted(
            "search_source",
            purpose("data_source_search"),
            Arc::default(),
        ),
        counted("ungated", purpose("described_only"), Arc::default()),
        counted("clock", ToolMetadata::default(), Arc::default()),
    ]);
    let model = Arc::new(ScriptedModel::new());
    let runner = agent(&model, exec)
        .purpose_gate("document_processing", |context: &RunContext| {
            context.get::<Documents>().is_some_and(|d| !d.0.is_empty())
        })
        .purpose_gate("data_source_search", |_: &RunContext| false)
        .build();

    let plain = RunOptions::default();
    let offered = runner.offered_tools("hi", &plain).await.unwrap();
    assert_eq!(offered.names().collect::<Vec<_>>(), ["ungated", "clock"]);

    let with_documents =
        RunOptions::default().context(RunContext::new().with(Documents(vec!["a.pdf".into()])));
    let offered = runner.offered_tools("hi", &with_documents).await.unwrap();
    assert_eq!(
        offered.names().collect::<Vec<_>>(),
        ["summarize", "ungated", "clock"]
    );
}

#[tokio::test]
async fn a_gated_tool_called_without_its_gate_is_refused() {
    let runs = Arc::new(AtomicUsize::new(0));
    let exec = executor([counted(
        "summarize",
        purpose("document_processing"),
        Arc::clone(&runs),
    )]);
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([call("c1", "summarize", json!({}))]))
            .then(ModelResponse::answer("No documents.")),
    );
    let runner = agent(&model, exec)
        .purpose_gate("document_processing", |context: &RunContext| {
            context.get::<Documents>().is_some()
        })
        .build();
    let result = runner
        .run("summarize", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(
        result.steps[0].calls[0].result.as_ref().unwrap_err().kind(),
        ToolErrorKind::NotOffered
    );
}

#[tokio::test]
async fn declared_only_tools_are_not_offered_unless_external() {
    let spec = tool_core::ToolSpec {
        name: "remote".into(),
        description: "Declared in a catalog".into(),
        parameters: no_arguments(),
        output_schema: None,
        metadata: ToolMetadata::default(),
    };
    let exec = executor([
        DynamicTool::declared(spec),
        counted("local", ToolMetadata::default(), Arc::default()),
    ]);
    let runner = agent(&Arc::new(ScriptedModel::new()), exec).build();
    let offered = runner
        .offered_tools("hi", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(offered.names().collect::<Vec<_>>(), ["local"]);
}

#[cfg(feature = "retrieval")]
#[tokio::test]
async fn the_retriever_picks_selectable_tools_for_the_input() {
    use tool_retrieval::{RetrieveOptions, Retriever};

    let weather = counted(
        "get_weather",
        ToolMetadata {
            keywords: vec!["forecast".into(), "rain".into()],
            ..selectable()
        },
        Arc::default(),
    );
    let flights = counted(
        "book_flight",
        ToolMetadata {
            keywords: vec!["plane".into(), "airline".into()],
            ..selectable()
        },
        Arc::default(),
    );
    let exec = executor([weather, flights]);
    let retriever = Arc::new(Retriever::lexical(exec.tools()));
    let options = RetrieveOptions {
        match_count: 1,
        ..RetrieveOptions::default()
    };
    let runner = agent(&Arc::new(ScriptedModel::new()), exec)
        .retriever(retriever, options)
        .build();
    let offered = runner
        .offered_tools(
            "will it rain tomorrow? what is the forecast",
            &RunOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(offered.names().collect::<Vec<_>>(), ["get_weather"]);
    let forced = runner
        .offered_tools("[book_flight] will it rain", &RunOptions::default())
        .await
        .unwrap();
    let mut names: Vec<&str> = forced.names().collect();
    names.sort();
    assert_eq!(names, ["book_flight", "get_weather"]);
}

#[tokio::test]
async fn a_run_given_its_own_toolset_offers_and_runs_that_set_alone() {
    let searches = Arc::new(AtomicUsize::new(0));
    let deletes = Arc::new(AtomicUsize::new(0));
    let exec = executor([
        counted("search", ToolMetadata::default(), Arc::clone(&searches)),
        counted("delete_all", ToolMetadata::default(), Arc::clone(&deletes)),
    ]);
    // The run's set: the agent's tools without the destructive one, under a prefix.
    let narrowed = tool_runtime::Toolset::of(&exec)
        .without(["delete_all"])
        .prefixed("kb_")
        .into_executor()
        .unwrap();
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([
                call("c1", "kb_search", json!({})),
                call("c2", "delete_all", json!({})),
            ]))
            .then(ModelResponse::answer("Searched.")),
    );
    let runner = agent(&model, exec).build();
    let result = runner
        .run("find it", &RunOptions::default().tools(narrowed))
        .await
        .unwrap();
    let requests = model.requests();
    let offered: Vec<&str> = requests[0]
        .tools
        .specs()
        .iter()
        .map(|spec| spec.name.as_str())
        .collect();
    assert_eq!(offered, ["kb_search"]);
    assert_eq!(searches.load(Ordering::SeqCst), 1);
    assert_eq!(
        deletes.load(Ordering::SeqCst),
        0,
        "the agent's own tool is not this run's"
    );
    let calls = &result.steps[0].calls;
    assert_eq!(calls[0].result.as_ref().unwrap().to_text(), "ran");
    assert!(calls[1].result.is_err());
    // Without the option the run has the agent's tools.
    let all = runner
        .offered_tools("x", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(all.specs().len(), 2);
}

#[cfg(feature = "retrieval")]
#[tokio::test]
async fn a_retrievers_pick_is_a_toolset_for_one_run() {
    use tool_retrieval::{RetrieveOptions, Retriever};

    let forecast = counted(
        "get_weather",
        ToolMetadata {
            keywords: vec!["forecast".into(), "rain".into()],
            ..selectable()
        },
        Arc::default(),
    );
    let flights = counted(
        "book_flight",
        ToolMetadata {
            keywords: vec!["plane".into(), "airline".into()],
            ..selectable()
        },
        Arc::default(),
    );
    let exec = executor([forecast, flights]);
    let retriever = Retriever::lexical(exec.tools());
    let options = RetrieveOptions {
        match_count: 1,
        ..RetrieveOptions::default()
    };
    let found = retriever
        .retrieve("will it rain tomorrow?", &options)
        .await
        .unwrap();
    // The pick, every tool of it offered in the run (selectable tools are offered only when
    // selected or retrieved by the agent's own retriever).
    let picked = tool_runtime::Toolset::of(&exec)
        .only(found.iter().map(|r| &r.name))
        .with_metadata(|metadata| metadata.selectable = false)
        .into_executor()
        .unwrap();
    let runner = agent(&Arc::new(ScriptedModel::new()), exec).build();
    let offered = runner
        .offered_tools("will it rain?", &RunOptions::default().tools(picked))
        .await
        .unwrap();
    assert_eq!(offered.names().collect::<Vec<_>>(), ["get_weather"]);
    let without = runner
        .offered_tools("will it rain?", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(
        without.names().count(),
        0,
        "the agent's own: selectable, none selected"
    );
}

#[tokio::test]
async fn an_allowed_tool_choice_keeps_every_declaration_and_refuses_calls_outside_it() {
    use tool_agent::{AllowedMode, ToolChoice};

    let searches = Arc::new(AtomicUsize::new(0));
    let deletes = Arc::new(AtomicUsize::new(0));
    let exec = executor([
        counted("search", ToolMetadata::default(), Arc::clone(&searches)),
        counted("delete_all", ToolMetadata::default(), Arc::clone(&deletes)),
    ]);
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([
                call("c1", "search", json!({})),
                call("c2", "delete_all", json!({})),
            ]))
            .then(ModelResponse::calling([call("c3", "search", json!({}))]))
            .then(ModelResponse::answer("Found.")),
    );
    let runner = agent(&model, exec).build();
    let choice = ToolChoice::Allowed(vec!["search".into()], AllowedMode::Required);
    let result = runner
        .run(
            "find it",
            &RunOptions::default().tool_choice(choice.clone()),
        )
        .await
        .unwrap();
    assert_eq!(searches.load(Ordering::SeqCst), 2);
    assert_eq!(
        deletes.load(Ordering::SeqCst),
        0,
        "offered, but not allowed"
    );
    let refused = result.steps[0].calls[1].result.as_ref().unwrap_err();
    assert_eq!(refused.kind(), ToolErrorKind::NotOffered);

    let requests = model.requests();
    // The same declarations at every step, so the provider's prompt cache holds.
    let declared: Vec<Vec<&str>> = requests
        .iter()
        .map(|r| r.tools.specs().iter().map(|s| s.name.as_str()).collect())
        .collect();
    assert_eq!(declared[0], ["search", "delete_all"]);
    assert!(declared.iter().all(|names| *names == declared[0]));
    assert_eq!(requests[0].tool_choice, choice);
    // A restriction holds for the whole run; the call it required, for the first step.
    let later = ToolChoice::Allowed(vec!["search".into()], AllowedMode::Auto);
    assert_eq!(requests[1].tool_choice, later);
    assert_eq!(requests[2].tool_choice, later);
}

#[tokio::test]
async fn gated_tools_kept_declared_are_refused_and_runs_of_any_context_send_the_same_tools() {
    use tool_agent::{AllowedMode, ToolChoice};
    use tool_core::provider::Format;

    let summaries = Arc::new(AtomicUsize::new(0));
    let exec = executor([
        counted(
            "summarize",
            purpose("document_processing"),
            Arc::clone(&summaries),
        ),
        counted("clock", ToolMetadata::default(), Arc::default()),
    ]);
    let model = Arc::new(
        ScriptedModel::new()
            .speaking(Format::OpenAiResponses)
            .then(ModelResponse::calling([call("c1", "summarize", json!({}))]))
            .then(ModelResponse::answer("No documents."))
            .then(ModelResponse::answer("Hello.")),
    );
    let runner = agent(&model, exec)
        .purpose_gate("document_processing", |context: &RunContext| {
            context.get::<Documents>().is_some()
        })
        .keep_gated_tools_declared(true)
        .build();
    let result = runner
        .run("summarize", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(
        summaries.load(Ordering::SeqCst),
        0,
        "gated: declared, not callable"
    );
    let refused = result.steps[0].calls[0].result.as_ref().unwrap_err();
    assert_eq!(refused.kind(), ToolErrorKind::NotOffered);

    let with_documents =
        RunOptions::default().context(RunContext::new().with(Documents(vec!["a.pdf".into()])));
    runner.run("hi", &with_documents).await.unwrap();
    let requests = model.requests();
    assert_eq!(
        requests[0].tools.names().collect::<Vec<_>>(),
        ["summarize", "clock"]
    );
    assert_eq!(
        requests[0].tool_choice,
        ToolChoice::Allowed(vec!["clock".into()], AllowedMode::Auto)
    );
    assert_eq!(requests[2].tool_choice, ToolChoice::Auto, "the gate passes");
    // Both runs, whatever their context, send the same tools: one prompt cache.
    assert_eq!(
        requests[0].tools.tools_json(),
        requests[2].tools.tools_json()
    );

    // Where the API has no allowed-tools choice, the gated tool is not declared.
    let anthropic = Arc::new(
        ScriptedModel::new()
            .speaking(Format::Anthropic)
            .then(ModelResponse::answer("Hello.")),
    );
    let exec = executor([
        counted("summarize", purpose("document_processing"), Arc::default()),
        counted("clock", ToolMetadata::default(), Arc::default()),
    ]);
    let runner = agent(&anthropic, exec)
        .purpose_gate("document_processing", |_: &RunContext| false)
        .keep_gated_tools_declared(true)
        .build();
    runner.run("hi", &RunOptions::default()).await.unwrap();
    let sent = &anthropic.requests()[0];
    assert_eq!(sent.tools.names().collect::<Vec<_>>(), ["clock"]);
    assert_eq!(sent.tool_choice, ToolChoice::Auto);
}
