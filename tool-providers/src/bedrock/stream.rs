//! A streamed Converse answer (`ConverseStream`): AWS event stream messages, each read as
//! `{"<event>": payload}` (`messageStart`, `contentBlockStart`, `contentBlockDelta`,
//! `contentBlockStop`, `messageStop`, `metadata`; others are skipped, as AWS's SDKs skip them),
//! or an exception.

use std::collections::HashSet;

use serde_json::Value;
use tool_core::provider::Aliases;

use super::{reasoning, usage, PROVIDER};
use crate::assemble::StreamedAnswer;
use crate::aws_frames::EXCEPTION_EVENT;
use crate::sse::Decoder;
use tool_model::message::grow_text;
use tool_model::{ModelError, ModelEvent, ModelResponse};

/// What reads a `ConverseStream` body: AWS event stream messages, given to `decoder`.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn event_reader(decoder: Box<dyn Decoder>) -> crate::sse::EventReader<'static> {
    let frames = Box::new(crate::aws_frames::FrameReader::default());
    crate::sse::EventReader::framed(decoder, frames, PROVIDER)
}

/// What reads a streamed answer's events, with the aliases its tools were declared under.
pub(crate) fn stream_decoder(aliases: Aliases) -> Box<dyn Decoder> {
    Box::new(Streamed {
        answer: StreamedAnswer::new(aliases, super::ending),
        ..Streamed::default()
    })
}

/// What a streamed answer's events said so far: tool uses started with their id and name and
/// grown by pieces of their input, text deltas, the stop reason, and the usage last.
#[derive(Default)]
struct Streamed {
    answer: StreamedAnswer,
    /// Whether `messageStop` came: a stream that ends before it was cut short.
    stopped: bool,
    /// The `reasoningContent` blocks so far, by their index in the answer.
    thought: Vec<(Option<u64>, Value)>,
    /// The indexes of the blocks of tools the service runs itself, whose input is no call.
    hosted: HashSet<Option<u64>>,
}

