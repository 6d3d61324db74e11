//! OpenAI Chat Completions over HTTP: any OpenAI-compatible endpoint (OpenAI, Azure, vLLM,
//! llama.cpp's server, Ollama). Tools are declared and calls parsed by `tool-core`'s provider
//! module; this module writes the messages and reads the text and usage, and `stream` reads
//! a streamed answer.

mod stream;

#[cfg(feature = "fuzzing")]
pub(crate) use stream::stream_decoder;

use std::borrow::Cow;

use reqwest::header::AUTHORIZATION;
use serde_json::{json, Value};
use tool_core::provider::{chat_tool_message_text, flagged_error_text, Aliases, Format};

use crate::http::{json_headers, ApiKey, JsonPost};
use crate::model::HttpModel;
use crate::tool_ids::{call_id_at, result_id_at};
use tool_model::message::{Message, Usage};
use tool_model::{
    ChatModel, ModelError, ModelFuture, ModelRequest, ModelResponse, Rendered, ToolChoice,
};
use tool_model::{Ending, ModelEventStream};

const PROVIDER: &str = "OpenAI Chat";

/// A [`ChatModel`] speaking OpenAI Chat Completions (`POST {base_url}/chat/completions`).
///
/// The API key comes from `OPENAI_API_KEY` unless set with [`OpenAiChatModel::with_api_key`](HttpModel::with_api_key);
/// a request without one is sent without `Authorization` (local servers need none). The key is
/// never logged, and `Debug` shows only whether there is one.
///
/// ```
/// use tool_providers::OpenAiChatModel;
///
/// let model = OpenAiChatModel::new("qwen2.5-7b-instruct")
///     .with_base_url("http://127.0.0.1:8080/v1");
/// assert_eq!(model.url(), "http://127.0.0.1:8080/v1/chat/completions");
/// ```
pub type OpenAiChatModel = HttpModel<OpenAiChat>;

/// OpenAI Chat Completions, the API of [`OpenAiChatModel`].
#[derive(Clone, Debug)]
pub struct OpenAiChat {
    url: String,
}

impl crate::model::sealed::Api for OpenAiChat {
    const NAME: &'static str = "OpenAiChatModel";

    fn set_base_url(model: &mut HttpModel<Self>, base_url: &str) {
        model.api.url = chat_url(base_url);
    }

    fn url(model: &HttpModel<Self>) -> &str {
        &model.api.url
    }
}

impl OpenAiChatModel {
    /// OpenAI's own endpoint.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.openai.com/v1";

    /// A client for `model` at [`OpenAiChatModel::DEFAULT_BASE_URL`], with the key in
    /// `OPENAI_API_KEY` if it is set.
    pub fn new(model: impl Into<String>) -> Self {
        let api = OpenAiChat {
            url: chat_url(Self::DEFAULT_BASE_URL),
        };
        HttpModel::with_api(api, model.into(), ApiKey::from_env("OPENAI_API_KEY"))
    }

    /// The request body for `request`, as JSON. The tools' declarations are written once per
    /// run and copied into every request as they are.
    pub fn body(&self, request: &ModelRequest) -> Result<Vec<u8>, ModelError> {
        self.write_body(request, false)
    }

