//! JSON values without repeats, in the order first seen, in linear time.
//!
//! This hashes a value the way its `==` compares it (numbers as `Number` does, objects whatever
//! their key order), down to a few levels, and leaves deeper differences to `==`, which keeps
//! the hashing of a deep value bounded. serde_json's own `Hash` (from 1.0.118; the workspace
//! asks only for 1) hashes every level, and with `preserve_order` sorts each object's entries
//! into a new list first.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

/// How many levels of arrays and objects a hash looks into.
const LEVELS: usize = 4;

/// `values` with every repeat (by `==`) left out, in the order first seen.
pub(crate) fn distinct<'a>(values: impl IntoIterator<Item = &'a Value>) -> Vec<&'a Value> {
    let mut seen: HashSet<ByValue<'a>> = HashSet::new();
    let mut unique = Vec::new();
    for value in values {
        if seen.insert(ByValue(value)) {
            unique.push(value);
        }
    }
    unique
}

/// A value hashed and compared as `Value`'s `==` compares it.
struct ByValue<'a>(&'a Value);

impl PartialEq for ByValue<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Eq for ByValue<'_> {}

impl Hash for ByValue<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_value(self.0, LEVELS, state);
    }
}

fn hash_value<H: Hasher>(value: &Value, levels: usize, state: &mut H) {
    std::mem::discriminant(value).hash(state);
    match value {
        Value::Null => {}
        Value::Bool(b) => b.hash(state),
        Value::Number(n) => n.hash(state),
        Value::String(s) => s.hash(state),
        Value::Array(items) => {
            items.len().hash(state);
            if levels > 0 {
                for item in items {
                    hash_value(item, levels - 1, state);
                }
            }
        }
        Value::Object(map) => {
            map.len().hash(state);
            if levels > 0 {
                // Equal objects may list their keys in other orders: sum the entries' hashes.
                let sum = map.iter().fold(0u64, |sum, (key, item)| {
                    let mut entry = DefaultHasher::new();
                    key.hash(&mut entry);
                    hash_value(item, levels - 1, &mut entry);
                    sum.wrapping_add(entry.finish())
                });
                sum.hash(state);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repeats_are_left_out_in_the_order_first_seen() {
        let values = [
            json!("b"),
            json!(1),
            json!("a"),
            json!("b"),
            json!(1.0),
            json!(1),
            json!({ "x": 1, "y": [1, 2] }),
            json!({ "y": [1, 2], "x": 1 }),
            json!(0.0),
            json!(-0.0),
            json!([[[[[[1]]]]]]),
            json!([[[[[[2]]]]]]),
            json!([[[[[[1]]]]]]),
        ];
        let unique = distinct(&values);
        assert_eq!(
            unique,
            [
                &json!("b"),
                &json!(1),
                &json!("a"),
                &json!(1.0),
                &json!({ "x": 1, "y": [1, 2] }),
                &json!(0.0),
                &json!([[[[[[1]]]]]]),
                &json!([[[[[[2]]]]]]),
            ]
        );
    }
}
