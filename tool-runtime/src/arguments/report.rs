//! The violations the model is told, in the schema's words: where (a JSON pointer), what was
//! found (quoted, shortened when long), and what the schema wants.
//!
//! `jsonschema`'s own sentences are kept where they say that ("300 is greater than the maximum
//! of 255"), with the value quoted short. Where they do not, the words are ours: an unknown
//! property is named with the allowed ones, and an `anyOf`/`oneOf` that no branch matches is
//! reported through its closest branch's own violations.

use std::fmt::Write;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::ValidationError;
use serde_json::Value;
use tool_core::words::thousands;
use tool_core::Violation;

use super::budget::encoded_size_over;

/// Every violation of `errors`, in the schema's words. `schema` is the schema they are about.
pub(crate) fn violations<'a>(
    errors: impl Iterator<Item = ValidationError<'a>>,
    schema: &Value,
) -> Vec<Violation> {
    let mut out = Vec::new();
    for error in errors {
        describe(&error, schema, &mut out);
    }
    out
}

fn describe(error: &ValidationError<'_>, schema: &Value, out: &mut Vec<Violation>) {
    let pointer = error.instance_path().as_str();
    let instance: &Value = error.instance();
    let message = match error.kind() {
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            return closest_branch(error, context, schema, out);
        }
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            let allowed = allowed_properties(schema, error.schema_path().as_str());
            for key in unexpected {
                out.push(Violation {
                    pointer: pointer.to_owned(),
                    message: unknown_property(key, allowed.as_deref()),
                });
            }
            return;
        }
        ValidationErrorKind::Type { kind } => {
            let names: Vec<String> = match kind {
                TypeKind::Single(one) => vec![one.to_string()],
                TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
            };
            let types = names
                .iter()
                .filter_map(|name| super::subset::type_set(&Value::from(name.as_str())))
                .fold(0, |set, one| set | one);
            format!(
                "{} is not {}",
                quote(instance),
                super::subset::type_words(types)
            )
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("{} is not {}", quote(instance), quote(expected_value))
        }
        // Every allowed value, up to twenty (`jsonschema` names two and a count of the rest,
        // and the model learns nothing from "or 3 other candidates").
        ValidationErrorKind::Enum { options } => {
            let allowed: Vec<&Value> = options.as_array().into_iter().flatten().collect();
            not_one_of(instance, &allowed)
        }
        ValidationErrorKind::FalseSchema => format!("{} is not allowed here", quote(instance)),
        ValidationErrorKind::OneOfMultipleValid { .. } => format!(
            "{} fits more than one of the allowed forms; make it fit exactly one",
            quote(instance)
        ),
        _ => error.masked_with(quote(instance)).to_string(),
    };
    out.push(Violation {
        pointer: pointer.to_owned(),
        message,
    });
}

/// A value no branch of an `anyOf`/`oneOf` admits: when every branch wants another value at
/// one place (a tag, or a `const`), that place and every value allowed there; otherwise the
/// violations of the closest branch, the one whose type fits, whose tag matches, and which has
/// the fewest violations.
fn closest_branch(
    error: &ValidationError<'_>,
    branches: &[Vec<ValidationError<'static>>],
    schema: &Value,
    out: &mut Vec<Violation>,
) {
    let at = error.instance_path().as_str();
    if let Some(violation) = tag_missed_by_all(at, branches) {
        out.push(violation);
        return;
    }
    let closest = branches.iter().min_by_key(|branch| {
        let type_missed = branch
            .iter()
            .any(|e| e.instance_path().as_str() == at && is_type_error(e));
        let tag_missed = branch.iter().any(|e| is_tag_error(at, e));
        (type_missed, tag_missed, branch.len())
    });
    match closest {
        Some(branch) if !branch.is_empty() => {
            for error in branch {
                describe(error, schema, out);
            }
        }
        _ => out.push(Violation {
            pointer: at.to_owned(),
            message: format!("{} fits none of the allowed forms", quote(error.instance())),
        }),
    }
}

fn is_type_error(error: &ValidationError<'_>) -> bool {
    matches!(error.kind(), ValidationErrorKind::Type { .. })
        || matches!(error.kind(), ValidationErrorKind::Custom { keyword, .. } if keyword == "type")
}

/// A `const` or `enum` refused at `at` or at one of its properties: a tag that did not match.
fn is_tag_error(at: &str, error: &ValidationError<'_>) -> bool {
    let path = error.instance_path().as_str();
    let here = path == at
        || path
            .strip_prefix(at)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|name| !name.contains('/'));
    here && matches!(
        error.kind(),
        ValidationErrorKind::Constant { .. } | ValidationErrorKind::Enum { .. }
    )
}

