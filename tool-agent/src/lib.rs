//! The agent loop of `ai-tool`: send a request to a model, run the tool calls of its answer
//! through an [`Executor`](tool_runtime::Executor), send the results back, and repeat until the
//! model answers in text or a stop condition is met.
//!
//! - The model is anything that implements [`ChatModel`], the contract of `tool-model`
//!   (re-exported here): one [`ModelRequest`] in, one [`ModelResponse`] out, in neutral types.
//!   The HTTP clients of the model APIs are in `tool-providers`; [`ScriptedModel`] answers from
//!   a script, for tests.
//! - [`Agent`] runs the loop: [`Agent::run`] returns a [`RunResult`] with the final text, the
//!   transcript, every step and the usage summed, or a [`RunError`] that keeps all of that too;
//!   [`Agent::run_stream`] yields [`RunEvent`]s as they happen.
//! - What the model is offered is decided per run ([`OfferedTools`]): system tools by purpose
//!   (gates reading the [`RunContext`]), selectable tools by name (or by a retriever, feature
//!   `retrieval`). A call to a tool that was not offered is refused with
//!   [`ToolError::NotOffered`](tool_core::ToolError::NotOffered), even when the executor has it.
//! - Calls of tools that need approval wait: the run stops with them pending and a
//!   serializable [`RunState`]; [`Agent::resume`] runs exactly what was approved. A
//!   [`RunStore`] keeps such states while they wait and hands each back once
//!   ([`MemoryRunStore`]; `PgRunStore`, feature `postgres`, shared by replicas).
//! - The calls of a run share an [`InvocationScope`]: the run's context, typed items and the
//!   references tools cite as `[doc:N]`, which [`citations::finalize`] renumbers in the answer.
//!
//! Users normally reach this crate through the `ai-tool` facade, as `ai_tool::agent`.

#![warn(missing_docs)]

mod agent;
mod approval;
mod calls;
pub mod citations;
mod context;
mod delegate;
mod events;
mod hooks;
mod kept;
mod memory_runs;
mod options;
#[cfg(feature = "postgres")]
mod pg_runs;
mod repeat;
mod result;
mod retries;
mod run;
mod run_store;
mod sampling;
mod scope;
mod search;
pub mod telemetry;

pub use agent::{Agent, AgentBuilder, PurposeGate};
pub use approval::{
    ApprovalPolicy, ApprovalVerdict, CallApprovalPolicy, Decision, Interruption, PendingApproval,
    PendingQuestion, RunState,
};
pub use context::RunContext;
pub use events::RunEvent;
pub use hooks::{AfterTool, BeforeTool, RepairCall, RunHooks, StepPlan};
pub use kept::READ_RESULT;
pub use memory_runs::MemoryRunStore;
pub use options::{RunOptions, StopPredicate};
#[cfg(feature = "postgres")]
pub use pg_runs::PgRunStore;
pub use result::{
    CallRecord, Repaired, RepairedBy, RunError, RunFailure, RunResult, Step, StopReason,
};
pub use run_store::{RunId, RunStore, RunStoreError, RunStoreFuture, RunStoreLimits, SavedRun};
pub use scope::InvocationScope;
pub use search::ToolSearch;
pub use tool_core::provider::hosted::SearchBy;
pub use tool_core::provider::tool_search::TOOL_SEARCH;
/// The model contract the loop consumes (the crate `tool-model`).
pub use tool_model::{
    AllowedMode, CallDelta, ChatModel, Ending, FallbackModel, Generation, Message, ModelError,
    ModelEvent, ModelEventStream, ModelFuture, ModelRequest, ModelResponse, OfferedTools,
    PromptCache, Reasoning, ResponseFormat, ScriptedModel, ToolChoice, Usage,
};
