//! AWS event stream messages written as Bedrock's `ConverseStream` sends them, for the mock
//! server: each event of a golden `stream-*.jsonl` file (`{"<event>": payload}` per line) as one
//! message with `:event-type`, `:content-type` and `:message-type` headers. `sdk_types.rs` has
//! botocore read these bytes back, so the encoding is checked by AWS's own parser.

use serde_json::Value;

/// The content type of an AWS event stream.
pub const CONTENT_TYPE: &str = "application/vnd.amazon.eventstream";

/// The events of a `.jsonl` text as the bytes of an event stream.
pub fn encode_lines(lines: &str) -> Vec<u8> {
    lines
        .lines()
        .filter(|line| !line.trim().is_empty())
        .flat_map(|line| {
            let event: Value = serde_json::from_str(line).expect("an event is JSON");
            let (name, payload) = event
                .as_object()
                .and_then(|o| o.iter().next())
                .expect("an event is {\"<type>\": payload}");
            message(
                &[
                    (":event-type", name.as_str()),
                    (":content-type", "application/json"),
                    (":message-type", "event"),
                ],
                payload.to_string().as_bytes(),
            )
        })
        .collect()
}

/// One message: prelude (total length, headers length, CRC-32 of both), string headers,
/// payload, CRC-32 of all before it; integers big-endian.
pub fn message(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut block = Vec::new();
    for (name, value) in headers {
        block.push(u8::try_from(name.len()).expect("a short header name"));
        block.extend_from_slice(name.as_bytes());
        block.push(7); // a string
        let length = u16::try_from(value.len()).expect("a short header value");
        block.extend_from_slice(&length.to_be_bytes());
        block.extend_from_slice(value.as_bytes());
    }
    let total = u32::try_from(16 + block.len() + payload.len()).expect("a small message");
    let block_length = u32::try_from(block.len()).expect("small headers");
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&block_length.to_be_bytes());
    out.extend_from_slice(&crc32fast::hash(&out).to_be_bytes());
    out.extend_from_slice(&block);
    out.extend_from_slice(payload);
    out.extend_from_slice(&crc32fast::hash(&out).to_be_bytes());
    out
}
