//! The loop against a scripted model: calls, errors going back to the model, stop conditions,
//! guards and cancellation.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tool_agent::{
    Agent, Ending, Message, ModelError, ModelResponse, RunFailure, RunOptions, ScriptedModel,
    StopReason, ToolChoice, Usage, READ_RESULT,
};
use tool_core::{ToolErrorKind, ToolOutput};
use tool_runtime::{CancellationToken, DynamicTool, Executor};
use tool_test_support::*;

fn usage(input: u64, output: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        ..Usage::default()
    }
}

#[tokio::test(start_paused = true)]
async fn parallel_calls_run_and_their_results_go_back_in_call_order() {
    let in_flight = Arc::new(InFlight::default());
    let model = Arc::new(
        ScriptedModel::new()
            .then(
                ModelResponse::calling([
                    call("c1", "wait", json!({ "ms": 300 })),
                    call("c2", "wait", json!({ "ms": 100 })),
                    call("c3", "wait", json!({ "ms": 200 })),
                ])
                .with_usage(usage(100, 20)),
            )
            .then(ModelResponse::answer("All done.").with_usage(usage(150, 5))),
    );
    let exec = executor([sleeper("wait", Arc::clone(&in_flight), false)]);
    let runner = agent(&model, exec).instructions("Be brief.").build();
    let result = runner
        .run("wait three times", &RunOptions::default())
        .await
        .unwrap();

    assert_eq!(result.text, "All done.");
    assert_eq!(result.stop, StopReason::Finished);
    assert_eq!(
        in_flight.most.load(Ordering::SeqCst),
        3,
        "the calls overlapped"
    );
    assert_eq!(
        tool_messages(&result.transcript),
        [
            ("c1".to_owned(), "slept 300".to_owned(), false),
            ("c2".to_owned(), "slept 100".to_owned(), false),
            ("c3".to_owned(), "slept 200".to_owned(), false),
        ]
    );
    assert_every_call_answered(&result.transcript);
    assert_eq!(result.steps.len(), 2);
    assert_eq!(result.steps[0].calls.len(), 3);
    assert_eq!(
        result.usage,
        Usage {
            requests: 2,
            input_tokens: 250,
            output_tokens: 25,
            ..Usage::default()
        }
    );
    let requests = model.requests();
    assert_eq!(requests[0].instructions.as_deref(), Some("Be brief."));
    assert_eq!(
        requests[0].messages,
        vec![Message::user("wait three times")]
    );
    assert_eq!(
        requests[1].messages.len(),
        5,
        "user, assistant, three results"
    );
    let offered: Vec<&str> = requests[0].tools.names().collect();
    assert_eq!(offered, ["wait"]);
}

#[tokio::test]
async fn invalid_arguments_go_back_to_the_model_which_corrects_its_call() {
    let calls = Arc::new(AtomicUsize::new(0));
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([call(
                "c1",
                "add",
                json!({ "a": "one", "b": 2 }),
            )]))
            .then(ModelResponse::calling([call(
                "c2",
                "add",
                json!({ "a": 1, "b": 2 }),
            )]))
            .then(ModelResponse::answer("3")),
    );
    let runner = agent(&model, executor([add(Arc::clone(&calls))])).build();
    let result = runner.run("1 + 2?", &RunOptions::default()).await.unwrap();

    assert_eq!(result.text, "3");
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the bad call did not run");
    let results = tool_messages(&result.transcript);
    assert!(
        results[0]
            .1
            .starts_with("Invalid arguments for `add`:\n- /a:"),
        "{}",
        results[0].1
    );
    assert!(results[0].2);
    assert_eq!(results[1], ("c2".to_owned(), "3".to_owned(), false));
    let first = &result.steps[0].calls[0];
    assert_eq!(
        first.result.as_ref().unwrap_err().kind(),
        ToolErrorKind::InvalidArguments
    );
}

#[tokio::test]
async fn an_unknown_tool_gets_did_you_mean_among_the_offered_tools() {
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([call(
                "c1",
                "ad",
                json!({ "a": 1, "b": 2 }),
            )]))
            .then(ModelResponse::answer("sorry")),
    );
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let result = runner.run("1 + 2?", &RunOptions::default()).await.unwrap();
    let results = tool_messages(&result.transcript);
    assert_eq!(
        results[0].1,
        "There is no tool named `ad`. Did you mean `add`?"
    );
    assert_eq!(
        result.steps[0].calls[0].result.as_ref().unwrap_err().kind(),
        ToolErrorKind::UnknownTool
    );
}

