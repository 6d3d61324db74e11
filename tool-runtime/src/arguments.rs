use serde_json::Value;
use tool_core::{ToolError, Violation};

/// What `Executor::execute` accepts as arguments: a JSON value, or JSON text as a model sends it.
pub trait IntoArguments {
    /// The arguments as a value, refused when larger than `limit` bytes.
    fn into_arguments(self, tool: &str, limit: usize) -> Result<Value, ToolError>;
}

impl IntoArguments for Value {
    fn into_arguments(self, tool: &str, limit: usize) -> Result<Value, ToolError> {
        match encoded_size_over(&self, limit) {
            Some(size) => Err(too_large(tool, size, limit)),
            None => Ok(self),
        }
    }
}

impl IntoArguments for &Value {
    fn into_arguments(self, tool: &str, limit: usize) -> Result<Value, ToolError> {
        match encoded_size_over(self, limit) {
            Some(size) => Err(too_large(tool, size, limit)),
            None => Ok(self.clone()),
        }
    }
}

impl IntoArguments for &str {
    fn into_arguments(self, tool: &str, limit: usize) -> Result<Value, ToolError> {
        if self.len() > limit {
            return Err(too_large(tool, self.len(), limit));
        }
        let text = if self.trim().is_empty() { "{}" } else { self };
        serde_json::from_str(text).map_err(|e| ToolError::InvalidArguments {
            tool: tool.to_owned(),
            violations: vec![Violation {
                pointer: String::new(),
                message: format!("the arguments are not valid JSON: {e}"),
            }],
        })
    }
}

impl IntoArguments for String {
    fn into_arguments(self, tool: &str, limit: usize) -> Result<Value, ToolError> {
        self.as_str().into_arguments(tool, limit)
    }
}

fn too_large(tool: &str, size: usize, limit: usize) -> ToolError {
    ToolError::ArgumentsTooLarge {
        tool: tool.to_owned(),
        size,
        limit,
    }
}

/// The size of `value` as compact JSON, when it is over `limit`; `None` when it fits.
///
/// Counts without serializing and stops as soon as the limit is passed, so a fitting value costs
/// one walk and a huge one costs no more than `limit` bytes' worth of walking. String escapes are
/// counted as one byte, so the count can be low by the number of escaped characters.
pub(crate) fn encoded_size_over(value: &Value, limit: usize) -> Option<usize> {
    let mut size = 0usize;
    add_size(value, &mut size, limit).then_some(size)
}

/// Adds `value`'s size to `size`; true as soon as the total passes `limit`.
fn add_size(value: &Value, size: &mut usize, limit: usize) -> bool {
    *size += match value {
        Value::Null => 4,
        Value::Bool(b) => 4 + usize::from(!b),
        Value::Number(n) => number_len(n),
        Value::String(s) => s.len() + 2,
        Value::Array(items) => {
            *size += 2 + items.len().saturating_sub(1);
            return *size > limit || items.iter().any(|item| add_size(item, size, limit));
        }
        Value::Object(map) => {
            *size += 2 + map.len().saturating_sub(1);
            return *size > limit
                || map.iter().any(|(key, item)| {
                    *size += key.len() + 3;
                    add_size(item, size, limit)
                });
        }
    };
    *size > limit
}

fn number_len(n: &serde_json::Number) -> usize {
    if let Some(i) = n.as_i64() {
        i.unsigned_abs()
            .checked_ilog10()
            .map_or(1, |d| d as usize + 1)
            + usize::from(i < 0)
    } else if let Some(u) = n.as_u64() {
        u.checked_ilog10().map_or(1, |d| d as usize + 1)
    } else {
        n.to_string().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn size_estimate_matches_compact_json_without_escapes() {
        for value in [
            json!({}),
            json!({"a": 1, "bb": [true, false, null, -12, 3.5], "c": {"d": "text"}}),
            json!([]),
            json!([0, 10, 99, 100, u64::MAX, i64::MIN]),
        ] {
            let real = serde_json::to_string(&value).unwrap().len();
            assert_eq!(encoded_size_over(&value, real - 1), Some(real), "{value}");
            assert_eq!(encoded_size_over(&value, real), None, "{value}");
        }
    }

    #[test]
    fn refuses_text_over_the_limit_and_bad_json() {
        let err = "[1,2,3]".into_arguments("t", 3).unwrap_err();
        assert!(matches!(
            err,
            ToolError::ArgumentsTooLarge {
                size: 7,
                limit: 3,
                ..
            }
        ));
        let err = "{oops".into_arguments("t", 100).unwrap_err();
        assert!(err.to_string().contains("not valid JSON"), "{err}");
        assert_eq!("  ".into_arguments("t", 100).unwrap(), json!({}));
    }
}
