//! OpenAI strict mode (Structured Outputs / `strict: true` function calling), the
//! `openai-strict` profile of both OpenAI APIs, Chat and Responses.
//!
//! Every object has `additionalProperties: false` and lists every property in `required`;
//! properties that were optional become nullable, so the model writes `null` for "absent".
//! `oneOf` becomes `anyOf`. Keywords strict mode refuses are moved into the description.
//! Limits from OpenAI's Structured Outputs guide: 5,000 object properties in all, 10 levels of
//! nesting, 1,000 enum values in all, 15,000 characters of enum values for an enum of more than
//! 250 values, and 120,000 characters of names, enum and const values in all.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::encoding::{self, Encoding, Place};
use super::profile::{
    branches_beside_properties, is_object_schema, move_to_description, simplify_combinators,
    types_of, verdict, walk_with_pointer, Finding, Problem, ProfileError,
};

const PROFILE: &str = "openai-strict";

/// Keywords strict mode refuses; they are moved into the description.
const REFUSED: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "default",
    "minLength",
    "maxLength",
    "patternProperties",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "contains",
    "minContains",
    "maxContains",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
    "unevaluatedItems",
    "examples",
    "title",
    "$schema",
    "$id",
    "$comment",
    "readOnly",
    "writeOnly",
    "deprecated",
    "contentEncoding",
    "contentMediaType",
];

/// String formats strict mode accepts; others are moved into the description.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// The documented size limits.
pub struct OpenAiLimits {
    /// Object properties in all.
    pub properties: usize,
    /// Levels of object nesting.
    pub depth: usize,
    /// Enum values in all.
    pub enum_values: usize,
    /// Characters of one enum's values, for an enum of more than 250 values.
    pub large_enum_chars: usize,
    /// Characters of property names, definition names, enum and const values in all.
    pub total_chars: usize,
}

/// OpenAI's limits as documented.
pub const OPENAI_LIMITS: OpenAiLimits = OpenAiLimits {
    properties: 5_000,
    depth: 10,
    enum_values: 1_000,
    large_enum_chars: 15_000,
    total_chars: 120_000,
};

/// The canonical schema as OpenAI strict mode takes it.
pub fn openai_strict(schema: &Value) -> Result<Value, ProfileError> {
    openai_strict_encoded(schema).map(|(schema, _)| schema)
}

/// The canonical schema as OpenAI strict mode takes it, and how it encodes the arguments (maps
/// as `{"key", "value"}` pairs, untyped values as JSON text): decode the model's arguments with
/// it. `declare` does this for you, through `Declarations::aliases`.
pub fn openai_strict_encoded(schema: &Value) -> Result<(Value, Encoding), ProfileError> {
    super::profile::within_limits(PROFILE, schema)?;
    let mut out = super::refs::refs_to_root_definitions(schema)
        .map_err(|why| inexpressible("", &why))?
        .unwrap_or_else(|| schema.clone());
    let Value::Object(root) = &out else {
        return Err(inexpressible("", "the root must be an object schema"));
    };
    if types_of(root) != ["object"] {
        return Err(inexpressible(
            "",
            "the root must be `type: object`, and not nullable",
        ));
    }
    if encoding::map_place(root).is_some() {
        return Err(inexpressible(
            "",
            "the root must be an object with properties, not a map",
        ));
    }
    let mut defs = BTreeMap::new();
    let root = transform(&mut out, "", &mut defs)?;
    check_limits(&out).map_err(|why| ProfileError::TooLarge {
        profile: PROFILE,
        why,
    })?;
    Ok((out, Encoding::new(root, defs)))
}

fn inexpressible(at: &str, why: &str) -> ProfileError {
    ProfileError::Inexpressible {
        profile: PROFILE,
        at: at.to_owned(),
        why: why.to_owned(),
    }
}

