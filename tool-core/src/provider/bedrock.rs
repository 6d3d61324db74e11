//! Amazon Bedrock Converse: `toolConfig.tools` of `{"toolSpec": {..}}`, calls as `toolUse`
//! blocks of `output.message.content`, results as one user message of `toolResult` blocks.
//! Converse has no strict mode.

use serde_json::{json, Map, Value};

use super::calls::Calls;
use super::declare::{DeclareOptions, Declared};
use super::json::{array, object_arguments};
use super::results::{essence, last_segment, placed, text_then_images};
use super::{Aliases, Api, CallResult, ParseError};
use crate::name::{NameRule, MODEL_API};
use crate::{Content, FileSource, ResourceContents, ToolOutput, ToolSpec};

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
                    _ => tool_result_content(&r.text(), r.attachments()),
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

/// A `toolResult` block's `content`: a text block, then the attachments Converse takes
/// ([`attachment_block`]); the others are told in words in the text. Converse refuses a blank
/// text block: a blank text is left out beside blocks, and without any it is sent as
/// `(no output)`.
pub fn tool_result_content<'a>(
    text: &str,
    attachments: impl IntoIterator<Item = &'a Content>,
) -> Value {
    let (text, blocks) = placed(text, attachments, attachment_block);
    let text = if blocks.is_empty() && text.trim().is_empty() {
        NO_OUTPUT
    } else {
        text.as_str()
    };
    let text_block = |text: &str| json!({ "text": text });
    Value::Array(text_then_images(text, blocks, text_block))
}

/// An attachment as a block of a `toolResult`, where Converse takes it: an image in PNG, JPEG,
/// GIF or WebP; a file or a resource's blob in a document format Converse reads (PDF, CSV,
/// Word, Excel, HTML, plain text, Markdown), by its bytes, named for the model
/// (see `document_name`). Files at a URL (Converse takes S3 locations alone), audio and links
/// have none.
pub fn attachment_block(attachment: &Content) -> Option<Value> {
    let document = |format: &str, name: &str, bytes: &str| json!({ "document": { "format": format, "name": document_name(name), "source": { "bytes": bytes } } });
    match attachment {
        Content::Image { data, mime_type } => {
            let format = image_format(mime_type)?;
            Some(json!({ "image": { "format": format, "source": { "bytes": data } } }))
        }
        Content::File {
            source: FileSource::Base64 { data },
            mime_type,
            name,
        } => Some(document(
            document_format(mime_type)?,
            name.as_deref().unwrap_or("file"),
            data,
        )),
        Content::Resource {
            uri,
            mime_type: Some(mime_type),
            contents: ResourceContents::Blob(blob),
        } => Some(document(
            document_format(mime_type)?,
            last_segment(uri),
            blob,
        )),
        _ => None,
    }
}

/// Converse's name for a document's media type, when it takes the type.
fn document_format(mime_type: &str) -> Option<&'static str> {
    Some(match essence(mime_type).as_str() {
        "application/pdf" => "pdf",
        "text/csv" => "csv",
        "application/msword" => "doc",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => "docx",
        "application/vnd.ms-excel" => "xls",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" => "xlsx",
        "text/html" => "html",
        "text/plain" => "txt",
        "text/markdown" => "md",
        _ => return None,
    })
}

/// A document's name as Converse takes it: letters, digits, spaces, hyphens, parentheses and
/// square brackets, no two spaces in a row. Anything else (a dot, a slash) becomes a space;
/// the extension goes, since the format says it.
pub(crate) fn document_name(name: &str) -> String {
    let stem = match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => name,
    };
    let mut out = String::with_capacity(stem.len());
    for c in stem.chars() {
        let kept = c.is_alphanumeric() || matches!(c, '-' | '(' | ')' | '[' | ']');
        let c = if kept { c } else { ' ' };
        if c == ' ' && (out.is_empty() || out.ends_with(' ')) {
            continue;
        }
        out.push(c);
    }
    let out = out.trim_end();
    if out.is_empty() {
        "file".to_owned()
    } else {
        out.to_owned()
    }
}

/// What a result with no text and no image Converse takes says.
const NO_OUTPUT: &str = "(no output)";

/// Converse's name for an image's media type, when it takes the type.
fn image_format(mime_type: &str) -> Option<&'static str> {
    match essence(mime_type).as_str() {
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
                // A format Converse does not take is told in words.
                { "text": "the radar\n[image (image/svg+xml, 8 bytes) not shown]" },
                { "image": { "format": "png", "source": { "bytes": "iVBORw0KGgo=" } } },
                { "image": { "format": "jpeg", "source": { "bytes": "iVBORw0KGgo=" } } }
            ])
        );
    }

    #[test]
    fn files_go_as_documents_in_the_formats_converse_takes_and_the_rest_in_words() {
        let output = ToolOutput::empty()
            .with_content(Content::file(
                "JVBERi0=",
                "application/pdf",
                "Q3 report.v2.pdf",
            ))
            .with_content(Content::file("YSxi", "text/csv", "../data/rows.csv"))
            .with_content(Content::file_url(
                "https://example.com/a.pdf",
                "application/pdf",
            ))
            .with_content(Content::audio("UklGRg==", "audio/wav"));
        assert_eq!(
            rendered(output),
            json!([
                { "text": "[file (application/pdf) at https://example.com/a.pdf]\n\
                           [audio (audio/wav, 4 bytes) not shown]" },
                { "document": { "format": "pdf", "name": "Q3 report v2", "source": { "bytes": "JVBERi0=" } } },
                { "document": { "format": "csv", "name": "data rows", "source": { "bytes": "YSxi" } } }
            ])
        );
        assert_eq!(document_name("..."), "file");
        assert_eq!(document_name("a  b\tc(1)[x].md"), "a b c(1)[x]");
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
        // Nothing Converse takes, and no text: the text tells of it.
        let output = ToolOutput::empty().with_content(image("image/svg+xml"));
        assert_eq!(
            rendered(output),
            json!([{ "text": "[image (image/svg+xml, 8 bytes) not shown]" }])
        );
        // No text at all: a text that says so, as Converse refuses a blank one.
        assert_eq!(
            rendered(ToolOutput::text(" \n")),
            json!([{ "text": "(no output)" }])
        );
    }
}
