//! Parsing calls, the part every API shares: a provider's error object and a response of
//! another API's shape are recognised here; each API's module finds its calls in the rest.

use serde_json::Value;

use super::limits::{check_depth, ResponseLimits};
use super::{api, Aliases, Format};
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
    #[error("not {} response: {why}", with_article(.format.title()))]
    Malformed {
        /// The format that was expected.
        format: Format,
        /// What is wrong.
        why: String,
    },
    /// The response's text is longer than [`ResponseLimits::bytes`].
    #[error("the {format} response is {bytes} bytes long; ResponseLimits::bytes allows {limit}")]
    TooLarge {
        /// The format that was expected.
        format: Format,
        /// The text's length.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The response nests deeper than [`ResponseLimits::depth`].
    #[error("the {format} response nests {limit} or more levels deep; ResponseLimits::depth allows fewer than {limit}")]
    TooDeep {
        /// The format that was expected.
        format: Format,
        /// The limit.
        limit: usize,
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
///
/// A response nested deeper than [`ResponseLimits::depth`]'s default is refused
/// ([`ParseError::TooDeep`]) before anything walks it; [`parse_calls_within`] takes other limits.
pub fn parse_calls(
    format: Format,
    response: &Value,
    aliases: &Aliases,
) -> Result<Vec<ToolCall>, ParseError> {
    parse_calls_within(format, response, aliases, &ResponseLimits::default())
}

/// [`parse_calls`] within `limits`.
pub fn parse_calls_within(
    format: Format,
    response: &Value,
    aliases: &Aliases,
    limits: &ResponseLimits,
) -> Result<Vec<ToolCall>, ParseError> {
    check_depth(format, response, limits)?;
    check_shape(format, response)?;
    let mut calls = Calls {
        format,
        aliases,
        found: Vec::new(),
    };
    api(format).calls(response, &mut calls)?;
    Ok(calls.found)
}

/// Whether a response is an answer of `format`: an object, not the provider's error object,
/// with the fields that mark that API's answers.
pub(crate) fn check_shape(format: Format, response: &Value) -> Result<(), ParseError> {
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
    if !api(format).has_shape(response) {
        return Err(
            match Format::ALL.into_iter().find(|other| {
                *other != format && *other != Format::Mcp && api(*other).has_shape(response)
            }) {
                Some(found) => ParseError::OtherFormat {
                    expected: format,
                    found,
                },
                None => fail(&format!("it has no {}", api(format).signature())),
            },
        );
    }
    Ok(())
}

/// The calls found in a response so far, with aliased names mapped back and encoded arguments
/// decoded.
pub(crate) struct Calls<'a> {
    format: Format,
    aliases: &'a Aliases,
    found: Vec<ToolCall>,
}

impl Calls<'_> {
    /// Adds a call from its fields as the API sent them.
    pub(crate) fn push(
        &mut self,
        id: Option<&Value>,
        name: Option<&Value>,
        arguments: Value,
    ) -> Result<(), ParseError> {
        let name = name
            .and_then(Value::as_str)
            .ok_or_else(|| self.malformed("a tool call has no `name`"))?;
        let id = id.and_then(|id| match id {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        });
        let name = self.aliases.real_name(name);
        self.found.push(ToolCall {
            id,
            arguments: self.aliases.decode_arguments(name, arguments),
            name: name.to_owned(),
        });
        Ok(())
    }

    /// The response is not in the expected shape, for this reason.
    pub(crate) fn malformed(&self, why: &str) -> ParseError {
        ParseError::Malformed {
            format: self.format,
            why: why.to_owned(),
        }
    }
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
            "not a Gemini response: the response must be a JSON object"
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
            "not a Bedrock response: it has no `output.message`"
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

    #[test]
    fn only_the_first_choice_or_candidate_is_read() {
        let chat = json!({ "choices": [
            { "index": 0, "message": { "tool_calls": [
                { "id": "a", "type": "function", "function": { "name": "one", "arguments": "{}" } }
            ] } },
            { "index": 1, "message": { "tool_calls": [
                { "id": "b", "type": "function", "function": { "name": "two", "arguments": "{}" } }
            ] } }
        ] });
        let calls = parse_calls(Format::OpenAiChat, &chat, &Aliases::default()).unwrap();
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["one"]);
        let gemini = json!({ "candidates": [
            { "content": { "parts": [{ "functionCall": { "name": "one", "args": {} } }] } },
            { "content": { "parts": [{ "functionCall": { "name": "two", "args": {} } }] } }
        ] });
        let calls = parse_calls(Format::Gemini, &gemini, &Aliases::default()).unwrap();
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["one"]);
    }
}
