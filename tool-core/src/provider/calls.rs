use serde_json::Value;

use super::{Aliases, Format};
use crate::ToolCall;

/// A response that is not what the API returns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The response is the provider's error object (`{"error": {...}}`), not a model's answer.
    #[error("{} error: {message}", with_article(*.provider))]
    ProviderError {
        /// The format that was expected.
        expected: Format,
        /// Whose error shape it has.
        provider: Provider,
        /// The error's own message.
        message: String,
    },
    /// The response has the shape of another API's response.
    #[error("this looks like {} response, not {}", with_article(.found.title()), .expected.title())]
    OtherFormat {
        /// The format that was expected.
        expected: Format,
        /// The format it looks like.
        found: Format,
    },
    /// The response is not in the expected shape.
    #[error("not a {format} response: {why}")]
    Malformed {
        /// The format that was expected.
        format: Format,
        /// What is wrong.
        why: String,
    },
}

/// Whose error object a response is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// OpenAI (Chat, Responses): `{"error": {"message", "type", "code"}}`.
    OpenAi,
    /// Anthropic: `{"type": "error", "error": {"type", "message"}}`.
    Anthropic,
    /// Google Gemini: `{"error": {"code", "message", "status"}}`.
    Gemini,
    /// Amazon Bedrock: `{"message": ...}` with no `output`.
    Bedrock,
    /// A JSON-RPC (MCP) error: `{"jsonrpc": "2.0", "error": {"code", "message"}}`.
    JsonRpc,
}

impl Provider {
    /// The provider's name, as people write it.
    pub fn title(self) -> &'static str {
        match self {
            Provider::OpenAi => "OpenAI",
            Provider::Anthropic => "Anthropic",
            Provider::Gemini => "Gemini",
            Provider::Bedrock => "Bedrock",
            Provider::JsonRpc => "JSON-RPC",
        }
    }
}

impl std::fmt::Display for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.title())
    }
}

