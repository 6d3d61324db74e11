use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tool_core::{ToolError, Violation};

use crate::validation::{CompiledSchema, NUMBER_ROOM};

/// What `Executor::execute` accepts as arguments: a JSON value, or JSON text as a model sends it.
pub trait IntoArguments {
    /// The arguments as they came, not yet checked, lent from where the call keeps them.
    fn raw(&mut self) -> RawArguments<'_>;
}

/// A call's arguments as they came: a JSON value, owned, lent or borrowed, or JSON text.
#[derive(Debug)]
pub struct RawArguments<'a>(Raw<'a>);

#[derive(Debug)]
enum Raw<'a> {
    Value(Value),
    /// The caller's value, lent for the call: only the full path takes it.
    Lent(&'a mut Value),
    Borrowed(&'a Value),
    Text(&'a str),
    /// The caller's text, reached through the call that keeps it: only a pointer is taken when
    /// the call starts. Copying the text's pointer and length out of a call that was just made
    /// would read them back wider than they were written, and wait for those writes to land.
    TextAt(&'a &'a str),
    OwnedText(String),
}

/// Arguments seen without taking them.
enum View<'r> {
    Value(&'r Value),
    Text(&'r str),
}

impl IntoArguments for Value {
    fn raw(&mut self) -> RawArguments<'_> {
        RawArguments(Raw::Lent(self))
    }
}

impl IntoArguments for &Value {
    fn raw(&mut self) -> RawArguments<'_> {
        RawArguments(Raw::Borrowed(self))
    }
}

impl IntoArguments for &str {
    fn raw(&mut self) -> RawArguments<'_> {
        RawArguments(Raw::TextAt(self))
    }
}

impl IntoArguments for String {
    fn raw(&mut self) -> RawArguments<'_> {
        RawArguments(Raw::Text(self))
    }
}

/// A provider's tool call keeps its arguments as a `String`: `execute(name, &call.arguments)`.
impl IntoArguments for &String {
    fn raw(&mut self) -> RawArguments<'_> {
        RawArguments(Raw::Text(self))
    }
}

impl IntoArguments for std::borrow::Cow<'_, str> {
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
            Raw::Text(text) | Raw::TextAt(&text) => Raw::OwnedText(text.to_owned()),
            Raw::OwnedText(text) => Raw::OwnedText(text),
        })
    }

    fn view(&self) -> View<'_> {
        match &self.0 {
            Raw::Value(value) => View::Value(value),
            Raw::Lent(value) => View::Value(value),
            Raw::Borrowed(value) => View::Value(value),
            Raw::Text(text) => View::Text(text),
            Raw::TextAt(text) => View::Text(text),
            Raw::OwnedText(text) => View::Text(text),
        }
    }

    /// The arguments as a value, refused when larger than `limit` bytes or nested too deeply.
    pub(crate) fn into_value(self, tool: &str, limit: usize) -> Result<Value, ToolError> {
        match self.0 {
            Raw::Value(value) => match fits(tool, &value, limit) {
                Ok(()) => Ok(value),
                Err(error) => {
                    dismantle(value);
                    Err(error)
                }
            },
            // The caller gave the value to the call, which would drop it: a refused one is taken
            // apart here, so that dropping a deep one cannot overflow the stack.
            Raw::Lent(value) => match fits(tool, value, limit) {
                Ok(()) => Ok(std::mem::take(value)),
                Err(error) => {
                    dismantle(std::mem::take(value));
                    Err(error)
                }
            },
            Raw::Borrowed(value) => fits(tool, value, limit).map(|()| value.clone()),
            Raw::Text(text) | Raw::TextAt(&text) => parse_text(text, tool, limit),
            Raw::OwnedText(text) => parse_text(&text, tool, limit),
        }
    }
}

fn parse_text(text: &str, tool: &str, limit: usize) -> Result<Value, ToolError> {
    if text.len() > limit {
        return Err(too_large(tool, text.len(), limit));
    }
    serde_json::from_str(non_empty(text)).map_err(|e| {
        // serde_json stops text at the same depth as `NESTING_LIMIT`: one message for both.
        if e.to_string().starts_with("recursion limit exceeded") {
            return too_deep(tool);
        }
        invalid(tool, format!("the arguments are not valid JSON: {e}"))
    })
}

/// How deep arrays and objects may nest in arguments, the arguments object included: fewer
/// than 128 levels, as `serde_json` allows in text. A value is held to the same limit, so that
/// deserializing it cannot overflow the stack.
pub(crate) const NESTING_LIMIT: usize = 128;

/// Checks that a value fits the size cap and the nesting limit.
pub(crate) fn fits(tool: &str, value: &Value, limit: usize) -> Result<(), ToolError> {
    let mut budget = Budget::new(limit);
    if !add_size(value, &mut budget, 1) {
        return Ok(());
    }
    if budget.too_deep {
        Err(too_deep(tool))
    } else {
        Err(too_large(tool, budget.size, limit))
    }
}

