//! The conversation in no provider's format: what each model client translates to its API's
//! messages, and what a run's transcript is made of.

use std::ops::{Add, AddAssign};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tool_core::provider::CallResult;
use tool_core::{Content, ToolCall, ToolSpec};

/// One message of a conversation.
///
/// The instructions (the system prompt) are not a message: they are the request's
/// [`instructions`](crate::ModelRequest::instructions), sent first by every client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// What the user said.
    User {
        /// The text.
        text: String,
    },
    /// What the model answered: text, tool calls, or both.
    Assistant {
        /// The text, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// The tool calls, in the order the model made them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        calls: Vec<ToolCall>,
    },
    /// What the model thought before the answer that follows it, as its API gave it
    /// ([`Reasoning`]).
    Reasoning(Reasoning),
    /// The result of one tool call, as the model reads it.
    Tool {
        /// The id of the call it answers (`None` when the API gave the call none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        /// The tool's real name.
        name: String,
        /// The output's text, or the error as the model should read it.
        text: String,
        /// Whether the call failed.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        /// The output's attachments (images, audio, files, resources;
        /// [`ToolOutput::attachments`](tool_core::ToolOutput::attachments)), each sent where
        /// the API has a place for its kind and told in words in the text where not
        /// (docs/providers.md, "Rich results").
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<Content>,
        /// The deferred tools a tool search found, for the model to load
        /// ([`Content::ToolReference`]): Anthropic gets `tool_reference` blocks, OpenAI
        /// Responses a `tool_search_output` of their declarations, the other APIs the text.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        found_tools: Vec<String>,
    },
}

/// What a model thought before an answer, as its API gave it: Anthropic's `thinking` and
/// `redacted_thinking` blocks, Bedrock's `reasoningContent`, Gemini's thought signatures. Sent back, with that answer, to
/// the API that gave it and to no other: Anthropic with extended thinking and Gemini 3 refuse
/// a conversation with tool calls without them. An Anthropic answer with blocks of the tools
/// Anthropic runs (`server_tool_use` and its results) is kept whole, all its content blocks in
/// order, and goes back to Anthropic as it came, as a paused turn (`pause_turn`) must.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reasoning {
    /// The API that gave it: `anthropic`, `bedrock`, `gemini` or `openai_responses`.
    pub api: String,
    /// The endpoint and model that gave it, where only they can read it back (Gemini's
    /// thought signatures, OpenAI Responses' encrypted reasoning): it goes back to a client
    /// of that endpoint and model, to no other of its API (a [`FallbackModel`]'s second
    /// model, a conversation carried on by another model). `None` where any endpoint of the
    /// API reads it (Anthropic's signatures, Bedrock's), and in a transcript stored before
    /// this was kept: it goes to any client of its API.
    ///
    /// [`FallbackModel`]: crate::FallbackModel
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// What it gave, as it gave it (for Gemini, each signature with the part it was on:
    /// `{"thoughtSignature": .., "call": n}` for the answer's call `n`, `"text": true` for
    /// its text).
    pub blocks: Vec<Value>,
}

impl Reasoning {
    /// What `api` gave to be sent back, when it gave anything.
    pub fn given(api: &str, blocks: Vec<Value>) -> Option<Reasoning> {
        (!blocks.is_empty()).then(|| Reasoning {
            api: api.to_owned(),
            source: None,
            blocks,
        })
    }

    /// What `source` (an endpoint and model) gave `api`, to go back to that source alone.
    pub fn given_by(api: &str, source: &str, blocks: Vec<Value>) -> Option<Reasoning> {
        let mut reasoning = Reasoning::given(api, blocks)?;
        reasoning.source = Some(source.to_owned());
        Some(reasoning)
    }
}

/// Adds `piece` to the text `field` of `block`, starting it when there is none: a streamed
/// block of reasoning grown as its deltas come.
pub fn grow_text(block: &mut serde_json::Map<String, Value>, field: &str, piece: &str) {
    match block.get_mut(field) {
        Some(Value::String(so_far)) => so_far.push_str(piece),
        _ => {
            block.insert(field.to_owned(), Value::String(piece.to_owned()));
        }
    }
}

