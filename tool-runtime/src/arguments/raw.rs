//! The arguments as the caller gave them: a JSON value (owned, lent or borrowed) or JSON text,
//! read in place by the first stage that can, and made a value only by the Full stage.

use serde_json::{Map, Value};
use tool_core::{ToolError, Violation};

use super::budget::{ArgumentLimits, Budget, Numbers, NESTING_LIMIT};

/// What `Executor::execute` accepts as arguments: a JSON value (`Value`, `&Value`), or JSON
/// text as a model sends it (`&str`, `String`, `&String`, `Cow<str>`).
///
/// Sealed: the executor reads each of these in place, and no other type can say how it is read.
/// A helper generic over a call's arguments needs only `A: IntoArguments`.
pub trait IntoArguments: sealed::Sealed {}

pub(crate) mod sealed {
    use super::RawArguments;

    /// How the executor reads arguments; out of users' reach, so that only the listed types are
    /// arguments.
    pub trait Sealed {
        /// The arguments as they came, not yet checked, lent from where the call keeps them.
        fn raw(&mut self) -> RawArguments<'_>;
    }
}

/// A call's arguments as they came: a JSON value, owned, lent or borrowed, or JSON text.
///
/// Reachable by no name outside this crate: users hand arguments over as an [`IntoArguments`].
#[derive(Debug)]
pub struct RawArguments<'a>(Raw<'a>);

#[derive(Debug)]
enum Raw<'a> {
    Value(Value),
    /// The caller's value, lent for the call: only the Full stage takes it.
    Lent(&'a mut Value),
    Borrowed(&'a Value),
    Text(&'a str),
    OwnedText(String),
}

/// Arguments seen without taking them.
pub(super) enum View<'r> {
    Value(&'r Value),
    Text(&'r str),
}

impl IntoArguments for Value {}

impl sealed::Sealed for Value {
    fn raw(&mut self) -> RawArguments<'_> {
        RawArguments(Raw::Lent(self))
    }
}

impl IntoArguments for &Value {}

impl sealed::Sealed for &Value {
    fn raw(&mut self) -> RawArguments<'_> {
        RawArguments(Raw::Borrowed(self))
    }
}

impl IntoArguments for &str {}

impl sealed::Sealed for &str {
    fn raw(&mut self) -> RawArguments<'_> {
        RawArguments(Raw::Text(self))
    }
}

impl IntoArguments for String {}

impl sealed::Sealed for String {
    fn raw(&mut self) -> RawArguments<'_> {
        RawArguments(Raw::Text(self))
    }
}

/// A provider's tool call keeps its arguments as a `String`: `execute(name, &call.arguments)`.
impl IntoArguments for &String {}

impl sealed::Sealed for &String {
    fn raw(&mut self) -> RawArguments<'_> {
        RawArguments(Raw::Text(self))
    }
}

impl IntoArguments for std::borrow::Cow<'_, str> {}

impl sealed::Sealed for std::borrow::Cow<'_, str> {
    fn raw(&mut self) -> RawArguments<'_> {
        RawArguments(Raw::Text(self))
    }
}

/// Arguments taken out of a call: none, which reads as an empty object.
impl Default for RawArguments<'_> {
    fn default() -> Self {
        RawArguments(Raw::Text(""))
    }
}

impl<'a> RawArguments<'a> {
    /// The same arguments, owning what they borrowed.
    pub(crate) fn into_owned(self) -> RawArguments<'static> {
        RawArguments(match self.0 {
            Raw::Value(value) => Raw::Value(value),
            Raw::Lent(value) => Raw::Value(std::mem::take(value)),
            // Cloned no deeper than the nesting limit allows and one level more: a value too
            // deep stays too deep, and the clone cannot overflow the stack.
            Raw::Borrowed(value) => Raw::Value(clone_within(value, NESTING_LIMIT)),
            Raw::Text(text) => Raw::OwnedText(text.to_owned()),
            Raw::OwnedText(text) => Raw::OwnedText(text),
        })
    }

    /// The arguments, seen where they are.
    pub(super) fn view(&self) -> View<'_> {
        match &self.0 {
            Raw::Value(value) => View::Value(value),
            Raw::Lent(value) => View::Value(value),
            Raw::Borrowed(value) => View::Value(value),
            Raw::Text(text) => View::Text(text),
            Raw::OwnedText(text) => View::Text(text),
        }
    }

    /// The arguments as a value, refused when larger than `limit` bytes or nested too deeply.
    pub(crate) fn into_value(self, tool: &str, limits: ArgumentLimits) -> Result<Value, ToolError> {
        match self.0 {
            Raw::Value(value) => match fits(tool, &value, limits) {
                Ok(()) => Ok(value),
                Err(error) => {
                    dismantle(value);
                    Err(error)
                }
            },
            // The caller gave the value to the call, which would drop it: a refused one is taken
            // apart here, so that dropping a deep one cannot overflow the stack.
            Raw::Lent(value) => match fits(tool, value, limits) {
                Ok(()) => Ok(std::mem::take(value)),
                Err(error) => {
                    dismantle(std::mem::take(value));
                    Err(error)
                }
            },
            Raw::Borrowed(value) => fits(tool, value, limits).map(|()| value.clone()),
            Raw::Text(text) => parse_text(text, tool, limits),
            Raw::OwnedText(text) => parse_text(&text, tool, limits),
        }
    }
}

