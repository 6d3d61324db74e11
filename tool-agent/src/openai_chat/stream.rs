//! A streamed Chat Completions answer: server-sent events of `chat.completion.chunk`s, read as
//! they come; text deltas passed on, tool calls assembled, usage asked for with
//! `stream_options.include_usage` and read from the last chunk.

use std::collections::VecDeque;

use futures_util::stream;
use serde_json::Value;
use tool_core::provider::Aliases;

use super::{usage, OpenAiChatModel, PROVIDER};
use crate::assemble::CallAssembler;
use crate::events::{ModelEvent, ModelEventStream};
use crate::http::error_chain;
use crate::message::Usage;
use crate::model::{ModelError, ModelRequest, ModelResponse};

/// The answer to `request`, streamed.
pub(super) fn respond_stream<'a>(
    model: &'a OpenAiChatModel,
    request: &'a ModelRequest,
) -> ModelEventStream<'a> {
    let reading = Reading {
        model,
        request,
        response: None,
        buffer: Vec::new(),
        answer: Answer::default(),
        ready: VecDeque::new(),
        over: false,
    };
    Box::pin(stream::unfold(reading, |mut reading| async move {
        let event = reading.next().await?;
        Some((event, reading))
    }))
}

/// A streamed answer being read.
struct Reading<'a> {
    model: &'a OpenAiChatModel,
    request: &'a ModelRequest,
    /// The open response, once the request is sent.
    response: Option<reqwest::Response>,
    /// Bytes of a line not complete yet.
    buffer: Vec<u8>,
    answer: Answer,
    /// Events read and not yet given.
    ready: VecDeque<Result<ModelEvent, ModelError>>,
    /// Whether the last event is in `ready`.
    over: bool,
}

/// What the chunks said so far.
#[derive(Default)]
struct Answer {
    text: String,
    calls: CallAssembler,
    usage: Usage,
    finish_reason: Option<String>,
}

impl Reading<'_> {
    async fn next(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(event);
            }
            if self.over {
                return None;
            }
            if self.response.is_none() {
                match self.open().await {
                    Ok(response) => self.response = Some(response),
                    Err(error) => {
                        self.fail(error);
                        continue;
                    }
                }
            }
            let response = self.response.as_mut()?;
            match response.chunk().await {
                Ok(Some(bytes)) => self.feed(&bytes),
                Ok(None) => {
                    // A stream that ends without `[DONE]`: what came is the answer.
                    self.line_end();
                    self.finish();
                }
                Err(error) => self.fail(ModelError::Transport {
                    url: self.model.url().to_owned(),
                    message: format!("the stream broke: {}", error_chain(&error)),
                    attempts: 1,
                }),
            }
        }
    }

    async fn open(&self) -> Result<reqwest::Response, ModelError> {
        let body = self.model.write_body(self.request, true)?;
        self.model.post(body)?.open().await
    }

    /// Ends the stream with `error`, dropping what was not given yet.
    fn fail(&mut self, error: ModelError) {
        self.over = true;
        self.ready.clear();
        self.ready.push_back(Err(error));
    }

    /// Reads the complete lines of `bytes` (and what was left of the last ones).
    fn feed(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
        while let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            self.line(&line);
            if self.over {
                return;
            }
        }
    }

    /// The last line, when the stream ends without a line break.
    fn line_end(&mut self) {
        let rest = std::mem::take(&mut self.buffer);
        if !rest.is_empty() {
            self.line(&rest);
        }
    }

    /// One line of the event stream: only `data:` lines matter.
    fn line(&mut self, line: &[u8]) {
        let line = String::from_utf8_lossy(line);
        let Some(data) = line.trim_end().strip_prefix("data:") else {
            return;
        };
        let data = data.trim();
        if data == "[DONE]" {
            self.finish();
            return;
        }
        match serde_json::from_str::<Value>(data) {
            Ok(chunk) => self.chunk(&chunk),
            Err(e) => {
                let error = ModelError::Malformed {
                    provider: PROVIDER,
                    message: format!("a streamed chunk is not JSON ({e}): {data}"),
                };
                self.fail(error);
            }
        }
    }

    /// One `chat.completion.chunk`.
    fn chunk(&mut self, chunk: &Value) {
        if let Some(message) = chunk.pointer("/error/message").and_then(Value::as_str) {
            self.fail(ModelError::Status {
                provider: PROVIDER,
                status: 200,
                message: message.to_owned(),
                attempts: 1,
            });
            return;
        }
        if chunk.get("usage").is_some_and(Value::is_object) {
            self.answer.usage = usage(chunk);
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return;
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.answer.finish_reason = Some(reason.to_owned());
        }
        let Some(delta) = choice.get("delta") else {
            return;
        };
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            if !text.is_empty() {
                self.answer.text.push_str(text);
                self.ready
                    .push_back(Ok(ModelEvent::TextDelta(text.to_owned())));
            }
        }
        let calls = delta.get("tool_calls").and_then(Value::as_array);
        for call in calls.into_iter().flatten() {
            let function = call.get("function");
            let field = |name: &str| function.and_then(|f| f.get(name)).and_then(Value::as_str);
            self.answer.calls.push(
                call.get("index").and_then(Value::as_u64),
                call.get("id").and_then(Value::as_str),
                field("name"),
                field("arguments"),
            );
        }
    }

    /// The answer is complete: its last event.
    fn finish(&mut self) {
        if self.over {
            return;
        }
        self.over = true;
        let answer = std::mem::take(&mut self.answer);
        let fallback = Aliases::default();
        let aliases = self
            .request
            .tools
            .declarations()
            .map_or(&fallback, |d| &d.aliases);
        let mut usage = answer.usage;
        usage.requests = 1;
        let response = ModelResponse {
            text: (!answer.text.is_empty()).then_some(answer.text),
            calls: answer.calls.finish(aliases),
            usage,
            finish_reason: answer.finish_reason,
        };
        self.ready.push_back(Ok(ModelEvent::Done(response)));
    }
}
