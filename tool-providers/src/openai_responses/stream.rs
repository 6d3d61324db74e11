//! A streamed Responses answer: server-sent events (`response.output_text.delta`,
//! `response.output_item.added`, `response.function_call_arguments.delta`,
//! `response.reasoning_summary_text.delta`, `response.completed`...), read into the answer.

use serde_json::Value;
use tool_core::provider::Aliases;

use super::{ending, finish_reason, is_kept, PROVIDER, REASONING_API};
use crate::assemble::StreamedAnswer;
use crate::sse::Decoder;
use tool_core::provider::tool_search::TOOL_SEARCH;
use tool_model::message::{Reasoning, Usage};
use tool_model::{ModelError, ModelEvent, ModelResponse};

/// What reads a streamed answer's payloads, with the aliases its tools were declared under.
pub(crate) fn stream_decoder(aliases: Aliases, source: String) -> Box<dyn Decoder> {
    Box::new(Streamed {
        answer: StreamedAnswer::new(aliases, ending),
        refused: false,
        ended: false,
        thought: Vec::new(),
        source,
    })
}

/// What a streamed answer's events said so far: `response.output_text.delta`, function calls
/// started by `response.output_item.added` and grown by
/// `response.function_call_arguments.delta`, the reasoning items `response.output_item.done`
/// gives whole (their text streamed as it came, by `response.reasoning_summary_text.delta` and
/// `response.reasoning_text.delta`), and the usage of `response.completed`.
#[derive(Default)]
struct Streamed {
    answer: StreamedAnswer,
    /// Whether a refusal came (`response.refusal.delta`): the reason the answer ended.
    refused: bool,
    /// Whether `response.completed` or `response.incomplete` came: a stream without either
    /// was cut short.
    ended: bool,
    /// The reasoning items, each whole as `response.output_item.done` gives it.
    thought: Vec<Value>,
    /// Who gave it ([`Reasoning::source`]).
    source: String,
}

impl Decoder for Streamed {
    fn call_bytes(&self) -> usize {
        self.answer.call_bytes()
    }

    fn data(&mut self, data: &str, events: &mut Vec<ModelEvent>) -> Result<bool, ModelError> {
        let event: Value = serde_json::from_str(data).map_err(|e| ModelError::Malformed {
            provider: PROVIDER,
            message: format!(
                "a streamed event is not JSON ({e}): {}",
                crate::http::body_start(data, 300)
            ),
        })?;
        let index = event.get("output_index").and_then(Value::as_u64);
        let field = |pointer: &str| event.pointer(pointer).and_then(Value::as_str);
        match field("/type") {
            Some("response.refusal.delta") => {
                if let Some(piece) = field("/delta").filter(|p| !p.is_empty()) {
                    self.answer.text.push_str(piece);
                    events.push(ModelEvent::TextDelta(piece.to_owned()));
                    self.refused = true;
                }
            }
            Some("response.output_text.delta") => {
                if let Some(text) = field("/delta").filter(|t| !t.is_empty()) {
                    self.answer.text.push_str(text);
                    events.push(ModelEvent::TextDelta(text.to_owned()));
                }
            }
            // Shown as it comes; what goes back is the item `response.output_item.done` gives.
            Some("response.reasoning_summary_text.delta" | "response.reasoning_text.delta") => {
                if let Some(thought) = field("/delta").filter(|t| !t.is_empty()) {
                    events.push(ModelEvent::ReasoningDelta(thought.to_owned()));
                }
            }
            // A custom tool's text comes in pieces, read whole at the end.
            Some("response.output_item.added")
                if field("/item/type") == Some("custom_tool_call") =>
            {
                self.answer.push_call(
                    index,
                    field("/item/call_id"),
                    field("/item/name"),
                    field("/item/input"),
                    events,
                );
            }
            Some("response.custom_tool_call_input.delta") => {
                self.answer
                    .push_call(index, None, None, field("/delta"), events);
            }
            Some("response.output_item.added") if field("/item/type") == Some("function_call") => {
                self.answer.push_call(
                    index,
                    field("/item/call_id"),
                    field("/item/name"),
                    field("/item/arguments"),
                    events,
                );
            }
            Some("response.output_item.done") => {
                let item = event.get("item").unwrap_or(&Value::Null);
                if is_kept(item) {
                    self.thought.push(item.clone());
                } else if field("/item/type") == Some("tool_search_call") {
                    // A search the client runs: a call of its search tool, whole.
                    let arguments = item.get("arguments").map(Value::to_string);
                    self.answer.push_call(
                        index,
                        field("/item/call_id"),
                        Some(TOOL_SEARCH),
                        arguments.as_deref(),
                        events,
                    );
                }
            }
            Some("response.function_call_arguments.delta") => {
                self.answer
                    .push_call(index, None, None, field("/delta"), events);
            }
            Some("response.completed") | Some("response.incomplete") => {
                let response = event.get("response").unwrap_or(&Value::Null);
                let count = |pointer: &str| {
                    response
                        .pointer(pointer)
                        .and_then(Value::as_u64)
                        .unwrap_or(0)
                };
                self.answer.usage = Usage {
                    requests: 1,
                    input_tokens: count("/usage/input_tokens"),
                    output_tokens: count("/usage/output_tokens"),
                    cached_input_tokens: count("/usage/input_tokens_details/cached_tokens"),
                    reasoning_tokens: count("/usage/output_tokens_details/reasoning_tokens"),
                };
                self.answer.finish_reason = if self.refused {
                    Some("refusal".to_owned())
                } else {
                    finish_reason(response)
                };
                self.ended = true;
                return Ok(true);
            }
            Some("response.failed") | Some("error") => {
                let message = field("/response/error/message")
                    .or_else(|| field("/message"))
                    .or_else(|| field("/error/message"))
                    .unwrap_or("the response failed");
                return Err(ModelError::Status {
                    provider: PROVIDER,
                    status: 200,
                    message: message.to_owned(),
                    attempts: 1,
                });
            }
            _ => {}
        }
        Ok(false)
    }

