//! `Agent::resume` on a stored run state read from arbitrary JSON (a state is input: it waited
//! in a database or a browser), with every pending call approved. What must hold: no panic;
//! the resume ends (within a bound) with a result or an error; a state the agent refuses runs
//! no tool; a state it takes runs no tool it did not offer.
#![no_main]

#[path = "../common/mod.rs"]
mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ai_tool::agent::{Agent, ModelResponse, RunFailure, RunOptions, RunState, ScriptedModel};
use ai_tool::prelude::*;
use ai_tool::ToolMetadata;
use libfuzzer_sys::fuzz_target;
use serde_json::json;

fn pay(runs: Arc<AtomicUsize>) -> DynamicTool {
    DynamicTool::new(
        "pay",
        "Pays",
        json!({ "type": "object", "properties": { "amount": { "type": "integer" } } }),
        move |_, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            async { Ok(ToolOutput::text("paid")) }
        },
    )
    .with_metadata(ToolMetadata {
        requires_approval: true,
        ..ToolMetadata::default()
    })
}

fn gated(runs: Arc<AtomicUsize>) -> DynamicTool {
    DynamicTool::new(
        "admin",
        "Never offered: its purpose's gate is shut",
        json!({ "type": "object" }),
        move |_, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            async { Ok(ToolOutput::text("done")) }
        },
    )
    .with_metadata(ToolMetadata {
        purposes: vec!["admin".into()],
        ..ToolMetadata::default()
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(state) = serde_json::from_slice::<RunState>(data) else {
        return;
    };
    let paid = Arc::new(AtomicUsize::new(0));
    let admin = Arc::new(AtomicUsize::new(0));
    let exec = Executor::builder()
        .registered_tools(false)
        .tool(pay(Arc::clone(&paid)))
        .tool(gated(Arc::clone(&admin)))
        .build()
        .expect("the executor builds");
    let model = ScriptedModel::new()
        .then(ModelResponse::answer("done"))
        .then(ModelResponse::answer("done again"));
    let agent = Agent::builder(model)
        .executor(exec)
        .purpose_gate("admin", |_| false)
        .build();
    let decisions: Vec<_> = state.pending().map(|p| p.approve()).collect();
    let resumed = common::block_on(async {
        tokio::time::timeout(
            Duration::from_secs(5),
            agent.resume(state, &decisions, &RunOptions::default()),
        )
        .await
    });
    let resumed = resumed.expect("the resume ended");
    assert_eq!(admin.load(Ordering::SeqCst), 0, "a tool never offered ran");
    let paid = paid.load(Ordering::SeqCst);
    match &resumed {
        // A state refused (or decisions that do not fit it) runs nothing.
        Err(error) if matches!(error.failure, RunFailure::Approval(_)) => {
            assert_eq!(paid, 0, "a refused state ran `pay`: {error}")
        }
        // Otherwise `pay` ran at most once per approved pending call: the model, scripted,
        // makes no call of its own.
        _ => assert!(paid <= decisions.len(), "`pay` ran {paid} times"),
    }
});
