//! Results cut for the model, kept whole in the run behind a `read_result` tool the run
//! offers, so that the model can read any part ([`RunOptions::kept_result_bytes`]).
//!
//! [`RunOptions::kept_result_bytes`]: crate::RunOptions::kept_result_bytes

use std::sync::{Mutex, PoisonError};

use serde_json::{json, Value};
use tool_core::cap::{ceil_char, floor_char};
use tool_core::{ToolError, ToolMetadata, ToolOutput, ToolSpec};

/// The name of the tool a run offers to read kept results.
pub const READ_RESULT: &str = "read_result";

/// Room a part read back leaves under the run's cap, for its header line.
const HEADER_ROOM: usize = 200;

/// The results of one run kept whole, within a budget of bytes.
#[derive(Debug)]
pub(crate) struct KeptResults {
    budget: usize,
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    texts: Vec<String>,
    bytes: usize,
}

impl KeptResults {
    /// Nothing kept yet, at most `budget` bytes in all.
    pub(crate) fn new(budget: usize) -> Self {
        KeptResults {
            budget,
            kept: Mutex::default(),
        }
    }

    /// Keeps `text` when it fits in what is left of the budget, and returns its id.
    pub(crate) fn keep(&self, text: String) -> Option<String> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let bytes = kept.bytes.checked_add(text.len())?;
        if bytes > self.budget {
            return None;
        }
        kept.bytes = bytes;
        kept.texts.push(text);
        Some(format!("r{}", kept.texts.len()))
    }

    /// Answers a `read_result` call: `length` bytes of a kept result from `offset` (moved to
    /// the characters' edges), at most `max_length`, after a line saying which bytes they are.
    pub(crate) fn read(
        &self,
        arguments: &Value,
        max_length: usize,
    ) -> Result<ToolOutput, ToolError> {
        let invalid = |message: String| ToolError::failed(READ_RESULT, message);
        let id = arguments["id"].as_str().ok_or_else(|| {
            invalid("`id` must be the id of a kept result, such as \"r1\"".into())
        })?;
        let offset = match &arguments["offset"] {
            Value::Null => 0,
            value => value
                .as_u64()
                .ok_or_else(|| invalid("`offset` must be a whole number of bytes".into()))?,
        };
        let max_length = max_length.saturating_sub(HEADER_ROOM).max(1);
        let length = match &arguments["length"] {
            Value::Null => max_length as u64,
            value => value.as_u64().filter(|n| *n > 0).ok_or_else(|| {
                invalid("`length` must be a whole number of bytes, at least 1".into())
            })?,
        };
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let text = id
            .strip_prefix('r')
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| kept.texts.get(n.checked_sub(1)?))
            .ok_or_else(|| {
                invalid(format!(
                    "no kept result `{id}` in this run: the ids are r1 to r{}",
                    kept.texts.len()
                ))
            })?;
        let total = text.len();
        let start = floor_char(text, usize::try_from(offset).unwrap_or(usize::MAX));
        let length = usize::try_from(length)
            .unwrap_or(usize::MAX)
            .min(max_length);
        let end = floor_char(text, start.saturating_add(length));
        let end = if end == start && start < total {
            // One character at least, however wide.
            ceil_char(text, start + 1)
        } else {
            end
        };
        let next = match end < total {
            true => format!("; the next part starts at offset {end}"),
            false => "; this is the end".to_owned(),
        };
        Ok(ToolOutput::text(format!(
            "[{id}: bytes {start} to {end} of {total}{next}]\n{}",
            &text[start..end]
        )))
    }
}

/// The spec of `read_result`, reading at most `max_length` bytes a call.
pub(crate) fn read_result_spec(max_length: usize) -> ToolSpec {
    let longest = max_length.saturating_sub(HEADER_ROOM).max(1);
    ToolSpec {
        name: READ_RESULT.into(),
        description: format!(
            "Reads part of a tool result that was too long to send whole: the result's note \
             gives its id. Returns up to {longest} bytes from the offset, and where the next \
             part starts."
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "id": { "type": "string", "description": "The kept result's id, such as r1" },
                "offset": { "type": "integer", "minimum": 0, "description": "The first byte to read; 0 by default" },
                "length": { "type": "integer", "minimum": 1, "maximum": longest, "description": "How many bytes to read" },
            },
            "required": ["id"],
            "additionalProperties": false,
        }),
        output_schema: None,
        metadata: ToolMetadata {
            hints: tool_core::SafetyHints {
                read_only: Some(true),
                destructive: Some(false),
                idempotent: Some(true),
                open_world: Some(false),
            },
            ..ToolMetadata::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_result_is_read_in_parts_to_its_end() {
        let kept = KeptResults::new(1_000);
        let id = kept.keep("0123456789".repeat(10)).unwrap();
        assert_eq!(id, "r1");
        let first = kept
            .read(&json!({ "id": "r1", "length": 30 }), 10_000)
            .unwrap();
        assert_eq!(
            first.to_text(),
            "[r1: bytes 0 to 30 of 100; the next part starts at offset 30]\n012345678901234567890123456789"
        );
        let last = kept
            .read(&json!({ "id": "r1", "offset": 90 }), 10_000)
            .unwrap();
        assert_eq!(
            last.to_text(),
            "[r1: bytes 90 to 100 of 100; this is the end]\n0123456789"
        );
    }

    #[test]
    fn the_budget_holds_and_bad_ids_and_offsets_are_told() {
        let kept = KeptResults::new(15);
        assert_eq!(kept.keep("x".repeat(10)).as_deref(), Some("r1"));
        assert_eq!(kept.keep("y".repeat(10)), None, "over the budget");
        let unknown = kept.read(&json!({ "id": "r7" }), 10_000).unwrap_err();
        assert!(
            unknown.to_string().contains("the ids are r1 to r1"),
            "{unknown}"
        );
        let bad = kept
            .read(&json!({ "id": "r1", "offset": -1 }), 10_000)
            .unwrap_err();
        assert!(bad.to_string().contains("`offset`"), "{bad}");
        let past = kept
            .read(&json!({ "id": "r1", "offset": 99 }), 10_000)
            .unwrap();
        assert_eq!(
            past.to_text(),
            "[r1: bytes 10 to 10 of 10; this is the end]\n"
        );
    }

    #[test]
    fn a_part_never_splits_a_character_and_stays_under_the_cap() {
        let kept = KeptResults::new(100_000);
        kept.keep("é".repeat(1_000)).unwrap();
        let part = kept
            .read(&json!({ "id": "r1", "offset": 1, "length": 5 }), 10_000)
            .unwrap();
        assert_eq!(
            part.to_text(),
            "[r1: bytes 0 to 4 of 2000; the next part starts at offset 4]\néé"
        );
        let most = kept
            .read(&json!({ "id": "r1", "length": 1_000_000 }), 1_000)
            .unwrap();
        assert!(most.to_text().len() <= 1_000, "{}", most.to_text().len());
    }
}
