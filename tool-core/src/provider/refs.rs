//! Refs as the profiles follow them: to a definition of the root's `$defs` by its name
//! (`#/$defs/Item`), or to the root (`#`).
//!
//! A canonical schema has only those, but the schemas of dynamic, catalog and MCP-imported tools
//! reach the profiles as written. zod-to-json-schema, which most TypeScript MCP servers use,
//! writes `definitions` with refs `#/definitions/Item`, and a schema used twice as a ref to the
//! place it was first written (`#/properties/a`). A profile rewrites the root's definitions and
//! records how each encodes the arguments; what another ref points at would be sent as written
//! (an open object with optional properties under `strict: true`, which OpenAI refuses), or lose
//! its encoding. So before a profile runs, each such ref's target is copied into the root's
//! `$defs` and the ref points there; `definitions` are dropped, as nothing else reaches them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::profile::pointer_push;
use crate::schema::{percent_decoded, walk_mut};

/// `schema` with every ref into it (`#/...`) pointing at a definition of its root's `$defs` by
/// name, or `None` when it is so already and has no `definitions`. An error names a ref that
/// does not resolve (the schema limits, checked first, refuse those).
pub(crate) fn refs_to_root_definitions(schema: &Value) -> Result<Option<Value>, String> {
    let Value::Object(root) = schema else {
        return Ok(None);
    };
    let defined: BTreeSet<String> = root
        .get("$defs")
        .and_then(Value::as_object)
        .map_or(BTreeSet::new(), |d| d.keys().cloned().collect());
    let mut hoist = Hoist {
        original: schema,
        taken: defined.clone(),
        defined,
        names: BTreeMap::new(),
        pending: Vec::new(),
        changed: false,
        unresolved: None,
    };
    let mut out = schema.clone();
    hoist.rewrite(&mut out);
    let mut hoisted = Map::new();
    while let Some((name, mut definition)) = hoist.pending.pop() {
        hoist.rewrite(&mut definition);
        hoisted.insert(name, definition);
    }
    if let Some(reference) = hoist.unresolved {
        return Err(format!("`$ref` to `{reference}` does not resolve"));
    }
    if !hoist.changed {
        return Ok(None);
    }
    if let Value::Object(root) = &mut out {
        if !hoisted.is_empty() {
            let defs = root
                .entry("$defs")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(defs) = defs {
                defs.extend(hoisted);
            }
        }
    }
    Ok(Some(out))
}

struct Hoist<'s> {
    original: &'s Value,
    /// The root's own definitions, which refs by name reach as they are.
    defined: BTreeSet<String>,
    /// Names in the root's `$defs`, its own and those given to copies.
    taken: BTreeSet<String>,
    /// The name given to each ref's target, by the ref as written.
    names: BTreeMap<String, String>,
    /// Copies not yet rewritten, by name.
    pending: Vec<(String, Value)>,
    changed: bool,
    unresolved: Option<String>,
}

impl Hoist<'_> {
    fn rewrite(&mut self, schema: &mut Value) {
        walk_mut(schema, &mut |node| {
            let Value::Object(map) = node else { return };
            if map.shift_remove("definitions").is_some() {
                self.changed = true;
            }
            let Some(Value::String(reference)) = map.get("$ref") else {
                return;
            };
            if !reference.starts_with("#/") || self.is_by_name(reference) {
                return;
            }
            let reference = reference.clone();
            match self.name_for(&reference) {
                Some(name) => {
                    map.insert("$ref".into(), Value::String(format!("#/$defs/{name}")));
                    self.changed = true;
                }
                None => {
                    self.unresolved.get_or_insert(reference);
                }
            }
        });
    }

    /// Whether a ref names a definition of the root's own `$defs` in a form every profile reads.
    fn is_by_name(&self, reference: &str) -> bool {
        reference
            .strip_prefix("#/$defs/")
            .is_some_and(|name| !name.contains(['/', '~', '%']) && self.defined.contains(name))
    }

    /// The root definition that stands for a ref's target: given a name, and its copy queued,
    /// the first time the ref is seen.
    fn name_for(&mut self, reference: &str) -> Option<String> {
        if let Some(name) = self.names.get(reference) {
            return Some(name.clone());
        }
        let pointer = percent_decoded(&reference[1..])?;
        let target = self.original.pointer(&pointer)?;
        let segments: Vec<String> = pointer
            .split('/')
            .skip(1)
            .map(|s| s.replace("~1", "/").replace("~0", "~"))
            .collect();
        let base = readable_name(&segments);
        let mut name = base.clone();
        let mut n = 2;
        while self.taken.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        self.taken.insert(name.clone());
        self.names.insert(reference.to_owned(), name.clone());
        self.pending.push((name.clone(), target.clone()));
        Some(name)
    }
}

