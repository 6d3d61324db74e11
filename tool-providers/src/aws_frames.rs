//! AWS's binary event stream (`application/vnd.amazon.eventstream`), the framing of Bedrock's
//! streamed answers: each message is a prelude (total length, headers length, the prelude's
//! CRC-32), headers, a payload and the message's CRC-32, all big-endian. This module cuts bytes
//! into messages, checks them, and gives each as one JSON event (its payload read as JSON);
//! what an event means is the decoder's.

use crate::sse::Framing;

/// The name under which an exception or an error message is given as an event
/// ([`Frame::to_event`]): no event of AWS's has a name beginning with `:`.
pub(crate) const EXCEPTION_EVENT: &str = ":exception";

/// The prelude (two lengths and a CRC) and the message CRC around headers and payload.
const OVERHEAD: usize = 16;

/// One message of the stream: the headers it carries as strings, and its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    /// Headers whose value is a string (`:event-type`, `:message-type`...), in order.
    pub headers: Vec<(String, String)>,
    pub payload: Vec<u8>,
}

impl Frame {
    /// A string header's value.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The frame as one JSON event: an event as AWS's SDKs give it, `{"<event type>":
    /// payload}`; an exception or an error as `{":exception": {"type", "message"}}` (a name no
    /// event has), from the `:exception-type` header and the payload's message, or from the
    /// `:error-code` and `:error-message` headers. An error for an event or an exception
    /// whose payload is not JSON.
    pub(crate) fn to_event(&self) -> Result<serde_json::Value, String> {
        use serde_json::{json, Value};
        let payload = || {
            serde_json::from_slice::<Value>(&self.payload).map_err(|e| {
                let kind = self
                    .header(":event-type")
                    .or(self.header(":exception-type"));
                format!(
                    "the payload of an event stream message ({}) is not JSON: {e}",
                    kind.unwrap_or("unknown")
                )
            })
        };
        let exception = |kind: Option<&str>, message: Option<&str>| {
            let kind = kind.unwrap_or("unknown");
            let message = message.unwrap_or("(no message)");
            json!({ EXCEPTION_EVENT: { "type": kind, "message": message } })
        };
        match self.header(":message-type") {
            Some("exception") => {
                let payload = payload()?;
                let message = ["message", "Message"]
                    .iter()
                    .find_map(|key| payload.get(key).and_then(Value::as_str));
                Ok(exception(self.header(":exception-type"), message))
            }
            Some("error") => Ok(exception(
                self.header(":error-code"),
                self.header(":error-message"),
            )),
            _ => Ok(json!({ self.header(":event-type").unwrap_or("unknown"): payload()? })),
        }
    }
}

/// Bytes of a stream, however they arrive, cut into checked frames.
#[derive(Debug, Default)]
pub(crate) struct FrameReader {
    buffer: Vec<u8>,
}

impl FrameReader {
    /// Adds bytes and returns the frames they complete, in order, then the error of a frame
    /// that is not one (a length out of bounds, a CRC that does not match), if one came: the
    /// frames before it are given however the bytes were cut. Nothing can be read after an
    /// error.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> (Vec<Frame>, Option<String>) {
        self.buffer.extend_from_slice(bytes);
        let mut frames = Vec::new();
        let mut start = 0;
        let error = loop {
            match self.complete_frame(start) {
                Ok(Some(length)) => match decode(&self.buffer[start..start + length]) {
                    Ok(frame) => frames.push(frame),
                    Err(error) => break Some(error),
                },
                Ok(None) => break None,
                Err(error) => break Some(error),
            }
            start += length_of(&self.buffer[start..]);
        };
        self.buffer.drain(..start);
        (frames, error)
    }

    /// Whether bytes of an unfinished frame are held.
    pub(crate) fn is_mid_frame(&self) -> bool {
        !self.buffer.is_empty()
    }

    /// The length of the frame at `start`, when the buffer holds all of it.
    fn complete_frame(&self, start: usize) -> Result<Option<usize>, String> {
        let rest = &self.buffer[start..];
        if rest.len() < 12 {
            return Ok(None);
        }
        let total = be_u32(&rest[0..4]) as usize;
        let headers = be_u32(&rest[4..8]) as usize;
        if crc32fast::hash(&rest[0..8]) != be_u32(&rest[8..12]) {
            return Err("an event stream message's prelude fails its CRC".into());
        }
        if total < OVERHEAD || headers > total - OVERHEAD {
            return Err(format!(
                "an event stream message says it is {total} bytes with {headers} bytes of headers"
            ));
        }
        Ok((rest.len() >= total).then_some(total))
    }
}

