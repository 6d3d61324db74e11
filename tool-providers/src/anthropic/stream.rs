//! A streamed Messages answer: server-sent events (`message_start`, `content_block_start`,
//! `content_block_delta`, `content_block_stop`, `message_delta`, `message_stop`, `error`), its
//! content blocks rebuilt as the whole answer would give them.

use serde_json::{json, Value};
use tool_core::provider::Aliases;

use super::response::{ending, kept};
use super::PROVIDER;
use crate::assemble::StreamedAnswer;
use crate::sse::Decoder;
use tool_model::message::grow_text;
use tool_model::{ModelError, ModelEvent, ModelResponse};

/// What reads a streamed answer's payloads, with the aliases its tools were declared under.
pub(crate) fn stream_decoder(aliases: Aliases) -> Box<dyn Decoder> {
    Box::new(Streamed {
        answer: StreamedAnswer::new(aliases, ending),
        blocks: Vec::new(),
        stopped: false,
        other_input: 0,
        container: None,
    })
}

/// What a streamed answer's events said so far: `message_start`, content blocks started and
/// grown by deltas (`text_delta`, `input_json_delta`, `thinking_delta`, `signature_delta`,
/// `citations_delta`), `message_delta`, `message_stop`.
#[derive(Default)]
struct Streamed {
    answer: StreamedAnswer,
    /// The content blocks so far, in order, as the whole answer would give them: what goes
    /// back with the answer is read from them ([`kept`]).
    blocks: Vec<StreamedBlock>,
    /// Whether `message_stop` came: a stream without it was cut short.
    stopped: bool,
    /// The bytes of the inputs of blocks that are not calls (a server tool's use), held in
    /// [`StreamedBlock::input`]: they count toward the answer's cap as the calls do.
    other_input: usize,
    /// The container the answer ran code in, from `message_delta`.
    container: Option<String>,
}

/// A content block as its events built it.
struct StreamedBlock {
    index: Option<u64>,
    block: Value,
    /// Its `input` as JSON text, in the pieces of its `input_json_delta`s (a call's, or a
    /// server tool's).
    input: String,
}

impl Streamed {
    /// The block at `index`, the last started with it.
    fn block(&mut self, index: Option<u64>) -> Option<&mut StreamedBlock> {
        self.blocks.iter_mut().rev().find(|b| b.index == index)
    }

    /// Adds `piece` to the text field `field` of the block at `index`.
    fn grow(&mut self, index: Option<u64>, field: &str, piece: &str) {
        if let Some(StreamedBlock {
            block: Value::Object(block),
            ..
        }) = self.block(index)
        {
            grow_text(block, field, piece);
        }
    }
}

impl Decoder for Streamed {
    fn call_bytes(&self) -> usize {
        self.answer.call_bytes().saturating_add(self.other_input)
    }