    /// The request body, streamed or not.
    fn write_body(&self, request: &ModelRequest, stream: bool) -> Result<Vec<u8>, ModelError> {
        let fallback;
        let fallback_json;
        let made = request.tools.declarations();
        let (aliases, tools_json) = match (made, request.tools.tools_json_for(Format::OpenAiChat)) {
            (Some(declared), Some(json)) => (&declared.aliases, json),
            _ => {
                fallback = request.tools.declarations_or_declare(Format::OpenAiChat);
                fallback_json = fallback.tools.to_string();
                (&fallback.aliases, fallback_json.as_str())
            }
        };
        // The messages rendered for the run's earlier requests are kept: only the new ones
        // are written.
        let count = request.messages.len();
        let mut rendered = request
            .rendered()
            .take(Format::OpenAiChat, count)
            .unwrap_or(Rendered {
                format: Format::OpenAiChat,
                messages: 0,
                json: Vec::new(),
            });
        for index in rendered.messages..count {
            let Some(chat) = message(&request.messages, index, aliases) else {
                continue;
            };
            if !rendered.json.is_empty() {
                rendered.json.push(b',');
            }
            write(&mut rendered.json, &chat)?;
        }
        rendered.messages = count;
        let mut out = Vec::with_capacity(tools_json.len() + rendered.json.len() + 256);
        out.extend_from_slice(b"{\"model\":");
        write(&mut out, &self.model)?;
        out.extend_from_slice(b",\"messages\":[");
        if let Some(instructions) = &request.instructions {
            let system = ChatMessage::System {
                content: instructions,
            };
            write(&mut out, &system)?;
            if !rendered.json.is_empty() {
                out.push(b',');
            }
        }
        out.extend_from_slice(&rendered.json);
        out.push(b']');
        request.rendered().put(rendered);
        if request.offers_tools() {
            out.extend_from_slice(b",\"tools\":");
            out.extend_from_slice(tools_json.as_bytes());
            out.extend_from_slice(b",\"tool_choice\":");
            write(&mut out, &tool_choice(&request.tool_choice, aliases))?;
            if let Some(parallel) = request.parallel_tool_calls {
                out.extend_from_slice(b",\"parallel_tool_calls\":");
                write(&mut out, &parallel)?;
            }
        }
        if stream {
            out.extend_from_slice(br#","stream":true,"stream_options":{"include_usage":true}"#);
        }
        if let Some(format) = &request.response_format {
            out.extend_from_slice(b",\"response_format\":");
            write(&mut out, &format.openai_chat())?;
        }
        let generation = self.generation_for(request);
        let settings = [
            (
                "max_completion_tokens",
                generation.max_tokens.map(Value::from),
            ),
            (
                "temperature",
                generation.finite_temperature().map(Value::from),
            ),
            ("top_p", generation.finite_top_p().map(Value::from)),
            ("seed", generation.seed.map(Value::from)),
            (
                "stop",
                (!generation.stop.is_empty()).then(|| json!(generation.stop)),
            ),
        ];
        for (name, value) in settings {
            // A body field of the same name replaces it.
            if let Some(value) = value.filter(|_| !self.extra.contains_key(name)) {
                out.extend_from_slice(b",\"");
                out.extend_from_slice(name.as_bytes());
                out.extend_from_slice(b"\":");
                write(&mut out, &value)?;
            }
        }
        for (name, value) in &self.extra {
            out.push(b',');
            write(&mut out, name)?;
            out.push(b':');
            write(&mut out, value)?;
        }
        out.push(b'}');
        Ok(out)
    }
}

/// Appends `value` as JSON.
fn write(out: &mut Vec<u8>, value: &impl serde::Serialize) -> Result<(), ModelError> {
    serde_json::to_writer(out, value)
        .map_err(|e| ModelError::Setup(format!("the request is not JSON: {e}")))
}

impl OpenAiChatModel {
    /// A POST of `body` to the endpoint, with the key if there is one.
    fn post(&self, body: Vec<u8>) -> Result<JsonPost<'_>, ModelError> {
        crate::http::key_needed(
            self.api_key.as_ref(),
            &self.headers,
            "authorization",
            &self.api.url,
            "api.openai.com",
            "OPENAI_API_KEY",
        )?;
        let headers =
            self.headers
                .apply(json_headers(self.api_key.as_ref(), AUTHORIZATION, true)?)?;
        Ok(JsonPost {
            client: &self.client,
            url: &self.api.url,
            headers,
            body,
            retry: self.retry,
            provider: PROVIDER,
            sign: None,
        })
    }
}

fn chat_url(base_url: &str) -> String {
    format!("{}/chat/completions", base_url.trim_end_matches('/'))
}

/// A Chat Completions message, written straight from the neutral one.
#[derive(serde::Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum ChatMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Assistant {
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ChatCall<'a>>,
    },
    Tool {
        tool_call_id: Cow<'a, str>,
        content: Cow<'a, str>,
    },
}

/// A call as Chat Completions takes it back: a function's, or a custom tool's with its text.
#[derive(serde::Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum ChatCall<'a> {
    Function {
        id: Cow<'a, str>,
        function: ChatFunction<'a>,
    },
    Custom {
        id: Cow<'a, str>,
        custom: ChatCustom<'a>,
    },
}

