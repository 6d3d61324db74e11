//! The conversation as Anthropic takes it: the neutral messages as Anthropic's messages
//! (results of one answer's calls in one user message, call ids of Anthropic's alphabet,
//! thinking and a turn kept whole sent back as they came), and the tool choice.

use serde_json::{json, Value};
use tool_core::provider::tool_search::anthropic_tool_references;
use tool_core::provider::{anthropic_tool_result_content, Aliases};

use super::response::{container_of, is_blank_text, is_call, is_neutral, REASONING_API};
use crate::tool_ids::ToolUseIds;
use tool_model::message::{reasoning_before, Message};
use tool_model::{AllowedMode, ToolChoice};

/// The characters of Anthropic's tool use ids (`^[a-zA-Z0-9_-]+$`).
fn anthropic_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-')
}

/// The neutral messages as Anthropic's: results of one answer's calls go together in one user
/// message of `tool_result` blocks; call ids as Anthropic takes them (another API's model may
/// have written any, or none).
pub(super) fn messages(messages: &[Message], aliases: &Aliases) -> Value {
    let mut ids = ToolUseIds::new(anthropic_id_char);
    let mut out: Vec<Value> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    let flush = |results: &mut Vec<Value>, out: &mut Vec<Value>| {
        if !results.is_empty() {
            out.push(json!({ "role": "user", "content": std::mem::take(results) }));
        }
    };
    for (i, message) in messages.iter().enumerate() {
        match message {
            Message::Tool {
                call_id,
                text,
                is_error,
                attachments,
                found_tools,
                ..
            } => {
                // Anthropic refuses a failed result without content.
                let text = match text.as_str() {
                    "" if *is_error && attachments.is_empty() => "Error",
                    text => text,
                };
                let content = if found_tools.is_empty() || *is_error {
                    anthropic_tool_result_content(text, attachments)
                } else {
                    // A tool search's: the tools it found, for Anthropic to load.
                    anthropic_tool_references(found_tools.iter().map(String::as_str), aliases)
                };
                let mut block = json!({
                    "type": "tool_result",
                    "tool_use_id": ids.of_result(call_id.as_deref()),
                    "content": content,
                });
                if *is_error {
                    block["is_error"] = json!(true);
                }
                results.push(block);
            }
            Message::User { text } => {
                flush(&mut results, &mut out);
                out.push(json!({ "role": "user", "content": text }));
            }
            // Sent with the answer after it.
            Message::Reasoning(_) => {}
            Message::Assistant { text, calls } => {
                let kept = reasoning_before(messages, i, REASONING_API, None);
                // An answer with blocks of the tools Anthropic runs was kept whole: it goes
                // back as it came (a paused turn may hold nothing else).
                let whole = kept.iter().any(|block| !is_neutral(block));
                if message.is_empty_answer() && !whole {
                    continue;
                }
                flush(&mut results, &mut out);
                ids.new_turn();
                // Thinking first, as it came: Anthropic checks its signatures. Calls are
                // written from the message, which holds those the run kept.
                let mut content: Vec<Value> = kept
                    .iter()
                    .filter(|block| !is_call(block) && !is_blank_text(block))
                    .filter(|block| container_of(block).is_none())
                    .cloned()
                    .collect();
                // Anthropic refuses a text block of white space alone.
                let text = text.as_deref().filter(|t| !t.trim().is_empty() && !whole);
                if let Some(text) = text {
                    content.push(json!({ "type": "text", "text": text }));
                }
                for call in calls {
                    let input = match &call.arguments {
                        Value::Object(_) => call.arguments.clone(),
                        _ => json!({}),
                    };
                    let mut block = json!({
                        "type": "tool_use",
                        "id": ids.of_call(call.id.as_deref()),
                        "name": aliases.provider_name(&call.name),
                        "input": input,
                    });
                    // A call made by code the model ran goes back naming that code.
                    if let Some(caller) = caller_of(kept, call.id.as_deref()) {
                        block["caller"] = caller.clone();
                    }
                    content.push(block);
                }
                out.push(json!({ "role": "assistant", "content": content }));
            }
        }
    }
    flush(&mut results, &mut out);
    Value::Array(out)
}

