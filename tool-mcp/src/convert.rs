//! Translations between the neutral types of `tool-core` and rmcp's wire types, both ways: a
//! [`ToolSpec`] as an MCP `Tool` and back, a [`ToolOutput`] as a `CallToolResult` and back.

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ResourceContents, Tool};
use serde_json::Value;
use tool_core::provider::{declaration, mcp_content_block, DeclareOptions, Format};
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
    let mut content: Vec<ContentBlock> = output.content.iter().map(content_block).collect();
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

/// A content block as rmcp's type, through `tool-core`'s MCP rendering ([`mcp_content_block`]),
/// so that a served result and `render_results(Format::Mcp, ..)` are the same JSON. That JSON
/// is MCP's own; should rmcp ever refuse it, the block's words stand for it.
fn content_block(content: &Content) -> ContentBlock {
    serde_json::from_value(mcp_content_block(content))
        .unwrap_or_else(|_| ContentBlock::text(content.described()))
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

/// A server's result as a tool's output: text, images, audio, resource links and embedded
/// resources as the content they are, `structuredContent` as the structured value. A block of a
/// kind this crate does not know is kept as its JSON text.
pub(crate) fn output_from_result(result: CallToolResult) -> ToolOutput {
    let content = result.content.into_iter().map(imported_block).collect();
    ToolOutput {
        content,
        structured: result.structured_content,
        is_error: result.is_error.unwrap_or(false),
    }
}

/// A server's content block as a tool's content.
fn imported_block(block: ContentBlock) -> Content {
    match block {
        ContentBlock::Text(t) => Content::Text { text: t.text },
        ContentBlock::Image(i) => Content::image(i.data, i.mime_type),
        ContentBlock::Audio(a) => Content::audio(a.data, a.mime_type),
        ContentBlock::ResourceLink(link) => Content::ResourceLink {
            uri: link.uri,
            name: link.name,
            title: link.title,
            description: link.description,
            mime_type: link.mime_type,
        },
        ContentBlock::Resource(embedded) => match embedded.resource.clone() {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => Content::Resource {
                uri,
                mime_type,
                contents: tool_core::ResourceContents::Text(text),
            },
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => Content::Resource {
                uri,
                mime_type,
                contents: tool_core::ResourceContents::Blob(blob),
            },
            _ => Content::Text {
                text: serde_json::to_string(&embedded).unwrap_or_default(),
            },
        },
        #[allow(unreachable_patterns)]
        other => Content::Text {
            text: serde_json::to_string(&other).unwrap_or_default(),
        },
    }
}

/// The most icons kept of an imported tool.
pub const MAX_IMPORTED_ICONS: usize = 8;

/// An imported tool's icons a client may be shown: those at an `https:` URL or in a `data:`
/// URI (no `http:`, `file:` or `javascript:` source passes through a gateway), at most
/// [`MAX_IMPORTED_ICONS`]; their bytes count in the list's (`ImportLimits::max_list_bytes`).
fn imported_icons(tool: &Tool) -> Vec<tool_core::Icon> {
    let safe = |src: &str| {
        let scheme = src.split(':').next().unwrap_or_default();
        scheme.eq_ignore_ascii_case("https") || scheme.eq_ignore_ascii_case("data")
    };
    tool.icons
        .iter()
        .flatten()
        .filter(|icon| safe(&icon.src))
        .take(MAX_IMPORTED_ICONS)
        .map(|icon| tool_core::Icon {
            src: icon.src.clone(),
            mime_type: icon.mime_type.clone(),
            sizes: icon.sizes.clone().unwrap_or_default(),
        })
        .collect()
}

/// A server's tool as a spec: its schema as written, its title, icons and hints as metadata.
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
    spec.metadata.icons = imported_icons(tool);
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tool_core::Icon;

    #[test]
    fn every_kind_of_content_is_served_as_mcps_and_imported_back() {
        let link = Content::ResourceLink {
            uri: "https://example.com/stations/paris".into(),
            name: "paris".into(),
            title: Some("Paris station".into()),
            description: Some("Readings every hour".into()),
            mime_type: Some("application/json".into()),
        };
        let kept = vec![
            Content::text("the radar"),
            Content::image("iVBORw0KGgo=", "image/png"),
            Content::audio("UklGRg==", "audio/wav"),
            link,
            Content::text_resource("weather://paris", "18°C"),
            Content::blob_resource("weather://paris.pdf", "application/pdf", "JVBERi0="),
        ];
        let files = [
            Content::file("JVBERi0=", "application/pdf", "../q3 report.pdf"),
            Content::file_url("https://example.com/a.pdf", "application/pdf"),
        ];
        let output = ToolOutput {
            content: [kept.clone(), files.to_vec()].concat(),
            ..ToolOutput::default()
        };
        let served = result_from_output(output);
        let wire = serde_json::to_value(&served).unwrap();
        let kinds: Vec<&str> = wire["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|block| block["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "text",
                "image",
                "audio",
                "resource_link",
                "resource",
                "resource",
                "resource",
                "resource_link"
            ]
        );
        // The name is one segment of the URI, percent-encoded: no path climbs out of it.
        assert_eq!(
            wire["content"][6]["resource"]["uri"],
            "file:///q3%20report.pdf"
        );
        assert_eq!(wire["content"][7]["name"], "a.pdf");
        // Back again: the kinds MCP has come back as themselves; a file is a resource or a link.
        let imported = output_from_result(served);
        assert_eq!(imported.content[..kept.len()], kept[..]);
        assert_eq!(
            imported.content[kept.len()..],
            [
                Content::Resource {
                    uri: "file:///q3%20report.pdf".into(),
                    mime_type: Some("application/pdf".into()),
                    contents: tool_core::ResourceContents::Blob("JVBERi0=".into()),
                },
                Content::ResourceLink {
                    uri: "https://example.com/a.pdf".into(),
                    name: "a.pdf".into(),
                    title: None,
                    description: None,
                    mime_type: Some("application/pdf".into()),
                },
            ]
        );
    }

    #[test]
    fn icons_are_served_and_imported_and_only_safe_sources_pass() {
        let mut spec = ToolSpec {
            name: "forecast".into(),
            description: "The weather.".into(),
            parameters: json!({ "type": "object", "properties": {} }),
            output_schema: None,
            metadata: Default::default(),
        };
        spec.metadata.icons = vec![Icon {
            src: "https://example.com/sun.png".into(),
            mime_type: Some("image/png".into()),
            sizes: vec!["48x48".into()],
        }];
        let mut served = tool_from_spec(&spec).unwrap();
        let icons = served.icons.clone().unwrap();
        assert_eq!(icons[0].src, "https://example.com/sun.png");
        assert_eq!(icons[0].sizes.as_deref(), Some(&["48x48".to_owned()][..]));
        assert_eq!(
            spec_from_tool("forecast".into(), &served).metadata.icons,
            spec.metadata.icons
        );

        // A server's other sources stay out, and at most 8 icons come in.
        let mut many: Vec<rmcp::model::Icon> = [
            "http://x/a.png",
            "file:///etc/passwd",
            "javascript:alert(1)",
        ]
        .into_iter()
        .map(rmcp::model::Icon::new)
        .collect();
        many.extend((0..20).map(|i| rmcp::model::Icon::new(format!("data:image/png;base64,{i}"))));
        served.icons = Some(many);
        let imported = spec_from_tool("forecast".into(), &served).metadata.icons;
        assert_eq!(imported.len(), MAX_IMPORTED_ICONS);
        assert!(imported.iter().all(|icon| icon.src.starts_with("data:")));
    }
}
