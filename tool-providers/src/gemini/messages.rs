//! The conversation as Gemini takes it: the neutral messages as Gemini contents (results of
//! one answer's calls in one user content, each part with the thought signature it came with)
//! and the tool choice as a function calling config.

use serde_json::{json, Map, Value};
use tool_core::provider::{gemini_function_response_parts, Aliases};

use super::response::{signature_of, REASONING_API};
use tool_model::message::{reasoning_before, Message};
use tool_model::{AllowedMode, ToolChoice};

/// Whether the model is Gemini 3 or later, which reads images in a function response (the
/// 1.x and 2.x models are sent the text alone) and refuses a call of the current turn sent
/// back without its thought signature.
pub(super) fn gemini_3_or_later(model: &str) -> bool {
    let name = model.strip_prefix("models/").unwrap_or(model);
    !(name.starts_with("gemini-1") || name.starts_with("gemini-2"))
}

/// What Google documents to put in place of a thought signature the conversation does not
/// have (calls another model made, or this one under another endpoint, whose signatures
/// Gemini would refuse): Gemini 3 then takes the call as it is.
const NO_SIGNATURE: &str = "skip_thought_signature_validator";

/// How the conversation goes to this client.
pub(super) struct Replay<'a> {
    /// The names the tools were declared under.
    pub(super) aliases: &'a Aliases,
    /// Whether the model is Gemini 3 or later ([`gemini_3_or_later`]).
    pub(super) gemini_3: bool,
    /// Whose thought signatures this client sends back ([`Reasoning::source`]).
    ///
    /// [`Reasoning::source`]: tool_model::message::Reasoning::source
    pub(super) source: &'a str,
}

/// The neutral messages as Gemini contents: results of one answer's calls go together in one
/// user content of `functionResponse` parts, with their images where the model reads them.
/// An answer's first call goes with its thought signature, or for Gemini 3 [`NO_SIGNATURE`]
/// when it has none from this source.
pub(super) fn contents(messages: &[Message], replay: &Replay<'_>) -> Value {
    let aliases = replay.aliases;
    let mut out: Vec<Value> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    let flush = |results: &mut Vec<Value>, out: &mut Vec<Value>| {
        if !results.is_empty() {
            out.push(json!({ "role": "user", "parts": std::mem::take(results) }));
        }
    };
    for (i, message) in messages.iter().enumerate() {
        match message {
            Message::Tool {
                call_id,
                name,
                text,
                is_error,
                attachments,
                ..
            } => {
                let mut response = Map::new();
                if let Some(id) = call_id {
                    response.insert("id".into(), json!(id));
                }
                response.insert("name".into(), json!(aliases.provider_name(name)));
                let (text, parts) =
                    gemini_function_response_parts(text, attachments, replay.gemini_3);
                let body = if *is_error {
                    json!({ "error": text })
                } else {
                    json!({ "output": text })
                };
                response.insert("response".into(), body);
                if !parts.is_empty() {
                    response.insert("parts".into(), Value::Array(parts));
                }
                results.push(json!({ "functionResponse": response }));
            }
            Message::User { text } => {
                flush(&mut results, &mut out);
                out.push(json!({ "role": "user", "parts": [{ "text": text }] }));
            }
            // Sent with the answer after it.
            Message::Reasoning(_) => {}
            _ if message.is_empty_answer() => {}
            Message::Assistant { text, calls } => {
                flush(&mut results, &mut out);
                // Each part goes back with the thought signature it came with.
                let signatures = reasoning_before(messages, i, REASONING_API, Some(replay.source));
                let signed = |mut part: Value, index: Option<usize>| {
                    match signature_of(signatures, index) {
                        Some(signature) => part["thoughtSignature"] = signature.clone(),
                        None if index == Some(0) && replay.gemini_3 => {
                            part["thoughtSignature"] = json!(NO_SIGNATURE);
                        }
                        None => {}
                    }
                    part
                };
                let mut parts: Vec<Value> = Vec::new();
                if let Some(text) = text.as_deref().filter(|t| !t.is_empty()) {
                    parts.push(signed(json!({ "text": text }), None));
                }
                for (n, call) in calls.iter().enumerate() {
                    let mut function = Map::new();
                    if let Some(id) = &call.id {
                        function.insert("id".into(), json!(id));
                    }
                    function.insert("name".into(), json!(aliases.provider_name(&call.name)));
                    let args = match &call.arguments {
                        Value::Object(_) => call.arguments.clone(),
                        _ => json!({}),
                    };
                    function.insert("args".into(), args);
                    parts.push(signed(json!({ "functionCall": function }), Some(n)));
                }
                out.push(json!({ "role": "model", "parts": parts }));
            }
        }
    }
    flush(&mut results, &mut out);
    Value::Array(out)
}

