//! Streamed answers over server-sent events, the part every API shares: the request opened
//! (with the client's retries, before anything is read), the body read as it comes and cut
//! into `data:` payloads (or, for Bedrock, AWS event stream messages), errors and the end. Each
//! API's [`Decoder`] reads the payloads.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use futures_util::stream;

use crate::http::{error_chain, MAX_ANSWER_BYTES, MAX_STREAM_BYTES};
use tool_model::{ModelError, ModelResponse};
use tool_model::{ModelEvent, ModelEventStream};

/// What one API's payloads mean.
pub(crate) trait Decoder: Send {
    /// One `data:` payload. What it streams (text, tool call and reasoning deltas, never
    /// [`ModelEvent::Done`]) goes to `events`, in order; a call's through
    /// [`StreamedAnswer::push_call`](crate::assemble::StreamedAnswer::push_call). `Ok(true)`
    /// when the answer is complete.
    fn data(&mut self, data: &str, events: &mut Vec<ModelEvent>) -> Result<bool, ModelError>;

    /// One payload a [`Framing`] read as JSON already: as [`Decoder::data`] would read its
    /// text. An API whose streams are framed reads the value as it is.
    fn event(
        &mut self,
        event: serde_json::Value,
        events: &mut Vec<ModelEvent>,
    ) -> Result<bool, ModelError> {
        self.data(&event.to_string(), events)
    }

    /// The whole answer, from what the payloads said.
    fn finish(&mut self) -> ModelResponse;

    /// Why the answer is not whole, when the body ended before the payload that says it is
    /// complete, for an API whose streams always send one; `None` takes what came as the answer.
    fn cut_short(&self) -> Option<ModelError> {
        None
    }

    /// The bytes of the tool calls held so far (ids, names, arguments): they count toward
    /// the answer's cap as its text does.
    fn call_bytes(&self) -> usize {
        0
    }
}

/// The opening of the request: the response whose body is the stream.
pub(crate) type Opening<'a> =
    Pin<Box<dyn Future<Output = Result<reqwest::Response, ModelError>> + Send + 'a>>;

/// The answer read from the stream `opening` opens, as events.
pub(crate) fn events<'a>(
    opening: Opening<'a>,
    url: String,
    decoder: Box<dyn Decoder + 'a>,
) -> ModelEventStream<'a> {
    read_events(opening, url, EventReader::new(decoder))
}

/// How a stream's body is cut into payloads when it is not server-sent events (Bedrock's AWS
/// event stream): the bytes in, each complete frame's payload out as JSON.
pub(crate) trait Framing: Send {
    /// Reads `bytes` (and what was held of a frame before them): the payloads of the frames
    /// they complete, in order, or why one cannot be read; and an error after which nothing
    /// can be read.
    fn feed(&mut self, bytes: &[u8]) -> (Vec<Result<serde_json::Value, String>>, Option<String>);

    /// Whether bytes of an unfinished frame are held.
    fn is_mid_frame(&self) -> bool;
}

/// The answer read from the framed stream `opening` opens, as events: each frame's payload
/// goes to the decoder as JSON ([`Decoder::event`]).
pub(crate) fn framed_events<'a>(
    opening: Opening<'a>,
    url: String,
    decoder: Box<dyn Decoder + 'a>,
    framing: Box<dyn Framing>,
    provider: &'static str,
) -> ModelEventStream<'a> {
    read_events(
        opening,
        url,
        EventReader::framed(decoder, framing, provider),
    )
}

fn read_events<'a>(
    opening: Opening<'a>,
    url: String,
    events: EventReader<'a>,
) -> ModelEventStream<'a> {
    let reading = Reading {
        opening: Some(opening),
        url,
        response: None,
        read: 0,
        events,
    };
    Box::pin(stream::unfold(reading, |mut reading| async move {
        let event = reading.next().await?;
        Some((event, reading))
    }))
}

/// A streamed answer being read: the request, then the body's bytes as they come.
struct Reading<'a> {
    opening: Option<Opening<'a>>,
    url: String,
    /// The open response, once the request is sent.
    response: Option<reqwest::Response>,
    /// The body's bytes read so far, held to [`MAX_STREAM_BYTES`].
    read: usize,
    events: EventReader<'a>,
}

impl Reading<'_> {
    async fn next(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        loop {
            if let Some(event) = self.events.pop() {
                return Some(event);
            }
            if self.events.is_over() {
                return None;
            }
            if let Some(opening) = self.opening.take() {
                match opening.await {
                    Ok(response) => self.response = Some(response),
                    Err(error) => {
                        self.events.fail(error);
                        continue;
                    }
                }
            }
            let response = self.response.as_mut()?;
            match response.chunk().await {
                Ok(Some(bytes)) if self.read + bytes.len() > MAX_STREAM_BYTES => {
                    self.events.fail(ModelError::Transport {
                        url: crate::http::redacted_url(&self.url),
                        message: format!(
                            "the stream is larger than {MAX_STREAM_BYTES} bytes; nothing more \
                             was read"
                        ),
                        attempts: 1,
                    })
                }
                Ok(Some(bytes)) => {
                    self.read += bytes.len();
                    self.events.feed(&bytes)
                }
                Ok(None) => self.events.end(),
                Err(error) => self.events.fail(ModelError::Transport {
                    url: crate::http::redacted_url(&self.url),
                    message: format!("the stream broke: {}", error_chain(&error.without_url())),
                    attempts: 1,
                }),
            }
        }
    }
}

