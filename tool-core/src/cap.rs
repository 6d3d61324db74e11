//! Results held to a size: the text cut in the middle with a line that says what was left out,
//! attachments (attachments, audio, files, resources) kept while they fit and the others named. The agent loop and the MCP server both
//! hold results this way, each naming its own setting.

use crate::{Content, ToolOutput};

/// A cap on the bytes of one result, and the setting that sets it (named in every note, so a
/// reader knows what to raise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultCap<'a> {
    /// The most bytes of text and attachments together.
    pub max_bytes: usize,
    /// Where the cap is set, such as `RunOptions::max_result_bytes`.
    pub setting: &'a str,
}

/// What [`ResultCap::hold`] left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LeftOut {
    /// Bytes of text cut from the middle.
    pub text_bytes: usize,
    /// Lines of text cut from the middle (line ends counted).
    pub text_lines: usize,
    /// Attachments (attachments, audio, files, resources) left out.
    pub attachments: usize,
    /// Their bytes.
    pub attachment_bytes: usize,
    /// Whether the structured result was left out ([`ResultCap::hold_output`]).
    pub structured: bool,
}

impl LeftOut {
    /// Whether nothing was left out.
    pub fn is_nothing(&self) -> bool {
        *self == LeftOut::default()
    }
}

/// About how many bytes of text one token is, for the estimates in the notes: 4 for English
/// prose and code with the providers' tokenizers (fewer for other scripts).
pub const BYTES_PER_TOKEN: usize = 4;

impl<'a> ResultCap<'a> {
    /// The cap `max_bytes` that `setting` sets, or a tool's own `tool_max` when it is smaller:
    /// a tool's cap narrows the run's or the server's, never widens it.
    pub fn narrowed_by(max_bytes: usize, setting: &'a str, tool_max: Option<usize>) -> Self {
        match tool_max {
            Some(max) if max < max_bytes => ResultCap {
                max_bytes: max,
                setting: "the tool's max_result_bytes",
            },
            _ => ResultCap { max_bytes, setting },
        }
    }

    /// Holds `text` and `attachments` (each sized by `size`) to the cap together. Attachments go first:
    /// each is kept while it fits beside the text, the others are removed and named in a line
    /// at the end of the text; then the text keeps its head and tail around a line that says
    /// how much was left out. When even that line does not fit, the text is the line alone.
    pub fn hold<T>(
        &self,
        text: &mut String,
        attachments: &mut Vec<T>,
        size: impl Fn(&T) -> usize,
    ) -> LeftOut {
        let max_bytes = self.max_bytes;
        let attachment_bytes: usize = attachments.iter().map(&size).sum();
        if text.len().saturating_add(attachment_bytes) <= max_bytes {
            return LeftOut::default();
        }
        let mut left_out = LeftOut::default();
        let mut room = max_bytes.saturating_sub(text.len().min(max_bytes));
        attachments.retain(|attachment| {
            let bytes = size(attachment);
            let fits = bytes <= room;
            if fits {
                room -= bytes;
            } else {
                left_out.attachments += 1;
                left_out.attachment_bytes += bytes;
            }
            fits
        });
        let mut note = String::new();
        if left_out.attachments > 0 {
            note = format!(
                "\n[{} attachment(s) of {} bytes left out: the result is over the cap of {max_bytes} \
                 bytes ({})]",
                left_out.attachments, left_out.attachment_bytes, self.setting
            );
        }
        let kept_attachments: usize = attachments.iter().map(&size).sum();
        let room = max_bytes
            .saturating_sub(kept_attachments)
            .saturating_sub(note.len());
        let (cut, bytes, lines) = self.cut_middle(text, room);
        left_out.text_bytes = bytes;
        left_out.text_lines = lines;
        *text = cut + &note;
        left_out
    }

