//! Anthropic strict tool use: only types, `enum`, `const`, `anyOf`, `allOf`, local refs,
//! `required`, `additionalProperties: false`, the supported string formats, and `minItems` of 0
//! or 1. Everything else is moved into the description.

use serde_json::Value;

use super::{
    is_object_schema, move_to_description, pointer_push, verdict, walk_with_pointer, ProfileError,
};

const PROFILE: &str = "anthropic-strict";

/// Keywords that stay in the schema.
const KEPT: &[&str] = &[
    "type",
    "enum",
    "const",
    "anyOf",
    "allOf",
    "$ref",
    "$defs",
    "required",
    "additionalProperties",
    "properties",
    "items",
    "description",
    "format",
    "minItems",
];

/// String formats Anthropic's strict mode accepts.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// The canonical schema as Anthropic's strict tool use takes it.
pub fn anthropic_strict(schema: &Value) -> Result<Value, ProfileError> {
    let mut out = schema.clone();
    transform(&mut out, "")?;
    Ok(out)
}

fn inexpressible(at: &str, why: &str) -> ProfileError {
    ProfileError::Inexpressible {
        profile: PROFILE,
        at: at.to_owned(),
        why: why.to_owned(),
    }
}

fn transform(node: &mut Value, at: &str) -> Result<(), ProfileError> {
    let Value::Object(map) = node else {
        return Err(inexpressible(at, "a boolean schema cannot be expressed"));
    };
    if let Some(one_of) = map.shift_remove("oneOf") {
        map.insert("anyOf".into(), one_of);
    }
    let refused: Vec<String> = map
        .keys()
        .filter(|k| !KEPT.contains(&k.as_str()))
        .cloned()
        .collect();
    for keyword in refused {
        move_to_description(map, &keyword);
    }
    if map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !FORMATS.contains(&f))
    {
        move_to_description(map, "format");
    }
    if map
        .get("minItems")
        .and_then(Value::as_u64)
        .is_some_and(|n| n > 1)
    {
        move_to_description(map, "minItems");
    }
    let is_object = is_object_schema(map);
    if is_object {
        match map.get("additionalProperties") {
            None | Some(Value::Bool(_)) => {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            Some(_) => {
                return Err(inexpressible(
                    at,
                    "objects with arbitrary keys (maps) are not supported",
                ))
            }
        }
        let names: Vec<String> = map
            .get("properties")
            .and_then(Value::as_object)
            .map_or(Vec::new(), |p| p.keys().cloned().collect());
        if let Some(Value::Array(required)) = map.get("required") {
            if let Some(stray) = required
                .iter()
                .filter_map(Value::as_str)
                .find(|r| !names.iter().any(|n| n == r))
            {
                return Err(inexpressible(
                    at,
                    &format!("`required` names `{stray}`, which is not a property"),
                ));
            }
        }
    }
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        for (name, sub) in properties.iter_mut() {
            transform(sub, &pointer_push(&pointer_push(at, "properties"), name))?;
        }
    }
    if let Some(items) = map.get_mut("items") {
        transform(items, &pointer_push(at, "items"))?;
    }
    for keyword in ["anyOf", "allOf"] {
        if let Some(Value::Array(branches)) = map.get_mut(keyword) {
            for (i, sub) in branches.iter_mut().enumerate() {
                transform(sub, &format!("{at}/{keyword}/{i}"))?;
            }
        }
    }
    if let Some(Value::Object(defs)) = map.get_mut("$defs") {
        for (name, sub) in defs.iter_mut() {
            transform(sub, &pointer_push(&pointer_push(at, "$defs"), name))?;
        }
    }
    Ok(())
}

/// Checks that a schema obeys Anthropic strict mode's rules; returns every breach.
pub fn check_anthropic_strict(schema: &Value) -> Result<(), Vec<String>> {
    let mut breaches = Vec::new();
    walk_with_pointer(schema, "", &mut |node, at| {
        let Value::Object(map) = node else {
            breaches.push(format!("{at}: a boolean schema"));
            return;
        };
        for keyword in map.keys() {
            if !KEPT.contains(&keyword.as_str()) {
                breaches.push(format!("{at}: `{keyword}` is not allowed"));
            }
        }
        if let Some(format) = map.get("format").and_then(Value::as_str) {
            if !FORMATS.contains(&format) {
                breaches.push(format!("{at}: format `{format}` is not supported"));
            }
        }
        if map
            .get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|n| n > 1)
        {
            breaches.push(format!("{at}: `minItems` may only be 0 or 1"));
        }
        if let Some(Value::String(r)) = map.get("$ref") {
            if !r.starts_with("#/") {
                breaches.push(format!("{at}: only local refs are allowed"));
            }
        }
        let is_object = is_object_schema(map);
        if is_object && map.get("additionalProperties") != Some(&Value::Bool(false)) {
            breaches.push(format!("{at}: `additionalProperties` must be false"));
        }
    });
    verdict(breaches)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_structure_and_moves_bounds_into_the_description() {
        let canonical = json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "maxLength": 10, "format": "email" },
                "tags": { "type": "array", "items": { "type": "string", "pattern": "^[a-z]+$" }, "minItems": 2, "maxItems": 5 },
                "when": { "type": ["string", "null"], "format": "date-time" },
                "n": { "type": "integer", "minimum": 0, "maximum": 255 }
            },
            "required": ["name"],
            "additionalProperties": false
        });
        let strict = anthropic_strict(&canonical).unwrap();
        assert_eq!(
            strict["required"],
            json!(["name"]),
            "optional properties stay optional"
        );
        assert_eq!(
            strict["properties"]["name"],
            json!({ "type": "string", "format": "email", "description": "At most 10 characters." })
        );
        assert_eq!(
            strict["properties"]["tags"]["description"],
            json!("At most 5 items. At least 2 items.")
        );
        assert_eq!(
            strict["properties"]["tags"]["items"]["description"],
            json!("Must match the regular expression \"^[a-z]+$\".")
        );
        assert_eq!(
            strict["properties"]["n"]["description"],
            json!("At least 0. At most 255.")
        );
        check_anthropic_strict(&strict).unwrap();
    }
}
