use serde_json::Value;

use super::{Aliases, Format};
use crate::ToolCall;

/// A response that is not what the API returns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a {format} response: {why}")]
pub struct ParseError {
    /// The format that was expected.
    pub format: Format,
    /// What is wrong.
    pub why: String,
}

/// The tool calls in a provider's whole response, as that API returns it, with aliased names
/// mapped back to the real ones.
///
/// Arguments the API sends as JSON text (OpenAI) are parsed. Text that is not valid JSON does
/// not fail the response: that call keeps the raw text as its arguments, and executing it
/// reports `InvalidArguments` to the model, naming the JSON error.
pub fn parse_calls(
    format: Format,
    response: &Value,
    aliases: &Aliases,
) -> Result<Vec<ToolCall>, ParseError> {
    let fail = |why: &str| ParseError {
        format,
        why: why.to_owned(),
    };
    if !response.is_object() {
        return Err(fail("the response must be a JSON object"));
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
            calls.push(ToolCall {
                id,
                name: aliases.real_name(name).to_owned(),
                arguments,
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