/// When every branch refuses the value at one place for its `const` or `enum`, that place and
/// the values the branches allow there together.
fn tag_missed_by_all(at: &str, branches: &[Vec<ValidationError<'static>>]) -> Option<Violation> {
    let mut place: Option<(&str, &Value)> = None;
    let mut allowed: Vec<&Value> = Vec::new();
    for branch in branches {
        let tag = branch.iter().find(|e| is_tag_error(at, e))?;
        let path = tag.instance_path().as_str();
        match place {
            Some((seen, _)) if seen != path => return None,
            _ => place = Some((path, tag.instance())),
        }
        match tag.kind() {
            ValidationErrorKind::Constant { expected_value } => allowed.push(expected_value),
            ValidationErrorKind::Enum { options } => {
                allowed.extend(options.as_array().into_iter().flatten());
            }
            _ => {}
        }
    }
    let (pointer, found) = place?;
    // With a set: two 50,000-member enums compared pairwise were 10^9 comparisons per call.
    let unique = super::distinct::distinct(allowed);
    Some(Violation {
        pointer: pointer.to_owned(),
        message: not_one_of(found, &unique),
    })
}

/// `found` refused for not being among `allowed`: every allowed value, up to twenty.
fn not_one_of(found: &Value, allowed: &[&Value]) -> String {
    match allowed {
        [one] => format!("{} is not {}", quote(found), quote(one)),
        many => format!("{} is not one of {}", quote(found), listed(many, 20)),
    }
}

/// Values quoted and joined: `"a", "b" or "c"`, at most `max` of them, then how many more.
fn listed(values: &[&Value], max: usize) -> String {
    let quoted: Vec<String> = values.iter().take(max).map(|v| quote(v)).collect();
    if values.len() > max {
        return format!(
            "{} or {} others",
            quoted.join(", "),
            thousands(values.len() - max)
        );
    }
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => "nothing".to_owned(),
    }
}

/// The property names the object schema whose `additionalProperties` (or
/// `unevaluatedProperties`) keyword is at `keyword_path` lists; `None` when that schema cannot
/// be found (behind a `$ref`).
fn allowed_properties(schema: &Value, keyword_path: &str) -> Option<Vec<String>> {
    let (parent, _) = keyword_path.rsplit_once('/')?;
    let object = schema.pointer(parent)?;
    let names = match object.get("properties") {
        Some(Value::Object(properties)) => properties.keys().cloned().collect(),
        _ => Vec::new(),
    };
    Some(names)
}

fn unknown_property(key: &str, allowed: Option<&[String]>) -> String {
    let key = quote(&Value::from(key));
    match allowed {
        None => format!("unknown property {key}"),
        Some([]) => format!("unknown property {key}; no properties are allowed here"),
        Some(names) if names.len() > 30 => format!(
            "unknown property {key}; the allowed ones are {}, and {} more",
            names[..30].join(", "),
            thousands(names.len() - 30)
        ),
        Some(names) => format!(
            "unknown property {key}; the allowed ones are {}",
            names.join(", ")
        ),
    }
}

