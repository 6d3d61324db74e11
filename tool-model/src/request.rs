//! One request to a model, in no provider's format.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use tool_core::provider::{declare, Declarations, DeclareOptions, Format};

use crate::generation::Generation;
use crate::message::{called_tools, has_tool_turns, Message};
use crate::offer::OfferedTools;
use crate::structured::ResponseFormat;

/// How long the provider keeps a request's prefix cached, for the clients whose API caches
/// only where asked (`AnthropicModel::with_prompt_cache` and `BedrockModel::with_prompt_cache`
/// in `tool-providers`).
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
    /// The model may call only the tools of these names (and must call one of them with
    /// [`AllowedMode::Required`]), the others staying declared: the request's tools, and with
    /// them the provider's prompt cache, stay the same from one request to the next.
    ///
    /// OpenAI (Chat and Responses) send it as `allowed_tools`, Gemini as
    /// `allowedFunctionNames` with mode `ANY` (required) or `VALIDATED` (auto). Anthropic and
    /// Bedrock have no such choice: they are sent the declarations of these tools alone, with
    /// `any` or `auto`.
    Allowed(Vec<String>, AllowedMode),
}

/// Whether a model given [`ToolChoice::Allowed`] must call one of the tools, or may answer in
/// text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AllowedMode {
    /// The model may call one of the tools, or answer.
    #[default]
    Auto,
    /// The model must call one of the tools.
    Required,
}

impl ToolChoice {
    /// [`ToolChoice::Allowed`] with [`AllowedMode::Auto`]: these tools only, or an answer.
    pub fn allowed<S: Into<String>>(names: impl IntoIterator<Item = S>) -> Self {
        ToolChoice::Allowed(
            names.into_iter().map(Into::into).collect(),
            AllowedMode::Auto,
        )
    }

    /// Whether `format`'s API restricts the calls without changing the declarations
    /// (OpenAI Chat and Responses' `allowed_tools`, Gemini's `allowedFunctionNames`), so that
    /// [`ToolChoice::Allowed`] keeps the request's tools, and the prompt cache, the same.
    pub fn keeps_declarations_in(format: Format) -> bool {
        matches!(
            format,
            Format::OpenAiChat | Format::OpenAiResponses | Format::Gemini
        )
    }

    /// This choice with the calls restricted to `names` as well: `Auto` and `Required` become
    /// [`ToolChoice::Allowed`] of those names, an `Allowed` keeps the names in both, a named
    /// tool stays named when it is among them (else any of them is required), and no name
    /// left means no tools ([`ToolChoice::None`]).
    pub fn within(self, names: &[String]) -> ToolChoice {
        let keep = |mode: AllowedMode, of: Vec<String>| {
            if of.is_empty() {
                ToolChoice::None
            } else {
                ToolChoice::Allowed(of, mode)
            }
        };
        match self {
            ToolChoice::None => ToolChoice::None,
            ToolChoice::Auto => keep(AllowedMode::Auto, names.to_vec()),
            ToolChoice::Required => keep(AllowedMode::Required, names.to_vec()),
            ToolChoice::Tool(name) if names.contains(&name) => ToolChoice::Tool(name),
            ToolChoice::Tool(_) => keep(AllowedMode::Required, names.to_vec()),
            ToolChoice::Allowed(allowed, mode) => {
                let both = allowed.into_iter().filter(|n| names.contains(n)).collect();
                keep(mode, both)
            }
        }
    }

    /// Whether this choice leaves the tool `name` (of those offered) callable: any under
    /// `Auto`, `Required` and `Tool` (which forces one call, not the others away), none under
    /// `None`, and only the names of `Allowed`.
    pub fn allows(&self, name: &str) -> bool {
        match self {
            ToolChoice::None => false,
            ToolChoice::Allowed(names, _) => names.iter().any(|n| n == name),
            ToolChoice::Auto | ToolChoice::Required | ToolChoice::Tool(_) => true,
        }
    }
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
    /// How the answer is generated (its length, temperature...): each setting made here wins
    /// over the client's own.
    pub generation: Generation,
    /// Whether the model may call several tools in one answer; `None` leaves it to the API
    /// (each allows it). OpenAI's two APIs send `parallel_tool_calls`, Anthropic's
    /// `tool_choice.disable_parallel_tool_use`; Gemini has no such setting. Sent only with tools.
    pub parallel_tool_calls: Option<bool>,
    /// What a client rendered of `messages`, for the next request.
    rendered: RenderCache,
}

/// The messages a client rendered for an earlier request of a run, in its API's format
/// ([`ModelRequest::rendered`]): a client that renders them again for each step renders only
/// the new ones.
#[derive(Clone, Default)]
pub struct RenderCache(Arc<Mutex<Option<Rendered>>>);

/// Rendered messages: how many, and their JSON, comma-separated.
#[derive(Debug)]
pub struct Rendered {
    /// The API they were rendered for.
    pub format: Format,
    /// How many of the request's messages, from the first.
    pub messages: usize,
    /// Their JSON, comma-separated.
    pub json: Vec<u8>,
}

impl RenderCache {
    /// What was rendered in `format` of at most `messages` messages; taken out, to be put back.
    pub fn take(&self, format: Format, messages: usize) -> Option<Rendered> {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        slot.take()
            .filter(|r| r.format == format && r.messages <= messages)
    }

    /// Keeps what was rendered for the next request.
    pub fn put(&self, rendered: Rendered) {
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
            generation: Generation::default(),
            parallel_tool_calls: None,
            rendered: RenderCache::default(),
        }
    }

    /// What a client rendered of the messages for an earlier request of the same run.
    pub fn rendered(&self) -> &RenderCache {
        &self.rendered
    }

    /// Whether the request offers tools: some were offered and the choice is not
    /// [`ToolChoice::None`].
    pub fn offers_tools(&self) -> bool {
        self.tool_choice != ToolChoice::None && !self.tools.is_empty()
    }

    /// The tool declarations to send in `format`: the offered tools', or, when none is offered
    /// and the messages hold calls, the tools they called (with an open schema), for the APIs
    /// that take calls and results only beside tool definitions (Anthropic, Bedrock).
    pub fn declarations_for(&self, format: Format) -> Cow<'_, Declarations> {
        if self.tools.is_empty() && has_tool_turns(&self.messages) {
            let called = called_tools(&self.messages);
            return Cow::Owned(declare(&called, format, &DeclareOptions::default()));
        }
        self.tools.declarations_or_declare(format)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_choice_within_names_restricts_the_calls_and_never_widens_them() {
        let names = vec!["a".to_owned(), "b".to_owned()];
        assert_eq!(
            ToolChoice::Auto.within(&names),
            ToolChoice::Allowed(names.clone(), AllowedMode::Auto)
        );
        assert_eq!(
            ToolChoice::Required.within(&names),
            ToolChoice::Allowed(names.clone(), AllowedMode::Required)
        );
        assert_eq!(
            ToolChoice::Tool("a".into()).within(&names),
            ToolChoice::Tool("a".into())
        );
        assert_eq!(
            ToolChoice::Tool("z".into()).within(&names),
            ToolChoice::Allowed(names.clone(), AllowedMode::Required)
        );
        assert_eq!(
            ToolChoice::allowed(["b", "z"]).within(&names),
            ToolChoice::allowed(["b"])
        );
        assert_eq!(ToolChoice::allowed(["z"]).within(&names), ToolChoice::None);
        assert_eq!(ToolChoice::Auto.within(&[]), ToolChoice::None);
        assert_eq!(ToolChoice::None.within(&names), ToolChoice::None);
    }
}
