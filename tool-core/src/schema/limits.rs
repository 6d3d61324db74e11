//! What a schema from outside (a catalog line, a dynamic tool, a remote server) may be before it
//! is compiled: how deep it nests, how large it grows with its `$ref`s followed, and where its
//! refs point. Checked by [`check_is_schema_within`](super::check_is_schema_within) before
//! anything walks the schema recursively.

use std::collections::HashMap;

use serde_json::Value;

use super::{SchemaError, ARRAYS, MAPS, SINGLE};
use crate::nesting::{nests_within, DEFAULT_NESTING_LIMIT};

/// The keywords whose value refers to another schema.
const REFERENCES: &[&str] = &["$ref", "$dynamicRef", "$recursiveRef"];

/// Limits on a schema, each named in the error that refuses a schema over it.
///
/// ```
/// # use tool_core::schema::{check_is_schema_within, SchemaLimits};
/// # use serde_json::json;
/// let limits = SchemaLimits { depth: 4, ..SchemaLimits::default() };
/// let deep = json!({ "type": "object", "properties": { "a": { "type": "array", "items": {} } } });
/// let err = check_is_schema_within(&deep, &limits).unwrap_err();
/// assert!(err.to_string().contains("SchemaLimits::depth"), "{err}");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaLimits {
    /// How deep arrays and objects may nest in the schema's JSON: fewer than this many levels
    /// (default 128, as `serde_json` allows in text).
    pub depth: usize,
    /// How many subschemas the schema may have with every `$ref` within it followed (a recursive
    /// ref counted once): a few refs that each use the next twice stand for exponentially many
    /// subschemas, which validation and inlining would walk. Default 100,000.
    pub expanded_subschemas: u64,
}

impl Default for SchemaLimits {
    fn default() -> Self {
        SchemaLimits {
            depth: DEFAULT_NESTING_LIMIT,
            expanded_subschemas: 100_000,
        }
    }
}

/// Checks `schema` against `limits`, and that every ref in it points into the schema itself
/// (`#...`): nothing is ever fetched, and a ref elsewhere is refused rather than left to fail
/// at the first call.
pub(super) fn check(schema: &Value, limits: &SchemaLimits) -> Result<(), SchemaError> {
    if !nests_within(schema, limits.depth) {
        return Err(SchemaError::TooDeep {
            limit: limits.depth,
        });
    }
    if let Some(reference) = outside_reference(schema) {
        return Err(SchemaError::RefOutside { reference });
    }
    let targets = RefTargets::new(schema)?;
    if let Some(reference) = unresolved_reference(&targets) {
        return Err(SchemaError::RefUnresolved { reference });
    }
    if let Some(at) = loop_in_place(&targets) {
        return Err(SchemaError::RefLoop { at });
    }
    if expanded_size(&targets, limits.expanded_subschemas) > limits.expanded_subschemas {
        return Err(SchemaError::TooLarge {
            limit: limits.expanded_subschemas,
        });
    }
    Ok(())
}

/// The immediate subschemas of a schema, by the keywords that hold schemas.
fn subschemas(schema: &Value) -> Vec<&Value> {
    let mut found = Vec::new();
    let Value::Object(map) = schema else {
        return found;
    };
    for (keyword, value) in map {
        let keyword = keyword.as_str();
        if SINGLE.contains(&keyword) {
            match value {
                Value::Array(items) if keyword == "items" => found.extend(items),
                _ => found.push(value),
            }
        } else if ARRAYS.contains(&keyword) {
            found.extend(value.as_array().into_iter().flatten());
        } else if MAPS.contains(&keyword) {
            found.extend(value.as_object().into_iter().flat_map(|m| m.values()));
        }
    }
    found
}

