//! Tool search run by your own code: a tool the model calls with a query, whose results load
//! the deferred tools it found ([`ToolMetadata::defer_loading`](crate::ToolMetadata)).
//!
//! | API | deferred tools | the search tool | its result |
//! |---|---|---|---|
//! | Anthropic | `defer_loading: true` | a tool like any other | `tool_reference` blocks in the `tool_result` |
//! | OpenAI Responses | `defer_loading: true` | `{"type": "tool_search", "execution": "client"}`, called by `tool_search_call` items | a `tool_search_output` item holding the found tools' declarations |
//! | others | declared as usual | a tool like any other | the found tools' names, in words |
//!
//! The search tool is the spec [`tool_search_spec`] makes, marked
//! [`searches_tools`](crate::ToolMetadata::searches_tools); its output is
//! [`ToolOutput::tool_references`](crate::ToolOutput::tool_references). The provider's own
//! search is [`HostedTool::ToolSearch`](super::hosted::HostedTool::ToolSearch).

use serde_json::{json, Value};

use super::{Aliases, Declarations, Format};
use crate::{ToolMetadata, ToolSpec};

/// The name of the search tool [`tool_search_spec`] makes, and of the calls parsed from
/// OpenAI Responses' client-executed `tool_search_call` items.
pub const TOOL_SEARCH: &str = "tool_search";

/// The most tools one search loads unless told otherwise.
pub const DEFAULT_TOOL_SEARCH_RESULTS: usize = 5;

/// Whether the API declares deferred tools and loads them by search (Anthropic, OpenAI
/// Responses). Elsewhere a deferred tool is declared as usual.
pub fn defers_loading(format: Format) -> bool {
    matches!(format, Format::Anthropic | Format::OpenAiResponses)
}

/// The search tool: takes a `query` (and an optional `limit`, at most `max_results`) and
/// answers with the deferred tools it found.
pub fn tool_search_spec(max_results: usize) -> ToolSpec {
    let max_results = max_results.max(1);
    ToolSpec {
        name: TOOL_SEARCH.into(),
        description: format!(
            "Searches the tools that are not loaded yet and loads the ones that match, at most \
             {max_results}. Call it with what you need to do, in a few words, before calling a \
             tool you do not see."
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "description": "What the tool should do, in a few words."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": max_results,
                    "description": "The most tools to load."
                }
            },
            "required": ["query"],
            "additionalProperties": false
        }),
        output_schema: None,
        metadata: ToolMetadata {
            searches_tools: true,
            hints: crate::SafetyHints {
                read_only: Some(true),
                destructive: Some(false),
                idempotent: Some(true),
                open_world: Some(false),
            },
            ..ToolMetadata::default()
        },
    }
}

/// The OpenAI Responses declaration of a search tool run by the client.
pub(crate) fn responses_declaration(spec: &ToolSpec) -> Value {
    json!({
        "type": "tool_search",
        "execution": "client",
        "description": spec.description,
        "parameters": spec.parameters,
    })
}

/// A search call as OpenAI Responses takes it back: a client-executed `tool_search_call` item.
pub fn responses_tool_search_call(call_id: &str, arguments: &Value) -> Value {
    let arguments = match arguments {
        Value::Object(_) => arguments.clone(),
        _ => json!({}),
    };
    json!({
        "type": "tool_search_call",
        "call_id": call_id,
        "execution": "client",
        "status": "completed",
        "arguments": arguments,
    })
}

/// A search's result as OpenAI Responses takes it: a `tool_search_output` item holding the
/// declarations of the tools found, as the request declares them (those of a namespace in
/// their `namespace` object, with the others found in it). A name the request does not declare
/// is left out.
pub fn responses_tool_search_output<'a>(
    call_id: &str,
    declarations: &Declarations,
    found: impl IntoIterator<Item = &'a str>,
) -> Value {
    let declared = declarations.tools.as_array().map_or(&[][..], Vec::as_slice);
    let is_tool = |d: &Value, name: &str| {
        matches!(
            d.get("type").and_then(Value::as_str),
            Some("function" | "custom")
        ) && d.get("name").and_then(Value::as_str) == Some(name)
    };
    let is_group = |d: &Value, name: &str| {
        d.get("type").and_then(Value::as_str) == Some("namespace")
            && d.get("name").and_then(Value::as_str) == Some(name)
    };
    let mut tools: Vec<Value> = Vec::new();
    for name in found {
        let provider_name = declarations.aliases.provider_name(name);
        if let Some(tool) = declared.iter().find(|d| is_tool(d, provider_name)) {
            tools.push(tool.clone());
            continue;
        }
        let Some(namespace) = declarations.aliases.namespace(name) else {
            continue;
        };
        let Some(group) = declared.iter().find(|d| is_group(d, namespace)) else {
            continue;
        };
        let member = group
            .get("tools")
            .and_then(Value::as_array)
            .and_then(|members| members.iter().find(|d| is_tool(d, provider_name)));
        let Some(member) = member else {
            continue;
        };
        match tools.iter_mut().find(|t| is_group(t, namespace)) {
            Some(loaded) => {
                if let Some(Value::Array(members)) = loaded.get_mut("tools") {
                    members.push(member.clone());
                }
            }
            None => tools.push(json!({
                "type": "namespace",
                "name": namespace,
                "description": group.get("description").cloned().unwrap_or(json!("")),
                "tools": [member.clone()],
            })),
        }
    }
    json!({
        "type": "tool_search_output",
        "call_id": call_id,
        "execution": "client",
        "status": "completed",
        "tools": tools,
    })
}