    /// A tool's output within the cap, counting its text, its attachments and its structured
    /// result as JSON. Over it, the structured result is left out (JSON cut short is not JSON)
    /// and its text stands for it when there is no other; the text blocks become one, held
    /// with the attachments by [`ResultCap::hold`].
    pub fn hold_output(&self, output: ToolOutput) -> (ToolOutput, LeftOut) {
        let sizes = output.content.iter().map(Content::byte_len);
        let structured_bytes = match &output.structured {
            Some(value) => serde_json::to_vec(value).map_or(usize::MAX, |json| json.len()),
            None => 0,
        };
        let total = sizes.fold(structured_bytes, usize::saturating_add);
        if total <= self.max_bytes {
            return (output, LeftOut::default());
        }
        let mut text = output.to_text();
        let structured = output.structured.is_some();
        if structured
            && output
                .content
                .iter()
                .any(|c| matches!(c, Content::Text { .. }))
        {
            text.push_str("\n[the structured result is left out: it is over the cap]");
        }
        let mut attachments: Vec<Content> = output
            .content
            .into_iter()
            .filter(|block| !matches!(block, Content::Text { .. }))
            .collect();
        let mut left_out = self.hold(&mut text, &mut attachments, Content::byte_len);
        left_out.structured = structured;
        let mut content = vec![Content::Text { text }];
        content.extend(attachments);
        let held = ToolOutput {
            content,
            structured: None,
            is_error: output.is_error,
        };
        (held, left_out)
    }

    /// `text` within `room` bytes: whole when it fits, else its head and its tail (on line
    /// ends where one is near) around a line that says how much was left out; with the bytes
    /// and lines left out.
    fn cut_middle(&self, text: &str, room: usize) -> (String, usize, usize) {
        if text.len() <= room {
            return (text.to_owned(), 0, 0);
        }
        let marker = |bytes: usize, lines: usize| {
            format!(
                "\n[... {bytes} bytes ({lines} lines, about {} tokens) left out: the result is \
                 over the cap of {} bytes ({}) ...]\n",
                bytes.div_ceil(BYTES_PER_TOKEN),
                self.max_bytes,
                self.setting
            )
        };
        // The marker's length, with room for the figures to grow.
        let estimate = text.len() - room.min(text.len());
        let marker_len = marker(estimate, estimate).len() + 8;
        let Some(keep) = room.checked_sub(marker_len) else {
            let lines = text.matches('\n').count();
            let alone = marker(text.len(), lines).trim().to_owned();
            return (alone, text.len(), lines);
        };
        let head_len = keep * 2 / 3;
        let tail_len = keep - head_len;
        let mut head_end = floor_char(text, head_len);
        if let Some(newline) = text[..head_end].rfind('\n') {
            // A line end in the last third of the head.
            if newline >= head_end * 2 / 3 {
                head_end = newline + 1;
            }
        }
        let mut tail_start = ceil_char(text, text.len() - tail_len);
        if let Some(newline) = text[tail_start..].find('\n') {
            if newline <= tail_len / 3 {
                tail_start += newline + 1;
            }
        }
        let tail_start = tail_start.max(head_end);
        let cut = &text[head_end..tail_start];
        let lines = cut.matches('\n').count();
        let held = format!(
            "{}{}{}",
            &text[..head_end],
            marker(cut.len(), lines),
            &text[tail_start..]
        );
        (held, cut.len(), lines)
    }
}

