//! A streamed Chat Completions answer: `chat.completion.chunk`s as server-sent events; text
//! and reasoning deltas passed on, tool calls assembled, usage asked for with
//! `stream_options.include_usage` and read from the last chunk, `[DONE]` at the end.

use serde_json::Value;
use tool_core::provider::Aliases;

use super::{usage, OpenAiChatModel, PROVIDER};
use crate::assemble::StreamedAnswer;
use crate::sse::{self, Decoder};
use tool_model::{ModelError, ModelRequest, ModelResponse};
use tool_model::{ModelEvent, ModelEventStream};

/// The answer to `request`, streamed.
pub(super) fn respond_stream<'a>(
    model: &'a OpenAiChatModel,
    request: &'a ModelRequest,
) -> ModelEventStream<'a> {
    let opening = Box::pin(async move {
        let body = model.write_body(request, true)?;
        model.post(body)?.open().await
    });
    let aliases = request
        .tools
        .aliases_for(tool_core::provider::Format::OpenAiChat)
        .into_owned();
    sse::events(opening, model.url().to_owned(), stream_decoder(aliases))
}

/// What reads a streamed answer's payloads, with the aliases its tools were declared under.
pub(crate) fn stream_decoder(aliases: Aliases) -> Box<dyn Decoder> {
    Box::new(Chunks {
        answer: StreamedAnswer::new(aliases, super::ending),
        done: false,
    })
}

/// What the chunks said so far.
#[derive(Default)]
struct Chunks {
    answer: StreamedAnswer,
    /// Whether `[DONE]` came.
    done: bool,
}

impl Decoder for Chunks {
    fn call_bytes(&self) -> usize {
        self.answer.call_bytes()
    }

