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

    /// The images of the output, each `(base64 data, media type)`; none for a failure.
    /// The deferred tools the output loads ([`Content::ToolReference`]); none for a failure.
    pub(crate) fn tool_references(&self) -> impl Iterator<Item = &str> {
        self.result
            .as_ref()
            .ok()
            .filter(|output| !output.is_error)
            .into_iter()
            .flat_map(|output| output.referenced_tools())
    }

    pub(crate) fn images(&self) -> impl Iterator<Item = (&str, &str)> {
        let content = match &self.result {
            Ok(output) => output.content.as_slice(),
            Err(_) => &[],
        };
        content.iter().filter_map(|c| match c {
            Content::Image { data, mime_type } => Some((data.as_str(), mime_type.as_str())),
            Content::Text { .. } | Content::ToolReference { .. } => None,
        })
    }
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
