//! Amazon Bedrock Converse: `toolConfig.tools` of `{"toolSpec": {..}}`, calls as `toolUse`
//! blocks of `output.message.content`, results as one user message of `toolResult` blocks.
//! Converse has no strict mode.

use serde_json::{json, Map, Value};

use super::calls::Calls;
use super::declare::{DeclareOptions, Declared};
use super::json::{array, object_arguments};
use super::{Aliases, Api, CallResult, ParseError};
use crate::name::{NameRule, MODEL_API};
use crate::{ToolOutput, ToolSpec};

pub(crate) struct Bedrock;

impl Api for Bedrock {
    fn title(&self) -> &'static str {
        "Bedrock"
    }

    fn name(&self) -> &'static str {
        "bedrock"
    }

    fn name_rule(&self) -> &'static NameRule {
        &MODEL_API
    }

    fn declare(&self, spec: &ToolSpec, name: &str, _: &DeclareOptions) -> Declared {
        Declared::plain(
            json!({ "toolSpec": { "name": name, "description": spec.description, "inputSchema": { "json": spec.parameters } } }),
        )
    }

    fn has_shape(&self, response: &Value) -> bool {
        response
            .get("output")
            .is_some_and(|o| o.get("message").is_some())
    }

    fn signature(&self) -> &'static str {
        "`output.message`"
    }

    fn calls(&self, response: &Value, calls: &mut Calls<'_>) -> Result<(), ParseError> {
        let content = response
            .get("output")
            .and_then(|o| o.get("message"))
            .and_then(|m| m.get("content"));
        for tool_use in array(content).filter_map(|b| b.get("toolUse")) {
            calls.push(
                tool_use.get("toolUseId"),
                tool_use.get("name"),
                object_arguments(tool_use.get("input")),
            )?;
        }
        Ok(())
    }

    fn render(&self, results: &[CallResult], _: &Aliases) -> Value {
        let blocks: Vec<Value> = results
            .iter()
            .map(|r| {
                let content = match &r.result {
                    Ok(ToolOutput {
                        structured: Some(value @ Value::Object(_)),
                        content,
                        is_error: false,
                    }) if content.is_empty() => json!([{ "json": value }]),
                    _ => json!([{ "text": r.text() }]),
                };
                let mut result = Map::new();
                result.insert("toolUseId".into(), json!(r.id()));
                result.insert("content".into(), content);
                if r.is_error() {
                    result.insert("status".into(), json!("error"));
                }
                json!({ "toolResult": result })
            })
            .collect();
        json!({ "role": "user", "content": blocks })
    }
}