fn transform(
    node: &mut Value,
    at: &str,
    defs: &mut BTreeMap<String, Place>,
) -> Result<Place, ProfileError> {
    if *node == Value::Bool(true) {
        *node = json!({});
    }
    let Value::Object(map) = node else {
        return Err(inexpressible(
            at,
            "a schema that is `false` accepts nothing",
        ));
    };
    simplify_combinators(map);
    // Before `allOf` goes into the description with the other keywords strict mode refuses.
    if let Some(keyword) = branches_beside_properties(map) {
        return Err(inexpressible(
            at,
            &format!("an object with `{keyword}` beside its properties cannot be closed"),
        ));
    }
    for keyword in REFUSED {
        move_to_description(map, keyword);
    }
    if map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !FORMATS.contains(&f))
    {
        move_to_description(map, "format");
    }
    if encoding::is_untyped(map) {
        return encoding::write_any_keeping_definitions(map, at, defs, transform);
    }
    let typed = ["type", "anyOf", "$ref", "enum", "const"]
        .iter()
        .any(|k| map.contains_key(*k));
    if !typed {
        return Err(inexpressible(
            at,
            "strict mode needs a `type` for every value",
        ));
    }
    if map.contains_key("prefixItems") {
        return Err(inexpressible(
            at,
            "tuples (`prefixItems`) are not supported",
        ));
    }
    if let Some(nullable) = encoding::map_place(map) {
        if let Some(keyword) = encoding::keyword_beside_map(map) {
            return Err(inexpressible(
                at,
                &format!("a map with `{keyword}` beside it cannot be written as key/value pairs"),
            ));
        }
        // Definitions kept beside the map are rewritten as anywhere else.
        encoding::transform_definitions(map, at, defs, transform)?;
        return encoding::write_pairs(map, nullable, at, &mut |values, here| {
            transform(values, here, defs)
        });
    }
    let is_object = is_object_schema(map);
    if is_object {
        close_object(map, at)?;
    }
    encoding::transform_subschemas(map, at, defs, &["anyOf"], transform)
}

/// `additionalProperties: false`, and every property required, optional ones made nullable.
fn close_object(map: &mut Map<String, Value>, at: &str) -> Result<(), ProfileError> {
    match map.get("additionalProperties") {
        None | Some(Value::Bool(_)) => {}
        Some(_) => {
            return Err(inexpressible(
                at,
                "objects with arbitrary keys (maps) are not supported",
            ))
        }
    }
    map.insert("additionalProperties".into(), Value::Bool(false));
    let properties = map.entry("properties").or_insert_with(|| json!({}));
    let Value::Object(properties) = properties else {
        return Err(inexpressible(at, "`properties` must be an object"));
    };
    let names: Vec<String> = properties.keys().cloned().collect();
    let required: Vec<String> = match map.get("required") {
        None => Vec::new(),
        Some(Value::Array(r)) => r
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        Some(_) => return Err(inexpressible(at, "`required` must be an array of names")),
    };
    if let Some(stray) = required.iter().find(|r| !names.contains(r)) {
        return Err(inexpressible(
            at,
            &format!("`required` names `{stray}`, which is not a property"),
        ));
    }
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        for (name, sub) in properties.iter_mut() {
            if !required.contains(name) {
                make_nullable(sub);
            }
        }
    }
    map.insert(
        "required".into(),
        Value::Array(names.into_iter().map(Value::String).collect()),
    );
    Ok(())
}

/// Lets a schema also accept `null`.
pub(crate) fn make_nullable(schema: &mut Value) {
    if crate::schema::admits_null(schema) {
        return;
    }
    let Value::Object(map) = schema else { return };
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.push(Value::Null);
    }
    let has_enum = map.contains_key("enum");
    match map.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            map.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(ts)) => ts.push(json!("null")),
        _ if has_enum => {}
        _ => match map.get_mut("anyOf") {
            Some(Value::Array(branches)) => branches.push(json!({ "type": "null" })),
            _ => {
                // `$ref` or `const`: wrap, keeping the description outside.
                let description = map.shift_remove("description");
                let inner = Value::Object(std::mem::take(map));
                map.insert("anyOf".into(), json!([inner, { "type": "null" }]));
                if let Some(d) = description {
                    map.insert("description".into(), d);
                }
            }
        },
    }
}