#[tokio::test]
async fn panics_and_timeouts_go_back_to_the_model_and_the_run_goes_on() {
    let panics = DynamicTool::new("explode", "Panics", no_arguments(), |_, _| async {
        panic!("kaboom")
    });
    let hangs = DynamicTool::new("hang", "Never ends", no_arguments(), |_, _| async {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(ToolOutput::text("late"))
    });
    let exec = Executor::builder()
        .registered_tools(false)
        .tool(panics)
        .tool(hangs)
        .tool(add(Arc::default()))
        .default_timeout(Duration::from_millis(50))
        .build()
        .unwrap();
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([
                call("c1", "explode", json!({})),
                call("c2", "hang", json!({})),
                call("c3", "add", json!({ "a": 2, "b": 2 })),
            ]))
            .then(ModelResponse::answer("2 + 2 = 4, the rest failed")),
    );
    let result = agent(&model, exec)
        .build()
        .run("go", &RunOptions::default())
        .await
        .unwrap();
    let kinds: Vec<_> = result.steps[0]
        .calls
        .iter()
        .map(|r| {
            r.result
                .as_ref()
                .map(ToolOutput::to_text)
                .map_err(|e| e.kind())
        })
        .collect();
    assert_eq!(
        kinds,
        [
            Err(ToolErrorKind::Panicked),
            Err(ToolErrorKind::TimedOut),
            Ok("4".to_owned())
        ]
    );
    assert_eq!(result.text, "2 + 2 = 4, the rest failed");
    assert_every_call_answered(&result.transcript);
}

#[tokio::test]
async fn the_same_call_repeated_is_warned_then_stops_the_run() {
    let calls = Arc::new(AtomicUsize::new(0));
    let same = || ModelResponse::calling([call("c", "add", json!({ "a": 1, "b": 2 }))]);
    let model = Arc::new(
        ScriptedModel::new()
            .then(same())
            .then(same())
            .then(same())
            .then(same())
            .then(ModelResponse::answer("never asked")),
    );
    let runner = agent(&model, executor([add(Arc::clone(&calls))])).build();
    let err = runner
        .run("loop", &RunOptions::default())
        .await
        .unwrap_err();

    assert!(
        matches!(&err.failure, RunFailure::RepeatedCall { name, times: 4 } if name == "add"),
        "{err}"
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "the 3rd and 4th calls did not run"
    );
    let results = tool_messages(&err.partial.transcript);
    assert_eq!(results.len(), 4);
    assert!(
        results[2].1.contains("3 times in a row"),
        "{}",
        results[2].1
    );
    assert!(results[3].1.starts_with("Not run"), "{}", results[3].1);
    assert_eq!(model.remaining(), 1);
}

#[tokio::test]
async fn at_the_step_limit_one_last_request_without_tools_gives_the_answer() {
    let looping =
        |i: u64| ModelResponse::calling([call(&format!("c{i}"), "add", json!({ "a": i, "b": 1 }))]);
    let model = Arc::new(
        ScriptedModel::new()
            .then(looping(1))
            .then(looping(2))
            .then(ModelResponse::answer("I stopped at 3.")),
    );
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let options = RunOptions::default()
        .max_steps(2)
        .tool_choice(ToolChoice::Required);
    let result = runner.run("count", &options).await.unwrap();

    assert_eq!(result.stop, StopReason::MaxSteps { steps: 2 });
    assert_eq!(result.text, "I stopped at 3.");
    let choices: Vec<ToolChoice> = model
        .requests()
        .into_iter()
        .map(|r| r.tool_choice)
        .collect();
    assert_eq!(
        choices,
        [ToolChoice::Required, ToolChoice::Auto, ToolChoice::None],
        "required only for the first request, no tools for the last"
    );
    assert_eq!(result.steps.len(), 3);
}

#[tokio::test]
async fn without_a_last_answer_the_step_limit_stops_with_the_partial_run() {
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([call(
                "c1",
                "add",
                json!({ "a": 1, "b": 1 }),
            )]))
            .then(ModelResponse::answer("never asked")),
    );
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let options = RunOptions::default().max_steps(1).answer_at_limit(false);
    let result = runner.run("count", &options).await.unwrap();
    assert_eq!(result.stop, StopReason::MaxSteps { steps: 1 });
    assert_eq!(model.requests().len(), 1);
    assert_every_call_answered(&result.transcript);
}

