//! What the model is sent of a call's result: its text and attachments held to the run's cap
//! ([`RunOptions::max_result_bytes`](crate::RunOptions::max_result_bytes)), or the tool's own
//! when it is smaller (`ToolMetadata::max_result_bytes`), the text cut in the middle with a
//! line that says what was left out ([`ResultCap`]).

use tool_core::cap::ResultCap;
use tool_core::provider::CallResult;
use tool_core::Content;
use tool_model::Message;

use crate::kept::{KeptResults, READ_RESULT};
use crate::result::CallRecord;

/// Room under the cap for the line that gives a kept result's id.
const KEPT_NOTE_ROOM: usize = 200;

/// The message answering a call, its text and attachments together within `cap` (or the note
/// alone, when even that is longer). With `kept`, a text that is cut is kept whole there when
/// it fits, and a line at the end gives its id.
pub(super) fn result_message(
    record: &CallRecord,
    cap: ResultCap<'_>,
    kept: Option<&KeptResults>,
) -> Message {
    let mut message = Message::tool_result(&CallResult {
        call: record.call.clone(),
        result: record.result.clone(),
    });
    let Message::Tool {
        text, attachments, ..
    } = &mut message
    else {
        return message;
    };
    let Some(kept) = kept.filter(|_| record.call.name != READ_RESULT) else {
        cap.hold(text, attachments, Content::byte_len);
        return message;
    };
    let whole = text.clone();
    let room = ResultCap {
        max_bytes: cap.max_bytes.saturating_sub(KEPT_NOTE_ROOM),
        ..cap
    };
    let left_out = room.hold(text, attachments, Content::byte_len);
    if left_out.text_bytes > 0 {
        let bytes = whole.len();
        if let Some(id) = kept.keep(whole) {
            text.push_str(&format!(
                "\n[The whole text ({bytes} bytes) is kept as `{id}`: call {READ_RESULT} with \
                 id \"{id}\", an offset and a length to read any part of it.]"
            ));
        }
    }
    message
}

/// The cap on a call of `tool`: the run's, or the tool's own when it is smaller.
pub(super) fn cap_for(run_max: usize, tool_max: Option<usize>) -> ResultCap<'static> {
    ResultCap::narrowed_by(run_max, "RunOptions::max_result_bytes", tool_max)
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
            repaired: None,
        }
    }

    fn text_of(message: &Message) -> &str {
        match message {
            Message::Tool { text, .. } => text,
            other => panic!("not a tool result: {other:?}"),
        }
    }

    #[test]
    fn a_result_within_the_cap_is_sent_whole_and_an_error_is_held_too() {
        let message = result_message(
            &record(Ok(ToolOutput::text("short"))),
            cap_for(100, None),
            None,
        );
        assert_eq!(text_of(&message), "short");
        let wide = "é".repeat(5_000);
        let failed = record(Err(ToolError::failed("read", wide)));
        let message = result_message(&failed, cap_for(1_000, None), None);
        let text = text_of(&message);
        assert!(text.len() <= 1_000);
        assert!(text.contains("(RunOptions::max_result_bytes)"), "{text}");
    }

    #[test]
    fn a_tools_own_cap_narrows_the_runs_and_never_widens_it() {
        let long = record(Ok(ToolOutput::text("x".repeat(5_000))));
        let narrowed = result_message(&long, cap_for(4_000, Some(1_000)), None);
        assert!(text_of(&narrowed).len() <= 1_000);
        assert!(text_of(&narrowed).contains("cap of 1000 bytes (the tool's max_result_bytes)"));
        let widened = result_message(&long, cap_for(1_000, Some(100_000)), None);
        assert!(text_of(&widened).len() <= 1_000);
        assert!(text_of(&widened).contains("(RunOptions::max_result_bytes)"));
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
        let message = result_message(&record(Ok(output)), cap_for(1_000, None), None);
        let Message::Tool {
            text, attachments, ..
        } = &message
        else {
            panic!("{message:?}")
        };
        assert_eq!(attachments.len(), 1, "the small image is kept");
        assert!(text.starts_with("a chart and a photo"), "{text}");
        // Its data and its media type, as every string it would send.
        assert!(
            text.contains("1 attachment(s) of 3009 bytes left out"),
            "{text}"
        );
    }
}
