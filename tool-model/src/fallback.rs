//! [`FallbackModel`]: models tried in order, each request going to the next when the one
//! before fails, so that a provider's outage does not end a run.

use std::fmt;
use std::sync::Arc;

use futures_util::StreamExt;
use tool_core::provider::Format;

use crate::chat::{ChatModel, ModelFuture};
use crate::error::ModelError;
use crate::events::ModelEventStream;
use crate::request::ModelRequest;

/// Which failures send a request on to the next model.
type Rule = Arc<dyn Fn(&ModelError) -> bool + Send + Sync>;

/// A [`ChatModel`] that asks its models in order: each request goes to the first, and on to
/// the next when it fails with an error the rule allows ([`FallbackModel::falling_back_when`];
/// by default a refusal by status, a broken connection or an answer the API does not give,
/// after each client's own retries). Models of different APIs mix: the transcript is neutral,
/// each client writes the tools in its own format (with the run's options), and reasoning goes
/// back only to the API that gave it (Gemini's and OpenAI Responses', to the endpoint and
/// model that gave it: [`Reasoning::source`](crate::Reasoning::source)).
///
/// A streamed request goes on to the next model only while nothing was streamed: a failure
/// after the first event is the stream's. When every model fails, the last one's error is
/// the request's; each failure that sent the request on is logged as a `tracing` warning.
///
/// ```
/// use tool_model::{ChatModel, FallbackModel, Message, ModelError, ModelRequest, ModelResponse, ScriptedModel};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// // In use, clients of two APIs: `FallbackModel::new(OpenAiChatModel::new("gpt-5-mini"))
/// // .or(AnthropicModel::new("claude-sonnet-4-5"))`.
/// let down = ScriptedModel::new().then_error(ModelError::Transport {
///     url: "https://api.example.com/v1".into(),
///     message: "connection refused".into(),
///     attempts: 3,
/// });
/// let model = FallbackModel::new(down).or(ScriptedModel::new().then(ModelResponse::answer("hi")));
/// assert_eq!(model.len(), 2);
/// let answer = model.respond(&ModelRequest::new(vec![Message::user("hello")])).await.unwrap();
/// assert_eq!(answer.text.as_deref(), Some("hi"));
/// # }
/// ```
#[derive(Clone)]
pub struct FallbackModel {
    models: Vec<Arc<dyn ChatModel>>,
    rule: Rule,
}

impl FallbackModel {
    /// A model asking `first`, and the models added with [`FallbackModel::or`] after it.
    pub fn new(first: impl ChatModel + 'static) -> Self {
        FallbackModel {
            models: vec![Arc::new(first)],
            rule: Arc::new(falls_back),
        }
    }

    /// Adds the model asked when those before it failed.
    pub fn or(mut self, next: impl ChatModel + 'static) -> Self {
        self.models.push(Arc::new(next));
        self
    }

    /// Which failures send a request on to the next model (replacing the default, which
    /// takes [`ModelError::Status`], [`ModelError::Transport`] and
    /// [`ModelError::Malformed`]).
    pub fn falling_back_when(
        mut self,
        rule: impl Fn(&ModelError) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.rule = Arc::new(rule);
        self
    }

    /// How many models it asks, at most, per request.
    pub fn len(&self) -> usize {
        self.models.len()
    }

    /// Always `false`: there is a first model.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Whether a request that failed with `error` at model `index` goes on to the next.
    fn goes_on(&self, index: usize, error: &ModelError) -> bool {
        let next = self.models.get(index + 1);
        let on = next.is_some() && (self.rule)(error);
        if on {
            tracing::warn!(
                model = self.models[index].model_name(),
                next = next.map_or("", |m| m.model_name()),
                error = %error,
                "the model failed; the request goes to the next model"
            );
        }
        on
    }
}

/// The default rule: what another provider may well answer.
fn falls_back(error: &ModelError) -> bool {
    matches!(
        error,
        ModelError::Status { .. } | ModelError::Transport { .. } | ModelError::Malformed { .. }
    )
}

impl ChatModel for FallbackModel {
    fn respond<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            let mut index = 0;
            loop {
                match self.models[index].respond(request).await {
                    Err(error) if self.goes_on(index, &error) => index += 1,
                    answered => return answered,
                }
            }
        })
    }

    fn respond_stream<'a>(&'a self, request: &'a ModelRequest) -> ModelEventStream<'a> {
        let opened = async move {
            let mut index = 0;
            loop {
                let mut stream = self.models[index].respond_stream(request);
                match stream.next().await {
                    Some(Err(error)) if self.goes_on(index, &error) => index += 1,
                    Some(first) => {
                        let first = futures_util::stream::once(async move { first });
                        return first.chain(stream).boxed();
                    }
                    None => return stream,
                }
            }
        };
        Box::pin(futures_util::stream::once(opened).flatten())
    }

    /// The first model's: the run declares its tools in it once, and a model of another API
    /// declares them in its own when asked.
    fn format(&self) -> Option<Format> {
        self.models[0].format()
    }

    /// The first model's name.
    fn model_name(&self) -> &str {
        self.models[0].model_name()
    }
}

impl fmt::Debug for FallbackModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.models.iter().map(|m| m.model_name()).collect();
        f.debug_struct("FallbackModel")
            .field("models", &names)
            .finish_non_exhaustive()
    }
}
