//! The conversation as Responses takes it: each neutral message as input items (`message`,
//! `function_call`, `function_call_output`), an answer with the reasoning items it came with.

use serde_json::{json, Value};
use tool_core::provider::tool_search::{
    responses_tool_search_call, responses_tool_search_output, TOOL_SEARCH,
};
use tool_core::provider::{
    flagged_error_text, responses_function_call_output, responses_output_kind, Aliases,
    Declarations,
};

use super::REASONING_API;
use crate::tool_ids::{call_id_at, result_id_at};
use tool_model::message::{reasoning_before, Message};

/// Message `index` of `messages` as Responses input items. `stored` says whether the API
/// keeps reasoning items itself (`store: true`); reasoning goes back to its `source` only.
/// `search` is the request's declarations when they declare a tool search the client runs:
/// calls of [`TOOL_SEARCH`] and their results then go as `tool_search_call` and
/// `tool_search_output` items.
pub(super) fn items(
    messages: &[Message],
    index: usize,
    aliases: &Aliases,
    search: Option<&Declarations>,
    stored: bool,
    source: &str,
) -> Vec<Value> {
    let Some(message) = messages.get(index) else {
        return Vec::new();
    };
    match message {
        // Sent with the answer after it.
        Message::Reasoning(_) => Vec::new(),
        Message::User { text } => vec![json!({ "role": "user", "content": text })],
        Message::Assistant { text, calls } => {
            let text = text
                .as_deref()
                .filter(|t| !t.is_empty())
                .map(|t| json!({ "role": "assistant", "content": t }));
            let calls = calls.iter().enumerate().map(|(position, call)| {
                let call_id = call_id_at(messages, index, position);
                if search.is_some() && call.name == TOOL_SEARCH {
                    return responses_tool_search_call(&call_id, &call.arguments);
                }
                let mut item = if aliases.takes_text(&call.name) {
                    json!({
                        "type": "custom_tool_call",
                        "call_id": call_id,
                        "name": aliases.provider_name(&call.name),
                        "input": tool_core::text_input::input_text(&call.arguments),
                    })
                } else {
                    let arguments = match &call.arguments {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    };
                    json!({
                        "type": "function_call",
                        "call_id": call_id,
                        "name": aliases.provider_name(&call.name),
                        "arguments": arguments,
                    })
                };
                // A tool of a namespace is called in it.
                if let Some(namespace) = aliases.namespace(&call.name) {
                    item["namespace"] = json!(namespace);
                }
                item
            });
            let answer: Vec<Value> = text.into_iter().chain(calls).collect();
            if answer.is_empty() {
                // A reasoning item must be followed by what it led to.
                return answer;
            }
            let reasoning = reasoning_before(messages, index, REASONING_API, Some(source))
                .iter()
                .filter(|item| {
                    stored
                        || item.get("type").and_then(Value::as_str) != Some("reasoning")
                        || item.get("encrypted_content").is_some_and(Value::is_string)
                })
                .cloned();
            reasoning.chain(answer).collect()
        }
        Message::Tool {
            name,
            text,
            attachments,
            is_error,
            found_tools,
            ..
        } => {
            if let Some(declarations) = search.filter(|_| name == TOOL_SEARCH && !*is_error) {
                let call_id = result_id_at(messages, index);
                let found = found_tools.iter().map(String::as_str);
                return vec![responses_tool_search_output(&call_id, declarations, found)];
            }
            let text = flagged_error_text(text, *is_error);
            let output = responses_function_call_output(&text, attachments);
            vec![json!({
                "type": responses_output_kind(aliases, name),
                "call_id": result_id_at(messages, index),
                "output": output,
            })]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openai_responses::tests::{rs, HERE};
    use tool_core::ToolCall;
    use tool_model::message::Reasoning;

    #[test]
    fn calls_and_results_become_function_call_items() {
        let call = Message::Assistant {
            text: Some("Adding.".into()),
            calls: vec![ToolCall::new("fc_1", "add", json!({ "a": 1 }))],
        };
        assert_eq!(
            items(&[call], 0, &Aliases::default(), None, false, HERE),
            [
                json!({ "role": "assistant", "content": "Adding." }),
                json!({ "type": "function_call", "call_id": "fc_1", "name": "add", "arguments": "{\"a\":1}" }),
            ]
        );
        let result = Message::Tool {
            call_id: Some("fc_1".into()),
            name: "add".into(),
            text: "1".into(),
            is_error: false,
            attachments: Vec::new(),
            found_tools: Vec::new(),
        };
        assert_eq!(
            items(
                std::slice::from_ref(&result),
                0,
                &Aliases::default(),
                None,
                false,
                HERE
            ),
            [json!({ "type": "function_call_output", "call_id": "fc_1", "output": "1" })]
        );
    }

    #[test]
    fn a_call_without_an_id_and_its_result_get_the_same_one() {
        // A Gemini model's call, carried over after a fallback.
        let messages = [
            Message::Assistant {
                text: None,
                calls: vec![ToolCall {
                    id: None,
                    name: "add".into(),
                    arguments: json!({}),
                }],
            },
            Message::Tool {
                call_id: None,
                name: "add".into(),
                text: "1".into(),
                is_error: false,
                attachments: Vec::new(),
                found_tools: Vec::new(),
            },
        ];
        let aliases = Aliases::default();
        let call = items(&messages, 0, &aliases, None, false, HERE);
        let result = items(&messages, 1, &aliases, None, false, HERE);
        let id = &call[0]["call_id"];
        assert!(id.as_str().is_some_and(|id| !id.is_empty()), "{call:?}");
        assert_eq!(&result[0]["call_id"], id);
    }

    #[test]
    fn a_results_images_go_with_its_text_as_input_images() {
        let result = Message::Tool {
            call_id: Some("fc_1".into()),
            name: "chart".into(),
            text: "the chart".into(),
            is_error: false,
            attachments: vec![tool_core::Content::image("iVBORw0KGgo=", "image/png")],
            found_tools: Vec::new(),
        };
        assert_eq!(
            items(
                std::slice::from_ref(&result),
                0,
                &Aliases::default(),
                None,
                false,
                HERE
            ),
            [
                json!({ "type": "function_call_output", "call_id": "fc_1", "output": [
                { "type": "input_text", "text": "the chart" },
                { "type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=" }
            ] })
            ]
        );
    }

    #[test]
    fn encrypted_reasoning_goes_back_before_its_answer_and_only_there() {
        let thought = |api: &str, blocks: Vec<Value>| {
            Message::Reasoning(Reasoning {
                api: api.into(),
                source: Some(HERE.into()),
                blocks,
            })
        };
        let answer = Message::Assistant {
            text: None,
            calls: vec![ToolCall::new("fc_1", "add", json!({ "a": 1 }))],
        };
        let call = json!({ "type": "function_call", "call_id": "fc_1", "name": "add", "arguments": "{\"a\":1}" });
        let ours = thought(
            REASONING_API,
            vec![rs("rs_1", Some("gAAA")), rs("rs_2", None)],
        );
        let messages = [ours.clone(), answer.clone()];
        let sent = |messages: &[Message], stored: bool| -> Vec<Value> {
            (0..messages.len())
                .flat_map(|i| items(messages, i, &Aliases::default(), None, stored, HERE))
                .collect()
        };
        // Not stored: the item the API can read back, with its encrypted content, as it came.
        assert_eq!(
            sent(&messages, false),
            [rs("rs_1", Some("gAAA")), call.clone()]
        );
        // Stored: every item, the API finds the others by id.
        assert_eq!(
            sent(&messages, true),
            [rs("rs_1", Some("gAAA")), rs("rs_2", None), call.clone()]
        );
        // Another API's reasoning stays out.
        let theirs = [
            thought("anthropic", vec![rs("rs_1", Some("gAAA"))]),
            answer.clone(),
        ];
        assert_eq!(sent(&theirs, false), std::slice::from_ref(&call));
        // So does the reasoning of another endpoint or model (a fallback's, another
        // organization's, which this one could not decrypt); one from before sources goes.
        let mut elsewhere = ours.clone();
        let mut unnamed = ours.clone();
        if let (Message::Reasoning(elsewhere), Message::Reasoning(unnamed)) =
            (&mut elsewhere, &mut unnamed)
        {
            elsewhere.source = Some("http://azure.test/openai/v1/responses gpt-5".into());
            unnamed.source = None;
        }
        assert_eq!(
            sent(&[elsewhere, answer.clone()], false),
            std::slice::from_ref(&call)
        );
        assert_eq!(
            sent(&[unnamed, answer], false),
            [rs("rs_1", Some("gAAA")), call]
        );
        // A reasoning item with no answer after it to send is left out with the answer.
        let empty = Message::Assistant {
            text: Some(String::new()),
            calls: Vec::new(),
        };
        assert_eq!(sent(&[ours, empty], false), Vec::<Value>::new());
    }
}
