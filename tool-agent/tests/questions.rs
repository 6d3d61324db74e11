//! A tool's question mid-call (`ctx.elicit`) in the agent loop: the run stops with the call
//! waiting for the answer, the state survives serialization, and each reply runs the call
//! again with the answers so far, until it ends.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tool_agent::{
    Agent, ModelResponse, PendingApproval, RunFailure, RunOptions, RunResult, RunState,
    ScriptedModel, StopReason,
};
use tool_core::{SafetyHints, ToolMetadata, ToolOutput};
use tool_runtime::{DynamicTool, Elicited};
use tool_test_support::*;

/// What `invoice` did: how many times it got past its first question, and what it sent.
#[derive(Default)]
struct Seen {
    past_first: AtomicUsize,
    sent: Mutex<Vec<Value>>,
}

fn email_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "email": { "type": "string", "format": "email" } },
        "required": ["email"]
    })
}

/// A tool that asks for an email, then whether to send now, and only then sends.
fn invoice(seen: Arc<Seen>) -> DynamicTool {
    let schema = json!({
        "type": "object",
        "properties": { "amount": { "type": "integer" } },
        "required": ["amount"]
    });
    DynamicTool::new("invoice", "Sends an invoice", schema, move |args, ctx| {
        let seen = Arc::clone(&seen);
        async move {
            let Elicited::Accepted(to) = ctx.elicit("Which email?", email_schema()).await? else {
                return Ok(ToolOutput::text("not sent: no email"));
            };
            seen.past_first.fetch_add(1, Ordering::SeqCst);
            let confirm =
                json!({ "type": "object", "properties": { "now": { "type": "boolean" } } });
            let now = ctx.elicit("Send it now?", confirm).await?;
            if now != Elicited::Accepted(json!({ "now": true })) {
                return Ok(ToolOutput::text("kept as a draft"));
            }
            let sent = json!({ "to": to["email"], "amount": args["amount"] });
            seen.sent.lock().unwrap().push(sent);
            Ok(ToolOutput::text(format!("sent to {}", to["email"])))
        }
    })
}

fn agent(seen: &Arc<Seen>, adds: &Arc<AtomicUsize>, then: &[&str]) -> Agent {
    let mut model = ScriptedModel::new().then(ModelResponse::calling([
        call("c1", "invoice", json!({ "amount": 40 })),
        call("c2", "add", json!({ "a": 1, "b": 2 })),
    ]));
    for text in then {
        model = model.then(ModelResponse::answer(*text));
    }
    Agent::builder(model)
        .executor(executor([invoice(Arc::clone(seen)), add(Arc::clone(adds))]))
        .state_key(b"a key of the application, kept out of the state")
        .build()
}

/// The state through JSON, as it would wait in a database.
fn stored(result: &RunResult) -> (RunState, PendingApproval) {
    assert_eq!(result.stop, StopReason::Interrupted);
    let state = &result.interruption.as_ref().expect("interrupted").state;
    let state: RunState = serde_json::from_str(&serde_json::to_string(state).unwrap()).unwrap();
    let pending = state.pending().next().expect("a pending call").clone();
    (state, pending)
}