#[derive(serde::Serialize)]
struct ChatCustom<'a> {
    name: &'a str,
    input: &'a str,
}

#[derive(serde::Serialize)]
struct ChatFunction<'a> {
    name: &'a str,
    /// Chat Completions takes the arguments as JSON text.
    arguments: Cow<'a, str>,
}

/// Message `index` of `messages` as a Chat Completions message; none for an empty answer
/// (refused before the last message) or another API's reasoning. A call without an id (a
/// Gemini model's, before a fallback) and its result get one made from their place.
fn message<'a>(
    messages: &'a [Message],
    index: usize,
    aliases: &'a Aliases,
) -> Option<ChatMessage<'a>> {
    let message = messages.get(index)?;
    if message.is_empty_answer() {
        return None;
    }
    Some(match message {
        Message::Reasoning(_) => return None,
        Message::User { text } => ChatMessage::User { content: text },
        Message::Assistant { text, calls } => ChatMessage::Assistant {
            content: text.as_deref(),
            tool_calls: calls
                .iter()
                .enumerate()
                .map(|(position, call)| {
                    let id = call_id_at(messages, index, position);
                    let name = aliases.provider_name(&call.name);
                    if aliases.takes_text(&call.name) {
                        let input = tool_core::text_input::input_text(&call.arguments);
                        return ChatCall::Custom {
                            id,
                            custom: ChatCustom { name, input },
                        };
                    }
                    ChatCall::Function {
                        id,
                        function: ChatFunction {
                            name,
                            arguments: match &call.arguments {
                                Value::String(text) => Cow::Borrowed(text.as_str()),
                                other => Cow::Owned(other.to_string()),
                            },
                        },
                    }
                })
                .collect(),
        },
        Message::Tool {
            text,
            is_error,
            attachments,
            ..
        } => ChatMessage::Tool {
            tool_call_id: result_id_at(messages, index),
            content: match flagged_error_text(text, *is_error) {
                text if attachments.is_empty() => text,
                text => Cow::Owned(chat_tool_message_text(&text, attachments)),
            },
        },
    })
}

fn tool_choice(choice: &ToolChoice, aliases: &Aliases) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::Required => json!("required"),
        ToolChoice::None => json!("none"),
        ToolChoice::Tool(name) => named(name, aliases),
        ToolChoice::Allowed(names, mode) => {
            let tools: Vec<Value> = names.iter().map(|name| named(name, aliases)).collect();
            json!({
                "type": "allowed_tools",
                "allowed_tools": { "mode": crate::allowed::mode(*mode), "tools": tools }
            })
        }
    }
}

/// A tool by name, as a choice names it: a function, or a custom tool.
fn named(name: &str, aliases: &Aliases) -> Value {
    let kind = aliases.tool_kind(name);
    json!({ "type": kind, kind: { "name": aliases.provider_name(name) } })
}

/// The usage of a Chat Completions answer (or of a stream's last chunk).
fn usage(answer: &Value) -> Usage {
    let count = |pointer: &str| answer.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        requests: 1,
        input_tokens: count("/usage/prompt_tokens"),
        output_tokens: count("/usage/completion_tokens"),
        cached_input_tokens: count("/usage/prompt_tokens_details/cached_tokens"),
        reasoning_tokens: count("/usage/completion_tokens_details/reasoning_tokens"),
    }
}

/// The text, calls and usage of a Chat Completions answer.
fn response(answer: &Value, aliases: &Aliases) -> Result<ModelResponse, ModelError> {
    let calls = crate::assemble::answer_calls(PROVIDER, Format::OpenAiChat, answer, aliases)?;
    let choice = answer.pointer("/choices/0");
    let text = choice
        .and_then(|c| c.pointer("/message/content"))
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_owned);
    // A refusal comes in a field of its own, with `stop` as the finish reason.
    let refusal = choice
        .and_then(|c| c.pointer("/message/refusal"))
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_owned);
    let finish_reason = match &refusal {
        Some(_) => Some("refusal".to_owned()),
        None => choice
            .and_then(|c| c.get("finish_reason"))
            .and_then(Value::as_str)
            .map(str::to_owned),
    };
    let text = text.or(refusal);
    Ok(ModelResponse {
        reasoning: None,
        text,
        calls,
        usage: usage(answer),
        ending: ending(finish_reason.as_deref()),
        finish_reason,
    })
}