#[tokio::test]
async fn steps_of_nothing_but_failures_stop_the_run_with_a_typed_error() {
    let bad = |i: u64| ModelResponse::calling([call(&format!("c{i}"), "nope", json!({ "i": i }))]);
    let model = Arc::new(
        ScriptedModel::new()
            .then(bad(1))
            .then(bad(2))
            .then(bad(3))
            .then(ModelResponse::answer("never asked")),
    );
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let err = runner.run("go", &RunOptions::default()).await.unwrap_err();
    assert!(
        matches!(&err.failure, RunFailure::TooManyFailedSteps { steps: 3, last } if last.contains("unknown tool `nope`")),
        "{err}"
    );
    assert_eq!(err.partial.steps.len(), 3);
    assert_every_call_answered(&err.partial.transcript);
}

#[tokio::test]
async fn a_tool_in_stop_at_tools_ends_the_run_with_its_output() {
    let submit = DynamicTool::new(
        "submit",
        "Submits the answer",
        no_arguments(),
        |_, _| async { Ok(ToolOutput::text("submitted: 42")) },
    );
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([call("c1", "submit", json!({}))]))
            .then(ModelResponse::answer("never asked")),
    );
    let runner = agent(&model, executor([submit])).build();
    let result = runner
        .run("answer", &RunOptions::default().stop_at_tool("submit"))
        .await
        .unwrap();
    assert_eq!(
        result.stop,
        StopReason::ToolCalled {
            name: "submit".into()
        }
    );
    assert_eq!(result.text, "submitted: 42");
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn a_stop_tool_that_fails_or_is_not_run_does_not_end_the_run() {
    let submit = DynamicTool::new(
        "submit",
        "Submits the answer",
        no_arguments(),
        |_, _| async { Err(tool_core::ToolError::failed("submit", "the form is closed")) },
    );
    let model = Arc::new(
        ScriptedModel::new()
            // A failure goes back to the model, and the run goes on.
            .then(ModelResponse::calling([call("c1", "submit", json!({}))]))
            .then(ModelResponse::answer("gave up")),
    );
    let runner = agent(&model, executor([submit])).build();
    let result = runner
        .run("answer", &RunOptions::default().stop_at_tool("submit"))
        .await
        .unwrap();
    assert_eq!(result.stop, StopReason::Finished);
    assert_eq!(result.text, "gave up");
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn the_token_budget_and_the_predicate_stop_the_run() {
    let step = |i: u64| {
        ModelResponse::calling([call(&format!("c{i}"), "add", json!({ "a": i, "b": 0 }))])
            .with_usage(usage(80, 20))
    };
    let model = Arc::new(
        ScriptedModel::new()
            .then(step(1))
            .then(step(2))
            .then(step(3)),
    );
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let result = runner
        .run("go", &RunOptions::default().token_budget(150))
        .await
        .unwrap();
    assert_eq!(
        result.stop,
        StopReason::TokenBudget {
            used: 200,
            budget: 150
        }
    );
    assert_eq!(result.steps.len(), 2);

    let model = Arc::new(
        ScriptedModel::new()
            .then(step(1))
            .then(step(2))
            .then(step(3)),
    );
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let options = RunOptions::default().stop_when(|step| {
        step.calls
            .iter()
            .any(|c| c.result.as_ref().is_ok_and(|o| o.to_text() == "2"))
    });
    let result = runner.run("go", &options).await.unwrap();
    assert_eq!(result.stop, StopReason::Predicate);
    assert_eq!(result.steps.len(), 2);
}

#[tokio::test(start_paused = true)]
async fn calls_run_up_to_the_cap_and_destructive_ones_one_at_a_time_in_call_order() {
    let free = Arc::new(InFlight::default());
    let destructive = Arc::new(InFlight::default());
    let model =
        Arc::new(
            ScriptedModel::new()
                .then(ModelResponse::calling(
                    (0..6)
                        .map(|i| call(&format!("w{i}"), "wait", json!({ "ms": 10 + i })))
                        .chain((0..3).map(|i| {
                            call(&format!("d{i}"), "delete", json!({ "ms": 30 - 10 * i }))
                        })),
                ))
                .then(ModelResponse::answer("done")),
        );
    let exec = executor([
        sleeper("wait", Arc::clone(&free), false),
        sleeper("delete", Arc::clone(&destructive), true),
    ]);
    let runner = agent(&model, exec).build();
    let result = runner
        .run("go", &RunOptions::default().max_concurrency(2))
        .await
        .unwrap();
    assert_eq!(free.most.load(Ordering::SeqCst), 2);
    assert_eq!(destructive.most.load(Ordering::SeqCst), 1);
    let ids: Vec<String> = tool_messages(&result.transcript)
        .into_iter()
        .map(|(id, _, _)| id)
        .collect();
    assert_eq!(ids, ["w0", "w1", "w2", "w3", "w4", "w5", "d0", "d1", "d2"]);
    let texts: Vec<String> = result.steps[0].calls[6..]
        .iter()
        .map(|r| r.result.as_ref().unwrap().to_text())
        .collect();
    assert_eq!(texts, ["slept 30", "slept 20", "slept 10"]);
}

#[tokio::test]
async fn cancelling_mid_tool_gives_every_pending_call_a_cancelled_result() {
    let started = Arc::new(tokio::sync::Notify::new());
    let signal = Arc::clone(&started);
    let slow = DynamicTool::new("slow", "Takes long", no_arguments(), move |_, _| {
        let signal = Arc::clone(&signal);
        async move {
            signal.notify_one();
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(ToolOutput::text("finished"))
        }
    });
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([
                call("c1", "slow", json!({})),
                call("c2", "slow", json!({})),
            ]))
            .then(ModelResponse::answer("never asked")),
    );
    let runner = agent(&model, executor([slow])).build();
    let token = CancellationToken::new();
    let options = RunOptions::default()
        .max_concurrency(1)
        .cancellation(token.clone());
    let run = tokio::spawn(async move { runner.run("go", &options).await });
    started.notified().await;
    token.cancel();
    let err = run.await.unwrap().unwrap_err();

    assert!(matches!(err.failure, RunFailure::Cancelled), "{err}");
    let results = tool_messages(&err.partial.transcript);
    assert_eq!(
        results,
        [
            (
                "c1".to_owned(),
                "The call to `slow` was cancelled.".to_owned(),
                true
            ),
            (
                "c2".to_owned(),
                "The call to `slow` was cancelled.".to_owned(),
                true
            ),
        ]
    );
    assert_every_call_answered(&err.partial.transcript);
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn cancelling_during_the_model_request_ends_it() {
    let model = Arc::new(ScriptedModel::new().then_never());
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let token = CancellationToken::new();
    let options = RunOptions::default().cancellation(token.clone());
    let run = tokio::spawn(async move { runner.run("go", &options).await });
    tokio::task::yield_now().await;
    token.cancel();
    let err = run.await.unwrap().unwrap_err();
    assert!(matches!(err.failure, RunFailure::Cancelled), "{err}");
    assert_eq!(err.partial.transcript, vec![Message::user("go")]);
}