fn with_article(name: impl std::fmt::Display) -> String {
    let name = name.to_string();
    let article = if name.starts_with(['A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}

/// The tool calls in a provider's whole response, as that API returns it, with aliased names
/// mapped back to the real ones and arguments a strict declaration encoded decoded.
///
/// Arguments the API sends as JSON text (OpenAI) are parsed. Text that is not valid JSON does
/// not fail the response: that call keeps the raw text as its arguments, and executing it
/// reports `InvalidArguments` to the model, naming the JSON error.
pub fn parse_calls(
    format: Format,
    response: &Value,
    aliases: &Aliases,
) -> Result<Vec<ToolCall>, ParseError> {
    let fail = |why: &str| ParseError::Malformed {
        format,
        why: why.to_owned(),
    };
    if !response.is_object() {
        return Err(fail("the response must be a JSON object"));
    }
    if let Some((provider, message)) = error_object(response) {
        return Err(ParseError::ProviderError {
            expected: format,
            provider,
            message,
        });
    }
    if !has_shape(format, response) {
        return Err(
            match Format::ALL.into_iter().find(|other| {
                *other != format && *other != Format::Mcp && has_shape(*other, response)
            }) {
                Some(found) => ParseError::OtherFormat {
                    expected: format,
                    found,
                },
                None => fail(&format!("it has no {}", signature(format))),
            },
        );
    }
    let mut calls = Vec::new();
    let mut push =
        |id: Option<&Value>, name: Option<&Value>, arguments: Value| -> Result<(), ParseError> {
            let name = name
                .and_then(Value::as_str)
                .ok_or_else(|| fail("a tool call has no `name`"))?;
            let id = id.and_then(|id| match id {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            });
            let name = aliases.real_name(name);
            calls.push(ToolCall {
                id,
                arguments: aliases.decode_arguments(name, arguments),
                name: name.to_owned(),
            });
            Ok(())
        };
    match format {
        Format::OpenAiChat => {
            for choice in array(response.get("choices")) {
                let tool_calls = choice.get("message").and_then(|m| m.get("tool_calls"));
                for call in array(tool_calls) {
                    let function = call
                        .get("function")
                        .ok_or_else(|| fail("a tool call has no `function`"))?;
                    push(
                        call.get("id"),
                        function.get("name"),
                        text_arguments(function.get("arguments")),
                    )?;
                }
            }
        }
        Format::OpenAiResponses => {
            for item in array(response.get("output"))
                .filter(|i| i.get("type").and_then(Value::as_str) == Some("function_call"))
            {
                push(
                    item.get("call_id"),
                    item.get("name"),
                    text_arguments(item.get("arguments")),
                )?;
            }
        }
        Format::Anthropic => {
            for block in array(response.get("content"))
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
            {
                push(
                    block.get("id"),
                    block.get("name"),
                    object_arguments(block.get("input")),
                )?;
            }
        }
        Format::Gemini => {
            for candidate in array(response.get("candidates")) {
                let parts = candidate.get("content").and_then(|c| c.get("parts"));
                for call in array(parts).filter_map(|p| p.get("functionCall")) {
                    push(
                        call.get("id"),
                        call.get("name"),
                        object_arguments(call.get("args")),
                    )?;
                }
            }
        }
        Format::Bedrock => {
            let content = response
                .get("output")
                .and_then(|o| o.get("message"))
                .and_then(|m| m.get("content"));
            for tool_use in array(content).filter_map(|b| b.get("toolUse")) {
                push(
                    tool_use.get("toolUseId"),
                    tool_use.get("name"),
                    object_arguments(tool_use.get("input")),
                )?;
            }
        }
        Format::Mcp => {
            // A whole `tools/call` request, or its `params`.
            let (id, params) = match response.get("params") {
                Some(params) => {
                    if response
                        .get("method")
                        .and_then(Value::as_str)
                        .is_some_and(|m| m != "tools/call")
                    {
                        return Err(fail("the request's method is not `tools/call`"));
                    }
                    (response.get("id"), params)
                }
                None => (None, response),
            };
            push(
                id,
                params.get("name"),
                object_arguments(params.get("arguments")),
            )?;
        }
    }
    Ok(calls)
}

/// The provider's error object in a response, and its message.
fn error_object(response: &Value) -> Option<(Provider, String)> {
    let Some(error) = response.get("error").filter(|e| !e.is_null()) else {
        // Bedrock's error body is only a message (its kind is in a header).
        let lone_message = response
            .get("message")
            .and_then(Value::as_str)
            .filter(|_| response.get("output").is_none() && response.get("content").is_none());
        return lone_message.map(|m| (Provider::Bedrock, m.to_owned()));
    };
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map_or_else(|| error.to_string(), str::to_owned);
    let provider = if response.get("type").and_then(Value::as_str) == Some("error") {
        Provider::Anthropic
    } else if response.get("jsonrpc").is_some() {
        Provider::JsonRpc
    } else if error.get("status").is_some_and(Value::is_string) {
        Provider::Gemini
    } else {
        Provider::OpenAi
    };
    Some((provider, message))
}

/// Whether a response has the fields that mark an answer of this API (with or without calls).
fn has_shape(format: Format, response: &Value) -> bool {
    let is_array = |key: &str| response.get(key).is_some_and(Value::is_array);
    match format {
        Format::OpenAiChat => is_array("choices"),
        Format::OpenAiResponses => is_array("output"),
        Format::Anthropic => is_array("content"),
        // A prompt blocked by a safety filter has feedback and no candidates.
        Format::Gemini => is_array("candidates") || response.get("promptFeedback").is_some(),
        Format::Bedrock => response
            .get("output")
            .is_some_and(|o| o.get("message").is_some()),
        Format::Mcp => true,
    }
}

/// The field `has_shape` looks for, in words.
fn signature(format: Format) -> &'static str {
    match format {
        Format::OpenAiChat => "`choices` array",
        Format::OpenAiResponses => "`output` array",
        Format::Anthropic => "`content` array",
        Format::Gemini => "`candidates` array",
        Format::Bedrock => "`output.message`",
        Format::Mcp => "`params`",
    }
}

fn array(value: Option<&Value>) -> impl Iterator<Item = &Value> {
    value.and_then(Value::as_array).into_iter().flatten()
}

/// Arguments sent as JSON text: parsed, or kept as the raw text when they are not JSON.
fn text_arguments(value: Option<&Value>) -> Value {
    match value {
        Some(Value::String(text)) if text.trim().is_empty() => Value::Object(Default::default()),
        Some(Value::String(text)) => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
        }
        Some(other) => other.clone(),
        None => Value::Object(Default::default()),
    }
}

/// Arguments sent as a JSON object; missing means none.
fn object_arguments(value: Option<&Value>) -> Value {
    match value {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(other) => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn malformed_arguments_keep_the_raw_text_and_do_not_fail_the_response() {
        let response = json!({ "choices": [{ "message": { "tool_calls": [
            { "id": "a", "type": "function", "function": { "name": "f", "arguments": "{\"x\": 1}" } },
            { "id": "b", "type": "function", "function": { "name": "f", "arguments": "{\"x\": " } }
        ]}}]});
        let calls = parse_calls(Format::OpenAiChat, &response, &Aliases::default()).unwrap();
        assert_eq!(calls[0].arguments, json!({ "x": 1 }));
        assert_eq!(calls[1].arguments, json!("{\"x\": "));
    }

    #[test]
    fn a_response_without_calls_has_none_and_a_non_object_is_an_error() {
        let none = parse_calls(
            Format::Anthropic,
            &json!({ "content": [{ "type": "text", "text": "hi" }] }),
            &Aliases::default(),
        );
        assert_eq!(none.unwrap(), vec![]);
        let err = parse_calls(Format::Gemini, &json!([1]), &Aliases::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "not a gemini response: the response must be a JSON object"
        );
    }

    #[test]
    fn a_providers_error_object_is_an_error_naming_its_message() {
        let cases = [
            (
                Format::OpenAiChat,
                json!({ "error": { "message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key" } }),
                "an OpenAI error: Incorrect API key provided",
            ),
            (
                Format::Anthropic,
                json!({ "type": "error", "error": { "type": "overloaded_error", "message": "Overloaded" } }),
                "an Anthropic error: Overloaded",
            ),
            (
                Format::Gemini,
                json!({ "error": { "code": 400, "message": "API key not valid", "status": "INVALID_ARGUMENT" } }),
                "a Gemini error: API key not valid",
            ),
            (
                Format::OpenAiResponses,
                json!({ "id": "resp_1", "object": "response", "status": "failed", "output": [], "error": { "code": "server_error", "message": "The model failed" } }),
                "an OpenAI error: The model failed",
            ),
        ];
        for (format, response, expected) in cases {
            let err = parse_calls(format, &response, &Aliases::default()).unwrap_err();
            assert!(matches!(err, ParseError::ProviderError { .. }), "{err:?}");
            assert_eq!(err.to_string(), expected);
        }
    }

    #[test]
    fn a_response_of_another_apis_shape_is_an_error_naming_that_api() {
        let chat = json!({ "object": "chat.completion", "choices": [{ "message": { "role": "assistant", "tool_calls": [
            { "id": "a", "type": "function", "function": { "name": "f", "arguments": "{}" } }
        ]}}]});
        let err = parse_calls(Format::Anthropic, &chat, &Aliases::default()).unwrap_err();
        assert_eq!(
            err,
            ParseError::OtherFormat {
                expected: Format::Anthropic,
                found: Format::OpenAiChat
            }
        );
        assert_eq!(
            err.to_string(),
            "this looks like an OpenAI Chat response, not Anthropic"
        );
        let anthropic = json!({ "type": "message", "role": "assistant", "content": [] });
        let err = parse_calls(Format::Gemini, &anthropic, &Aliases::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "this looks like an Anthropic response, not Gemini"
        );
        let err =
            parse_calls(Format::Bedrock, &json!({ "hello": 1 }), &Aliases::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "not a bedrock response: it has no `output.message`"
        );
    }

    #[test]
    fn aliases_map_back_to_real_names() {
        let aliases = Aliases::for_names(["github.repos.list"], Format::Bedrock);
        let response = json!({ "output": { "message": { "content": [
            { "toolUse": { "toolUseId": "t1", "name": "github_repos_list", "input": { "owner": "me" } } }
        ]}}});
        let calls = parse_calls(Format::Bedrock, &response, &aliases).unwrap();
        assert_eq!(
            calls,
            vec![ToolCall::new(
                "t1",
                "github.repos.list",
                json!({ "owner": "me" })
            )]
        );
    }
}
