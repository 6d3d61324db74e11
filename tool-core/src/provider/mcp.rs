//! Model Context Protocol: `tools/list` entries (with `title`, `outputSchema` and
//! `annotations`), a `tools/call` request (or its `params`) as the call, and `CallToolResult`s
//! as results. MCP has no strict mode, and takes dotted names.

use serde_json::{json, Map, Value};

use super::calls::Calls;
use super::declare::{DeclareOptions, Declared};
use super::json::object_arguments;
use super::results::last_segment;
use super::{Aliases, Api, CallResult, ParseError};
use crate::name::{NameRule, WIDE};
use crate::{Content, FileSource, ResourceContents, ToolSpec};

pub(crate) struct Mcp;

impl Api for Mcp {
    fn title(&self) -> &'static str {
        "MCP"
    }

    fn name(&self) -> &'static str {
        "mcp"
    }

    fn name_rule(&self) -> &'static NameRule {
        &WIDE
    }

    fn declare(&self, spec: &ToolSpec, name: &str, _: &DeclareOptions) -> Declared {
        Declared::plain(tool(spec, name))
    }

    fn has_shape(&self, _: &Value) -> bool {
        true
    }

    fn signature(&self) -> &'static str {
        "`params`"
    }

    fn calls(&self, response: &Value, calls: &mut Calls<'_>) -> Result<(), ParseError> {
        // A whole `tools/call` request, or its `params`.
        let (id, params) = match response.get("params") {
            Some(params) => {
                if response
                    .get("method")
                    .and_then(Value::as_str)
                    .is_some_and(|m| m != "tools/call")
                {
                    return Err(calls.malformed("the request's method is not `tools/call`"));
                }
                (response.get("id"), params)
            }
            None => (None, response),
        };
        calls.push(
            id,
            params.get("name"),
            object_arguments(params.get("arguments")),
        )
    }

    fn render(&self, results: &[CallResult], _: &Aliases) -> Value {
        Value::Array(results.iter().map(result).collect())
    }
}

fn tool(spec: &ToolSpec, name: &str) -> Value {
    let mut map = Map::new();
    map.insert("name".into(), json!(name));
    if let Some(title) = &spec.metadata.title {
        map.insert("title".into(), json!(title));
    }
    map.insert("description".into(), json!(spec.description));
    if !spec.metadata.icons.is_empty() {
        map.insert("icons".into(), json!(spec.metadata.icons));
    }
    map.insert("inputSchema".into(), spec.parameters.clone());
    // MCP's `outputSchema` describes `structuredContent`, which is an object: a result of
    // another shape travels as text, and its schema is left out.
    if let Some(output) = spec.output_schema.as_ref().filter(|s| is_object_schema(s)) {
        map.insert("outputSchema".into(), output.clone());
    }
    let hints = &spec.metadata.hints;
    let mut annotations = Map::new();
    if let Some(title) = &spec.metadata.title {
        annotations.insert("title".into(), json!(title));
    }
    for (key, value) in [
        ("readOnlyHint", hints.read_only),
        ("destructiveHint", hints.destructive),
        ("idempotentHint", hints.idempotent),
        ("openWorldHint", hints.open_world),
    ] {
        if let Some(value) = value {
            annotations.insert(key.into(), json!(value));
        }
    }
    map.insert("annotations".into(), Value::Object(annotations));
    Value::Object(map)
}

/// Whether a schema's root is `"type": "object"`.
fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

fn result(r: &CallResult) -> Value {
    let mut result = Map::new();
    match &r.result {
        Ok(output) => {
            let mut content: Vec<Value> = output.content.iter().map(content_block).collect();
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

/// `text` with every byte but RFC 3986's unreserved ones percent-encoded: a file's name as
/// one segment of a URI's path, so no name reads as another path.
fn percent_encoded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A content block as MCP has it: text, image and audio as themselves; a file by its bytes as
/// an embedded resource (`file:///` and its name, percent-encoded, since MCP's resources have
/// a URI), a file at
/// a URL and a resource link as `resource_link`; an embedded resource as `resource`. MCP has
/// no reference to a tool: a found tool is named in words.
pub fn content_block(content: &Content) -> Value {
    let optional = |block: &mut Value, key: &str, value: &Option<String>| {
        if let Some(value) = value {
            block[key] = json!(value);
        }
    };
    match content {
        Content::Text { text } => json!({ "type": "text", "text": text }),
        Content::Image { data, mime_type } => {
            json!({ "type": "image", "data": data, "mimeType": mime_type })
        }
        Content::Audio { data, mime_type } => {
            json!({ "type": "audio", "data": data, "mimeType": mime_type })
        }
        Content::File {
            source: FileSource::Base64 { data },
            mime_type,
            name,
        } => {
            let name = last_segment(name.as_deref().unwrap_or("file"));
            json!({
                "type": "resource",
                "resource": { "uri": format!("file:///{}", percent_encoded(name)), "mimeType": mime_type, "blob": data },
            })
        }
        Content::File {
            source: FileSource::Url { url },
            mime_type,
            name,
        } => {
            let name = name.as_deref().unwrap_or_else(|| last_segment(url));
            json!({ "type": "resource_link", "uri": url, "name": name, "mimeType": mime_type })
        }
        Content::ResourceLink {
            uri,
            name,
            title,
            description,
            mime_type,
        } => {
            let mut block = json!({ "type": "resource_link", "uri": uri, "name": name });
            optional(&mut block, "title", title);
            optional(&mut block, "description", description);
            optional(&mut block, "mimeType", mime_type);
            block
        }
        Content::Resource {
            uri,
            mime_type,
            contents,
        } => {
            let mut resource = match contents {
                ResourceContents::Text(text) => json!({ "uri": uri, "text": text }),
                ResourceContents::Blob(blob) => json!({ "uri": uri, "blob": blob }),
            };
            optional(&mut resource, "mimeType", mime_type);
            json!({ "type": "resource", "resource": resource })
        }
        Content::ToolReference { .. } => json!({ "type": "text", "text": content.described() }),
    }
}