#[tokio::test]
async fn a_failed_model_request_keeps_the_partial_run() {
    let model = Arc::new(
        ScriptedModel::new()
            .then(
                ModelResponse::calling([call("c1", "add", json!({ "a": 1, "b": 2 }))])
                    .with_usage(usage(10, 1)),
            )
            .then_error(ModelError::Other("the server went away".into())),
    );
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let err = runner.run("go", &RunOptions::default()).await.unwrap_err();
    assert!(
        matches!(&err.failure, RunFailure::Model { step: 1, error: ModelError::Other(m) } if m == "the server went away"),
        "{err}"
    );
    assert_eq!(err.partial.steps.len(), 1);
    assert_eq!(err.partial.usage.input_tokens, 10);
    assert_eq!(tool_messages(&err.partial.transcript).len(), 1);
    assert_eq!(
        err.to_string(),
        "the run stopped after 1 step(s): the model request of step 1 failed"
    );
}

#[tokio::test]
async fn history_comes_before_the_input() {
    let model = Arc::new(ScriptedModel::new().then(ModelResponse::answer("Lyon")));
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let history = vec![
        Message::user("I live in Lyon."),
        Message::assistant("Noted."),
    ];
    let result = runner
        .run(
            "Where do I live?",
            &RunOptions::default().history(history.clone()),
        )
        .await
        .unwrap();
    let mut expected = history;
    expected.push(Message::user("Where do I live?"));
    assert_eq!(model.requests()[0].messages, expected);
    assert_eq!(result.transcript.len(), 4);
}

