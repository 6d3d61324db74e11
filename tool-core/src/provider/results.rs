use serde_json::{json, Map, Value};

use super::{Aliases, Format};
use crate::{Content, ToolCall, ToolError, ToolOutput};

/// A call and what came of it.
#[derive(Debug, Clone)]
pub struct CallResult {
    /// The call.
    pub call: ToolCall,
    /// Its output, or why there is none.
    pub result: Result<ToolOutput, ToolError>,
}

/// The results of one response's calls, in the shape the API takes in the next request:
///
/// - OpenAI Chat: an array of `{"role":"tool","tool_call_id","content"}` messages;
/// - OpenAI Responses: an array of `function_call_output` items;
/// - Anthropic: one user message of `tool_result` blocks, `is_error` on failures;
/// - Gemini: one user content of `functionResponse` parts, with the call `id` where given;
/// - Bedrock: one user message of `toolResult` blocks, `status: "error"` on failures;
/// - MCP: an array of `CallToolResult`s with `content`, `structuredContent` and `isError`.
///
/// A failure is rendered as text the model can use to fix its call.
pub fn render_results(format: Format, results: &[CallResult], aliases: &Aliases) -> Value {
    let id = |r: &CallResult| r.call.id.clone().unwrap_or_default();
    match format {
        Format::OpenAiChat => Value::Array(
            results
                .iter()
                .map(|r| json!({ "role": "tool", "tool_call_id": id(r), "content": text(r) }))
                .collect(),
        ),
        Format::OpenAiResponses => Value::Array(
            results
                .iter()
                .map(|r| json!({ "type": "function_call_output", "call_id": id(r), "output": text(r) }))
                .collect(),
        ),
        Format::Anthropic => {
            let blocks: Vec<Value> = results
                .iter()
                .map(|r| {
                    let mut block = Map::new();
                    block.insert("type".into(), json!("tool_result"));
                    block.insert("tool_use_id".into(), json!(id(r)));
                    block.insert("content".into(), anthropic_content(r));
                    if r.result.is_err() || r.result.as_ref().is_ok_and(|o| o.is_error) {
                        block.insert("is_error".into(), json!(true));
                    }
                    Value::Object(block)
                })
                .collect();
            json!({ "role": "user", "content": blocks })
        }
        Format::Gemini => {
            let parts: Vec<Value> = results
                .iter()
                .map(|r| {
                    let mut response = Map::new();
                    if let Some(id) = &r.call.id {
                        response.insert("id".into(), json!(id));
                    }
                    response.insert("name".into(), json!(aliases.provider_name(&r.call.name)));
                    let body = match &r.result {
                        Ok(output) if !output.is_error => json!({ "output": output.structured.clone().unwrap_or_else(|| json!(output.to_text())) }),
                        _ => json!({ "error": text(r) }),
                    };
                    response.insert("response".into(), body);
                    json!({ "functionResponse": response })
                })
                .collect();
            json!({ "role": "user", "parts": parts })
        }
        Format::Bedrock => {
            let blocks: Vec<Value> = results
                .iter()
                .map(|r| {
                    let content = match &r.result {
                        Ok(ToolOutput { structured: Some(value @ Value::Object(_)), content, is_error: false }) if content.is_empty() => json!([{ "json": value }]),
                        _ => json!([{ "text": text(r) }]),
                    };
                    let mut result = Map::new();
                    result.insert("toolUseId".into(), json!(id(r)));
                    result.insert("content".into(), content);
                    if r.result.is_err() || r.result.as_ref().is_ok_and(|o| o.is_error) {
                        result.insert("status".into(), json!("error"));
                    }
                    json!({ "toolResult": result })
                })
                .collect();
            json!({ "role": "user", "content": blocks })
        }
        Format::Mcp => Value::Array(results.iter().map(mcp_result).collect()),
    }
}

/// The text of a result: the output's text, or the error as the model should read it.
fn text(r: &CallResult) -> String {
    match &r.result {
        Ok(output) => output.to_text(),
        Err(e) => e.to_model_text(),
    }
}

fn anthropic_content(r: &CallResult) -> Value {
    match &r.result {
        Ok(output) if output.content.iter().any(|c| matches!(c, Content::Image { .. })) => Value::Array(
            output
                .content
                .iter()
                .map(|c| match c {
                    Content::Text { text } => json!({ "type": "text", "text": text }),
                    Content::Image { data, mime_type } => json!({ "type": "image", "source": { "type": "base64", "media_type": mime_type, "data": data } }),
                })
                .collect(),
        ),
        _ => json!(text(r)),
    }
}

fn mcp_result(r: &CallResult) -> Value {
    let mut result = Map::new();
    match &r.result {
        Ok(output) => {
            let mut content: Vec<Value> = output
                .content
                .iter()
                .map(|c| match c {
                    Content::Text { text } => json!({ "type": "text", "text": text }),
                    Content::Image { data, mime_type } => {
                        json!({ "type": "image", "data": data, "mimeType": mime_type })
                    }
                })
                .collect();
            if content.is_empty() && output.structured.is_some() {
                content.push(json!({ "type": "text", "text": output.to_text() }));
            }
            result.insert("content".into(), Value::Array(content));
            if let Some(structured @ Value::Object(_)) = &output.structured {
                result.insert("structuredContent".into(), structured.clone());
            }
            result.insert("isError".into(), json!(output.is_error));
        }
        Err(e) => {
            result.insert(
                "content".into(),
                json!([{ "type": "text", "text": e.to_model_text() }]),
            );
            result.insert("isError".into(), json!(true));
        }
    }
    Value::Object(result)
}
