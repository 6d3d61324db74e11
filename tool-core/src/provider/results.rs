//! Rendering results, the part every API shares: [`CallResult`] and the text of a result; each
//! API's module writes its own shape.

use serde_json::Value;

use super::{api, Aliases, Format};
use crate::{Content, ToolCall, ToolError, ToolOutput};

/// A call and what came of it.
#[derive(Debug, Clone)]
pub struct CallResult {
    /// The call.
    pub call: ToolCall,
    /// Its output, or why there is none.
    pub result: Result<ToolOutput, ToolError>,
}

impl CallResult {
    /// The call's id, or `""` when the API gave none.
    pub(crate) fn id(&self) -> String {
        self.call.id.clone().unwrap_or_default()
    }

    /// The text of the result: the output's text, or the error as the model should read it.
    pub(crate) fn text(&self) -> String {
        match &self.result {
            Ok(output) => output.to_text(),
            Err(e) => e.to_model_text(),
        }
    }

    /// [`CallResult::text`] marked as an error when it is one, for the APIs whose tool
    /// results have no error flag ([`flagged_error_text`]).
    pub(crate) fn flagged_text(&self) -> String {
        let text = self.text();
        match flagged_error_text(&text, self.is_error()) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(flagged) => flagged,
        }
    }

    /// Whether the call failed, or its output says it is an error.
    pub(crate) fn is_error(&self) -> bool {
        self.result.is_err() || self.result.as_ref().is_ok_and(|o| o.is_error)
    }

    /// The deferred tools the output loads ([`Content::ToolReference`]); none for a failure.
    pub(crate) fn tool_references(&self) -> impl Iterator<Item = &str> {
        self.result
            .as_ref()
            .ok()
            .filter(|output| !output.is_error)
            .into_iter()
            .flat_map(|output| output.referenced_tools())
    }

    /// The output's attachments: images, audio, files and resources
    /// ([`ToolOutput::attachments`]); none for a failure.
    pub(crate) fn attachments(&self) -> impl Iterator<Item = &Content> {
        self.result
            .as_ref()
            .ok()
            .into_iter()
            .flat_map(|output| output.attachments())
    }
}

/// A result's text and attachments as one API takes them: `block` gives an attachment's block
/// where the API has one; each it has none for is told in words after the text
/// ([`Content::described`]), so nothing a tool gave back goes unmentioned.
pub(crate) fn placed<'a>(
    text: &str,
    attachments: impl IntoIterator<Item = &'a Content>,
    block: impl Fn(&Content) -> Option<Value>,
) -> (String, Vec<Value>) {
    let mut text = text.to_owned();
    let mut blocks = Vec::new();
    for attachment in attachments {
        match block(attachment) {
            Some(placed) => blocks.push(placed),
            None => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&attachment.described());
            }
        }
    }
    (text, blocks)
}