/// The first ref by which the schema refers to itself, and the JSON pointer of where it is
/// written: a recursive schema (`Node` whose `children` are `Node`s). Follows every JSON pointer
/// ref from the root and from each of the root's definitions, through the keywords that apply to
/// a value (not into `$defs`, which only refs reach).
pub(crate) fn recursive_ref(schema: &Value) -> Option<(String, String)> {
    let mut starts = vec![String::new()];
    if let Some(defs) = schema.get("$defs").and_then(Value::as_object) {
        starts.extend(defs.keys().map(|name| pointer_push("/$defs", name)));
    }
    // Depth first, with the stack in hand (a chain of refs may be long): each frame is a
    // pointer being explored and the refs under it not yet followed.
    let mut done = BTreeSet::new();
    for start in starts {
        let mut stack: Vec<(String, Vec<(String, String)>)> = Vec::new();
        let enter = |pointer: &str, stack: &mut Vec<(String, Vec<(String, String)>)>| {
            let mut found = Vec::new();
            if let Some(node) = schema.pointer(pointer) {
                applying_refs(node, pointer, &mut found);
            }
            found.reverse();
            stack.push((pointer.to_owned(), found));
        };
        if done.contains(&start) {
            continue;
        }
        enter(&start, &mut stack);
        while let Some((_, pending)) = stack.last_mut() {
            let Some((at, reference)) = pending.pop() else {
                let (pointer, _) = stack.pop().expect("a frame is on the stack");
                done.insert(pointer);
                continue;
            };
            let Some(target) = reference
                .strip_prefix('#')
                .filter(|t| t.is_empty() || t.starts_with('/'))
            else {
                continue;
            };
            if stack.iter().any(|(pointer, _)| pointer == target) {
                return Some((at, reference));
            }
            if !done.contains(target) {
                enter(target, &mut stack);
            }
        }
    }
    None
}

/// The refs in `node` and in the subschemas that apply to the same value or to its parts, with
/// the pointer of where each is written.
fn applying_refs(node: &Value, at: &str, found: &mut Vec<(String, String)>) {
    let Value::Object(map) = node else { return };
    if let Some(Value::String(reference)) = map.get("$ref") {
        found.push((at.to_owned(), reference.clone()));
    }
    for (keyword, value) in map {
        let here = pointer_push(at, keyword);
        match (keyword.as_str(), value) {
            ("properties" | "patternProperties" | "dependentSchemas", Value::Object(entries)) => {
                for (name, sub) in entries {
                    applying_refs(sub, &pointer_push(&here, name), found);
                }
            }
            ("anyOf" | "oneOf" | "allOf" | "prefixItems" | "items", Value::Array(items)) => {
                for (i, sub) in items.iter().enumerate() {
                    applying_refs(sub, &format!("{here}/{i}"), found);
                }
            }
            (
                "items"
                | "additionalProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames"
                | "additionalItems"
                | "unevaluatedItems"
                | "unevaluatedProperties",
                sub,
            ) => applying_refs(sub, &here, found),
            _ => {}
        }
    }
}