impl Streamed {
    /// Adds a `reasoningContent` delta (`text`, `signature` or `redactedContent`) to the block
    /// at `index`, started by its first delta.
    fn grow_reasoning(&mut self, index: Option<u64>, delta: &Value) {
        let at = match self.thought.iter().position(|(i, _)| *i == index) {
            Some(at) => at,
            None => {
                self.thought.push((index, Value::Null));
                self.thought.len() - 1
            }
        };
        let block = &mut self.thought[at].1;
        if let Some(redacted) = delta.get("redactedContent") {
            *block = serde_json::json!({ "reasoningContent": { "redactedContent": redacted } });
            return;
        }
        if block.is_null() {
            *block = serde_json::json!({ "reasoningContent": { "reasoningText": { "text": "" } } });
        }
        let Some(Value::Object(text)) = block.pointer_mut("/reasoningContent/reasoningText") else {
            return;
        };
        for field in ["text", "signature"] {
            if let Some(piece) = delta.get(field).and_then(Value::as_str) {
                grow_text(text, field, piece);
            }
        }
    }
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
        self.event(event, events)
    }

    fn event(&mut self, event: Value, events: &mut Vec<ModelEvent>) -> Result<bool, ModelError> {
        let Some((name, body)) = event.as_object().and_then(|o| o.iter().next()) else {
            return Ok(false);
        };
        let index = body.get("contentBlockIndex").and_then(Value::as_u64);
        match name.as_str() {
            "contentBlockStart" => {
                let tool_use = body.pointer("/start/toolUse");
                if let Some(tool_use) = tool_use {
                    let field = |name: &str| tool_use.get(name).and_then(Value::as_str);
                    // A tool the service runs itself is not a call for us.
                    if field("type") == Some("server_tool_use") {
                        self.hosted.insert(index);
                    } else {
                        let (id, name) = (field("toolUseId"), field("name"));
                        self.answer.push_call(index, id, name, None, events);
                    }
                }
            }
            "contentBlockDelta" => {
                let delta = body.get("delta");
                if let Some(text) = delta.and_then(|d| d.get("text")).and_then(Value::as_str) {
                    self.answer.text.push_str(text);
                    events.push(ModelEvent::TextDelta(text.to_owned()));
                }
                let input = delta
                    .and_then(|d| d.pointer("/toolUse/input"))
                    .and_then(Value::as_str);
                if input.is_some() && !self.hosted.contains(&index) {
                    self.answer.push_call(index, None, None, input, events);
                }
                if let Some(thought) = delta.and_then(|d| d.get("reasoningContent")) {
                    self.grow_reasoning(index, thought);
                    let text = thought.get("text").and_then(Value::as_str);
                    if let Some(text) = text.filter(|t| !t.is_empty()) {
                        events.push(ModelEvent::ReasoningDelta(text.to_owned()));
                    }
                }
            }
            "messageStop" => {
                self.stopped = true;
                self.answer.finish_reason = body
                    .get("stopReason")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
            // The last event: the usage.
            "metadata" => {
                self.answer.usage = usage(body.get("usage"));
                return Ok(true);
            }
            // An exception (`throttlingException`, `validationException`...) or an error.
            EXCEPTION_EVENT => {
                let field = |name: &str| body.get(name).and_then(Value::as_str).unwrap_or_default();
                let kind = field("type");
                return Err(ModelError::Status {
                    provider: PROVIDER,
                    status: exception_status(kind),
                    message: format!("{kind}: {}", field("message")),
                    attempts: 1,
                });
            }
            _ => {}
        }
        Ok(false)
    }

    fn cut_short(&self) -> Option<ModelError> {
        (!self.stopped).then(|| ModelError::Malformed {
            provider: PROVIDER,
            message: "the stream ended before its messageStop event".into(),
        })
    }

    fn finish(&mut self) -> ModelResponse {
        let blocks = std::mem::take(&mut self.thought).into_iter();
        self.answer.reasoning = reasoning(blocks.map(|(_, block)| block).collect());
        self.answer.finish()
    }
}