/// The `caller` of the kept `tool_use` block of this id, if code made the call.
fn caller_of<'a>(kept: &'a [Value], id: Option<&str>) -> Option<&'a Value> {
    let id = id?;
    kept.iter()
        .filter(|block| is_call(block))
        .find(|block| block.get("id").and_then(Value::as_str) == Some(id))
        .and_then(|block| block.get("caller"))
        .filter(|caller| caller.get("type").and_then(Value::as_str) != Some("direct"))
}

/// The container the conversation's last answer that ran code named, for the next request.
pub(super) fn last_container(messages: &[Message]) -> Option<&str> {
    messages.iter().rev().find_map(|message| match message {
        Message::Reasoning(reasoning) if reasoning.api == REASONING_API => {
            reasoning.blocks.iter().find_map(container_of)
        }
        _ => None,
    })
}

pub(super) fn tool_choice(choice: &ToolChoice, aliases: &Aliases) -> Value {
    match choice {
        ToolChoice::Auto => json!({ "type": "auto" }),
        ToolChoice::Required => json!({ "type": "any" }),
        ToolChoice::None => json!({ "type": "none" }),
        ToolChoice::Tool(name) => json!({ "type": "tool", "name": aliases.provider_name(name) }),
        // No choice among some tools: the body declares those alone (`allowed::only_named`).
        ToolChoice::Allowed(_, AllowedMode::Auto) => json!({ "type": "auto" }),
        ToolChoice::Allowed(_, AllowedMode::Required) => json!({ "type": "any" }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::tests::paused_content;
    use tool_core::ToolCall;
    use tool_model::message::Reasoning;

    fn result(call_id: Option<&str>, text: &str, is_error: bool) -> Message {
        Message::Tool {
            call_id: call_id.map(str::to_owned),
            name: "add".into(),
            text: text.into(),
            is_error,
            attachments: Vec::new(),
            found_tools: Vec::new(),
        }
    }

    #[test]
    fn another_apis_call_ids_and_an_empty_failure_go_as_anthropic_takes_them() {
        let mut unnamed = ToolCall::new("x", "add", json!({}));
        unnamed.id = None;
        let transcript = [
            Message::user("add"),
            // A Chat-compatible server's id, and a Gemini call without one.
            Message::Assistant {
                text: None,
                calls: vec![ToolCall::new("functions.add:0", "add", json!({})), unnamed],
            },
            result(Some("functions.add:0"), "3", false),
            result(None, "", true),
        ];
        let sent = messages(&transcript, &Aliases::default());
        let calls = &sent[1]["content"];
        let results = &sent[2]["content"];
        assert_eq!(calls[0]["id"], "functions_add_0");
        assert_eq!(results[0]["tool_use_id"], "functions_add_0");
        assert_eq!(calls[1]["id"], "call_1");
        assert_eq!(results[1]["tool_use_id"], "call_1");
        // Anthropic refuses a failed result without content.
        assert_eq!(results[1]["is_error"], true);
        assert_ne!(results[1]["content"], "");
    }

    #[test]
    fn results_of_one_answer_go_back_in_one_user_message() {
        let transcript = [
            Message::user("add twice"),
            Message::Assistant {
                text: Some("Sure.".into()),
                calls: vec![
                    ToolCall::new("t1", "add", json!({ "a": 1 })),
                    ToolCall::new("t2", "add", json!({ "a": 2 })),
                ],
            },
            Message::Tool {
                call_id: Some("t1".into()),
                name: "add".into(),
                text: "1".into(),
                is_error: false,
                attachments: Vec::new(),
                found_tools: Vec::new(),
            },
            Message::Tool {
                call_id: Some("t2".into()),
                name: "add".into(),
                text: "bad".into(),
                is_error: true,
                attachments: Vec::new(),
                found_tools: Vec::new(),
            },
        ];
        assert_eq!(
            messages(&transcript, &Aliases::default()),
            json!([
                { "role": "user", "content": "add twice" },
                { "role": "assistant", "content": [
                    { "type": "text", "text": "Sure." },
                    { "type": "tool_use", "id": "t1", "name": "add", "input": { "a": 1 } },
                    { "type": "tool_use", "id": "t2", "name": "add", "input": { "a": 2 } }
                ]},
                { "role": "user", "content": [
                    { "type": "tool_result", "tool_use_id": "t1", "content": "1" },
                    { "type": "tool_result", "tool_use_id": "t2", "content": "bad", "is_error": true }
                ]}
            ])
        );
    }

    #[test]
    fn reasoning_goes_back_only_to_the_api_that_gave_it_and_only_with_its_answer() {
        let thinking = json!({ "type": "thinking", "thinking": "hm", "signature": "s" });
        let transcript = [
            Message::user("hi"),
            Message::Reasoning(Reasoning {
                api: "gemini".into(),
                source: None,
                blocks: vec![json!({ "thoughtSignature": "g", "text": true })],
            }),
            Message::assistant("Hello."),
            Message::user("again"),
            Message::Reasoning(Reasoning {
                api: REASONING_API.into(),
                source: None,
                blocks: vec![thinking.clone()],
            }),
            Message::assistant("Hello again."),
        ];
        let sent = messages(&transcript, &Aliases::default());
        assert_eq!(
            sent[1]["content"],
            json!([{ "type": "text", "text": "Hello." }])
        );
        assert_eq!(
            sent[3]["content"],
            json!([thinking, { "type": "text", "text": "Hello again." }])
        );
    }

    #[test]
    fn an_empty_answer_is_left_out_and_white_space_is_no_text_block() {
        let transcript = [
            Message::user("hi"),
            Message::Assistant {
                text: Some(" \n".into()),
                calls: Vec::new(),
            },
            Message::user("hello?"),
            Message::Assistant {
                text: Some(" ".into()),
                calls: vec![ToolCall::new("t1", "add", json!({ "a": 1 }))],
            },
        ];
        assert_eq!(
            messages(&transcript, &Aliases::default()),
            json!([
                { "role": "user", "content": "hi" },
                { "role": "user", "content": "hello?" },
                { "role": "assistant", "content": [
                    { "type": "tool_use", "id": "t1", "name": "add", "input": { "a": 1 } }
                ]}
            ])
        );
    }

    #[test]
    fn a_results_images_go_with_its_text_in_the_tool_result() {
        let result = Message::Tool {
            call_id: Some("t1".into()),
            name: "chart".into(),
            text: "the chart".into(),
            is_error: false,
            attachments: vec![tool_core::Content::image("iVBORw0KGgo=", "image/png")],
            found_tools: Vec::new(),
        };
        assert_eq!(
            messages(&[result], &Aliases::default()),
            json!([{ "role": "user", "content": [{
                "type": "tool_result",
                "tool_use_id": "t1",
                "content": [
                    { "type": "text", "text": "the chart" },
                    { "type": "image", "source": {
                        "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="
                    } }
                ]
            }] }])
        );
    }

    #[test]
    fn a_turn_kept_whole_goes_back_as_it_came_with_the_calls_the_run_kept() {
        let kept = |blocks: Value| {
            Message::Reasoning(Reasoning {
                api: REASONING_API.into(),
                source: None,
                blocks: blocks.as_array().unwrap().clone(),
            })
        };
        // A paused turn of server tools alone: no text, no calls, yet sent, and last.
        let search = Value::Array(paused_content().as_array().unwrap()[1..].to_vec());
        let transcript = [
            Message::user("q?"),
            kept(search.clone()),
            Message::Assistant {
                text: None,
                calls: Vec::new(),
            },
        ];
        let sent = messages(&transcript, &Aliases::default());
        assert_eq!(sent[1], json!({ "role": "assistant", "content": search }));
        // Its text is the content's own (citations and all), not written again; a call the
        // run did not keep (made with tools turned off) is not sent, one it kept is.
        let mut content = paused_content();
        let call = json!({ "type": "tool_use", "id": "t1", "name": "add", "input": { "a": 1 } });
        content.as_array_mut().unwrap().push(call.clone());
        let transcript = [
            Message::user("q?"),
            kept(content.clone()),
            Message::assistant("Searching."),
        ];
        let sent = messages(&transcript, &Aliases::default());
        assert_eq!(sent[1]["content"], paused_content());
        let transcript = [
            Message::user("q?"),
            kept(content.clone()),
            Message::Assistant {
                text: Some("Searching.".into()),
                calls: vec![ToolCall::new("t1", "add", json!({ "a": 1 }))],
            },
        ];
        let sent = messages(&transcript, &Aliases::default());
        assert_eq!(sent[1]["content"], content);
    }
}