fn too_deep(tool: &str) -> ToolError {
    invalid(
        tool,
        format!(
            "the arguments nest {NESTING_LIMIT} or more levels of arrays and objects; \
             they must nest fewer than {NESTING_LIMIT}"
        ),
    )
}

fn invalid(tool: &str, message: String) -> ToolError {
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
fn non_empty(text: &str) -> &str {
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

/// A call's arguments with what checks them: what the code generated for a tool receives.
///
/// It borrows the arguments where the call keeps them: a valid call reads them in place, and
/// only the full path takes an owned value out.
pub struct Arguments<'a, 'r> {
    raw: &'a mut RawArguments<'r>,
    tool: &'a str,
    schema: &'a CompiledSchema,
    /// The schema as JSON, for the strict-mode null leniency.
    parameters: &'a Value,
    limit: usize,
}

impl<'a, 'r> Arguments<'a, 'r> {
    pub(crate) fn new(
        raw: &'a mut RawArguments<'r>,
        tool: &'a str,
        schema: &'a CompiledSchema,
        parameters: &'a Value,
        limit: usize,
    ) -> Self {
        Arguments {
            raw,
            tool,
            schema,
            parameters,
            limit,
        }
    }

    /// Checks the arguments against the tool's schema and deserializes them.
    ///
    /// A valid call is checked while it is deserialized, in one walk. Anything else takes the
    /// full path, which names every violation, and then anything serde still rejects; both are
    /// `InvalidArguments`.
    #[inline]
    pub fn parse<T: DeserializeOwned>(self) -> Result<T, ToolError> {
        let schema = self.schema;
        self.parse_or_check(
            |text| schema.parse_text(non_empty(text)),
            |value, limit| schema.parse_value(value, limit),
        )
    }

    /// Deserializes arguments into a type whose `Deserialize` checks everything its schema
    /// says (see `ExactSchema`): serde alone, from an object. Anything serde refuses takes the
    /// full path, which says what is wrong.
    ///
    /// For a type that is not exact this would let through what the schema refuses, so it is
    /// not public: the generated code reaches it, through `parse_args`, only for argument
    /// structs of exact types.
    #[inline]
    pub(crate) fn parse_exact<T: DeserializeOwned>(self) -> Result<T, ToolError> {
        self.parse_or_check(parse_object_text, parse_object_value)
    }

    /// A fast path, from text within the size cap or from a value and the cap; whatever it does
    /// not take (`None`) goes the full path.
    #[inline(always)]
    fn parse_or_check<T: DeserializeOwned>(
        self,
        text: impl FnOnce(&str) -> Option<T>,
        value: impl FnOnce(&Value, usize) -> Option<T>,
    ) -> Result<T, ToolError> {
        let parsed = match self.raw.view() {
            // Too long to read: the full path refuses it.
            View::Text(raw) if raw.len() > self.limit => None,
            View::Text(raw) => text(raw),
            View::Value(raw) => value(raw, self.limit),
        };
        match parsed {
            Some(parsed) => Ok(parsed),
            None => self.parse_checked(),
        }
    }

    /// The full path: every violation named, then serde's own refusals. Kept out of line, so
    /// that the fast path inlines small into each tool.
    #[inline(never)]
    fn parse_checked<T: DeserializeOwned>(self) -> Result<T, ToolError> {
        let tool = self.tool;
        let value = self.into_checked_value()?;
        serde_json::from_value(value).map_err(|e| invalid(tool, e.to_string()))
    }

    /// Checks the arguments against the tool's schema and returns them as a value.
    pub(crate) fn into_checked_value(self) -> Result<Value, ToolError> {
        let raw = std::mem::take(self.raw);
        let mut args = raw.into_value(self.tool, self.limit)?;
        verdict(self.tool, self.schema, self.parameters, &mut args)?;
        Ok(args)
    }
}

/// What [`Executor::validate`](crate::Executor::validate) answers: the full path's verdict on a
/// value, without taking it. The value is copied only when it is not valid as it is.
pub(crate) fn check_value(
    tool: &str,
    schema: &CompiledSchema,
    parameters: &Value,
    args: &Value,
    limit: usize,
) -> Result<(), ToolError> {
    fits(tool, args, limit)?;
    if schema.is_valid(args) {
        return Ok(());
    }
    verdict(tool, schema, parameters, &mut args.clone())
}

/// The schema's verdict on arguments within the limits.
///
/// A strict-mode model writes `null` for an optional property it leaves out; that is accepted
/// as absent, so such nulls are dropped before the violations are named: only what would still
/// be wrong is reported. Tried only after a failure, so valid calls pay nothing.
fn verdict(
    tool: &str,
    schema: &CompiledSchema,
    parameters: &Value,
    args: &mut Value,
) -> Result<(), ToolError> {
    if schema.is_valid(args) {
        return Ok(());
    }
    crate::validation::drop_nulls_for_optional(parameters, args);
    schema.check(tool, parameters, args)
}

/// JSON text of an object, deserialized; `None` for anything else or anything serde refuses.
/// Blank text is the empty object (`non_empty`).
///
/// serde would also take a struct from an array of its fields, which the schema refuses, so
/// the text must open an object.
#[inline]
fn parse_object_text<T: DeserializeOwned>(text: &str) -> Option<T> {
    let text = match text.as_bytes().first() {
        Some(b'{') => text,
        _ => object_after_blanks(text)?,
    };
    // Not `serde_json::from_str`, which takes its reader by value out of line: reading that
    // back stalls on the stores that just made it.
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let parsed = T::deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    Some(parsed)
}

/// Text that does not open with `{` at once: itself (or `{}` for blank text) when its first
/// other character is `{`, and `None` when it is not an object.
#[cold]
fn object_after_blanks(text: &str) -> Option<&str> {
    let text = non_empty(text);
    text.trim_ascii_start().starts_with('{').then_some(text)
}

/// An object value within the size cap, deserialized; `None` otherwise.
#[inline]
fn parse_object_value<T: DeserializeOwned>(value: &Value, limit: usize) -> Option<T> {
    let fits = value
        .as_object()
        .is_some_and(|o| object_surely_fits(o, limit));
    fits.then(|| T::deserialize(value).ok())?
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
/// counted as one byte, so the count can be low by the number of escaped characters. A value
/// nested past the nesting limit counts as over.
pub(crate) fn encoded_size_over(value: &Value, limit: usize) -> Option<usize> {
    let mut budget = Budget::new(limit);
    add_size(value, &mut budget, 1).then_some(budget.size)
}

/// A size count against a limit, and whether the walk was stopped by the nesting limit.
struct Budget {
    size: usize,
    limit: usize,
    too_deep: bool,
}

impl Budget {
    fn new(limit: usize) -> Self {
        Budget {
            size: 0,
            limit,
            too_deep: false,
        }
    }
}

/// Adds `value`'s size, at nesting `level` (the arguments object is level 1); true as soon as
/// the total passes the limit, or the nesting reaches [`NESTING_LIMIT`]: the walk never goes
/// deeper than that, so it cannot overflow the stack.
fn add_size(value: &Value, budget: &mut Budget, level: usize) -> bool {
    budget.size += match value {
        Value::Null => 4,
        Value::Bool(b) => 4 + usize::from(!b),
        Value::Number(n) => number_len(n),
        Value::String(s) => s.len() + 2,
        Value::Array(_) | Value::Object(_) if level >= NESTING_LIMIT => {
            budget.too_deep = true;
            return true;
        }
        Value::Array(items) => {
            budget.size += 2 + items.len().saturating_sub(1);
            return budget.size > budget.limit
                || items.iter().any(|item| add_size(item, budget, level + 1));
        }
        Value::Object(map) => {
            budget.size += 2 + map.len().saturating_sub(1);
            return budget.size > budget.limit
                || map.iter().any(|(key, item)| {
                    budget.size += key.len() + 3;
                    add_size(item, budget, level + 1)
                });
        }
    };
    budget.size > budget.limit
}

/// Whether an object surely fits the size cap and the nesting limit: counted as
/// [`encoded_size_over`] counts, except that a number is given the most room one can take. A
/// false answer sends the call to the full path, which counts exactly; a true one is never wrong.
#[inline]
fn object_surely_fits(object: &Map<String, Value>, limit: usize) -> bool {
    let mut budget = Budget::new(limit);
    budget.size = 2 + object.len();
    for (key, item) in object {
        let item_size = match item {
            Value::Null | Value::Bool(_) => 5,
            Value::Number(_) => NUMBER_ROOM,
            Value::String(s) => s.len() + 2,
            nested => {
                if add_size(nested, &mut budget, 2) {
                    return false;
                }
                0
            }
        };
        budget.size += key.len() + 3 + item_size;
    }
    budget.size <= limit
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
    fn an_object_surely_fits_only_when_it_does() {
        let objects = [
            json!({}),
            json!({"x": -3, "y": 4}),
            json!({"a": null, "b": true, "c": "text", "d": [1, 2.5, {"e": false}], "f": {}}),
            json!({"big": u64::MAX, "small": i64::MIN, "tiny": 1e-300}),
        ];
        for object in &objects {
            let map = object.as_object().expect("an object");
            let real = serde_json::to_string(object).unwrap().len();
            for limit in 0..real + 3 * NUMBER_ROOM {
                if object_surely_fits(map, limit) {
                    assert!(limit >= real, "{object} fits {limit}, but is {real} long");
                }
            }
            assert!(object_surely_fits(map, real + 3 * NUMBER_ROOM), "{object}");
        }
    }

    #[test]
    fn refuses_text_over_the_limit_and_bad_json() {
        let err = "[1,2,3]".raw().into_value("t", 3).unwrap_err();
        assert!(matches!(
            err,
            ToolError::ArgumentsTooLarge {
                size: 7,
                limit: 3,
                ..
            }
        ));
        let err = "{oops".raw().into_value("t", 100).unwrap_err();
        assert!(err.to_string().contains("not valid JSON"), "{err}");
        assert_eq!("  ".raw().into_value("t", 100).unwrap(), json!({}));
    }
}