/// The `functionCallingConfig` of a tool choice; `validated` sends `Auto` as `VALIDATED`.
pub(super) fn calling_config(choice: &ToolChoice, aliases: &Aliases, validated: bool) -> Value {
    match choice {
        ToolChoice::Auto if validated => json!({ "mode": "VALIDATED" }),
        ToolChoice::Auto => json!({ "mode": "AUTO" }),
        ToolChoice::Required => json!({ "mode": "ANY" }),
        ToolChoice::None => json!({ "mode": "NONE" }),
        ToolChoice::Tool(name) => json!({
            "mode": "ANY",
            "allowedFunctionNames": [aliases.provider_name(name)]
        }),
        // `VALIDATED`: a call of one of these, or text; `ANY`: a call of one of these.
        ToolChoice::Allowed(names, mode) => json!({
            "mode": match mode {
                AllowedMode::Auto => "VALIDATED",
                AllowedMode::Required => "ANY",
            },
            "allowedFunctionNames": names.iter().map(|n| aliases.provider_name(n)).collect::<Vec<_>>()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemini::tests::HERE;
    use tool_core::ToolCall;
    use tool_model::message::Reasoning;

    /// `messages` as contents for a model at [`HERE`], of Gemini 3 or not.
    fn replayed(messages: &[Message], gemini_3: bool) -> Value {
        let aliases = Aliases::default();
        let replay = Replay {
            aliases: &aliases,
            gemini_3,
            source: HERE,
        };
        contents(messages, &replay)
    }

    #[test]
    fn a_call_goes_back_with_its_own_signature_or_one_gemini_3_skips() {
        let signed = |source: Option<&str>, signature: &str| {
            Message::Reasoning(Reasoning {
                api: REASONING_API.into(),
                source: source.map(str::to_owned),
                blocks: vec![json!({ "thoughtSignature": signature, "call": 0 })],
            })
        };
        let calling = |ids: &[&str]| Message::Assistant {
            text: None,
            calls: ids
                .iter()
                .map(|id| ToolCall::new(*id, "add", json!({})))
                .collect(),
        };
        let transcript = [
            Message::user("add"),
            signed(Some(HERE), "s1"),
            calling(&["c1", "c2"]),
            // Another API's model, or a stored transcript's own from before sources.
            calling(&["c3"]),
            signed(None, "s4"),
            calling(&["c4"]),
            // Gemini under another endpoint or model: its signature would be refused.
            signed(Some("http://elsewhere.test/models/gemini-3-flash"), "s5"),
            calling(&["c5"]),
        ];
        let signatures = |contents: &Value| -> Vec<Vec<Option<String>>> {
            let models = contents.as_array().unwrap().iter();
            models
                .filter(|c| c["role"] == "model")
                .map(|c| {
                    let parts = c["parts"].as_array().unwrap().iter();
                    parts
                        .map(|p| p["thoughtSignature"].as_str().map(str::to_owned))
                        .collect()
                })
                .collect()
        };
        let skip = Some(NO_SIGNATURE.to_owned());
        assert_eq!(
            signatures(&replayed(&transcript, true)),
            [
                vec![Some("s1".to_owned()), None],
                vec![skip.clone()],
                vec![Some("s4".to_owned())],
                vec![skip],
            ]
        );
        // Gemini 2 needs none, and is sent none it was not given.
        assert_eq!(
            signatures(&replayed(&transcript, false)),
            [
                vec![Some("s1".to_owned()), None],
                vec![None],
                vec![Some("s4".to_owned())],
                vec![None],
            ]
        );
    }

    #[test]
    fn an_empty_answer_is_left_out() {
        let transcript = [
            Message::user("hi"),
            Message::Assistant {
                text: None,
                calls: Vec::new(),
            },
            Message::user("hello?"),
        ];
        assert_eq!(
            replayed(&transcript, false),
            json!([
                { "role": "user", "parts": [{ "text": "hi" }] },
                { "role": "user", "parts": [{ "text": "hello?" }] }
            ])
        );
    }

    #[test]
    fn a_results_images_go_as_parts_of_its_function_response() {
        let result = Message::Tool {
            call_id: Some("g1".into()),
            name: "radar".into(),
            text: "the radar".into(),
            is_error: false,
            attachments: vec![tool_core::Content::image("iVBORw0KGgo=", "image/png")],
            found_tools: Vec::new(),
        };
        let contents = replayed(std::slice::from_ref(&result), true);
        assert_eq!(
            contents[0]["parts"][0]["functionResponse"]["parts"],
            json!([{ "inlineData": { "mimeType": "image/png", "data": "iVBORw0KGgo=" } }])
        );
        // Gemini 2 and earlier read no images there: the text tells of it.
        let older = replayed(&[result], false);
        let response = &older[0]["parts"][0]["functionResponse"];
        assert!(response.get("parts").is_none());
        assert_eq!(
            response["response"]["output"],
            "the radar\n[image (image/png, 8 bytes) not shown]"
        );
        assert!(gemini_3_or_later("gemini-3-pro-preview"));
        assert!(gemini_3_or_later("models/gemini-3-flash"));
        assert!(!gemini_3_or_later("gemini-2.5-flash"));
        assert!(!gemini_3_or_later("models/gemini-1.5-pro"));
    }

    #[test]
    fn calls_and_results_become_function_call_and_response_parts() {
        let transcript = [
            Message::user("add"),
            Message::Assistant {
                text: None,
                calls: vec![ToolCall::new("g1", "add", json!({ "a": 1 }))],
            },
            Message::Tool {
                call_id: Some("g1".into()),
                name: "add".into(),
                text: "1".into(),
                is_error: false,
                attachments: Vec::new(),
                found_tools: Vec::new(),
            },
        ];
        assert_eq!(
            replayed(&transcript, false),
            json!([
                { "role": "user", "parts": [{ "text": "add" }] },
                { "role": "model", "parts": [{ "functionCall": { "id": "g1", "name": "add", "args": { "a": 1 } } }] },
                { "role": "user", "parts": [{ "functionResponse": { "id": "g1", "name": "add", "response": { "output": "1" } } }] }
            ])
        );
    }
}
