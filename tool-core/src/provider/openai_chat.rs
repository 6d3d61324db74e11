//! OpenAI Chat Completions (also Assistants and Azure AI Foundry agents): `tools` of
//! `{"type": "function", "function": {..}}`, calls in `choices[].message.tool_calls` with
//! arguments as JSON text, results as `tool` messages. Strict mode is `openai-strict`.

use serde_json::{json, Map, Value};

use super::calls::Calls;
use super::declare::{strict_or_not, DeclareOptions, Declared};
use super::json::{array, text_arguments};
use super::results::placed;
use super::{openai_strict, Aliases, Api, CallResult, ParseError};
use crate::name::{NameRule, MODEL_API};
use crate::{text_input, ToolSpec};

pub(crate) struct OpenAiChat;

/// The function object both OpenAI APIs declare: `name`, `description`, `parameters` and
/// `strict`, the schema in `openai-strict` when asked and possible.
pub(crate) fn function(
    spec: &ToolSpec,
    name: &str,
    options: &DeclareOptions,
) -> (Map<String, Value>, Declared) {
    let strictness = strict_or_not(spec, options.strict, openai_strict::openai_strict_encoded);
    let mut function = Map::new();
    function.insert("name".into(), json!(name));
    function.insert("description".into(), json!(spec.description));
    function.insert("parameters".into(), strictness.schema);
    function.insert("strict".into(), json!(strictness.strict));
    let declared = Declared {
        value: Value::Null,
        note: strictness.note,
        encoding: strictness.encoding,
    };
    (function, declared)
}

impl Api for OpenAiChat {
    fn title(&self) -> &'static str {
        "OpenAI Chat"
    }

    fn name(&self) -> &'static str {
        "openai-chat"
    }

    fn name_rule(&self) -> &'static NameRule {
        &MODEL_API
    }

    fn declare(&self, spec: &ToolSpec, name: &str, options: &DeclareOptions) -> Declared {
        if let Some(input) = &spec.metadata.text_input {
            return Declared::plain(json!({
                "type": "custom",
                "custom": {
                    "name": name,
                    "description": spec.description,
                    "format": input.chat_format(),
                }
            }));
        }
        let (function, declared) = function(spec, name, options);
        Declared {
            value: json!({ "type": "function", "function": function }),
            ..declared
        }
    }

    fn has_shape(&self, response: &Value) -> bool {
        response.get("choices").is_some_and(Value::is_array)
    }

    fn signature(&self) -> &'static str {
        "`choices` array"
    }

    fn calls(&self, response: &Value, calls: &mut Calls<'_>) -> Result<(), ParseError> {
        // The first choice only: with `n` above 1 the others are alternatives, and the
        // conversation goes on with one answer, whose calls alone get results.
        for choice in array(response.get("choices")).take(1) {
            let tool_calls = choice.get("message").and_then(|m| m.get("tool_calls"));
            for call in array(tool_calls) {
                // A custom tool's call: its text is the one argument.
                if let Some(custom) = call
                    .get("custom")
                    .filter(|_| call.get("type").and_then(Value::as_str) == Some("custom"))
                {
                    let input = custom
                        .get("input")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    calls.push(
                        call.get("id"),
                        custom.get("name"),
                        text_input::text_arguments(input),
                    )?;
                    continue;
                }
                let function = call
                    .get("function")
                    .ok_or_else(|| calls.malformed("a tool call has no `function`"))?;
                calls.push(
                    call.get("id"),
                    function.get("name"),
                    text_arguments(function.get("arguments")),
                )?;
            }
        }
        Ok(())
    }

    fn render(&self, results: &[CallResult], _: &Aliases) -> Value {
        Value::Array(
            results
                .iter()
                .map(|r| json!({ "role": "tool", "tool_call_id": r.id(), "content": tool_message_text(&r.flagged_text(), r.attachments()) }))
                .collect(),
        )
    }
}

/// A `tool` message's content: Chat Completions takes text alone, so a result's attachments
/// (images, audio, files, resources) are told in words after its text
/// ([`Content::described`](crate::Content::described)).
pub fn tool_message_text<'a>(
    text: &str,
    attachments: impl IntoIterator<Item = &'a crate::Content>,
) -> String {
    placed(text, attachments, |_| None).0
}
