//! A model that answers from a script: for testing the loop and the code around it.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::chat::{ChatModel, ModelFuture};
use crate::error::ModelError;
use crate::request::ModelRequest;
use crate::response::ModelResponse;
use tool_core::provider::Format;

/// A [`ChatModel`] that gives its scripted answers in order and records every request.
///
/// When the script runs out, a request fails with a [`ModelError::Other`] that says so.
///
/// ```
/// use std::sync::Arc;
/// use tool_model::{ModelResponse, ScriptedModel};
/// use tool_core::ToolCall;
///
/// let model = Arc::new(
///     ScriptedModel::new()
///         .then(ModelResponse::calling([ToolCall::new("c1", "add", serde_json::json!({ "a": 1, "b": 2 }))]))
///         .then(ModelResponse::answer("1 + 2 = 3")),
/// );
/// // Agent::builder(Arc::clone(&model)) ..., then model.requests() shows what the loop sent.
/// assert_eq!(model.remaining(), 2);
/// ```
#[derive(Debug, Default)]
pub struct ScriptedModel {
    script: Mutex<VecDeque<Scripted>>,
    requests: Mutex<Vec<ModelRequest>>,
    /// The API it stands in for, if any.
    format: Option<Format>,
}

/// One scripted answer.
#[derive(Debug)]
enum Scripted {
    Response(ModelResponse),
    Error(ModelError),
    /// A request that never answers: for cancellation tests.
    Never,
}

impl ScriptedModel {
    /// A model with an empty script.
    pub fn new() -> Self {
        ScriptedModel::default()
    }

    /// A model that stands in for one of `format`'s API: the requests it receives declare
    /// their tools in that format, as a client of that API would have them (deferred tools and
    /// the search where the API has them, say). It answers from its script all the same.
    pub fn speaking(mut self, format: Format) -> Self {
        self.format = Some(format);
        self
    }

    /// Adds an answer to the script.
    pub fn then(self, response: ModelResponse) -> Self {
        self.push(Scripted::Response(response));
        self
    }

    /// Adds a failed request to the script.
    pub fn then_error(self, error: ModelError) -> Self {
        self.push(Scripted::Error(error));
        self
    }

    /// Adds a request that never answers (until the run is cancelled).
    pub fn then_never(self) -> Self {
        self.push(Scripted::Never);
        self
    }

    /// Adds an answer to the script of a model already in use.
    pub fn push_response(&self, response: ModelResponse) {
        self.push(Scripted::Response(response));
    }

    fn push(&self, scripted: Scripted) {
        lock(&self.script).push_back(scripted);
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        lock(&self.requests).clone()
    }

    /// How many scripted answers are left.
    pub fn remaining(&self) -> usize {
        lock(&self.script).len()
    }
}

/// The lock, whether or not a panicking test poisoned it: the data stays consistent, since
/// every critical section is one push or one pop.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ChatModel for ScriptedModel {
    fn format(&self) -> Option<Format> {
        self.format
    }

    fn respond<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a> {
        let number = {
            let mut requests = lock(&self.requests);
            requests.push(request.clone());
            requests.len()
        };
        let next = lock(&self.script).pop_front();
        Box::pin(async move {
            match next {
                Some(Scripted::Response(response)) => Ok(response),
                Some(Scripted::Error(error)) => Err(error),
                Some(Scripted::Never) => std::future::pending().await,
                None => Err(exhausted(number)),
            }
        })
    }
}

/// The error of request `number` (from 1) once the script has run out.
fn exhausted(number: usize) -> ModelError {
    ModelError::Other(format!(
        "the scripted model has no answer left for request {number}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;

    #[tokio::test]
    async fn answers_in_order_records_requests_then_runs_out() {
        let model = ScriptedModel::new()
            .then(ModelResponse::answer("one"))
            .then_error(ModelError::Other("down".into()));
        let request = ModelRequest::new(vec![Message::user("hi")]);
        assert_eq!(
            model.respond(&request).await.unwrap().text.as_deref(),
            Some("one")
        );
        assert_eq!(
            model.respond(&request).await.unwrap_err(),
            ModelError::Other("down".into())
        );
        assert_eq!(model.respond(&request).await.unwrap_err(), exhausted(3));
        let requests = model.requests();
        assert_eq!(requests.len(), 3);
        assert_eq!(requests[0].messages, vec![Message::user("hi")]);
    }

    /// A model that does not stream streams its answer in one piece: the text, each call
    /// whole, then the answer.
    #[tokio::test]
    async fn a_whole_answer_streams_its_text_then_each_call_whole() {
        use crate::{CallDelta, ModelEvent};
        use futures_util::StreamExt;
        use serde_json::json;
        use tool_core::ToolCall;

        let answer = ModelResponse {
            text: Some("Adding.".into()),
            ..ModelResponse::calling([
                ToolCall::new("c1", "add", json!({ "a": 1 })),
                ToolCall {
                    id: None,
                    name: "mul".into(),
                    arguments: json!({}),
                },
            ])
        };
        let model = ScriptedModel::new().then(answer.clone());
        let request = ModelRequest::new(vec![Message::user("hi")]);
        let events: Vec<ModelEvent> = model
            .respond_stream(&request)
            .map(Result::unwrap)
            .collect()
            .await;
        assert_eq!(
            events,
            [
                ModelEvent::TextDelta("Adding.".into()),
                ModelEvent::ToolCallDelta(CallDelta::new(
                    0,
                    Some("c1".into()),
                    Some("add".into()),
                    r#"{"a":1}"#
                )),
                ModelEvent::ToolCallDelta(CallDelta::new(1, None, Some("mul".into()), "{}")),
                ModelEvent::Done(answer),
            ]
        );
    }
}