    fn cut_short(&self) -> Option<ModelError> {
        (!self.ended).then(|| ModelError::Malformed {
            provider: PROVIDER,
            message: "the stream ended before its response.completed event".into(),
        })
    }

    fn finish(&mut self) -> ModelResponse {
        let thought = std::mem::take(&mut self.thought);
        self.answer.reasoning = Reasoning::given_by(REASONING_API, &self.source, thought);
        self.answer.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::tests::{assert_streamed, decode, streamed_reasoning};
    use crate::openai_responses::tests::{rs, HERE};
    use serde_json::json;

    #[test]
    fn reasoning_and_a_call_stream_in_pieces_and_the_reasoning_item_is_kept_whole() {
        let summary = |delta: &str| {
            json!({ "type": "response.reasoning_summary_text.delta", "item_id": "rs_1",
                    "output_index": 0, "summary_index": 0, "delta": delta })
        };
        let arguments = |delta: &str| {
            json!({ "type": "response.function_call_arguments.delta", "item_id": "fc_1",
                    "output_index": 1, "delta": delta })
        };
        let events = [
            json!({ "type": "response.output_item.added", "output_index": 0, "item": rs("rs_1", None) }),
            summary("**Adding**"),
            summary(" two numbers."),
            json!({ "type": "response.reasoning_text.delta", "item_id": "rs_1",
                    "output_index": 0, "content_index": 0, "delta": " 1 + 2." }),
            json!({ "type": "response.output_item.done", "output_index": 0, "item": rs("rs_1", Some("gAAA")) }),
            json!({ "type": "response.output_item.added", "output_index": 1, "item": {
                "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "add",
                "arguments": "" } }),
            arguments("{\"a\":"),
            arguments("1,\"b\":2}"),
            json!({ "type": "response.function_call_arguments.done", "item_id": "fc_1",
                    "output_index": 1, "arguments": "{\"a\":1,\"b\":2}" }),
            json!({ "type": "response.completed", "response": { "status": "completed" } }),
        ];
        let (events, answer) = decode(stream_decoder(Aliases::default(), HERE.into()), &events);
        assert_eq!(
            streamed_reasoning(&events),
            ["**Adding**", " two numbers.", " 1 + 2."]
        );
        assert_eq!(assert_streamed(&events, &answer), ["{\"a\":1,\"b\":2}"]);
        assert_eq!(events.len(), 6, "{events:?}");
        let kept = answer.reasoning.expect("the reasoning item");
        assert_eq!(kept.blocks, [rs("rs_1", Some("gAAA"))]);
    }

    #[test]
    fn a_client_search_is_a_call_and_the_servers_search_goes_back_whole() {
        let server_search = json!({ "type": "tool_search_call", "id": "ts_1",
            "execution": "server", "status": "completed", "arguments": { "query": "time" } });
        let server_output = json!({ "type": "tool_search_output", "id": "to_1",
            "execution": "server", "status": "completed", "tools": [] });
        let client_search = json!({ "type": "tool_search_call", "id": "ts_2", "call_id": "call_1",
            "execution": "client", "status": "completed", "arguments": { "query": "weather" } });
        let events = [
            json!({ "type": "response.output_item.done", "output_index": 0, "item": server_search }),
            json!({ "type": "response.output_item.done", "output_index": 1, "item": server_output }),
            json!({ "type": "response.output_item.added", "output_index": 2, "item": client_search }),
            json!({ "type": "response.output_item.done", "output_index": 2, "item": client_search }),
            json!({ "type": "response.completed", "response": { "status": "completed" } }),
        ];
        let (events, answer) = decode(stream_decoder(Aliases::default(), HERE.into()), &events);
        assert_eq!(
            assert_streamed(&events, &answer),
            ["{\"query\":\"weather\"}"]
        );
        assert_eq!(answer.calls[0].name, TOOL_SEARCH);
        assert_eq!(answer.calls[0].id.as_deref(), Some("call_1"));
        let kept = answer.reasoning.expect("the server's search items");
        assert_eq!(kept.blocks, [server_search, server_output]);
    }

    #[test]
    fn a_custom_tools_text_streams_in_pieces_and_is_its_one_argument() {
        let mut aliases = Aliases::default();
        aliases.set_takes_text("agenda");
        let events = [
            json!({ "type": "response.output_item.added", "output_index": 0, "item": {
                "type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "agenda",
                "input": "" } }),
            json!({ "type": "response.custom_tool_call_input.delta", "output_index": 0,
                    "item_id": "ctc_1", "delta": "2026-" }),
            json!({ "type": "response.custom_tool_call_input.delta", "output_index": 0,
                    "item_id": "ctc_1", "delta": "12-01" }),
            json!({ "type": "response.completed", "response": { "status": "completed" } }),
        ];
        let (_, answer) = decode(stream_decoder(aliases, HERE.into()), &events);
        assert_eq!(answer.calls[0].name, "agenda");
        assert_eq!(answer.calls[0].arguments, json!({ "input": "2026-12-01" }));
    }
}
