//! Which branch of an `anyOf` a value is, by what its schema requires of it: the strict
//! encoding turns a value back by its branch, and an object fits every object branch.

use serde_json::{Map, Value};

/// What an object branch requires that tells it from the others: properties with one allowed
/// value (`#[serde(tag = "kind")]`'s `{"const": "Set"}`), and the names it requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tag {
    consts: Vec<(String, Value)>,
    required: Vec<String>,
}

impl Tag {
    /// The tag of a branch schema, as the canonical schema writes it; `None` when it requires
    /// nothing of an object (not an object schema, or a `$ref`).
    pub(crate) fn of(branch: &Value) -> Option<Tag> {
        let map = branch.as_object()?;
        let properties = map.get("properties").and_then(Value::as_object);
        let consts: Vec<(String, Value)> = properties
            .into_iter()
            .flatten()
            .filter_map(|(name, schema)| Some((name.clone(), single_value(schema.as_object()?)?)))
            .collect();
        let required: Vec<String> = map
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_str().map(str::to_owned))
            .collect();
        (!consts.is_empty() || !required.is_empty()).then_some(Tag { consts, required })
    }

    /// Whether `value` is an object with the branch's values and required names.
    pub(crate) fn matches(&self, value: &Value) -> bool {
        let Value::Object(object) = value else {
            return false;
        };
        self.consts
            .iter()
            .all(|(name, expected)| object.get(name) == Some(expected))
            && self.required.iter().all(|name| object.contains_key(name))
    }
}

/// The one value a property allows: its `const`, or an `enum` of one value.
fn single_value(schema: &Map<String, Value>) -> Option<Value> {
    if let Some(value) = schema.get("const") {
        return Some(value.clone());
    }
    match schema.get("enum").and_then(Value::as_array)?.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}
