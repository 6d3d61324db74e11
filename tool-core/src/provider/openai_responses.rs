//! OpenAI Responses: `tools` of flat `{"type": "function", "name", ..}` objects, calls as
//! `function_call` items of `output` with arguments as JSON text, results as
//! `function_call_output` items. Strict mode is `openai-strict`, as for Chat.
//!
//! Computer use calls are `computer_call` items, parsed as calls named `computer` and answered
//! with a `computer_call_output` screenshot (and the safety checks the tool acknowledged). The hosted tools' other items (`web_search_call`,
//! `code_interpreter_call`, `image_generation_call`, ...) are read as hosted results. A
//! client-executed `tool_search_call` is a call of the search tool ([`tool_search`]).

use serde_json::{json, Map, Value};

use super::calls::Calls;
use super::declare::{DeclareOptions, Declared};
use super::hosted::COMPUTER;
use super::hosted_results::{fields, plain, source, HostedResult};
use super::json::{array, object_arguments, text_arguments};
use super::results::{essence, is_one_of, last_segment, placed, text_or_blocks, WEB_IMAGES};
use super::tool_search::{self, TOOL_SEARCH};
use super::{openai_chat, Aliases, Api, CallResult, ParseError};
use crate::name::{NameRule, MODEL_API};
use crate::{text_input, Content, FileSource, ResourceContents, ToolCall, ToolSpec};

pub(crate) struct OpenAiResponses;