/// The first ref (`$ref`, `$dynamicRef`, `$recursiveRef`) that does not point into the schema.
fn outside_reference(schema: &Value) -> Option<String> {
    let mut pending = vec![schema];
    while let Some(node) = pending.pop() {
        for keyword in REFERENCES {
            match node.get(*keyword) {
                Some(Value::String(r)) if r.starts_with('#') => {}
                Some(Value::String(r)) => return Some(r.clone()),
                _ => {}
            }
        }
        pending.extend(subschemas(node));
    }
    None
}

/// Where the refs within one schema lead, as the validator resolves them: JSON pointers from
/// the root (`#/$defs/A`, percent-decoded) and anchors (`#A`, from `$anchor` and
/// `$dynamicAnchor`). A schema whose refs could resolve elsewhere (under a nested `$id`) or
/// ambiguously (an anchor defined twice) is refused when it is made, so that what the checks
/// follow is what validation follows.
pub(crate) struct RefTargets<'s> {
    root: &'s Value,
    anchors: HashMap<&'s str, &'s Value>,
}

impl<'s> RefTargets<'s> {
    /// The targets of `root`'s refs; an error for a schema whose refs these checks cannot
    /// follow as the validator would.
    pub(crate) fn new(root: &'s Value) -> Result<Self, SchemaError> {
        let mut anchors = HashMap::new();
        let mut nested_id = None;
        let mut has_refs = false;
        let mut pending = vec![(root, true)];
        while let Some((node, is_root)) = pending.pop() {
            has_refs |= REFERENCES.iter().any(|k| node.get(*k).is_some());
            if !is_root && nested_id.is_none() {
                nested_id = node.get("$id").map(|id| id.to_string());
            }
            for keyword in ["$anchor", "$dynamicAnchor"] {
                if let Some(Value::String(name)) = node.get(keyword) {
                    if anchors.insert(name.as_str(), node).is_some() {
                        return Err(SchemaError::Invalid {
                            at: String::new(),
                            message: format!("the anchor `{name}` is defined twice"),
                        });
                    }
                }
            }
            pending.extend(subschemas(node).into_iter().map(|s| (s, false)));
        }
        if let (true, Some(id)) = (has_refs, nested_id) {
            return Err(SchemaError::NestedId { id });
        }
        Ok(RefTargets { root, anchors })
    }

    /// Where a ref within the schema leads, when it leads anywhere.
    pub(crate) fn of(&self, reference: &str) -> Option<&'s Value> {
        let fragment = reference.strip_prefix('#')?;
        if fragment.is_empty() {
            Some(self.root)
        } else if fragment.starts_with('/') {
            self.root.pointer(&percent_decoded(fragment)?)
        } else {
            self.anchors.get(fragment).copied()
        }
    }
}

