//! Streaming: what a model's streamed answer is made of.

use std::pin::Pin;

use futures_util::Stream;

use crate::error::ModelError;
use crate::response::ModelResponse;

/// A model's answer as it comes.
///
/// The deltas say what came as it came; [`ModelEvent::Done`] is the answer. A call whose name
/// never came is not in it, though deltas of it may have come before.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ModelEvent {
    /// More of the text.
    TextDelta(String),
    /// More of a tool call: its id and name once they are known, and the next piece of its
    /// arguments.
    ToolCallDelta(CallDelta),
    /// More of what the model thought, as its API shows it (the thinking itself or a summary
    /// of it), for people to read. What goes back to the API is in the answer
    /// ([`ModelResponse::reasoning`]).
    ReasoningDelta(String),
    /// The whole answer, assembled: the last event.
    Done(ModelResponse),
}

/// A piece of one tool call of a streamed answer ([`ModelEvent::ToolCallDelta`]).
///
/// The pieces of one call share its `index`. Its id and name each come in one piece, the
/// first that knows them (not necessarily the first of the call). Its `arguments`, joined in
/// order, are the JSON text the call's arguments in [`ModelEvent::Done`] were read from, as the
/// model wrote it (where a strict declaration encoded the arguments, `Done` has them decoded).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CallDelta {
    /// The call's position among this answer's calls, from 0, in the order the calls started:
    /// the order of [`ModelResponse::calls`], where every call has a name.
    pub index: usize,
    /// The call's id, in the piece that first says it.
    pub id: Option<String>,
    /// The tool's real name (an alias the tools were declared under is mapped back, as in
    /// [`ModelResponse::calls`]), in the piece that first says it.
    pub name: Option<String>,
    /// The next piece of the arguments' JSON text; possibly empty.
    pub arguments: String,
}

impl CallDelta {
    /// A piece of the call at `index`: its id and name, if this piece says them, and a piece
    /// of its arguments.
    pub fn new(
        index: usize,
        id: Option<String>,
        name: Option<String>,
        arguments: impl Into<String>,
    ) -> Self {
        CallDelta {
            index,
            id,
            name,
            arguments: arguments.into(),
        }
    }
}

/// The stream a [`ChatModel::respond_stream`](crate::ChatModel::respond_stream) returns.
pub type ModelEventStream<'a> =
    Pin<Box<dyn Stream<Item = Result<ModelEvent, ModelError>> + Send + 'a>>;
