//! The running half of `ai-tool`: the [`Executor`] that finds every registered tool, validates a
//! model's arguments against the tool's canonical schema, calls it under protection (panics,
//! timeouts, cancellation, size caps) and converts what it returns into [`ToolOutput`].
//!
//! Users normally reach this crate through the `ai-tool` facade.

#![warn(missing_docs)]

mod arguments;
mod boxed;
mod context;
mod converter;
mod dynamic;
mod elicit;
mod executor;
mod extensions;
mod guard;
mod log_level;
#[doc(hidden)]
pub mod macro_support;
mod options;
mod panics;
mod registration;
mod replay;
mod returned;
mod sample;
mod tool;
pub mod toolset;

pub use arguments::IntoArguments;
pub use context::{Progress, ProgressSink, Services, ToolContext};
pub use converter::Converter;
pub use dynamic::DynamicTool;
pub use elicit::{Elicitation, Elicited, Elicitor};
pub use executor::{
    AddedTool, BuildError, BuildProblem, Call, Executor, ExecutorBuilder, ExecutorMetrics,
    IntoTool, DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_BLOCKING_CALLS,
};
pub use extensions::Extensions;
pub use log_level::{LogLevel, LogSink};
pub use options::CallOptions;
pub use panics::{inside_tool_call, silence_caught_panics};
pub use replay::{Answered, ReplayedQuestions, MAX_QUESTIONS_PER_CALL};
pub use sample::{Sampled, Sampler, SamplingRequest, Speaker};
pub use tokio_util::sync::CancellationToken;
pub use tool::{IntoToolOutput, Json, Tool};
pub use tool_core::provider::{CallResult, Declarations, DeclareOptions, Format};
pub use tool_core::{
    CatalogEntry, CatalogError, Content, SafetyHints, SpecError, ToolCall, ToolError, ToolMetadata,
    ToolOutput, ToolSource, ToolSpec, Violation,
};
pub use toolset::Toolset;
