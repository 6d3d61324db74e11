//! Human in the loop: calls that need approval wait, the state survives serialization, and a
//! resumed run executes exactly what was approved.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tool_agent::{
    Agent, ModelResponse, PendingApproval, RunFailure, RunOptions, RunResult, RunState,
    ScriptedModel, StopReason,
};
use tool_core::{SafetyHints, ToolMetadata, ToolOutput};
use tool_runtime::DynamicTool;
use tool_test_support::*;

/// A destructive `pay`, recording the arguments of every run.
fn pay(paid: Arc<Mutex<Vec<Value>>>) -> DynamicTool {
    let schema = json!({
        "type": "object",
        "properties": { "to": { "type": "string" }, "amount": { "type": "integer", "maximum": 1000 } },
        "required": ["to", "amount"]
    });
    DynamicTool::new("pay", "Pays someone", schema, move |args, _| {
        paid.lock().unwrap().push(args.clone());
        async move { Ok(ToolOutput::text(format!("paid {}", args["amount"]))) }
    })
    .with_metadata(ToolMetadata {
        hints: SafetyHints {
            destructive: Some(true),
            ..SafetyHints::default()
        },
        ..ToolMetadata::default()
    })
}

fn setup(
    then: Vec<ModelResponse>,
) -> (
    Agent,
    Arc<Mutex<Vec<Value>>>,
    Arc<std::sync::atomic::AtomicUsize>,
) {
    let paid = Arc::new(Mutex::new(Vec::new()));
    let adds = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut model = ScriptedModel::new().then(ModelResponse::calling([
        call("c1", "add", json!({ "a": 1, "b": 2 })),
        call("c2", "pay", json!({ "to": "bob", "amount": 500 })),
    ]));
    for response in then {
        model = model.then(response);
    }
    let agent = Agent::builder(model)
        .executor(executor([add(Arc::clone(&adds)), pay(Arc::clone(&paid))]))
        .require_approval_for_destructive()
        .build();
    (agent, paid, adds)
}

/// The state through JSON, as it would wait in a database: text PostgreSQL's `jsonb` takes
/// too, which refuses `\u0000`.
fn stored(result: &RunResult) -> RunState {
    let state = &result.interruption.as_ref().expect("interrupted").state;
    let text = serde_json::to_string(state).unwrap();
    assert!(!text.contains("\\u0000"), "jsonb refuses {text}");
    serde_json::from_str(&text).unwrap()
}

/// Runs `input` to its interruption: the stored state and its first pending call.
async fn interrupted(agent: &Agent, input: &str) -> (RunState, PendingApproval) {
    let first = agent.run(input, &RunOptions::default()).await.unwrap();
    assert_eq!(first.stop, StopReason::Interrupted);
    let state = stored(&first);
    let pending = state.pending().next().unwrap().clone();
    (state, pending)
}

#[tokio::test]
async fn a_call_needing_approval_waits_while_the_others_run() {
    let (agent, paid, adds) = setup(Vec::new());
    let result = agent.run("pay bob", &RunOptions::default()).await.unwrap();
    assert_eq!(result.stop, StopReason::Interrupted);
    assert_eq!(adds.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(paid.lock().unwrap().is_empty(), "pay did not run");
    let interruption = result.interruption.as_ref().unwrap();
    assert_eq!(interruption.pending.len(), 1);
    assert_eq!(interruption.pending[0].call.name, "pay");
    assert_eq!(
        interruption.pending[0].call.arguments,
        json!({ "to": "bob", "amount": 500 })
    );
}

#[tokio::test]
async fn approve_with_edited_arguments_after_serializing_runs_exactly_those() {
    let (agent, paid, _) = setup(vec![ModelResponse::answer("Paid bob 50.")]);
    let (state, pending) = interrupted(&agent, "pay bob").await;
    let decision = pending.approve_with(json!({ "to": "bob", "amount": 50 }));

    let result = agent
        .resume(state, &[decision], &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.text, "Paid bob 50.");
    assert_eq!(
        *paid.lock().unwrap(),
        [json!({ "to": "bob", "amount": 50 })]
    );
    assert_every_call_answered(&result.transcript);
    let results = tool_messages(&result.transcript);
    let ids: Vec<&str> = results.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2"], "results in call order");
    // The model wrote 500: it reads what ran, or it would report a payment of 500.
    assert_eq!(
        results[1].1,
        "The user changed this call's arguments to {\"to\":\"bob\",\"amount\":50}; this is the result for those.\npaid 50"
    );
    // Approved unchanged, a call's result is the tool's alone.
    let (agent, _, _) = setup(vec![ModelResponse::answer("Paid.")]);
    let (state, pending) = interrupted(&agent, "pay bob").await;
    let same = pending.approve_with(json!({ "amount": 500, "to": "bob" }));
    let result = agent
        .resume(state, &[same], &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(tool_messages(&result.transcript)[1].1, "paid 500");
}

#[tokio::test]
async fn edited_arguments_are_validated_like_any_call() {
    let (agent, paid, _) = setup(vec![ModelResponse::answer("Could not pay.")]);
    let (state, pending) = interrupted(&agent, "pay bob").await;
    let decision = pending.approve_with(json!({ "to": "bob", "amount": 5000 }));
    let result = agent
        .resume(state, &[decision], &RunOptions::default())
        .await
        .unwrap();
    assert!(paid.lock().unwrap().is_empty());
    let texts = tool_messages(&result.transcript);
    let (told, error) = texts[1].1.split_once('\n').expect("two lines");
    assert!(
        told.starts_with("The user changed this call's arguments"),
        "{told}"
    );
    assert!(error.starts_with("Invalid arguments for `pay`"), "{error}");
}

#[tokio::test]
async fn a_decision_on_other_arguments_runs_nothing() {
    let (agent, paid, _) = setup(vec![ModelResponse::answer("never asked")]);
    let first = agent.run("pay bob", &RunOptions::default()).await.unwrap();
    let state = stored(&first);
    let mut forged = state.pending().next().unwrap().clone();
    forged.call.arguments = json!({ "to": "mallory", "amount": 999 });
    forged.arguments_hash = "0123456789abcdef".into();
    let err = agent
        .resume(state, &[forged.approve()], &RunOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err.failure, RunFailure::Approval(_)), "{err}");
    assert!(paid.lock().unwrap().is_empty());
    // The partial transcript is one an API takes: the call that ran has its result, the one
    // that waited is answered as not run.
    assert_every_call_answered(&err.partial.transcript);
    let texts = tool_messages(&err.partial.transcript);
    assert_eq!(texts[0].1, "3");
    assert!(
        texts[1].1.starts_with("The call was not run: "),
        "{}",
        texts[1].1
    );
}

#[tokio::test]
async fn calls_with_the_same_id_and_arguments_each_take_their_own_decision() {
    // Two identical calls without ids (as Gemini gives them): approve the first, reject the
    // second, and only one payment is made.
    let paid = Arc::new(Mutex::new(Vec::new()));
    let same = || {
        let mut call = call("", "pay", json!({ "to": "bob", "amount": 5 }));
        call.id = None;
        call
    };
    let model = ScriptedModel::new()
        .then(ModelResponse::calling([same(), same()]))
        .then(ModelResponse::answer("paid once"));
    let agent = Agent::builder(model)
        .executor(executor([pay(Arc::clone(&paid))]))
        .require_approval_for_destructive()
        .build();
    let first = agent
        .run("pay bob twice", &RunOptions::default())
        .await
        .unwrap();
    let state = stored(&first);
    let pending: Vec<PendingApproval> = state.pending().cloned().collect();
    assert_eq!(pending.len(), 2);
    // A second decision for one call is refused, not chosen between.
    let err = agent
        .resume(
            state.clone(),
            &[
                pending[0].approve(),
                pending[0].reject("no"),
                pending[1].reject("no"),
            ],
            &RunOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err.failure, RunFailure::Approval(why) if why.contains("a second decision")),
        "{err}"
    );
    assert!(paid.lock().unwrap().is_empty());
    let result = agent
        .resume(
            state,
            &[pending[0].approve(), pending[1].reject("once is enough")],
            &RunOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        paid.lock().unwrap().len(),
        1,
        "the rejected call did not run"
    );
    assert_eq!(result.text, "paid once");
}

