//! Amazon Bedrock Converse: `toolConfig.tools` of `{"toolSpec": {..}}`, calls as `toolUse`
//! blocks of `output.message.content`, results as one user message of `toolResult` blocks.
//! Converse has no strict mode.

use serde_json::{json, Map, Value};

use super::calls::Calls;
use super::declare::{DeclareOptions, Declared};
use super::json::{array, object_arguments};
use super::results::text_then_images;
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
        // A tool the service runs itself (`"type": "server_tool_use"`) is not a call to run.
        let ours = |t: &&Value| t.get("type").and_then(Value::as_str) != Some("server_tool_use");
        for tool_use in array(content).filter_map(|b| b.get("toolUse")).filter(ours) {
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
                    _ => tool_result_content(&r.text(), r.images()),
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

/// A `toolResult` block's `content`: a text block, then the images (each `(base64 data, media
/// type)`) in the formats Converse takes (PNG, JPEG, GIF, WebP; others are left out). Converse
/// refuses a blank text block: a blank text is left out beside images, and without images it
/// is sent as `(no output)`.
pub fn tool_result_content<'a>(
    text: &str,
    images: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Value {
    let images: Vec<Value> = images
        .into_iter()
        .filter_map(|(data, mime_type)| {
            let format = image_format(mime_type)?;
            Some(json!({ "image": { "format": format, "source": { "bytes": data } } }))
        })
        .collect();
    let text = if images.is_empty() && text.trim().is_empty() {
        NO_OUTPUT
    } else {
        text
    };
    let text_block = |text: &str| json!({ "text": text });
    Value::Array(text_then_images(text, images, text_block))
}

/// What a result with no text and no image Converse takes says.
const NO_OUTPUT: &str = "(no output)";

/// Converse's name for an image's media type, when it takes the type.
fn image_format(mime_type: &str) -> Option<&'static str> {
    match mime_type.to_ascii_lowercase().as_str() {
        "image/png" => Some("png"),
        "image/jpeg" | "image/jpg" => Some("jpeg"),
        "image/gif" => Some("gif"),
        "image/webp" => Some("webp"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Content, ToolCall};

    fn image(mime_type: &str) -> Content {
        Content::Image {
            data: "iVBORw0KGgo=".into(),
            mime_type: mime_type.into(),
        }
    }

    fn rendered(output: ToolOutput) -> Value {
        let result = CallResult {
            call: ToolCall::new("t1", "radar", json!({})),
            result: Ok(output),
        };
        Bedrock.render(&[result], &Aliases::default())["content"][0]["toolResult"]["content"]
            .clone()
    }

    #[test]
    fn a_results_images_follow_its_text_in_the_formats_converse_takes() {
        let output = ToolOutput::text("the radar")
            .with_content(image("image/png"))
            .with_content(image("image/svg+xml"))
            .with_content(image("image/JPEG"));
        assert_eq!(
            rendered(output),
            json!([
                { "text": "the radar" },
                { "image": { "format": "png", "source": { "bytes": "iVBORw0KGgo=" } } },
                { "image": { "format": "jpeg", "source": { "bytes": "iVBORw0KGgo=" } } }
            ])
        );
    }

    #[test]
    fn a_tool_the_service_runs_is_not_a_call() {
        let response = json!({ "output": { "message": { "role": "assistant", "content": [
            { "toolUse": { "toolUseId": "srv_1", "name": "web_search", "input": {}, "type": "server_tool_use" } },
            { "toolUse": { "toolUseId": "t_1", "name": "radar", "input": { "city": "Oslo" } } }
        ] } } });
        let calls = crate::provider::parse_calls(
            crate::provider::Format::Bedrock,
            &response,
            &Aliases::default(),
        )
        .unwrap();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].id.as_deref(), Some("t_1"));
    }

    #[test]
    fn an_image_alone_goes_without_a_blank_text_block() {
        let output = ToolOutput::empty().with_content(image("image/webp"));
        assert_eq!(
            rendered(output),
            json!([{ "image": { "format": "webp", "source": { "bytes": "iVBORw0KGgo=" } } }])
        );
        // Nothing Converse takes, and no text: a text that says so, as it refuses a blank one.
        let output = ToolOutput::empty().with_content(image("image/svg+xml"));
        assert_eq!(rendered(output), json!([{ "text": "(no output)" }]));
        assert_eq!(
            rendered(ToolOutput::text(" \n")),
            json!([{ "text": "(no output)" }])
        );
    }
}