/// The documented limit the schema is over, in words (the `why` of
/// [`ProfileError::TooLarge`]).
fn check_limits(schema: &Value) -> Result<(), String> {
    let too_large = Err;
    let (mut properties, mut enum_values, mut chars, mut depth) = (0usize, 0usize, 0usize, 0usize);
    let mut large_enum = None;
    walk_with_pointer(schema, "", &mut |node, at| {
        let Value::Object(map) = node else { return };
        if let Some(Value::Object(props)) = map.get("properties") {
            properties += props.len();
            chars += props.keys().map(String::len).sum::<usize>();
            let level = at.matches("/properties/").count() + 1;
            depth = depth.max(level);
        }
        if let Some(Value::Object(defs)) = map.get("$defs") {
            chars += defs.keys().map(String::len).sum::<usize>();
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            enum_values += values.len();
            let text: usize = values.iter().filter_map(Value::as_str).map(str::len).sum();
            chars += text;
            if values.len() > 250 && text > OPENAI_LIMITS.large_enum_chars {
                large_enum = Some((at.to_owned(), text));
            }
        }
        if let Some(Value::String(c)) = map.get("const") {
            chars += c.len();
        }
    });
    if properties > OPENAI_LIMITS.properties {
        return too_large(format!(
            "{properties} object properties; at most {} are allowed",
            OPENAI_LIMITS.properties
        ));
    }
    if depth > OPENAI_LIMITS.depth {
        return too_large(format!(
            "{depth} levels of nesting; at most {} are allowed",
            OPENAI_LIMITS.depth
        ));
    }
    if enum_values > OPENAI_LIMITS.enum_values {
        return too_large(format!(
            "{enum_values} enum values; at most {} are allowed",
            OPENAI_LIMITS.enum_values
        ));
    }
    if let Some((at, text)) = large_enum {
        return too_large(format!(
            "the enum at `{at}` has over 250 values totalling {text} characters; at most {} are allowed",
            OPENAI_LIMITS.large_enum_chars
        ));
    }
    if chars > OPENAI_LIMITS.total_chars {
        return too_large(format!(
            "{chars} characters of names and values; at most {} are allowed",
            OPENAI_LIMITS.total_chars
        ));
    }
    Ok(())
}