/// A URI fragment with its `%XX` escapes decoded; `None` when an escape is malformed or the
/// result is not UTF-8.
pub(crate) fn percent_decoded(fragment: &str) -> Option<String> {
    if !fragment.contains('%') {
        return Some(fragment.to_owned());
    }
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = fragment.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The first ref within the schema that leads nowhere.
fn unresolved_reference(targets: &RefTargets<'_>) -> Option<String> {
    let mut pending = vec![targets.root];
    while let Some(node) = pending.pop() {
        for keyword in REFERENCES {
            if let Some(Value::String(r)) = node.get(*keyword) {
                if targets.of(r).is_none() {
                    return Some(r.clone());
                }
            }
        }
        pending.extend(subschemas(node));
    }
    None
}

/// The keywords whose subschemas apply to the same value as the schema holding them (not to an
/// item or property of it).
const IN_PLACE: &[&str] = &[
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
];

/// The subschemas applied to the same value as `node`: its in-place keywords' and its refs'
/// targets.
fn in_place<'s>(targets: &RefTargets<'s>, node: &'s Value) -> Vec<&'s Value> {
    let mut found = Vec::new();
    let Value::Object(map) = node else {
        return found;
    };
    for keyword in IN_PLACE {
        match map.get(*keyword) {
            Some(Value::Array(items)) => found.extend(items),
            Some(Value::Object(entries)) if *keyword == "dependentSchemas" => {
                found.extend(entries.values())
            }
            Some(schema) if *keyword != "dependentSchemas" => found.push(schema),
            _ => {}
        }
    }
    for keyword in REFERENCES {
        let reference = map.get(*keyword).and_then(Value::as_str);
        found.extend(reference.and_then(|r| targets.of(r)));
    }
    found
}

/// A ref that leads back to a schema it started from without going into the value
/// (`{"$ref": "#"}` at the root, `A: {"$ref": "B"}` with `B: {"allOf": [{"$ref": "A"}]}`):
/// validating would apply the schema to the same value forever. Returns where the loop was
/// found. Depth first with a stack of its own, each schema visited once.
fn loop_in_place(targets: &RefTargets<'_>) -> Option<String> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        OnPath,
        Done,
    }
    let mut marks: HashMap<*const Value, Mark> = HashMap::new();
    // Every schema of the document may start a loop: walk them all.
    let mut starts = vec![targets.root];
    let mut all = Vec::new();
    while let Some(node) = starts.pop() {
        all.push(node);
        starts.extend(subschemas(node));
    }
    for start in all {
        if marks.contains_key(&(start as *const Value)) {
            continue;
        }
        let mut path: Vec<(&Value, Vec<&Value>, usize)> =
            vec![(start, in_place(targets, start), 0)];
        marks.insert(start as *const Value, Mark::OnPath);
        while let Some((node, children, next)) = path.last_mut() {
            let Some(&child) = children.get(*next) else {
                marks.insert(*node as *const Value, Mark::Done);
                path.pop();
                continue;
            };
            *next += 1;
            match marks.get(&(child as *const Value)) {
                Some(Mark::OnPath) => {
                    let reference = node.get("$ref").or_else(|| child.get("$ref"));
                    return Some(reference.and_then(Value::as_str).unwrap_or("#").to_owned());
                }
                Some(Mark::Done) => {}
                None => {
                    marks.insert(child as *const Value, Mark::OnPath);
                    path.push((child, in_place(targets, child), 0));
                }
            }
        }
    }
    None
}

/// How a ref target's size stands while it is measured.
enum Measured {
    /// Being measured: a ref to it from inside is recursion, and counts once.
    InProgress,
    Done(u64),
}

/// One schema being measured: its children (subschemas and ref target) and the sum so far.
struct Frame<'s> {
    children: Vec<(&'s Value, bool)>,
    next: usize,
    sum: u64,
    /// The ref target this frame measures, to record its size.
    target: Option<*const Value>,
}

/// The frame that measures `node`: its subschemas, then the targets of its refs.
fn frame<'s>(targets: &RefTargets<'s>, node: &'s Value, target: Option<*const Value>) -> Frame<'s> {
    let mut children: Vec<(&Value, bool)> =
        subschemas(node).into_iter().map(|s| (s, false)).collect();
    for keyword in REFERENCES {
        let reference = node.get(*keyword).and_then(Value::as_str);
        if let Some(to) = reference.and_then(|r| targets.of(r)) {
            children.push((to, true));
        }
    }
    Frame {
        children,
        next: 0,
        sum: 1,
        target,
    }
}

