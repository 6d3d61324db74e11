//! The model contract of `ai-tool`: what a model client implements and the agent loop
//! consumes, in no provider's format.
//!
//! - [`ChatModel`] is the one trait a client implements: one [`ModelRequest`] in, one
//!   [`ModelResponse`] out ([`ChatModel::respond`]), or the answer as it comes
//!   ([`ChatModel::respond_stream`], a stream of [`ModelEvent`]s).
//! - A request holds the conversation ([`Message`]), the [`OfferedTools`] (declared once in the
//!   model's format, with the aliases that map calls back), a [`ToolChoice`] and an optional
//!   [`ResponseFormat`], and how the answer is generated ([`Generation`]: length, temperature,
//!   stop sequences), which each client writes in its API's own fields.
//! - A response holds text, tool calls, [`Usage`] and how it ended ([`Ending`]), which the
//!   client reads from its API's own words: the loop never sees them.
//! - [`ModelError`] is why a request failed.
//! - [`ScriptedModel`] answers from a script, for tests; [`FallbackModel`] tries a second model
//!   when the first fails.
//!
//! A client written outside this project can do everything a built-in one does: every helper
//! the built-in clients use on a request is public ([`ModelRequest::declarations_for`],
//! [`ModelRequest::rendered`], [`OfferedTools::tools_json_for`], [`timer`]).
//!
//! The HTTP clients of the model APIs are in `tool-providers`; the loop is `tool-agent`.

#![warn(missing_docs)]

mod chat;
mod error;
mod events;
mod fallback;
mod generation;
pub mod message;
mod offer;
mod request;
mod response;
mod scripted;
pub mod structured;
pub mod timer;

pub use chat::{ChatModel, ModelFuture};
pub use error::ModelError;
pub use events::{CallDelta, ModelEvent, ModelEventStream};
pub use fallback::FallbackModel;
pub use generation::Generation;
pub use message::{Message, Reasoning, Usage};
pub use offer::OfferedTools;
pub use request::{AllowedMode, ModelRequest, PromptCache, RenderCache, Rendered, ToolChoice};
pub use response::{Ending, ModelResponse};
pub use scripted::ScriptedModel;
pub use structured::ResponseFormat;