/// The HTTP status an exception in a stream stands for, as the service model gives each
/// exception's (`modelStreamErrorException` is 424).
fn exception_status(kind: &str) -> u16 {
    match kind {
        "throttlingException" => 429,
        "validationException" => 400,
        "modelStreamErrorException" => 424,
        "serviceUnavailableException" => 503,
        _ => 500,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aws_frames::tests::encode;
    use serde_json::json;

    fn frame(event: &Value) -> Vec<u8> {
        let (name, payload) = event.as_object().unwrap().iter().next().unwrap();
        let headers = [
            (":message-type", "event"),
            (":event-type", name.as_str()),
            (":content-type", "application/json"),
        ];
        encode(&headers, payload.to_string().as_bytes())
    }

    fn read(events: &[Value], cut: usize) -> Vec<Result<tool_model::ModelEvent, ModelError>> {
        let bytes: Vec<u8> = events.iter().flat_map(frame).collect();
        let mut reader = event_reader(stream_decoder(Aliases::default()));
        for piece in bytes.chunks(cut) {
            reader.feed(piece);
        }
        reader.end();
        std::iter::from_fn(|| reader.pop()).collect()
    }

    #[test]
    fn text_and_tool_use_are_assembled_from_deltas() {
        let events = [
            json!({ "messageStart": { "role": "assistant" } }),
            json!({ "contentBlockDelta": { "contentBlockIndex": 0, "delta": { "text": "Let me " } } }),
            json!({ "contentBlockDelta": { "contentBlockIndex": 0, "delta": { "text": "check." } } }),
            json!({ "contentBlockStop": { "contentBlockIndex": 0 } }),
            json!({ "contentBlockStart": { "contentBlockIndex": 1, "start": { "toolUse": { "toolUseId": "tooluse_1", "name": "add" } } } }),
            json!({ "contentBlockDelta": { "contentBlockIndex": 1, "delta": { "toolUse": { "input": "{\"a\": 2," } } } }),
            json!({ "contentBlockDelta": { "contentBlockIndex": 1, "delta": { "toolUse": { "input": " \"b\": 40}" } } } }),
            json!({ "contentBlockStop": { "contentBlockIndex": 1 } }),
            json!({ "messageStop": { "stopReason": "tool_use" } }),
            json!({ "metadata": { "usage": { "inputTokens": 10, "outputTokens": 5, "totalTokens": 15, "cacheReadInputTokens": 4 }, "metrics": { "latencyMs": 9 } } }),
        ];
        for cut in [7, 64, 100_000] {
            let read = read(&events, cut);
            let deltas: Vec<String> = read
                .iter()
                .filter_map(|e| match e {
                    Ok(tool_model::ModelEvent::TextDelta(t)) => Some(t.clone()),
                    _ => None,
                })
                .collect();
            assert_eq!(deltas, ["Let me ", "check."]);
            let Some(Ok(tool_model::ModelEvent::Done(response))) = read.last() else {
                panic!("the stream ends with the answer: {read:?}");
            };
            assert_eq!(response.text.as_deref(), Some("Let me check."));
            assert_eq!(response.calls.len(), 1);
            assert_eq!(response.calls[0].id.as_deref(), Some("tooluse_1"));
            assert_eq!(response.calls[0].arguments, json!({ "a": 2, "b": 40 }));
            assert_eq!(response.finish_reason.as_deref(), Some("tool_use"));
            assert_eq!(response.usage.input_tokens, 14);
            assert_eq!(response.usage.cached_input_tokens, 4);
        }
    }

    #[test]
    fn reasoning_and_tool_use_stream_in_pieces_and_the_reasoning_is_kept_whole() {
        use crate::assemble::tests::{assert_streamed, streamed_reasoning};
        let thought = |delta: Value| {
            json!({ "contentBlockDelta": { "contentBlockIndex": 0,
                    "delta": { "reasoningContent": delta } } })
        };
        let input = |piece: &str| {
            json!({ "contentBlockDelta": { "contentBlockIndex": 1,
                    "delta": { "toolUse": { "input": piece } } } })
        };
        let events = [
            json!({ "messageStart": { "role": "assistant" } }),
            thought(json!({ "text": "Two numbers: " })),
            thought(json!({ "text": "add them." })),
            thought(json!({ "signature": "sig" })),
            json!({ "contentBlockStop": { "contentBlockIndex": 0 } }),
            json!({ "contentBlockStart": { "contentBlockIndex": 1, "start": { "toolUse": { "toolUseId": "tooluse_1", "name": "add" } } } }),
            input("{\"a\": 2,"),
            input(" \"b\": 40}"),
            json!({ "contentBlockStop": { "contentBlockIndex": 1 } }),
            json!({ "messageStop": { "stopReason": "tool_use" } }),
            json!({ "metadata": { "usage": { "inputTokens": 10, "outputTokens": 5 } } }),
        ];
        for cut in [7, 100_000] {
            let read = read(&events, cut);
            let Some((Ok(tool_model::ModelEvent::Done(answer)), before)) = read.split_last() else {
                panic!("the stream ends with the answer: {read:?}");
            };
            let before: Vec<_> = before.iter().cloned().map(Result::unwrap).collect();
            assert_eq!(streamed_reasoning(&before), ["Two numbers: ", "add them."]);
            assert_eq!(assert_streamed(&before, answer), ["{\"a\": 2, \"b\": 40}"]);
            let kept = answer.reasoning.as_ref().expect("the reasoning");
            assert_eq!(
                kept.blocks,
                [json!({ "reasoningContent": { "reasoningText": {
                    "text": "Two numbers: add them.", "signature": "sig" } } })]
            );
        }
    }

    #[test]
    fn an_exception_in_the_stream_ends_it_with_the_providers_message() {
        let bytes = encode(
            &[
                (":message-type", "exception"),
                (":exception-type", "throttlingException"),
            ],
            br#"{"message":"Too many tokens, please wait before trying again."}"#,
        );
        let mut reader = event_reader(stream_decoder(Aliases::default()));
        reader.feed(&frame(&json!({ "messageStart": { "role": "assistant" } })));
        reader.feed(&bytes);
        let Some(Err(error)) = reader.pop() else {
            panic!("an error");
        };
        let shown = error.to_string();
        assert!(
            shown.contains("throttlingException: Too many tokens"),
            "{shown}"
        );
        assert!(
            matches!(error, ModelError::Status { status: 429, .. }),
            "{error:?}"
        );
        assert!(reader.is_over());
    }

    #[test]
    fn a_damaged_frame_is_a_malformed_answer() {
        let mut bytes = frame(&json!({ "messageStart": { "role": "assistant" } }));
        let at = bytes.len() - 5;
        bytes[at] ^= 0xff;
        let mut reader = event_reader(stream_decoder(Aliases::default()));
        reader.feed(&bytes);
        assert!(matches!(
            reader.pop(),
            Some(Err(ModelError::Malformed {
                provider: "Bedrock",
                ..
            }))
        ));
        // A stream cut inside a message.
        let bytes = frame(&json!({ "messageStart": { "role": "assistant" } }));
        let mut reader = event_reader(stream_decoder(Aliases::default()));
        reader.feed(&bytes[..bytes.len() - 1]);
        reader.end();
        let Some(Err(ModelError::Malformed { message, .. })) = reader.pop() else {
            panic!("a malformed answer");
        };
        assert!(
            message.contains("inside an event stream message"),
            "{message}"
        );
    }

    #[test]
    fn a_stream_ending_before_message_stop_is_malformed() {
        // A stream cut between messages, before `messageStop`: text so far, then the error.
        let events = [
            json!({ "messageStart": { "role": "assistant" } }),
            json!({ "contentBlockDelta": { "contentBlockIndex": 0, "delta": { "text": "It is" } } }),
        ];
        match read(&events, 1000).as_slice() {
            [Ok(tool_model::ModelEvent::TextDelta(_)), Err(ModelError::Malformed { message, .. })] =>
            {
                assert!(message.contains("before its messageStop"), "{message}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unknown_events_and_hosted_tool_uses_are_skipped() {
        let events = [
            json!({ "messageStart": { "role": "assistant" } }),
            json!({ "somethingNew": { "p": "abc" } }),
            json!({ "contentBlockStart": { "contentBlockIndex": 0, "start": { "toolUse": { "toolUseId": "srv_1", "name": "web_search", "type": "server_tool_use" } } } }),
            json!({ "contentBlockDelta": { "contentBlockIndex": 0, "delta": { "toolUse": { "input": "{}" } } } }),
            json!({ "contentBlockDelta": { "contentBlockIndex": 1, "delta": { "text": "Done." }, "p": "padding" } }),
            json!({ "messageStop": { "stopReason": "end_turn" } }),
        ];
        // No metadata: a stream whose last event is `messageStop` is whole.
        let read = read(&events, 1000);
        let Some(Ok(tool_model::ModelEvent::Done(response))) = read.last() else {
            panic!("{read:?}");
        };
        assert_eq!(response.text.as_deref(), Some("Done."));
        assert!(response.calls.is_empty(), "{:?}", response.calls);
        // The hosted tool's input streams as no call.
        let streamed = read
            .iter()
            .filter(|e| matches!(e, Ok(tool_model::ModelEvent::ToolCallDelta(_))));
        assert_eq!(streamed.count(), 0, "{read:?}");
    }
}