/// One whole frame, its lengths already checked against each other.
fn decode(frame: &[u8]) -> Result<Frame, String> {
    let (body, crc) = frame.split_at(frame.len() - 4);
    if crc32fast::hash(body) != be_u32(crc) {
        return Err("an event stream message fails its CRC".into());
    }
    let headers_length = be_u32(&frame[4..8]) as usize;
    let headers = &body[12..12 + headers_length];
    Ok(Frame {
        headers: read_headers(headers)?,
        payload: body[12 + headers_length..].to_vec(),
    })
}

/// The headers block: each a name (one length byte), a type byte and a value. String values
/// are kept; the others are read past.
fn read_headers(mut bytes: &[u8]) -> Result<Vec<(String, String)>, String> {
    let truncated = || "an event stream message's headers are cut short".to_owned();
    let mut headers = Vec::new();
    while let Some((&name_length, rest)) = bytes.split_first() {
        let name_length = usize::from(name_length);
        let name = rest.get(..name_length).ok_or_else(truncated)?;
        let (&kind, rest) = rest[name_length..].split_first().ok_or_else(truncated)?;
        let fixed = match kind {
            0 | 1 => Some(0),
            2 => Some(1),
            3 => Some(2),
            4 => Some(4),
            5 | 8 => Some(8),
            9 => Some(16),
            6 | 7 => None,
            other => {
                return Err(format!(
                    "an event stream header has the unknown type {other}"
                ))
            }
        };
        bytes = match fixed {
            Some(size) => rest.get(size..).ok_or_else(truncated)?,
            None => {
                let length = rest
                    .get(..2)
                    .map(|l| usize::from(u16::from_be_bytes([l[0], l[1]])));
                let length = length.ok_or_else(truncated)?;
                let value = rest.get(2..2 + length).ok_or_else(truncated)?;
                if kind == 7 {
                    headers.push((
                        String::from_utf8_lossy(name).into_owned(),
                        String::from_utf8_lossy(value).into_owned(),
                    ));
                }
                &rest[2 + length..]
            }
        };
    }
    Ok(headers)
}

/// The total length a checked prelude gives.
fn length_of(frame: &[u8]) -> usize {
    be_u32(&frame[0..4]) as usize
}

fn be_u32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// An AWS event stream is a [`Framing`]: each message's payload as JSON ([`Frame::to_event`]).
impl Framing for FrameReader {
    fn feed(&mut self, bytes: &[u8]) -> (Vec<Result<serde_json::Value, String>>, Option<String>) {
        let (frames, error) = FrameReader::feed(self, bytes);
        (frames.iter().map(Frame::to_event).collect(), error)
    }

