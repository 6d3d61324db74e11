//! A streamed `generateContent` answer (`streamGenerateContent` with `alt=sse`): each chunk a
//! partial answer, whose text continues the text (or the thoughts, in parts marked `thought`)
//! and whose function calls come whole.

use serde_json::Value;
use tool_core::provider::Aliases;

use super::response::{ending, finish_reason, usage, Signatures};
use super::PROVIDER;
use crate::assemble::StreamedAnswer;
use crate::sse::Decoder;
use tool_model::{ModelError, ModelEvent, ModelResponse};

/// What reads a streamed answer's payloads, with the aliases its tools were declared under.
pub(crate) fn stream_decoder(aliases: Aliases, source: String) -> Box<dyn Decoder> {
    Box::new(Streamed {
        answer: StreamedAnswer::new(aliases, ending),
        source,
        ..Streamed::default()
    })
}

/// What a streamed answer's chunks said so far: each chunk is a partial answer whose text
/// parts continue the text and whose function calls come whole; the last usage counts.
#[derive(Default)]
struct Streamed {
    answer: StreamedAnswer,
    count: u64,
    signatures: Signatures,
    /// Who gave it ([`Reasoning::source`]): the endpoint's URL, which names the model.
    ///
    /// [`Reasoning::source`]: tool_model::message::Reasoning::source
    source: String,
}

impl Decoder for Streamed {
    fn call_bytes(&self) -> usize {
        self.answer.call_bytes()
    }

    fn data(&mut self, data: &str, events: &mut Vec<ModelEvent>) -> Result<bool, ModelError> {
        let chunk: Value = serde_json::from_str(data).map_err(|e| ModelError::Malformed {
            provider: PROVIDER,
            message: format!(
                "a streamed chunk is not JSON ({e}): {}",
                crate::http::body_start(data, 300)
            ),
        })?;
        if let Some(message) = chunk.pointer("/error/message").and_then(Value::as_str) {
            return Err(ModelError::Status {
                provider: PROVIDER,
                status: 200,
                message: message.to_owned(),
                attempts: 1,
            });
        }
        if chunk.get("usageMetadata").is_some() {
            self.answer.usage = usage(&chunk);
        }
        let candidate = chunk.pointer("/candidates/0");
        if let Some(reason) = finish_reason(&chunk) {
            self.answer.finish_reason = Some(reason);
        }
        let parts = candidate
            .and_then(|c| c.pointer("/content/parts"))
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            self.signatures.read(part);
            if let Some(call) = part.get("functionCall") {
                self.count += 1;
                let arguments = call.get("args").map(Value::to_string);
                self.answer.push_call(
                    Some(self.count),
                    call.get("id").and_then(Value::as_str),
                    call.get("name").and_then(Value::as_str),
                    arguments.as_deref(),
                    events,
                );
            } else if let Some(text) = part.get("text").and_then(Value::as_str) {
                // A thought summary is shown, not kept: its signature is what goes back.
                if part.get("thought").and_then(Value::as_bool) == Some(true) {
                    if !text.is_empty() {
                        events.push(ModelEvent::ReasoningDelta(text.to_owned()));
                    }
                } else {
                    self.answer.text.push_str(text);
                    events.push(ModelEvent::TextDelta(text.to_owned()));
                }
            }
        }
        Ok(false)
    }

    /// Gemini's last chunk carries the candidate's `finishReason` (or the prompt's
    /// `blockReason`); a stream that closed before it was cut.
    fn cut_short(&self) -> Option<ModelError> {
        self.answer
            .finish_reason
            .is_none()
            .then(|| ModelError::Malformed {
                provider: PROVIDER,
                message: "the stream ended before a chunk with its finishReason".into(),
            })
    }

    fn finish(&mut self) -> ModelResponse {
        self.answer.reasoning = self.signatures.reasoning(&self.source);
        self.answer.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::tests::{assert_streamed, decode, streamed_reasoning};
    use crate::gemini::tests::HERE;
    use serde_json::json;

    #[test]
    fn thoughts_stream_as_reasoning_and_each_whole_call_as_one_piece() {
        let chunk = |parts: Value| json!({ "candidates": [{ "content": { "role": "model", "parts": parts } }] });
        let chunks = [
            chunk(json!([{ "text": "**Adding** the numbers", "thought": true }])),
            chunk(json!([{ "text": ", then multiplying.", "thought": true }])),
            chunk(json!([{ "text": "On it." }, {
                "functionCall": { "name": "add", "args": { "a": 1, "b": 2 } },
                "thoughtSignature": "c2ln" }])),
            chunk(json!([{ "functionCall": { "id": "m1", "name": "mul", "args": { "x": 3 } } }])),
            json!({ "candidates": [{ "finishReason": "STOP", "content": { "parts": [] } }] }),
        ];
        let (events, answer) = decode(stream_decoder(Aliases::default(), HERE.to_owned()), &chunks);
        assert_eq!(
            streamed_reasoning(&events),
            ["**Adding** the numbers", ", then multiplying."]
        );
        assert_eq!(answer.text.as_deref(), Some("On it."));
        assert_eq!(
            assert_streamed(&events, &answer),
            ["{\"a\":1,\"b\":2}", "{\"x\":3}"]
        );
        // What goes back is the signature, not the thought.
        assert!(answer.reasoning.is_some());
    }

    #[test]
    fn a_stream_that_closed_before_its_finish_reason_was_cut() {
        let mut decoder = stream_decoder(Aliases::default(), HERE.to_owned());
        let partial = json!({ "candidates": [{ "content": { "role": "model", "parts": [
            { "functionCall": { "name": "add", "args": {} } }
        ]}}]});
        decoder.data(&partial.to_string(), &mut Vec::new()).unwrap();
        assert!(decoder.cut_short().is_some());
        let last =
            json!({ "candidates": [{ "finishReason": "STOP", "content": { "parts": [] } }] });
        decoder.data(&last.to_string(), &mut Vec::new()).unwrap();
        assert!(decoder.cut_short().is_none());
    }
}
