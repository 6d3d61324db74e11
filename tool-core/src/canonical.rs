//! JSON text with every object's keys sorted: one text for values that differ only in key
//! order, for what compares or seals values (a call's identity, a run state's seal, a round
//! state's binding, a cache key). The text is compact, strings escaped as `serde_json` writes
//! them, so a seal made before stays the same.

use serde_json::Value;

/// `value` as JSON text with every object's keys sorted.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical_json(value, &mut out);
    out
}

/// [`canonical_json`], appended to `out`.
pub fn write_canonical_json(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical_json(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical_json(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn key_order_does_not_matter_and_the_text_is_compact_json() {
        let a = json!({ "b": [1, { "y": "\u{0}\"", "x": null }], "a": 2.5 });
        let b = json!({ "a": 2.5, "b": [1, { "x": null, "y": "\u{0}\"" }] });
        let text = canonical_json(&a);
        assert_eq!(text, canonical_json(&b));
        assert_eq!(text, r#"{"a":2.5,"b":[1,{"x":null,"y":"\u0000\""}]}"#);
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, a);
    }
}