#[tokio::test]
async fn a_question_stops_the_run_and_each_reply_runs_the_call_again() {
    let seen = Arc::new(Seen::default());
    let adds = Arc::new(AtomicUsize::new(0));
    let agent = agent(&seen, &adds, &["Invoice sent."]);
    let first = agent
        .run("invoice 40", &RunOptions::default())
        .await
        .unwrap();
    // The other call of the answer ran; the invoice waits at its first question.
    assert_eq!(adds.load(Ordering::SeqCst), 1);
    let (state, pending) = stored(&first);
    let question = pending.question.as_ref().expect("a question");
    assert_eq!(question.question.message, "Which email?");
    assert_eq!(question.question.schema, email_schema());
    assert!(question.answered.is_empty());
    assert_eq!(seen.past_first.load(Ordering::SeqCst), 0);

    // A question takes a reply or a refusal, and the reply must fit its schema.
    let err = (agent.resume(state.clone(), &[pending.approve()], &RunOptions::default()))
        .await
        .unwrap_err();
    assert!(
        matches!(&err.failure, RunFailure::Approval(why) if why.contains("reply(answer)")),
        "{err}"
    );
    let off_schema = pending.reply(Elicited::Accepted(json!({ "email": "not an email" })));
    let err = (agent.resume(state.clone(), &[off_schema], &RunOptions::default()))
        .await
        .unwrap_err();
    assert!(
        matches!(&err.failure, RunFailure::Approval(why) if why.contains("does not match the schema")),
        "{err}"
    );
    assert_eq!(seen.past_first.load(Ordering::SeqCst), 0, "nothing ran");

    // The email: the call runs again and stops at its second question.
    let email = pending.reply(Elicited::Accepted(json!({ "email": "ann@example.com" })));
    let second = agent
        .resume(state, &[email], &RunOptions::default())
        .await
        .unwrap();
    let (state, pending) = stored(&second);
    let question = pending.question.as_ref().expect("a second question");
    assert_eq!(question.question.message, "Send it now?");
    assert_eq!(question.answered.len(), 1);
    assert_eq!(seen.past_first.load(Ordering::SeqCst), 1);
    assert!(seen.sent.lock().unwrap().is_empty());

    // Yes: the call ends, the run goes on, and every call was answered once.
    let yes = pending.reply(Elicited::Accepted(json!({ "now": true })));
    let done = agent
        .resume(state, &[yes], &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(done.stop, StopReason::Finished);
    assert_eq!(done.text, "Invoice sent.");
    assert_eq!(
        *seen.sent.lock().unwrap(),
        [json!({ "to": "ann@example.com", "amount": 40 })]
    );
    assert_eq!(adds.load(Ordering::SeqCst), 1, "the other call ran once");
    assert_every_call_answered(&done.transcript);
    let results = tool_messages(&done.transcript);
    let texts: Vec<&str> = results.iter().map(|(_, text, _)| text.as_str()).collect();
    assert_eq!(texts, ["sent to \"ann@example.com\"", "3"]);
    // The interrupted step is finished whole, once.
    assert_eq!(done.steps[0].calls.len(), 2);
}

#[tokio::test]
async fn a_declined_question_or_a_refusal_sends_nothing() {
    let seen = Arc::new(Seen::default());
    let adds = Arc::new(AtomicUsize::new(0));
    let agent = agent(&seen, &adds, &["Not sent.", "Not sent."]);
    let first = agent
        .run("invoice 40", &RunOptions::default())
        .await
        .unwrap();
    let (state, pending) = stored(&first);
    let declined = agent
        .resume(
            state.clone(),
            &[pending.reply(Elicited::Declined)],
            &RunOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(declined.stop, StopReason::Finished);
    assert_eq!(
        tool_messages(&declined.transcript)[0].1,
        "not sent: no email"
    );

    let refused = agent
        .resume(
            state,
            &[pending.reject("no invoices today")],
            &RunOptions::default(),
        )
        .await
        .unwrap();
    let text = &tool_messages(&refused.transcript)[0].1;
    assert!(text.contains("no invoices today"), "{text}");
    assert!(seen.sent.lock().unwrap().is_empty());
    assert_eq!(seen.past_first.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_answers_a_state_carries_are_under_its_seal() {
    let seen = Arc::new(Seen::default());
    let adds = Arc::new(AtomicUsize::new(0));
    let agent = agent(&seen, &adds, &["never asked"]);
    let first = agent
        .run("invoice 40", &RunOptions::default())
        .await
        .unwrap();
    let (state, pending) = stored(&first);
    let email = pending.reply(Elicited::Accepted(json!({ "email": "ann@example.com" })));
    let second = agent
        .resume(state, &[email], &RunOptions::default())
        .await
        .unwrap();
    let (state, pending) = stored(&second);
    // The earlier answer, changed where the state waited: refused.
    let mut text = serde_json::to_value(&state).unwrap();
    let answered = &mut text["pending"][0][1]["question"]["answered"][0]["answer"]["accepted"];
    assert_eq!(answered["email"], "ann@example.com");
    answered["email"] = json!("mallory@example.com");
    let forged: RunState = serde_json::from_value(text).unwrap();
    let yes = pending.reply(Elicited::Accepted(json!({ "now": true })));
    let err = agent
        .resume(forged, &[yes], &RunOptions::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("seal"), "{err}");
    assert!(seen.sent.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_call_that_needed_approval_asks_after_it_is_approved() {
    let seen = Arc::new(Seen::default());
    let model = ScriptedModel::new()
        .then(ModelResponse::calling([call(
            "c1",
            "invoice",
            json!({ "amount": 40 }),
        )]))
        .then(ModelResponse::answer("Sent 30."));
    let destructive = ToolMetadata {
        hints: SafetyHints {
            destructive: Some(true),
            ..SafetyHints::default()
        },
        ..ToolMetadata::default()
    };
    let agent = Agent::builder(model)
        .executor(executor([
            invoice(Arc::clone(&seen)).with_metadata(destructive)
        ]))
        .require_approval_for_destructive()
        .build();
    let first = agent
        .run("invoice 40", &RunOptions::default())
        .await
        .unwrap();
    let (state, pending) = stored(&first);
    assert!(pending.question.is_none(), "approval first");
    let edited = pending.approve_with(json!({ "amount": 30 }));
    let asked = agent
        .resume(state, &[edited], &RunOptions::default())
        .await
        .unwrap();
    let (state, pending) = stored(&asked);
    assert_eq!(pending.call.arguments, json!({ "amount": 30 }));
    let email = pending.reply(Elicited::Accepted(json!({ "email": "ann@example.com" })));
    let (state, pending) = stored(
        &agent
            .resume(state, &[email], &RunOptions::default())
            .await
            .unwrap(),
    );
    let yes = pending.reply(Elicited::Accepted(json!({ "now": true })));
    let done = agent
        .resume(state, &[yes], &RunOptions::default())
        .await
        .unwrap();
    assert_eq!(
        *seen.sent.lock().unwrap(),
        [json!({ "to": "ann@example.com", "amount": 30 })]
    );
    // The model wrote 40: it is told what ran.
    let text = &tool_messages(&done.transcript)[0].1;
    assert!(
        text.starts_with("The user changed this call's arguments to {\"amount\":30}"),
        "{text}"
    );
}

/// A tool whose question says how many times it was asked: never the same question twice.
fn restless(asked: Arc<AtomicUsize>) -> DynamicTool {
    DynamicTool::new(
        "restless",
        "Asks a new question each time",
        json!({ "type": "object" }),
        move |_, ctx| {
            let asked = Arc::clone(&asked);
            async move {
                let n = asked.fetch_add(1, Ordering::SeqCst) + 1;
                let message = format!("Which email? (asked {n} times)");
                ctx.elicit(&message, email_schema()).await?;
                Ok(ToolOutput::text("done"))
            }
        },
    )
}

#[tokio::test]
async fn an_answer_is_kept_only_for_its_question_and_a_reply_only_for_the_question_asked() {
    let asked = Arc::new(AtomicUsize::new(0));
    let model = ScriptedModel::new()
        .then(ModelResponse::calling([call("c1", "restless", json!({}))]))
        .then(ModelResponse::answer("never asked"));
    let agent = Agent::builder(model)
        .executor(executor([restless(Arc::clone(&asked))]))
        .build();
    let first = agent.run("go", &RunOptions::default()).await.unwrap();
    let (state, pending) = stored(&first);
    let first_reply = pending.reply(Elicited::Accepted(json!({ "email": "a@example.com" })));
    let second = agent
        .resume(
            state,
            std::slice::from_ref(&first_reply),
            &RunOptions::default(),
        )
        .await
        .unwrap();
    // Asked something else: the answer to the first question is not given to it, nor kept.
    let (state, pending) = stored(&second);
    let question = pending.question.as_ref().unwrap();
    assert_eq!(question.question.message, "Which email? (asked 2 times)");
    assert!(question.answered.is_empty(), "{:?}", question.answered);
    // The first reply again: it answered another question, so it fits nothing here.
    let err = agent
        .resume(state.clone(), &[first_reply], &RunOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&err.failure, RunFailure::Approval(why) if why.contains("matches no pending call")),
        "{err}"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 2, "nothing ran");
}

#[tokio::test]
async fn an_unsealed_state_cannot_carry_answers_the_user_never_gave() {
    let seen = Arc::new(Seen::default());
    let model = ScriptedModel::new()
        .then(ModelResponse::calling([call(
            "c1",
            "invoice",
            json!({ "amount": 40 }),
        )]))
        .then(ModelResponse::answer("never asked"));
    let agent = Agent::builder(model)
        .executor(executor([invoice(Arc::clone(&seen))]))
        .build();
    let first = agent
        .run("invoice 40", &RunOptions::default())
        .await
        .unwrap();
    let (state, pending) = stored(&first);
    // An answer to the first question slipped in without its question, and one its schema
    // refuses: each is refused, nothing runs.
    for answered in [
        json!({ "answer": { "accepted": { "email": "mallory@example.com" } } }),
        json!({
            "question": { "message": "Which email?", "schema": email_schema() },
            "answer": { "accepted": { "mail": 1 } }
        }),
    ] {
        let mut text = serde_json::to_value(&state).unwrap();
        text["pending"][0][1]["question"]["answered"] = json!([answered]);
        let forged: RunState = serde_json::from_value(text).unwrap();
        let mut pending = pending.clone();
        pending.question.as_mut().unwrap().answered = forged
            .pending()
            .next()
            .unwrap()
            .question
            .clone()
            .unwrap()
            .answered;
        let yes = pending.reply(Elicited::Accepted(json!({ "now": true })));
        let err = agent
            .resume(forged, &[yes], &RunOptions::default())
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("an answer without its question"),
            "{err}"
        );
    }
    assert_eq!(seen.past_first.load(Ordering::SeqCst), 0);
}