/// One payload of a stream: a server-sent event's data, or a frame read as JSON.
enum Payload<'d> {
    Text(&'d str),
    Json(serde_json::Value),
}

/// The events of a stream's body, from its bytes however they are cut: lines and their
/// `data:` payloads (or AWS event stream messages) given to the decoder, and the end. Knows
/// nothing of HTTP.
pub(crate) struct EventReader<'a> {
    /// How the body is framed when it is not server-sent events, and the provider named in
    /// its errors.
    frames: Option<(Box<dyn Framing>, &'static str)>,
    /// Bytes of a line not complete yet.
    buffer: Vec<u8>,
    /// How much of `buffer` is known to hold no line end, so that a long line arriving in
    /// small pieces is scanned once, not once per piece.
    scanned: usize,
    decoder: Box<dyn Decoder + 'a>,
    /// Events read and not yet given.
    ready: VecDeque<Result<ModelEvent, ModelError>>,
    /// Whether the last event is in `ready`.
    over: bool,
    /// The bytes of the answer's text so far, held to [`MAX_ANSWER_BYTES`].
    text: usize,
    /// The `data:` lines of the event being read, joined by line ends, until the empty line
    /// that ends it.
    pending: Option<String>,
    /// How many lines `pending` holds.
    pending_lines: usize,
}

impl<'a> EventReader<'a> {
    pub(crate) fn new(decoder: Box<dyn Decoder + 'a>) -> Self {
        EventReader {
            frames: None,
            buffer: Vec::new(),
            scanned: 0,
            decoder,
            ready: VecDeque::new(),
            over: false,
            text: 0,
            pending: None,
            pending_lines: 0,
        }
    }

    /// A reader of a framed stream, whose broken frames are `provider`'s malformed answer.
    pub(crate) fn framed(
        decoder: Box<dyn Decoder + 'a>,
        framing: Box<dyn Framing>,
        provider: &'static str,
    ) -> Self {
        EventReader {
            frames: Some((framing, provider)),
            ..EventReader::new(decoder)
        }
    }

    /// The next event read and not yet given.
    pub(crate) fn pop(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        self.ready.pop_front()
    }

    /// Whether the last event has been read (it may not have been given yet).
    pub(crate) fn is_over(&self) -> bool {
        self.over
    }

    /// Ends the stream with `error`, after what was read before it: the events given are the
    /// same whether the body came in one piece or many.
    pub(crate) fn fail(&mut self, error: ModelError) {
        self.over = true;
        self.ready.push_back(Err(error));
    }

