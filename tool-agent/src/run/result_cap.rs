//! What the model is sent of a call's result: its text and images held to the run's cap
//! ([`RunOptions::max_result_bytes`](crate::RunOptions::max_result_bytes)), the text cut in the
//! middle with a line that says what was left out.

use tool_core::provider::CallResult;
use tool_model::Message;

use crate::result::CallRecord;

/// The message answering a call, its text and images together at most `max_bytes` (or the
/// note alone, when even that is longer).
pub(super) fn result_message(record: &CallRecord, max_bytes: usize) -> Message {
    let message = Message::tool_result(&CallResult {
        call: record.call.clone(),
        result: record.result.clone(),
    });
    held_to(message, max_bytes)
}

/// `message` (a tool result) with its text and images within `max_bytes`.
fn held_to(mut message: Message, max_bytes: usize) -> Message {
    let Message::Tool { text, images, .. } = &mut message else {
        return message;
    };
    let image_bytes: usize = images.iter().map(|image| image.data.len()).sum();
    if text.len().saturating_add(image_bytes) <= max_bytes {
        return message;
    }
    // Images go first: each one kept while it fits beside the text, the rest named.
    let mut left = max_bytes.saturating_sub(text.len().min(max_bytes));
    let mut dropped = 0usize;
    let mut dropped_bytes = 0usize;
    images.retain(|image| {
        let fits = image.data.len() <= left;
        if fits {
            left -= image.data.len();
        } else {
            dropped += 1;
            dropped_bytes += image.data.len();
        }
        fits
    });
    let mut note = String::new();
    if dropped > 0 {
        note = format!(
            "\n[{dropped} image(s) of {dropped_bytes} bytes left out: the result is over the run's cap of {max_bytes} bytes (RunOptions::max_result_bytes)]"
        );
    }
    let kept_images: usize = images.iter().map(|image| image.data.len()).sum();
    let room = max_bytes
        .saturating_sub(kept_images)
        .saturating_sub(note.len());
    *text = cut_middle(text, room, max_bytes) + &note;
    message
}

/// `text` within `room` bytes: whole when it fits, else its head and its tail (on line ends
/// where one is near) around a line that says how much was left out. When the line itself does
/// not fit, the line alone.
fn cut_middle(text: &str, room: usize, cap: usize) -> String {
    if text.len() <= room {
        return text.to_owned();
    }
    let omitted_estimate = text.len() - room.min(text.len());
    let marker = |bytes: usize, lines: usize| {
        format!(
            "\n[... {bytes} bytes ({lines} lines) left out: the result is over the run's cap of {cap} bytes (RunOptions::max_result_bytes) ...]\n"
        )
    };
    // The marker's length, with room for the figures to grow.
    let marker_len = marker(omitted_estimate, omitted_estimate).len() + 4;
    let Some(keep) = room.checked_sub(marker_len) else {
        return marker(text.len(), text.lines().count()).trim().to_owned();
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
    let left_out = &text[head_end..tail_start];
    let lines = left_out.matches('\n').count();
    format!(
        "{}{}{}",
        &text[..head_end],
        marker(left_out.len(), lines),
        &text[tail_start..]
    )
}

/// The largest char boundary at or before `at`.
fn floor_char(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest char boundary at or after `at`.
fn ceil_char(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_core::{Content, ToolCall, ToolError, ToolOutput};

    fn record(result: Result<ToolOutput, ToolError>) -> CallRecord {
        CallRecord {
            call: ToolCall::new("c1", "read", serde_json::json!({})),
            result,
            elapsed: Default::default(),
        }
    }

    fn text_of(message: &Message) -> &str {
        match message {
            Message::Tool { text, .. } => text,
            other => panic!("not a tool result: {other:?}"),
        }
    }

    #[test]
    fn a_result_within_the_cap_is_sent_whole() {
        let message = result_message(&record(Ok(ToolOutput::text("short"))), 100);
        assert_eq!(text_of(&message), "short");
    }

    #[test]
    fn a_long_result_keeps_its_head_and_tail_and_says_what_was_left_out() {
        let lines: Vec<String> = (0..10_000).map(|i| format!("line {i}")).collect();
        let whole = lines.join("\n");
        let message = result_message(&record(Ok(ToolOutput::text(whole.clone()))), 2_000);
        let text = text_of(&message);
        assert!(text.len() <= 2_000, "{} bytes", text.len());
        assert!(text.starts_with("line 0\nline 1\n"), "{text}");
        assert!(text.ends_with("line 9999"), "{text}");
        assert!(text.contains("left out: the result is over the run's cap of 2000 bytes (RunOptions::max_result_bytes)"), "{text}");
        // The head ends and the tail starts on a line, and the figures add up.
        let (head, rest) = text.split_once("\n[... ").unwrap();
        let (marker, tail) = rest.split_once(" ...]\n").unwrap();
        assert!(head.ends_with('\n') && tail.starts_with("line "), "{text}");
        let bytes: usize = marker.split(' ').next().unwrap().parse().unwrap();
        assert_eq!(head.len() + bytes + tail.len(), whole.len(), "{marker}");
    }

    #[test]
    fn the_cut_never_splits_a_character_and_an_error_is_held_too() {
        let wide = "é".repeat(5_000);
        let message = result_message(&record(Err(ToolError::failed("read", wide))), 1_000);
        let text = text_of(&message);
        assert!(text.len() <= 1_000);
        assert!(text.contains("left out"), "{text}");
        let tiny = result_message(&record(Ok(ToolOutput::text("x".repeat(500)))), 20);
        assert!(
            text_of(&tiny).starts_with("[... 500 bytes"),
            "{}",
            text_of(&tiny)
        );
    }

    #[test]
    fn images_over_the_cap_are_left_out_and_named() {
        let output = ToolOutput {
            content: vec![
                Content::Text {
                    text: "a chart and a photo".into(),
                },
                Content::Image {
                    data: "A".repeat(300),
                    mime_type: "image/png".into(),
                },
                Content::Image {
                    data: "B".repeat(3_000),
                    mime_type: "image/png".into(),
                },
            ],
            ..ToolOutput::empty()
        };
        let message = result_message(&record(Ok(output)), 1_000);
        let Message::Tool { text, images, .. } = &message else {
            panic!("{message:?}")
        };
        assert_eq!(images.len(), 1, "the small image is kept");
        assert!(text.starts_with("a chart and a photo"), "{text}");
        assert!(text.contains("1 image(s) of 3000 bytes left out"), "{text}");
    }
}
