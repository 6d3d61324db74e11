//! Reading the JSON the APIs send: the helpers every API's call parsing shares.

use serde_json::Value;

/// The items of an array field; none when it is missing or not an array.
pub(crate) fn array(value: Option<&Value>) -> impl Iterator<Item = &Value> {
    value.and_then(Value::as_array).into_iter().flatten()
}

/// Arguments sent as JSON text: parsed, or kept as the raw text when they are not JSON.
pub(crate) fn text_arguments(value: Option<&Value>) -> Value {
    match value {
        Some(Value::String(text)) if text.trim().is_empty() => Value::Object(Default::default()),
        Some(Value::String(text)) => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
        }
        Some(other) => other.clone(),
        None => Value::Object(Default::default()),
    }
}

/// Arguments sent as a JSON object; missing means none.
pub(crate) fn object_arguments(value: Option<&Value>) -> Value {
    match value {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(other) => other.clone(),
    }
}
