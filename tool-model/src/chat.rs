//! The [`ChatModel`] trait: the one thing a model client implements.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::StreamExt;
use tool_core::provider::Format;

use crate::error::ModelError;
use crate::events::{CallDelta, ModelEvent, ModelEventStream};
use crate::request::ModelRequest;
use crate::response::ModelResponse;

/// The future a [`ChatModel`] returns.
pub type ModelFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ModelResponse, ModelError>> + Send + 'a>>;

/// A model: one request in, one response out.
///
/// Implement it to plug in any client. A run drops the future when it is cancelled, so a client
/// built on an HTTP library ends the request by being dropped. [`ChatModel::respond_stream`]
/// streams the answer; by default it gives `respond`'s answer in one piece.
///
/// ```
/// use tool_model::{ChatModel, ModelFuture, ModelRequest, ModelResponse};
///
/// /// Answers every request with the number of messages it was sent.
/// struct Counter;
///
/// impl ChatModel for Counter {
///     fn respond<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a> {
///         let answer = request.messages.len().to_string();
///         Box::pin(async move { Ok(ModelResponse::answer(answer)) })
///     }
/// }
/// ```
pub trait ChatModel: Send + Sync {
    /// Sends one request and returns the model's answer.
    fn respond<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a>;

    /// Sends one request and streams the answer: text, tool call and reasoning deltas as they
    /// come, then the whole answer assembled ([`ModelEvent::Done`]). The agent loop's streamed
    /// runs use it. By default, `respond`'s answer in one piece: its text as one delta, each
    /// call as one [`ModelEvent::ToolCallDelta`] (its id, name and arguments as JSON text),
    /// then the answer.
    fn respond_stream<'a>(&'a self, request: &'a ModelRequest) -> ModelEventStream<'a> {
        let answer = futures_util::stream::once(self.respond(request));
        Box::pin(answer.flat_map(|answer| {
            let events: Vec<Result<ModelEvent, ModelError>> = match answer {
                Ok(response) => in_one_piece(response).into_iter().map(Ok).collect(),
                Err(error) => vec![Err(error)],
            };
            futures_util::stream::iter(events)
        }))
    }

    /// The API whose tool declarations the model wants. When it names one, a run declares the
    /// offered tools in that format once (not once per step) and passes them in
    /// [`OfferedTools::declarations`](crate::OfferedTools::declarations), with the aliases that map calls back to tool names.
    fn format(&self) -> Option<Format> {
        None
    }

    /// The model's name, for traces (`gen_ai.request.model`); empty when unknown.
    fn model_name(&self) -> &str {
        ""
    }
}

/// The events of an answer that came whole: its text, each call whole, and the answer.
fn in_one_piece(response: ModelResponse) -> Vec<ModelEvent> {
    let text = response.text.clone().map(ModelEvent::TextDelta);
    let calls = response.calls.iter().enumerate().map(|(index, call)| {
        ModelEvent::ToolCallDelta(CallDelta::new(
            index,
            call.id.clone(),
            Some(call.name.clone()),
            call.arguments.to_string(),
        ))
    });
    let mut events: Vec<ModelEvent> = text.into_iter().chain(calls).collect();
    events.push(ModelEvent::Done(response));
    events
}

impl<M: ChatModel + ?Sized> ChatModel for Arc<M> {
    fn respond<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a> {
        (**self).respond(request)
    }

    fn respond_stream<'a>(&'a self, request: &'a ModelRequest) -> ModelEventStream<'a> {
        (**self).respond_stream(request)
    }

    fn format(&self) -> Option<Format> {
        (**self).format()
    }

    fn model_name(&self) -> &str {
        (**self).model_name()
    }
}