/// A coordinator hands a task to another agent through `Agent::into_tool`.
#[tokio::test]
async fn an_agent_as_a_tool_answers_the_task_its_caller_gives_it() {
    let researcher_model = Arc::new(
        ScriptedModel::new().then(ModelResponse::answer("Paris is the capital of France.")),
    );
    let researcher = Arc::new(
        Agent::builder(Arc::clone(&researcher_model))
            .instructions("You answer questions about geography.")
            .build(),
    );
    let tool = researcher.into_tool(
        "researcher",
        "Answers questions about geography",
        RunOptions::default(),
    );
    let coordinator_model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([call(
                "c1",
                "researcher",
                json!({ "input": "What is the capital of France?" }),
            )]))
            .then(ModelResponse::answer("Paris.")),
    );
    let coordinator = agent(&coordinator_model, executor([tool])).build();
    let result = coordinator
        .run("Capital of France?", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.text, "Paris.");
    let results = tool_messages(&result.transcript);
    assert_eq!(
        results[0],
        ("c1".into(), "Paris is the capital of France.".into(), false)
    );
    let asked = researcher_model.requests();
    assert!(
        matches!(asked[0].messages.last(), Some(Message::User { text }) if text == "What is the capital of France?"),
        "{:?}",
        asked[0].messages
    );
}

#[tokio::test]
async fn an_agent_tools_failed_run_is_a_failed_call_the_caller_reads() {
    let failing = Arc::new(
        Agent::builder(ScriptedModel::new().then_error(ModelError::Setup("no key".into()))).build(),
    );
    let tool = failing.into_tool("helper", "Helps", RunOptions::default());
    let exec = executor([tool]);
    let err = exec
        .execute("helper", json!({ "input": "help" }))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ToolErrorKind::Failed, "{err}");
    assert!(err.to_string().contains("helper"), "{err}");
}

#[tokio::test]
async fn the_calls_over_the_runs_limit_are_not_run_and_the_model_answers_without_tools() {
    let adds = Arc::new(AtomicUsize::new(0));
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([
                call("c1", "add", json!({ "a": 1, "b": 2 })),
                call("c2", "add", json!({ "a": 3, "b": 4 })),
                call("c3", "add", json!({ "a": 5, "b": 6 })),
            ]))
            .then(ModelResponse::answer("3 and 7; the third was not added.")),
    );
    let runner = agent(&model, executor([add(Arc::clone(&adds))])).build();
    let options = RunOptions::default().max_tool_calls(2);
    let result = runner.run("add three pairs", &options).await.unwrap();
    assert_eq!(adds.load(Ordering::SeqCst), 2);
    assert_eq!(result.stop, StopReason::ToolCallLimit { calls: 2 });
    let results = tool_messages(&result.transcript);
    assert!(!results[1].2 && results[2].2, "{results:?}");
    assert!(
        results[2].1.contains("limit of 2 tool calls"),
        "{}",
        results[2].1
    );
    assert_every_call_answered(&result.transcript);
    let requests = model.requests();
    assert_eq!(requests[1].tool_choice, ToolChoice::None);
}

/// Calls in an answer cut at the output limit (their arguments may be cut too) or stopped by
/// a filter are not run: the run ends as that answer does, its transcript without them.
#[tokio::test]
async fn calls_in_an_answer_cut_short_are_not_run() {
    for (reason, truncated) in [
        ("length", true),
        ("max_tokens", true),
        ("content_filter", false),
    ] {
        let mut cut = ModelResponse::calling([call("c1", "add", json!({ "a": 1, "b": 2 }))]);
        cut.text = Some("Adding".into());
        cut.finish_reason = Some(reason.into());
        cut.ending = match truncated {
            true => Ending::CutAtLimit,
            false => Ending::Declined,
        };
        let model = Arc::new(ScriptedModel::new().then(cut));
        let adds = Arc::new(AtomicUsize::new(0));
        let runner = agent(&model, executor([add(Arc::clone(&adds))])).build();
        let result = runner.run("add", &RunOptions::default()).await.unwrap();
        assert_eq!(adds.load(Ordering::SeqCst), 0, "{reason}");
        let reason = reason.to_owned();
        let expected = match truncated {
            true => StopReason::Truncated { reason },
            false => StopReason::Declined { reason },
        };
        assert_eq!(result.stop, expected);
        assert_eq!(result.text, "Adding");
        assert!(result.steps[0].calls.is_empty());
        assert_every_call_answered(&result.transcript);
        assert!(tool_messages(&result.transcript).is_empty());
    }
}

