//! The conversation as Converse takes it: the neutral messages as Converse's messages, with
//! the rules Converse holds them to that its service model does not say (turns that alternate
//! and start with the user, no empty turn, no blank text, tool use ids of its alphabet, each
//! used once), and the tools a history called, to declare when none is offered.

use serde_json::{json, Map, Value};
use tool_core::provider::{bedrock_tool_result_content, Aliases};

use crate::tool_ids::ToolUseIds;
use tool_model::message::{reasoning_before, Message};

use super::REASONING_API;

/// The neutral messages as Converse's. Converse refuses a conversation that does not start with
/// the user, two messages of one role in a row, an empty message and a blank text block, so:
/// blocks of one role in a row go into one message, a turn's tool results first (the results
/// of one answer's calls, and a user's text after them, are one user message); an assistant
/// turn with nothing in it is left out, blank assistant text too; a blank user text, and a
/// first user turn where there is none, is `(empty)`. A failed result is marked
/// `status: "error"` only for the models that take the field (`with_status`); for the others
/// its text begins with `Error: `.
pub(super) fn messages(messages: &[Message], aliases: &Aliases, with_status: bool) -> Value {
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, block: Value| match turns.last_mut() {
        Some((last, blocks)) if *last == role => {
            // A turn's tool results come before anything else in it.
            let at = match block.get("toolResult") {
                Some(_) => blocks
                    .iter()
                    .position(|b| b.get("toolResult").is_none())
                    .unwrap_or(blocks.len()),
                None => blocks.len(),
            };
            blocks.insert(at, block);
        }
        _ => turns.push((role, vec![block])),
    };
    let mut ids = ToolUseIds::new(converse_id_char);
    for (i, message) in messages.iter().enumerate() {
        match message {
            // Sent with the answer after it.
            Message::Reasoning(_) => {}
            Message::Tool {
                call_id,
                text,
                is_error,
                attachments,
                ..
            } => {
                let marked;
                let text = if *is_error && !with_status && !text.starts_with("Error") {
                    marked = format!("Error: {text}");
                    &marked
                } else {
                    text
                };
                let mut result = Map::new();
                result.insert("toolUseId".into(), json!(ids.of_result(call_id.as_deref())));
                result.insert(
                    "content".into(),
                    bedrock_tool_result_content(text, attachments),
                );
                if *is_error && with_status {
                    result.insert("status".into(), json!("error"));
                }
                push("user", json!({ "toolResult": result }));
            }
            Message::User { text } => {
                let text = if text.trim().is_empty() {
                    "(empty)"
                } else {
                    text
                };
                push("user", json!({ "text": text }));
            }
            Message::Assistant { text, calls } => {
                ids.new_turn();
                // Reasoning first, as it came: Claude checks its signature.
                for block in reasoning_before(messages, i, REASONING_API, None) {
                    push("assistant", block.clone());
                }
                if let Some(text) = text.as_deref().filter(|t| !t.trim().is_empty()) {
                    push("assistant", json!({ "text": text }));
                }
                for call in calls {
                    let input = match &call.arguments {
                        Value::Object(_) => call.arguments.clone(),
                        _ => json!({}),
                    };
                    push(
                        "assistant",
                        json!({ "toolUse": {
                            "toolUseId": ids.of_call(call.id.as_deref()),
                            "name": aliases.provider_name(&call.name),
                            "input": input,
                        } }),
                    );
                }
            }
        }
    }
    // A conversation starts with the user.
    if turns.first().is_none_or(|(role, _)| *role != "user") {
        turns.insert(0, ("user", vec![json!({ "text": "(empty)" })]));
    }
    let turns = turns
        .into_iter()
        .map(|(role, content)| json!({ "role": role, "content": content }));
    Value::Array(turns.collect())
}

/// The characters of Converse's tool use ids (`a-z A-Z 0-9 _ . : -`).
fn converse_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-')
}

/// Whether the model takes a failed result's `status` (Amazon Nova and Anthropic Claude, as the
/// service model says); an ARN that names neither is sent none.
pub(super) fn takes_result_status(model: &str) -> bool {
    let model = model.to_ascii_lowercase();
    model.contains("anthropic.") || model.contains("nova-")
}
