//! The model a run talks to: the [`ChatModel`] trait and its neutral request and response.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use tool_core::provider::{declare, Declarations, DeclareOptions, Format};
use tool_core::ToolCall;

use crate::events::{ModelEvent, ModelEventStream};
use crate::message::{called_tools, has_tool_turns, Message, Usage};
use crate::offer::OfferedTools;
use crate::structured::ResponseFormat;

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
/// use tool_agent::{ChatModel, ModelFuture, ModelRequest, ModelResponse};
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

    /// Sends one request and streams the answer: text deltas, then the whole answer
    /// assembled ([`ModelEvent::Done`]). [`Agent::run_stream`](crate::Agent::run_stream) uses
    /// it. By default, `respond`'s answer as one delta and the answer.
    fn respond_stream<'a>(&'a self, request: &'a ModelRequest) -> ModelEventStream<'a> {
        let answer = futures_util::stream::once(self.respond(request));
        Box::pin(answer.flat_map(|answer| {
            let events: Vec<Result<ModelEvent, ModelError>> = match answer {
                Ok(response) => response
                    .text
                    .clone()
                    .map(|text| Ok(ModelEvent::TextDelta(text)))
                    .into_iter()
                    .chain([Ok(ModelEvent::Done(response))])
                    .collect(),
                Err(error) => vec![Err(error)],
            };
            futures_util::stream::iter(events)
        }))
    }

    /// The API whose tool declarations the model wants. When it names one, a run declares the
    /// offered tools in that format once (not once per step) and passes them in
    /// [`OfferedTools::declarations`], with the aliases that map calls back to tool names.
    fn format(&self) -> Option<Format> {
        None
    }

    /// The model's name, for traces (`gen_ai.request.model`); empty when unknown.
    fn model_name(&self) -> &str {
        ""
    }
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

/// How long the provider keeps a request's prefix cached, for the clients whose API caches
/// only where asked ([`AnthropicModel::with_prompt_cache`](crate::AnthropicModel::with_prompt_cache),
/// [`BedrockModel::with_prompt_cache`](crate::BedrockModel::with_prompt_cache)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptCache {
    /// Five minutes from the last use (the APIs' default).
    FiveMinutes,
    /// One hour from the last use.
    OneHour,
}

/// Which tools the model may or must call in a request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The model must call at least one tool.
    Required,
    /// No tools: the model must answer in text. Clients send no tools at all.
    None,
    /// The model must call this tool.
    Tool(String),
}

/// One request to a model, in no provider's format.
///
/// A run sends one request per step, its messages growing by appending. A client may keep
/// what it rendered of the messages for the next request of the same `ModelRequest`: change a
/// request's messages only by appending to them, or make a new request.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    /// The system prompt.
    pub instructions: Option<String>,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools offered in this run, declared in the model's format when it has one.
    pub tools: Arc<OfferedTools>,
    /// Which tools the model may or must call.
    pub tool_choice: ToolChoice,
    /// A JSON Schema the answer's text must follow (structured output), if any.
    pub response_format: Option<ResponseFormat>,
    /// The sampling temperature, if not the model's default. Anthropic's Messages API has no
    /// such parameter, and its client sends none.
    pub temperature: Option<f32>,
    /// Whether the model may call several tools in one answer; `None` leaves it to the API
    /// (each allows it). OpenAI's two APIs send `parallel_tool_calls`, Anthropic's
    /// `tool_choice.disable_parallel_tool_use`; Gemini has no such setting. Sent only with tools.
    pub parallel_tool_calls: Option<bool>,
    /// What a client rendered of `messages`, for the next request.
    pub(crate) rendered: RenderCache,
}

/// The messages a client rendered for an earlier request of a run, in its API's format.
#[derive(Clone, Default)]
pub(crate) struct RenderCache(Arc<Mutex<Option<Rendered>>>);

/// Rendered messages: how many, and their JSON, comma-separated.
pub(crate) struct Rendered {
    pub format: Format,
    pub messages: usize,
    pub json: Vec<u8>,
}

impl RenderCache {
    /// What was rendered in `format` of at most `messages` messages; taken out, to be put back.
    pub(crate) fn take(&self, format: Format, messages: usize) -> Option<Rendered> {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        slot.take()
            .filter(|r| r.format == format && r.messages <= messages)
    }

    /// Keeps what was rendered for the next request.
    pub(crate) fn put(&self, rendered: Rendered) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(rendered);
    }
}

impl std::fmt::Debug for RenderCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RenderCache")
    }
}

impl ModelRequest {
    /// A request of these messages, with no instructions and no tools.
    pub fn new(messages: Vec<Message>) -> Self {
        ModelRequest {
            instructions: None,
            messages,
            tools: Arc::new(OfferedTools::none()),
            tool_choice: ToolChoice::Auto,
            response_format: None,
            temperature: None,
            parallel_tool_calls: None,
            rendered: RenderCache::default(),
        }
    }

    /// Whether the request offers tools: some were offered and the choice is not
    /// [`ToolChoice::None`].
    pub fn offers_tools(&self) -> bool {
        self.tool_choice != ToolChoice::None && !self.tools.is_empty()
    }

    /// The tool declarations to send in `format`: the offered tools', or, when none is offered
    /// and the messages hold calls, the tools they called (with an open schema), for the APIs
    /// that take calls and results only beside tool definitions (Anthropic, Bedrock).
    pub(crate) fn declarations_for(&self, format: Format) -> Cow<'_, Declarations> {
        if self.tools.is_empty() && has_tool_turns(&self.messages) {
            let called = called_tools(&self.messages);
            return Cow::Owned(declare(&called, format, &DeclareOptions::default()));
        }
        self.tools.declarations_or_declare(format)
    }
}