/// A final answer cut at the output limit, or declined, ends the run saying so, with the text
/// that came; an answer schema is not checked against it (nor retried).
#[tokio::test]
async fn an_answer_cut_at_the_limit_or_declined_ends_the_run_saying_so() {
    for (reason, expected) in [
        (
            "max_tokens",
            StopReason::Truncated {
                reason: "max_tokens".into(),
            },
        ),
        (
            "length",
            StopReason::Truncated {
                reason: "length".into(),
            },
        ),
        (
            "refusal",
            StopReason::Declined {
                reason: "refusal".into(),
            },
        ),
        (
            "SAFETY",
            StopReason::Declined {
                reason: "SAFETY".into(),
            },
        ),
    ] {
        let mut cut = ModelResponse::answer("{\"city\": \"Par");
        cut.finish_reason = Some(reason.into());
        cut.ending = match expected {
            StopReason::Truncated { .. } => Ending::CutAtLimit,
            _ => Ending::Declined,
        };
        let model = Arc::new(ScriptedModel::new().then(cut));
        let runner = agent(&model, executor([add(Arc::default())])).build();
        let options = RunOptions::default().output(tool_agent::ResponseFormat::new(
            "city",
            json!({ "type": "object", "properties": { "city": { "type": "string" } }, "required": ["city"] }),
        ));
        let result = runner.run("where?", &options).await.unwrap();
        assert_eq!(result.stop, expected);
        assert_eq!(result.text, "{\"city\": \"Par");
        assert!(result.output.is_none());
        assert_eq!(result.steps[0].finish_reason.as_deref(), Some(reason));
        assert_eq!(model.requests().len(), 1, "not asked again");
    }
}

/// Gemini's MALFORMED_FUNCTION_CALL: no call came, the model is told and asked again, and the
/// step counts as failed.
#[tokio::test]
async fn a_malformed_call_is_told_to_the_model_and_asked_again() {
    let malformed = || ModelResponse {
        finish_reason: Some("MALFORMED_FUNCTION_CALL".into()),
        ending: Ending::MalformedCall,
        ..ModelResponse::default()
    };
    let model = Arc::new(
        ScriptedModel::new()
            .then(malformed())
            .then(ModelResponse::answer("3")),
    );
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let result = runner.run("1 + 2?", &RunOptions::default()).await.unwrap();
    assert_eq!(result.stop, StopReason::Finished);
    assert_eq!(result.text, "3");
    let second = &model.requests()[1];
    let last = second.messages.last().unwrap();
    assert!(
        matches!(last, Message::User { text } if text.contains("MALFORMED_FUNCTION_CALL")),
        "{last:?}"
    );
    assert!(
        !second.messages.iter().any(Message::is_empty_answer),
        "no empty answer sent back"
    );

    // With tools turned off there is no call to ask for again: the answer is the answer.
    let model = Arc::new(ScriptedModel::new().then(malformed()));
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let off = RunOptions::default().tool_choice(tool_agent::ToolChoice::None);
    let result = runner.run("1 + 2?", &off).await.unwrap();
    assert_eq!(result.stop, StopReason::Finished);
    assert_eq!(model.requests().len(), 1);

    // On the last step, the answer is asked for without tools, as after any step at the limit.
    let model = Arc::new(
        ScriptedModel::new()
            .then(malformed())
            .then(ModelResponse::answer("3")),
    );
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let last = RunOptions::default().max_steps(1);
    let result = runner.run("1 + 2?", &last).await.unwrap();
    assert_eq!(result.stop, StopReason::MaxSteps { steps: 1 });
    assert_eq!(result.text, "3");
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].tool_choice, tool_agent::ToolChoice::None);
    // Without that last request, the run stops at its limit, not as a finished empty answer.
    let model = Arc::new(ScriptedModel::new().then(malformed()));
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let result = runner
        .run("1 + 2?", &last.clone().answer_at_limit(false))
        .await
        .unwrap();
    assert_eq!(result.stop, StopReason::MaxSteps { steps: 1 });
    assert!(
        !matches!(result.transcript.last(), Some(Message::User { .. })),
        "no request to call again is left unanswered: {:?}",
        result.transcript.last()
    );

    // The last step's malformed call is a failed step all the same.
    let model = Arc::new(ScriptedModel::new().then(malformed()));
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let strict = last.clone().answer_at_limit(false).max_failed_steps(1);
    let error = runner.run("1 + 2?", &strict).await.unwrap_err();
    assert!(
        matches!(error.failure, RunFailure::TooManyFailedSteps { .. }),
        "{:?}",
        error.failure
    );

    let model = Arc::new(ScriptedModel::new().then(malformed()));
    let runner = agent(&model, executor([add(Arc::default())])).build();
    let options = RunOptions::default().max_failed_steps(1);
    let error = runner.run("1 + 2?", &options).await.unwrap_err();
    assert!(
        matches!(
            error.failure,
            RunFailure::TooManyFailedSteps { steps: 1, .. }
        ),
        "{:?}",
        error.failure
    );
}