/// The essence of a media type (`application/pdf` of `application/pdf; x=y`), lowercase.
pub(crate) fn essence(mime_type: &str) -> String {
    mime_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// The image types Anthropic and OpenAI take (Gemini the same but GIF): an image of another
/// type (SVG, TIFF, ...) would make the API refuse the whole request, so it is told in words.
pub(crate) const WEB_IMAGES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// Whether `mime_type`'s essence is one of `types`.
pub(crate) fn is_one_of(mime_type: &str, types: &[&str]) -> bool {
    let essence = essence(mime_type);
    let essence = if essence == "image/jpg" {
        "image/jpeg".to_owned()
    } else {
        essence
    };
    types.contains(&essence.as_str())
}

/// The last segment of a URI's path, for a file name where none is given.
pub(crate) fn last_segment(uri: &str) -> &str {
    let path = uri.split(['?', '#']).next().unwrap_or_default();
    path.rsplit('/').find(|s| !s.is_empty()).unwrap_or("file")
}

/// A result's text and images as content blocks, the rule every API with image blocks shares:
/// the text block first, then the images. The text block is left out when it is blank and
/// there are images, because the APIs refuse a blank text block; without images it stays.
pub(crate) fn text_then_images(
    text: &str,
    images: Vec<Value>,
    text_block: fn(&str) -> Value,
) -> Vec<Value> {
    let text = (images.is_empty() || !text.trim().is_empty()).then(|| text_block(text));
    text.into_iter().chain(images).collect()
}

/// A result's content for the APIs that take either a string or blocks (Anthropic's
/// `tool_result`, Responses' `function_call_output`): the text alone when there is no image,
/// else [`text_then_images`].
pub(crate) fn text_or_blocks(
    text: &str,
    images: Vec<Value>,
    text_block: fn(&str) -> Value,
) -> Value {
    if images.is_empty() {
        return Value::String(text.to_owned());
    }
    Value::Array(text_then_images(text, images, text_block))
}

/// The results of one response's calls, in the shape the API takes in the next request:
///
/// - OpenAI Chat: an array of `{"role":"tool","tool_call_id","content"}` messages;
/// - OpenAI Responses: an array of `function_call_output` items;
/// - Anthropic: one user message of `tool_result` blocks, `is_error` on failures;
/// - Gemini: one user content of `functionResponse` parts, with the call `id` where given;
/// - Bedrock: one user message of `toolResult` blocks, `status: "error"` on failures (a field
///   Nova and Claude models take; `BedrockModel` in `tool-agent` leaves it out for the others);
/// - MCP: an array of `CallToolResult`s with `content`, `structuredContent` and `isError`.
///
/// A failure is rendered as text the model can use to fix its call. An output's images go where
/// the API takes them: Anthropic `image` blocks, Responses `input_image` items, Gemini
/// `functionResponse` parts (read by Gemini 3 models), Bedrock `image` blocks (PNG, JPEG, GIF,
/// WebP; read by Nova and Claude models), MCP content; Chat Completions gets the text.
pub fn render_results(format: Format, results: &[CallResult], aliases: &Aliases) -> Value {
    api(format).render(results, aliases)
}

/// A tool result's text as Chat Completions and Responses take it: they have no error flag
/// (Anthropic, Gemini, Bedrock and MCP do), so a failed result's text starts with `Error: `,
/// and the model cannot read a failure as a success.
pub fn flagged_error_text(text: &str, is_error: bool) -> std::borrow::Cow<'_, str> {
    if is_error {
        std::borrow::Cow::Owned(format!("Error: {text}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::provider::Format;

    /// One attachment of every kind, after a line of text.
    fn rich() -> CallResult {
        let content = vec![
            Content::text("the radar"),
            Content::image("iVBORw0KGgo=", "image/png"),
            Content::file("JVBERi0=", "application/pdf", "report.pdf"),
            Content::file_url("https://example.com/a.pdf", "application/pdf"),
            Content::file("c3Vubnk=", "text/plain", "summary.txt"),
            Content::audio("UklGRg==", "audio/wav"),
            Content::resource_link("https://example.com/paris", "paris"),
            Content::text_resource("weather://paris", "18°C"),
        ];
        CallResult {
            call: ToolCall::new("c1", "radar", json!({})),
            result: Ok(ToolOutput {
                content,
                ..ToolOutput::default()
            }),
        }
    }

    /// Every string in `value`, joined: where the words of the result went.
    fn strings(value: &Value) -> String {
        match value {
            Value::String(s) => s.clone(),
            Value::Array(items) => items.iter().map(strings).collect::<Vec<_>>().join("|"),
            Value::Object(map) => map.values().map(strings).collect::<Vec<_>>().join("|"),
            _ => String::new(),
        }
    }

    #[test]
    fn an_image_of_a_type_the_api_refuses_is_told_in_words_not_sent() {
        let svg = CallResult {
            call: ToolCall::new("c1", "chart", json!({})),
            result: Ok(ToolOutput::text("the chart")
                .with_content(Content::image("PHN2Zz4=", "image/svg+xml"))
                .with_content(Content::image("iVBORw0KGgo=", "image/PNG; x=1"))),
        };
        for format in [
            Format::Anthropic,
            Format::OpenAiResponses,
            Format::Gemini,
            Format::Bedrock,
        ] {
            let rendered = render_results(format, std::slice::from_ref(&svg), &Aliases::default());
            let all = rendered.to_string();
            assert!(
                all.contains("[image (image/svg+xml, 5 bytes) not shown]"),
                "{format:?}: {all}"
            );
            assert!(!all.contains("PHN2Zz4="), "{format:?}: {all}");
            assert!(all.contains("iVBORw0KGgo="), "{format:?}: {all}");
            assert!(
                !all.contains("x=1"),
                "{format:?} sends the bare media type: {all}"
            );
        }
    }

    #[test]
    fn each_api_takes_the_attachments_it_has_a_place_for_and_is_told_of_the_rest() {
        let rendered = |format| render_results(format, &[rich()], &Aliases::default());
        let kinds = |blocks: &Value, key: &str| -> Vec<String> {
            (blocks.as_array().unwrap().iter())
                .map(|b| b[key].as_str().unwrap_or("?").to_owned())
                .collect()
        };

        let anthropic = rendered(Format::Anthropic);
        let content = &anthropic["content"][0]["content"];
        assert_eq!(
            kinds(content, "type"),
            ["text", "image", "document", "document", "document", "document"]
        );
        assert_eq!(
            content[4]["source"],
            json!({ "type": "text", "media_type": "text/plain", "data": "sunny" })
        );
        assert_eq!(content[0]["text"], "the radar\n[audio (audio/wav, 4 bytes) not shown]\n[resource paris at https://example.com/paris]");

        let responses = rendered(Format::OpenAiResponses);
        let output = &responses[0]["output"];
        assert_eq!(
            kinds(output, "type"),
            ["input_text", "input_image", "input_file", "input_file"]
        );
        assert_eq!(
            output[2]["file_data"],
            "data:application/pdf;base64,JVBERi0="
        );
        assert_eq!(output[3]["file_url"], "https://example.com/a.pdf");
        let text = output[0]["text"].as_str().unwrap();
        for told in [
            "[file summary.txt]\nsunny",
            "[audio",
            "[resource paris",
            "[resource weather://paris]\n18°C",
        ] {
            assert!(text.contains(told), "{told} in {text}");
        }

        // Chat Completions takes text alone: every attachment is told in words.
        let chat = rendered(Format::OpenAiChat);
        let text = chat[0]["content"].as_str().unwrap();
        for told in [
            "[image (image/png, 8 bytes) not shown]",
            "[file report.pdf (application/pdf, 5 bytes) not shown]",
            "at https://example.com/a.pdf]",
            "sunny",
            "[audio",
            "[resource paris",
            "18°C",
        ] {
            assert!(text.contains(told), "{told} in {text}");
        }

        let gemini = rendered(Format::Gemini);
        let response = &gemini["parts"][0]["functionResponse"];
        let parts: Vec<&str> = (response["parts"].as_array().unwrap().iter())
            .map(|p| p["inlineData"]["mimeType"].as_str().unwrap())
            .collect();
        assert_eq!(parts, ["image/png", "application/pdf", "text/plain"]);
        let told = response["response"]["output"].as_str().unwrap();
        assert!(
            told.starts_with("the radar\n[file (application/pdf) at https://example.com/a.pdf]"),
            "{told}"
        );

        let bedrock = rendered(Format::Bedrock);
        let content = &bedrock["content"][0]["toolResult"]["content"];
        let names: Vec<String> = (content.as_array().unwrap().iter())
            .map(|b| b.as_object().unwrap().keys().next().unwrap().clone())
            .collect();
        assert_eq!(names, ["text", "image", "document", "document"]);
        assert_eq!(content[3]["document"]["format"], "txt");

        let mcp = rendered(Format::Mcp);
        assert_eq!(
            kinds(&mcp[0]["content"], "type"),
            [
                "text",
                "image",
                "resource",
                "resource_link",
                "resource",
                "audio",
                "resource_link",
                "resource"
            ]
        );

        // Nothing is lost: every format mentions or carries each attachment.
        for format in [
            Format::Anthropic,
            Format::OpenAiResponses,
            Format::OpenAiChat,
            Format::Gemini,
            Format::Bedrock,
            Format::Mcp,
        ] {
            let all = strings(&rendered(format));
            for piece in [
                "iVBORw0KGgo=",
                "a.pdf",
                "UklGRg==",
                "https://example.com/paris",
                "18°C",
            ] {
                let said = all.contains(piece)
                    || (piece == "iVBORw0KGgo=" && all.contains("image/png"))
                    || (piece == "UklGRg==" && all.contains("audio/wav"));
                assert!(said, "{format:?} loses {piece}: {all}");
            }
        }
    }
}
