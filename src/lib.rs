//! # ai-tool
//!
//! Turn the methods of the services you already have into tools a large language model can
//! call. Write `#[ai_tools]` on an impl block and `#[ai_tool]` on its methods; from that alone
//! you get a JSON Schema per tool, validation of the model's arguments against exactly that
//! schema, link-time registration, and an [`Executor`] that dispatches calls by name.
//!
//! ```
//! use ai_tool::prelude::*;
//! use std::sync::Arc;
//!
//! struct Calculator;
//!
//! #[ai_tools]
//! impl Calculator {
//!     /// Adds two numbers.
//!     #[ai_tool]
//!     fn add(&self, a: i64, b: i64) -> i64 {
//!         a + b
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let exec = Executor::builder().service(Arc::new(Calculator)).build()?;
//! let out = exec.execute("add", serde_json::json!({ "a": 2, "b": 3 })).await?;
//! assert_eq!(out.to_text(), "5");
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

#[cfg(feature = "cli")]
pub mod cli;

/// Model Context Protocol: serve an [`Executor`] as an MCP server, import an MCP server's tools
/// (feature `mcp`).
#[cfg(feature = "mcp")]
pub use tool_mcp as mcp;

/// The agent loop: talk to a model, run its tool calls, per-request tool sets (feature `agent`,
/// or `agent-loop` with one feature per model API: `openai`, `anthropic`, `gemini`, `vertex`,
/// `bedrock`).
///
/// One module for three crates: the loop (`tool-agent`), the model contract it consumes
/// (`tool-model`, re-exported by the loop) and the HTTP clients of the model APIs
/// (`tool-providers`).
#[cfg(feature = "agent-loop")]
pub mod agent {
    pub use tool_agent::*;
    pub use tool_providers::*;
}

#[cfg(feature = "otel")]
pub mod otel;

/// Declared tools (NLWeb's `tools.xml`) and LLM-scored routing of a query to one of them
/// (feature `agent-loop`, which `agent` and each model API's feature turn on).
#[cfg(feature = "agent-loop")]
pub use tool_router as router;

pub use tool_core::{
    cap, catalog, name, nesting, profile, provider, repair, schema, text_input, Callers,
    CatalogEntry, CatalogError, Content, FileSource, Icon, ModelTextLimits, Namespace,
    ResourceContents, SafetyHints, SpecError, TaskSupport, TextInput, ToolCall, ToolError,
    ToolErrorKind, ToolMetadata, ToolOutput, ToolSource, ToolSpec, Violation,
};
pub use tool_macros::{ai_tool, ai_tool_converter, ai_tools};
pub use tool_retrieval as retrieval;
pub use tool_runtime::toolset;
pub use tool_runtime::{inside_tool_call, silence_caught_panics};
pub use tool_runtime::{
    AddedTool, BuildError, BuildProblem, Call, CallOptions, CallResult, CancellationToken,
    Converter, Declarations, DeclareOptions, DynamicTool, Elicitation, Elicited, Elicitor,
    Executor, ExecutorBuilder, ExecutorMetrics, Extensions, Format, IntoArguments, IntoTool,
    IntoToolOutput, Json, LogLevel, LogSink, Progress, ProgressSink, Sampled, Sampler,
    SamplingRequest, Services, Speaker, Tool, ToolContext, Toolset, DEFAULT_MAX_ARGUMENT_BYTES,
    DEFAULT_MAX_BLOCKING_CALLS,
};

/// What most users need: `use ai_tool::prelude::*;`.
pub mod prelude {
    pub use crate::{
        ai_tool, ai_tool_converter, ai_tools, AddedTool, CallOptions, CancellationToken,
        DeclareOptions, DynamicTool, Elicited, Executor, ExecutorBuilder, Format, IntoArguments,
        Json, LogLevel, Tool, ToolCall, ToolContext, ToolError, ToolErrorKind, ToolOutput,
        ToolSpec, Toolset,
    };
}

/// What generated code uses. Not a public API: anything here may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use inventory;
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use tool_core::{SafetyHints, ToolError, ToolOutput};
    pub use tool_runtime::macro_support::*;
}