/// A search's result as Anthropic takes it: the `tool_result` content of one `tool_reference`
/// block per tool found, under the names the tools are declared by.
pub fn anthropic_tool_references<'a>(
    found: impl IntoIterator<Item = &'a str>,
    aliases: &Aliases,
) -> Value {
    Value::Array(
        found
            .into_iter()
            .map(|name| json!({ "type": "tool_reference", "tool_name": aliases.provider_name(name) }))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{declare, parse_calls, DeclareOptions};
    use crate::ToolOutput;

    fn deferred(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: format!("{name} things"),
            parameters: json!({ "type": "object" }),
            output_schema: None,
            metadata: ToolMetadata {
                defer_loading: true,
                ..ToolMetadata::default()
            },
        }
    }

    #[test]
    fn deferred_tools_are_declared_deferred_where_the_api_has_search() {
        let specs = [deferred("get_weather"), tool_search_spec(5)];
        let anthropic = declare(&specs, Format::Anthropic, &DeclareOptions::default());
        assert_eq!(anthropic.tools[0]["defer_loading"], json!(true));
        assert_eq!(anthropic.tools[1]["name"], json!(TOOL_SEARCH));
        assert!(anthropic.tools[1].get("defer_loading").is_none());
        let responses = declare(&specs, Format::OpenAiResponses, &DeclareOptions::default());
        assert_eq!(responses.tools[0]["defer_loading"], json!(true));
        assert_eq!(
            responses.tools[1],
            json!({
                "type": "tool_search",
                "execution": "client",
                "description": specs[1].description,
                "parameters": specs[1].parameters,
            })
        );
        for format in [
            Format::OpenAiChat,
            Format::Gemini,
            Format::Bedrock,
            Format::Mcp,
        ] {
            let declared = declare(&specs, format, &DeclareOptions::default());
            assert!(
                !declared.tools.to_string().contains("defer_loading"),
                "{format}: {}",
                declared.tools
            );
        }
    }

    #[test]
    fn a_client_search_call_of_responses_is_a_call_of_the_search_tool() {
        let response = json!({ "output": [
            { "type": "tool_search_call", "id": "ts_1", "call_id": "call_1", "execution": "client",
              "status": "completed", "arguments": { "query": "weather" } },
            { "type": "tool_search_call", "id": "ts_2", "execution": "server",
              "status": "completed", "arguments": { "query": "time" } }
        ]});
        let calls = parse_calls(Format::OpenAiResponses, &response, &Aliases::default()).unwrap();
        assert_eq!(
            calls.len(),
            1,
            "the server's own search is no call: {calls:?}"
        );
        assert_eq!(calls[0].name, TOOL_SEARCH);
        assert_eq!(calls[0].id.as_deref(), Some("call_1"));
        assert_eq!(calls[0].arguments, json!({ "query": "weather" }));
    }

    #[test]
    fn results_load_the_found_tools_each_api_its_way() {
        let specs = [
            deferred("get_weather"),
            deferred("get_time"),
            tool_search_spec(5),
        ];
        let responses = declare(&specs, Format::OpenAiResponses, &DeclareOptions::default());
        let output = responses_tool_search_output("call_1", &responses, ["get_time", "nowhere"]);
        assert_eq!(output["type"], "tool_search_output");
        assert_eq!(output["call_id"], "call_1");
        assert_eq!(output["tools"], json!([responses.tools[1].clone()]));
        let anthropic = declare(&specs, Format::Anthropic, &DeclareOptions::default());
        let found = ToolOutput::tool_references(["get_weather"]);
        assert_eq!(
            anthropic_tool_references(found.referenced_tools(), &anthropic.aliases),
            json!([{ "type": "tool_reference", "tool_name": "get_weather" }])
        );
        assert_eq!(
            responses_tool_search_call("call_1", &json!({ "query": "q" }))["arguments"],
            json!({ "query": "q" })
        );
    }
}