    /// Reads the complete lines of `bytes` (and what was left of the last ones), or for an AWS
    /// event stream, the messages they complete.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        if let Some((frames, provider)) = &mut self.frames {
            let provider = *provider;
            let (frames, error) = frames.feed(bytes);
            for frame in frames {
                if self.over {
                    return;
                }
                match frame {
                    Ok(event) => self.payload(Payload::Json(event)),
                    Err(message) => self.fail(ModelError::Malformed { provider, message }),
                }
            }
            if let Some(message) = error.filter(|_| !self.over) {
                self.fail(ModelError::Malformed { provider, message });
            }
            return;
        }
        self.buffer.extend_from_slice(bytes);
        let mut start = 0;
        while let Some(at) = self.buffer[self.scanned..].iter().position(|b| *b == b'\n') {
            let end = self.scanned + at + 1;
            let line = self.buffer[start..end].to_vec();
            start = end;
            self.scanned = end;
            self.line(&line);
            if self.over {
                break;
            }
        }
        self.buffer.drain(..start);
        self.scanned = self.buffer.len();
        if self.buffer.len() > MAX_ANSWER_BYTES && !self.over {
            self.fail(ModelError::Malformed {
                provider: "the model",
                message: format!("a line of the stream is longer than {MAX_ANSWER_BYTES} bytes"),
            });
        }
    }

    /// The body ended. A stream that ends without its end marker: what came is the answer.
    pub(crate) fn end(&mut self) {
        if self.over {
            return;
        }
        if let Some((frames, provider)) = &self.frames {
            if frames.is_mid_frame() {
                let provider = *provider;
                let message = "the stream ended inside an event stream message".to_owned();
                self.fail(ModelError::Malformed { provider, message });
                return;
            }
        }
        let rest = std::mem::take(&mut self.buffer);
        self.scanned = 0;
        if !rest.is_empty() {
            self.line(&rest);
        }
        // An event the body ended in, without its empty line, is read all the same.
        self.dispatch();
        if self.over {
            return;
        }
        if let Some(error) = self.decoder.cut_short() {
            self.fail(error);
            return;
        }
        self.finish();
    }

    /// One line of the event stream: an event's `data:` lines are its payload, joined by
    /// line ends, and the empty line after them ends it. Other fields and comments are left.
    fn line(&mut self, line: &[u8]) {
        let line = String::from_utf8_lossy(line);
        let line = line.trim_end_matches(['\n', '\r']);
        if line.is_empty() {
            return self.dispatch();
        }
        let Some(data) = line.strip_prefix("data:") else {
            return;
        };
        let data = data.strip_prefix(' ').unwrap_or(data);
        match &mut self.pending {
            // A server that leaves out the empty line between events (one line each): the
            // line so far is whole JSON, and this one starts the next event. Looked at for a
            // first line only, so that an event of many lines is read once.
            Some(so_far)
                if self.pending_lines == 1
                    && serde_json::from_str::<serde::de::IgnoredAny>(so_far).is_ok() =>
            {
                self.dispatch();
                self.pending = Some(data.to_owned());
                self.pending_lines = 1;
            }
            Some(so_far) if so_far.len() + data.len() >= MAX_ANSWER_BYTES => {
                let message =
                    format!("an event of the stream is longer than {MAX_ANSWER_BYTES} bytes");
                self.pending = None;
                self.fail(ModelError::Malformed {
                    provider: "the model",
                    message,
                });
            }
            Some(so_far) => {
                so_far.push('\n');
                so_far.push_str(data);
                self.pending_lines += 1;
            }
            None => {
                self.pending = Some(data.to_owned());
                self.pending_lines = 1;
            }
        }
    }

    /// The event read so far, given to the decoder.
    fn dispatch(&mut self) {
        if let Some(data) = self.pending.take() {
            if !self.over {
                self.payload(Payload::Text(data.trim()));
            }
        }
    }

    /// One payload, given to the decoder; the events it streams are given in order, before
    /// more of the body is read, and hold no more than the bytes that brought them. The text
    /// counts toward the answer's cap here, the calls as the decoder holds them
    /// ([`Decoder::call_bytes`]).
    fn payload(&mut self, payload: Payload<'_>) {
        let mut events = Vec::new();
        let complete = match payload {
            Payload::Text(data) => self.decoder.data(data, &mut events),
            Payload::Json(event) => self.decoder.event(event, &mut events),
        };
        let text = events.iter().map(|event| match event {
            ModelEvent::TextDelta(text) => text.len(),
            _ => 0,
        });
        self.text = text.fold(self.text, usize::saturating_add);
        if self.text.saturating_add(self.decoder.call_bytes()) > MAX_ANSWER_BYTES {
            let message = format!(
                "the answer's text and tool calls are longer than {MAX_ANSWER_BYTES} bytes"
            );
            self.fail(ModelError::Malformed {
                provider: "the model",
                message,
            });
            return;
        }
        self.ready.extend(events.into_iter().map(Ok));
        match complete {
            Ok(true) => self.finish(),
            Ok(false) => {}
            Err(error) => self.fail(error),
        }
    }

    /// The answer is complete: its last event.
    fn finish(&mut self) {
        if self.over {
            return;
        }
        self.over = true;
        let mut response = self.decoder.finish();
        response.usage.requests = 1;
        self.ready.push_back(Ok(ModelEvent::Done(response)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A decoder that keeps every payload, and ends at `[END]`.
    struct Recording(Arc<Mutex<Vec<String>>>);

    impl Decoder for Recording {
        fn data(&mut self, data: &str, _: &mut Vec<ModelEvent>) -> Result<bool, ModelError> {
            self.0.lock().unwrap().push(data.to_owned());
            Ok(data == "[END]")
        }

        fn finish(&mut self) -> ModelResponse {
            ModelResponse::answer("")
        }
    }

    /// The payloads read from `body`, given in pieces of `piece` bytes.
    fn payloads(body: &str, piece: usize) -> Vec<String> {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut reader = EventReader::new(Box::new(Recording(seen.clone())));
        for bytes in body.as_bytes().chunks(piece) {
            reader.feed(bytes);
        }
        reader.end();
        let seen = seen.lock().unwrap().clone();
        seen
    }

    #[test]
    fn an_events_data_lines_are_one_payload_joined_by_line_ends() {
        let body = "event: a\ndata: {\"text\":\ndata:  \"two lines\"}\n\n: a comment\r\ndata: [END]\r\n\r\n";
        for piece in [1, 3, body.len()] {
            assert_eq!(
                payloads(body, piece),
                ["{\"text\":\n \"two lines\"}", "[END]"],
                "in pieces of {piece}"
            );
        }
    }

    #[test]
    fn events_without_the_empty_line_between_them_are_read_one_by_one() {
        let body = "data: {\"a\":1}\ndata: {\"b\":2}\ndata: [END]";
        assert_eq!(payloads(body, 2), ["{\"a\":1}", "{\"b\":2}", "[END]"]);
    }

    #[test]
    fn nothing_is_read_after_the_answer_is_complete() {
        let body = "data: [END]\n\ndata: {\"late\":true}\n\n";
        assert_eq!(payloads(body, 5), ["[END]"]);
    }
}