fn parse_text(text: &str, tool: &str, limits: ArgumentLimits) -> Result<Value, ToolError> {
    if text.len() > limits.bytes {
        return Err(too_large(tool, text.len(), limits.bytes));
    }
    if limits.text_too_deep(text) {
        return Err(too_deep(tool, limits.depth));
    }
    serde_json::from_str(non_empty(text)).map_err(|e| {
        // serde_json stops text at the same depth as `NESTING_LIMIT`: one message for both.
        if e.to_string().starts_with("recursion limit exceeded") {
            return too_deep(tool, NESTING_LIMIT);
        }
        invalid(tool, format!("the arguments are not valid JSON: {e}"))
    })
}

fn too_deep(tool: &str, levels: usize) -> ToolError {
    invalid(
        tool,
        format!(
            "the arguments nest {levels} or more levels of arrays and objects; \
             they must nest fewer than {levels} (the executor's `max_argument_depth`)"
        ),
    )
}

pub(super) fn invalid(tool: &str, message: String) -> ToolError {
    ToolError::InvalidArguments {
        tool: tool.to_owned(),
        violations: vec![Violation {
            pointer: String::new(),
            message,
        }],
    }
}

/// Drops a value without recursion: a value nested deeper than the nesting limit may be nested
/// deeper than the stack allows, and `Value`'s own drop recurses.
fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, item)| item)),
            _ => {}
        }
    }
}

/// A copy of `value` whose arrays and objects below `levels` levels are empty. Of a value
/// within the nesting limit, with `levels` at the limit, it is an exact copy.
fn clone_within(value: &Value, levels: usize) -> Value {
    match value {
        Value::Array(_) if levels == 0 => Value::Array(Vec::new()),
        Value::Object(_) if levels == 0 => Value::Object(Map::new()),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| clone_within(item, levels - 1))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, item)| (key.clone(), clone_within(item, levels - 1)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// No arguments at all (nothing but JSON whitespace), as some models send for a tool without
/// parameters, are an empty object.
pub(super) fn non_empty(text: &str) -> &str {
    // Arguments start with their object's brace far more often than not: one test for them.
    if text.starts_with('{') {
        return text;
    }
    if text.bytes().all(|b| b.is_ascii_whitespace()) {
        "{}"
    } else {
        text
    }
}

/// Checks that a value fits the size cap and the nesting limit.
pub(crate) fn fits(tool: &str, value: &Value, limits: ArgumentLimits) -> Result<(), ToolError> {
    let budget = Budget::new(limits);
    if budget.add_value(value, Numbers::Measured) {
        Ok(())
    } else if budget.too_deep() {
        Err(too_deep(tool, limits.depth))
    } else {
        Err(too_large(tool, budget.size(), limits.bytes))
    }
}

pub(super) fn too_large(tool: &str, size: usize, limit: usize) -> ToolError {
    ToolError::ArgumentsTooLarge {
        tool: tool.to_owned(),
        size,
        limit,
    }
}

#[cfg(test)]
mod tests {
    use super::sealed::Sealed;
    use super::*;
    use serde_json::json;

    #[test]
    fn refuses_text_over_the_limit_and_bad_json() {
        let err = "[1,2,3]"
            .raw()
            .into_value("t", ArgumentLimits::new(3, NESTING_LIMIT))
            .unwrap_err();
        assert!(matches!(
            err,
            ToolError::ArgumentsTooLarge {
                size: 7,
                limit: 3,
                ..
            }
        ));
        let err = "{oops"
            .raw()
            .into_value("t", ArgumentLimits::new(100, NESTING_LIMIT))
            .unwrap_err();
        assert!(err.to_string().contains("not valid JSON"), "{err}");
        assert_eq!(
            "  ".raw()
                .into_value("t", ArgumentLimits::new(100, NESTING_LIMIT))
                .unwrap(),
            json!({})
        );
    }

    #[test]
    fn text_and_values_over_a_lower_nesting_limit_are_refused_naming_it() {
        let limits = ArgumentLimits::new(1000, 3);
        let fits = json!({"a": [1, 2]});
        assert_eq!(
            fits.to_string().raw().into_value("t", limits).unwrap(),
            fits
        );
        let deep = json!({"a": [[1]]});
        for err in [
            deep.to_string().raw().into_value("t", limits).unwrap_err(),
            (&deep).raw().into_value("t", limits).unwrap_err(),
        ] {
            let text = err.to_string();
            assert!(
                text.contains("fewer than 3") && text.contains("max_argument_depth"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_borrowed_value_owned_is_the_same_value() {
        let value = json!({"a": [1, {"b": null}], "c": "text"});
        let owned = (&value).raw().into_owned();
        assert_eq!(
            owned
                .into_value("t", ArgumentLimits::new(1000, NESTING_LIMIT))
                .unwrap(),
            value
        );
    }
}