/// An answer with 100,000 calls is refused whole, before any call runs, naming the cap; one at
/// the cap runs.
#[tokio::test]
async fn an_answer_past_the_call_cap_is_refused_before_any_call_runs() {
    let calls = Arc::new(AtomicUsize::new(0));
    let flood: Vec<_> = (0..100_000)
        .map(|i| call(&format!("c{i}"), "add", json!({ "a": i, "b": 1 })))
        .collect();
    let model = Arc::new(ScriptedModel::new().then(ModelResponse::calling(flood)));
    let runner = agent(&model, executor([add(Arc::clone(&calls))])).build();
    let err = runner.run("add", &RunOptions::default()).await.unwrap_err();
    match &err.failure {
        RunFailure::Model {
            error: ModelError::Malformed { message, .. },
            ..
        } => assert!(
            message.contains("100000 tool calls")
                && message.contains("128")
                && message.contains("RunOptions::max_calls_per_answer"),
            "{message}"
        ),
        other => panic!("unexpected: {other:?}"),
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0, "no call ran");
    assert_eq!(model.requests().len(), 1, "no result was sent back");

    let at_cap: Vec<_> = (0..3)
        .map(|i| call(&format!("c{i}"), "add", json!({ "a": i, "b": 1 })))
        .collect();
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling(at_cap))
            .then(ModelResponse::answer("done")),
    );
    let runner = agent(&model, executor([add(Arc::clone(&calls))])).build();
    let options = RunOptions::default().max_calls_per_answer(3);
    let result = runner.run("add", &options).await.unwrap();
    assert_eq!(result.text, "done");
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

/// With results kept, a cut result's note gives its id, and the run's own `read_result` tool
/// reads any part of it; without, no such tool is offered.
#[tokio::test]
async fn a_kept_result_is_read_back_in_parts_through_the_runs_own_tool() {
    let huge: String = (0..100_000).map(|i| format!("row {i:06}\n")).collect();
    let big = huge.clone();
    let dump = DynamicTool::new(
        "dump",
        "Dumps the table",
        json!({ "type": "object" }),
        move |_, _| {
            let big = big.clone();
            async move { Ok(ToolOutput::text(big)) }
        },
    );
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling(vec![call("c1", "dump", json!({}))]))
            .then(ModelResponse::calling(vec![call(
                "c2",
                READ_RESULT,
                json!({ "id": "r1", "offset": 5_500, "length": 33 }),
            )]))
            .then(ModelResponse::answer("row 000500 it is")),
    );
    let runner = agent(&model, executor([dump.clone()])).build();
    let options = RunOptions::default()
        .max_result_bytes(4_000)
        .kept_result_bytes(4 << 20);
    runner.run("dump", &options).await.unwrap();
    let requests = model.requests();
    assert!(requests[0].tools.contains(READ_RESULT));
    let Some(Message::Tool { text, .. }) = requests[1].messages.last() else {
        panic!("{:?}", requests[1].messages)
    };
    assert!(text.len() <= 4_000, "{}", text.len());
    assert!(
        text.ends_with("is kept as `r1`: call read_result with id \"r1\", an offset and a length to read any part of it.]"),
        "{text}"
    );
    let Some(Message::Tool { text, .. }) = requests[2].messages.last() else {
        panic!("{:?}", requests[2].messages)
    };
    assert_eq!(
        text,
        "[r1: bytes 5500 to 5533 of 1100000; the next part starts at offset 5533]\nrow 000500\nrow 000501\nrow 000502\n"
    );

    let model = Arc::new(ScriptedModel::new().then(ModelResponse::answer("no")));
    let runner = agent(&model, executor([dump])).build();
    runner.run("dump", &RunOptions::default()).await.unwrap();
    assert!(!model.requests()[0].tools.contains(READ_RESULT));
}