/// What Chat Completions' `finish_reason` (or a refusal, read as `refusal`) says of how the
/// answer ended.
pub(crate) fn ending(reason: Option<&str>) -> Ending {
    match reason {
        Some("length") => Ending::CutAtLimit,
        Some("content_filter" | "refusal") => Ending::Declined,
        _ => Ending::Whole,
    }
}

impl ChatModel for OpenAiChatModel {
    fn respond<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            let answer = self.post(self.body(request)?)?.send().await?;
            let aliases = request.tools.aliases_for(Format::OpenAiChat);
            response(&answer, &aliases)
        })
    }

    fn respond_stream<'a>(&'a self, request: &'a ModelRequest) -> ModelEventStream<'a> {
        stream::respond_stream(self, request)
    }

    fn format(&self) -> Option<Format> {
        Some(Format::OpenAiChat)
    }

    fn model_name(&self) -> &str {
        &self.model
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_core::ToolCall;

    #[test]
    fn the_base_url_may_end_with_a_slash() {
        let model = OpenAiChatModel::new("m").with_base_url("http://localhost:8000/v1/");
        assert_eq!(model.url(), "http://localhost:8000/v1/chat/completions");
    }

    #[test]
    fn the_debug_form_shows_no_key() {
        let model = OpenAiChatModel::new("m").with_api_key(ApiKey::new("sk-very-secret"));
        let debug = format!("{model:?}");
        assert!(!debug.contains("sk-very-secret"), "{debug}");
        assert!(debug.contains("<hidden>"), "{debug}");
    }

    #[test]
    fn a_failed_result_reads_as_an_error() {
        let model = OpenAiChatModel::new("gpt-test").without_api_key();
        let request = ModelRequest::new(vec![
            Message::user("read it"),
            Message::Assistant {
                text: None,
                calls: vec![ToolCall::new("c1", "read", json!({}))],
            },
            Message::Tool {
                call_id: Some("c1".into()),
                name: "read".into(),
                text: "file not found".into(),
                is_error: true,
                attachments: Vec::new(),
                found_tools: Vec::new(),
            },
        ]);
        let body: Value = serde_json::from_slice(&model.body(&request).unwrap()).unwrap();
        assert_eq!(body["messages"][2]["content"], "Error: file not found");
    }

    #[test]
    fn a_refusal_is_the_text_and_the_reason() {
        let answer = json!({ "choices": [{ "index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": null, "refusal": "I can't help with that."
        } }] });
        let parsed = response(&answer, &Aliases::default()).unwrap();
        assert_eq!(parsed.text.as_deref(), Some("I can't help with that."));
        assert_eq!(parsed.finish_reason.as_deref(), Some("refusal"));
    }

    #[test]
    fn an_empty_answer_is_left_out() {
        let model = OpenAiChatModel::new("gpt-test").without_api_key();
        let request = ModelRequest::new(vec![
            Message::user("hi"),
            Message::Assistant {
                text: Some(String::new()),
                calls: Vec::new(),
            },
            Message::user("hello?"),
        ]);
        let body: Value = serde_json::from_slice(&model.body(&request).unwrap()).unwrap();
        assert_eq!(
            body["messages"],
            json!([
                { "role": "user", "content": "hi" },
                { "role": "user", "content": "hello?" }
            ])
        );
    }

    #[test]
    fn messages_become_chat_messages_with_calls_and_results() {
        let model = OpenAiChatModel::new("gpt-test").without_api_key();
        let mut request = ModelRequest::new(vec![
            Message::user("add 1 and 2"),
            Message::Assistant {
                text: None,
                calls: vec![ToolCall::new("c1", "add", json!({ "a": 1, "b": 2 }))],
            },
            Message::Tool {
                call_id: Some("c1".into()),
                name: "add".into(),
                text: "3".into(),
                is_error: false,
                attachments: Vec::new(),
                found_tools: Vec::new(),
            },
        ]);
        request.instructions = Some("Be brief.".into());
        let body: Value = serde_json::from_slice(&model.body(&request).unwrap()).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "gpt-test",
                "messages": [
                    { "role": "system", "content": "Be brief." },
                    { "role": "user", "content": "add 1 and 2" },
                    { "role": "assistant", "content": null, "tool_calls": [
                        { "id": "c1", "type": "function", "function": { "name": "add", "arguments": "{\"a\":1,\"b\":2}" } }
                    ]},
                    { "role": "tool", "tool_call_id": "c1", "content": "3" }
                ]
            })
        );
    }

    #[test]
    fn calls_without_ids_and_their_results_get_matching_ids() {
        // A Gemini model's turn, carried over to a Chat model after a fallback.
        let model = OpenAiChatModel::new("m").without_api_key();
        let call = |name: &str| ToolCall {
            id: None,
            name: name.into(),
            arguments: json!({}),
        };
        let result = |name: &str| Message::Tool {
            call_id: None,
            name: name.into(),
            text: "ok".into(),
            is_error: false,
            attachments: Vec::new(),
            found_tools: Vec::new(),
        };
        let mut request = ModelRequest::new(vec![
            Message::user("both"),
            Message::Assistant {
                text: None,
                calls: vec![call("a"), call("b")],
            },
            result("a"),
            result("b"),
        ]);
        let first: Value = serde_json::from_slice(&model.body(&request).unwrap()).unwrap();
        let ids = |body: &Value| {
            let m = &body["messages"];
            [
                m[1]["tool_calls"][0]["id"].clone(),
                m[1]["tool_calls"][1]["id"].clone(),
                m[2]["tool_call_id"].clone(),
                m[3]["tool_call_id"].clone(),
            ]
        };
        let [a, b, result_a, result_b] = ids(&first);
        assert!(a.as_str().is_some_and(|id| !id.is_empty()), "{first}");
        assert_ne!(a, b);
        assert_eq!((result_a, result_b), (a.clone(), b.clone()));
        // The next request, rendered from the kept messages, says the same.
        request.messages.push(Message::user("again"));
        let second: Value = serde_json::from_slice(&model.body(&request).unwrap()).unwrap();
        assert_eq!(ids(&second), ids(&first));
    }

    #[test]
    fn a_later_request_renders_only_its_new_messages_and_says_the_same() {
        let model = OpenAiChatModel::new("m").without_api_key();
        let mut request = ModelRequest::new(vec![Message::user("a")]);
        request.instructions = Some("Be brief.".into());
        model.body(&request).unwrap();
        request.messages.push(Message::assistant("b"));
        request.messages.push(Message::user("c"));
        let parse = |bytes: Vec<u8>| serde_json::from_slice::<Value>(&bytes).unwrap();
        let cached = parse(model.body(&request).unwrap());
        let mut fresh = ModelRequest::new(request.messages.clone());
        fresh.instructions = Some("Be brief.".into());
        assert_eq!(cached, parse(model.body(&fresh).unwrap()));
        assert_eq!(cached["messages"].as_array().map(Vec::len), Some(4));
    }

    #[test]
    fn text_calls_and_usage_are_read_from_the_answer() {
        let answer = json!({
            "id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{ "index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "Let me add.",
                "tool_calls": [{ "id": "c1", "type": "function", "function": { "name": "add", "arguments": "{\"a\":1,\"b\":2}" } }]
            }}],
            "usage": { "prompt_tokens": 50, "completion_tokens": 12, "total_tokens": 62,
                "prompt_tokens_details": { "cached_tokens": 32 },
                "completion_tokens_details": { "reasoning_tokens": 4 } }
        });
        let response = response(&answer, &Aliases::default()).unwrap();
        assert_eq!(response.text.as_deref(), Some("Let me add."));
        assert_eq!(
            response.calls,
            vec![ToolCall::new("c1", "add", json!({ "a": 1, "b": 2 }))]
        );
        assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            response.usage,
            Usage {
                requests: 1,
                input_tokens: 50,
                output_tokens: 12,
                cached_input_tokens: 32,
                reasoning_tokens: 4
            }
        );
    }

    #[test]
    fn an_error_object_in_a_200_answer_is_a_status_error_with_its_message() {
        let answer = json!({ "error": { "message": "model overloaded", "type": "server_error" } });
        let err = response(&answer, &Aliases::default()).unwrap_err();
        assert!(
            matches!(&err, ModelError::Status { message, .. } if message == "model overloaded"),
            "{err:?}"
        );
    }
}