/// Checks that a schema obeys OpenAI strict mode's rules; returns every finding.
pub fn check_openai_strict(schema: &Value) -> Result<(), Vec<Finding>> {
    super::profile::findings_within_limits(schema)?;
    let mut findings = Vec::new();
    if schema.get("type") != Some(&json!("object")) {
        findings.push(Finding::new("", Problem::RootNotObject));
    }
    walk_with_pointer(schema, "", &mut |node, at| {
        let mut found = |problem| findings.push(Finding::new(at, problem));
        let Value::Object(map) = node else {
            found(Problem::BooleanSchema);
            return;
        };
        for keyword in REFUSED.iter().chain(["oneOf", "prefixItems"].iter()) {
            if map.contains_key(*keyword) {
                found(Problem::KeywordNotAllowed {
                    keyword: (*keyword).to_owned(),
                });
            }
        }
        if let Some(format) = map.get("format").and_then(Value::as_str) {
            if !FORMATS.contains(&format) {
                found(Problem::FormatNotSupported {
                    format: format.to_owned(),
                });
            }
        }
        if !["type", "anyOf", "$ref", "enum", "const"]
            .iter()
            .any(|k| map.contains_key(*k))
        {
            found(Problem::NoType);
        }
        let is_object = is_object_schema(map);
        if is_object {
            if map.get("additionalProperties") != Some(&Value::Bool(false)) {
                found(Problem::OpenObject);
            }
            let names: Vec<&str> = map
                .get("properties")
                .and_then(Value::as_object)
                .map_or(Vec::new(), |p| p.keys().map(String::as_str).collect());
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map_or(Vec::new(), |r| r.iter().filter_map(Value::as_str).collect());
            let mut sorted_names = names.clone();
            let mut sorted_required = required.clone();
            sorted_names.sort_unstable();
            sorted_required.sort_unstable();
            if sorted_names != sorted_required {
                found(Problem::NotAllRequired);
            }
        }
    });
    if let Err(why) = check_limits(schema) {
        findings.push(Finding::new("", Problem::OverLimit { why }));
    }
    verdict(findings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_properties_become_required_and_nullable() {
        let canonical = json!({
            "type": "object",
            "properties": {
                "city": { "type": "string", "minLength": 2, "description": "The city" },
                "days": { "type": "integer", "default": 1 },
                "unit": { "enum": ["C", "F"] },
                "nested": { "type": "object", "properties": { "a": { "type": "boolean" } } }
            },
            "required": ["city"],
            "additionalProperties": false
        });
        let strict = openai_strict(&canonical).unwrap();
        assert_eq!(
            strict["required"],
            json!(["city", "days", "unit", "nested"])
        );
        assert_eq!(
            strict["properties"]["city"],
            json!({ "type": "string", "description": "The city. At least 2 characters." })
        );
        assert_eq!(
            strict["properties"]["days"],
            json!({ "type": ["integer", "null"], "description": "Default: 1." })
        );
        assert_eq!(
            strict["properties"]["unit"]["enum"],
            json!(["C", "F", null])
        );
        assert_eq!(
            strict["properties"]["nested"]["additionalProperties"],
            json!(false)
        );
        assert_eq!(
            strict["properties"]["nested"]["properties"]["a"]["type"],
            json!(["boolean", "null"])
        );
        check_openai_strict(&strict).unwrap();
    }

    #[test]
    fn one_of_becomes_any_of_and_refs_become_nullable_through_any_of() {
        let canonical = json!({
            "type": "object",
            "properties": {
                "shape": { "oneOf": [{ "type": "string" }, { "type": "integer" }] },
                "node": { "$ref": "#/$defs/Node", "description": "A node" }
            },
            "required": ["shape"],
            "$defs": { "Node": { "type": "object", "properties": { "next": { "$ref": "#/$defs/Node" } } } }
        });
        let strict = openai_strict(&canonical).unwrap();
        assert!(strict["properties"]["shape"].get("anyOf").is_some());
        assert_eq!(
            strict["properties"]["node"],
            json!({ "anyOf": [{ "$ref": "#/$defs/Node" }, { "type": "null" }], "description": "A node" })
        );
        check_openai_strict(&strict).unwrap();
    }

    #[test]
    fn untyped_values_and_maps_are_encoded_and_stay_strict() {
        let canonical = json!({ "type": "object", "properties": {
            "any": {},
            "m": { "type": "object", "additionalProperties": { "type": "string" } }
        }, "required": ["any", "m"] });
        let (strict, encoding) = openai_strict_encoded(&canonical).unwrap();
        check_openai_strict(&strict).unwrap();
        assert_eq!(
            strict["properties"]["any"]["type"],
            json!(["string", "number", "boolean", "null"])
        );
        assert_eq!(
            strict["properties"]["m"]["items"]["properties"]["value"],
            json!({ "type": "string" })
        );
        let sent = json!({ "any": "[1]", "m": [{ "key": "k", "value": "v" }] });
        assert_eq!(
            encoding.decode(sent),
            json!({ "any": [1], "m": { "k": "v" } })
        );
    }

    #[test]
    fn tuples_stray_required_names_and_a_nullable_root_are_inexpressible() {
        for schema in [
            json!({ "type": "object", "properties": { "t": { "type": "array", "prefixItems": [{ "type": "string" }] } } }),
            json!({ "type": "object", "properties": { "p": { "properties": {} } } }),
            json!({ "type": "object", "properties": {}, "required": ["ghost"] }),
            json!({ "type": ["object", "null"], "properties": {} }),
            // Two enums flattened into one struct: `allOf` beside the properties.
            json!({ "type": "object", "properties": { "q": { "type": "string" } },
                    "allOf": [{ "oneOf": [{ "type": "object" }] }, { "oneOf": [{ "type": "object" }] }] }),
        ] {
            assert!(
                matches!(
                    openai_strict(&schema),
                    Err(ProfileError::Inexpressible { .. })
                ),
                "{schema}"
            );
        }
    }

    #[test]
    fn a_single_all_of_beside_properties_keeps_the_branchs_properties() {
        let schema = json!({
            "type": "object",
            "properties": { "a": { "type": "string" } },
            "required": ["a"],
            "allOf": [{ "properties": { "b": { "type": "integer" } }, "required": ["b"] }]
        });
        let strict = openai_strict(&schema).unwrap();
        check_openai_strict(&strict).unwrap();
        assert_eq!(
            strict["properties"],
            json!({ "a": { "type": "string" }, "b": { "type": "integer" } })
        );
        assert_eq!(strict["required"], json!(["a", "b"]));
        let g = crate::provider::gemini::gemini(&schema).unwrap();
        assert_eq!(g["properties"]["b"], json!({ "type": "integer" }));
        assert_eq!(g["required"], json!(["a", "b"]));
    }

    #[test]
    fn limits_are_checked_with_a_clear_error() {
        let properties: Map<String, Value> = (0..5_001)
            .map(|i| (format!("p{i}"), json!({ "type": "string" })))
            .collect();
        let err =
            openai_strict(&json!({ "type": "object", "properties": properties })).unwrap_err();
        assert_eq!(err.to_string(), "openai-strict: the schema is over a documented limit: 5001 object properties; at most 5000 are allowed");
        let mut deep = json!({ "type": "string" });
        for _ in 0..11 {
            deep = json!({ "type": "object", "properties": { "x": deep } });
        }
        assert!(openai_strict(&deep)
            .unwrap_err()
            .to_string()
            .contains("11 levels of nesting"));
    }
}
