//! Streaming: what a model's streamed answer is made of.

use std::pin::Pin;

use futures_util::Stream;

use crate::error::ModelError;
use crate::response::ModelResponse;

/// A model's answer as it comes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ModelEvent {
    /// More of the text.
    TextDelta(String),
    /// The whole answer, assembled: the last event.
    Done(ModelResponse),
}

/// The stream a [`ChatModel::respond_stream`](crate::ChatModel::respond_stream) returns.
pub type ModelEventStream<'a> =
    Pin<Box<dyn Stream<Item = Result<ModelEvent, ModelError>> + Send + 'a>>;
