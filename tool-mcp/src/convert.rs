//! Translations between the neutral types of `tool-core` and rmcp's wire types, both ways: a
//! [`ToolSpec`] as an MCP `Tool` and back, a [`ToolOutput`] as a `CallToolResult` and back.

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::Value;
use tool_core::provider::{declaration, DeclareOptions, Format};
use tool_core::{Content, SafetyHints, ToolOutput, ToolSpec};

/// A spec as an MCP `tools/list` entry, through the `Format::Mcp` declaration, so that the
/// served list and `ai-tool tools --format mcp` are the same text.
pub(crate) fn tool_from_spec(spec: &ToolSpec) -> Result<Tool, serde_json::Error> {
    let (value, _) = declaration(spec, &spec.name, Format::Mcp, &DeclareOptions::default());
    serde_json::from_value(value)
}

/// A tool's output as the result of a `tools/call`: content blocks, and `structuredContent`
/// with a text block of the same JSON when the output is structured.
pub(crate) fn result_from_output(output: ToolOutput) -> CallToolResult {
    let text = if output.content.is_empty() && output.structured.is_some() {
        Some(output.to_text())
    } else {
        None
    };
    let mut content: Vec<ContentBlock> = output
        .content
        .into_iter()
        .map(|c| match c {
            Content::Text { text } => ContentBlock::text(text),
            Content::Image { data, mime_type } => ContentBlock::image(data, mime_type),
            // MCP has no reference to a tool: the name, in words.
            Content::ToolReference { tool_name } => {
                ContentBlock::text(format!("Tool found: {tool_name}"))
            }
        })
        .collect();
    content.extend(text.map(ContentBlock::text));
    let mut result = if output.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    // MCP's `structuredContent` is an object; any other structured value travels as its text.
    if let Some(structured @ Value::Object(_)) = output.structured {
        result.structured_content = Some(structured);
    }
    result
}

/// The text of a result's text blocks, one per line.
pub(crate) fn result_text(result: &CallToolResult) -> String {
    let mut text = String::new();
    for block in &result.content {
        if let ContentBlock::Text(t) = block {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&t.text);
        }
    }
    text
}

/// A server's result as a tool's output: text and images as content, `structuredContent` as
/// the structured value. Other blocks (audio, resources) are kept as their JSON text.
pub(crate) fn output_from_result(result: CallToolResult) -> ToolOutput {
    let content = result
        .content
        .into_iter()
        .map(|block| match block {
            ContentBlock::Text(t) => Content::Text { text: t.text },
            ContentBlock::Image(i) => Content::Image {
                data: i.data,
                mime_type: i.mime_type,
            },
            other => Content::Text {
                text: serde_json::to_string(&other).unwrap_or_default(),
            },
        })
        .collect();
    ToolOutput {
        content,
        structured: result.structured_content,
        is_error: result.is_error.unwrap_or(false),
    }
}

/// A server's tool as a spec: its schema as written, its title and hints as metadata.
pub(crate) fn spec_from_tool(name: String, tool: &Tool) -> ToolSpec {
    let mut spec = ToolSpec {
        name,
        description: tool.description.as_deref().unwrap_or_default().to_owned(),
        parameters: Value::Object(JsonObject::clone(&tool.input_schema)),
        output_schema: tool
            .output_schema
            .as_ref()
            .map(|s| Value::Object(JsonObject::clone(s))),
        metadata: Default::default(),
    };
    let annotations = tool.annotations.as_ref();
    spec.metadata.title = tool
        .title
        .clone()
        .or_else(|| annotations.and_then(|a| a.title.clone()));
    if let Some(a) = annotations {
        spec.metadata.hints = SafetyHints {
            read_only: a.read_only_hint,
            destructive: a.destructive_hint,
            idempotent: a.idempotent_hint,
            open_world: a.open_world_hint,
        };
    }
    spec
}