/// How many bytes of compact JSON a value may take to be quoted whole.
const WHOLE: usize = 60;
/// How many characters of a long string are quoted.
const STRING_HEAD: usize = 40;
/// How many items or entries of a long array or object are quoted.
const ITEMS: usize = 3;

/// A value as JSON, shortened when long: `[1, 2, 3, ... 99,997 more]`,
/// `"abc..." (99,997 more characters)`; nested arrays and objects two levels down are `[...]`
/// and `{...}`.
pub(crate) fn quote(value: &Value) -> String {
    if encoded_size_over(value, WHOLE).is_none() {
        return value.to_string();
    }
    let mut out = String::new();
    shorten(value, 2, &mut out);
    out
}

fn shorten(value: &Value, levels: usize, out: &mut String) {
    match value {
        Value::String(s) if s.len() > STRING_HEAD => {
            let head: String = s.chars().take(STRING_HEAD).collect();
            let rest = s.chars().count() - head.chars().count();
            if rest == 0 {
                out.push_str(&value.to_string());
                return;
            }
            let quoted = Value::String(head).to_string();
            out.push_str(&quoted[..quoted.len() - 1]);
            let _ = write!(out, "...\" ({} more characters)", thousands(rest));
        }
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Array(_) if levels == 0 => out.push_str("[...]"),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().take(ITEMS).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                shorten(item, levels - 1, out);
            }
            if items.len() > ITEMS {
                let _ = write!(out, ", ... {} more", thousands(items.len() - ITEMS));
            }
            out.push(']');
        }
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Object(_) if levels == 0 => out.push_str("{...}"),
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().take(ITEMS).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                shorten(&Value::from(key.as_str()), 0, out);
                out.push_str(": ");
                shorten(item, levels - 1, out);
            }
            if map.len() > ITEMS {
                let _ = write!(out, ", ... {} more", thousands(map.len() - ITEMS));
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(schema: Value, instance: Value) -> Vec<String> {
        let validator = crate::arguments::full::validator_for(&schema).expect("a schema");
        violations(validator.iter_errors(&instance), &schema)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn long_values_are_quoted_short() {
        let long: Vec<u32> = (1..=100_000).collect();
        assert_eq!(quote(&json!(long)), "[1, 2, 3, ... 99,997 more]");
        assert_eq!(
            quote(&json!("é".repeat(100))),
            format!("\"{}...\" (60 more characters)", "é".repeat(40))
        );
        assert_eq!(quote(&json!([1, "two", null])), r#"[1,"two",null]"#);
        let object = json!({ "a": [[[[1]]], 2, 3, 4], "b": "x".repeat(50), "c": 1, "d": 2 });
        assert_eq!(
            quote(&object),
            format!(
                "{{\"a\": [[...], 2, 3, ... 1 more], \"b\": \"{}...\" (10 more characters), \"c\": 1, ... 1 more}}",
                "x".repeat(40)
            )
        );
    }

    #[test]
    fn integers_written_as_floats_are_not_integers() {
        let schema = json!({ "type": "object", "properties": { "x": { "type": "integer" } } });
        assert_eq!(
            check(schema.clone(), json!({ "x": 1.0 })),
            ["/x: 1.0 is not an integer"]
        );
        assert!(check(schema, json!({ "x": 1 })).is_empty());
        let nullable = json!({ "type": ["integer", "null"] });
        assert_eq!(
            check(nullable, json!(2.5)),
            ["/: 2.5 is not an integer or null"]
        );
        assert!(check(json!({ "type": "number" }), json!(1)).is_empty());
    }

    #[test]
    fn unknown_properties_are_named_with_the_allowed_ones() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {},
                "inner": { "type": "object", "properties": { "b": {} }, "additionalProperties": false }
            },
            "additionalProperties": false
        });
        assert_eq!(
            check(schema, json!({ "x": 1, "inner": { "y": 2 } })),
            [
                r#"/inner: unknown property "y"; the allowed ones are b"#,
                r#"/: unknown property "x"; the allowed ones are a, inner"#,
            ]
        );
        let none = json!({ "type": "object", "properties": {}, "additionalProperties": false });
        assert_eq!(
            check(none, json!({ "x": 1 })),
            [r#"/: unknown property "x"; no properties are allowed here"#]
        );
    }

    #[test]
    fn a_one_of_is_reported_through_its_closest_branch() {
        let branch = |tag: &str, field: &str, kind: &str| {
            json!({
                "type": "object",
                "properties": { "kind": { "type": "string", "const": tag }, field: { "type": kind } },
                "required": ["kind", field],
                "additionalProperties": false
            })
        };
        let schema = json!({
            "type": "object",
            "properties": {
                "shape": { "oneOf": [branch("circle", "radius", "number"), branch("square", "side", "integer")] },
                "maybe": { "anyOf": [{ "type": "object", "properties": { "n": { "type": "integer" } } }, { "type": "null" }] }
            }
        });
        assert_eq!(
            check(
                schema.clone(),
                json!({ "shape": { "kind": "square", "side": "2" } })
            ),
            [r#"/shape/side: "2" is not an integer"#]
        );
        assert_eq!(
            check(schema.clone(), json!({ "shape": { "kind": "hexagon" } })),
            [r#"/shape/kind: "hexagon" is not one of "circle" or "square""#]
        );
        assert_eq!(
            check(schema.clone(), json!({ "shape": 3 })),
            ["/shape: 3 is not an object"]
        );
        assert_eq!(
            check(schema, json!({ "maybe": { "n": 1.5 } })),
            ["/maybe/n: 1.5 is not an integer"]
        );
        let units = json!({ "oneOf": [{ "const": "c" }, { "const": "f" }] });
        assert_eq!(
            check(
                json!({ "anyOf": [{ "const": "c" }, { "enum": ["f", "c", "k"] }] }),
                json!("x")
            ),
            [r#"/: "x" is not one of "c", "f" or "k""#]
        );
        assert_eq!(
            check(units, json!("k")),
            [r#"/: "k" is not one of "c" or "f""#]
        );
    }

    #[test]
    fn an_enum_names_every_allowed_value_up_to_twenty() {
        let colors = json!({ "enum": ["Red", "Green", "Blue", "Yellow", "Black"] });
        assert_eq!(
            check(colors, json!("Purple")),
            [r#"/: "Purple" is not one of "Red", "Green", "Blue", "Yellow" or "Black""#]
        );
        let maybe = json!({ "enum": ["Jazz", "Rock", "Folk", null] });
        assert_eq!(
            check(maybe, json!("Pop")),
            [r#"/: "Pop" is not one of "Jazz", "Rock", "Folk" or null"#]
        );
        assert_eq!(
            check(json!({ "enum": ["only"] }), json!("other")),
            [r#"/: "other" is not "only""#]
        );
        let many: Vec<String> = (0..25).map(|i| format!("v{i}")).collect();
        let message = &check(json!({ "enum": many }), json!("x"))[0];
        assert!(message.ends_with(r#""v19" or 5 others"#), "{message}");
    }

    #[test]
    fn an_any_of_two_50_000_member_enums_lists_each_allowed_value_once() {
        // Overlapping by half: 75,000 distinct values out of 100,000.
        let first: Vec<String> = (0..50_000).map(|i| format!("v{i}")).collect();
        let second: Vec<String> = (25_000..75_000).map(|i| format!("v{i}")).collect();
        let schema = json!({ "anyOf": [{ "enum": first }, { "enum": second }] });
        let messages = check(schema, json!("nope"));
        assert_eq!(
            messages,
            [format!(
                "/: \"nope\" is not one of {} or 74,980 others",
                (0..20)
                    .map(|i| format!("\"v{i}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            )]
        );
    }
}
