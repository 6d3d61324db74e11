//! What provider-run tools did, read from a response: the part every API shares. Each API's
//! module finds its own items (OpenAI `*_call` output items, Anthropic `server_tool_use` and
//! `*_tool_result` blocks, Gemini code parts and grounding metadata).

use serde_json::Value;

use super::calls::check_shape;
use super::{api, Format, ParseError};
use crate::{Content, ToolOutput};

/// One thing a provider-run tool did, as a response reports it: a web search and its sources,
/// code and its output, a generated image, the pages read for URL context.
///
/// Nothing the provider ran is dropped: an item of a kind this crate does not know yet still
/// gives a result, whose text is the item's JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct HostedResult {
    /// The hosted tool, as the API names it: `web_search`, `code_interpreter`,
    /// `image_generation`, `file_search`, `mcp` (OpenAI `<tool>_call` items); the
    /// `server_tool_use` name or the `<tool>_tool_result` block type (Anthropic:
    /// `web_search`, `code_execution`, `bash_code_execution`, ...); `code_execution`,
    /// `google_search`, `grounding` or `url_context` (Gemini).
    pub tool: String,
    /// The call's id, when the API gives one.
    pub id: Option<String>,
    /// What it did, to read or show: text (the query, the code and its output, the sources)
    /// and images. `is_error` when the provider reports that the tool failed.
    pub output: ToolOutput,
    /// The response's own JSON for it (the item, the blocks, or the metadata), for anything the
    /// text leaves out.
    pub raw: Value,
}

impl HostedResult {
    /// A result of one text block.
    pub(crate) fn text(tool: &str, id: Option<&Value>, text: String, raw: &Value) -> Self {
        HostedResult {
            tool: tool.to_owned(),
            id: id.and_then(Value::as_str).map(str::to_owned),
            output: ToolOutput::text(text),
            raw: raw.clone(),
        }
    }

    /// Adds a block of text.
    pub(crate) fn push_text(&mut self, text: String) {
        self.output.content.push(Content::Text { text });
    }
}

/// What the provider-run tools did, in a provider's whole response, in the order the response
/// has them. The tools you run yourself (computer use, text editor, bash, your own functions)
/// are not here: [`parse_calls`](super::parse_calls) returns them as calls.
///
/// Chat Completions, Bedrock Converse and MCP have no hosted tools: their responses give none.
/// A response that is not an answer is the same error as for `parse_calls`.
///
/// ```
/// use tool_core::provider::{parse_hosted_results, Format};
/// use serde_json::json;
///
/// let response = json!({ "output": [
///     { "type": "web_search_call", "id": "ws_1", "status": "completed",
///       "action": { "type": "search", "query": "rust 2024 edition" } },
///     { "type": "message", "role": "assistant", "content": [] }
/// ]});
/// let results = parse_hosted_results(Format::OpenAiResponses, &response).unwrap();
/// assert_eq!(results[0].tool, "web_search");
/// assert_eq!(results[0].output.to_text(), "searched for: rust 2024 edition");
/// ```
pub fn parse_hosted_results(
    format: Format,
    response: &Value,
) -> Result<Vec<HostedResult>, ParseError> {
    super::limits::check_depth(format, response, &super::ResponseLimits::default())?;
    check_shape(format, response)?;
    Ok(api(format).hosted_results(response))
}

/// A value as text: strings as they are, anything else as compact JSON.
pub(crate) fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// An object's fields as `key: value` lines, in order; anything else as [`plain`] text.
pub(crate) fn fields(value: &Value) -> String {
    match value {
        Value::Object(map) if !map.is_empty() => map
            .iter()
            .map(|(k, v)| format!("{k}: {}", plain(v)))
            .collect::<Vec<_>>()
            .join("\n"),
        other => plain(other),
    }
}

/// A source as one line: `title — url`, or the url alone.
pub(crate) fn source(title: Option<&Value>, url: Option<&Value>) -> Option<String> {
    let url = url.and_then(Value::as_str)?;
    Some(match title.and_then(Value::as_str) {
        Some(title) if !title.is_empty() => format!("{title} — {url}"),
        _ => url.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_server_tool_error_is_an_error_result_paired_with_its_call() {
        let response = json!({ "content": [
            { "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": { "query": "q" } },
            { "type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
              "content": { "type": "web_search_tool_result_error", "error_code": "max_uses_exceeded" } }
        ]});
        let results = parse_hosted_results(Format::Anthropic, &response).unwrap();
        assert_eq!(results.len(), 1);
        assert!(results[0].output.is_error);
        assert_eq!(
            results[0].output.to_text(),
            "query: q\nerror: max_uses_exceeded"
        );
    }

    #[test]
    fn failed_gemini_code_and_a_failed_openai_item_are_errors() {
        let gemini = json!({ "candidates": [{ "content": { "parts": [
            { "executableCode": { "language": "PYTHON", "code": "1/0" } },
            { "codeExecutionResult": { "outcome": "OUTCOME_FAILED", "output": "ZeroDivisionError" } }
        ]}}]});
        let results = parse_hosted_results(Format::Gemini, &gemini).unwrap();
        assert_eq!(results.len(), 1);
        assert!(results[0].output.is_error);
        let openai = json!({ "output": [
            { "type": "image_generation_call", "id": "ig_1", "status": "failed", "result": null }
        ]});
        let results = parse_hosted_results(Format::OpenAiResponses, &openai).unwrap();
        assert!(results[0].output.is_error);
        assert_eq!(results[0].output.to_text(), "no image\nfailed");
    }
}