impl Api for OpenAiResponses {
    fn title(&self) -> &'static str {
        "OpenAI Responses"
    }

    fn name(&self) -> &'static str {
        "openai-responses"
    }

    fn name_rule(&self) -> &'static NameRule {
        &MODEL_API
    }

    fn declare(&self, spec: &ToolSpec, name: &str, options: &DeclareOptions) -> Declared {
        if spec.metadata.searches_tools {
            return Declared::plain(tool_search::responses_declaration(spec));
        }
        if let Some(input) = &spec.metadata.text_input {
            let mut custom = json!({
                "type": "custom",
                "name": name,
                "description": spec.description,
                "format": input.responses_format(),
            });
            if spec.metadata.defer_loading {
                custom["defer_loading"] = json!(true);
            }
            return Declared::plain(custom);
        }
        let (function, declared) = openai_chat::function(spec, name, options);
        let mut map = Map::new();
        map.insert("type".into(), json!("function"));
        map.extend(function);
        if spec.metadata.defer_loading {
            map.insert("defer_loading".into(), json!(true));
        }
        // What the output's text holds: a tool has an output schema only when its result is
        // structured data, which its text is the JSON of.
        if let Some(schema) = &spec.output_schema {
            map.insert("output_schema".into(), schema.clone());
        }
        Declared {
            value: Value::Object(map),
            ..declared
        }
    }

    fn has_shape(&self, response: &Value) -> bool {
        response.get("output").is_some_and(Value::is_array)
    }

    fn signature(&self) -> &'static str {
        "`output` array"
    }

    fn calls(&self, response: &Value, calls: &mut Calls<'_>) -> Result<(), ParseError> {
        for item in array(response.get("output")) {
            match item.get("type").and_then(Value::as_str) {
                Some("function_call") => calls.push(
                    item.get("call_id"),
                    item.get("name"),
                    text_arguments(item.get("arguments")),
                )?,
                // A search the client runs is a call of its search tool; the server's own
                // is a hosted result.
                Some("tool_search_call")
                    if item.get("execution").and_then(Value::as_str) == Some("client") =>
                {
                    calls.push(
                        item.get("call_id"),
                        Some(&json!(TOOL_SEARCH)),
                        object_arguments(item.get("arguments")),
                    )?
                }
                // A custom tool's call: its text is the one argument.
                Some("custom_tool_call") => {
                    let input = item
                        .get("input")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    calls.push(
                        item.get("call_id"),
                        item.get("name"),
                        text_input::text_arguments(input),
                    )?
                }
                Some("computer_call") => {
                    let mut arguments = item.as_object().cloned().unwrap_or_default();
                    for key in ["type", "id", "call_id", "status"] {
                        arguments.shift_remove(key);
                    }
                    calls.push(
                        item.get("call_id"),
                        Some(&json!(COMPUTER)),
                        Value::Object(arguments),
                    )?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn hosted_results(&self, response: &Value) -> Vec<HostedResult> {
        array(response.get("output"))
            .filter_map(|item| {
                let kind = item.get("type").and_then(Value::as_str)?;
                let by_client = item.get("execution").and_then(Value::as_str) == Some("client");
                if matches!(
                    kind,
                    "message"
                        | "reasoning"
                        | "function_call"
                        | "computer_call"
                        | "custom_tool_call"
                ) || (kind == "tool_search_call" && by_client)
                {
                    return None;
                }
                Some(hosted_result(kind, item))
            })
            .collect()
    }

    fn render(&self, results: &[CallResult], aliases: &Aliases) -> Value {
        Value::Array(
            results
                .iter()
                .map(|r| match screenshot(r) {
                    Some(image_url) => computer_call_output(r, image_url),
                    None => {
                        let kind = output_kind(aliases, &r.call.name);
                        json!({ "type": kind, "call_id": r.id(), "output": function_output(r) })
                    }
                })
                .collect(),
        )
    }
}

/// The type of the item answering a call of `real_name`: `custom_tool_call_output` for a
/// custom tool's, `function_call_output` for a function's.
pub fn output_kind(aliases: &Aliases, real_name: &str) -> &'static str {
    match aliases.tool_kind(real_name) {
        "custom" => "custom_tool_call_output",
        _ => "function_call_output",
    }
}

/// Whether a call came from a `computer_call` item: named `computer`, with the item's `action`
/// object and `pending_safety_checks` array. A function tool of your own named `computer` is
/// answered as a function unless its arguments have both.
fn is_computer_call(call: &ToolCall) -> bool {
    call.name == COMPUTER
        && call.arguments.get("action").is_some_and(Value::is_object)
        && call
            .arguments
            .get("pending_safety_checks")
            .is_some_and(Value::is_array)
}

/// A function's output: its text, or with attachments, the text and each as an input item.
fn function_output(r: &CallResult) -> Value {
    function_call_output(&r.flagged_text(), r.attachments())
}

/// A `function_call_output` item's `output`: the text alone, or with attachments, an
/// `input_text` item (left out when blank) then `input_image` and `input_file` items
/// ([`attachment_item`]); what has no item is told in words in the text.
pub fn function_call_output<'a>(
    text: &str,
    attachments: impl IntoIterator<Item = &'a Content>,
) -> Value {
    let (text, items) = placed(text, attachments, attachment_item);
    let text_block = |text: &str| json!({ "type": "input_text", "text": text });
    text_or_blocks(&text, items, text_block)
}

/// An attachment as an item of a function's output, where Responses has one: an image as an
/// `input_image` (a data URL); a PDF, by its bytes or URL or as a resource's blob, as an
/// `input_file`. Audio, other files and resource links have none (they are told in words).
pub fn attachment_item(attachment: &Content) -> Option<Value> {
    let pdf_data = |data: &str, filename: &str| {
        json!({
            "type": "input_file",
            "file_data": format!("data:application/pdf;base64,{data}"),
            "filename": filename,
        })
    };
    match attachment {
        Content::Image { data, mime_type } if is_one_of(mime_type, WEB_IMAGES) => Some(json!({
            "type": "input_image",
            "image_url": format!("data:{};base64,{data}", essence(mime_type)),
        })),
        Content::File {
            source,
            mime_type,
            name,
        } if essence(mime_type) == "application/pdf" => Some(match source {
            FileSource::Base64 { data } => pdf_data(data, name.as_deref().unwrap_or("file.pdf")),
            FileSource::Url { url } => json!({ "type": "input_file", "file_url": url }),
        }),
        Content::Resource {
            uri,
            mime_type: Some(mime_type),
            contents: ResourceContents::Blob(blob),
        } if essence(mime_type) == "application/pdf" => Some(pdf_data(blob, last_segment(uri))),
        _ => None,
    }
}

/// The screenshot answering a computer call, as a data URL: the first image of its output.
fn screenshot(r: &CallResult) -> Option<String> {
    if !is_computer_call(&r.call) {
        return None;
    }
    r.result
        .as_ref()
        .ok()?
        .content
        .iter()
        .find_map(|c| match c {
            Content::Image { data, mime_type } => Some(format!("data:{mime_type};base64,{data}")),
            _ => None,
        })
}

/// The `computer_call_output` item. The safety checks the call's `pending_safety_checks` named
/// are acknowledged only when the tool says so: an `acknowledged_safety_checks` array in its
/// structured output (after asking the user), each check as the call gave it. Never by default.
fn computer_call_output(r: &CallResult, image_url: String) -> Value {
    let mut item = json!({
        "type": "computer_call_output",
        "call_id": r.id(),
        "output": { "type": "computer_screenshot", "image_url": image_url },
    });
    let acknowledged = r
        .result
        .as_ref()
        .ok()
        .and_then(|out| out.structured.as_ref())
        .and_then(|s| s.get("acknowledged_safety_checks"))
        .filter(|checks| checks.is_array());
    if let (Some(checks), Value::Object(map)) = (acknowledged, &mut item) {
        map.insert("acknowledged_safety_checks".into(), checks.clone());
    }
    item
}

/// One `<tool>_call` output item of a provider-run tool, readable.
fn hosted_result(kind: &str, item: &Value) -> HostedResult {
    let tool = kind.strip_suffix("_call").unwrap_or(kind);
    let mut result = HostedResult::text(tool, item.get("id"), String::new(), item);
    result.output.content.clear();
    let mut lines = Vec::new();
    match kind {
        "web_search_call" => {
            let action = item.get("action");
            let field = |name: &str| action.and_then(|a| a.get(name)).map(plain);
            lines.push(
                match action.and_then(|a| a.get("type")).and_then(Value::as_str) {
                    Some("search") => {
                        format!("searched for: {}", field("query").unwrap_or_default())
                    }
                    Some("open_page") => format!("opened: {}", field("url").unwrap_or_default()),
                    Some("find_in_page") => format!(
                        "searched {} for: {}",
                        field("url").unwrap_or_default(),
                        field("pattern").unwrap_or_default()
                    ),
                    _ => "searched the web".to_owned(),
                },
            );
            let sources = action.and_then(|a| a.get("sources"));
            lines.extend(array(sources).filter_map(|s| source(s.get("title"), s.get("url"))));
        }
        "code_interpreter_call" => {
            lines.extend(item.get("code").and_then(Value::as_str).map(str::to_owned));
            for output in array(item.get("outputs")) {
                match output.get("type").and_then(Value::as_str) {
                    Some("logs") => lines.extend(output.get("logs").map(plain)),
                    Some("image") => {
                        lines.extend(output.get("url").map(|u| format!("image: {}", plain(u))))
                    }
                    _ => lines.push(plain(output)),
                }
            }
        }
        "image_generation_call" => {
            lines.extend(
                item.get("revised_prompt")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            );
            if let Some(data) = item.get("result").and_then(Value::as_str) {
                let format = item
                    .get("output_format")
                    .and_then(Value::as_str)
                    .unwrap_or("png");
                result.push_text(lines.join(
                    "
",
                ));
                lines.clear();
                result.output.content.push(Content::Image {
                    data: data.to_owned(),
                    mime_type: format!("image/{format}"),
                });
            } else {
                lines.push("no image".to_owned());
            }
        }
        "file_search_call" => {
            let queries: Vec<String> = array(item.get("queries")).map(plain).collect();
            lines.push(format!("searched files for: {}", queries.join(", ")));
            for hit in array(item.get("results")) {
                let name = hit.get("filename").or(hit.get("file_id")).map(plain);
                lines.push(format!(
                    "{}: {}",
                    name.unwrap_or_default(),
                    hit.get("text").map(plain).unwrap_or_default()
                ));
            }
        }
        "mcp_call" => {
            lines.push(format!(
                "called {}.{} with {}",
                item.get("server_label").map(plain).unwrap_or_default(),
                item.get("name").map(plain).unwrap_or_default(),
                item.get("arguments").map(plain).unwrap_or_default(),
            ));
            lines.extend(item.get("output").filter(|o| !o.is_null()).map(plain));
            if let Some(error) = item.get("error").filter(|e| !e.is_null()) {
                lines.push(format!("error: {}", plain(error)));
                result.output.is_error = true;
            }
        }
        _ => lines.push(fields(item)),
    }
    if item.get("status").and_then(Value::as_str) == Some("failed") {
        lines.push("failed".to_owned());
        result.output.is_error = true;
    }
    if !lines.is_empty() {
        result.push_text(lines.join(
            "
",
        ));
    }
    result
        .output
        .content
        .retain(|c| !matches!(c, Content::Text { text } if text.is_empty()));
    result
}
