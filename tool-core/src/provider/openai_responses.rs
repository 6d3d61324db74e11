//! OpenAI Responses: `tools` of flat `{"type": "function", "name", ..}` objects, calls as
//! `function_call` items of `output` with arguments as JSON text, results as
//! `function_call_output` items. Strict mode is `openai-strict`, as for Chat.

use serde_json::{json, Map, Value};

use super::calls::Calls;
use super::declare::{DeclareOptions, Declared};
use super::json::{array, text_arguments};
use super::{openai_chat, Aliases, Api, CallResult, ParseError};
use crate::name::{NameRule, MODEL_API};
use crate::ToolSpec;

pub(crate) struct OpenAiResponses;

impl Api for OpenAiResponses {
    fn title(&self) -> &'static str {
        "OpenAI Responses"
    }

    fn name(&self) -> &'static str {
        "openai-responses"
    }

    fn name_rule(&self) -> &'static NameRule {
        &MODEL_API
    }

    fn declare(&self, spec: &ToolSpec, name: &str, options: &DeclareOptions) -> Declared {
        let (function, declared) = openai_chat::function(spec, name, options);
        let mut map = Map::new();
        map.insert("type".into(), json!("function"));
        map.extend(function);
        Declared {
            value: Value::Object(map),
            ..declared
        }
    }

    fn has_shape(&self, response: &Value) -> bool {
        response.get("output").is_some_and(Value::is_array)
    }

    fn signature(&self) -> &'static str {
        "`output` array"
    }

    fn calls(&self, response: &Value, calls: &mut Calls<'_>) -> Result<(), ParseError> {
        for item in array(response.get("output"))
            .filter(|i| i.get("type").and_then(Value::as_str) == Some("function_call"))
        {
            calls.push(
                item.get("call_id"),
                item.get("name"),
                text_arguments(item.get("arguments")),
            )?;
        }
        Ok(())
    }

    fn render(&self, results: &[CallResult], _: &Aliases) -> Value {
        Value::Array(
            results
                .iter()
                .map(|r| json!({ "type": "function_call_output", "call_id": r.id(), "output": r.text() }))
                .collect(),
        )
    }
}