#[tokio::test]
async fn a_pending_call_without_a_decision_runs_nothing() {
    let (agent, paid, _) = setup(vec![ModelResponse::answer("never asked")]);
    let first = agent.run("pay bob", &RunOptions::default()).await.unwrap();
    let err = agent
        .resume(stored(&first), &[], &RunOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&err.failure, RunFailure::Approval(why) if why.contains("no decision on pending call `c2`")),
        "{err}"
    );
    assert!(paid.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_rejection_tells_the_model_why() {
    let (agent, paid, _) = setup(vec![ModelResponse::answer("Not paid.")]);
    let first = agent.run("pay bob", &RunOptions::default()).await.unwrap();
    let state = stored(&first);
    let decision = state.pending().next().unwrap().reject("over the limit");
    let result = agent
        .resume(state, &[decision], &RunOptions::default())
        .await
        .unwrap();
    assert!(paid.lock().unwrap().is_empty());
    let texts = tool_messages(&result.transcript);
    assert_eq!(
        texts[1].1,
        "The user did not allow this call: over the limit"
    );
    assert!(texts[1].2);
}

#[tokio::test]
async fn approval_for_the_session_lets_later_calls_of_the_tool_run() {
    let (agent, paid, _) = setup(vec![
        ModelResponse::calling([call("c3", "pay", json!({ "to": "amy", "amount": 7 }))]),
        ModelResponse::answer("Paid both."),
    ]);
    let first = agent
        .run("pay bob and amy", &RunOptions::default())
        .await
        .unwrap();
    let state = stored(&first);
    let decision = state.pending().next().unwrap().approve_for_session();
    let result = agent
        .resume(state, &[decision], &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.stop, StopReason::Finished);
    assert_eq!(result.text, "Paid both.");
    assert_eq!(paid.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_tool_marked_requires_approval_waits_without_any_policy() {
    let paid = Arc::new(Mutex::new(Vec::new()));
    let marked = pay(Arc::clone(&paid)).with_metadata(ToolMetadata {
        requires_approval: true,
        ..ToolMetadata::default()
    });
    let model = ScriptedModel::new().then(ModelResponse::calling([call(
        "c1",
        "pay",
        json!({ "to": "ann", "amount": 5 }),
    )]));
    let agent = Agent::builder(model).executor(executor([marked])).build();
    let result = agent.run("pay ann", &RunOptions::default()).await.unwrap();
    assert_eq!(result.stop, StopReason::Interrupted);
    assert!(paid.lock().unwrap().is_empty(), "pay did not run");
    let pending = &result.interruption.as_ref().unwrap().pending;
    assert_eq!(pending[0].call.name, "pay");
}

/// A stored state is input: a count of failed steps at its largest stops the run as too many
/// failures (the count saturates), and never overflows.
#[tokio::test]
async fn a_stored_failure_count_at_its_largest_saturates() {
    let paid = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new().then(ModelResponse::calling([call(
        "c1",
        "pay",
        json!({ "to": "bob", "amount": 500 }),
    )]));
    let agent = Agent::builder(model)
        .executor(executor([pay(Arc::clone(&paid))]))
        .require_approval_for_destructive()
        .build();
    let first = agent.run("pay bob", &RunOptions::default()).await.unwrap();
    let mut state = serde_json::to_value(stored(&first)).unwrap();
    state["failed_steps"] = json!(usize::MAX);
    let state: RunState = serde_json::from_value(state).unwrap();
    // The only call is approved with arguments its schema refuses: the whole step fails.
    let pending = state.pending().next().unwrap().clone();
    let decision = pending.approve_with(json!({ "to": "bob", "amount": 5000 }));
    let failure = agent
        .resume(state, &[decision], &RunOptions::default())
        .await
        .expect_err("one more failed step is too many");
    match failure.failure {
        RunFailure::TooManyFailedSteps { steps, .. } => assert_eq!(steps, usize::MAX),
        other => panic!("{other:?}"),
    }
    assert!(paid.lock().unwrap().is_empty());
}

/// A policy on the arguments: a small payment runs, a large one waits, and approving it runs
/// exactly what was approved.
#[tokio::test]
async fn a_policy_on_arguments_holds_only_the_calls_it_names() {
    let paid = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new()
        .then(ModelResponse::calling([
            call("c1", "pay", json!({ "to": "ann", "amount": 50 })),
            call("c2", "pay", json!({ "to": "bob", "amount": 500 })),
        ]))
        .then(ModelResponse::answer("Paid both."));
    let agent = Agent::builder(model)
        .executor(executor([pay(Arc::clone(&paid))]))
        .require_approval_when(|spec, call, _| {
            spec.name == "pay" && call.arguments["amount"].as_i64().is_none_or(|a| a > 100)
        })
        .build();
    let first = agent.run("pay them", &RunOptions::default()).await.unwrap();
    assert_eq!(first.stop, StopReason::Interrupted);
    assert_eq!(
        *paid.lock().unwrap(),
        [json!({ "to": "ann", "amount": 50 })]
    );
    let state = stored(&first);
    let pending: Vec<_> = state.pending().cloned().collect();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].call.id.as_deref(), Some("c2"));
    let result = agent
        .resume(state, &[pending[0].approve()], &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.text, "Paid both.");
    assert_eq!(
        *paid.lock().unwrap(),
        [
            json!({ "to": "ann", "amount": 50 }),
            json!({ "to": "bob", "amount": 500 })
        ]
    );
    assert_every_call_answered(&result.transcript);
}

/// A tool the client runs: declared to the executor, offered with `external_tools`, its call
/// waits for the result the application gives back.
fn locate() -> DynamicTool {
    let schema = json!({
        "type": "object",
        "properties": { "precise": { "type": "boolean" } },
        "required": ["precise"]
    });
    DynamicTool::declared(tool_core::ToolSpec {
        name: "locate".into(),
        description: "Where the user's device is".into(),
        parameters: schema,
        output_schema: None,
        metadata: ToolMetadata::default(),
    })
}

#[tokio::test]
async fn an_external_tools_call_waits_for_its_result_from_the_application() {
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([call(
                "c1",
                "locate",
                json!({ "precise": true }),
            )]))
            .then(ModelResponse::answer("You are in Lyon.")),
    );
    let agent = Agent::builder(Arc::clone(&model))
        .executor(executor([locate()]))
        .external_tools()
        .build();
    let (state, pending) = interrupted(&agent, "Where am I?").await;
    assert!(pending.external);
    let decision = pending.answer(ToolOutput::text("45.76 N, 4.84 E (Lyon)"));
    let result = agent
        .resume(state, &[decision], &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.text, "You are in Lyon.");
    let texts = tool_messages(&result.transcript);
    assert_eq!(texts[0].1, "45.76 N, 4.84 E (Lyon)");
    assert_every_call_answered(&result.transcript);
}