/// How many subschemas `root` has with its refs followed, counting a recursive ref once and
/// measuring each ref target once (so the walk is linear in the schema's size); stops adding
/// past `budget`. Walks with a stack of its own: a chain of refs may be longer than the
/// thread's stack is deep.
fn expanded_size(targets: &RefTargets<'_>, budget: u64) -> u64 {
    let mut measured: HashMap<*const Value, Measured> = HashMap::new();
    let mut stack = vec![frame(targets, targets.root, None)];
    while let Some(top) = stack.last_mut() {
        if top.sum <= budget && top.next < top.children.len() {
            let (child, is_ref) = top.children[top.next];
            top.next += 1;
            let key: *const Value = child;
            match measured.get(&key) {
                _ if !is_ref => stack.push(frame(targets, child, None)),
                Some(Measured::Done(size)) => top.sum = top.sum.saturating_add(*size),
                Some(Measured::InProgress) => top.sum = top.sum.saturating_add(1),
                None => {
                    measured.insert(key, Measured::InProgress);
                    stack.push(frame(targets, child, Some(key)));
                }
            }
            continue;
        }
        let Some(done) = stack.pop() else { break };
        if let Some(key) = done.target {
            measured.insert(key, Measured::Done(done.sum));
        }
        match stack.last_mut() {
            Some(parent) => parent.sum = parent.sum.saturating_add(done.sum),
            None => return done.sum,
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

    #[test]
    fn counts_plain_subschemas_and_follows_refs_once_each() {
        let plain = json!({ "type": "object", "properties": { "a": { "type": "string" }, "b": { "items": {} } } });
        assert_eq!(
            expanded_size(&RefTargets::new(&plain).unwrap(), u64::MAX),
            4
        );
        let shared = json!({
            "properties": { "a": { "$ref": "#/$defs/P" }, "b": { "$ref": "#/$defs/P" } },
            "$defs": { "P": { "properties": { "x": {} } } }
        });
        // root, a, b, P (under $defs), and P's two nodes for each of a and b.
        assert_eq!(
            expanded_size(&RefTargets::new(&shared).unwrap(), u64::MAX),
            1 + 2 + 2 + 2 * 2
        );
    }

    #[test]
    fn a_recursive_ref_counts_once_and_ends() {
        for schema in [
            json!({ "$ref": "#" }),
            json!({ "properties": { "next": { "$ref": "#" } } }),
            json!({ "$defs": { "A": { "$ref": "#/$defs/B" }, "B": { "$ref": "#/$defs/A" } }, "$ref": "#/$defs/A" }),
        ] {
            let size = expanded_size(&RefTargets::new(&schema).unwrap(), u64::MAX);
            assert!(size < 20, "{schema}: {size}");
        }
    }

    #[test]
    fn refs_that_lead_back_without_going_into_the_value_are_a_loop() {
        for schema in [
            json!({ "type": "object", "$ref": "#" }),
            json!({ "allOf": [{ "$ref": "#" }] }),
            json!({ "properties": { "a": { "$ref": "#/$defs/A" } }, "$defs": { "A": { "$ref": "#/$defs/B" }, "B": { "anyOf": [{ "$ref": "#/$defs/A" }] } } }),
            json!({ "$defs": { "A": { "not": { "$ref": "#/$defs/A" } } } }),
        ] {
            assert!(
                loop_in_place(&RefTargets::new(&schema).unwrap()).is_some(),
                "{schema}"
            );
        }
        for schema in [
            json!({ "type": "object", "properties": { "next": { "$ref": "#" } } }),
            json!({ "items": { "$ref": "#" }, "anyOf": [{ "type": "array" }] }),
            json!({ "properties": { "a": { "$ref": "#/$defs/A" }, "b": { "$ref": "#/$defs/A" } }, "$defs": { "A": { "type": "string" } } }),
        ] {
            assert_eq!(
                loop_in_place(&RefTargets::new(&schema).unwrap()),
                None,
                "{schema}"
            );
        }
    }

    /// 40 definitions, each using the next twice, with each ref written by `reference(i)`.
    fn doubling(reference: impl Fn(usize) -> String) -> Value {
        let mut defs = Map::new();
        for i in 0..40 {
            let next = reference(i + 1);
            defs.insert(
                format!("d{i}"),
                json!({ "$anchor": format!("a{i}"), "allOf": [{ "$ref": next }, { "$ref": next }] }),
            );
        }
        defs.insert("d40".into(), json!({ "$anchor": "a40", "type": "string" }));
        json!({ "type": "object", "properties": { "x": { "$ref": reference(0) } }, "$defs": defs })
    }

    #[test]
    fn refs_by_anchor_and_by_escaped_pointer_are_followed_as_pointers_are() {
        let limits = SchemaLimits::default();
        let too_large = Err(SchemaError::TooLarge {
            limit: limits.expanded_subschemas,
        });
        for schema in [
            doubling(|i| format!("#/$defs/d{i}")),
            doubling(|i| format!("#a{i}")),
            doubling(|i| format!("#/%24defs/d{i}")),
        ] {
            assert_eq!(check(&schema, &limits), too_large, "{schema}");
        }
        let looping = json!({ "$defs": { "A": { "$anchor": "A", "anyOf": [{ "$ref": "#A" }, { "type": "string" }] } }, "$ref": "#A" });
        assert!(matches!(
            check(&looping, &limits),
            Err(SchemaError::RefLoop { .. })
        ));
        let fine = json!({ "type": "object", "properties": { "a": { "$ref": "#P" }, "b": { "$ref": "#/%24defs/P" } }, "$defs": { "P": { "$anchor": "P", "type": "string" } } });
        assert_eq!(check(&fine, &limits), Ok(()));
    }

    #[test]
    fn refs_these_checks_cannot_follow_are_refused() {
        let limits = SchemaLimits::default();
        for (schema, expected) in [
            (
                json!({ "properties": { "a": { "$ref": "#nowhere" } } }),
                "#nowhere",
            ),
            (
                json!({ "properties": { "a": { "$ref": "#/$defs/missing" } } }),
                "#/$defs/missing",
            ),
            (
                json!({ "properties": { "a": { "$ref": "#/%zz" } } }),
                "#/%zz",
            ),
        ] {
            assert_eq!(
                check(&schema, &limits),
                Err(SchemaError::RefUnresolved {
                    reference: expected.into()
                }),
                "{schema}"
            );
        }
        let nested_id = json!({ "properties": { "a": { "$id": "urn:x", "$defs": { "A": {} }, "$ref": "#/$defs/A" } }, "$defs": { "A": {} } });
        assert!(matches!(
            check(&nested_id, &limits),
            Err(SchemaError::NestedId { .. })
        ));
        let twice =
            json!({ "$defs": { "A": { "$anchor": "X" }, "B": { "$anchor": "X" } }, "$ref": "#X" });
        assert!(matches!(
            check(&twice, &limits),
            Err(SchemaError::Invalid { .. })
        ));
        // A nested `$id` without refs changes nothing these checks follow.
        assert_eq!(
            check(
                &json!({ "properties": { "a": { "$id": "urn:y" } } }),
                &limits
            ),
            Ok(())
        );
    }

    #[test]
    fn refs_that_double_at_each_level_are_over_the_budget() {
        let mut defs = Map::new();
        for i in 0..60 {
            defs.insert(
                format!("d{i}"),
                json!({ "anyOf": [{ "$ref": format!("#/$defs/d{}", i + 1) }, { "$ref": format!("#/$defs/d{}", i + 1) }] }),
            );
        }
        defs.insert("d60".into(), json!({ "type": "string" }));
        let schema = json!({ "type": "object", "properties": { "x": { "$ref": "#/$defs/d0" } }, "$defs": defs });
        let limits = SchemaLimits::default();
        assert_eq!(
            check(&schema, &limits),
            Err(SchemaError::TooLarge {
                limit: limits.expanded_subschemas
            })
        );
    }

    #[test]
    fn a_ref_outside_the_schema_is_named() {
        let schema = json!({ "type": "object", "properties": { "a": { "$ref": "https://example.com/s.json" } } });
        assert_eq!(
            check(&schema, &SchemaLimits::default()),
            Err(SchemaError::RefOutside {
                reference: "https://example.com/s.json".into()
            })
        );
    }
}