    fn is_mid_frame(&self) -> bool {
        FrameReader::is_mid_frame(self)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A frame as AWS writes it, with string headers and, first, one of every other type.
    pub(crate) fn encode(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
        let mut block = Vec::new();
        // A bool, a byte, a short, an int, a long, bytes, a timestamp and a uuid, to be read past.
        for (kind, value) in [
            (0u8, &[][..]),
            (2, &[7][..]),
            (3, &[0, 7][..]),
            (4, &[0, 0, 0, 7][..]),
            (5, &[0; 8][..]),
            (6, &[0, 2, 1, 2][..]),
            (8, &[0; 8][..]),
            (9, &[0; 16][..]),
        ] {
            block.extend_from_slice(&[1, b'x', kind]);
            block.extend_from_slice(value);
        }
        for (name, value) in headers {
            block.push(name.len() as u8);
            block.extend_from_slice(name.as_bytes());
            block.push(7);
            block.extend_from_slice(&(value.len() as u16).to_be_bytes());
            block.extend_from_slice(value.as_bytes());
        }
        let total = (OVERHEAD + block.len() + payload.len()) as u32;
        let mut frame = Vec::new();
        frame.extend_from_slice(&total.to_be_bytes());
        frame.extend_from_slice(&(block.len() as u32).to_be_bytes());
        frame.extend_from_slice(&crc32fast::hash(&frame).to_be_bytes());
        frame.extend_from_slice(&block);
        frame.extend_from_slice(payload);
        frame.extend_from_slice(&crc32fast::hash(&frame).to_be_bytes());
        frame
    }

    fn event(kind: &str, payload: &str) -> Vec<u8> {
        let headers = [(":message-type", "event"), (":event-type", kind)];
        encode(&headers, payload.as_bytes())
    }

    #[test]
    fn frames_are_read_whole_however_the_bytes_are_cut() {
        let mut stream = event("messageStart", r#"{"role":"assistant"}"#);
        stream.extend(event("messageStop", r#"{"stopReason":"end_turn"}"#));
        for cut in [1, 3, 12, 40, stream.len()] {
            let mut reader = FrameReader::default();
            let frames: Vec<Frame> = stream
                .chunks(cut)
                .flat_map(|piece| {
                    let (frames, error) = reader.feed(piece);
                    assert_eq!(error, None);
                    frames
                })
                .collect();
            assert_eq!(frames.len(), 2, "cut {cut}");
            assert_eq!(frames[0].header(":event-type"), Some("messageStart"));
            assert_eq!(
                frames[0].headers.len(),
                2,
                "only the string headers are kept"
            );
            assert_eq!(
                frames[1].to_event(),
                Ok(serde_json::json!({ "messageStop": { "stopReason": "end_turn" } }))
            );
            assert!(!reader.is_mid_frame());
        }
    }

    #[test]
    fn exceptions_and_errors_read_as_one_kind_of_event_with_their_type() {
        let exception = encode(
            &[
                (":message-type", "exception"),
                (":exception-type", "throttlingException"),
            ],
            br#"{"message":"slow down"}"#,
        );
        let error = encode(
            &[
                (":message-type", "error"),
                (":error-code", "InternalFailure"),
                (":error-message", "oops"),
            ],
            b"",
        );
        let mut reader = FrameReader::default();
        let (frames, _) = reader.feed(&[exception, error].concat());
        assert_eq!(
            frames[0].to_event(),
            Ok(
                serde_json::json!({ ":exception": { "type": "throttlingException", "message": "slow down" } })
            )
        );
        assert_eq!(
            frames[1].to_event(),
            Ok(
                serde_json::json!({ ":exception": { "type": "InternalFailure", "message": "oops" } })
            )
        );
    }

    #[test]
    fn a_damaged_frame_is_refused_not_misread() {
        let good = event("messageStart", r#"{"role":"assistant"}"#);
        // A payload byte changed: the message CRC fails.
        let mut damaged = good.clone();
        let last = damaged.len() - 6;
        damaged[last] ^= 1;
        let error = FrameReader::default().feed(&damaged).1.unwrap();
        assert!(error.contains("CRC"), "{error}");
        // A length changed: the prelude CRC fails before the length is believed.
        let mut damaged = good.clone();
        damaged[3] ^= 0x40;
        let error = FrameReader::default().feed(&damaged).1.unwrap();
        assert!(error.contains("prelude"), "{error}");
        // Lengths that contradict each other, with a prelude CRC that matches them.
        let mut lying = Vec::new();
        lying.extend_from_slice(&20u32.to_be_bytes());
        lying.extend_from_slice(&10u32.to_be_bytes());
        lying.extend_from_slice(&crc32fast::hash(&lying).to_be_bytes());
        let error = FrameReader::default().feed(&lying).1.unwrap();
        assert!(error.contains("20 bytes with 10"), "{error}");
        // Headers that run past their block.
        let mut block = vec![5, b'n', b'a', b'm', b'e', b'x', 7, 0, 9, b'v'];
        let total = (OVERHEAD + block.len()) as u32;
        let mut frame = total.to_be_bytes().to_vec();
        frame.extend_from_slice(&(block.len() as u32).to_be_bytes());
        frame.extend_from_slice(&crc32fast::hash(&frame).to_be_bytes());
        frame.append(&mut block);
        frame.extend_from_slice(&crc32fast::hash(&frame).to_be_bytes());
        let error = FrameReader::default().feed(&frame).1.unwrap();
        assert!(error.contains("cut short"), "{error}");
    }

    #[test]
    fn a_payload_that_is_not_json_is_an_error_not_an_empty_event() {
        let frame = event("messageStop", "stop");
        let (frames, _) = FrameReader::default().feed(&frame);
        let error = frames[0].to_event().unwrap_err();
        assert!(error.contains("(messageStop) is not JSON"), "{error}");
    }

    #[test]
    fn half_a_frame_waits_for_the_rest() {
        let frame = event("messageStart", "{}");
        let mut reader = FrameReader::default();
        assert_eq!(reader.feed(&frame[..frame.len() - 1]), (Vec::new(), None));
        assert!(reader.is_mid_frame());
        assert_eq!(reader.feed(&frame[frame.len() - 1..]).0.len(), 1);
    }

    /// Found by the `sse_assembler` fuzz target: the frames before a damaged one were lost
    /// when they arrived in the same piece as it, and given when they came in an earlier one.
    #[test]
    fn frames_before_a_damaged_one_are_given_however_the_bytes_are_cut() {
        let good = event("messageStart", "{}");
        let mut damaged = event("messageStop", "{}");
        let last = damaged.len() - 1;
        damaged[last] ^= 1;
        let stream = [good.clone(), damaged].concat();
        let (frames, error) = FrameReader::default().feed(&stream);
        assert_eq!(frames.len(), 1);
        assert!(error.is_some_and(|e| e.contains("CRC")));
        let mut reader = FrameReader::default();
        let (first, none) = reader.feed(&stream[..good.len()]);
        let (rest, error) = reader.feed(&stream[good.len()..]);
        assert_eq!((first.len(), none, rest.len()), (1, None, 0));
        assert!(error.is_some());
    }
}
