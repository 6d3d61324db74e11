//! A streamed Responses answer: server-sent events (`response.output_text.delta`,
//! `response.output_item.added`, `response.function_call_arguments.delta`,
//! `response.completed`...), read into the answer.

use serde_json::Value;
use tool_core::provider::Aliases;

use super::{ending, finish_reason, is_reasoning, PROVIDER, REASONING_API};
use crate::assemble::StreamedAnswer;
use crate::sse::Decoder;
use tool_model::message::{Reasoning, Usage};
use tool_model::{ModelError, ModelResponse};

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
/// `response.function_call_arguments.delta`, and the usage of `response.completed`.
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
        self.answer.calls.bytes()
    }

    fn data(&mut self, data: &str, deltas: &mut Vec<String>) -> Result<bool, ModelError> {
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
                    deltas.push(piece.to_owned());
                    self.refused = true;
                }
            }
            Some("response.output_text.delta") => {
                if let Some(text) = field("/delta").filter(|t| !t.is_empty()) {
                    self.answer.text.push_str(text);
                    deltas.push(text.to_owned());
                }
            }
            Some("response.output_item.added") if field("/item/type") == Some("function_call") => {
                self.answer.calls.push(
                    index,
                    field("/item/call_id"),
                    field("/item/name"),
                    field("/item/arguments"),
                );
            }
            Some("response.output_item.done") => {
                if let Some(item) = event.get("item").filter(|item| is_reasoning(item)) {
                    self.thought.push(item.clone());
                }
            }
            Some("response.function_call_arguments.delta") => {
                self.answer.calls.push(index, None, None, field("/delta"));
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