impl Message {
    /// Whether this is an answer with neither text nor calls. APIs refuse such a message
    /// anywhere but last, so the clients leave it out of a request.
    pub fn is_empty_answer(&self) -> bool {
        match self {
            Message::Assistant { text, calls } => {
                calls.is_empty() && text.as_deref().is_none_or(|t| t.trim().is_empty())
            }
            _ => false,
        }
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User { text: text.into() }
    }

    /// An assistant message of text alone.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::Assistant {
            text: Some(text.into()),
            calls: Vec::new(),
        }
    }

    /// The message answering a call with its result: the output's text, or the error's text
    /// for the model ([`ToolError::to_model_text`](tool_core::ToolError::to_model_text)).
    pub fn tool_result(result: &CallResult) -> Self {
        let found_tools = match &result.result {
            Ok(output) if !output.is_error => {
                output.referenced_tools().map(str::to_owned).collect()
            }
            _ => Vec::new(),
        };
        let (text, is_error, attachments) = match &result.result {
            Ok(output) => {
                let attachments = output.attachments().cloned().collect();
                (output.to_text(), output.is_error, attachments)
            }
            Err(error) => (error.to_model_text(), true, Vec::new()),
        };
        Message::Tool {
            call_id: result.call.id.clone(),
            name: result.call.name.clone(),
            text,
            is_error,
            attachments,
            found_tools,
        }
    }
}

/// Tokens used, as the API reports them; summed over the requests of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Model requests made.
    pub requests: u64,
    /// Tokens read (the prompt), cached ones included.
    pub input_tokens: u64,
    /// Tokens written, reasoning ones included.
    pub output_tokens: u64,
    /// Input tokens served from the provider's cache, where the API says.
    pub cached_input_tokens: u64,
    /// Output tokens spent on reasoning, where the API says.
    pub reasoning_tokens: u64,
}

impl Usage {
    /// Input and output tokens together.
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        // Counts come from the provider: a wrong one saturates rather than overflowing.
        self.requests = self.requests.saturating_add(other.requests);
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cached_input_tokens = self
            .cached_input_tokens
            .saturating_add(other.cached_input_tokens);
        self.reasoning_tokens = self.reasoning_tokens.saturating_add(other.reasoning_tokens);
    }
}

impl Add for Usage {
    type Output = Usage;

    fn add(mut self, other: Usage) -> Usage {
        self += other;
        self
    }
}

/// The reasoning that goes back to `api` at `source` with the answer it came with: a
/// [`Message::Reasoning`] of that API right before `messages[index]`, given by that source
/// or by one it does not name.
pub fn reasoning_before<'a>(
    messages: &'a [Message],
    index: usize,
    api: &str,
    source: Option<&str>,
) -> &'a [Value] {
    match index.checked_sub(1).and_then(|i| messages.get(i)) {
        Some(Message::Reasoning(reasoning))
            if reasoning.api == api
                && (reasoning.source.is_none() || reasoning.source.as_deref() == source) =>
        {
            &reasoning.blocks
        }
        _ => &[],
    }
}

/// Whether the messages hold tool calls or results: an API that takes them only beside tool
/// definitions (Anthropic, Bedrock) must be sent some even when no tool is offered now.
pub fn has_tool_turns(messages: &[Message]) -> bool {
    messages.iter().any(|m| match m {
        Message::Assistant { calls, .. } => !calls.is_empty(),
        Message::Tool { .. } => true,
        Message::User { .. } | Message::Reasoning(_) => false,
    })
}

