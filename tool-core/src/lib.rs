//! The data model of `ai-tool`: what a tool is, independent of how it was defined or which
//! model API it is shown to.
//!
//! Every tool, whether it comes from `#[ai_tool]`, a builder, a catalog file or a remote server,
//! becomes one [`ToolSpec`] with one canonical JSON Schema. Provider formats are translations of
//! that spec at the edge. This crate has no async runtime.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod call;
mod canonical;
pub mod cap;
pub mod catalog;
mod error;
pub mod name;
pub mod nesting;
mod output;
pub mod profile;
pub mod provider;
pub mod repair;
pub mod schema;
mod spec;
#[doc(hidden)]
pub mod suggest;
pub mod text_input;
#[doc(hidden)]
pub mod words;

pub use call::ToolCall;
pub use canonical::{canonical_json, write_canonical_json};
pub use catalog::{CatalogEntry, CatalogError};
pub use error::{FailureSource, ModelTextLimits, ToolError, ToolErrorKind, Violation};
pub use output::{Content, FileSource, ResourceContents, ToolOutput};
pub use spec::{
    Callers, Icon, Namespace, SafetyHints, SpecError, TaskSupport, ToolMetadata, ToolSource,
    ToolSpec,
};
pub use text_input::TextInput;