/// A definition's name from the path of the schema it copies: its last segment (`Item` of
/// `/definitions/Item`, `a` of `/properties/a`), with the one before it when that is a number
/// (`anyOf_0`). Only letters, digits, `_`, `-` and `.`, so that every profile reads the ref.
fn readable_name(segments: &[String]) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let last = segments.last().map(|s| clean(s)).unwrap_or_default();
    let numeric = last.is_empty() || last.starts_with(|c: char| c.is_ascii_digit());
    match segments.len().checked_sub(2).map(|i| &segments[i]) {
        Some(before) if numeric => clean(&format!("{before}_{last}")),
        _ if last.is_empty() => "definition".to_owned(),
        _ => last,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::provider::anthropic::{anthropic_strict_encoded, check_anthropic_strict};
    use crate::provider::gemini::{check_gemini, gemini};
    use crate::provider::openai_strict::{check_openai_strict, openai_strict_encoded};

    /// As zod-to-json-schema writes it with `definitions`: a named schema by
    /// `#/definitions/Item`, and a schema used twice as a ref to where it was first written.
    fn zod_shaped() -> Value {
        json!({
            "type": "object",
            "properties": {
                "items": { "type": "array", "items": { "$ref": "#/definitions/Item" } },
                "home": {
                    "type": "object",
                    "properties": { "street": { "type": "string" }, "extra": {} },
                    "required": ["street"],
                    "additionalProperties": false
                },
                "work": { "$ref": "#/properties/home" }
            },
            "required": ["items", "home", "work"],
            "additionalProperties": false,
            "definitions": { "Item": {
                "type": "object",
                "properties": {
                    "name": { "type": "string" },
                    "qty": { "type": "number" },
                    "tags": { "type": "object", "additionalProperties": { "type": "string" } }
                },
                "required": ["name"],
                "additionalProperties": false
            } },
            "$schema": "http://json-schema.org/draft-07/schema#"
        })
    }

    #[test]
    fn zod_definitions_and_refs_to_properties_stay_strict_for_openai() {
        let (strict, encoding) = openai_strict_encoded(&zod_shaped()).unwrap();
        check_openai_strict(&strict).unwrap_or_else(|f| panic!("{f:?}\n{strict:#}"));
        assert!(strict.get("definitions").is_none(), "{strict:#}");
        assert_eq!(
            strict["properties"]["items"]["items"]["$ref"],
            "#/$defs/Item"
        );
        assert_eq!(
            strict["$defs"]["Item"]["required"],
            json!(["name", "qty", "tags"])
        );
        assert_eq!(strict["properties"]["work"]["$ref"], "#/$defs/home");
        // What the copied definitions encode is decoded: pairs under `Item`, JSON text under
        // the `work` that refers to `home`.
        let sent = json!({
            "items": [{ "name": "a", "qty": null, "tags": [{ "key": "k", "value": "v" }] }],
            "home": { "street": "s", "extra": null },
            "work": { "street": "w", "extra": "[1]" }
        });
        let decoded = encoding.decode(sent);
        assert_eq!(decoded["items"][0]["tags"], json!({ "k": "v" }));
        assert_eq!(decoded["work"]["extra"], json!([1]));
    }

    #[test]
    fn zod_definitions_and_refs_to_properties_resolve_for_anthropic_and_gemini() {
        let (strict, encoding) = anthropic_strict_encoded(&zod_shaped()).unwrap();
        check_anthropic_strict(&strict).unwrap_or_else(|f| panic!("{f:?}\n{strict:#}"));
        let text = strict.to_string();
        assert!(!text.contains("definitions"), "{strict:#}");
        assert_eq!(
            strict["properties"]["items"]["items"]["$ref"],
            "#/$defs/Item"
        );
        assert_eq!(strict["$defs"]["Item"]["additionalProperties"], false);
        assert_eq!(strict["properties"]["work"]["$ref"], "#/$defs/home");
        let decoded = encoding.decode(json!({ "work": { "street": "w", "extra": "{\"a\":1}" } }));
        assert_eq!(decoded["work"]["extra"], json!({ "a": 1 }));

        let mut without_map = zod_shaped();
        without_map["definitions"]["Item"]["properties"]
            .as_object_mut()
            .unwrap()
            .shift_remove("tags");
        let g = gemini(&without_map).unwrap();
        check_gemini(&g).unwrap();
        assert_eq!(
            g["properties"]["items"]["items"]["properties"]["qty"]["type"],
            "number"
        );
        assert_eq!(
            g["properties"]["work"]["properties"]["street"]["type"],
            "string"
        );
    }

    #[test]
    fn a_schema_with_refs_by_name_only_is_left_as_it_is() {
        let schema = json!({
            "type": "object",
            "properties": { "n": { "$ref": "#/$defs/N" }, "r": { "$ref": "#" } },
            "$defs": { "N": { "type": "string" } }
        });
        assert_eq!(refs_to_root_definitions(&schema), Ok(None));
    }

    #[test]
    fn copies_take_names_not_taken_and_recursion_through_a_copy_is_kept() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": { "$ref": "#/definitions/Item" },
                "t": { "type": "object", "properties": { "next": { "$ref": "#/properties/t" } } },
                "o": { "anyOf": [{ "type": "string" }] },
                "p": { "$ref": "#/properties/o/anyOf/0" }
            },
            "$defs": { "Item": { "type": "integer" } },
            "definitions": { "Item": { "type": "string" } }
        });
        let out = refs_to_root_definitions(&schema).unwrap().unwrap();
        assert_eq!(out["properties"]["a"]["$ref"], "#/$defs/Item_2");
        assert_eq!(out["$defs"]["Item_2"], json!({ "type": "string" }));
        assert_eq!(out["$defs"]["Item"], json!({ "type": "integer" }));
        assert_eq!(out["$defs"]["t"]["properties"]["next"]["$ref"], "#/$defs/t");
        assert_eq!(out["properties"]["p"]["$ref"], "#/$defs/anyOf_0");
        assert!(out.get("definitions").is_none());
    }

    #[test]
    fn recursion_is_found_through_definitions_properties_and_the_root() {
        let node = json!({
            "type": "object",
            "properties": { "tree": { "$ref": "#/$defs/Node" } },
            "$defs": { "Node": { "type": "object", "properties": {
                "children": { "type": "array", "items": { "$ref": "#/$defs/Node" } }
            } } }
        });
        assert_eq!(
            recursive_ref(&node),
            Some((
                "/$defs/Node/properties/children/items".into(),
                "#/$defs/Node".into()
            ))
        );
        let root = json!({ "type": "object", "properties": { "again": { "$ref": "#" } } });
        assert_eq!(recursive_ref(&root).map(|(_, r)| r), Some("#".into()));
        let through_property = json!({ "type": "object", "properties": {
            "t": { "type": "object", "properties": { "next": { "$ref": "#/properties/t" } } }
        } });
        assert!(recursive_ref(&through_property).is_some());
        // Used twice is not recursive, nor is a ref written in definitions no value reaches.
        let shared = json!({
            "type": "object",
            "properties": { "a": { "$ref": "#/$defs/P" }, "b": { "$ref": "#/$defs/P" } },
            "$defs": { "P": { "type": "object", "properties": { "q": { "$ref": "#/$defs/Q" } },
                              "$defs": { "unused": { "$ref": "#/$defs/P" } } },
                       "Q": { "type": "string" } }
        });
        assert_eq!(recursive_ref(&shared), None);
    }
}
