//! The agent loop of `ai-tool`: send a request to a model, run the tool calls of its answer
//! through an [`Executor`](tool_runtime::Executor), send the results back, and repeat until the
//! model answers in text or a stop condition is met.
//!
//! - [`ChatModel`] is the one trait a model client implements: one [`ModelRequest`] in, one
//!   [`ModelResponse`] out, in neutral types. [`OpenAiChatModel`] speaks OpenAI Chat Completions
//!   (any compatible endpoint), [`OpenAiResponsesModel`] OpenAI Responses, [`AnthropicModel`]
//!   Anthropic Messages, [`GeminiModel`] Gemini `generateContent`, [`BedrockModel`] Amazon
//!   Bedrock Converse (signed with SigV4 or a Bedrock API key), and [`ScriptedModel`] answers
//!   from a script, for tests.
//! - [`Agent`] runs the loop: [`Agent::run`] returns a [`RunResult`] with the final text, the
//!   transcript, every step and the usage summed, or a [`RunError`] that keeps all of that too;
//!   [`Agent::run_stream`] yields [`RunEvent`]s as they happen.
//! - What the model is offered is decided per run ([`OfferedTools`]): system tools by purpose
//!   (gates reading the [`RunContext`]), selectable tools by name (or by a retriever, feature
//!   `retrieval`). A call to a tool that was not offered is refused with
//!   [`ToolError::NotOffered`](tool_core::ToolError::NotOffered), even when the executor has it.
//! - Calls of tools that need approval wait: the run stops with them pending and a
//!   serializable [`RunState`]; [`Agent::resume`] runs exactly what was approved.
//! - The calls of a run share an [`InvocationScope`]: the run's context, typed items and the
//!   references tools cite as `[doc:N]`, which [`citations::finalize`] renumbers in the answer.
//!
//! Users normally reach this crate through the `ai-tool` facade, as `ai_tool::agent`.

#![warn(missing_docs)]

mod agent;
mod anthropic;
mod approval;
mod assemble;
mod aws;
mod aws_frames;
mod bedrock;
mod calls;
pub mod citations;
mod context;
mod delegate;
mod events;
mod fallback;
#[doc(hidden)]
pub mod fuzzing;
mod gemini;
mod google;
mod hooks;
mod http;
mod message;
mod model;
mod offer;
mod openai_chat;
mod openai_responses;
mod options;
mod refreshing;
mod repeat;
mod result;
pub mod router;
mod run;
mod scope;
mod scripted;
mod sse;
mod structured;
mod timer;
mod tool_ids;

pub use agent::{Agent, AgentBuilder, PurposeGate};
pub use anthropic::AnthropicModel;
pub use approval::{
    ApprovalPolicy, ApprovalVerdict, CallApprovalPolicy, Decision, Interruption, PendingApproval,
    RunState,
};
pub use aws::{AwsCredentialChain, AwsCredentials};
pub use bedrock::BedrockModel;
pub use context::RunContext;
pub use events::{ModelEvent, ModelEventStream, RunEvent};
pub use fallback::FallbackModel;
pub use gemini::GeminiModel;
pub use google::GoogleCredentials;
pub use hooks::{AfterTool, BeforeTool, RunHooks, StepPlan};
pub use http::{ApiKey, RetryPolicy, DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT};
pub use message::{Message, Reasoning, ToolImage, Usage};
pub use model::{
    ChatModel, ModelError, ModelFuture, ModelRequest, ModelResponse, PromptCache, ToolChoice,
};
pub use offer::OfferedTools;
pub use openai_chat::OpenAiChatModel;
pub use openai_responses::OpenAiResponsesModel;
pub use options::{RunOptions, StopPredicate};
pub use result::{CallRecord, RunError, RunFailure, RunResult, Step, StopReason};
pub use scope::InvocationScope;
pub use scripted::ScriptedModel;
pub use structured::ResponseFormat;
