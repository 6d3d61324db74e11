//! A stdio server's answers, held to the size one message may have. rmcp drops a line past its
//! cap (16 MiB) and reads on, so the request it answered would wait for ever (or until its
//! time limit). [`FrameCap`] reads the server's output first: a line past the cap is dropped
//! here, and in its place the request it answered (its `id`, read from the line's start) gets
//! an error that says how large the answer was and what the cap is.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The most one message from a stdio server may have: rmcp's own cap on a line.
pub(crate) const MAX_FRAME_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// How much of a line's start is searched for its `id`.
const ID_WINDOW: usize = 4096;

/// `inner`'s lines, each past `max` bytes replaced by an error answer to its request.
pub(crate) struct FrameCap<R> {
    inner: R,
    max: usize,
    /// The line being read, up to `max` bytes.
    line: Vec<u8>,
    /// The start of a line past the cap (for its `id`), and its size so far, while the rest
    /// of it is read and dropped.
    oversized: Option<(Vec<u8>, usize)>,
    /// Lines ready to be read, and how much of them has been.
    ready: Vec<u8>,
    given: usize,
    ended: bool,
}

impl<R> FrameCap<R> {
    pub(crate) fn new(inner: R, max: usize) -> Self {
        FrameCap {
            inner,
            max,
            line: Vec::new(),
            oversized: None,
            ready: Vec::new(),
            given: 0,
            ended: false,
        }
    }

    /// Takes in what the server wrote.
    fn take_in(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|&b| b == b'\n');
            let (piece, rest) = match newline {
                Some(at) => (&bytes[..at], &bytes[at + 1..]),
                None => (bytes, &[][..]),
            };
            bytes = rest;
            match &mut self.oversized {
                Some((_, size)) => *size = size.saturating_add(piece.len()),
                None if self.line.len() + piece.len() > self.max => {
                    let mut start = std::mem::take(&mut self.line);
                    let size = start.len() + piece.len();
                    start.extend_from_slice(&piece[..piece.len().min(ID_WINDOW)]);
                    start.truncate(ID_WINDOW);
                    self.oversized = Some((start, size));
                }
                None => self.line.extend_from_slice(piece),
            }
            if newline.is_some() {
                self.end_line();
            }
        }
    }

    /// A line is whole: passed on, or, past the cap, answered with an error.
    fn end_line(&mut self) {
        match self.oversized.take() {
            None => {
                self.ready.append(&mut self.line);
                self.ready.push(b'\n');
            }
            Some((start, size)) => match id_of(&start) {
                Some(id) => {
                    let message = format!(
                        "the MCP server's answer has {size} bytes, more than the {} one \
                         message over stdio may have; it was dropped",
                        self.max
                    );
                    let error = serde_json::json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "error": { "code": -32603, "message": message },
                    });
                    self.ready.extend_from_slice(error.to_string().as_bytes());
                    self.ready.push(b'\n');
                }
                None => tracing::warn!(
                    bytes = size,
                    "an MCP server wrote a message larger than {} bytes that answers no request: dropped",
                    self.max
                ),
            },
        }
    }
}

/// The `id` of a JSON-RPC message from the start of its text: a number or a string, the value
/// of the first `"id"` key found outside a string.
fn id_of(start: &[u8]) -> Option<serde_json::Value> {
    let text = String::from_utf8_lossy(start);
    let mut in_string = false;
    let mut escaped = false;
    let bytes = text.as_bytes();
    for (at, &b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        if b != b'"' {
            continue;
        }
        if text[at..].starts_with("\"id\"") {
            let after = text[at + 4..].trim_start();
            let value = after.strip_prefix(':')?.trim_start();
            let mut stream =
                serde_json::Deserializer::from_str(value).into_iter::<serde_json::Value>();
            return match stream.next()? {
                Ok(id @ (serde_json::Value::Number(_) | serde_json::Value::String(_))) => Some(id),
                _ => None,
            };
        }
        in_string = true;
    }
    None
}

impl<R: AsyncRead + Unpin> AsyncRead for FrameCap<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.given < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.given);
                buf.put_slice(&this.ready[this.given..this.given + n]);
                this.given += n;
                if this.given == this.ready.len() {
                    this.ready.clear();
                    this.given = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 16 * 1024];
            let mut read = ReadBuf::new(&mut chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) if read.filled().is_empty() => {
                    // The end: a last line without its newline goes on as it is.
                    this.ended = true;
                    if this.oversized.is_none() {
                        let mut rest = std::mem::take(&mut this.line);
                        this.ready.append(&mut rest);
                    }
                }
                Poll::Ready(Ok(())) => {
                    let filled = read.filled().to_vec();
                    this.take_in(&filled);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    async fn through(input: &[u8], max: usize) -> String {
        let mut capped = FrameCap::new(input, max);
        let mut out = String::new();
        capped.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn lines_within_the_cap_pass_and_one_past_it_answers_its_request() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{{\"text\":\"{}\"}}}}\n",
            "x".repeat(100)
        );
        let input = format!("{{\"id\":1}}\n{big}{{\"id\":\"b\"}}\nlast");
        let out = through(input.as_bytes(), 50).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "{\"id\":1}");
        let error: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(error["id"], 7);
        let message = error["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("has {} bytes", big.len() - 1)),
            "{message}"
        );
        assert!(message.contains("more than the 50"), "{message}");
        assert_eq!(lines[2], "{\"id\":\"b\"}");
        assert_eq!(lines[3], "last");
    }

    #[test]
    fn the_id_is_read_outside_strings() {
        let id = |text: &str| id_of(text.as_bytes());
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":12,"result":{}}"#),
            Some(12.into())
        );
        assert_eq!(id(r#"{"note":"\"id\": 3","id":"r-1"}"#), Some("r-1".into()));
        assert_eq!(id(r#"{"method":"notifications/progress"}"#), None);
        assert_eq!(id(r#"{"id":null}"#), None);
    }
}