/// The tools the conversation called, with an open schema, to declare when none is offered:
/// Converse and Anthropic refuse tool calls and results in a request without tools. Declared
/// as any tool is, they are named as the API takes names, and the calls are written under the
/// same names.
pub fn called_tools(messages: &[Message]) -> Vec<ToolSpec> {
    let mut names: Vec<&str> = Vec::new();
    for message in messages {
        let called = match message {
            Message::Assistant { calls, .. } => calls.iter().map(|c| c.name.as_str()).collect(),
            Message::Tool { name, .. } => vec![name.as_str()],
            Message::User { .. } | Message::Reasoning(_) => Vec::new(),
        };
        for name in called {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    let spec = |name: &str| ToolSpec {
        name: name.to_owned(),
        description: "A tool called earlier in this conversation; not offered now.".into(),
        parameters: json!({ "type": "object" }),
        output_schema: None,
        metadata: Default::default(),
    };
    names.into_iter().map(spec).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tool_core::{ToolError, ToolOutput};

    #[test]
    fn a_tool_message_carries_the_error_text_the_model_reads() {
        let result = CallResult {
            call: ToolCall::new("c1", "ad", json!({})),
            result: Err(ToolError::UnknownTool {
                name: "ad".into(),
                suggestions: vec!["add".into()],
            }),
        };
        assert_eq!(
            Message::tool_result(&result),
            Message::Tool {
                call_id: Some("c1".into()),
                name: "ad".into(),
                text: "There is no tool named `ad`. Did you mean `add`?".into(),
                is_error: true,
                attachments: Vec::new(),
                found_tools: Vec::new(),
            }
        );
        let shown = CallResult {
            call: ToolCall::new("c3", "chart", json!({})),
            result: Ok(ToolOutput {
                content: vec![
                    tool_core::Content::Text {
                        text: "the chart".into(),
                    },
                    tool_core::Content::Image {
                        data: "iVBORw0KGgo=".into(),
                        mime_type: "image/png".into(),
                    },
                ],
                ..ToolOutput::default()
            }),
        };
        let Message::Tool {
            text, attachments, ..
        } = Message::tool_result(&shown)
        else {
            panic!("a tool message");
        };
        assert_eq!(text, "the chart");
        assert_eq!(
            attachments,
            [tool_core::Content::image("iVBORw0KGgo=", "image/png")]
        );
        let ok = CallResult {
            call: ToolCall::new("c2", "add", json!({})),
            result: Ok(ToolOutput::text("3")),
        };
        assert!(
            matches!(Message::tool_result(&ok), Message::Tool { text, is_error: false, .. } if text == "3")
        );
    }

    #[test]
    fn messages_serialize_with_their_role() {
        let message = Message::Assistant {
            text: None,
            calls: vec![ToolCall::new("c1", "add", json!({ "a": 1 }))],
        };
        let value = serde_json::to_value(&message).unwrap();
        assert_eq!(
            value,
            json!({ "role": "assistant", "calls": [{ "id": "c1", "name": "add", "arguments": { "a": 1 } }] })
        );
        assert_eq!(serde_json::from_value::<Message>(value).unwrap(), message);
    }

    #[test]
    fn usage_adds_field_by_field() {
        let a = Usage {
            requests: 1,
            input_tokens: 10,
            output_tokens: 5,
            cached_input_tokens: 2,
            reasoning_tokens: 1,
        };
        let sum = a + a;
        assert_eq!(sum.requests, 2);
        assert_eq!(sum.input_tokens, 20);
        assert_eq!(sum.cached_input_tokens, 4);
        assert_eq!(sum.reasoning_tokens, 2);
        assert_eq!(sum.total_tokens(), 30);
    }

    #[test]
    fn usage_from_a_provider_near_u64_max_saturates() {
        let huge = Usage {
            requests: 1,
            input_tokens: u64::MAX,
            output_tokens: u64::MAX - 1,
            cached_input_tokens: u64::MAX,
            reasoning_tokens: 0,
        };
        let sum = huge + huge;
        assert_eq!(sum.input_tokens, u64::MAX);
        assert_eq!(sum.total_tokens(), u64::MAX);
    }
}