    fn data(&mut self, data: &str, events: &mut Vec<ModelEvent>) -> Result<bool, ModelError> {
        if data == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
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
        if chunk.get("usage").is_some_and(Value::is_object) {
            self.answer.usage = usage(&chunk);
        }
        // The first choice only: with `n` above 1 each chunk carries one choice, by index.
        let choices = chunk.get("choices").and_then(Value::as_array);
        let first = |c: &&Value| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0;
        let Some(choice) = choices.into_iter().flatten().find(first) else {
            return Ok(false);
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            // A refusal ends with `stop`; it stays a refusal.
            if self.answer.finish_reason.as_deref() != Some("refusal") {
                self.answer.finish_reason = Some(reason.to_owned());
            }
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(false);
        };
        // A refusal streams in a field of its own: it is the answer's text.
        if let Some(refusal) = delta.get("refusal").and_then(Value::as_str) {
            if !refusal.is_empty() {
                self.answer.text.push_str(refusal);
                events.push(ModelEvent::TextDelta(refusal.to_owned()));
                self.answer.finish_reason = Some("refusal".to_owned());
            }
        }
        // What a compatible server's model thought, shown and not kept (the API takes none
        // back): `reasoning_content` (DeepSeek, vLLM) or `reasoning` (OpenRouter, vLLM), one
        // field only where a server sends both.
        let reasoning = ["reasoning_content", "reasoning"]
            .into_iter()
            .filter_map(|field| delta.get(field).and_then(Value::as_str))
            .find(|thought| !thought.is_empty());
        if let Some(thought) = reasoning {
            events.push(ModelEvent::ReasoningDelta(thought.to_owned()));
        }
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            if !text.is_empty() {
                self.answer.text.push_str(text);
                events.push(ModelEvent::TextDelta(text.to_owned()));
            }
        }
        let calls = delta.get("tool_calls").and_then(Value::as_array);
        for call in calls.into_iter().flatten() {
            // A custom tool's pieces are its text (`custom.input`), read whole at the end.
            let function = call.get("function").or_else(|| call.get("custom"));
            let field = |name: &str| function.and_then(|f| f.get(name)).and_then(Value::as_str);
            self.answer.push_call(
                call.get("index").and_then(Value::as_u64),
                call.get("id").and_then(Value::as_str),
                field("name"),
                field("arguments").or_else(|| field("input")),
                events,
            );
        }
        Ok(false)
    }

    /// A stream ends with `[DONE]`, after a chunk with the answer's `finish_reason`; one
    /// that closed before either was cut (a call in it would run with part of its arguments).
    /// A compatible server that sends no `[DONE]` still gives the finish reason.
    fn cut_short(&self) -> Option<ModelError> {
        (!self.done && self.answer.finish_reason.is_none()).then(|| ModelError::Malformed {
            provider: PROVIDER,
            message: "the stream ended before its finish_reason and [DONE]".into(),
        })
    }

    fn finish(&mut self) -> ModelResponse {
        self.answer.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::tests::{assert_streamed, decode, streamed_reasoning};
    use serde_json::json;
    use tool_core::provider::Format;
    use tool_model::CallDelta;

    fn delta(delta: Value) -> Value {
        json!({ "object": "chat.completion.chunk", "choices": [{ "index": 0, "delta": delta }] })
    }

    #[test]
    fn interleaved_parallel_calls_stream_in_pieces_by_index_with_their_real_names() {
        let aliases = Aliases::for_names(["math.add", "mul"], Format::OpenAiChat);
        let add = aliases.provider_name("math.add").to_owned();
        let call = |index: u64, id: Option<&str>, name: Option<&str>, arguments: &str| {
            let function = json!({ "name": name, "arguments": arguments });
            delta(json!({ "tool_calls": [{ "index": index, "id": id, "function": function }] }))
        };
        let chunks = [
            delta(json!({ "role": "assistant", "content": "Adding." })),
            call(0, Some("call_a"), Some(&add), ""),
            call(1, Some("call_b"), Some("mul"), "{\"x\": 5,"),
            call(0, None, None, "{\"a\": 1, "),
            call(1, None, None, " \"y\": 5}"),
            call(0, None, None, "\"b\": 2}"),
            json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "tool_calls" }] }),
        ];
        let (events, answer) = decode(stream_decoder(aliases), &chunks);
        let piece = |index, id: Option<&str>, name: Option<&str>, arguments| {
            let (id, name) = (id.map(str::to_owned), name.map(str::to_owned));
            ModelEvent::ToolCallDelta(CallDelta::new(index, id, name, arguments))
        };
        assert_eq!(
            events,
            [
                ModelEvent::TextDelta("Adding.".into()),
                piece(0, Some("call_a"), Some("math.add"), ""),
                piece(1, Some("call_b"), Some("mul"), "{\"x\": 5,"),
                piece(0, None, None, "{\"a\": 1, "),
                piece(1, None, None, " \"y\": 5}"),
                piece(0, None, None, "\"b\": 2}"),
            ]
        );
        assert_eq!(
            assert_streamed(&events, &answer),
            ["{\"a\": 1, \"b\": 2}", "{\"x\": 5, \"y\": 5}"]
        );
    }

    #[test]
    fn a_compatible_servers_reasoning_streams_and_is_not_the_answer() {
        let chunks = [
            // DeepSeek, vLLM.
            delta(json!({ "role": "assistant", "reasoning_content": "The user " })),
            // OpenRouter; a server that sends both fields says it once.
            delta(json!({ "reasoning": "greets me." })),
            delta(json!({ "reasoning_content": " Greet", "reasoning": " Greet" })),
            delta(json!({ "reasoning_content": null, "content": "Hello!" })),
            json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "stop" }] }),
        ];
        let (events, answer) = decode(stream_decoder(Aliases::default()), &chunks);
        assert_eq!(
            streamed_reasoning(&events),
            ["The user ", "greets me.", " Greet"]
        );
        assert_eq!(events.last(), Some(&ModelEvent::TextDelta("Hello!".into())));
        assert_eq!(answer.text.as_deref(), Some("Hello!"));
        assert_eq!(answer.reasoning, None);
    }

    #[test]
    fn a_stream_that_closed_before_its_finish_reason_and_done_was_cut() {
        let chunk = |choice: &str| format!(r#"{{"choices":[{{"index":0,{choice}}}]}}"#);
        let mut decoder = stream_decoder(Aliases::default());
        let text = chunk(r#""delta":{"content":"Hel"}"#);
        decoder.data(&text, &mut Vec::new()).unwrap();
        assert!(decoder.cut_short().is_some());
        // A compatible server that sends no [DONE] gives the finish reason.
        let last = chunk(r#""delta":{},"finish_reason":"stop""#);
        decoder.data(&last, &mut Vec::new()).unwrap();
        assert!(decoder.cut_short().is_none());
        let mut done = stream_decoder(Aliases::default());
        done.data(&text, &mut Vec::new()).unwrap();
        done.data("[DONE]", &mut Vec::new()).unwrap();
        assert!(done.cut_short().is_none());
    }

    #[test]
    fn a_custom_tools_text_streams_in_pieces_and_is_its_one_argument() {
        let mut aliases = Aliases::default();
        aliases.set_takes_text("agenda");
        let piece =
            |call: Value| json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [call] } }] });
        let chunks = [
            piece(json!({ "index": 0, "id": "c1", "type": "custom",
                          "custom": { "name": "agenda", "input": "2026-" } })),
            piece(json!({ "index": 0, "custom": { "input": "12-01" } })),
            json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "tool_calls" }] }),
        ];
        let (_, answer) = decode(stream_decoder(aliases), &chunks);
        assert_eq!(answer.calls[0].name, "agenda");
        assert_eq!(answer.calls[0].arguments, json!({ "input": "2026-12-01" }));
    }
}
