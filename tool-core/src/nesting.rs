//! How deeply JSON nests, measured without recursion: the guard in front of every recursive walk
//! of a value that came from outside (a schema, a provider's response).

use serde_json::Value;

/// How deep arrays and objects may nest, by default, in JSON that a recursive walk reads: fewer
/// than 128 levels, as `serde_json` allows in text. Anything parsed from text is within it.
pub const DEFAULT_NESTING_LIMIT: usize = 128;

/// Whether `value` nests fewer than `limit` levels of arrays and objects (the value itself
/// counts as one when it is an array or object). Walks with a stack of its own, so a value of
/// any depth is measured without overflowing the thread's stack; stops at the first level too
/// deep.
pub(crate) fn nests_within(value: &Value, limit: usize) -> bool {
    let mut pending: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((value, depth)) = pending.pop() {
        let children: &mut dyn Iterator<Item = &Value> = match value {
            Value::Array(items) => &mut items.iter(),
            Value::Object(map) => &mut map.values(),
            _ => continue,
        };
        let depth = depth + 1;
        if depth >= limit {
            return false;
        }
        pending.extend(children.map(|child| (child, depth)));
    }
    true
}

/// Drops a value without recursion, level by level: `Value`'s own drop recurses, and a value
/// nested deeper than the stack allows (one built in code; text cannot nest so deep) would
/// overflow it. Use it for a value refused for its depth.
pub fn dismantle(value: Value) {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `depth` arrays nested in one another.
    fn nested(depth: usize) -> Value {
        let mut value = json!([]);
        for _ in 1..depth {
            value = Value::Array(vec![value]);
        }
        value
    }

    #[test]
    fn counts_levels_as_serde_json_does_for_text() {
        assert!(nests_within(&json!(1), 1));
        assert!(nests_within(&nested(127), DEFAULT_NESTING_LIMIT));
        assert!(!nests_within(&nested(128), DEFAULT_NESTING_LIMIT));
        let text = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert!(serde_json::from_str::<Value>(&text).is_err());
        let text = format!("{}{}", "[".repeat(127), "]".repeat(127));
        assert!(serde_json::from_str::<Value>(&text).is_ok());
    }

    #[test]
    fn measures_a_value_far_deeper_than_the_stack_allows() {
        let deep = nested(100_000);
        assert!(!nests_within(&deep, DEFAULT_NESTING_LIMIT));
        dismantle(Value::Array(vec![deep]));
    }
}