#[tokio::test]
async fn an_external_call_with_invalid_arguments_goes_back_to_the_model_without_stopping() {
    let model = ScriptedModel::new()
        .then(ModelResponse::calling([call(
            "c1",
            "locate",
            json!({ "precise": "yes" }),
        )]))
        .then(ModelResponse::answer("I could not locate you."));
    let agent = Agent::builder(model)
        .executor(executor([locate()]))
        .external_tools()
        .build();
    let result = agent
        .run("Where am I?", &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.stop, StopReason::Finished);
    let texts = tool_messages(&result.transcript);
    assert!(texts[0].1.contains("/precise"), "{}", texts[0].1);
}

#[tokio::test]
async fn without_external_tools_a_declared_tool_is_not_offered() {
    let model = Arc::new(ScriptedModel::new().then(ModelResponse::answer("Hello.")));
    let agent = Agent::builder(Arc::clone(&model))
        .executor(executor([locate()]))
        .build();
    agent
        .run("Where am I?", &RunOptions::default())
        .await
        .unwrap();
    assert!(model.requests()[0].tools.is_empty());
}

/// The policy on arguments is asked for every call: approving one payment for the session
/// does not let a larger one through, and arguments sent as JSON text are read as such.
#[tokio::test]
async fn a_policy_on_arguments_is_asked_again_after_an_approval_for_the_session() {
    let paid = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new()
        .then(ModelResponse::calling([call(
            "c1",
            "pay",
            json!({ "to": "ann", "amount": 500 }),
        )]))
        .then(ModelResponse::calling([call(
            "c2",
            "pay",
            json!(r#"{"to": "bob", "amount": 600}"#),
        )]));
    let agent = Agent::builder(model)
        .executor(executor([pay(Arc::clone(&paid))]))
        .require_approval_when(|_, call, _| {
            call.arguments["amount"].as_i64().is_some_and(|a| a > 100)
        })
        .build();
    let (state, pending) = interrupted(&agent, "pay them").await;
    let second = agent
        .resume(
            state,
            &[pending.approve_for_session()],
            &RunOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        second.stop,
        StopReason::Interrupted,
        "the larger payment waits"
    );
    let waiting = &second.interruption.as_ref().unwrap().pending;
    assert_eq!(waiting[0].call.id.as_deref(), Some("c2"));
    assert_eq!(
        *paid.lock().unwrap(),
        [json!({ "to": "ann", "amount": 500 })]
    );
}

#[tokio::test]
async fn an_external_call_takes_its_result_or_a_refusal_not_an_approval() {
    let model = ScriptedModel::new().then(ModelResponse::calling([call(
        "c1",
        "locate",
        json!({ "precise": true }),
    )]));
    let agent = Agent::builder(model)
        .executor(executor([locate()]))
        .external_tools()
        .build();
    let (state, pending) = interrupted(&agent, "Where am I?").await;
    let failure = agent
        .resume(state, &[pending.approve()], &RunOptions::default())
        .await
        .expect_err("an external tool cannot be run here");
    match failure.failure {
        RunFailure::Approval(why) => assert!(why.contains("answer(output)"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_external_answer_off_the_tools_output_schema_is_refused_and_can_be_given_again() {
    let mut spec = locate().spec().clone();
    spec.output_schema = Some(json!({
        "type": "object",
        "properties": { "lat": { "type": "number" }, "lon": { "type": "number" } },
        "required": ["lat", "lon"]
    }));
    let model = Arc::new(
        ScriptedModel::new()
            .then(ModelResponse::calling([call(
                "c1",
                "locate",
                json!({ "precise": true }),
            )]))
            .then(ModelResponse::answer("You are in Lyon.")),
    );
    let agent = Agent::builder(Arc::clone(&model))
        .executor(executor([DynamicTool::declared(spec)]))
        .external_tools()
        .build();
    let (state, pending) = interrupted(&agent, "Where am I?").await;

    // Off the schema: refused before anything runs, the state kept for another answer.
    let wrong = pending.answer(ToolOutput::json(json!({ "lat": "north" })));
    let failure = agent
        .resume(state.clone(), &[wrong], &RunOptions::default())
        .await
        .expect_err("an answer off the output schema is refused");
    match failure.failure {
        RunFailure::Approval(why) => {
            assert!(why.contains("`c1` to `locate`"), "{why}");
            assert!(why.contains("/lat") && why.contains("\"lon\""), "{why}");
        }
        other => panic!("{other:?}"),
    }

    // The same state, answered well: the run goes on.
    let right = pending.answer(ToolOutput::json(json!({ "lat": 45.76, "lon": 4.84 })));
    let result = agent
        .resume(state, &[right], &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.text, "You are in Lyon.");
    assert_every_call_answered(&result.transcript);
}

/// The step interrupted for approval is judged whole when resumed: a stop tool that ran before
/// the interruption ends the run, without another request.
#[tokio::test]
async fn a_stop_tool_that_ran_beside_a_waiting_call_ends_the_resumed_run() {
    let (agent, paid, _) = setup(Vec::new());
    let options = RunOptions::default().stop_at_tool("add");
    let first = agent.run("pay bob", &options).await.unwrap();
    let state = stored(&first);
    let decision = state.pending().next().unwrap().approve();
    let result = agent.resume(state, &[decision], &options).await.unwrap();
    assert_eq!(result.stop, StopReason::ToolCalled { name: "add".into() });
    assert_eq!(result.text, "3");
    assert_eq!(paid.lock().unwrap().len(), 1, "the approved call ran");
    assert_every_call_answered(&result.transcript);
}

/// The resumed step holds every call of the answer, in call order, under the interrupted
/// step's number: a predicate sees it whole, and the resume is not another step.
#[tokio::test]
async fn the_resumed_step_is_the_interrupted_one_whole() {
    let (agent, _, _) = setup(Vec::new());
    let options = RunOptions::default().stop_when(|step| step.calls.len() == 2);
    let first = agent.run("pay bob", &options).await.unwrap();
    assert_eq!(first.steps.len(), 1);
    let state = stored(&first);
    let decision = state.pending().next().unwrap().approve();
    let result = agent.resume(state, &[decision], &options).await.unwrap();
    assert_eq!(result.stop, StopReason::Predicate);
    assert_eq!(result.steps.len(), 1);
    let step = &result.steps[0];
    assert_eq!(step.index, 0);
    let names: Vec<&str> = step.calls.iter().map(|r| r.call.name.as_str()).collect();
    assert_eq!(names, ["add", "pay"]);
    assert_eq!(step.calls[0].result.as_ref().unwrap().to_text(), "3");
    assert_eq!(step.calls[1].result.as_ref().unwrap().to_text(), "paid 500");
}

/// Two steps allowed: the interrupted one, resumed, and the answer after it.
#[tokio::test]
async fn a_resume_does_not_count_as_a_step() {
    let (agent, _, _) = setup(vec![ModelResponse::answer("Paid.")]);
    let options = RunOptions::default().max_steps(2);
    let first = agent.run("pay bob", &options).await.unwrap();
    let state = stored(&first);
    let decision = state.pending().next().unwrap().approve();
    let result = agent.resume(state, &[decision], &options).await.unwrap();
    assert_eq!(result.stop, StopReason::Finished);
    assert_eq!(result.text, "Paid.");
    let indices: Vec<usize> = result.steps.iter().map(|s| s.index).collect();
    assert_eq!(indices, [0, 1]);
}

/// A person's refusal is not the model's failure: a step whose only call was rejected does
/// not count toward `max_failed_steps`.
#[tokio::test]
async fn a_rejected_call_is_not_a_failed_step() {
    let paid = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new()
        .then(ModelResponse::calling([call(
            "c1",
            "pay",
            json!({ "to": "bob", "amount": 500 }),
        )]))
        .then(ModelResponse::answer("Not paid, as you wished."));
    let agent = Agent::builder(model)
        .executor(executor([pay(Arc::clone(&paid))]))
        .require_approval_for_destructive()
        .build();
    let options = RunOptions::default().max_failed_steps(1);
    let first = agent.run("pay bob", &options).await.unwrap();
    let state = stored(&first);
    let decision = state.pending().next().unwrap().reject("no");
    let result = agent.resume(state, &[decision], &options).await.unwrap();
    assert_eq!(result.stop, StopReason::Finished);
    assert_eq!(result.text, "Not paid, as you wished.");
    assert!(paid.lock().unwrap().is_empty());
}

/// An agent whose model calls `stop`, which cancels the run, and `pay`, which waits for
/// approval; and the options with that cancellation.
fn stop_then_pay(paid: &Arc<Mutex<Vec<Value>>>) -> (Agent, RunOptions) {
    let token = tool_runtime::CancellationToken::new();
    let stopper = {
        let token = token.clone();
        DynamicTool::new(
            "stop",
            "Stops everything",
            json!({ "type": "object" }),
            move |_, _| {
                token.cancel();
                async { Ok(ToolOutput::text("stopped")) }
            },
        )
    };
    let model = ScriptedModel::new().then(ModelResponse::calling([
        call("c1", "stop", json!({})),
        call("c2", "pay", json!({ "to": "bob", "amount": 5 })),
    ]));
    let agent = Agent::builder(model)
        .executor(executor([stopper, pay(Arc::clone(paid))]))
        .require_approval_for_destructive()
        .build();
    (agent, RunOptions::default().cancellation(token))
}

/// The calls' starts and results, in the order the events gave them.
fn call_order(events: &[tool_agent::RunEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            tool_agent::RunEvent::ToolCallStarted { call, .. } => {
                Some(format!("start {}", call.name))
            }
            tool_agent::RunEvent::ToolResult { record, .. } => {
                Some(format!("result {}", record.call.name))
            }
            _ => None,
        })
        .collect()
}

/// Cancelled while a call waits: the run ends as cancelled, not interrupted, and every call
/// of the answer has its result in the transcript.
#[tokio::test]
async fn cancellation_while_a_call_waits_ends_the_run_as_cancelled() {
    let paid = Arc::new(Mutex::new(Vec::new()));
    let (agent, options) = stop_then_pay(&paid);
    let error = agent.run("stop and pay", &options).await.unwrap_err();
    assert!(
        matches!(error.failure, RunFailure::Cancelled),
        "{:?}",
        error.failure
    );
    assert!(error.partial.interruption.is_none());
    assert!(paid.lock().unwrap().is_empty());
    assert_every_call_answered(&error.partial.transcript);
    let texts = tool_messages(&error.partial.transcript);
    assert_eq!(texts.len(), 2);
    assert_eq!(texts[1].1, "The call to `pay` was cancelled.");
    assert!(texts[1].2, "the waiting call is answered as cancelled");
    // Streamed, the waiting call is announced with its result, once cancelled.
    let (agent, options) = stop_then_pay(&paid);
    let events: Vec<tool_agent::RunEvent> =
        futures_util::StreamExt::collect(agent.run_stream("stop and pay", &options)).await;
    assert_eq!(
        call_order(&events),
        ["start stop", "start pay", "result stop", "result pay"]
    );
    // The step's records say the same as the transcript, in call order.
    let step = error.partial.steps.last().expect("the step");
    let names: Vec<&str> = step.calls.iter().map(|r| r.call.name.as_str()).collect();
    assert_eq!(names, ["stop", "pay"]);
    assert!(
        matches!(
            step.calls[1].result,
            Err(tool_core::ToolError::Cancelled { .. })
        ),
        "{:?}",
        step.calls[1].result
    );
}

/// Streamed, a call that waits for approval is not announced as started (no result would
/// follow it): its approval is asked for; `resume_stream` goes on streaming from there.
#[tokio::test]
async fn a_waiting_call_is_announced_when_it_runs_and_resuming_streams() {
    use futures_util::StreamExt;
    use tool_agent::RunEvent;
    let (agent, _, _) = setup(vec![ModelResponse::answer("Paid.")]);
    let started = |events: &[RunEvent]| -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match e {
                RunEvent::ToolCallStarted { call, .. } => Some(call.name.clone()),
                _ => None,
            })
            .collect()
    };
    let options = RunOptions::default();
    let events: Vec<RunEvent> = agent.run_stream("pay bob", &options).collect().await;
    assert_eq!(started(&events), ["add"], "pay waits: not started");
    let Some(RunEvent::Finished(finished)) = events.last() else {
        panic!("the run ends with Finished");
    };
    let first = finished.as_ref().as_ref().expect("the run is interrupted");
    assert_eq!(first.stop, StopReason::Interrupted);
    let needed = events
        .iter()
        .filter(|e| matches!(e, RunEvent::ApprovalNeeded(p) if p.call.name == "pay"))
        .count();
    assert_eq!(needed, 1, "its approval is asked for instead");

    // Resumed streaming: the decided call starts, its result follows, then the answer.
    let state = stored(first);
    let pending = state.pending().next().unwrap().clone();
    let decisions = [pending.approve()];
    let resumed: Vec<RunEvent> = agent
        .resume_stream(state, &decisions, &options)
        .collect()
        .await;
    assert_eq!(started(&resumed), ["pay"]);
    let results: Vec<&str> = resumed
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolResult { record, .. } => Some(record.call.name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        ["pay"],
        "add's result was given before the interruption"
    );
    let deltas: String = resumed
        .iter()
        .filter_map(|e| match e {
            RunEvent::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, "Paid.");
    let Some(RunEvent::Finished(finished)) = resumed.last() else {
        panic!("the resumed run ends with Finished");
    };
    let done = finished.as_ref().as_ref().expect("the resumed run answers");
    assert_eq!(done.text, "Paid.");
}

/// A hook that ends the run after a call that ran before the interruption: the stored state
/// keeps it, and the resumed step ends the run once the approved call has run.
#[tokio::test]
async fn a_hooks_termination_before_the_interruption_ends_the_resumed_run() {
    struct EndAfterAdd;
    impl tool_agent::RunHooks for EndAfterAdd {
        fn after_tool(
            &self,
            call: &tool_core::ToolCall,
            _: &mut Result<ToolOutput, tool_core::ToolError>,
        ) -> tool_agent::AfterTool {
            if call.name == "add" {
                tool_agent::AfterTool::Terminate("added enough".into())
            } else {
                tool_agent::AfterTool::Continue
            }
        }
    }
    let paid = Arc::new(Mutex::new(Vec::new()));
    let adds = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let model = ScriptedModel::new().then(ModelResponse::calling([
        call("c1", "add", json!({ "a": 1, "b": 2 })),
        call("c2", "pay", json!({ "to": "bob", "amount": 500 })),
    ]));
    let agent = Agent::builder(model)
        .executor(executor([add(adds), pay(Arc::clone(&paid))]))
        .require_approval_for_destructive()
        .hooks(EndAfterAdd)
        .build();
    let first = agent.run("pay bob", &RunOptions::default()).await.unwrap();
    assert_eq!(first.stop, StopReason::Interrupted);
    let state = stored(&first);
    let decision = state.pending().next().unwrap().approve();
    let result = agent
        .resume(state, &[decision], &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(
        result.stop,
        StopReason::Terminated {
            reason: "added enough".into()
        }
    );
    assert_eq!(paid.lock().unwrap().len(), 1, "the approved call ran first");
    assert_every_call_answered(&result.transcript);
}

/// The resumed step is the interrupted one: its tool choice, usage and finish reason are the
/// answer's, through the stored state.
#[tokio::test]
async fn the_resumed_step_keeps_its_answers_usage_and_finish_reason() {
    let paid = Arc::new(Mutex::new(Vec::new()));
    let mut answer =
        ModelResponse::calling([call("c1", "pay", json!({ "to": "bob", "amount": 5 }))])
            .with_usage(tool_agent::Usage {
                input_tokens: 120,
                output_tokens: 7,
                ..Default::default()
            });
    answer.finish_reason = Some("tool_use".into());
    let model = ScriptedModel::new().then(answer);
    let agent = Agent::builder(model)
        .executor(executor([pay(Arc::clone(&paid))]))
        .require_approval_for_destructive()
        .build();
    let options = RunOptions::default().stop_when(|_| true);
    let first = agent.run("pay bob", &options).await.unwrap();
    let state = stored(&first);
    let decision = state.pending().next().unwrap().approve();
    let result = agent.resume(state, &[decision], &options).await.unwrap();
    let step = &result.steps[0];
    assert_eq!(step.usage.input_tokens, 120);
    assert_eq!(step.usage.output_tokens, 7);
    assert_eq!(step.finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(step.tool_choice, tool_agent::ToolChoice::Auto);
}

#[tokio::test]
async fn the_resumed_results_usage_is_the_whole_runs() {
    let used = |input_tokens| tool_agent::Usage {
        requests: 1,
        input_tokens,
        ..Default::default()
    };
    let model = ScriptedModel::new()
        .then(
            ModelResponse::calling([call("c1", "pay", json!({ "to": "bob", "amount": 5 }))])
                .with_usage(used(120)),
        )
        .then(ModelResponse::answer("Paid.").with_usage(used(10)));
    let agent = Agent::builder(model)
        .executor(executor([pay(Arc::new(Mutex::new(Vec::new())))]))
        .require_approval_for_destructive()
        .build();
    let options = RunOptions::default();
    let first = agent.run("pay bob", &options).await.unwrap();
    assert_eq!(first.usage.input_tokens, 120);
    let state = stored(&first);
    // A decision that fits no call: the refusal's partial result has the usage so far.
    let mut wrong = state.pending().next().unwrap().reject("no");
    wrong.call_id = "c9".into();
    let refused = agent.resume(state, &[wrong], &options).await.unwrap_err();
    assert_eq!(refused.partial.usage.input_tokens, 120);
    let state = stored(&first);
    let decision = state.pending().next().unwrap().approve();
    let result = agent.resume(state, &[decision], &options).await.unwrap();
    assert_eq!(result.text, "Paid.");
    assert_eq!(result.usage.input_tokens, 130);
    assert_eq!(result.usage.requests, 2);
}

#[tokio::test]
async fn the_resumed_step_counts_the_time_of_the_calls_that_ran_before_it_waited() {
    let schema = json!({ "type": "object", "properties": {} });
    let slow = DynamicTool::new("slow", "Takes a while", schema, |_, _| async {
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        Ok(ToolOutput::text("done"))
    });
    let model = ScriptedModel::new()
        .then(ModelResponse::calling([
            call("c1", "slow", json!({})),
            call("c2", "pay", json!({ "to": "bob", "amount": 5 })),
        ]))
        .then(ModelResponse::answer("Done."));
    let agent = Agent::builder(model)
        .executor(executor([slow, pay(Arc::new(Mutex::new(Vec::new())))]))
        .require_approval_for_destructive()
        .build();
    let options = RunOptions::default();
    let first = agent.run("go", &options).await.unwrap();
    let at_least = std::time::Duration::from_millis(30);
    assert!(
        first.steps[0].tools_time >= at_least,
        "{:?}",
        first.steps[0]
    );
    let state = stored(&first);
    let decision = state.pending().next().unwrap().approve();
    let result = agent.resume(state, &[decision], &options).await.unwrap();
    assert!(
        result.steps[0].tools_time >= at_least,
        "{:?}",
        result.steps[0]
    );
}

/// A `search` that records what it found as a reference and answers with its number.
fn search() -> DynamicTool {
    let schema = json!({ "type": "object", "properties": { "q": { "type": "string" } } });
    DynamicTool::new("search", "Finds a report", schema, |args, ctx| async move {
        let scope = tool_agent::InvocationScope::of(&ctx).expect("the run's scope");
        let n = scope.add_reference(tool_agent::citations::Reference {
            title: format!("{} report", args["q"].as_str().unwrap_or_default()),
            link: None,
        });
        Ok(ToolOutput::text(format!("[doc:{n}]")))
    })
}

#[tokio::test]
async fn references_keep_their_numbers_across_an_interruption() {
    let model = ScriptedModel::new()
        .then(ModelResponse::calling([
            call("c1", "search", json!({ "q": "Q3" })),
            call("c2", "pay", json!({ "to": "bob", "amount": 5 })),
        ]))
        .then(ModelResponse::calling([call(
            "c3",
            "search",
            json!({ "q": "Q4" }),
        )]))
        .then(ModelResponse::answer("Q3 grew [doc:1]; Q4 fell [doc:2]."));
    let paid = Arc::new(Mutex::new(Vec::new()));
    let agent = Agent::builder(model)
        .executor(executor([search(), pay(paid)]))
        .require_approval_for_destructive()
        .build();
    let (state, pending) = interrupted(&agent, "compare the quarters").await;
    let resumed = agent
        .resume(state, &[pending.approve()], &RunOptions::default())
        .await
        .unwrap();
    let titles: Vec<(usize, &str)> = resumed
        .references
        .iter()
        .map(|(n, r)| (*n, r.title.as_str()))
        .collect();
    assert_eq!(titles, [(1, "Q3 report"), (2, "Q4 report")]);
    let cited = tool_agent::citations::finalize(&resumed.text, &resumed.references);
    assert_eq!(cited.text, "Q3 grew [1]; Q4 fell [2].");
    let titles: Vec<&str> = cited.references.iter().map(|r| r.title.as_str()).collect();
    assert_eq!(titles, ["Q3 report", "Q4 report"]);
}

/// Runs a model that sends `pay`'s arguments as JSON text to its interruption, resumes it
/// with `decide`'s decision, and returns the text of `pay`'s result.
async fn paid_with_text_arguments(decide: fn(&PendingApproval) -> tool_agent::Decision) -> String {
    let model = ScriptedModel::new()
        .then(ModelResponse::calling([call(
            "c1",
            "pay",
            json!(r#"{"to": "bob", "amount": 5}"#),
        )]))
        .then(ModelResponse::answer("Paid."));
    let agent = Agent::builder(model)
        .executor(executor([pay(Arc::default())]))
        .require_approval_for_destructive()
        .build();
    let (state, pending) = interrupted(&agent, "pay bob").await;
    let result = agent
        .resume(state, &[decide(&pending)], &RunOptions::default())
        .await
        .unwrap();
    tool_messages(&result.transcript)[0].1.clone()
}

/// Arguments the model sent as JSON text, approved as the same object or as that very text:
/// nothing was changed, and the model is told nothing.
#[tokio::test]
async fn arguments_sent_as_text_and_approved_unchanged_are_not_called_changed() {
    let as_object = |p: &PendingApproval| p.approve_with(json!({ "to": "bob", "amount": 5 }));
    assert_eq!(paid_with_text_arguments(as_object).await, "paid 5");
    let as_sent = |p: &PendingApproval| p.approve_with(p.call.arguments.clone());
    assert_eq!(paid_with_text_arguments(as_sent).await, "paid 5");
}

/// Resumed streaming, a rejected call is announced and answered like any other.
#[tokio::test]
async fn a_rejected_call_is_announced_then_answered_when_resumed_streaming() {
    use futures_util::StreamExt;
    use tool_agent::RunEvent;
    let (agent, paid, _) = setup(vec![ModelResponse::answer("Not paid.")]);
    let (state, pending) = interrupted(&agent, "pay bob").await;
    let decisions = [pending.reject("not today")];
    let options = RunOptions::default();
    let events: Vec<RunEvent> = agent
        .resume_stream(state, &decisions, &options)
        .collect()
        .await;
    assert_eq!(call_order(&events), ["start pay", "result pay"]);
    assert!(paid.lock().unwrap().is_empty());
}

/// `pay` as an MCP server would hand it over: imported, with `hints` as the server said.
fn imported_pay(paid: Arc<Mutex<Vec<Value>>>, hints: SafetyHints) -> DynamicTool {
    pay(paid).with_metadata(ToolMetadata {
        hints,
        source: Some(tool_core::ToolSource::Mcp {
            server: "files".into(),
        }),
        ..ToolMetadata::default()
    })
}

async fn waits(agent_of: impl Fn(DynamicTool) -> Agent, tool: DynamicTool) -> bool {
    let agent = agent_of(tool);
    let result = agent.run("pay ann", &RunOptions::default()).await.unwrap();
    result.stop == StopReason::Interrupted
}

/// MCP says a missing `destructiveHint` means destructive, and that a server's annotations are
/// untrusted: an imported tool without hints waits under the destructive policy, and one that
/// says `destructiveHint: false` waits once every imported tool is held. Policies add up: a
/// later one does not let through what an earlier one held.
#[tokio::test]
async fn an_imported_tools_missing_or_hostile_hints_never_loosen_approval() {
    let model = || {
        ScriptedModel::new()
            .then(ModelResponse::calling([call(
                "c1",
                "pay",
                json!({ "to": "ann", "amount": 5 }),
            )]))
            .then(ModelResponse::answer("done"))
    };
    let paid = Arc::new(Mutex::new(Vec::new()));
    let destructive_policy = |tool| {
        Agent::builder(model())
            .executor(executor([tool]))
            .require_approval_for_destructive()
            .build()
    };
    let silent = imported_pay(Arc::clone(&paid), SafetyHints::default());
    assert!(
        waits(destructive_policy, silent).await,
        "no hint: destructive"
    );
    let read_only = SafetyHints {
        read_only: Some(true),
        ..SafetyHints::default()
    };
    let claims_read_only = imported_pay(Arc::clone(&paid), read_only);
    assert!(!waits(destructive_policy, claims_read_only.clone()).await);
    let claims_harmless = SafetyHints {
        destructive: Some(false),
        ..SafetyHints::default()
    };
    let harmless = imported_pay(Arc::clone(&paid), claims_harmless);
    let every_import = |tool| {
        Agent::builder(model())
            .executor(executor([tool]))
            .require_approval_for_imported()
            .require_approval(|spec| spec.name == "nothing")
            .build()
    };
    assert!(waits(every_import, harmless).await);
    assert!(waits(every_import, claims_read_only).await);
    // A tool defined in the application, without hints, is not held by the destructive policy.
    let local = pay(Arc::clone(&paid)).with_metadata(ToolMetadata::default());
    assert!(!waits(destructive_policy, local).await);
}

/// A stored state is input. Without a key, it is held to what the agent could have done: an
/// edit that offers a tool the agent does not, or changes a pending call's arguments without
/// its hash, is refused. With a state key, any edit is refused (approving a tool for the rest
/// of the run, say), and nothing runs.
#[tokio::test]
async fn an_edited_state_is_refused_and_nothing_runs() {
    let edit = |state: &RunState, change: &dyn Fn(&mut Value)| -> RunState {
        let mut value = serde_json::to_value(state).unwrap();
        change(&mut value);
        serde_json::from_value(value).unwrap()
    };
    let refused = |error: tool_agent::RunError, says: &str| match &error.failure {
        RunFailure::Approval(why) => assert!(
            why.contains(says) && why.contains("changed since it was saved"),
            "{why}"
        ),
        other => panic!("unexpected: {other:?}"),
    };
    let (agent, paid, _) = setup(vec![ModelResponse::answer("done")]);
    let (state, pending) = interrupted(&agent, "pay bob").await;
    let offering = edit(&state, &|v| {
        v["offered"].as_array_mut().unwrap().push(json!("rm_rf"))
    });
    let rewritten = edit(&state, &|v| {
        v["pending"][0][1]["call"]["arguments"]["amount"] = json!(999);
    });
    for (edited, says) in [
        (offering, "`rm_rf` was offered"),
        (rewritten, "do not match their hash"),
    ] {
        let error = agent
            .resume(edited, &[pending.approve()], &RunOptions::default())
            .await
            .unwrap_err();
        refused(error, says);
    }
    assert!(paid.lock().unwrap().is_empty(), "nothing ran");

    let sealed = |key: &str| {
        let model = ScriptedModel::new()
            .then(ModelResponse::calling([call(
                "c2",
                "pay",
                json!({ "to": "bob", "amount": 500 }),
            )]))
            .then(ModelResponse::answer("done"));
        Agent::builder(model)
            .executor(executor([pay(Arc::clone(&paid))]))
            .require_approval_for_destructive()
            .state_key(key)
            .build()
    };
    let agent = sealed("a key of at least 32 random bytes!");
    let (state, pending) = interrupted(&agent, "pay bob").await;
    assert!(!format!("{agent:?}").contains("random bytes"));
    let approving = edit(&state, &|v| v["approved_tools"] = json!(["pay"]));
    let error = agent
        .resume(approving, &[pending.approve()], &RunOptions::default())
        .await
        .unwrap_err();
    refused(error, "its seal");
    let other_key = sealed("another key, of another deployment");
    let error = other_key
        .resume(state.clone(), &[pending.approve()], &RunOptions::default())
        .await
        .unwrap_err();
    refused(error, "its seal");
    assert!(paid.lock().unwrap().is_empty(), "nothing ran");
    // The state as saved (through JSON) resumes.
    let result = agent
        .resume(state, &[pending.approve()], &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.text, "done");
    assert_eq!(paid.lock().unwrap().len(), 1);
}

#[cfg(feature = "retrieval")]
#[tokio::test]
async fn a_run_with_tool_search_resumes_with_the_same_deferred_tools_and_its_search() {
    use tool_agent::{ToolSearch, TOOL_SEARCH};
    use tool_core::provider::Format;

    let paid = Arc::new(Mutex::new(Vec::new()));
    let payment = pay(Arc::clone(&paid)).with_metadata(ToolMetadata {
        selectable: true,
        keywords: vec!["money".into(), "transfer".into()],
        hints: SafetyHints {
            destructive: Some(true),
            ..SafetyHints::default()
        },
        ..ToolMetadata::default()
    });
    let exec = executor([payment]);
    let retriever = Arc::new(tool_retrieval::Retriever::lexical(exec.tools()));
    let model = Arc::new(
        ScriptedModel::new()
            .speaking(Format::Anthropic)
            .then(ModelResponse::calling([call(
                "c1",
                TOOL_SEARCH,
                json!({ "query": "pay money" }),
            )]))
            .then(ModelResponse::calling([call(
                "c2",
                "pay",
                json!({ "to": "bob", "amount": 5 }),
            )]))
            .then(ModelResponse::answer("Paid.")),
    );
    let agent = Agent::builder(Arc::clone(&model))
        .executor(exec)
        .tool_search(ToolSearch::local(retriever))
        .require_approval_for_destructive()
        .build();
    let (state, pending) = interrupted(&agent, "pay bob 5").await;
    assert_eq!(pending.call.name, "pay");
    let result = agent
        .resume(state, &[pending.approve()], &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(result.text, "Paid.");
    assert_eq!(paid.lock().unwrap().len(), 1);
    // The resumed request declares what the first did: the deferred tool and the search.
    let requests = model.requests();
    let first = requests[0].tools.tools_json();
    assert!(first.contains("\"defer_loading\":true"), "{first}");
    assert!(requests.iter().all(|r| r.tools.tools_json() == first));
}
