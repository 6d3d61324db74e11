//! A model's answer, and how it ended.

use serde::{Deserialize, Serialize};
use tool_core::ToolCall;

use crate::message::{Reasoning, Usage};

/// How an answer ended. Each client reads it from its API's own finish reason; the loop acts on
/// it (a cut or declined answer ends the run, a paused turn is sent back) without knowing any
/// API's words.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Ending {
    /// As the model meant it to: an answer, or calls.
    #[default]
    Whole,
    /// At the model's output limit (or its context window's).
    CutAtLimit,
    /// The model declined, or the API's filter stopped it.
    Declined,
    /// The model tried to call a tool and wrote the call wrong (Gemini's
    /// `MALFORMED_FUNCTION_CALL`, Bedrock's `malformed_tool_use`), or called one it was not given
    /// (`UNEXPECTED_TOOL_CALL`): no call came.
    MalformedCall,
    /// The API paused a long turn of the tools it runs (Anthropic's `pause_turn`): sent back
    /// as it came, with nothing after it, the turn goes on.
    Paused,
}

impl Ending {
    /// Whether the answer ended as the model meant it to.
    pub fn is_whole(&self) -> bool {
        *self == Ending::Whole
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
    /// Why the model stopped, in the API's words (`stop`, `tool_calls`, `length`...), for
    /// people and traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// How the answer ended, as the client read `finish_reason`: what the loop acts on.
    #[serde(default, skip_serializing_if = "Ending::is_whole")]
    pub ending: Ending,
    /// What the model thought, as its API gave it to be sent back
    /// ([`Message::Reasoning`](crate::Message::Reasoning)): the run puts it in the transcript
    /// before the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Reasoning>,
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

    /// The same answer, ended this way, for this reason in the API's words.
    pub fn ended(mut self, ending: Ending, reason: impl Into<String>) -> Self {
        self.ending = ending;
        self.finish_reason = Some(reason.into());
        self
    }
}