/// How an answer ended, read from its API's finish reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// As the model meant it to.
    Whole,
    /// At the model's output limit.
    CutAtLimit,
    /// The model declined, or the API's filter stopped it.
    Declined,
    /// The model tried to call a tool and wrote the call wrong (Gemini's
    /// `MALFORMED_FUNCTION_CALL`), or called one it was not given (`UNEXPECTED_TOOL_CALL`):
    /// no call came.
    MalformedCall,
    /// The API paused a long turn of the tools it runs (Anthropic's `pause_turn`): sent back
    /// as it came, with nothing after it, the turn goes on.
    Paused,
}

impl Ending {
    /// Each API's words: Chat Completions (`length`, `content_filter`), Responses (the
    /// `incomplete_details.reason`), Anthropic and Bedrock (`max_tokens`, `refusal`,
    /// `guardrail_intervened`, `content_filtered`; Bedrock's `malformed_tool_use` and
    /// `malformed_model_output`), Gemini (`MAX_TOKENS`, `SAFETY` and the other filters,
    /// Vertex AI's `MODEL_ARMOR`, `blocked: ` and a prompt's `blockReason`), `refusal`
    /// for Chat's and Responses' refusals, and Anthropic's `pause_turn`.
    pub(crate) fn of(reason: Option<&str>) -> Ending {
        match reason {
            Some(blocked) if blocked.starts_with(crate::gemini::BLOCKED) => Ending::Declined,
            Some(
                "length"
                | "max_tokens"
                | "MAX_TOKENS"
                | "max_output_tokens"
                | "model_context_window_exceeded",
            ) => Ending::CutAtLimit,
            Some(
                "content_filter"
                | "refusal"
                | "guardrail_intervened"
                | "content_filtered"
                | "SAFETY"
                | "RECITATION"
                | "BLOCKLIST"
                | "PROHIBITED_CONTENT"
                | "SPII"
                | "IMAGE_SAFETY"
                | "IMAGE_PROHIBITED_CONTENT"
                | "IMAGE_RECITATION"
                | "MODEL_ARMOR"
                | "LANGUAGE",
            ) => Ending::Declined,
            Some(
                "MALFORMED_FUNCTION_CALL"
                | "UNEXPECTED_TOOL_CALL"
                | "malformed_tool_use"
                | "malformed_model_output",
            ) => Ending::MalformedCall,
            Some("pause_turn") => Ending::Paused,
            _ => Ending::Whole,
        }
    }
}

/// A model's answer: text, tool calls, or both.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// The text, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The tool calls, with real tool names (aliases mapped back).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ToolCall>,
    /// The tokens this request used.
    #[serde(default)]
    pub usage: Usage,
    /// Why the model stopped, in the API's words (`stop`, `tool_calls`, `length`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// What the model thought, as its API gave it to be sent back
    /// ([`Message::Reasoning`](crate::Message::Reasoning)): the run puts it in the transcript
    /// before the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<crate::Reasoning>,
}

impl ModelResponse {
    /// An answer in text.
    pub fn answer(text: impl Into<String>) -> Self {
        ModelResponse {
            text: Some(text.into()),
            ..ModelResponse::default()
        }
    }

    /// An answer of tool calls.
    pub fn calling(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        ModelResponse {
            calls: calls.into_iter().collect(),
            ..ModelResponse::default()
        }
    }

    /// The same answer, reporting this usage (one request is counted whatever `requests` says).
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }
}

/// Why a model request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The provider answered with an error status: its own message is kept. 429 and 5xx are
    /// retried first; `attempts` counts every request made.
    #[error("{provider} answered HTTP {status} after {attempts} attempt(s): {message}")]
    Status {
        /// The provider, as people write it.
        provider: &'static str,
        /// The HTTP status.
        status: u16,
        /// The provider's error message (or the start of the body when it has none).
        message: String,
        /// Requests made, retries included.
        attempts: u32,
    },
    /// The provider could not be reached, or the connection broke.
    #[error("could not reach {url} after {attempts} attempt(s): {message}")]
    Transport {
        /// The URL requested (never with a key in it).
        url: String,
        /// What went wrong.
        message: String,
        /// Requests made, retries included.
        attempts: u32,
    },
    /// The provider answered, but not in the API's format.
    #[error("{provider}'s answer is not what the API returns: {message}")]
    Malformed {
        /// The provider, as people write it.
        provider: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The client is not set up to send requests (no API key, a bad base URL...).
    #[error("the model client is not set up: {0}")]
    Setup(String),
    /// A [`ScriptedModel`](crate::ScriptedModel) was asked more than its script holds.
    #[error("the scripted model has no answer left for request {request}")]
    ScriptExhausted {
        /// The request's number, from 1.
        request: usize,
    },
    /// Any other failure of a model client.
    #[error("{0}")]
    Other(String),
}

/// The calls of a provider's whole answer in `format`: an error the answer reports is a
/// [`ModelError::Status`] with its message, one it cannot be read for a
/// [`ModelError::Malformed`].
pub(crate) fn answer_calls(
    provider: &'static str,
    format: Format,
    answer: &serde_json::Value,
    aliases: &tool_core::provider::Aliases,
) -> Result<Vec<ToolCall>, ModelError> {
    use tool_core::provider::{parse_calls, ParseError};
    parse_calls(format, answer, aliases).map_err(|e| match e {
        ParseError::ProviderError { message, .. } => ModelError::Status {
            provider,
            status: 200,
            message,
            attempts: 1,
        },
        other => ModelError::Malformed {
            provider,
            message: other.to_string(),
        },
    })
}