/// The largest char boundary of `text` at or before `at` (at most its length).
pub fn floor_char(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest char boundary of `text` at or after `at` (at most its length).
pub fn ceil_char(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: &str = "RunOptions::max_result_bytes";

    fn held(text: &str, max_bytes: usize) -> (String, LeftOut) {
        let mut text = text.to_owned();
        let mut attachments: Vec<usize> = Vec::new();
        let cap = ResultCap {
            max_bytes,
            setting: CAP,
        };
        let left_out = cap.hold(&mut text, &mut attachments, |n| *n);
        (text, left_out)
    }

    #[test]
    fn a_text_within_the_cap_is_whole() {
        assert_eq!(held("short", 100), ("short".to_owned(), LeftOut::default()));
    }

    #[test]
    fn a_long_text_keeps_its_head_and_tail_and_says_what_was_left_out() {
        let lines: Vec<String> = (0..10_000).map(|i| format!("line {i}")).collect();
        let whole = lines.join("\n");
        let (text, left_out) = held(&whole, 2_000);
        assert!(text.len() <= 2_000, "{} bytes", text.len());
        assert!(text.starts_with("line 0\nline 1\n"), "{text}");
        assert!(text.ends_with("line 9999"), "{text}");
        assert!(
            text.contains(
                "left out: the result is over the cap of 2000 bytes (RunOptions::max_result_bytes)"
            ),
            "{text}"
        );
        // The head ends and the tail starts on a line, and the figures add up.
        let (head, rest) = text.split_once("\n[... ").unwrap();
        let (marker, tail) = rest.split_once(" ...]\n").unwrap();
        assert!(head.ends_with('\n') && tail.starts_with("line "), "{text}");
        let bytes: usize = marker.split(' ').next().unwrap().parse().unwrap();
        assert_eq!(head.len() + bytes + tail.len(), whole.len(), "{marker}");
        assert_eq!(left_out.text_bytes, bytes);
        let tokens = format!("about {} tokens", bytes.div_ceil(4));
        assert!(marker.contains(&tokens), "{marker}");
    }

    #[test]
    fn the_cut_never_splits_a_character_and_a_tiny_cap_leaves_the_line_alone() {
        let (text, _) = held(&"é".repeat(5_000), 1_000);
        assert!(text.len() <= 1_000);
        assert!(text.contains("left out"), "{text}");
        let (tiny, left_out) = held(&"x".repeat(500), 20);
        assert!(tiny.starts_with("[... 500 bytes"), "{tiny}");
        assert_eq!(left_out.text_bytes, 500);
    }

    #[test]
    fn an_output_over_the_cap_loses_its_structured_result_and_keeps_its_text_cut() {
        let cap = ResultCap {
            max_bytes: 500,
            setting: "McpServer::with_max_result_bytes",
        };
        let small = ToolOutput::json(serde_json::json!({ "rows": [1, 2, 3] }));
        assert_eq!(cap.hold_output(small.clone()), (small, LeftOut::default()));
        let rows: Vec<u32> = (0..1_000).collect();
        let big = ToolOutput::json(serde_json::json!({ "rows": rows }));
        let (held, left_out) = cap.hold_output(big);
        assert!(
            left_out.structured && left_out.text_bytes > 0,
            "{left_out:?}"
        );
        assert_eq!(held.structured, None);
        let text = held.to_text();
        assert!(
            text.len() <= 500 && text.starts_with(r#"{"rows":[0,1,2"#),
            "{text}"
        );
        assert!(
            text.contains("(McpServer::with_max_result_bytes)"),
            "{text}"
        );
        // Beside text blocks, the structured result is said to be left out.
        let both =
            ToolOutput::json(serde_json::json!({ "rows": rows })).with_content(Content::Text {
                text: "1,000 rows".into(),
            });
        let (held, _) = cap.hold_output(both);
        assert_eq!(
            held.to_text(),
            "1,000 rows\n[the structured result is left out: it is over the cap]"
        );
    }

    #[test]
    fn images_over_the_cap_are_left_out_and_named() {
        let mut text = "a chart and a photo".to_owned();
        let mut attachments = vec![300usize, 3_000];
        let cap = ResultCap {
            max_bytes: 1_000,
            setting: CAP,
        };
        let left_out = cap.hold(&mut text, &mut attachments, |n| *n);
        assert_eq!(attachments, vec![300], "the small image is kept");
        assert!(text.starts_with("a chart and a photo"), "{text}");
        assert!(
            text.contains("1 attachment(s) of 3000 bytes left out"),
            "{text}"
        );
        assert_eq!(
            (left_out.attachments, left_out.attachment_bytes),
            (1, 3_000)
        );
    }
}