    fn data(&mut self, data: &str, events: &mut Vec<ModelEvent>) -> Result<bool, ModelError> {
        let event: Value = serde_json::from_str(data).map_err(|e| ModelError::Malformed {
            provider: PROVIDER,
            message: format!(
                "a streamed event is not JSON ({e}): {}",
                crate::http::body_start(data, 300)
            ),
        })?;
        let index = event.get("index").and_then(Value::as_u64);
        let text =
            |value: Option<&Value>| value.and_then(Value::as_str).unwrap_or_default().to_owned();
        match event.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                let count = |name: &str| {
                    event
                        .pointer(&format!("/message/usage/{name}"))
                        .and_then(Value::as_u64)
                        .unwrap_or(0)
                };
                let cached = count("cache_read_input_tokens");
                self.answer.usage.input_tokens = count("input_tokens")
                    .saturating_add(cached)
                    .saturating_add(count("cache_creation_input_tokens"));
                self.answer.usage.cached_input_tokens = cached;
            }
            Some("content_block_start") => {
                let block = event.get("content_block");
                match block.and_then(|b| b.get("type")).and_then(Value::as_str) {
                    Some("tool_use") => self.answer.push_call(
                        index,
                        block.and_then(|b| b.get("id")).and_then(Value::as_str),
                        block.and_then(|b| b.get("name")).and_then(Value::as_str),
                        None,
                        events,
                    ),
                    Some("text") => {
                        let start = text(block.and_then(|b| b.get("text")));
                        if !start.is_empty() {
                            self.answer.text.push_str(&start);
                            events.push(ModelEvent::TextDelta(start));
                        }
                    }
                    Some("thinking") => {
                        let start = text(block.and_then(|b| b.get("thinking")));
                        if !start.is_empty() {
                            events.push(ModelEvent::ReasoningDelta(start));
                        }
                    }
                    _ => {}
                }
                if let Some(block) = block {
                    self.blocks.push(StreamedBlock {
                        index,
                        block: block.clone(),
                        input: String::new(),
                    });
                }
            }
            Some("content_block_delta") => {
                let delta = event.get("delta");
                match delta.and_then(|d| d.get("type")).and_then(Value::as_str) {
                    Some("text_delta") => {
                        let piece = text(delta.and_then(|d| d.get("text")));
                        self.grow(index, "text", &piece);
                        self.answer.text.push_str(&piece);
                        events.push(ModelEvent::TextDelta(piece));
                    }
                    Some("input_json_delta") => {
                        let piece = delta
                            .and_then(|d| d.get("partial_json"))
                            .and_then(Value::as_str);
                        let Some(block) = self.block(index) else {
                            return Ok(false);
                        };
                        block.input.push_str(piece.unwrap_or_default());
                        if block.block.get("type").and_then(Value::as_str) == Some("tool_use") {
                            self.answer.push_call(index, None, None, piece, events);
                        } else {
                            // A server tool's input is no call of ours: its block holds it.
                            let held = piece.map_or(0, str::len);
                            self.other_input = self.other_input.saturating_add(held);
                        }
                    }
                    Some("thinking_delta") => {
                        let piece = text(delta.and_then(|d| d.get("thinking")));
                        self.grow(index, "thinking", &piece);
                        if !piece.is_empty() {
                            events.push(ModelEvent::ReasoningDelta(piece));
                        }
                    }
                    Some("signature_delta") => {
                        let piece = text(delta.and_then(|d| d.get("signature")));
                        self.grow(index, "signature", &piece);
                    }
                    Some("citations_delta") => {
                        let citation = delta.and_then(|d| d.get("citation")).cloned();
                        let block = self.block(index).map(|b| &mut b.block);
                        if let (Some(citation), Some(Value::Object(block))) = (citation, block) {
                            // A start's `"citations": null` (or none) becomes the list.
                            let citations = block.entry("citations").or_insert(Value::Null);
                            if !citations.is_array() {
                                *citations = json!([]);
                            }
                            if let Value::Array(citations) = citations {
                                citations.push(citation);
                            }
                        }
                    }
                    _ => {}
                }
            }
            Some("message_delta") => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.answer.finish_reason = Some(reason.to_owned());
                }
                if let Some(id) = event.pointer("/delta/container/id").and_then(Value::as_str) {
                    self.container = Some(id.to_owned());
                }
                if let Some(output) = event
                    .pointer("/usage/output_tokens")
                    .and_then(Value::as_u64)
                {
                    self.answer.usage.output_tokens = output;
                }
            }
            Some("message_stop") => {
                self.stopped = true;
                return Ok(true);
            }
            Some("error") => {
                return Err(ModelError::Status {
                    provider: PROVIDER,
                    status: 200,
                    message: text(event.pointer("/error/message")),
                    attempts: 1,
                })
            }
            _ => {}
        }
        Ok(false)
    }

    fn cut_short(&self) -> Option<ModelError> {
        // A call cut short would run with the arguments that came (or none at all).
        (!self.stopped).then(|| ModelError::Malformed {
            provider: PROVIDER,
            message: "the stream ended before its message_stop event".into(),
        })
    }

    fn finish(&mut self) -> ModelResponse {
        let blocks = std::mem::take(&mut self.blocks).into_iter().map(|mut b| {
            // The input its deltas gave, as the whole answer gives it (the start's `{}` when
            // they gave none or it is not JSON).
            let input = serde_json::from_str::<Value>(&b.input).ok();
            if let Value::Object(block) = &mut b.block {
                let is_use = block
                    .get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|kind| kind.ends_with("tool_use"));
                match input {
                    Some(input) => {
                        block.insert("input".into(), input);
                    }
                    // A use the API always sends back with an input, which a start without
                    // one and no deltas did not give.
                    None if is_use && !block.contains_key("input") => {
                        block.insert("input".into(), json!({}));
                    }
                    None => {}
                }
            }
            b.block
        });
        self.answer.reasoning = kept(blocks.collect(), self.container.as_deref());
        self.answer.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::tests::kept_whole;
    use crate::assemble::tests::{assert_streamed, decode, streamed_reasoning};

    #[test]
    fn thinking_and_a_call_stream_in_pieces_and_the_thinking_is_kept_whole() {
        let block_delta = |index: u64, delta: Value| json!({ "type": "content_block_delta", "index": index, "delta": delta });
        let events = [
            json!({ "type": "message_start", "message": { "usage": { "input_tokens": 5 } } }),
            json!({ "type": "content_block_start", "index": 0,
                    "content_block": { "type": "thinking", "thinking": "" } }),
            block_delta(
                0,
                json!({ "type": "thinking_delta", "thinking": "2 and 3: " }),
            ),
            block_delta(
                0,
                json!({ "type": "thinking_delta", "thinking": "add them." }),
            ),
            block_delta(0, json!({ "type": "signature_delta", "signature": "EqQB" })),
            json!({ "type": "content_block_stop", "index": 0 }),
            json!({ "type": "content_block_start", "index": 1, "content_block": {
                "type": "tool_use", "id": "toolu_1", "name": "add", "input": {} } }),
            block_delta(1, json!({ "type": "input_json_delta", "partial_json": "" })),
            block_delta(
                1,
                json!({ "type": "input_json_delta", "partial_json": "{\"a\": 2," }),
            ),
            block_delta(
                1,
                json!({ "type": "input_json_delta", "partial_json": " \"b\": 3}" }),
            ),
            json!({ "type": "content_block_stop", "index": 1 }),
            json!({ "type": "message_delta", "delta": { "stop_reason": "tool_use" } }),
            json!({ "type": "message_stop" }),
        ];
        let (events, answer) = decode(stream_decoder(Aliases::default()), &events);
        assert_eq!(streamed_reasoning(&events), ["2 and 3: ", "add them."]);
        // The call's id and name first, then each piece that is not empty.
        let pieces: Vec<_> = (events.iter())
            .filter_map(|event| match event {
                ModelEvent::ToolCallDelta(delta) => Some(delta.arguments.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(pieces, ["", "{\"a\": 2,", " \"b\": 3}"]);
        assert_eq!(assert_streamed(&events, &answer), ["{\"a\": 2, \"b\": 3}"]);
        assert_eq!(
            kept_whole(&answer),
            json!([{ "type": "thinking", "thinking": "2 and 3: add them.", "signature": "EqQB" }])
        );
    }

    #[test]
    fn a_streamed_block_gets_its_citations_and_a_server_use_its_input_whatever_its_start_said() {
        let citation = json!({ "type": "web_search_result_location", "url": "https://a.example" });
        let events = [
            json!({ "type": "message_start", "message": { "usage": { "input_tokens": 5 } } }),
            json!({ "type": "content_block_start", "index": 0, "content_block": {
                "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search" } }),
            json!({ "type": "content_block_stop", "index": 0 }),
            json!({ "type": "content_block_start", "index": 1,
                    "content_block": { "type": "text", "text": "", "citations": null } }),
            json!({ "type": "content_block_delta", "index": 1,
                    "delta": { "type": "citations_delta", "citation": citation } }),
            json!({ "type": "content_block_delta", "index": 1,
                    "delta": { "type": "text_delta", "text": "Cited." } }),
            json!({ "type": "content_block_stop", "index": 1 }),
            json!({ "type": "message_delta", "delta": { "stop_reason": "pause_turn" },
                    "usage": { "output_tokens": 3 } }),
            json!({ "type": "message_stop" }),
        ];
        let mut decoder = stream_decoder(Aliases::default());
        for event in events {
            decoder.data(&event.to_string(), &mut Vec::new()).unwrap();
        }
        let streamed = decoder.finish();
        assert_eq!(
            kept_whole(&streamed),
            json!([
                { "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {} },
                { "type": "text", "text": "Cited.", "citations": [citation] }
            ])
        );
    }

    #[test]
    fn the_container_of_code_that_called_tools_is_kept_for_the_next_request() {
        let events = [
            json!({ "type": "message_start", "message": { "usage": { "input_tokens": 5 } } }),
            json!({ "type": "content_block_start", "index": 0, "content_block": {
                "type": "tool_use", "id": "toolu_1", "name": "query", "input": {},
                "caller": { "type": "code_execution_20260120", "tool_id": "srvtoolu_1" } } }),
            json!({ "type": "content_block_stop", "index": 0 }),
            json!({ "type": "message_delta", "delta": { "stop_reason": "tool_use",
                "container": { "id": "container_011", "expires_at": "2026-11-29T07:00:00Z" } } }),
            json!({ "type": "message_stop" }),
        ];
        let (_, answer) = decode(stream_decoder(Aliases::default()), &events);
        let kept = answer
            .reasoning
            .clone()
            .expect("the call and the container");
        assert_eq!(
            kept.blocks.last(),
            Some(&json!({ "type": "container", "id": "container_011" }))
        );
        // The call made by code is kept whole, its caller with it.
        assert_eq!(kept.blocks[0]["caller"]["tool_id"], "srvtoolu_1");
        let messages = [
            tool_model::Message::user("Count"),
            tool_model::Message::Reasoning(kept),
            tool_model::Message::Assistant {
                text: None,
                calls: answer.calls,
            },
        ];
        assert_eq!(
            crate::anthropic::messages::last_container(&messages),
            Some("container_011")
        );
        let sent = crate::anthropic::messages::messages(&messages, &Aliases::default());
        assert_eq!(sent[1]["content"][0]["caller"]["tool_id"], "srvtoolu_1");
    }
}