/// A result of 5 MB reaches the model cut to the run's cap, head and tail, with a line naming
/// the cap; the program's record keeps it whole. With the cap off, it goes whole.
#[tokio::test]
async fn a_result_past_the_cap_reaches_the_model_cut_and_the_record_whole() {
    let huge: String = (0..500_000).map(|i| format!("row {i:06}\n")).collect();
    let big = huge.clone();
    let dump = DynamicTool::new(
        "dump",
        "Dumps the table",
        json!({ "type": "object" }),
        move |_, _| {
            let big = big.clone();
            async move { Ok(ToolOutput::text(big)) }
        },
    );
    let script = || {
        ScriptedModel::new()
            .then(ModelResponse::calling(vec![call("c1", "dump", json!({}))]))
            .then(ModelResponse::answer("done"))
    };
    let model = Arc::new(script());
    let runner = agent(&model, executor([dump.clone()])).build();
    let result = runner.run("dump", &RunOptions::default()).await.unwrap();
    let sent = model.requests()[1].messages.clone();
    let Some(Message::Tool { text, .. }) = sent.last() else {
        panic!("{sent:?}")
    };
    assert!(
        text.len() <= RunOptions::DEFAULT_MAX_RESULT_BYTES,
        "{}",
        text.len()
    );
    assert!(text.starts_with("row 000000\n") && text.ends_with("row 499999\n"));
    assert!(
        text.contains("RunOptions::max_result_bytes"),
        "the model is told why"
    );
    let record = &result.steps[0].calls[0];
    assert_eq!(
        record.result.as_ref().unwrap().to_text(),
        huge,
        "the record is whole"
    );

    let model = Arc::new(script());
    let runner = agent(&model, executor([dump])).build();
    let options = RunOptions::default().max_result_bytes(usize::MAX);
    runner.run("dump", &options).await.unwrap();
    let sent = model.requests()[1].messages.clone();
    let Some(Message::Tool { text, .. }) = sent.last() else {
        panic!("{sent:?}")
    };
    assert_eq!(text.len(), huge.len());
}

/// A tool's request to a model (`ToolContext::sample`) is answered by the run's own model when
/// the agent says so: a request of the tool's messages and instructions, with no tools and its
/// token cap held to the agent's.
#[tokio::test]
async fn a_tools_request_to_a_model_is_answered_by_the_runs_model() {
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([call(
                "c1",
                "welcome",
                json!({ "guest": "Ada" }),
            )]))
            .then(ModelResponse::answer("Welcome, Ada!"))
            .then(ModelResponse::answer("Done: Welcome, Ada!")),
    );
    let welcome = DynamicTool::new(
        "welcome",
        "Writes a welcome.",
        json!({ "type": "object", "properties": { "guest": { "type": "string" } }, "required": ["guest"] }),
        |args, ctx| async move {
            let guest = args["guest"].as_str().unwrap_or_default().to_owned();
            let request = tool_runtime::SamplingRequest::new(format!("Welcome {guest}."))
                .with_system("One line.")
                .with_max_tokens(40);
            Ok(ToolOutput::text(ctx.sample(request).await?.text))
        },
    );
    // Off by default: the tool is told no model is reachable.
    let off = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([call(
                "c0",
                "welcome",
                json!({ "guest": "Ada" }),
            )]))
            .then(ModelResponse::answer("No welcome.")),
    );
    let result = agent(&off, executor([welcome.clone()]))
        .build()
        .run("welcome Ada", &RunOptions::default())
        .await
        .unwrap();
    let (_, text, is_error) = &tool_messages(&result.transcript)[0];
    assert!(*is_error && text.contains("cannot ask a model"), "{text}");

    let runner = agent(&model, executor([welcome]))
        .answer_sampling(30)
        .build();
    let result = runner
        .run("welcome Ada", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.text, "Done: Welcome, Ada!");
    assert_eq!(
        tool_messages(&result.transcript),
        [("c1".to_owned(), "Welcome, Ada!".to_owned(), false)]
    );
    let requests = model.requests();
    let sampled = &requests[1];
    assert_eq!(sampled.instructions.as_deref(), Some("One line."));
    assert_eq!(
        sampled.generation.max_tokens,
        Some(30),
        "held to the agent's cap"
    );
    assert!(sampled.tools.is_empty(), "no tools for a sampling request");
    assert_eq!(sampled.messages.len(), 1);
}
